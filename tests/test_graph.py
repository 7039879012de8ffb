"""KnowledgeGraph: CSR neighbours equal a brute-force scan, lookups, evidence, immutability."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from builders import write_project
from tog_core.graphrag.graph import KnowledgeGraph


def _graph(n: int, edges: list[tuple[int, int]]) -> KnowledgeGraph:
    ent = pa.table({"id": [f"id{i}" for i in range(n)], "title": [f"T{i}" for i in range(n)]})
    rel = pa.table({"id": [f"r{k}" for k in range(len(edges))],
                    "source": [f"T{s}" for s, _ in edges], "target": [f"T{t}" for _, t in edges],
                    "description": [f"T{s} to T{t}" for s, t in edges]})
    return KnowledgeGraph.from_tables(ent, rel)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 25).flatmap(lambda n: st.tuples(
    st.just(n), st.lists(st.tuples(st.integers(0, n + 2), st.integers(0, n + 2)), min_size=1, max_size=80))))
def test_csr_neighbours_equal_brute_force(case):
    n, edges = case  # endpoints >= n are missing from entities and become placeholders
    g = _graph(n, edges)
    for i in range(g.n_entities):
        title = g.title(i)
        expect = sorted(
            [(k, f"T{t}", True) for k, (s, t) in enumerate(edges) if f"T{s}" == title]
            + [(k, f"T{s}", False) for k, (s, t) in enumerate(edges) if f"T{t}" == title and s != t])
        rels, others, out = g.neighbors(i)
        got = sorted((int(r), g.title(o), bool(d)) for r, o, d in zip(rels, others, out))
        assert got == expect
    assert g.counts["placeholder_entities"] == len({x for e in edges for x in e if x >= n})


def test_reversed_and_parallel_duplicates_are_kept_and_marked():
    g = _graph(3, [(0, 1), (1, 0), (0, 1), (1, 2)])
    assert g.n_relationships == 4
    assert g.relationship(1).reverse_of == 0
    assert g.relationship(0).reverse_of is None and g.relationship(3).reverse_of is None
    assert g.counts["parallel_duplicates"] == 1


def test_title_lookup_exact_then_case_insensitive():
    ent = pa.table({"id": ["1", "2", "3"], "title": ["Paris", "PARIS", "Lyon"]})
    rel = pa.table({"source": ["Paris"], "target": ["Lyon"]})
    g = KnowledgeGraph.from_tables(ent, rel)
    assert g.find("PARIS") == 1 and g.find("Paris") == 0 and g.find("lyon") == 2 and g.find("3") == 2
    assert g.find("Marseille") is None


def test_evidence_follows_text_unit_ids(tmp_path):
    root = write_project(tmp_path / "p", [("A", ""), ("B", ""), ("C", "")],
                         [("A", "B", "A met B"), ("B", "C", "B left C")],
                         text_units={"t1": "A met B in spring.", "t2": "Later B left C."},
                         edge_units={0: ["t1"], 1: ["t2", "t-missing"]})
    g = KnowledgeGraph.load(root)
    assert [t.text for t in g.evidence(0)] == ["A met B in spring."]
    assert [t.id for t in g.evidence(1)] == ["t2"]
    assert any("point to no text unit" in p for p in g.problems)


def test_graph_is_immutable():
    g = _graph(2, [(0, 1)])
    with pytest.raises(AttributeError):
        g.n_entities = 5
    rels, _, _ = g.neighbors(0)
    with pytest.raises(ValueError):
        rels[0] = 3


def test_relation_column_is_the_label(tmp_path):
    root = write_project(tmp_path / "p", [("Film", ""), ("Person", "")],
                         [("Film", "Person", "Film was directed by Person")],
                         relation_labels=["directed_by"])
    g = KnowledgeGraph.load(root)
    assert g.labels(np.array([0])) == ["directed_by"]
    assert g.relationship(0).description == "Film was directed by Person"


def test_relationship_ids_in_bulk_match_single_lookups():
    g = _graph(4, [(0, 1), (1, 2), (2, 3)])
    assert g.relationship_ids([2, 0]) == [g.relationship(2).id, g.relationship(0).id] == ["r2", "r0"]
    assert g.find_relationship("r1") == 1


def test_entity_descriptions_in_bulk_match_single_lookups():
    ent = pa.table({"id": ["a", "b", "c"], "title": ["A", "B", "C"], "description": ["An inn.", None, "A ship."]})
    g = KnowledgeGraph.from_tables(ent, pa.table({"id": ["r0"], "source": ["A"], "target": ["B"],
                                                   "description": ["A to B"]}))
    assert g.entity_descriptions([2, 1, 0, 2]) == [g.entity(i).description for i in (2, 1, 0, 2)] == [
        "A ship.", "", "An inn.", "A ship."]
    assert g.entity_descriptions([]) == []
