""""How the question was read" on the Ask page, as plain data (no Streamlit; explorer/reading.py draws it).

A run's trace records how its question was read once, when the search started (`Trace.reading`, tog_core/reading):
who read it, the language, the topic entities as the question names them, what it asks for, the relation phrases in
walking order and the number of hops. `reading_view` says it in words; `edit_reading` turns a person's corrections
(the number of hops, what is asked for) into the corrected reading the search is run again with
(QuestionReading.edit, which names what changed in `edited`). A trace written before readings has none
(`reading_view` is None): the page says so.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from tog_core.graphrag.store import GraphStore
from tog_core.reading import QuestionReading
from tog_core.reading.readers import entity_types, type_stems
from tog_core.scoring.question import TYPE_WORDS, type_matches
from tog_core.tog.recording import reading_of
from tog_core.tog.trace import Trace

NO_READING = ("This run has no record of how its question was read: it was saved by an older version, before "
              "readings were recorded. Ask the question again to see how it is read, and to correct it.")
BY_WORDS = {"rules": "the rules (the question's wording)", "llm": "the LLM",
            "gold": "the data set (its own hops, answer type and relation path)"}
BY_SHORT = {"rules": "by the rules", "llm": "by the LLM", "gold": "from the data set"}
EDITED_WORDS = {"hops": "the number of hops", "asked": "what is asked for"}
LANGUAGE_NAMES = {"en": "English", "fr": "French", "zh": "Chinese"}
TYPES_SHOWN = 12  # the graph's entity types named as suggestions, most frequent first
PHRASES_SHOWN = 10  # relation phrases listed; a rambling question's rest is counted ("… and 170 more")
TEXT_MAX = 200  # a title or phrase as shown (data may be huge); the trace keeps it whole
_WORD = re.compile(r"[^\W_]+")

# the hops table's column of the asked noun's words a row's relations matched where its chain's end is not one
# (views.plan_rows, DepthPlan.trials "set_aside"); shown only when a row has some, and then said in the caption
NOT_COUNTED = "not counted"
NOT_COUNTED_NOTE = ("“Not counted”: words of what the question asks for (“which town”) that the row's best chain's "
                    "relations match although the chain does not end at one (its end's type and description do not "
                    "say it is one), so they are left out of the question words matched.")


@dataclass(frozen=True, kw_only=True)
class ReadingView:
    """A reading in words, each field plain text (the page escapes it)."""

    by: str  # who read it
    by_short: str  # who read it, in two or three words (the section's title)
    fallback: str  # why the reader asked for could not read it ("" when it did)
    edited: tuple[str, ...]  # what a person changed, in words
    language: str
    topics: tuple[str, ...]  # each topic as the question writes it, or its title and "(not named in the question)"
    asked: str  # what the question asks for, in words ("not said" when it does not say)
    asked_how: str  # "named in the question" ("which town"), "implied by the question word" ("who"), "set by a person"
    fits: tuple[str, ...]  # the graph's entity types that fit what is asked for
    phrases: tuple[str, ...]  # the relation phrases in walking order, from the topic outward
    hops: int  # the number of hops the reading names
    searched: int | None  # the number of hops the search ran (its plan), when it settled one
    asked_text: str  # what the edit field starts with: the asked type as words ("" = not said)


def _cut(text: str) -> str:
    s = " ".join(str(text)[: 4 * TEXT_MAX].split())
    return s if len(s) <= TEXT_MAX else s[: TEXT_MAX - 1] + "…"


def graph_types(graph: GraphStore) -> tuple[str, ...]:
    """The graph's entity types, most frequent first (readers.entity_types: read once per graph)."""
    return entity_types(graph)


def asked_stems(text: str) -> tuple[str, ...]:
    """What a person typed for "what the question asks for" as the stems a reading holds: each word read as the rule
    reader reads the noun after "which" ("town", "films", a type label such as GEO). () for an empty text (not
    said); ValueError, naming the field and the fix, when the text names no word the search can use."""
    out = type_stems(text)
    if _WORD.search(text) and not out:
        raise ValueError(f"What the question asks for: “{_cut(text)}” has no word the search can use (words like "
                         "“the” or “of” are ignored). Type a noun such as person, town or company, or one of this "
                         "graph's entity types; leave it empty for “not said”.")
    return out


def _asked_words(r: QuestionReading, types: Iterable[str]) -> list[str]:
    """The asked stems as words: as the question writes them, else the entity type word or type label they stem
    from ("peopl" -> "people"), else the stem itself."""
    written: dict[str, str] = {}
    for raw in r.question.split():
        word = raw.strip(".,;:!?\"'()[]{}«»“”‘’")
        for stem in asked_stems_quiet(word):
            written.setdefault(stem, word)
    for word in [w for words in TYPE_WORDS.values() for w in words.split()] + [t.lower() for t in types]:
        for stem in asked_stems_quiet(word):
            written.setdefault(stem, word)
    return list(dict.fromkeys(written.get(s, s) for s in r.asked))


