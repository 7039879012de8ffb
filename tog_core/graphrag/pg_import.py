"""`store import`: load a GraphRAG project into PostgreSQL with COPY, idempotently, beside other projects.

The project is first read and indexed exactly as KnowledgeGraph.load does (tables.read_tables + build_columns:
every version the loader reads can be imported, with the same repairs — placeholders, skipped rows, duplicate
titles), then those columns and index arrays are copied
verbatim: entity and relationship indices, and each entity's neighbour list in the in-memory order. The store
therefore hands the engine the same indices in the same order, and the same question gives the same chains.

One transaction per import: a new schema g_<hex> is created and filled, its indexes built, then the catalog row
is pointed at it and the previous schema of that name dropped. A failed import leaves the old graph untouched;
a reader sees the old graph or the new one. Tables carry no foreign keys: the importer is the only writer and
derives every reference from the loaded graph, so checking them row by row would only slow COPY down.
"""
from __future__ import annotations

import io
import json
import time
import uuid
from pathlib import Path
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from tog_core.graphrag.graph import KnowledgeGraph
from tog_core.graphrag.pg_common import (CATALOG_SCHEMA, GraphRecord, StoreError, connect, ensure_catalog, graph_name,
                                         read_record)
from tog_core.graphrag.project import ProjectInfo, open_project
from tog_core.graphrag.tables import GraphColumns, build_columns, read_tables

COPY_BATCH_ROWS = 65_536

# Tables of one graph. Indices are the in-memory graph's, so nothing is renumbered.
TABLES = {
    "entities": """idx int4 NOT NULL, id text, title text NOT NULL, title_fold text NOT NULL, type text,
                   description text, degree int4 NOT NULL, placeholder bool NOT NULL""",
    "relationships": """idx int4 NOT NULL, id text, src int4 NOT NULL, dst int4 NOT NULL, description text,
                        label text, weight float8 NOT NULL, reverse_of int4""",
    # the CSR adjacency of KnowledgeGraph as rows: entity `ent`'s neighbours are its rows in `pos` order
    # (outgoing edges first, then incoming), so neighbour order is the in-memory order by construction
    "adjacency": "ent int4 NOT NULL, pos int4 NOT NULL, rel int4 NOT NULL, other int4 NOT NULL, out bool NOT NULL",
    "rel_text_units": "rel int4 NOT NULL, ord int4 NOT NULL, tu int4 NOT NULL",  # only references that resolve
    "text_units": "idx int4 NOT NULL, id text, text text",
}

# Indexes, built after COPY (one sorted build is much cheaper than maintaining them row by row).
INDEXES = [
    # entity(idx), titles(idxs), descriptions(idxs): `idx = ANY(array)` probes
    "ALTER TABLE {s}.entities ADD PRIMARY KEY (idx)",
    # find(id), find_title(title), case-insensitive find_title: equality only, so hash indexes — no 2.7 kB key
    # limit (a hostile title cannot break the import) and smaller than a btree on long text; the first
    # occurrence wins via ORDER BY idx LIMIT 1 over the few rows a key matches
    "CREATE INDEX ON {s}.entities USING hash (id)",
    "CREATE INDEX ON {s}.entities USING hash (title)",
    "CREATE INDEX ON {s}.entities USING hash (title_fold)",
    # relationship(ridx), labels/descriptions/ids of a candidate set
    "ALTER TABLE {s}.relationships ADD PRIMARY KEY (idx)",
    # find_relationship(id) when a saved trace is resumed
    "CREATE INDEX ON {s}.relationships USING hash (id)",
    # neighbours of a frontier: one range scan per entity; rows were copied in (ent, pos) order, so the heap is
    # clustered on this key and an entity's edges sit on adjacent pages
    "ALTER TABLE {s}.adjacency ADD PRIMARY KEY (ent, pos)",
    # evidence of a set of relationships, in the order of their text_unit_ids
    "ALTER TABLE {s}.rel_text_units ADD PRIMARY KEY (rel, ord)",
    "ALTER TABLE {s}.text_units ADD PRIMARY KEY (idx)",
]
# fuzzy and substring title search (search_titles): a trigram GIN index serves both `title % q` and
# `title ILIKE '%q%'`; without pg_trgm the search is a sequential ILIKE scan
TRIGRAM_INDEX = "CREATE INDEX ON {s}.entities USING gin (title gin_trgm_ops)"


