"""A corpus of broken GraphRAG projects, written on demand into a temporary folder (nothing binary is
committed). One function per case: `case(tmp_path) -> Path` returns the path a person would give.

`CASES` maps a case name to (writer, expectation):
* ("error", ErrorClass, [fragments]) — open_project/KnowledgeGraph.load raises that typed error and its
  message contains every fragment (the file or field it is about, and what is wrong);
* ("problem", [fragments]) — the project loads, and `inspect --json` lists a problem containing every
  fragment of one of the entries.
"""
from __future__ import annotations

import os
from pathlib import Path
from collections.abc import Callable

import pyarrow as pa
import pyarrow.parquet as pq

from tog_core.graphrag.project import (EmptyTableError, MissingTableError, NotAProjectError, SchemaError,
                              UnreadableTableError)

NAMES = ["Alice", "Acme", "Paris", "Bob"]
EDGES = [("Alice", "Acme", "Alice founded Acme"), ("Alice", "Paris", "Alice was born in Paris"),
         ("Bob", "Acme", "Bob works at Acme")]


def entities(titles=None, **override) -> pa.Table:
    titles = list(NAMES) if titles is None else titles
    cols = {"id": [f"e{i}" for i in range(len(titles))], "title": titles,
            "type": ["THING"] * len(titles), "description": [f"entity {i}" for i in range(len(titles))]}
    cols.update(override)
    return pa.table({k: v for k, v in cols.items() if v is not None})


def relationships(edges=None, **override) -> pa.Table:
    edges = list(EDGES) if edges is None else edges
    cols = {"id": [f"r{i}" for i in range(len(edges))], "source": [s for s, _, _ in edges],
            "target": [t for _, t, _ in edges], "description": [d for _, _, d in edges],
            "weight": [1.0] * len(edges),
            "text_unit_ids": pa.array([["t0"]] * len(edges), pa.list_(pa.string()))}
    cols.update(override)
    return pa.table({k: v for k, v in cols.items() if v is not None})


def text_units() -> pa.Table:
    return pa.table({"id": ["t0"], "text": ["Alice founded Acme in Paris."]})


def project(root: Path, *, ent: pa.Table | None = None, rel: pa.Table | None = None, tu: pa.Table | None = None,
            settings: str | bytes | None = None, write_ent: bool = True, write_rel: bool = True) -> Path:
    out = root / "output"
    out.mkdir(parents=True, exist_ok=True)
    if write_ent:
        pq.write_table(ent if ent is not None else entities(), out / "entities.parquet")
    if write_rel:
        pq.write_table(rel if rel is not None else relationships(), out / "relationships.parquet")
    pq.write_table(tu if tu is not None else text_units(), out / "text_units.parquet")
    if settings is not None:
        path = root / "settings.yaml"
        path.write_bytes(settings if isinstance(settings, bytes) else settings.encode("utf-8"))
    return root


GOOD_SETTINGS = """
completion_models:
  default_completion_model:
    model_provider: openai
    model: gpt-4.1-mini
    api_key: ${GRAPHRAG_API_KEY}
"""

# ------------------------------------------------------------------ cases


def missing_entities(tmp: Path) -> Path:
    return project(tmp, write_ent=False)


def missing_relationships(tmp: Path) -> Path:
    return project(tmp, write_rel=False)


def empty_folder(tmp: Path) -> Path:
    (tmp / "empty").mkdir()
    return tmp / "empty"


def entities_without_title(tmp: Path) -> Path:
    return project(tmp, ent=entities().drop_columns(["title"]))


def relationships_without_target(tmp: Path) -> Path:
    return project(tmp, rel=relationships().drop_columns(["target"]))


def text_units_without_text(tmp: Path) -> Path:
    return project(tmp, tu=pa.table({"id": ["t0"], "body": ["no text column"]}))


def source_as_struct(tmp: Path) -> Path:
    src = pa.array([{"name": s} for s, _, _ in EDGES])
    return project(tmp, rel=relationships(source=src))


def title_as_int(tmp: Path) -> Path:
    edges = [("1", "2", "one links two"), ("2", "3", "two links three")]
    return project(tmp, ent=entities(titles=[1, 2, 3]), rel=relationships(edges))


def text_unit_ids_as_int(tmp: Path) -> Path:
    return project(tmp, rel=relationships(text_unit_ids=[0, 1, 2]))


def none_titles(tmp: Path) -> Path:
    return project(tmp, ent=entities(titles=["Alice", None, "Paris", "Bob"]))


