"""GraphRAG parquet tables → the validated, indexed columns of a knowledge graph.

Reads the entities, relationships and text units tables (any GraphRAG version), repairs what can be
repaired and reports it as a problem (numbers read as text, bytes that are not UTF-8, endpoints missing
from entities kept as placeholders, duplicate or reversed edges), and fails with a typed ProjectError
naming the file and the fix on what cannot. With TOG_PROJECT_ROOTS set when the project was opened
(ProjectInfo.roots), a table is read only from the file actually opened inside them (project.table_source).
Vectorised pyarrow/numpy code: no Python loop over relationships. Adjacency is CSR over both directions, so
one entity's neighbours cost O(its degree).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from tog_core.graphrag.errors import EmptyTableError, ProjectError, SchemaError, UnreadableTableError
from tog_core.graphrag.project import ProjectInfo, table_source

__all__ = ["GraphColumns", "read_tables", "build_columns", "PLACEHOLDER_PREFIX", "LONG_DESCRIPTION_CHARS"]

PLACEHOLDER_PREFIX = "placeholder:"
LONG_DESCRIPTION_CHARS = 100_000  # longer entity descriptions are reported as a problem

Paths = tuple[Path | None, Path | None, Path | None]


@dataclass(frozen=True, kw_only=True)
class GraphColumns:
    """Read-only columns of one graph. Entities (placeholders last) and relationships are addressed by row."""

    ids: pa.Array  # entity GraphRAG ids ("placeholder:<title>" for placeholders)
    titles: pa.Array
    types: pa.Array
    descs: pa.Array
    placeholder: np.ndarray  # bool per entity
    rel_ids: pa.Array
    src: np.ndarray  # int32 entity row per relationship
    dst: np.ndarray
    rel_desc: pa.Array
    rel_label: pa.Array | None  # the `relation` column, when the table has one
    weight: np.ndarray
    reverse_of: np.ndarray  # row of the earlier relationship running the other way, else -1
    indptr: np.ndarray  # CSR: entity i's edges are [indptr[i], indptr[i+1]) — outgoing first, then incoming
    nbr_rel: np.ndarray
    nbr_other: np.ndarray
    nbr_out: np.ndarray
    degree: np.ndarray
    tu_ids: pa.Array
    tu_text: pa.Array
    rel_tu_off: np.ndarray  # relationship r's text unit rows are rel_tu_idx[rel_tu_off[r]:rel_tu_off[r+1]]
    rel_tu_idx: np.ndarray  # -1 = a reference to no text unit
    problems: tuple[str, ...]
    counts: dict[str, int]


def read_tables(info: ProjectInfo) -> tuple[pa.Table, pa.Table, pa.Table | None, Paths]:
    """(entities, relationships, text units or None, their paths) with only the columns ToG reads."""
    ent_path = info.tables["entities"]
    rel_path = info.tables["relationships"]
    roots = info.roots
    ent = _read(ent_path, ["id", info.entity_name_column, "type", "description"], roots)
    rel = _read(rel_path, ["id", "source", "target", "description", "relation", "weight", "text_unit_ids"], roots)
    tu_path = info.tables.get("text_units")
    tu = _read(tu_path, ["id", "text", "chunk"], roots) if tu_path is not None else None
    return ent, rel, tu, (ent_path, rel_path, tu_path)


def _read(path: Path, columns: list[str] | None = None, roots: tuple[Path, ...] = ()) -> pa.Table:
    try:
        if path.stat().st_size == 0:
            raise UnreadableTableError("is an empty (zero-byte) file", path=path,
                                       fix="the indexing run was interrupted; re-run `graphrag index`")
        src = table_source(path, roots)  # the path, or the file opened inside TOG_PROJECT_ROOTS
        try:
            if columns is not None:
                present = set(pq.read_schema(src).names)
                columns = [c for c in columns if c in present]
                if src is not path:
                    src.seek(0)
            return pq.read_table(src, columns=columns)
        finally:
            if src is not path:
                src.close()
    except ProjectError:
        raise
    except Exception as err:  # pyarrow raises ArrowInvalid/OSError/...; re-raised typed
        raise UnreadableTableError(f"cannot read parquet ({err.__class__.__name__}: {str(err)[:120]})", path=path,
                                   fix="the file is damaged or not parquet; re-run `graphrag index` or restore it"
                                   ) from None


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


DEFAULT_WEIGHT = 1.0  # what a missing or unreadable relationship weight is read as (GraphRAG's own default)


def _weights(rel: pa.Table, m: int, path: Path, notes: list[str]) -> tuple[np.ndarray, int]:
    """The relationships' weights as finite floats: missing, non-numeric (text that is not a number, another type),
    NaN and infinite values are read as DEFAULT_WEIGHT and counted in one line of `notes`."""
    if "weight" not in rel.column_names:
        return np.full(m, DEFAULT_WEIGHT), 0
    col = rel.column("weight").combine_chunks()
    where = f"{path.stem}.weight"
    if pa.types.is_dictionary(col.type):
        col = col.cast(col.type.value_type)
    how = ""
    if pa.types.is_floating(col.type) or pa.types.is_integer(col.type) or pa.types.is_decimal(col.type):
        values = col.cast(pa.float64()).to_numpy(zero_copy_only=False).astype(np.float64, copy=True)
    elif pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
        how = f" (type {col.type}: read as numbers)"
        values = np.array([_number(v) for v in col.to_pylist()], dtype=np.float64)
    else:
        how = f" (type {col.type}, not a number)"
        values = np.full(m, np.nan)
    bad = ~np.isfinite(values)  # NaN stands for null and unreadable values too
    n_bad = int(bad.sum())
    if n_bad:
        values[bad] = DEFAULT_WEIGHT
        notes.append(f"{where}: {n_bad} of {m} weights are missing, not numbers or not finite{how}; "
                     f"read as {DEFAULT_WEIGHT}")
    return values, n_bad


def _number(v: object) -> float:
    try:
        return float(str(v).strip()) if v is not None else float("nan")
    except ValueError:
        return float("nan")


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


def _rows(index: pa.Array) -> np.ndarray:
    """pc.index_in output as int64 with -1 for 'not found'."""
    a = index.to_numpy(zero_copy_only=False)
    return np.where(np.isnan(a), -1, a).astype(np.int64) if a.dtype.kind == "f" else a.astype(np.int64)


def build_columns(ent: pa.Table, rel: pa.Table, tu: pa.Table | None, *, info: ProjectInfo | None = None,
                  paths: Paths = (None, None, None)) -> GraphColumns:
    """Validate and index the three tables. Raises EmptyTableError/SchemaError; repairs go to `problems`."""
    ent_path = paths[0] or Path("entities.parquet")
    rel_path = paths[1] or Path("relationships.parquet")
    tu_path = paths[2] or Path("text_units.parquet")
    problems: list[str] = list(info.problems) if info else []
    if ent.num_rows == 0:
        raise EmptyTableError("has no rows", path=ent_path,
                              fix="the index found no entities; check the input documents")
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

    # endpoints → entity rows (first entity wins on duplicate titles); unknown endpoints become placeholders
    dup_titles = n_ent - len(pc.unique(titles))
    if dup_titles:
        problems.append(f"{dup_titles} duplicate entity titles (the first of each is used for edges and lookup)")
    src = _rows(pc.index_in(src_t, value_set=titles))
    dst = _rows(pc.index_in(dst_t, value_set=titles))
    missing_mask = np.concatenate([src < 0, dst < 0])
    placeholder_titles = pa.array([], pa.string())
    if missing_mask.any():
        both = pa.concat_arrays([src_t, dst_t])
        placeholder_titles = pc.unique(both.filter(pa.array(missing_mask)))
        fill = n_ent + _rows(pc.index_in(both, value_set=placeholder_titles))
        src = np.where(src < 0, fill[:m], src)
        dst = np.where(dst < 0, fill[m:], dst)
        problems.append(f"{len(placeholder_titles)} relationship endpoints are missing from entities "
                        "(kept as placeholder entities)")
    n_ph = len(placeholder_titles)
    n = n_ent + n_ph
    all_ids = pa.concat_arrays([ids, pc.binary_join_element_wise(PLACEHOLDER_PREFIX, placeholder_titles, "")])
    empty = pa.nulls(n_ph, pa.string())
    placeholder = np.zeros(n, dtype=bool)
    placeholder[n_ent:] = True

    rel_ids = _string_column(rel, "id", rel_path, required=False, notes=problems)
    if rel_ids is None:
        problems.append("relationships have no 'id' column; row numbers are used as ids")
        rel_ids = pa.array(np.arange(m).astype(str).astype(object), pa.string())
    rel_desc = _string_column(rel, "description", rel_path, required=False, notes=problems) or pa.nulls(m, pa.string())
    rel_label = _string_column(rel, "relation", rel_path, required=False, notes=problems)
    weight, n_bad_weights = _weights(rel, m, rel_path, problems)

    adjacency, n_rev, n_parallel, self_loops = _adjacency(src, dst, n)
    if n_rev:
        problems.append(f"{n_rev} relationships reverse an earlier one (A→B and B→A both present; kept)")
    if self_loops:
        problems.append(f"{self_loops} self-loop relationships")
    tu_ids, tu_text, rel_tu_off, rel_tu_idx = _text_units(tu, rel, tu_path, rel_path, problems)

    if descs is not None and len(descs):
        n_long = pc.sum(pc.greater(pc.utf8_length(descs), LONG_DESCRIPTION_CHARS).cast(pa.int64())).as_py() or 0
        if n_long:
            problems.append(f"{n_long} entity descriptions are longer than {LONG_DESCRIPTION_CHARS} characters "
                            "(prompts use only their beginning)")
    n_dup_ids = n - len(pc.unique(all_ids))
    if n_dup_ids:
        problems.append(f"{n_dup_ids} duplicate entity ids (the first of each is used)")
    counts = {
        "entities": n_ent, "placeholder_entities": n_ph, "relationships": m,
        "reversed_duplicates": n_rev, "parallel_duplicates": n_parallel, "self_loops": self_loops,
        "text_units": len(tu_ids), "skipped_entities": n_bad, "skipped_relationships": n_bad_rel,
        "duplicate_titles": dup_titles, "default_weights": n_bad_weights,
    }
    return GraphColumns(
        ids=all_ids, titles=pa.concat_arrays([titles, placeholder_titles]),
        types=pa.concat_arrays([types if types is not None else pa.nulls(n_ent, pa.string()), empty]),
        descs=pa.concat_arrays([descs if descs is not None else pa.nulls(n_ent, pa.string()), empty]),
        placeholder=_frozen(placeholder), rel_ids=rel_ids, src=_frozen(src.astype(np.int32)),
        dst=_frozen(dst.astype(np.int32)), rel_desc=rel_desc, rel_label=rel_label, weight=_frozen(weight),
        tu_ids=tu_ids, tu_text=tu_text, rel_tu_off=rel_tu_off, rel_tu_idx=rel_tu_idx,
        problems=tuple(problems), counts=counts, **adjacency)


def _adjacency(src: np.ndarray, dst: np.ndarray, n: int) -> tuple[dict[str, np.ndarray], int, int, int]:
    """CSR over both directions plus reversed-pair detection: (arrays, reversed, parallel, self-loops)."""
    m = len(src)
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
    n_rev = int((reverse_of >= 0).sum())
    n_parallel = int(m - 1 - np.count_nonzero(skey[1:] != skey[:-1])) if m else 0
    self_loops = int((src == dst).sum())

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
    arrays: dict[str, np.ndarray] = {"reverse_of": reverse_of.astype(np.int64), "indptr": indptr,
                                     "nbr_rel": nbr_rel, "nbr_other": nbr_other, "nbr_out": nbr_out,
                                     "degree": counts.astype(np.int64)}
    return {k: _frozen(v) for k, v in arrays.items()}, n_rev, n_parallel, self_loops


def _text_units(tu: pa.Table | None, rel: pa.Table, tu_path: Path, rel_path: Path, problems: list[str]
                ) -> tuple[pa.Array, pa.Array, np.ndarray, np.ndarray]:
    """(text unit ids, texts, per-relationship offsets, text unit rows) — the evidence behind each edge."""
    m = rel.num_rows
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
    tlist = _list_column(rel, "text_unit_ids")
    if tlist is None and "text_unit_ids" in rel.column_names:
        problems.append(f"{rel_path.stem}.text_unit_ids has type {rel.schema.field('text_unit_ids').type}, "
                        "expected a list of text unit ids; links have no source text")
    if tlist is None:
        return tu_ids, tu_text, _frozen(np.zeros(m + 1, dtype=np.int64)), _frozen(np.zeros(0, dtype=np.int64))
    offsets = tlist.offsets.to_numpy().astype(np.int64)
    offsets = offsets - offsets[0]
    flat = tlist.flatten()
    tidx: Any = _rows(pc.index_in(flat, value_set=tu_ids)) if len(tu_ids) else np.full(len(flat), -1)
    if len(tidx) and (np.asarray(tidx) < 0).any() and len(tu_ids):
        problems.append(f"{int((np.asarray(tidx) < 0).sum())} text unit references point to no text unit")
    # null list entries give equal offsets, which is what we want
    return tu_ids, tu_text, _frozen(offsets), _frozen(np.asarray(tidx, dtype=np.int64))
