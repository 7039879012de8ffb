"""Named off-switches for the question-wording rules and word lists (scoring/text.py, scoring/question.py,
scoring/hops.py, reading/readers.py), so each can be measured off (bench/rule_table.py; the table: docs/rules.md).

Every rule site asks `on(NAME)`; everything is on unless a bench switches it off with `switched_off(...)`. Nothing
here is read from the environment or set by the app: the switch exists for measurement only.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

# every wording rule a site asks about (`on(NAME)`); bench/rule_table.py's RULES lists them with the policy's switches
NAMES = frozenset({
    "film_nouns_stop", "film_nouns_type", "fr_stop_extra", "bands_by_question_word", "bands_from_phrases",
    "framing_words", "asking_noun_is_type", "verb_after_asking", "named_type", "asks_for", "auxiliaries", "kind_words",
    "type_words", "time_words", "attribute_after_asking", "do_support", "title_before_name", "recurs_hops",
    "relation_phrases", "relative_wh",
})
OFF: set[str] = set()  # the rules switched off for this run (empty outside a rule bench)
_RESETS: list[Callable[[], None]] = []  # what each module rebuilds when the switches change (tables, caches)


def on(name: str) -> bool:
    """Whether the named rule applies (every rule does unless a bench switched it off)."""
    return name not in OFF


def on_change(fn: Callable[[], None]) -> Callable[[], None]:
    """Register a function that rebuilds a module's tables and clears its caches when the switches change."""
    _RESETS.append(fn)
    return fn


@contextmanager
def switched_off(*names: str) -> Iterator[None]:
    """The named rules off inside the block, every table and cache rebuilt on the way in and out. An unknown name
    is an error that lists the rules (a typo would otherwise measure nothing)."""
    unknown = sorted(set(names) - NAMES)
    if unknown:
        raise ValueError(f"unknown rule {unknown[0]!r}; the wording rules are: {', '.join(sorted(NAMES))}")
    before = set(OFF)
    OFF.update(names)
    _reset()
    try:
        yield
    finally:
        OFF.clear()
        OFF.update(before)
        _reset()


def _reset() -> None:
    for fn in _RESETS:
        fn()
