"""Hand-made data for tests: small GraphRAG projects written to disk (3.x or legacy layout), the tables of a
hand-made graph, in-memory graphs (the Acme graph `make_graph`, typed movie graphs `typed_graph`, PathQuestion-like
`kin_graph`, GraphRAG-like free-text `free_graph`, the lookahead's `language_graph`), and a two-depth Trace
(`make_trace`, its entity candidates by `ent`) for the pictures and exports."""
from __future__ import annotations

from pathlib import Path
from collections.abc import Iterable, Sequence

import pyarrow as pa
import pyarrow.parquet as pq

from tog_core.graphrag.graph import KnowledgeGraph
from tog_core.tog.trace import Candidate, Link, Seed, Step, Trace

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


# ------------------------------------------------------------------ graphs in memory

def make_graph(edges=ACME_EDGES, extra_entities=()) -> KnowledgeGraph:
    """The Acme graph (ACME_EDGES), or `edges`: one text unit per edge (graph_tables)."""
    _, ent, rel, tu = graph_tables(edges, extra_entities)
    return KnowledgeGraph.from_tables(ent, rel, tu)


TEMPLATES = {
    "written_by": "{s} was written by {t}",
    "directed_by": "{s} was directed by {t}",
    "starred_actors": "{s} stars {t} (actor)",
    "has_genre": "{s} has the genre {t}",
    "in_language": "{s} is in the language {t}",
    "release_year": "{s} was released in {t}",
}
TYPES = {"written_by": "person", "directed_by": "person", "starred_actors": "person", "has_genre": "genre",
         "in_language": "language", "release_year": "year"}


def typed_graph(triples: list[tuple[str, str, str]]) -> KnowledgeGraph:
    """(movie, relation, object) triples -> a graph with a `relation` column and entity types."""
    kinds: dict[str, str] = {}
    for s, r, t in triples:
        kinds.setdefault(s, "movie")
        kinds.setdefault(t, TYPES[r])
    names = list(kinds)
    ent = pa.table({"id": [f"id-{n}" for n in names], "title": names, "type": [kinds[n] for n in names],
                    "description": [""] * len(names)})
    rel = pa.table({"id": [f"r{k}" for k in range(len(triples))], "source": [s for s, _, _ in triples],
                    "target": [t for _, _, t in triples], "relation": [r for _, r, _ in triples],
                    "description": [TEMPLATES[r].format(s=s, t=t) for s, r, t in triples],
                    "text_unit_ids": pa.array([[] for _ in triples], pa.list_(pa.string()))})
    return KnowledgeGraph.from_tables(ent, rel, None)


def kin_graph(triples: list[tuple[str, str, str]]) -> KnowledgeGraph:
    """A PathQuestion-like graph: (person, relation, object) with the relation as its label, no types."""
    names = list(dict.fromkeys([s for s, _, _ in triples] + [t for _, _, t in triples]))
    ent = pa.table({"id": [f"id-{n}" for n in names], "title": names, "description": [""] * len(names)})
    rel = pa.table({"id": [f"r{k}" for k in range(len(triples))], "source": [s for s, _, _ in triples],
                    "target": [t for _, _, t in triples], "relation": [r for _, r, _ in triples],
                    "description": [f"{s} -- {r} --> {t}" for s, r, t in triples],
                    "text_unit_ids": pa.array([[] for _ in triples], pa.list_(pa.string()))})
    return KnowledgeGraph.from_tables(ent, rel, None)


def language_graph() -> KnowledgeGraph:
    # the seed's actor starred in six films; only the last listed has a language edge
    films = ["Aster", "Birch", "Cedar", "Dune", "Elm", "Fjord"]
    triples = [("Seedfilm", "starred_actors", "Kim Novak")]
    triples += [(f, "starred_actors", "Kim Novak") for f in films]
    triples += [(f, "has_genre", "Drama") for f in films[:-1]]
    triples += [("Fjord", "in_language", "French")]
    return typed_graph(triples)


