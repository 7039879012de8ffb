"""A second search of the same question, read by the confidence: would a search that reads the relations another way
put the same answer first?

The LLM-free search scores relations with BM25, which reads the words a relation shares with the question. Before
the answer is written, the question is searched once more with its relations scored by the packaged e5 (`query:` /
`passage:`) instead, from the same topic entities, with the same reading and number-of-hops trials, and that search's
candidates are ranked by the same answer ranker. Its probability for the product's first answer is one input more
to the confidence (`ranking.Model.agree`, fitted by bench/agreement.py on rankings that never saw the scored set).
The answer list itself never changes: only how sure the first answer is said to be.

Measured over the nine dev sets, each left out, and the eleven sets outside the fit (docs/experiment-log.md, "The
second search, built, and blind9 read"): mean AUROC 0.804 -> 0.819 and 0.725 -> 0.754; searches that keep more or
fewer chains (width 2 or 4) added nothing. Its entity stage stays BM25: with e5 there too, every one of those 525
questions was searched byte for byte the same, at four times the embedding cost (entity texts are whole
descriptions).

Made only where that confidence was fitted: a GraphRAG (free-text) graph, no LLM, BM25 on both stages, the answer
ranker and the packaged e5 at hand, a search nobody steered (no choice at a step, no Stop, no answer forced in), and
none that hit an error (`why_not` names the reason). The cost is one more search: about 0.1 s
with the relation texts' embeddings cached on disk (`warm`), a few seconds on a project's first questions.
"""
from __future__ import annotations

import logging
import time
from dataclasses import replace
from typing import Any

from tog_core.policy import depths, ranking
from tog_core.policy.cheap import CheapPolicy
from tog_core.tog.engine import ToGEngine
from tog_core.tog.state import EngineConfig, SecondSearch, State

log = logging.getLogger(__name__)

PRUNER = "embedding"  # the second search's relation scorer
FITTED_WITH = "bm25"  # the product's scorer the agreement confidence was fitted for; the second search's entity scorer
FAILED = "second_search_failed"  # the named fallback when the second search could not be made
STORE_QUIET_S = 60.0  # after a failed read of the graph's store, no second search waits on it for this long


def why_not(engine: ToGEngine, state: State) -> str:
    """Why no second search is made for this state ("" when one is)."""
    pol, graph = engine.policy, engine.graph
    if not getattr(pol, "second_search", False) or not getattr(pol, "answer_model", False):
        return "off"
    if engine.llm is not None:
        return "an LLM takes part"
    if graph.has_relation_labels:
        return "a typed graph"
    if {getattr(engine.relation_scorer, "name", ""), getattr(engine.entity_scorer, "name", "")} != {FITTED_WITH}:
        return f"pruned by another scorer than {FITTED_WITH}"
    model = ranking.shipped_model(False)
    if model is None or model.agree is None:
        return "no fitted agreement confidence"
    if state.forced or not any(p.hops for p in state.paths):
        return "no answer of the search's own"
    # a search a person steered (a choice at a step, Stop): the second search would walk what the person ruled out,
    # and the confidence was fitted on searches nobody steered
    if state.stop_reason == "user" or any(step.overrides for step in state.steps):
        return "a person steered the search"
    if state.error or state.stop_reason == "error":  # a store gone away would make it wait for its time-out
        return "the search hit an error"
    failed = getattr(graph, "last_failure", None)  # the PostgreSQL store's last failed read (graphrag/postgres.py)
    if failed is not None and time.monotonic() - failed < STORE_QUIET_S:
        return "the graph's store failed a moment ago"
    if ranking.ranking_embedder() is None:
        return "the packaged e5 is not installed"
    return ""


async def second_search(engine: ToGEngine, state: State) -> State:
    """The engine's `before_answer` hook (set by compose.build_engine): `state` with its second search (State.second)
    where one applies (`why_not`) and none was made yet. A search that fails (a store gone away) is recorded as the
    fallback FAILED, and the confidence reads without it."""
    if state.second is not None or why_not(engine, state):
        return state
    t0 = engine.clock()
    # a policy of its own: the answer ranking's cache (CheapPolicy._ranked) knows chains, not the scores they carry
    other = ToGEngine(engine.graph, embedder=ranking.ranking_embedder(),
                      policy=replace(engine.policy, _ranked={}, _evidence=()),  # type: ignore[type-var]
                      config=replace(engine.config, relation_pruner=PRUNER, entity_pruner=FITTED_WITH),
                      prefilter=engine.prefilter, clock=engine.clock, project=engine.project)
    try:
        st = await depths.start(other, state.question, state.seeds, reading=state.reading,
                                hops=state.hops if state.hops_firm else None)
        while not st.done:
            st = other.apply(st, await other.propose(st))
        ranked = other.answer_candidates(st)
    except Exception as err:  # noqa: BLE001  — a check of the answer: whatever breaks it, the answer stands without it
        log.warning("the second search failed: %s", err)
        usage = {"fallback": FAILED, "stage": "answer", "detail": f"{type(err).__name__}: {str(err)[:200]}"}
        return state.with_(extra_usage=state.extra_usage + (usage,))
    probs = tuple((c.entity, float(c.score if c.score is not None else c.confidence)) for c in ranked)
    return state.with_(second=SecondSearch(pruner=PRUNER, probs=probs, wall_s=engine.clock() - t0))


WARM_QUESTION = "What is it?"  # the warm scores no question: any will do, it only fills the embedding cache
WARM_LIMIT = 5_000  # relation texts: GraphRAG's are sentences, e5 reads about 8 a second on two cores
WARM_PER_ENTITY = 200  # of a hub's relation groups


async def warm(graph: Any, *, limit: int = WARM_LIMIT) -> int:
    """Embed into the packaged e5's on-disk cache what the second search's relation stage reads at each entity: its
    relation groups with their neighbour evidence (a deeper hop sees the same texts, less the edge it came by). The
    project's next questions then wait about 0.2 s for their second search instead of seconds. The app runs it in the
    background when a project is opened (explorer/projects.py); a graph with more than `limit` relation groups warms
    its first entities only, a hub its first WARM_PER_ENTITY groups by the pre-filter. Returns how many texts were
    embedded or found cached; 0 where no second search would be made (a typed graph, no e5)."""
    e5 = ranking.ranking_embedder()
    if e5 is None or graph.has_relation_labels:
        return 0
    # every relation group of an entity, up to WARM_PER_ENTITY of a hub's (chosen by the pre-filter)
    cfg = replace(EngineConfig(relation_pruner=PRUNER, entity_pruner=FITTED_WITH).without(("degree_filter",)),
                  max_candidates=WARM_PER_ENTITY)
    engine = ToGEngine(graph, embedder=e5, policy=CheapPolicy(), config=cfg)
    done = 0
    for i in range(graph.n_entities):
        if done >= limit:
            break
        # one topic entity a search: the relation stage leaves out what leads to another topic entity
        state = engine.start(WARM_QUESTION, [graph.entity(i).id])
        if state.paths:
            done += len((await engine.propose(state)).payload)  # scored, so embedded, with their evidence
    return done