@dataclass(frozen=True, kw_only=True)
class ImportResult:
    record: GraphRecord
    load_s: float  # reading and indexing the parquet tables
    copy_s: float  # COPY of every table
    index_s: float  # index builds + ANALYZE
    total_s: float
    replaced: bool  # a graph of that name was there before


def _no_nul(col: pa.Array, where: str, notes: list[str]) -> pa.Array:
    """PostgreSQL text cannot hold NUL characters: they are stored as U+FFFD and reported."""
    if pa.types.is_string(col.type) and len(col):
        hits = pc.sum(pc.match_substring(col, "\x00").cast(pa.int64())).as_py() or 0
        if hits:
            notes.append(f"{where}: {hits} values hold NUL characters (stored as \ufffd: PostgreSQL text cannot)")
            return pc.replace_substring(col, "\x00", "\ufffd")
    return col


def graph_tables(c: GraphColumns, notes: list[str]) -> dict[str, pa.Table]:
    """The loaded graph's columns and index arrays as the store's tables (same indices, same order)."""
    n, m = len(c.titles), len(c.src)
    titles = _no_nul(c.titles, "entities.title", notes)
    ent = pa.table({
        "idx": pa.array(np.arange(n, dtype=np.int32)), "id": _no_nul(c.ids, "entities.id", notes), "title": titles,
        "title_fold": pa.array([t.casefold() for t in titles.to_pylist()], pa.string()),
        "type": _no_nul(c.types, "entities.type", notes),
        "description": _no_nul(c.descs, "entities.description", notes),
        "degree": pa.array(c.degree.astype(np.int32)), "placeholder": pa.array(c.placeholder)})
    rel = pa.table({
        "idx": pa.array(np.arange(m, dtype=np.int32)), "id": _no_nul(c.rel_ids, "relationships.id", notes),
        "src": pa.array(c.src.astype(np.int32)), "dst": pa.array(c.dst.astype(np.int32)),
        "description": _no_nul(c.rel_desc, "relationships.description", notes),
        "label": (_no_nul(c.rel_label, "relationships.relation", notes) if c.rel_label is not None
                  else pa.nulls(m, pa.string())),
        "weight": pa.array(c.weight), "reverse_of": pa.array(c.reverse_of.astype(np.int32), mask=c.reverse_of < 0)})
    total = int(c.indptr[-1])
    adj = pa.table({"ent": pa.array(np.repeat(np.arange(n, dtype=np.int32), np.diff(c.indptr))),
                    "pos": pa.array(np.arange(total, dtype=np.int32)), "rel": pa.array(c.nbr_rel.astype(np.int32)),
                    "other": pa.array(c.nbr_other.astype(np.int32)), "out": pa.array(c.nbr_out)})
    off, tidx = c.rel_tu_off, c.rel_tu_idx
    rel_of = np.repeat(np.arange(m, dtype=np.int32), np.diff(off))
    ords = (np.arange(len(tidx), dtype=np.int64) - off[rel_of]).astype(np.int32)
    ok = tidx >= 0
    rtu = pa.table({"rel": pa.array(rel_of[ok]), "ord": pa.array(ords[ok]), "tu": pa.array(tidx[ok].astype(np.int32))})
    tu = pa.table({"idx": pa.array(np.arange(len(c.tu_ids), dtype=np.int32)),
                   "id": _no_nul(c.tu_ids, "text_units.id", notes),
                   "text": _no_nul(c.tu_text, "text_units.text", notes)})
    return {"entities": ent, "relationships": rel, "adjacency": adj, "rel_text_units": rtu, "text_units": tu}


