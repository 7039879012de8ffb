"""KnowledgeGraph: the in-memory GraphStore of a GraphRAG project, indexed for ToG.

Loading and validation live in graphrag/tables.py (GraphRAG parquet → GraphColumns); this module answers
lookups on those columns. Adjacency is CSR in both directions, so the neighbours of one entity cost
O(its degree). Immutable after load: one instance is shared read-only by every app session and engine run.
The records and the GraphStore protocol are in graphrag/store.py (re-exported here).
"""
from __future__ import annotations

import threading
from dataclasses import fields
from pathlib import Path
from typing import Any
from collections.abc import Iterable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tog_core.graphrag.project import ProjectInfo, open_project
from tog_core.graphrag.store import Entity, GraphStore, Relationship, TextUnit, checked_indices
from tog_core.graphrag.tables import (LONG_DESCRIPTION_CHARS, PLACEHOLDER_PREFIX, GraphColumns, build_columns,
                                      read_tables)

__all__ = ["KnowledgeGraph", "GraphStore", "Entity", "Relationship", "TextUnit", "PLACEHOLDER_PREFIX",
           "LONG_DESCRIPTION_CHARS"]


def _strings(arr: pa.Array, idx: Iterable[int] | np.ndarray) -> list[str]:
    vals = arr.take(pa.array(np.asarray(idx, dtype=np.int64))).to_pylist()
    return [v if v is not None else "" for v in vals]


