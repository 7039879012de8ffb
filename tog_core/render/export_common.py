"""What the Markdown and HTML exports share: the secret-free copy of a trace, the caps on long text, and what both
read of a trace (the chain the answer came along, each step's row and overrides, the source text of a link).

Every export starts from `public_trace`, which drops any secret-looking field (traces carry none by design; this is a
second line of defence). A trace that carries `evidence` (app/views.with_evidence: text-unit id → text and its
supporting sentence) exports the source text of every link: the supporting sentence under each link, the passages in
full in a "Source text" section. A trace with `diagnosis` ("why not X?") exports it in words.

Long data text is capped where it is shown (titles and relation texts at LABEL_MAX characters, answers, passages and
supporting sentences at TEXT_MAX) and each cut text is written in full once, in a "Full texts" section at the end, one
click away (`LongTexts` numbers them). A long title inside the answer is shown capped there too, so a 1 MB title costs
the export 1 MB, not one copy per place it appears.
"""
from __future__ import annotations

import json
import re
from typing import Any

from tog_core.render.chains import answer_chain_index, answer_own_chain, found_off_chain, naming_chain_index
from tog_core.tog.choice import changed_search, changed_words, found_words, stop_words, without_llm
from tog_core.render.frontier_items import overridden_ids

_SECRET_KEY = re.compile(r"(?i)^(?:.*[_-])?(?:api[_-]?key|apikey|secret|password|passwd|authorization|"
                         r"access[_-]?token|auth[_-]?token|bearer|credentials?)$")
_SECRET_VALUE = re.compile(r"\b(?:sk|pk|rk)-[A-Za-z0-9_-]{16,}|\bBearer\s+\S{12,}")
INVISIBLE = re.compile("[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]")
LABEL_MAX = 200  # a title or relation text as shown in an export
TEXT_MAX = 4_000  # an answer, a passage or a supporting sentence as shown
QUESTION_MAX = 500
ANSWER_BY = {"llm": "Written by the LLM", "chains": "Composed from the reasoning chains, without an LLM"}
PERSON_NOTE = ("Chosen by a person (“This is the answer”), not by the search: kept apart from the search's answer "
               "and never counted as it.")


def _scrub(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _scrub(v) for k, v in obj.items() if not (isinstance(k, str) and _SECRET_KEY.match(k))}
    if isinstance(obj, list):
        return [_scrub(v) for v in obj]
    if isinstance(obj, str) and _SECRET_VALUE.search(obj):
        return _SECRET_VALUE.sub("[redacted]", obj)
    return obj


def as_text(x: Any) -> str:
    return "" if x is None else (json.dumps(x, ensure_ascii=False) if isinstance(x, (dict, list)) else str(x))


class LongTexts:
    """The texts one export shows cut: each numbered once, written in full once in the "Full texts" section."""

    def __init__(self, trace: dict[str, Any]) -> None:
        self.ids: dict[str, int] = {}
        names = {as_text(link.get(k)) for c in trace.get("chains") or [] for link in c or [] if isinstance(link, dict)
                 for k in ("source", "target", "relation")}
        names |= {as_text(s.get("title")) for s in trace.get("seeds") or [] if isinstance(s, dict)}
        self._names = sorted((n for n in names if len(n) > LABEL_MAX), key=len, reverse=True)

    def ref(self, text: str) -> int:
        return self.ids.setdefault(text, len(self.ids) + 1)

    def inside(self, text: str) -> str:
        """Text (an answer, a diagnosis) with every long entity title or relation text in it shown capped: those
        are one click away where the chains show them."""
        for name in self._names:
            if name in text:
                text = text.replace(name, name[: LABEL_MAX - 1] + "…")
        return text


def public_trace(trace: dict[str, Any]) -> dict[str, Any]:
    """A copy of the trace without api_key-like fields or key-looking values (anywhere, config included)."""
    return _scrub(trace)


def used_chain(t: dict[str, Any]) -> int | None:
    """The chain (1-based) the answer came along, as the chains picture and the app mark it: the one the ranked
    answer's own chain starts, else the chain that names the answer (render/chains.naming_chain_index); None when the
    answer's chain is none of the run's (a number of hops searched before the run)."""
    at = answer_chain_index(t)
    if at is not None:
        return at + 1
    return None if answer_own_chain(t) else naming_chain_index(t) + 1


def own_answer_chain(t: dict[str, Any]) -> tuple[list[dict[str, Any]], str] | None:
    """The answer's own chain and where it came from, when it is none of the run's chains (used_chain is None): a
    number of hops searched before the run, or the shortest chain to an answer found by its description."""
    own = answer_own_chain(t) if used_chain(t) is None else []
    if not own:
        return None
    found = found_off_chain(t)
    how = (f"{found_words(found)}, on no kept chain: the shortest chain to it, its links not scored"
           if found else "from a number of hops searched before the run")
    return own, how