def _copy(conn: Any, schema: str, name: str, table: pa.Table) -> None:
    """COPY one table in CSV batches written by pyarrow (strings always quoted, so "" is empty and a bare
    empty field is NULL, which is PostgreSQL's CSV convention)."""
    cols = ", ".join(table.column_names)
    opts = pacsv.WriteOptions(include_header=False)
    with conn.cursor().copy(f"COPY {schema}.{name} ({cols}) FROM STDIN (FORMAT csv)") as cp:
        for batch in table.to_batches(max_chunksize=COPY_BATCH_ROWS):
            buf = io.BytesIO()
            pacsv.write_csv(batch, buf, opts)
            cp.write(buf.getbuffer())


def _ensure_trigram(conn: Any) -> bool:
    """pg_trgm if the server has it and we may create it (trusted extension since PostgreSQL 13)."""
    import psycopg

    try:
        with conn.transaction():
            conn.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
        return True
    except psycopg.Error:
        return False


def import_graph(url: str, project: str | ProjectInfo, *, name: str | None = None) -> ImportResult:
    """Load `project` into the store at `url` under `name` (default: the project folder's name), replacing a
    graph of the same name. Returns the catalog record and where the time went."""
    t0 = time.perf_counter()
    info = project if isinstance(project, ProjectInfo) else open_project(project)
    name = graph_name(str(project), info, name)  # a blank --name is refused before anything is read
    ent, rel, tu, paths = read_tables(info)
    cols = build_columns(ent, rel, tu, info=info, paths=paths)
    g = KnowledgeGraph.from_columns(cols, info=info)  # for audit(); shares the columns, copies nothing
    if not name:
        raise StoreError("--name: the graph name is empty — give a name such as the project folder's")
    notes: list[str] = []
    tables = graph_tables(cols, notes)
    t_load = time.perf_counter() - t0
    schema = f"g_{uuid.uuid4().hex[:16]}"
    with connect(url) as conn:
        ensure_catalog(conn)
        trigram = _ensure_trigram(conn)
        with conn.transaction():
            # imports of the same name run one after the other; other names import concurrently
            conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"tog.graph:{name}",))
            conn.execute("SET LOCAL maintenance_work_mem = '256MB'")
            conn.execute(f"CREATE SCHEMA {schema}")
            for tname, coldefs in TABLES.items():
                conn.execute(f"CREATE TABLE {schema}.{tname} ({coldefs})")
            t1 = time.perf_counter()
            for tname, table in tables.items():
                _copy(conn, schema, tname, table)
            t2 = time.perf_counter()
            for ddl in INDEXES + ([TRIGRAM_INDEX] if trigram else []):
                conn.execute(ddl.format(s=schema))
            conn.execute(f"ANALYZE {schema}.entities, {schema}.relationships, {schema}.adjacency, "
                         f"{schema}.rel_text_units, {schema}.text_units")
            t3 = time.perf_counter()
            old = read_record(conn, name)
            meta = {"version": info.version, "family": info.family, "entity_name_column": info.entity_name_column,
                    "tables": {k: str(v) for k, v in info.tables.items()},
                    "n_entities": g.n_entities, "n_relationships": g.n_relationships,
                    "has_relation_labels": g.has_relation_labels, "trigram": trigram, "counts": g.counts,
                    "problems": list(g.problems) + notes, "audit": g.audit()}
            conn.execute(f"""INSERT INTO {CATALOG_SCHEMA}.graphs (name, schema, source, meta) VALUES (%s, %s, %s, %s)
                             ON CONFLICT (name) DO UPDATE SET schema = EXCLUDED.schema, source = EXCLUDED.source,
                             meta = EXCLUDED.meta, imported_at = now()""",
                         (name, schema, str(Path(info.path).resolve()), json.dumps(meta, ensure_ascii=False)))
            if old is not None:
                conn.execute(f"DROP SCHEMA {old.schema} CASCADE")
        record = read_record(conn, name)
    assert record is not None
    return ImportResult(record=record, load_s=t_load, copy_s=t2 - t1, index_s=t3 - t2,
                        total_s=time.perf_counter() - t0, replaced=old is not None)