class KnowledgeGraph:
    """Entities, relationships and text units with CSR adjacency. Build with `KnowledgeGraph.load`."""

    __slots__ = ("info", "n_entities", "n_relationships", "_ids", "_titles", "_types", "_descs", "_placeholder",
                 "_rel_ids", "_src", "_dst", "_rel_desc", "_rel_label", "_weight", "_rel_tu_off", "_rel_tu_idx",
                 "_reverse_of", "_indptr", "_nbr_rel", "_nbr_other", "_nbr_out", "_degree", "_by_title",
                 "_memo", "_memo_lock", "_tu_ids", "_tu_text", "problems", "counts", "_sealed",
                 "__weakref__")  # weakly referenced by caches that must not keep a graph alive (tog/groups.py)

    # the slots' types (set once by from_columns; the columns' meaning is documented on GraphColumns)
    info: ProjectInfo | None
    n_entities: int
    n_relationships: int
    _ids: pa.Array
    _titles: pa.Array
    _types: pa.Array
    _descs: pa.Array
    _placeholder: np.ndarray
    _rel_ids: pa.Array
    _src: np.ndarray
    _dst: np.ndarray
    _rel_desc: pa.Array
    _rel_label: pa.Array | None
    _weight: np.ndarray
    _rel_tu_off: np.ndarray
    _rel_tu_idx: np.ndarray
    _reverse_of: np.ndarray
    _indptr: np.ndarray
    _nbr_rel: np.ndarray
    _nbr_other: np.ndarray
    _nbr_out: np.ndarray
    _degree: np.ndarray
    _by_title: dict[str, int]
    _memo: dict[str, dict[str, int]]
    _memo_lock: threading.Lock
    _tu_ids: pa.Array
    _tu_text: pa.Array
    problems: tuple[str, ...]
    counts: dict[str, int]
    _sealed: bool

    def __setattr__(self, name: str, value: Any) -> None:
        if getattr(self, "_sealed", False):
            raise AttributeError("KnowledgeGraph is immutable after load")
        object.__setattr__(self, name, value)

    # ------------------------------------------------------------ loading
    @classmethod
    def load(cls, project: ProjectInfo | str | Path) -> KnowledgeGraph:
        info = project if isinstance(project, ProjectInfo) else open_project(project)
        ent, rel, tu, paths = read_tables(info)
        return cls.from_tables(ent, rel, tu, info=info, paths=paths)

    @classmethod
    def from_tables(cls, entities: pa.Table, relationships: pa.Table, text_units: pa.Table | None = None, *,
                    info: ProjectInfo | None = None,
                    paths: tuple[Path | None, Path | None, Path | None] = (None, None, None)) -> KnowledgeGraph:
        return cls.from_columns(build_columns(entities, relationships, text_units, info=info, paths=paths), info=info)

    @classmethod
    def from_columns(cls, columns: GraphColumns, *, info: ProjectInfo | None = None) -> KnowledgeGraph:
        g = cls.__new__(cls)
        g.info = info
        for f in fields(columns):
            value = getattr(columns, f.name)
            g.__setattr__(f.name if f.name in ("problems", "counts") else f"_{f.name}", value)
        n = len(columns.titles)
        g.n_entities = n
        g.n_relationships = len(columns.src)
        # dicts built from reversed pairs so the first occurrence wins, in C rather than a Python loop
        # (the id and case-folded title maps are built on first use: see _index)
        g._by_title = dict(zip(reversed(columns.titles.to_pylist()), range(n - 1, -1, -1)))
        g._memo = {}
        g._memo_lock = threading.Lock()
        g._sealed = True
        return g

    # ------------------------------------------------------------ lookups
    def _index(self, name: str) -> dict[str, int]:
        """Lookup maps derived from the immutable columns, built once on first use (thread-safe)."""
        found = self._memo.get(name)
        if found is not None:
            return found
        with self._memo_lock:
            if name not in self._memo:
                n = self.n_entities
                back = range(n - 1, -1, -1)  # reversed pairs: the first occurrence wins
                if name == "id":
                    self._memo[name] = dict(zip(reversed(self._ids.to_pylist()), back))
                elif name == "relationship":
                    m = self.n_relationships
                    self._memo[name] = dict(zip(reversed(self._rel_ids.to_pylist()), range(m - 1, -1, -1)))
                else:
                    self._memo[name] = dict(zip(reversed([t.casefold() for t in self._titles.to_pylist()]), back))
            return self._memo[name]

    def find(self, key: str) -> int | None:
        """Entity index by id, exact title, then case-insensitive title."""
        i = self._index("id").get(key)
        return i if i is not None else self.find_title(key)

    def find_title(self, title: str) -> int | None:
        """Entity index by exact title, then case-insensitive title (ids not considered)."""
        i = self._by_title.get(title)
        return i if i is not None else self._index("fold").get(title.casefold())

    def find_relationship(self, rel_id: str) -> int | None:
        """Relationship index by its GraphRAG id (used to resume a saved trace)."""
        return self._index("relationship").get(rel_id)

    def entity(self, idx: int) -> Entity:
        i = int(idx)
        return Entity(idx=i, id=self._ids[i].as_py(), title=self._titles[i].as_py(),
                      type=self._types[i].as_py() or "", description=self._descs[i].as_py() or "",
                      degree=int(self._degree[i]), placeholder=bool(self._placeholder[i]))

    def entities(self, idxs: Sequence[int] | np.ndarray) -> list[Entity]:
        return [self.entity(int(i)) for i in idxs]

    def entity_descriptions(self, idxs: Sequence[int] | np.ndarray) -> list[str]:
        """The descriptions of several entities ("" where none), without building Entity records."""
        return _strings(self._descs, idxs)

    def title(self, idx: int) -> str:
        return self._titles[int(idx)].as_py()

    def all_titles(self) -> list[str]:
        return self._titles.to_pylist()

    def degree(self, idx: int) -> int:
        return int(self._degree[int(idx)])

    @property
    def degrees(self) -> np.ndarray:
        return self._degree

    def degrees_of(self, idxs: Sequence[int] | np.ndarray) -> np.ndarray:
        return self._degree[np.asarray(idxs, dtype=np.int64)]

    def neighbors(self, idx: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(relationship indices, neighbour entity indices, outgoing flags) of one entity; O(degree) views."""
        a, b = self._indptr[int(idx)], self._indptr[int(idx) + 1]
        return self._nbr_rel[a:b], self._nbr_other[a:b], self._nbr_out[a:b]

    def neighbors_many(self, idxs: Sequence[int] | np.ndarray) -> dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """neighbors() of several entities at once (a store on a server answers this in one round trip)."""
        return {int(i): self.neighbors(int(i)) for i in idxs}

    def relationship(self, ridx: int) -> Relationship:
        r = int(ridx)
        s, t = int(self._src[r]), int(self._dst[r])
        desc = self._rel_desc[r].as_py() or ""
        label = (self._rel_label[r].as_py() if self._rel_label is not None else None) or desc
        rev = int(self._reverse_of[r])
        return Relationship(idx=r, id=self._rel_ids[r].as_py(), source_idx=s, target_idx=t, source=self.title(s),
                            target=self.title(t), description=desc, label=label, weight=float(self._weight[r]),
                            text_unit_ids=tuple(self.text_unit_ids(r)), reverse_of=rev if rev >= 0 else None)

    def descriptions(self, ridxs: Sequence[int] | np.ndarray) -> list[str]:
        return _strings(self._rel_desc, ridxs)

    def relationship_ids(self, ridxs: Sequence[int] | np.ndarray) -> list[str]:
        """GraphRAG ids of several relationships at once (no Relationship objects built)."""
        return _strings(self._rel_ids, ridxs)

    def labels(self, ridxs: Sequence[int] | np.ndarray) -> list[str]:
        """Relation label per relationship: the `relation` column if present, else the description."""
        if self._rel_label is None:
            return self.descriptions(ridxs)
        labs = _strings(self._rel_label, ridxs)
        if all(labs):
            return labs
        descs = self.descriptions(ridxs)
        return [lab or d for lab, d in zip(labs, descs)]

    @property
    def has_relation_labels(self) -> bool:
        return self._rel_label is not None

    def endpoints(self, ridx: int) -> tuple[int, int]:
        return int(self._src[int(ridx)]), int(self._dst[int(ridx)])

    def text_unit_ids(self, ridx: int) -> list[str]:
        a, b = self._rel_tu_off[int(ridx)], self._rel_tu_off[int(ridx) + 1]
        return [self._tu_ids[int(i)].as_py() for i in self._rel_tu_idx[a:b] if i >= 0]

    def evidence(self, ridx: int) -> list[TextUnit]:
        """The source text units behind one relationship, O(number of its text units)."""
        a, b = self._rel_tu_off[int(ridx)], self._rel_tu_off[int(ridx) + 1]
        return [TextUnit(id=self._tu_ids[int(i)].as_py(), text=self._tu_text[int(i)].as_py() or "")
                for i in self._rel_tu_idx[a:b] if i >= 0]

    def text_units_near(self, ridxs: Sequence[int] | np.ndarray, limit: int
                        ) -> tuple[dict[int, list[str]], dict[str, str]]:
        """GraphStore.text_units_near: ids from the CSR arrays, texts read for the first `limit` distinct units."""
        rs = checked_indices(ridxs, self.n_relationships, "relationship")
        starts, ends = self._rel_tu_off[rs], self._rel_tu_off[rs + 1]
        counts = (ends - starts).astype(np.int64)
        # every relationship's slice of the unit index, laid end to end, then cut back per relationship
        at = np.repeat(starts - np.concatenate(([0], np.cumsum(counts)[:-1])), counts) + np.arange(counts.sum())
        flat = self._rel_tu_idx[at].tolist()
        met = [i for i in dict.fromkeys(flat) if i >= 0]  # an id missing from the text units is -1
        ids = {i: self._tu_ids[i].as_py() for i in met}
        texts = {ids[i]: self._tu_text[i].as_py() or "" for i in met[:max(0, limit)]}
        out: dict[int, list[str]] = {}
        k = 0
        for r, n in zip(rs.tolist(), counts.tolist()):
            out[r] = [ids[i] for i in flat[k:k + n] if i >= 0]
            k += n
        return out, texts

    def audit(self) -> list[str]:
        """Checks too slow for every load (a hash of every relationship id: ~0.3 s per million), run by
        `inspect` and the app's project summary."""
        out = []
        n_dup_rel = self.n_relationships - len(pc.unique(self._rel_ids))
        if n_dup_rel:
            out.append(f"{n_dup_rel} duplicate relationship ids (the first of each is used for lookup and resume)")
        return out

    def summary(self) -> dict[str, Any]:
        return dict(self.counts)
