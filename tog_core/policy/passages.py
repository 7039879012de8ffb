"""The source text around a candidate, read for the answer ranking (policy/ranking.py): the share of the question's
words found in the text around where a link's text units name the candidate (`passage_words`). Sentences and names
are read by scoring/sentences.py, the same way as for the supporting sentence and the evidence tab.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from tog_core.scoring.sentences import name_pattern
from tog_core.scoring.text import read_tokens

# passage_words: the source text this many characters either side of a place naming the candidate, about a
# paragraph; counted in characters, not sentences or lines, so a hard-wrapped text and a script without spaces read
# alike (150 / 250 / 400 characters and one to five sentences read no better left out: docs/experiment-log.md)
_PASSAGE_CHARS = 600
_SPACE = re.compile(r"\s")


def passage_words(units: Sequence[Any], title: str, facts: frozenset[str]) -> float:
    """The largest share of the question's fact words (`facts`: the reading's stems, the asked noun's left out)
    found in the link's source text units within _PASSAGE_CHARS of a place that names the candidate (`title`, as
    `name_pattern` finds it). The question was asked from the source text, not from the graph's summary of it. 0
    when no unit names it."""
    pattern = name_pattern(title)
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
