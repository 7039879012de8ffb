"""PgGraphStore: the GraphStore protocol over a graph imported into PostgreSQL (psycopg 3, a connection pool).

Same indices and neighbour order as the in-memory KnowledgeGraph of the same project (pg_import copies its
index arrays), so the engine gives identical chains from either. Lookups are batched: a whole frontier's
neighbours, a candidate set's labels, a set of relationships' evidence each cost one round trip
(`neighbors_many`, `labels`, `evidence_many`). Rows once read are kept in bounded LRU caches: an imported graph
never changes under a store (a re-import writes a new schema; a store still pointing at the old one gets a
StoreError saying to open the graph again), so cached rows never go stale.

Thread-safe: one store is shared by every session of a process; each query borrows a pooled connection.
"""
from __future__ import annotations

import enum
import threading
from collections import OrderedDict
from typing import Any, Final, Generic, Literal, TypeVar
from collections.abc import Hashable, Iterable, Sequence

import numpy as np

from tog_core.graphrag.store import Entity, Relationship, TextUnit
from tog_core.graphrag.pg_common import GRAPH_SCHEMA, GraphRecord, StoreError, connect, redact, require_record, scrub
from tog_core.graphrag.project import ProjectInfo


class _Missing(enum.Enum):
    """The type of the LRU's "not cached" sentinel (an enum member, so `v is _MISSING` narrows the type)."""

    MISSING = enum.auto()


_MISSING: Final = _Missing.MISSING
_Neighbours = tuple[np.ndarray, np.ndarray, np.ndarray]
_EMPTY: _Neighbours = (np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int32), np.zeros(0, dtype=bool))
K = TypeVar("K", bound=Hashable)
V = TypeVar("V")
for _a in _EMPTY:
    _a.setflags(write=False)


class LRU(Generic[K, V]):
    """A bounded, thread-safe least-recently-used map with hit/miss counts."""

    def __init__(self, maxsize: int) -> None:
        self.maxsize = max(1, int(maxsize))
        self._d: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    def get(self, key: K) -> V | Literal[_Missing.MISSING]:
        with self._lock:
            v = self._d.get(key, _MISSING)
            if v is _MISSING:
                self.misses += 1
            else:
                self.hits += 1
                self._d.move_to_end(key)
            return v

    def split(self, keys: Iterable[K]) -> tuple[dict[K, V], list[K]]:
        """(cached values by key, keys to fetch) — one lock round for a batch."""
        found: dict[K, V] = {}
        missing: dict[K, None] = {}  # ordered, O(1) membership
        with self._lock:
            for k in keys:
                if k in found or k in missing:
                    continue
                v = self._d.get(k, _MISSING)
                if v is _MISSING:
                    missing[k] = None
                else:
                    self._d.move_to_end(k)
                    found[k] = v
            self.hits += len(found)
            self.misses += len(missing)
        return found, list(missing)

    def put(self, key: K, value: V) -> None:
        with self._lock:
            self._d[key] = value
            self._d.move_to_end(key)
            while len(self._d) > self.maxsize:
                self._d.popitem(last=False)

    def put_many(self, items: Iterable[tuple[K, V]]) -> None:
        with self._lock:
            for key, value in items:
                self._d[key] = value
                self._d.move_to_end(key)
            while len(self._d) > self.maxsize:
                self._d.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._d.clear()
            self.hits = self.misses = 0


# Candidate sets bigger than this (a hub in the frontier) bypass the per-row LRU: caching them would evict
# everything else for rows no other stage asks for, and the per-row bookkeeping costs more than the fetch.
BIG_BATCH = 20_000


def _indices(idxs: Sequence[int] | np.ndarray, n: int, what: str) -> np.ndarray:
    """Indices as int64, each checked to lie in 0..n-1 (IndexError naming the first one that does not)."""
    a = np.asarray(idxs, dtype=np.int64).reshape(-1)
    if a.size and (a.min() < 0 or a.max() >= n):
        bad = int(a[(a < 0) | (a >= n)][0])
        raise IndexError(f"{what} index {bad} out of range (the graph has {n})")
    return a