@lru_cache(maxsize=4096)
def asked_stems_quiet(word: str) -> tuple[str, ...]:
    """asked_stems of one word, () when it names nothing (cached: every type word is read at each page run)."""
    try:
        return asked_stems(word)
    except ValueError:
        return ()


def _searched(t: Trace) -> int | None:
    depth = (t.plan or {}).get("depth")
    return depth if isinstance(depth, int) and not isinstance(depth, bool) else None


def reading_view(t: Trace, types: Iterable[str] = ()) -> ReadingView | None:
    """How the run's question was read, in words; None when its trace has no reading (an older trace). `types`: the
    graph's entity types (graph_types), to say which fit what is asked for."""
    r = reading_of(t)
    if r is None:
        return None
    types = tuple(types)
    q = r.question
    topics = []
    for k, title in enumerate(r.topics):
        a, b = r.spans[k] if k < len(r.spans) else (-1, -1)
        topics.append(f"“{_cut(q[a:b])}”" if 0 <= a < b <= len(q) else f"{_cut(title)} (not named in the question)")
    words = _asked_words(r, types)
    return ReadingView(
        by=BY_WORDS.get(r.by, r.by), by_short=BY_SHORT.get(r.by, f"by {r.by}"), fallback=_cut(r.fallback),
        edited=tuple(EDITED_WORDS.get(e, e) for e in r.edited),
        language=LANGUAGE_NAMES.get(r.language, r.language), topics=tuple(topics),
        asked=", ".join(_cut(w) for w in words) or "not said",
        asked_how="" if not r.asked else "set by a person" if "asked" in r.edited else
        "named in the question" if r.asked_named else "implied by the question word",
        fits=tuple(x for x in types if r.asked and type_matches(list(r.asked), x)),
        phrases=tuple(_cut(p) for p in r.phrases[:PHRASES_SHOWN]) + (
            (f"… and {len(r.phrases) - PHRASES_SHOWN} more",) if len(r.phrases) > PHRASES_SHOWN else ()),
        hops=r.hops, searched=_searched(t), asked_text=", ".join(words))


@dataclass(frozen=True, kw_only=True)
class ReadingEdit:
    """A person's corrections: the corrected reading, and the number of hops chosen (None: the search's own
    choice, as before)."""

    reading: QuestionReading
    hops: int | None


def _whole(value: Any) -> int:
    if isinstance(value, bool):
        raise ValueError
    if isinstance(value, float) and not value.is_integer():
        raise ValueError
    return int(str(value).strip()) if isinstance(value, str) else int(value)


def edit_reading(t: Trace, *, hops: Any, asked_text: str | None, max_depth: int,
                 types: Iterable[str] = ()) -> ReadingEdit:
    """The run's reading with a person's corrections: `hops` (a whole number, 1..max_depth, when it differs from
    the reading's) and `asked_text` (the asked type as words; empty = not said; a change when it reads differently
    from the field's starting text). ValueError, naming the field and the fix, for bad input or no change."""
    r = reading_of(t)
    view = reading_view(t, types)
    if r is None or view is None:
        raise ValueError(NO_READING)
    changes: dict[str, Any] = {}
    try:
        n = _whole(hops)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"Number of hops: “{_cut(str(hops))}” is not a whole number; choose 1 to {max_depth}.") \
            from None
    if n not in (r.hops, max(1, min(r.hops, max_depth))):  # the form starts at the reading's hops within the depth
        if not 1 <= n <= max_depth:
            raise ValueError(f"Number of hops: {n} is outside 1 to {max_depth} (this run's maximum depth); choose a "
                             f"number from 1 to {max_depth}.")
        changes["hops"] = n
    text = (asked_text or "").strip()
    stems = asked_stems(text)
    if text != view.asked_text.strip() and set(stems) != set(r.asked):
        changes["asked"] = stems
    if not changes:
        raise ValueError("Nothing was changed: set another number of hops or what the question asks for, then "
                         "search again.")
    return ReadingEdit(reading=r.edit(**changes), hops=changes.get("hops"))


def hops_table(rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], str]:
    """The hops table as shown, and what its caption adds: without the NOT_COUNTED column when it is empty on every
    row (a question that names no kind, a trace written before it), else with it and NOT_COUNTED_NOTE."""
    if any(r.get(NOT_COUNTED) for r in rows):
        return rows, NOT_COUNTED_NOTE
    return [{k: v for k, v in r.items() if k != NOT_COUNTED} for r in rows], ""