def nan_and_blank_titles(tmp: Path) -> Path:
    # pandas writes a missing value of an object column as null; "   " is a title nobody can use
    return project(tmp, ent=entities(titles=["Alice", "   ", "Paris", None]))


def all_titles_missing(tmp: Path) -> Path:
    return project(tmp, ent=entities(titles=pa.array([None, None, None, None], pa.string())))


def duplicate_titles(tmp: Path) -> Path:
    return project(tmp, ent=entities(titles=["Alice", "Acme", "Paris", "Alice"]))


def duplicate_entity_ids(tmp: Path) -> Path:
    return project(tmp, ent=entities(id=["e0", "e0", "e1", "e1"]))


def duplicate_relationship_ids(tmp: Path) -> Path:
    return project(tmp, rel=relationships(id=["r0", "r0", "r1"]))


def self_loops(tmp: Path) -> Path:
    return project(tmp, rel=relationships(EDGES + [("Paris", "Paris", "Paris is Paris")]))


def edges_to_nowhere(tmp: Path) -> Path:
    return project(tmp, rel=relationships(EDGES + [("Alice", "Atlantis", "Alice sailed to Atlantis")]))


def empty_entities(tmp: Path) -> Path:
    return project(tmp, ent=entities(titles=[]))


def empty_relationships(tmp: Path) -> Path:
    return project(tmp, rel=relationships(edges=[]))


def zero_byte_entities(tmp: Path) -> Path:
    root = project(tmp)
    (root / "output" / "entities.parquet").write_bytes(b"")
    return root


def zero_byte_relationships(tmp: Path) -> Path:
    root = project(tmp)
    (root / "output" / "relationships.parquet").write_bytes(b"")
    return root


def truncated_relationships(tmp: Path) -> Path:
    root = project(tmp)
    path = root / "output" / "relationships.parquet"
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    return root


def csv_named_parquet(tmp: Path) -> Path:
    root = project(tmp)
    (root / "output" / "entities.parquet").write_text("id,title\ne0,Alice\n")
    return root


def non_utf8_settings(tmp: Path) -> Path:
    return project(tmp, settings=GOOD_SETTINGS.encode("utf-8") + "# café\n".encode("latin-1"))


def non_utf8_descriptions_binary(tmp: Path) -> Path:
    desc = pa.array([b"caf\xe9 owner", b"ok", b"\xff\xfe broken", b"fine"], pa.binary())
    return project(tmp, ent=entities(description=desc))


def non_utf8_titles_in_string_column(tmp: Path) -> Path:
    # a writer that skipped validation: string-typed column holding Latin-1 bytes
    titles = pa.array([b"Alice", b"Acme", b"Par\xeds", b"Bob"], pa.binary()).view(pa.string())
    edges = [("Alice", "Acme", "Alice founded Acme"), ("Bob", "Acme", "Bob works at Acme")]
    return project(tmp, ent=entities(titles=titles), rel=relationships(edges))


def huge_descriptions(tmp: Path) -> Path:
    big = "An enormous description. " * 42_000  # ~1 MB
    return project(tmp, ent=entities(description=[big, "short", big, "short"]))


def bad_yaml_settings(tmp: Path) -> Path:
    return project(tmp, settings="completion_models:\n  default: {model: gpt\n   oops: [\n")


def settings_not_a_mapping(tmp: Path) -> Path:
    return project(tmp, settings="- just\n- a list\n")


def unknown_model_type(tmp: Path) -> Path:
    return project(tmp, settings="llm:\n  type: quantum_chat\n  model: gpt-4\n  api_key: ${GRAPHRAG_API_KEY}\n")


def undefined_var_in_model(tmp: Path) -> Path:
    return project(tmp, settings="models:\n  default_chat_model:\n    type: chat\n"
                                 "    model_provider: openai\n    model: ${TOG_TEST_UNDEFINED_MODEL}\n")


def path_is_a_file(tmp: Path) -> Path:
    root = project(tmp)
    return root / "output" / "entities.parquet"


def symlink_loop(tmp: Path) -> Path:
    a, b = tmp / "loop_a", tmp / "loop_b"
    os.symlink(b, a)
    os.symlink(a, b)
    return a


def unreadable_folder(tmp: Path) -> Path:
    root = project(tmp)
    os.chmod(root / "output", 0)
    return root


