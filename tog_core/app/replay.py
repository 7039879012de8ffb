"""Replaying a saved run: its steps applied again from its topic entities, each with the choice it recorded, to
rebuild the states it went through (runner.explore_from_trace: "Back to depth" on a reopened run; force.force_in:
"why not X?" replayed up to the step where X was lost).

Without an LLM the scores cost nothing to recompute. With one, a step whose call failed when the run was made fails
again without asking the provider (its reply was never cached; the step takes the fallback it took), and, when the
caller asks, no reply is asked of the provider at all (`cached_only`: LLMClient.cache_only). The states carry the
steps as recorded, and a replayed step's automatic choice is the one the run recorded (`_as_recorded`).
"""
from __future__ import annotations

import asyncio
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from tog_core.scoring.scorers import FALLBACK_LLM_ERROR
from tog_core.tog.stages import FALLBACK_EVALUATE_LLM_ERROR
from tog_core.tog.state import State
from tog_core.tog.trace import DepthPlan, Step, Trace


def replay(engine: Any, trace: Trace, upto: int, *, restored: State | None = None,
           cached_only: bool = False) -> list[State]:
    """The states of a saved run from its topic entities through its first `upto` steps, each step applied
    with the choice it recorded (the person's overrides included). Scores are recomputed (cached LLM replies
    make this free); a recorded choice the search no longer offers raises ValueError. With an LLM, a step whose
    call failed when the run was made fails again without asking the provider (`_replaying`), and the states carry
    the steps as recorded (the calls, tokens and cost spent then, not the cache hits of the replay);
    `cached_only`: no reply is asked of the provider at all (NotCached when one is not in the cache)."""
    from tog_core.tog.recording import hops_of

    llm = getattr(engine, "llm", None)

    first = engine.start(trace.question, list(trace.seeds))
    # the number of hops the run settled on before its first step (recorded, not tried again), the searches of the
    # other numbers of hops (part of the answer's pool) and the run's reading (a person's correction included)
    try:  # a trace written before resume states, or naming what the project no longer has: the question alone
        saved = restored or engine.restore(trace)  # `restored`: the caller's engine.restore(trace), not read twice
        first = first.with_(other_searches=saved.other_searches, reading=saved.reading)
    except (ValueError, KeyError):
        pass
    states = [first.with_(**hops_of(DepthPlan.from_dict(trace.plan))) if trace.plan else first]
    for i, step in enumerate(trace.steps[:upto]):
        with _replaying(llm, step, cached_only=cached_only):
            prop = asyncio.run(engine.propose(states[-1]))
        offered = {c.id for c in prop.step.candidates}
        kept = {str(c.id) for c in step.candidates if c.kept}
        if step.stage == "evaluate" and not kept:
            kept = {"continue"} & offered
        if not kept <= offered:
            missing = sorted(kept - offered)[:2]
            raise ValueError(f"step {i + 1} (depth {step.depth} {step.stage}) no longer offers "
                             f"{missing}: the project or the search changed since this run")
        states.append(_as_recorded(engine.apply(states[-1], prop, kept), step))
    if llm is not None:
        states = [s.with_(steps=tuple(trace.steps[:len(s.steps)])) for s in states]
    return states


# the fallbacks a step records when an LLM call failed (the scorer's BM25, the judge's "search on")
_CALL_FAILED = frozenset({FALLBACK_LLM_ERROR, FALLBACK_EVALUATE_LLM_ERROR})


def _replaying(llm: Any, step: Step, *, cached_only: bool) -> AbstractContextManager[Any]:
    """How the LLM answers while `step` is replayed: where a call of the step failed when the run was made (a
    fallback of _CALL_FAILED), from the cache with every miss failing as then, so the step takes the fallback it
    took; else from the cache only when `cached_only`; else as usual."""
    failed = any(f.get("name") in _CALL_FAILED for f in step.fallbacks)
    if llm is None or not (failed or cached_only):
        return nullcontext()
    return llm.cache_only(misses_fail=failed)


def _as_recorded(state: State, recorded: Step) -> State:
    """`state` with its last step's automatic choice as the run recorded it: a run saved before the policy changed
    (or on a machine with another embedder) replays with its own history, so a choice the search makes differently
    today is not written down as a person's override (nor read as one by the answer's pool). A candidate the run
    did not offer then was no automatic choice."""
    then = {str(c.id): bool(c.auto_kept) for c in recorded.candidates}
    last = state.steps[-1]
    if all(then.get(str(c.id), False) == c.auto_kept for c in last.candidates):
        return state
    fixed = Step.from_dict(last.to_dict())
    fixed.overrides = []
    for c in fixed.candidates:
        c.auto_kept = then.get(str(c.id), False)
        if c.kept != c.auto_kept:
            fixed.overrides.append({"id": c.id, "label": c.label, "auto_kept": c.auto_kept, "kept": c.kept})
    return state.with_(steps=state.steps[:-1] + (fixed,))
