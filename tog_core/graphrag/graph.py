"""KnowledgeGraph: entities, relationships and text units of a GraphRAG project, indexed for ToG.

Built with vectorised pyarrow/numpy code (no Python loop over relationships). Adjacency is CSR in
both directions, so the neighbours of one entity cost O(its degree). Immutable after load: one
instance is shared read-only by every app session and engine run.

Entities and relationships are addressed by dense integer indices inside the process; the trace uses
the GraphRAG ids and titles.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Protocol, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from tog_core.graphrag.project import (EmptyTableError, ProjectError, ProjectInfo, SchemaError, UnreadableTableError,
                      open_project)

PLACEHOLDER_PREFIX = "placeholder:"
LONG_DESCRIPTION_CHARS = 100_000  # longer entity descriptions are reported as a problem


@dataclass(frozen=True, kw_only=True)
class Entity:
    idx: int
    id: str
    title: str
    type: str
    description: str
    degree: int
    placeholder: bool  # an endpoint named by relationships but absent from the entities table


@dataclass(frozen=True, kw_only=True)
class Relationship:
    idx: int
    id: str
    source_idx: int
    target_idx: int
    source: str  # entity titles
    target: str
    description: str
    label: str  # the `relation` column when the table has one, else the description
    weight: float
    text_unit_ids: tuple[str, ...]
    reverse_of: int | None  # index of the earlier relationship running the opposite way, if any


@dataclass(frozen=True, kw_only=True)
class TextUnit:
    id: str
    text: str


class GraphStore(Protocol):
    """The narrow read interface the engine uses. KnowledgeGraph is the in-memory implementation."""

    def find(self, key: str) -> int | None: ...
    def find_title(self, title: str) -> int | None: ...
    def find_relationship(self, rel_id: str) -> int | None: ...
    def entity(self, idx: int) -> Entity: ...
    def title(self, idx: int) -> str: ...
    def titles(self, idxs: Sequence[int] | np.ndarray) -> list[str]: ...
    def entity_descriptions(self, idxs: Sequence[int] | np.ndarray) -> list[str]: ...
    def degree(self, idx: int) -> int: ...
    def neighbors(self, idx: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]: ...
    def relationship(self, ridx: int) -> Relationship: ...
    def labels(self, ridxs: Sequence[int] | np.ndarray) -> list[str]: ...
    def descriptions(self, ridxs: Sequence[int] | np.ndarray) -> list[str]: ...
    def relationship_ids(self, ridxs: Sequence[int] | np.ndarray) -> list[str]: ...
    def text_unit_ids(self, ridx: int) -> list[str]: ...
    def evidence(self, ridx: int) -> list[TextUnit]: ...


def _read(path: Path, columns: list[str] | None = None) -> pa.Table:

    try:
        if path.stat().st_size == 0:
            raise UnreadableTableError("is an empty (zero-byte) file", path=path,
                                       fix="the indexing run was interrupted; re-run `graphrag index`")
        if columns is not None:
            present = set(pq.read_schema(path).names)
            columns = [c for c in columns if c in present]
        return pq.read_table(path, columns=columns)
    except ProjectError:
        raise
    except Exception as err:  # pyarrow raises ArrowInvalid/OSError/...; re-raised typed
        raise UnreadableTableError(f"cannot read parquet ({err.__class__.__name__}: {str(err)[:120]})", path=path,
                                   fix="the file is damaged or not parquet; re-run `graphrag index` or restore it") from None


def _string_column(table: pa.Table, name: str, path: Path, *, required: bool,
                   notes: list[str] | None = None) -> pa.Array | None:
    """A column as a string array. Numbers are read as text and bytes that are not UTF-8 are decoded with
    replacement characters; both are reported in `notes` (the graph's problems) rather than failing."""
    if name not in table.column_names:
        if required:
            raise SchemaError(f"has no '{name}' column (columns: {', '.join(table.column_names)[:200]})", path=path,
                              fix="this does not look like GraphRAG output; re-run `graphrag index`")
        return None
    col = table.column(name).combine_chunks()
    where = f"{path.stem}.{name}"
    if pa.types.is_large_string(col.type) or pa.types.is_dictionary(col.type):
        col = col.cast(pa.string())
    if pa.types.is_string(col.type):
        try:
            col.validate(full=True)  # a writer that skipped validation can leave non-UTF-8 bytes in a string column
            return col
        except pa.ArrowInvalid:
            return _decode_replacing(col.view(pa.binary()), where, notes)
    if pa.types.is_integer(col.type) or pa.types.is_floating(col.type):
        if notes is not None:
            notes.append(f"{where} has type {col.type}; read as text")
        return col.cast(pa.string())
    if pa.types.is_binary(col.type) or pa.types.is_large_binary(col.type):
        try:
            return col.cast(pa.string())
        except pa.ArrowInvalid:
            return _decode_replacing(col, where, notes)
    raise SchemaError(f"column '{name}' has type {col.type}, expected text", path=path,
                      fix="the table was written by a tool with a different schema; re-run `graphrag index`")


def _decode_replacing(col: pa.Array, where: str, notes: list[str] | None) -> pa.Array:
    """Bytes → text with U+FFFD for undecodable bytes (a Python loop, only on this rare repair path)."""
    out: list[str | None] = []
    bad = 0
    for v in col.to_pylist():
        if v is None:
            out.append(None)
            continue
        try:
            out.append(v.decode("utf-8"))
        except UnicodeDecodeError:
            bad += 1
            out.append(v.decode("utf-8", errors="replace"))
    if notes is not None:
        notes.append(f"{where}: {bad} values are not valid UTF-8 (undecodable bytes shown as \ufffd)")
    return pa.array(out, pa.string())


def _list_column(table: pa.Table, name: str) -> pa.ListArray | None:
    if name not in table.column_names:
        return None
    col = table.column(name).combine_chunks()
    if pa.types.is_list(col.type) or pa.types.is_large_list(col.type):
        if not pa.types.is_string(col.type.value_type):
            try:
                col = col.cast(pa.list_(pa.string()))
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                return None
        return col.cast(pa.list_(pa.string())) if pa.types.is_large_list(col.type) else col
    if pa.types.is_string(col.type):  # some writers store a single id as a plain string
        return pa.ListArray.from_arrays(pa.array(np.arange(len(col) + 1, dtype=np.int32)), col)
    return None


def _frozen(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


def _strings(arr: pa.Array, idx: Iterable[int] | np.ndarray) -> list[str]:
    vals = arr.take(pa.array(np.asarray(idx, dtype=np.int64))).to_pylist()
    return [v if v is not None else "" for v in vals]


class KnowledgeGraph:
    """Entities, relationships and text units with CSR adjacency. Build with `KnowledgeGraph.load`."""

    __slots__ = ("info", "n_entities", "n_relationships", "_ids", "_titles", "_types", "_descs", "_placeholder",
                 "_rel_ids", "_src", "_dst", "_rel_desc", "_rel_label", "_weight", "_rel_tu_off", "_rel_tu_idx",
                 "_reverse_of", "_indptr", "_nbr_rel", "_nbr_other", "_nbr_out", "_degree", "_by_title",
                 "_memo", "_memo_lock", "_tu_ids", "_tu_text", "problems", "counts", "_sealed")

    def __setattr__(self, name: str, value: Any) -> None:
        if getattr(self, "_sealed", False):
            raise AttributeError("KnowledgeGraph is immutable after load")
        object.__setattr__(self, name, value)

    # ------------------------------------------------------------ loading
    @classmethod
    def load(cls, project: ProjectInfo | str | Path) -> "KnowledgeGraph":
        info = project if isinstance(project, ProjectInfo) else open_project(project)
        ent_path = info.tables["entities"]
        rel_path = info.tables["relationships"]
        ent = _read(ent_path, ["id", info.entity_name_column, "type", "description"])
        rel = _read(rel_path, ["id", "source", "target", "description", "relation", "weight", "text_unit_ids"])
        tu_path = info.tables.get("text_units")
        tu = _read(tu_path, ["id", "text", "chunk"]) if tu_path is not None else None
        return cls.from_tables(ent, rel, tu, info=info, paths=(ent_path, rel_path, tu_path))

    @classmethod
    def from_tables(cls, entities: pa.Table, relationships: pa.Table, text_units: pa.Table | None = None, *,
                    info: ProjectInfo | None = None,
                    paths: tuple[Path | None, Path | None, Path | None] = (None, None, None)) -> "KnowledgeGraph":
        g = cls.__new__(cls)
        g._build(entities, relationships, text_units, info, paths)
        return g

    def _build(self, ent: pa.Table, rel: pa.Table, tu: pa.Table | None, info: ProjectInfo | None,
               paths: tuple[Path | None, Path | None, Path | None]) -> None:
        ent_path = paths[0] or Path("entities.parquet")
        rel_path = paths[1] or Path("relationships.parquet")
        tu_path = paths[2] or Path("text_units.parquet")
        problems: list[str] = list(info.problems) if info else []
        self.info = info
        if ent.num_rows == 0:
            raise EmptyTableError("has no rows", path=ent_path, fix="the index found no entities; check the input documents")
        if rel.num_rows == 0:
            raise EmptyTableError("has no rows", path=rel_path,
                                  fix="ToG needs relationships to walk; check the indexing run finished")
        name_col = info.entity_name_column if info else ("title" if "title" in ent.column_names else "name")
        titles = _string_column(ent, name_col, ent_path, required=True, notes=problems)
        assert titles is not None
        ok = pc.and_kleene(pc.is_valid(titles), pc.greater(pc.utf8_length(pc.utf8_trim_whitespace(titles)), 0))
        ok = ok.fill_null(False)
        n_bad = len(titles) - pc.sum(ok.cast(pa.int64())).as_py()
        if n_bad:
            problems.append(f"{n_bad} entities with an empty or missing {name_col} were skipped")
            ent = ent.filter(ok)
            titles = titles.filter(ok)
            if ent.num_rows == 0:
                raise EmptyTableError(f"has no entity with a {name_col}", path=ent_path,
                                      fix="every entity needs a title; re-run `graphrag index`")
        ids = _string_column(ent, "id", ent_path, required=False, notes=problems)
        if ids is None:
            problems.append("entities have no 'id' column; titles are used as ids")
            ids = titles
        else:
            ids = pc.if_else(pc.is_valid(ids), ids, titles)
        types = _string_column(ent, "type", ent_path, required=False, notes=problems)
        descs = _string_column(ent, "description", ent_path, required=False, notes=problems)
        n_ent = len(titles)

        src_t = _string_column(rel, "source", rel_path, required=True, notes=problems)
        dst_t = _string_column(rel, "target", rel_path, required=True, notes=problems)
        assert src_t is not None and dst_t is not None
        rel_ok = pc.and_(pc.is_valid(src_t), pc.is_valid(dst_t))
        n_bad_rel = len(src_t) - pc.sum(rel_ok.cast(pa.int64())).as_py()
        if n_bad_rel:
            problems.append(f"{n_bad_rel} relationships with a missing source or target were skipped")
            rel = rel.filter(rel_ok)
            src_t, dst_t = src_t.filter(rel_ok), dst_t.filter(rel_ok)
            if rel.num_rows == 0:
                raise EmptyTableError("has no relationship with both endpoints", path=rel_path,
                                      fix="re-run `graphrag index`")
        m = rel.num_rows

        # endpoints → entity indices (first entity wins on duplicate titles)
        dup_titles = n_ent - len(pc.unique(titles))
        if dup_titles:
            problems.append(f"{dup_titles} duplicate entity titles (the first of each is used for edges and lookup)")
        src = pc.index_in(src_t, value_set=titles).to_numpy(zero_copy_only=False)
        dst = pc.index_in(dst_t, value_set=titles).to_numpy(zero_copy_only=False)
        src = np.where(np.isnan(src), -1, src).astype(np.int64) if src.dtype.kind == "f" else src.astype(np.int64)
        dst = np.where(np.isnan(dst), -1, dst).astype(np.int64) if dst.dtype.kind == "f" else dst.astype(np.int64)
        missing_mask = np.concatenate([src < 0, dst < 0])
        placeholder_titles = pa.array([], pa.string())
        if missing_mask.any():
            both = pa.concat_arrays([src_t, dst_t])
            miss_titles = pc.unique(both.filter(pa.array(missing_mask)))
            placeholder_titles = miss_titles
            codes = pc.index_in(both, value_set=miss_titles).to_numpy(zero_copy_only=False)
            codes = np.where(np.isnan(codes), -1, codes).astype(np.int64) if codes.dtype.kind == "f" else codes.astype(np.int64)
            fill = n_ent + codes
            src = np.where(src < 0, fill[:m], src)
            dst = np.where(dst < 0, fill[m:], dst)
            problems.append(f"{len(miss_titles)} relationship endpoints are missing from entities "
                            "(kept as placeholder entities)")
        n_ph = len(placeholder_titles)
        self._titles = pa.concat_arrays([titles, placeholder_titles])
        self._ids = pa.concat_arrays([ids, pc.binary_join_element_wise(PLACEHOLDER_PREFIX, placeholder_titles, "")])
        empty = pa.nulls(n_ph, pa.string())
        self._types = pa.concat_arrays([types if types is not None else pa.nulls(n_ent, pa.string()), empty])
        self._descs = pa.concat_arrays([descs if descs is not None else pa.nulls(n_ent, pa.string()), empty])
        placeholder = np.zeros(n_ent + n_ph, dtype=bool)
        placeholder[n_ent:] = True
        self._placeholder = _frozen(placeholder)
        n = n_ent + n_ph
        self.n_entities = n
        self.n_relationships = m

        rel_ids = _string_column(rel, "id", rel_path, required=False, notes=problems)
        if rel_ids is None:
            problems.append("relationships have no 'id' column; row numbers are used as ids")
            rel_ids = pa.array(np.arange(m).astype(str).astype(object), pa.string())
        self._rel_ids = rel_ids
        self._rel_desc = _string_column(rel, "description", rel_path, required=False, notes=problems) or pa.nulls(m, pa.string())
        self._rel_label = _string_column(rel, "relation", rel_path, required=False, notes=problems)
        w = rel.column("weight").combine_chunks() if "weight" in rel.column_names else None
        if w is not None and (pa.types.is_floating(w.type) or pa.types.is_integer(w.type)):
            weight = w.cast(pa.float64()).fill_null(1.0).to_numpy(zero_copy_only=False).copy()
        else:
            weight = np.ones(m, dtype=np.float64)
        self._weight = _frozen(weight)
        self._src = _frozen(src.astype(np.int32))
        self._dst = _frozen(dst.astype(np.int32))

        # reversed duplicates and parallel edges
        key = src * n + dst
        rkey = dst * n + src
        order = np.argsort(key, kind="stable")
        skey = key[order]
        pos = np.searchsorted(skey, rkey)
        pos_c = np.minimum(pos, m - 1)
        has_rev = (skey[pos_c] == rkey) & (src != dst)
        first_rev = np.where(has_rev, order[pos_c], -1)
        # only the later edge of a pair points back at the earlier one
        reverse_of = np.where(first_rev < np.arange(m), first_rev, -1)
        self._reverse_of = _frozen(reverse_of.astype(np.int64))
        n_rev = int((reverse_of >= 0).sum())
        if n_rev:
            problems.append(f"{n_rev} relationships reverse an earlier one (A→B and B→A both present; kept)")
        n_parallel = int(m - 1 - np.count_nonzero(skey[1:] != skey[:-1])) if m else 0
        self_loops = int((src == dst).sum())
        if self_loops:
            problems.append(f"{self_loops} self-loop relationships")

        # CSR over both directions (a self-loop listed once): each entity's outgoing edges, then incoming.
        # Outgoing edges come grouped by source from the key sort above; one more sort groups by target;
        # both are scattered into place, so there is no sort over 2·m entries.
        not_loop = src != dst
        in_rel = np.flatnonzero(not_loop)
        in_rel = in_rel[np.argsort(dst[in_rel].astype(np.int32), kind="stable")]
        outdeg = np.bincount(src, minlength=n)
        indeg = np.bincount(dst[in_rel], minlength=n)
        counts = outdeg + indeg
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(counts, out=indptr[1:])
        out_first = np.concatenate([[0], np.cumsum(outdeg)[:-1]])
        in_first = np.concatenate([[0], np.cumsum(indeg)[:-1]])
        s_sorted = src[order]
        pos_out = indptr[s_sorted] + (np.arange(m) - out_first[s_sorted])
        d_sorted = dst[in_rel]
        pos_in = indptr[d_sorted] + outdeg[d_sorted] + (np.arange(len(in_rel)) - in_first[d_sorted])
        total = int(indptr[-1])
        nbr_rel = np.empty(total, dtype=np.int32)
        nbr_other = np.empty(total, dtype=np.int32)
        nbr_out = np.zeros(total, dtype=bool)
        nbr_rel[pos_out] = order
        nbr_other[pos_out] = dst[order]
        nbr_out[pos_out] = True
        nbr_rel[pos_in] = in_rel
        nbr_other[pos_in] = src[in_rel]
        self._indptr = _frozen(indptr)
        self._nbr_rel = _frozen(nbr_rel)
        self._nbr_other = _frozen(nbr_other)
        self._nbr_out = _frozen(nbr_out)
        self._degree = _frozen(counts.astype(np.int64))

        # text units
        if tu is not None and tu.num_rows:
            tu_ids = _string_column(tu, "id", tu_path, required=True, notes=problems)
            text_col = "text" if "text" in tu.column_names else ("chunk" if "chunk" in tu.column_names else "text")
            tu_text = _string_column(tu, text_col, tu_path, required=True, notes=problems)
            assert tu_ids is not None and tu_text is not None
        else:
            if tu is None:
                problems.append("no text_units table: links have no source text")
            tu_ids = pa.array([], pa.string())
            tu_text = pa.array([], pa.string())
        self._tu_ids, self._tu_text = tu_ids, tu_text
        tlist = _list_column(rel, "text_unit_ids")
        if tlist is None and "text_unit_ids" in rel.column_names:
            problems.append(f"{rel_path.stem}.text_unit_ids has type {rel.schema.field('text_unit_ids').type}, "
                            "expected a list of text unit ids; links have no source text")
        if tlist is not None:
            offsets = tlist.offsets.to_numpy().astype(np.int64)
            offsets = offsets - offsets[0]
            flat = tlist.flatten()
            if len(tu_ids):
                tidx = pc.index_in(flat, value_set=tu_ids).to_numpy(zero_copy_only=False)
                tidx = np.where(np.isnan(tidx), -1, tidx) if tidx.dtype.kind == "f" else tidx
            else:
                tidx = np.full(len(flat), -1)
            if len(tidx) and (np.asarray(tidx) < 0).any() and len(tu_ids):
                problems.append(f"{int((np.asarray(tidx) < 0).sum())} text unit references point to no text unit")
            # null list entries give equal offsets, which is what we want
            self._rel_tu_off = _frozen(offsets)
            self._rel_tu_idx = _frozen(np.asarray(tidx, dtype=np.int64))
        else:
            self._rel_tu_off = _frozen(np.zeros(m + 1, dtype=np.int64))
            self._rel_tu_idx = _frozen(np.zeros(0, dtype=np.int64))

        # lookups
        # dicts built from reversed pairs so the first occurrence wins, in C rather than a Python loop
        # (the id and case-folded title maps are built on first use: see _index)
        self._by_title = dict(zip(reversed(self._titles.to_pylist()), range(n - 1, -1, -1)))
        self._memo = {}
        self._memo_lock = threading.Lock()
        if descs is not None and len(descs):
            n_long = pc.sum(pc.greater(pc.utf8_length(descs), LONG_DESCRIPTION_CHARS).cast(pa.int64())).as_py() or 0
            if n_long:
                problems.append(f"{n_long} entity descriptions are longer than {LONG_DESCRIPTION_CHARS} characters "
                                "(prompts use only their beginning)")
        n_dup_ids = n - len(pc.unique(self._ids))
        if n_dup_ids:
            problems.append(f"{n_dup_ids} duplicate entity ids (the first of each is used)")
        self.problems = tuple(problems)
        self.counts = {
            "entities": n_ent, "placeholder_entities": n_ph, "relationships": m,
            "reversed_duplicates": n_rev, "parallel_duplicates": n_parallel, "self_loops": self_loops,
            "text_units": len(tu_ids), "skipped_entities": n_bad, "skipped_relationships": n_bad_rel,
            "duplicate_titles": dup_titles,
        }
        self._sealed = True

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

    def title(self, idx: int) -> str:
        return self._titles[int(idx)].as_py()

    def titles(self, idxs: Sequence[int] | np.ndarray) -> list[str]:
        return _strings(self._titles, idxs)

    def entity_descriptions(self, idxs: Sequence[int] | np.ndarray) -> list[str]:
        return _strings(self._descs, idxs)

    def all_titles(self) -> list[str]:
        return self._titles.to_pylist()

    def degree(self, idx: int) -> int:
        return int(self._degree[int(idx)])

    @property
    def degrees(self) -> np.ndarray:
        return self._degree

    def neighbors(self, idx: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(relationship indices, neighbour entity indices, outgoing flags) of one entity; O(degree) views."""
        a, b = self._indptr[int(idx)], self._indptr[int(idx) + 1]
        return self._nbr_rel[a:b], self._nbr_other[a:b], self._nbr_out[a:b]

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