def free_graph(edges: list[tuple[str, str, str]], about: dict[str, str] | None = None) -> KnowledgeGraph:
    """A GraphRAG-like graph: (source, target, free-text description) edges, one group per edge; `about` gives
    entity descriptions."""
    names = list(dict.fromkeys([s for s, _, _ in edges] + [t for _, t, _ in edges]))
    ent = pa.table({"id": [f"id-{n}" for n in names], "title": names,
                    "description": [(about or {}).get(n, "") for n in names]})
    rel = pa.table({"id": [f"r{k}" for k in range(len(edges))], "source": [s for s, _, _ in edges],
                    "target": [t for _, t, _ in edges], "description": [d for _, _, d in edges],
                    "text_unit_ids": pa.array([[] for _ in edges], pa.list_(pa.string()))})
    return KnowledgeGraph.from_tables(ent, rel, None)


# ------------------------------------------------------------------ a trace

def ent(step_depth: int, src: tuple[str, str], dst: tuple[str, str], rel: str, score: float, kept: bool,
        auto_kept: bool | None = None, reason: str = "because") -> Candidate:
    return Candidate(id=f"ent:{step_depth}:{src[0]}:{dst[0]}", label=dst[1], kind="entity", score=score,
                     reason=reason, kept=kept, auto_kept=kept if auto_kept is None else auto_kept,
                     source_entity=src[1], source_id=src[0], target=dst[1], target_id=dst[0], relation=rel,
                     relationship_ids=[f"r-{dst[0]}"])


def make_trace(titles: dict[str, str] | None = None, reason: str = "because") -> dict:
    """A (seed) → B, C kept, D pruned (depth 1); B → E kept, F pruned; C → G kept by a person (depth 2)."""
    t = {k: k for k in "ABCDEFG"} | (titles or {})
    n = {k: (k, t[k]) for k in t}
    d1 = [ent(1, n["A"], n["B"], f"{t['A']} founded {t['B']}", 0.9, True, reason=reason),
          ent(1, n["A"], n["C"], f"{t['A']} met {t['C']}", 0.7, True, reason=reason),
          ent(1, n["A"], n["D"], f"{t['A']} saw {t['D']}", 0.1, False, reason=reason)]
    d2 = [ent(2, n["B"], n["E"], f"{t['B']} lives in {t['E']}", 0.8, True, reason=reason),
          ent(2, n["B"], n["F"], f"{t['B']} near {t['F']}", 0.2, False, reason=reason),
          ent(2, n["C"], n["G"], f"{t['C']} owns {t['G']}", 0.3, True, auto_kept=False, reason=reason)]
    rel1 = [Candidate(id="rel:A:founded", label="founded", score=0.9, kept=True, auto_kept=True,
                      source_entity=t["A"], source_id="A"),
            Candidate(id="rel:A:ate", label="ate", score=0.0, source_entity=t["A"], source_id="A")]
    link = lambda c: Link(source=c.source_entity, source_id=c.source_id, relation=c.relation or "",  # noqa: E731
                          target=c.target or "", target_id=c.target_id or "", relationship_id=c.relationship_ids[0],
                          text_unit_ids=["tu-1", "tu-2"], score=c.score)
    trace = Trace(question="Where does the founder live?", project="demo", config={"width": 2, "depth": 2},
                  seeds=[Seed(id="A", title=t["A"], how="fuzzy")],
                  steps=[Step(depth=1, stage="relations", candidates=rel1),
                         Step(depth=1, stage="entities", candidates=d1),
                         Step(depth=1, stage="evaluate", verdict={"sufficient": False, "reason": "need more"}),
                         Step(depth=2, stage="entities", candidates=d2,
                              overrides=[{"id": d2[2].id, "label": d2[2].label, "auto_kept": False, "kept": True}])],
                  chains=[[link(d1[0]), link(d2[0])], [link(d1[1]), link(d2[2])]])
    return trace.to_dict()
