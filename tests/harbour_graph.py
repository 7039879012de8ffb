"""The harbour graph of tests/test_pathcover.py, also read by tests/test_path_beam.py: Orla, a hub of twenty
sailors, and the lantern keeper two hops on through a relation that names nothing of the `QUESTION`; the
`graph` itself, the paths read whole from Orla (`walked`) and the LLM-free search on it (`searched`)."""
from __future__ import annotations

import asyncio

from builders import graph_tables
from tog_core.graphrag.graph import KnowledgeGraph
from tog_core.policy import pathcover
from tog_core.policy.cheap import CheapPolicy
from tog_core.policy.retrieval import query_words
from tog_core.tog.engine import ToGEngine
from tog_core.tog.state import EngineConfig

QUESTION = "Who keeps the lantern by the harbour for a sailor Orla knows?"
# Orla is a hub: twenty neighbours whose relations share the question's "sailor" and "knows"; the sailor the question
# means is reached by a relation that names none of its words, and the lantern keeper one hop on
EDGES = ([("Orla", f"Sailor {i}", f"Orla knows the sailor {i}") for i in range(20)]
         + [("Orla", "Bram", "Orla and Bram grew up together"),
            ("Bram", "Wenna", "Wenna keeps the lantern by the harbour for Bram the sailor"),
            ("Bram", "Quay", "Bram walked along the quay"),
            ("Sailor 3", "Inn", "Sailor 3 drank at the inn by the harbour")])


def graph() -> KnowledgeGraph:
    _, ent, rel, tu = graph_tables(EDGES)
    return KnowledgeGraph.from_tables(ent, rel, tu)


def walked(g: KnowledgeGraph, depth: int = 3) -> pathcover.Walk:
    query = query_words(QUESTION, ["Orla"], "en")
    return pathcover.walk(g, [g.find_title("Orla")], depth, query, "en")


def searched(pol: CheapPolicy, pruner: str = "bm25"):
    """The search on graph() with `pol`, width 1, depth 2, both stages by `pruner`: (engine, its final state)."""
    eng = ToGEngine(graph(), config=EngineConfig(width=1, depth=2, relation_pruner=pruner, entity_pruner=pruner),
                    policy=pol)
    return eng, asyncio.run(eng.run(QUESTION, seeds=["Orla"]))