def _pg_ints(keys: Sequence[int] | np.ndarray) -> str:
    """An int4[] literal: psycopg dumps a Python list element by element, ~1 µs each; this is a join."""
    return "{" + ",".join(map(str, keys)) + "}"


class PgGraphStore:
    """One imported graph. Open with `PgGraphStore(url, name)`; close with `close()` (or use `with`)."""

    def __init__(self, url: str, name: str, *, info: ProjectInfo | None = None, pool_size: int = 4,
                 cache_size: int = 50_000) -> None:
        from psycopg_pool import ConnectionPool

        with connect(url) as conn:
            self.record: GraphRecord = require_record(conn, name, url)
        self.name = name
        self.url = redact(url)
        self._secret_url = url
        self.info = info
        self.n_entities = self.record.n_entities
        self.n_relationships = self.record.n_relationships
        self.counts = dict(self.record.counts)
        self.problems = tuple(self.record.problems)
        s = self.record.schema
        assert GRAPH_SCHEMA.match(s)  # generated by the importer, so safe to put into SQL text
        self._q = {
            "entities": f"SELECT idx, id, title, type, description, degree, placeholder FROM {s}.entities "
                        "WHERE idx = ANY(%s::int4[])",
            "find": f"""SELECT idx FROM (
                (SELECT idx, 0 AS k FROM {s}.entities WHERE id = %(key)s ORDER BY idx LIMIT 1)
                UNION ALL (SELECT idx, 1 FROM {s}.entities WHERE title = %(key)s ORDER BY idx LIMIT 1)
                UNION ALL (SELECT idx, 2 FROM {s}.entities WHERE title_fold = %(fold)s ORDER BY idx LIMIT 1)
                ) x WHERE k >= %(first)s ORDER BY k LIMIT 1""",
            "find_rel": f"SELECT idx FROM {s}.relationships WHERE id = %s ORDER BY idx LIMIT 1",
            "neighbors": f"""SELECT ent, array_agg(rel ORDER BY pos), array_agg(other ORDER BY pos),
                                    array_agg(out ORDER BY pos)
                             FROM {s}.adjacency WHERE ent = ANY(%s::int4[]) GROUP BY ent""",
            "rels": f"SELECT idx, id, src, dst, description, label FROM {s}.relationships WHERE idx = ANY(%s::int4[])",
            "relationship": f"""SELECT r.idx, r.weight, r.reverse_of, ARRAY(
                                    SELECT t.id FROM {s}.rel_text_units u JOIN {s}.text_units t ON t.idx = u.tu
                                    WHERE u.rel = r.idx ORDER BY u.ord)
                                FROM {s}.relationships r WHERE r.idx = ANY(%s::int4[])""",
            "evidence": f"""SELECT u.rel, t.id, t.text FROM {s}.rel_text_units u JOIN {s}.text_units t ON t.idx = u.tu
                            WHERE u.rel = ANY(%s::int4[]) ORDER BY u.rel, u.ord""",
            "titles": f"SELECT title FROM {s}.entities ORDER BY idx",
            "degrees": f"SELECT degree FROM {s}.entities ORDER BY idx",
            "degrees_of": f"SELECT idx, degree FROM {s}.entities WHERE idx = ANY(%s::int4[])",
            # fuzzy + substring: exact (case-folded) first, then substring hits, then trigram similarity
            "search_trgm": f"""SELECT idx, title, title_fold = %(fold)s AS exact, title ILIKE %(pat)s AS sub,
                                      similarity(title, %(q)s) AS sim
                               FROM {s}.entities WHERE title ILIKE %(pat)s OR title %% %(q)s
                               ORDER BY exact DESC, sub DESC, sim DESC, idx LIMIT %(n)s""",
            "search_like": f"""SELECT idx, title, title_fold = %(fold)s AS exact, true AS sub,
                                      length(%(q)s)::float8 / greatest(length(title), 1) AS sim
                               FROM {s}.entities WHERE title ILIKE %(pat)s
                               ORDER BY exact DESC, length(title), idx LIMIT %(n)s""",
        }
        self._ent: LRU[int, Entity] = LRU(cache_size)
        self._rel: LRU[int, tuple[Any, ...]] = LRU(cache_size * 4)  # light rows: candidate sets are large, rows small
        self._full: LRU[int, Relationship] = LRU(cache_size // 5)
        self._nbr: LRU[int, _Neighbours] = LRU(cache_size // 5)
        self._ev: LRU[int, tuple[TextUnit, ...]] = LRU(cache_size // 5)
        self._find: LRU[tuple[int, str], int | None] = LRU(cache_size // 5)
        self._all_titles: list[str] | None = None
        self._last_batch: tuple[bytes, list[tuple[Any, ...]]] | None = None
        self._degrees: np.ndarray | None = None
        self._pool = ConnectionPool(url, min_size=1, max_size=max(1, pool_size), open=True, name=f"tog:{name}",
                                    kwargs={"autocommit": True, "connect_timeout": 10, "client_encoding": "UTF8",
                                            "application_name": "tog-explorer"})

    # ------------------------------------------------------------ plumbing
    def _rows(self, key: str, params: Any, *, binary: bool = False) -> list[tuple[Any, ...]]:
        import psycopg

        try:
            with self._pool.connection() as conn, conn.cursor(binary=binary) as cur:
                cur.execute(self._q[key], params)
                return cur.fetchall()
        except (psycopg.errors.UndefinedTable, psycopg.errors.InvalidSchemaName):
            raise StoreError(f"graph {self.name!r} was re-imported or dropped in {self.url} since it was opened — "
                             "open it again") from None
        except psycopg.OperationalError as err:
            raise StoreError(f"store {self.url}: {scrub(str(err).strip(), self._secret_url)[:300]}") from None

    def close(self) -> None:
        self._pool.close()

    def __enter__(self) -> PgGraphStore:
        return self

    def __exit__(self, *_exc: Any) -> None:
        self.close()

    def clear_cache(self) -> None:
        for c in (self._ent, self._rel, self._full, self._nbr, self._ev, self._find):
            c.clear()
        self._last_batch = None

    def cache_info(self) -> dict[str, tuple[int, int]]:
        """(hits, misses) per cache."""
        return {k: (c.hits, c.misses) for k, c in (("entities", self._ent), ("relationships", self._rel),
                                                    ("relationship", self._full), ("neighbors", self._nbr),
                                                    ("evidence", self._ev), ("find", self._find))}

    def _check(self, idx: Any, n: int, what: str) -> int:
        return int(_indices([idx], n, what)[0])

    # ------------------------------------------------------------ entities
    def _entities(self, idxs: Sequence[int] | np.ndarray) -> list[Entity]:
        keys = _indices(idxs, self.n_entities, "entity").tolist()
        found, missing = self._ent.split(keys)
        if missing:
            got = {i: Entity(idx=i, id=eid, title=title, type=typ or "", description=desc or "", degree=deg,
                             placeholder=ph)
                   for i, eid, title, typ, desc, deg, ph in self._rows("entities", (_pg_ints(missing),), binary=True)}
            found.update(got)
            self._ent.put_many(got.items())
        return [found[k] for k in keys]

    def entity(self, idx: int) -> Entity:
        return self._entities([idx])[0]

    def entities(self, idxs: Sequence[int] | np.ndarray) -> list[Entity]:
        return self._entities(idxs) if len(idxs) else []  # one round trip for all that are not cached

    def entity_descriptions(self, idxs: Sequence[int] | np.ndarray) -> list[str]:
        return [e.description for e in self.entities(idxs)]

    def title(self, idx: int) -> str:
        return self.entity(idx).title

    def degree(self, idx: int) -> int:
        return self.entity(idx).degree

    def degrees_of(self, idxs: Sequence[int] | np.ndarray) -> np.ndarray:
        keys = _indices(idxs, self.n_entities, "entity").tolist()
        if self._degrees is not None:
            return self._degrees[np.asarray(keys, dtype=np.int64)]
        found, missing = self._ent.split(keys)  # degrees of cached rows are known; the rest in one light query
        deg = {k: e.degree for k, e in found.items()}
        if missing:
            deg.update((int(i), int(d)) for i, d in self._rows("degrees_of", (_pg_ints(missing),)))  # split: unique
        return np.fromiter((deg[k] for k in keys), dtype=np.int64, count=len(keys))

    @property
    def degrees(self) -> np.ndarray:
        if self._degrees is None:
            d = np.array([r[0] for r in self._rows("degrees", ())], dtype=np.int64)
            d.setflags(write=False)
            self._degrees = d
        return self._degrees

    def all_titles(self) -> list[str]:
        if self._all_titles is None:
            self._all_titles = [r[0] for r in self._rows("titles", ())]
        return list(self._all_titles)

    def _lookup(self, key: str, first: int) -> int | None:
        ck = (first, key)
        v = self._find.get(ck)
        if v is _MISSING:
            rows = self._rows("find", {"key": key, "fold": key.casefold(), "first": first})
            v = rows[0][0] if rows else None
            self._find.put(ck, v)
        return v

    def find(self, key: str) -> int | None:
        """Entity index by id, exact title, then case-insensitive title (first occurrence of each)."""
        return self._lookup(key, 0)

    def find_title(self, title: str) -> int | None:
        """Entity index by exact title, then case-insensitive title (ids not considered)."""
        return self._lookup(title, 1)

    def find_relationship(self, rel_id: str) -> int | None:
        rows = self._rows("find_rel", (rel_id,))
        return rows[0][0] if rows else None

    def search_titles(self, query: str, limit: int = 10) -> list[tuple[int, str, float]]:
        """Fuzzy and substring title search: (index, title, score 0–100), exact match first, then titles
        containing the query, then trigram-similar ones (pg_trgm), best first."""
        q = query.strip()
        if not q or limit <= 0:
            return []
        pat = "%" + q.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        key = "search_trgm" if self.record.trigram else "search_like"
        rows = self._rows(key, {"q": q, "pat": pat, "fold": q.casefold(), "n": int(limit)})
        return [(i, t, 100.0 if exact else round(100.0 * min(1.0, float(sim)), 1)) for i, t, exact, _s, sim in rows]

    # ------------------------------------------------------------ neighbours
    def neighbors_many(self, idxs: Sequence[int] | np.ndarray) -> dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """Neighbours of several entities in one round trip: {idx: (relationship indices, neighbour indices,
        outgoing flags)}, each in the in-memory graph's order; arrays are read-only."""
        keys = _indices(idxs, self.n_entities, "entity").tolist()
        found, missing = self._nbr.split(keys)
        if missing:
            got = {r[0]: r[1:] for r in self._rows("neighbors", (_pg_ints(missing),), binary=True)}
            for k in missing:
                if k in got:
                    rels, others, outs = got[k]
                    arrs = (np.array(rels, dtype=np.int32), np.array(others, dtype=np.int32),
                            np.array(outs, dtype=bool))
                    for a in arrs:
                        a.setflags(write=False)
                else:
                    arrs = _EMPTY
                found[k] = arrs
            self._nbr.put_many((k, found[k]) for k in missing)
        return {k: found[k] for k in keys}

    def neighbors(self, idx: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        i = self._check(idx, self.n_entities, "entity")
        return self.neighbors_many([i])[i]

    # ------------------------------------------------------------ relationships
    def _rel_rows(self, ridxs: Sequence[int] | np.ndarray) -> list[tuple[Any, ...]]:
        """(id, src, dst, description, label) per relationship, one round trip for the uncached ones."""
        arr = _indices(ridxs, self.n_relationships, "relationship")
        if arr.size > BIG_BATCH:  # a hub's candidates: labels() then descriptions() of the same set share a fetch
            key = arr.tobytes()
            last = self._last_batch
            if last is not None and last[0] == key:
                return last[1]
            keys = arr.tolist()  # duplicates are harmless in `= ANY`: each row comes back once
            got = {row[0]: row[1:] for row in self._rows("rels", (_pg_ints(keys),), binary=True)}
            out = [got[k] for k in keys]
            self._last_batch = (key, out)
            return out
        keys = arr.tolist()
        found, missing = self._rel.split(keys)
        if missing:
            got = {row[0]: row[1:] for row in self._rows("rels", (_pg_ints(missing),), binary=True)}
            found.update(got)
            self._rel.put_many(got.items())
        return [found[k] for k in keys]

    def labels(self, ridxs: Sequence[int] | np.ndarray) -> list[str]:
        """The `relation` column if the table has one (the description where it is empty), else the description."""
        rows = self._rel_rows(ridxs)
        if not self.record.has_relation_labels:
            return [r[3] or "" for r in rows]
        return [r[4] or r[3] or "" for r in rows]

    def descriptions(self, ridxs: Sequence[int] | np.ndarray) -> list[str]:
        return [r[3] or "" for r in self._rel_rows(ridxs)]

    def relationship_ids(self, ridxs: Sequence[int] | np.ndarray) -> list[str]:
        return [r[0] or "" for r in self._rel_rows(ridxs)]

    def endpoints(self, ridx: int) -> tuple[int, int]:
        r = self._rel_rows([ridx])[0]
        return r[1], r[2]

    @property
    def has_relation_labels(self) -> bool:
        return self.record.has_relation_labels

    def relationship(self, ridx: int) -> Relationship:
        r = self._check(ridx, self.n_relationships, "relationship")
        v = self._full.get(r)
        if v is _MISSING:
            [(_i, weight, rev, tu_ids)] = self._rows("relationship", (_pg_ints([r]),))
            rid, s, t, desc, label = self._rel_rows([r])[0]
            src, dst = self._entities([s, t])
            desc = desc or ""
            v = Relationship(idx=r, id=rid, source_idx=s, target_idx=t, source=src.title, target=dst.title,
                             description=desc, label=(label if self.record.has_relation_labels else None) or desc,
                             weight=float(weight), text_unit_ids=tuple(tu_ids), reverse_of=rev)
            self._full.put(r, v)
        return v

    def text_unit_ids(self, ridx: int) -> list[str]:
        return list(self.relationship(ridx).text_unit_ids)

    def evidence_many(self, ridxs: Sequence[int] | np.ndarray) -> dict[int, list[TextUnit]]:
        """Source text units of several relationships in one round trip, each in text_unit_ids order."""
        keys = _indices(ridxs, self.n_relationships, "relationship").tolist()
        found, missing = self._ev.split(keys)
        if missing:
            got: dict[int, list[TextUnit]] = {k: [] for k in missing}
            for rel, tid, text in self._rows("evidence", (_pg_ints(missing),), binary=True):
                got[rel].append(TextUnit(id=tid, text=text or ""))
            frozen = {k: tuple(v) for k, v in got.items()}
            found.update(frozen)
            self._ev.put_many(frozen.items())
        return {k: list(found[k]) for k in keys}

    def evidence(self, ridx: int) -> list[TextUnit]:
        r = self._check(ridx, self.n_relationships, "relationship")
        return self.evidence_many([r])[r]

    # ------------------------------------------------------------ inspect
    def audit(self) -> list[str]:
        """The import-time audit (duplicate relationship ids ...), as KnowledgeGraph.audit gives it."""
        return list(self.record.audit)

    def summary(self) -> dict[str, Any]:
        return dict(self.counts)