Expectation = tuple
CASES: dict[str, tuple[Callable[[Path], Path], Expectation]] = {
    "missing_entities": (missing_entities, ("error", NotAProjectError, ["no GraphRAG tables found",
                                                                         "entities.parquet"])),
    "missing_relationships": (missing_relationships, ("error", MissingTableError, ["no relationships table",
                                                                                   "relationships.parquet"])),
    "empty_folder": (empty_folder, ("error", NotAProjectError, ["empty", "no GraphRAG tables found"])),
    "entities_without_title": (entities_without_title, ("error", SchemaError, ["entities.parquet", "'title'",
                                                                               "'name'"])),
    "relationships_without_target": (relationships_without_target, ("error", SchemaError, [
        "relationships.parquet", "no 'target' column"])),
    "text_units_without_text": (text_units_without_text, ("error", SchemaError, ["text_units.parquet",
                                                                                 "no 'text' column"])),
    "source_as_struct": (source_as_struct, ("error", SchemaError, ["relationships.parquet", "'source'",
                                                                   "expected text"])),
    "title_as_int": (title_as_int, ("problem", ["entities.title", "int64", "read as text"])),
    "text_unit_ids_as_int": (text_unit_ids_as_int, ("problem", ["text_unit_ids", "int64", "no source text"])),
    "none_titles": (none_titles, ("problem", ["1 entities with an empty or missing title were skipped"])),
    "nan_and_blank_titles": (nan_and_blank_titles, ("problem", ["2 entities with an empty or missing title"])),
    "all_titles_missing": (all_titles_missing, ("error", EmptyTableError, ["entities.parquet",
                                                                           "no entity with a title"])),
    "duplicate_titles": (duplicate_titles, ("problem", ["1 duplicate entity titles"])),
    "duplicate_entity_ids": (duplicate_entity_ids, ("problem", ["2 duplicate entity ids"])),
    "duplicate_relationship_ids": (duplicate_relationship_ids, ("problem", ["1 duplicate relationship ids"])),
    "self_loops": (self_loops, ("problem", ["1 self-loop relationships"])),
    "edges_to_nowhere": (edges_to_nowhere, ("problem", ["1 relationship endpoints are missing from entities"])),
    "empty_entities": (empty_entities, ("error", EmptyTableError, ["entities.parquet", "has no rows"])),
    "empty_relationships": (empty_relationships, ("error", EmptyTableError, ["relationships.parquet",
                                                                             "has no rows"])),
    "zero_byte_entities": (zero_byte_entities, ("error", UnreadableTableError, ["entities.parquet",
                                                                                "zero-byte"])),
    "zero_byte_relationships": (zero_byte_relationships, ("error", UnreadableTableError, [
        "relationships.parquet", "zero-byte"])),
    "truncated_relationships": (truncated_relationships, ("error", UnreadableTableError, [
        "relationships.parquet", "cannot read parquet"])),
    "csv_named_parquet": (csv_named_parquet, ("error", UnreadableTableError, ["entities.parquet",
                                                                              "cannot read parquet"])),
    "non_utf8_settings": (non_utf8_settings, ("problem", ["settings.yaml", "is not UTF-8"])),
    "non_utf8_descriptions_binary": (non_utf8_descriptions_binary, ("problem", [
        "entities.description", "not valid UTF-8", "2 values"])),
    "non_utf8_titles_in_string_column": (non_utf8_titles_in_string_column, ("problem", [
        "entities.title", "not valid UTF-8", "1 values"])),
    "huge_descriptions": (huge_descriptions, ("problem", ["2 entity descriptions are longer than"])),
    "bad_yaml_settings": (bad_yaml_settings, ("problem", ["settings.yaml", "not valid YAML", "line"])),
    "settings_not_a_mapping": (settings_not_a_mapping, ("problem", ["settings.yaml", "not a mapping"])),
    "unknown_model_type": (unknown_model_type, ("problem", ["llm.type", "quantum_chat", "not a model type"])),
    "undefined_var_in_model": (undefined_var_in_model, ("problem", ["models.default_chat_model.model",
                                                                    "${TOG_TEST_UNDEFINED_MODEL}",
                                                                    "not defined"])),
    "path_is_a_file": (path_is_a_file, ("error", NotAProjectError, ["entities.parquet", "is a file"])),
    "symlink_loop": (symlink_loop, ("error", NotAProjectError, ["loop_a", "symlink loop"])),
    "unreadable_folder": (unreadable_folder, ("error", NotAProjectError, ["permission denied"])),
}
