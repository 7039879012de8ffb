"""What a run says about itself beside its answer, in words (no Streamlit): the run in one line (id, why it stopped,
LLM calls, tokens, cost, time), whether it found nothing to answer from, the model it was made with, the number of
hops it settled on, the warning above a guess, its named fallbacks and what a person's "force it in" did. Every
function reads a `Trace` (its attributes). The words for why a run stopped and for its usage are here; views.py's
progress lines and saved-run rows use them too.
"""
from __future__ import annotations

from typing import Any

from tog_core.tog.choice import stop_words, threshold_words  # stop_words: the pages read it here too
from tog_core.tog.state import FORCED_ANSWER
from tog_core.tog.trace import Trace

def usage_words(usage: dict[str, Any] | None) -> str:
    """LLM calls, tokens and cost; "no LLM calls" when none was made (a run without a model has no bill)."""
    u = usage or {}
    calls, tokens = u.get("llm_calls", 0), u.get("prompt_tokens", 0) + u.get("completion_tokens", 0)
    if not calls and not tokens:
        return "no LLM calls"
    cost = u.get("cost_usd")
    return f"{calls} LLM calls · {tokens} tokens · " + ("cost unknown" if cost is None else f"${cost:.4f}")


def run_line(trace: Trace) -> str:
    """The run in one line under its answer: id, why it stopped, LLM calls, tokens, cost, time."""
    s = trace.stats or {}
    return (f"run {trace.run_id} · stopped: {stop_words(trace.stop_reason)} · {usage_words(s)} · "
            f"{s.get('wall_s', 0):.1f} s")


def no_answer(trace: Trace) -> bool:
    """A run that found nothing to answer from (no answer entity, no chain, no LLM text): its answer says "No
    answer: …" and its status must not read as done."""
    return trace.answer_by != "llm" and not trace.answer_entity and not any(trace.chains)


def model_name(trace: Trace) -> Any:
    """The model a run was made with, as its config records it (None when it names none)."""
    return (trace.config or {}).get("model")


def plan_depth(trace: Trace) -> tuple[Any, bool]:
    """The number of hops a run settled on before it searched (None when it settled none) and whether a person
    chose it (read as written: a hand-edited plan is shown, not refused)."""
    plan = trace.plan or {}
    return plan.get("depth"), bool(plan.get("chosen"))


def guess_words(trace: Trace) -> str:
    """The plain warning above a guess."""
    return (f"The search is not sure: this answer is a guess (confidence {float(trace.confidence or 0):.2f}, below "
            f"{float(trace.low_confidence or 0):.2f}, {threshold_words(trace)}). Check the candidates, best first:")


# recorded as fallbacks, said as notes: what a person's "force it in" did (app/force.py's NOT_IN_GRAPH among them)
PERSON_MADE = frozenset({FORCED_ANSWER, "forced_entity_not_reached", "forced_entity_not_in_graph"})


def _run_fallbacks(trace: Trace) -> list[dict[str, Any]]:
    """The named fallbacks recorded outside the stages (the trace's stats.other_fallbacks)."""
    return [f for f in (trace.stats or {}).get("other_fallbacks") or [] if isinstance(f, dict)]


def fallbacks(trace: Trace) -> list[str]:
    """Every named fallback of a run, as one line each (what a person did, "force it in", is a note instead)."""
    out = [f"depth {s.depth} {s.stage}: {f.get('name')} ({f.get('where', '')}) {f.get('detail', '')}"
           for s in trace.steps for f in s.fallbacks or []]
    out += [f"{f.get('where')}: {f.get('name')} {f.get('detail', '')}"
            for f in _run_fallbacks(trace) if f.get("name") not in PERSON_MADE]
    return [line.strip() for line in out]


def is_forced(trace: Trace) -> bool:
    """Whether a person forced the run's answer in (its first candidate is theirs; no confidence is claimed)."""
    return any(f.get("name") == FORCED_ANSWER for f in _run_fallbacks(trace))


def person_notes(trace: Trace) -> list[str]:
    """What a person's "force it in" did to the answer, in words ("You forced X in: …")."""
    notes = [str(f.get("detail") or "").strip() for f in _run_fallbacks(trace) if f.get("name") in PERSON_MADE]
    return [n[:1].upper() + n[1:] for n in notes if n]
