"""Running the LLM-free search on hand-made graphs and building its states by hand, for the tests of the search,
the policy and the ranking: `run` (a search at the question's known number of hops) and `chains` (its paths as
titles), the engines on the Acme graph (`bm25_engine`, and `engine` with its question `Q`), the ranking's
settings (`CHEAP`, a model reading `only` one feature, a state with a deeper trial `state_with_trials` on `CHAIN`)
and `_ChainReader`, a stand-in for e5 with set similarities."""
from __future__ import annotations

import asyncio

import numpy as np

from builders import make_graph
from tog_core.policy import ranking
from tog_core.policy.cheap import CheapPolicy
from tog_core.tog.engine import ToGEngine
from tog_core.tog.state import BeamPath, EngineConfig, Hop, Search, State

# the Acme graph (builders.make_graph) and its two-hop question
Q = "Where was the founder of Acme born?"


def engine(**kw) -> ToGEngine:
    cfg = EngineConfig(width=2, depth=3, relation_pruner="bm25", entity_pruner="bm25", **kw)
    return ToGEngine(make_graph(), config=cfg, policy=CheapPolicy())


def bm25_engine(*, width: int, depth: int) -> ToGEngine:
    """The LLM-free engine on make_graph's graph, both stages by BM25 (the steps a person ticks in Explore)."""
    return ToGEngine(make_graph(), config=EngineConfig(width=width, depth=depth, relation_pruner="bm25",
                                                       entity_pruner="bm25"), policy=CheapPolicy())


def run(graph, question, seeds, policy=None, **cfg):
    """A search whose depth is the question's known number of hops (exact_depth), unless told otherwise."""
    cfg = {"relation_pruner": "bm25", "entity_pruner": "bm25", "exact_depth": True, **cfg}
    eng = ToGEngine(graph, config=EngineConfig(**cfg), policy=policy or CheapPolicy())
    return eng, asyncio.run(eng.run(question, seeds=seeds))


def chains(eng, state):
    return [[eng.graph.title(p.start)] + [eng.graph.title(h.dst) for h in p.hops] for p in state.paths]


CHEAP = EngineConfig(relation_pruner="bm25", entity_pruner="bm25", depth=3)


def only(feature: str, weight: float = 1.0, low: float = 0.5) -> ranking.Model:
    """A model that reads one feature."""
    w = np.array([weight if f == feature else 0.0 for f in ranking.FEATURES])
    n = len(ranking.FEATURES)
    return ranking.Model(features=ranking.FEATURES, weights=w, mean=np.zeros(n), scale=np.ones(n), low=low)


# Ann -> Bob -> Carl: the main search (one hop) ends at Bob; a deeper trial reaches Carl
CHAIN = [("Ann", "Bob", "Ann met Bob at the fair"), ("Bob", "Carl", "Bob sold the mill to Carl")]


def state_with_trials(eng: ToGEngine, question: str = "Who bought the mill?",
                      chain: list[tuple[str, str, str]] = CHAIN) -> State:
    """A one-hop search to the chain's middle entity and a two-hop trial on to its end, from its first entity."""
    g = eng.graph
    ann, bob, carl = (g.find_title(t) for t in (chain[0][0], chain[0][1], chain[1][1]))
    one = BeamPath(start=ann, hops=(Hop(ridx=0, src=ann, dst=bob, score=1.0, label=chain[0][2]),), score=1.0)
    two = BeamPath(start=ann, hops=(*one.hops, Hop(ridx=1, src=bob, dst=carl, score=0.5, label=chain[1][2])),
                   score=0.5)
    st = eng.start(question, [chain[0][0]])  # the question is read here, once
    return st.with_(paths=(one,), depth=1, stage="done", hops=1, other_searches=(Search(depth=2, paths=(two,)),))


class _ChainReader:
    """A stand-in for e5 whose similarity to any question is set per entity named in the passage (0 for others)."""

    def __init__(self, sims: dict[str, float]) -> None:
        self.sims = sims

    def embed(self, texts, kind="passage"):
        import numpy as np

        rows = []
        for t in texts:
            s = 1.0 if kind == "query" else next((v for k, v in self.sims.items() if k in t), 0.0)
            rows.append([s, (1 - s * s) ** 0.5])
        return np.asarray(rows)
