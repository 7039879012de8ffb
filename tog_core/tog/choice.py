"""The ordered answer list and a person's choice of answer, as typed values.

A trace stores both as JSON objects (`Trace.candidates`, `Trace.person_answer`, docs/trace-format.md); these classes
read them once, so the app, the exports and the comparisons use attributes, and a malformed entry (a hand-edited
file) is left out rather than shown half. A person's choice is never the search's answer: nothing that scores or
states the search's answer (`answer_entity`, the benchmark) reads it.
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass, replace
from typing import Any

from tog_core.tog.trace import Trace


CANDIDATES_SHOWN = 3  # answer candidates shown by default: under the answer (app/pick.py), `query --candidates`, and
# whose chains the reasoning chains picture draws (render/candidate_chains.py); the rest are one click or flag away


# how an answer candidate on no kept chain was found (AnswerChoice.found, the trace candidate's "found"): its chain is
# the shortest to it and the search scored none of its links
FOUND_HOW = {"description": "found by its description",  # policy/retrieval.py
             "text": "found in the source text",  # policy/textunits.py
             "path": "found by the words of a whole path to it"}  # policy/pathcover.py


# how the ranked answer list says a candidate's place: the first words of its `why` (policy/answers.py), which a
# reader that says the place apart (the diagnosis: "the answer list places it 2 of 8") leaves out
_PLACE = "ranked {place} of {of} candidates by chain, text, type and agreement"
_PLACED = re.compile(re.escape(_PLACE).replace(r"\{place\}", r"\d+").replace(r"\{of\}", r"\d+") + "(?:; |$)")


def place_words(place: int, of: int) -> str:
    """A ranked candidate's place in words: "ranked 2 of 8 candidates by chain, text, type and agreement"."""
    return _PLACE.format(place=place, of=of)


def without_place(why: str) -> str:
    """`why` without the place_words it opens with (and the "; " after them); as it is when it opens otherwise."""
    m = _PLACED.match(why)
    return why[m.end():] if m else why


def found_chain(kind: str) -> str:
    """Which chain a candidate of this `found` kind carries, in words: the path that found it ("path"), else the
    shortest to it."""
    return "the path that names the most of the question" if kind == "path" else "the shortest to it"


def found_words(kind: str) -> str:
    """How a candidate of this `found` kind was found, in words ("found off the kept chains" for a kind unknown
    here, a trace written by a later version)."""
    return FOUND_HOW.get(kind, "found off the kept chains")


def found_of(d: Any) -> str:
    """How a trace's candidate record was found off the kept chains (FOUND_HOW's kind), "" for a candidate of the
    chains. Its "found" when it has one; a trace written before "found" existed says it only in the candidate's `why`
    ("found by its description, not on a kept chain ..."), which is read instead, so that an old trace's candidate is
    not said to come from a number of hops tried."""
    if not isinstance(d, dict):
        return ""
    if "found" in d:
        return _str(d, "found")
    said = _str(d, "why").split("; ")
    return next((kind for kind, words in FOUND_HOW.items()
                 if any(part.startswith(f"{words}, not on a kept chain") for part in said)), "")


def _str(d: dict[str, Any], key: str) -> str:
    v = d.get(key)
    return "" if v is None else str(v)


@dataclass(frozen=True, kw_only=True)
class ChainLink:
    """One hop of a candidate's chain, in walking order (from the topic entity towards the candidate)."""

    source: str
    source_id: str = ""
    relation: str = ""
    target: str
    target_id: str = ""
    relationship_id: str = ""

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ChainLink:
        return cls(source=_str(d, "source"), source_id=_str(d, "source_id"), relation=_str(d, "relation"),
                   target=_str(d, "target"), target_id=_str(d, "target_id"),
                   relationship_id=_str(d, "relationship_id"))


@dataclass(frozen=True, kw_only=True)
class AnswerCandidate:
    """One entry of the ordered answer list: the entity, how well it answers (0..1, None when unknown), the chain
    that reaches it and the source sentence that supports its last link ("" when none)."""

    title: str
    entity_id: str = ""
    score: float | None = None
    chain: tuple[ChainLink, ...] = ()
    sentence: str = ""
    why: str = ""  # how the search placed it (the ranker: the signals on which it leads or trails; "" when unsaid)
    found: str = ""  # FOUND_HOW's kind: found off the kept chains (its chain the shortest to it); "": a chain's

    @classmethod
    def from_dict(cls, d: Any) -> AnswerCandidate | None:
        """The candidate, or None when `d` is no candidate (not an object, or without a title)."""
        if not isinstance(d, dict) or not _str(d, "title").strip():
            return None
        score, chain = d.get("score"), d.get("chain")
        number = float(score) if isinstance(score, (int, float)) and not isinstance(score, bool) else None
        if not isinstance(chain, list):
            chain = []
        return cls(title=_str(d, "title"), entity_id=_str(d, "entity_id"), score=number,
                   chain=tuple(ChainLink.from_dict(x) for x in chain if isinstance(x, dict)),
                   sentence=_str(d, "sentence"), why=_str(d, "why"), found=found_of(d))

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "chain": [asdict(x) for x in self.chain]}


