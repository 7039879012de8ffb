"""The source text behind a link, read for the answer ranking (policy/ranking.py): the sentences of a text unit
that name both ends of a link (the supporting sentence a candidate shows), and the share of the question's words
found in the text around where a unit names the candidate (`passage_words`).

Source text is hard-wrapped (a single line break is no sentence end), writes a title in any case and with its
article or without, wraps a name over a line break and puts "Mrs." before a name: each is read here once, the same
way for both uses.
"""
from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from tog_core.scoring.text import UNSPACED, read_tokens, without_article

# a sentence ends at . ! ? and white space, at a CJK full stop, or at a blank line; a single line break is the source
# text's hard wrapping, not an end (Christmas Carol's text units break every 70 characters)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])\s*|\n\s*\n")

# passage_words: the source text this many characters either side of a place naming the candidate, about a
# paragraph; counted in characters, not sentences or lines, so a hard-wrapped text and a script without spaces read
# alike (150 / 250 / 400 characters and one to five sentences read no better left out: docs/experiment-log.md)
_PASSAGE_CHARS = 600
_SPACE = re.compile(r"\s")


@lru_cache(maxsize=1024)  # a unit is read for every candidate whose last link it supports
def _unit_sentences(text: str) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """A text unit's sentences: where each starts in `text`, and its words on one line."""
    starts: list[int] = []
    lines: list[str] = []
    at = 0
    for piece in _SENTENCE.split(text):
        if not piece.strip():
            continue
        at = text.find(piece, at)
        starts.append(at)
        lines.append(" ".join(piece.split()))
        at += len(piece)
    return tuple(starts), tuple(lines)


def _name_pattern(title: str) -> re.Pattern[str] | None:
    """A title as the source text writes it: a leading article aside, any case, whole words, any white space between
    its words (a name may be wrapped over a line break); None for a name too short to tell."""
    name = without_article(title).strip()
    if len(name) < (2 if UNSPACED.search(name) else 3):
        return None
    if UNSPACED.search(name):
        return re.compile(re.escape(name), re.IGNORECASE)
    return re.compile(r"(?<!\w)" + r"\s+".join(map(re.escape, name.split())) + r"(?!\w)", re.IGNORECASE)


def _named_at(text: str, title: str) -> list[tuple[int, int]]:
    """The sentences (first, last index into _unit_sentences) of each place `text` names `title`; a name the
    splitter cut ("Mrs. | Cratchit") spans both."""
    pattern = _name_pattern(title)
    if pattern is None:
        return []
    starts = _unit_sentences(text)[0]
    return [(bisect.bisect_right(starts, m.start()) - 1, bisect.bisect_right(starts, m.end() - 1) - 1)
            for m in pattern.finditer(text)]


def sentences_naming(text: str, a: str, b: str) -> list[str]:
    """The sentences of `text` that name both `a` and `b` (as `_name_pattern` finds them), on one line, at most 400
    characters each."""
    lines = _unit_sentences(text)[1]
    spans = [(min(f1, f2), max(l1, l2)) for f1, l1 in _named_at(text, a) for f2, l2 in _named_at(text, b)
             if max(f1, f2) <= min(l1, l2)]
    return list(dict.fromkeys(" ".join(lines[f:last + 1])[:400] for f, last in sorted(spans)))


def passage_words(units: Sequence[Any], title: str, facts: frozenset[str]) -> float:
    """The largest share of the question's fact words (`facts`: the reading's stems, the asked noun's left out)
    found in the link's source text units within _PASSAGE_CHARS of a place that names the candidate (`title`, as
    `_name_pattern` finds it). The question was asked from the source text, not from the graph's summary of it. 0
    when no unit names it."""
    pattern = _name_pattern(title)
    if not facts or pattern is None:
        return 0.0
    best = 0.0
    for tu in units:
        text = tu.text or ""
        for m in pattern.finditer(text):
            best = max(best, len(facts & _passage_tokens(_around(text, m.start(), m.end()))) / len(facts))
    return best


def _around(text: str, start: int, end: int) -> str:
    """`text[start:end]` with _PASSAGE_CHARS either side, not ending inside a word where the text has spaces."""
    lo, hi = max(0, start - _PASSAGE_CHARS), min(len(text), end + _PASSAGE_CHARS)
    if lo > 0 and not text[lo - 1].isspace() and (gap := _SPACE.search(text, lo, start)):
        lo = gap.end()  # the cut word left out
    if hi < len(text) and not text[hi].isspace() and (gaps := [g.start() for g in _SPACE.finditer(text, end, hi)]):
        hi = gaps[-1]
    return text[lo:hi]


@lru_cache(maxsize=4096)  # the same passage is read for every candidate named there
def _passage_tokens(passage: str) -> frozenset[str]:
    return frozenset(read_tokens(passage))
