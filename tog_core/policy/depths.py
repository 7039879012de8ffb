"""How many hops: a loop around the engine, not a decision inside it.

The LLM-free search on a free-text (GraphRAG) graph does not read the number of hops from the wording; it tries
them. `settle` starts one search per number of hops up to the maximum (each exactly that deep, unrecorded, with
no LLM), keeps the fewest hops whose best chain's relations match the most question words
(CheapPolicy.trial_coverage), and hands the engine that number as an input (State.hops), with every trial's chains
(State.other_searches: the answer is ranked over all of them, policy/ranking.py). A person may choose the
number instead (`chosen`). What was tried is the runner's record (State.plan_record, written to the trace's
`plan`); the engine reads only the number.

Before that, where a provider's model is configured outside the paper's run, `read` has the LLM read the question
once (reading/llm.py: hops, the answer's type, the relation phrases; the rule reading is its named fallback).

`run` is the one function the CLI's query, the benchmark and the app run a question through.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any

from tog_core.policy.cheap import CheapPolicy
from tog_core.reading import QuestionReading
from tog_core.reading.llm import read_with_llm
from tog_core.scoring.scorers import reads_question
from tog_core.tog.engine import ToGEngine
from tog_core.tog.policy import FaithfulPolicy, llm_judges
from tog_core.tog.state import BeamPath, Callbacks, Search, State
from tog_core.tog.trace import DepthPlan, Seed


def _n(k: int) -> str:
    return f"{k} hop{'s' if k > 1 else ''}"


def check_hops(engine: ToGEngine, hops: int) -> None:
    """ValueError when a person may not set the number of hops: the paper's LLM judge decides how deep to go, or
    the number is past the maximum depth."""
    if isinstance(engine.policy, FaithfulPolicy) or llm_judges(engine):
        raise ValueError("with an LLM judging, the LLM decides how many hops to take; choose the depth instead")
    if not 1 <= hops <= engine.config.depth:
        raise ValueError(f"the number of hops must be between 1 and the maximum depth ({engine.config.depth})")


def chosen(state: State, hops: int, tried: Iterable[dict[str, Any]] = (), *, by: str = "the person") -> State:
    """The state with the number of hops a person chose (or `by` whoever else knows it: "the data set" for
    `bench kgqa --reader gold`): the search runs exactly that deep; `tried`, an earlier run's trials, stay in the
    record to compare."""
    plan = DepthPlan(depth=hops, reason=f"{_n(hops)}: chosen by {by}", trials=tuple(dict(t) for t in tried),
                     chosen=True)
    return state.with_(hops=hops, hops_firm=True, plan_record=plan)


def tries(engine: ToGEngine, state: State) -> bool:
    """Whether the numbers of hops are tried for this search: CheapPolicy.try_depths on a GraphRAG graph (a typed
    graph's relation texts rarely repeat the question's words) with cheap scorers on both stages, no LLM judge, a
    maximum of at least 2 that is not the question's known depth, a topic entity, and no number given yet."""
    pol, cfg = engine.policy, engine.config
    cheap = reads_question(engine.relation_scorer, engine.entity_scorer)
    return (isinstance(pol, CheapPolicy) and pol.try_depths and not cfg.exact_depth and cfg.depth >= 2
            and not engine.graph.has_relation_labels and cheap and not llm_judges(engine) and bool(state.paths)
            and not state.done and state.hops is None)


async def trial(engine: ToGEngine, question: str, seeds: Iterable[Seed], depth: int,
                reading: QuestionReading | None = None) -> tuple[State, list[BeamPath]]:
    """One automatic search from the topic entities with exactly `depth` hops, unrecorded and without an LLM, on
    the engine's graph, scorers and policy, reading the question as `reading` says. Returns its final state and its
    chains, best first."""
    one = ToGEngine(engine.graph, embedder=engine.embedder, policy=engine.policy,
                    config=replace(engine.config, depth=depth, exact_depth=True),
                    relation_scorer=engine.relation_scorer, entity_scorer=engine.entity_scorer,
                    prefilter=engine.prefilter, clock=engine.clock, project=engine.project)
    st = one.start(question, seeds, reading=reading)
    while not st.done:
        st = one.apply(st, await one.propose(st))
    return st, one.best_paths(st)


async def settle(engine: ToGEngine, state: State, on_stage: Callable[[int, str], None] | None = None) -> State:
    """The state with the number of hops to search, where they are tried (`tries`; `on_stage(1, "planning")` is
    told then): one search per number up to the maximum, keeping the fewest hops whose best chain's relations
    match the most question words. Else the state as it is."""
    if not tries(engine, state):
        return state
    if on_stage:
        on_stage(state.depth, "planning")
    pol: CheapPolicy = engine.policy  # type: ignore[assignment]  # tries() checked it
    trials: list[dict[str, Any]] = []
    searches: list[Search] = []
    for k in range(1, engine.config.depth + 1):
        st, best = await trial(engine, state.question, state.seeds, k, state.reading)
        searches.append(Search(depth=k, paths=tuple(best)))
        got, aside = pol.trial_coverage(engine, st, best[0]) if best else (Counter(), [])
        trials.append({"depth": k, "matched": sorted(+got),
                       "end": engine.graph.title(best[0].end) if best else None, "set_aside": aside})
    most = max(len(t["matched"]) for t in trials)
    k = next(t["depth"] for t in trials if len(t["matched"]) == most)
    said = "; ".join(f"{_n(t['depth'])}: {len(t['matched'])}" for t in trials)
    reason = (f"{_n(k)}: the fewest whose best chain matches the most question words "
              f"({', '.join(trials[k - 1]['matched']) or 'none'}); tried {said}")
    return state.with_(hops=k, plan_record=DepthPlan(depth=k, reason=reason, trials=tuple(trials)),
                       other_searches=tuple(searches))