def _decisions(step: dict[str, Any]) -> int:
    """A person's decisions at a step: at an evaluate step choosing the other outcome is one (both outcomes are
    recorded as changed)."""
    n = len(step_overrides(step))
    return min(n, 1) if step.get("stage") == "evaluate" else n


def step_overrides(step: dict[str, Any]) -> list[dict[str, Any]]:
    recorded = [o for o in step.get("overrides") or [] if isinstance(o, dict)]
    if recorded:
        return recorded
    ids = overridden_ids(step)
    return [{"id": c.get("id"), "label": c.get("label"), "auto_kept": c.get("auto_kept"), "kept": c.get("kept")}
            for c in step.get("candidates") or [] if str(c.get("id")) in ids]


def evidence_of(t: dict[str, Any]) -> dict[str, dict[str, str]]:
    ev = t.get("evidence")
    return {str(k): v for k, v in ev.items() if isinstance(v, dict)} if isinstance(ev, dict) else {}


def supports(t: dict[str, Any], link: dict[str, Any]) -> list[str]:
    """The supporting sentences of a link's source text (distinct, in order), when the trace carries them."""
    ev = evidence_of(t)
    out = [ev[str(u)].get("support") or "" for u in link.get("text_unit_ids") or [] if str(u) in ev]
    return list(dict.fromkeys(x for x in out if x))


STEP_COLUMNS = ["#", "depth", "stage", "candidates", "kept", "LLM calls", "tokens (prompt/completion)", "cache hits",
                "fallbacks", "overrides", "wall s", "note"]


def step_rows(steps: list[dict[str, Any]]) -> list[list[Any]]:
    """One row per step under STEP_COLUMNS."""
    rows = []
    for i, s in enumerate(steps, start=1):
        cands = s.get("candidates") or []
        verdict = s.get("verdict") or {}
        note = s.get("note") or ""
        if verdict:
            note = (f"sufficient: {'yes' if verdict.get('sufficient') else 'no'}"
                    + (f" ({verdict.get('reason')})" if verdict.get("reason") else "") + (f"; {note}" if note else ""))
        rows.append([i, s.get("depth"), s.get("stage"), len(cands), sum(1 for c in cands if c.get("kept")),
                     s.get("llm_calls", 0), f"{s.get('prompt_tokens', 0)}/{s.get('completion_tokens', 0)}",
                     s.get("cache_hits", 0), len(s.get("fallbacks") or []), _decisions(s),
                     f"{float(s.get('wall_s') or 0):.2f}", note])
    return rows


# the settings only an LLM reads: a run without one records them (EngineConfig's defaults) and never uses them
LLM_ONLY = ("temperature_exploration", "temperature_reasoning", "max_tokens", "answer_max_tokens", "judge",
            "compact_scores")


def config_split(config: dict[str, Any] | None) -> tuple[list[list[Any]], list[str]]:
    """A run's settings as (setting, value) rows, and apart the LLM-only ones a run without an LLM recorded but never
    read (both exports say them the same way; the JSON export keeps every one)."""
    cfg = dict(config or {})
    unused = [k for k in LLM_ONLY if k in cfg] if without_llm(cfg) else []
    return [[k, v] for k, v in cfg.items() if k not in unused], unused


def confidence_caveat(trace: dict[str, Any]) -> str:
    """What the app says beside the confidence of a search changed from the one it was fitted on (another width or
    depth, a person's choices at a step), for the exports; "" when it does not apply."""
    from tog_core.tog.trace import Trace

    if trace.get("confidence") is None:
        return ""
    try:
        changed = changed_search(Trace.from_dict(trace))
    except (KeyError, TypeError, ValueError):  # a trace of another version: nothing claimed
        return ""
    return f"The confidence ({float(trace['confidence']):.2f}) is {changed_words(changed)}." if changed else ""


def stop_line(reason: Any) -> str:
    """Why the run stopped, in the app's words with the trace's name after it ("judged enough to answer
    (sufficient)"); "–" for none."""
    if not reason:
        return "–"
    words = stop_words(str(reason))
    return words if words == str(reason) else f"{words} ({reason})"


ARROW_NOTE = ("In the answer's chains, “—[relation]→” follows a relationship the way the graph stores it and "
              "“—[relation]←” one stored the other way (read it from right to left); the chains below follow the walk "
              "from the topic entity.")


def arrow_note(answer: Any) -> str:
    """What a "←" in the composed answer's chains means ("" when it has none): the lists of links below say "→"."""
    return ARROW_NOTE if isinstance(answer, str) and "]←" in answer else ""
