"""Write small GraphRAG projects by hand for tests (3.x or legacy layout)."""
from __future__ import annotations

from pathlib import Path
from collections.abc import Iterable, Sequence

import pyarrow as pa
import pyarrow.parquet as pq

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
GRAPHRAG_SAMPLES = SHARED_DATA / "graphrag"
METAQA = SHARED_DATA / "kgqa" / "metaqa"

# A small graph to check by eye: Acme <-founded- Alice -born in-> Paris; Bob works at Acme, born in Lyon;
# Acme located in Berlin; a friendship cycle Alice -> Carol -> Dave -> Alice.
ACME_EDGES = [
    ("Alice", "Acme", "Alice founded Acme"),
    ("Alice", "Paris", "Alice was born in Paris"),
    ("Bob", "Acme", "Bob works at Acme"),
    ("Bob", "Lyon", "Bob was born in Lyon"),
    ("Acme", "Berlin", "Acme is located in Berlin"),
    ("Alice", "Carol", "Alice is a friend of Carol"),
    ("Carol", "Dave", "Carol is a friend of Dave"),
    ("Dave", "Alice", "Dave is a friend of Alice"),
    ("Berlin", "Germany", "Berlin is the capital of Germany"),
]


def write_project(root: Path, entities: Sequence[tuple[str, str]], edges: Iterable[tuple[str, str, str]], *,
                  text_units: dict[str, str] | None = None, edge_units: dict[int, list[str]] | None = None,
                  legacy: bool = False, name_col: str = "title", settings: str | None = None,
                  relation_labels: Sequence[str] | None = None) -> Path:
    """entities: (title, description); edges: (source title, target title, description)."""
    out = root / "output"
    out.mkdir(parents=True, exist_ok=True)
    edges = list(edges)
    prefix = "create_final_" if legacy else ""
    ent = pa.table({
        "id": [f"e{i}" for i in range(len(entities))],
        name_col: [t for t, _ in entities],
        "type": ["THING"] * len(entities),
        "description": [d for _, d in entities],
    })
    edge_units = edge_units or {}
    cols = {
        "id": [f"r{i}" for i in range(len(edges))],
        "source": [s for s, _, _ in edges],
        "target": [t for _, t, _ in edges],
        "description": [d for _, _, d in edges],
        "weight": [1.0] * len(edges),
        "text_unit_ids": pa.array([edge_units.get(i, []) for i in range(len(edges))], pa.list_(pa.string())),
    }
    if relation_labels is not None:
        cols["relation"] = list(relation_labels)
    pq.write_table(ent, out / f"{prefix}entities.parquet")
    pq.write_table(pa.table(cols), out / f"{prefix}relationships.parquet")
    if text_units:
        pq.write_table(pa.table({"id": list(text_units), "text": list(text_units.values())}),
                       out / f"{prefix}text_units.parquet")
    if settings is not None:
        (root / "settings.yaml").write_text(settings)
    return root


def graph_tables(edges, extra_entities=()) -> tuple[list[str], pa.Table, pa.Table, pa.Table]:
    """(names, entities, relationships, text units) of a hand-made graph: one text unit per edge."""
    names = list(dict.fromkeys([s for s, _, _ in edges] + [t for _, t, _ in edges] + list(extra_entities)))
    ent = pa.table({"id": [f"id-{n}" for n in names], "title": names,
                    "description": [f"{n} is an entity" for n in names]})
    rel = pa.table({"id": [f"r{k}" for k in range(len(edges))], "source": [s for s, _, _ in edges],
                    "target": [t for _, t, _ in edges], "description": [d for _, _, d in edges],
                    "text_unit_ids": pa.array([[f"t{k}"] for k in range(len(edges))], pa.list_(pa.string()))})
    tu = pa.table({"id": [f"t{k}" for k in range(len(edges))], "text": [f"Source: {d}." for _, _, d in edges]})
    return names, ent, rel, tu



def question_bands(question: str, topics: Sequence[str], hops: int) -> list[str]:
    """The per-hop focus the search uses for `hops` hops (QuestionReading.bands), read by the rule reader."""
    from tog_core.reading.readers import read

    return read(question, list(topics)).bands(hops)