def reads_with_llm(engine: ToGEngine) -> bool:
    """Whether the question is read by the LLM when the search starts: the config asks for it (compose sets
    `reader="llm"` for a provider's model outside the paper's run, and in the reading mode), there is an LLM, and the
    run is not the paper's (FaithfulPolicy, or every departure off: the paper reads no question apart)."""
    cfg = engine.config
    return (cfg.reader == "llm" and engine.llm is not None and not isinstance(engine.policy, FaithfulPolicy)
            and bool(cfg.departures()))


def was_read(state: State) -> bool:
    """Whether the LLM was asked to read this state's question (its call is among State.extra_usage, stage
    "reading"), whatever came of it: it is asked once per question, also when a run saved after linking goes on."""
    return any(u.get("stage") == "reading" for u in state.extra_usage)


async def read(engine: ToGEngine, state: State, on_stage: Callable[[int, str], None] | None = None) -> State:
    """The state with the question read by the LLM (one call, reading/llm.py; `on_stage(1, "reading")` is told
    first), its usage among the calls outside the stages (State.extra_usage: the trace's stats, and its
    `other_fallbacks` when the rule reading stood in). The state as it is where the LLM does not read
    (`reads_with_llm`), where it was asked already (`was_read`), where the reading is not the rules' (a data set's,
    or one a person corrected) or when there is nothing to search.

    The reading's hops stay the reading's (CheapPolicy's planned depth; on a GraphRAG graph the numbers of hops are
    still tried), not State.hops: with the rules' hop count (right on 82% of MetaQA) as State.hops chain Hits@1 fell
    0.844 -> 0.800, and even an always-right count added at most 0.011 on the typed sets and lost on Christmas Carol
    (0.675 -> 0.650; docs/benchmarks.md, "The reading's hops", `bench/reading_hops.py`)."""
    if (not reads_with_llm(engine) or state.done or state.reading is None or was_read(state)
            or state.reading.by != "rules" or state.reading.edited):  # a gold or a person's reading stays
        return state
    if on_stage:
        on_stage(state.depth, "reading")
    reading, usage = await read_with_llm(state.question, [s.title for s in state.seeds], engine.llm, state.reading,
                                         temperature=engine.config.temperature_reasoning, clock=engine.clock)
    return state.with_(reading=reading, extra_usage=state.extra_usage + (usage,))


async def start(engine: ToGEngine, question: str, seeds: Iterable[Seed | str] | None = None, *,
                hops: int | None = None, tried: Iterable[dict[str, Any]] = (),
                reading: QuestionReading | None = None,
                on_stage: Callable[[int, str], None] | None = None,
                on_linked: Callable[[State], None] | None = None) -> State:
    """The topic entities linked, the question read and the number of hops settled. The reading: `reading` when it
    was read before (a person's corrected reading, "Search again with this reading"), else the LLM's where
    `reads_with_llm` (the rules read it at linking). The number of hops: the person's (`hops`, checked before
    anything is linked), else tried where that applies (`settle`). `on_linked(state)` is told once the topic
    entities are linked and the question read, before the hops are tried (the app saves the run there, so a run
    stopped while planning keeps its topic entities)."""
    if hops is not None:
        check_hops(engine, hops)
    state = await read(engine, await engine.start_async(question, seeds, reading=reading), on_stage)
    if hops is not None:
        state = chosen(state, hops, tried)
    if on_linked is not None:
        on_linked(state)
    return state if hops is not None else await settle(engine, state, on_stage)


async def run(engine: ToGEngine, question: str, *, seeds: Iterable[Seed | str] | None = None,
              state: State | None = None, callbacks: Callbacks | None = None, hops: int | None = None,
              tried: Iterable[dict[str, Any]] = ()) -> State:
    """One question from start to answer: `start` (or `state`, a linked or saved one, read and settled first when
    it has no step yet), then the engine's automatic loop."""
    cb = callbacks or Callbacks()
    if state is None:
        state = await start(engine, question, seeds, hops=hops, tried=tried, on_stage=cb.on_stage)
    elif not state.steps:  # linked by the caller (the app saves then), or saved before the first step
        state = await settle(engine, await read(engine, state, cb.on_stage), cb.on_stage)
    return await engine.run(question, state=state, callbacks=cb)
