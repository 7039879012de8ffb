"""Source text read as sentences, and titles found in it: the sentence splitter behind the evidence tab's marked
sentence (render/evidence.py) and the answer ranking's supporting sentence (`sentences_naming`); the name finder
behind that sentence and `passage_words` (policy/passages.py). The evidence tab finds names its own way
(render/support.py `title_in`: a title's first or last word too, "Scrooge" for EBENEZER SCROOGE).

Source text is hard-wrapped (a single line break is no sentence end), closes a quotation after its stop ("?' It"),
writes a title in any case and with its article or without, wraps a name over a line break, puts "Mrs." before a
name, and in Chinese or Japanese ends a sentence with a full stop and no space: each is read here once.
"""
from __future__ import annotations

import bisect
import re
from functools import lru_cache

from tog_core.scoring.text import UNSPACED, without_article

# a sentence ends at . ! ? and white space; at . ! ? and a closing quote or bracket, then white space and a capital
# or an opening quote ("... I believe?' It sent a pang"; '"Humbug!" said Scrooge.' stays one sentence); at a CJK full
# stop, with the closing quotes after it; or at a blank line. A single line break is the source text's hard wrapping,
# not an end (Christmas Carol's text units break every 70 characters)
_CLOSE = "\"'”’)」』"
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+"
                           rf"|(?<=[.!?][{_CLOSE}])\s+(?=[A-Z\"“‘'(])"
                           rf"|(?<=[。！？])(?![{_CLOSE}])\s*|(?<=[。！？][{_CLOSE}])\s*"
                           r"|\n\s*\n")


@lru_cache(maxsize=1024)  # a text unit is read for every candidate and every link it supports
def sentence_spans(text: str) -> tuple[tuple[int, int], ...]:
    """(start, end) of each sentence of `text`, its surrounding white space left out."""
    out: list[tuple[int, int]] = []
    at = 0
    for piece in _SENTENCE_END.split(text):
        if not piece.strip():
            continue
        at = text.find(piece, at)
        lead = len(piece) - len(piece.lstrip())
        out.append((at + lead, at + len(piece.rstrip())))
        at += len(piece)
    return tuple(out)


@lru_cache(maxsize=1024)
def _one_line(text: str) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """Where each sentence of `text` starts, and its words on one line."""
    spans = sentence_spans(text)
    return tuple(a for a, _ in spans), tuple(" ".join(text[a:b].split()) for a, b in spans)


@lru_cache(maxsize=4096)  # a candidate's title is looked for in every unit of its link, and again for its passage
def name_pattern(title: str) -> re.Pattern[str] | None:
    """A title as the source text writes it: a leading article aside, any case, whole words, any white space between
    its words (a name may be wrapped over a line break); None for a name too short to tell."""
    name = without_article(title).strip()
    if len(name) < (2 if UNSPACED.search(name) else 3):
        return None
    if UNSPACED.search(name):
        return re.compile(re.escape(name), re.IGNORECASE)
    return re.compile(r"(?<!\w)" + r"\s+".join(map(re.escape, name.split())) + r"(?!\w)", re.IGNORECASE)


def _named_at(text: str, title: str) -> list[tuple[int, int]]:
    """The sentences (first, last index into sentence_spans) of each place `text` names `title`; a name the
    splitter cut ("Mrs. | Cratchit") spans both."""
    pattern = name_pattern(title)
    if pattern is None:
        return []
    starts = _one_line(text)[0]
    return [(bisect.bisect_right(starts, m.start()) - 1, bisect.bisect_right(starts, m.end() - 1) - 1)
            for m in pattern.finditer(text)]


def sentences_naming(text: str, a: str, b: str) -> list[str]:
    """The sentences of `text` that name both `a` and `b` (as `name_pattern` finds them), on one line, at most 400
    characters each."""
    lines = _one_line(text)[1]
    spans = [(min(f1, f2), max(l1, l2)) for f1, l1 in _named_at(text, a) for f2, l2 in _named_at(text, b)
             if max(f1, f2) <= min(l1, l2)]
    return list(dict.fromkeys(" ".join(lines[f:last + 1])[:400] for f, last in sorted(spans)))