@dataclass(frozen=True, kw_only=True)
class PersonAnswer:
    """A person's choice of answer ("This is the answer"): the entity and when it was chosen (ISO-8601 UTC)."""

    entity_id: str
    title: str
    at: str = ""

    @classmethod
    def from_dict(cls, d: Any) -> PersonAnswer | None:
        """The choice, or None when there is none or it names no entity (not an object, or no title)."""
        if not isinstance(d, dict) or not _str(d, "title").strip():
            return None
        return cls(entity_id=_str(d, "entity_id"), title=_str(d, "title"), at=_str(d, "at"))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def person_answer(trace: Trace) -> PersonAnswer | None:
    """The person's choice recorded in a trace, if any."""
    return PersonAnswer.from_dict(trace.person_answer)


def recorded_candidates(trace: Trace) -> list[AnswerCandidate]:
    """The search's ordered answer list as the trace records it ([] in traces written before it existed)."""
    out = [AnswerCandidate.from_dict(c) for c in trace.candidates]
    return [c for c in out if c is not None]


def with_choice(trace: Trace, choice: PersonAnswer | None) -> Trace:
    """A copy of the trace with the person's choice recorded (None: cleared); the search's answer is untouched."""
    return replace(trace, person_answer=None if choice is None else choice.to_dict())


def without_llm(config: dict[str, Any] | None) -> bool:
    """Whether a run's config says it ran without an LLM: its `model_kind`, or its model for a trace without one."""
    cfg = config or {}
    return cfg.get("model_kind", cfg.get("model")) == "none"


def changed_search(trace: Trace) -> str:
    """How the run's search differs from the one its confidence was fitted on, in words; "" when it does not, or
    when no fitted model made the confidence (a run with an LLM: the rule choice's formula). The answer ranker was
    fitted on runs without an LLM at the default width and depth with no step chosen by a person; with one chain
    kept, or the right way dropped by hand, it sees one clear candidate and is sure of it."""
    from tog_core.tog.state import EngineConfig

    cfg, base = trace.config or {}, EngineConfig()
    if not without_llm(cfg):
        return ""
    out = [f"{what} {cfg[what]}" for what in ("width", "depth")
           if isinstance(cfg.get(what), int) and cfg[what] != getattr(base, what)]
    if any(getattr(step, "overrides", None) for step in trace.steps):
        out.append("your choices at a step")
    return ", ".join(out)


def changed_words(changed: str) -> str:
    """What the confidence of a changed search (changed_search) adds, after the number."""
    return f"fitted on searches left as set by default, and this one was changed ({changed}): it may be too high"


# why a search stopped, in plain words (the trace's stop_reason names stay as they are): the app and the exports
STOP_WORDS = {"sufficient": "judged enough to answer", "max_depth": "reached the maximum depth",
              "no_candidates": "nothing further to follow", "user": "stopped by you", "error": "failed"}


def stop_words(reason: str | None) -> str:
    return STOP_WORDS.get(reason or "", reason or "unfinished")


def threshold_words(trace: Trace) -> str:
    """Which threshold a guess fell below, in words: the answer ranker's (fitted on the dev sets) on a run without an
    LLM, else the fixed one of the rule choice's hand-made confidence (an LLM's search does not use the ranker)."""
    return ("the threshold fitted with the answer ranker" if without_llm(trace.config) else
            "the fixed threshold of the confidence used beside an LLM")


SECOND_SEARCH = "a second search reading the relations with e5 instead of BM25"  # policy/agreement.py


def second_search_words(place: int | None, probability: float | None, first: str | None) -> str:
    """What the second search (policy/agreement.py; the trace's `second_search`) says of the answer: where it puts it
    (`place`, 1: first; None: it does not reach it), its probability for it, and its own first answer's title."""
    p = f"its probability {probability:.2f}" if probability is not None else ""
    if place == 1:
        return f"{SECOND_SEARCH} also puts it first" + (f" ({p})" if p else "")
    if place is None:
        return f"{SECOND_SEARCH} does not reach it" + (f" (it answers {first})" if first else "")
    nth = {2: "second", 3: "third"}.get(place, f"{place}th")
    return f"{SECOND_SEARCH} puts it {nth}" + (f" ({p}; it answers {first})" if first else f" ({p})" if p else "")
