"""Scores for numbered candidates from what an LLM really replies, with explicit named fallbacks. Pure.

``parse_scores`` reads candidate scores from JSON (an object with a scores list, a list of objects
or numbers, an index→score mapping; inside code fences or surrounded by prose), from ToG's original
``{relation (Score: 0.4)}`` format, from numbered lines (``1. 0.8``, ``[2] 0.3 — reason``) and from
bare numbers. Integer 0–10 and percentage scales are normalised to 0–1, values are clamped, and
whatever cannot be read becomes a named fallback with a ``detail`` saying what was wrong.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from tog_core.prompting.replies import MAX_REPLY_CHARS, REASON_KEYS, get_key, json_values, short, strip_thinking

__all__ = ["Scores", "parse_scores", "FALLBACK_UNIFORM", "FALLBACK_PARTIAL", "FALLBACK_EXTRA", "SCORE_FALLBACKS",
           "UNIFORM_SCORE", "MISSING_SCORE"]

FALLBACK_UNIFORM = "uniform_scores"  # nothing usable: every candidate gets UNIFORM_SCORE
FALLBACK_PARTIAL = "partial_scores_filled"  # some candidates unscored: they get MISSING_SCORE
FALLBACK_EXTRA = "extra_scores_ignored"  # all scored, but surplus/out-of-range entries were dropped
SCORE_FALLBACKS = (FALLBACK_UNIFORM, FALLBACK_PARTIAL, FALLBACK_EXTRA)
UNIFORM_SCORE = 0.5
MISSING_SCORE = 0.0  # a candidate the model did not rate is treated as not useful (as in ToG)

_WORD_SCORES = {"very high": 0.95, "high": 0.9, "medium": 0.5, "moderate": 0.5, "low": 0.1,
                "very low": 0.05, "none": 0.0}
_NUM = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)"
_SCALE = r"\s*(?P<scale>%|/\s*100\b|/\s*10\b|out\s+of\s+100\b|out\s+of\s+10\b)?"
_NUMBER_RE = re.compile(r"(?<![\w.])(?P<num>" + _NUM + r")" + _SCALE, re.IGNORECASE)
_LEADING_NUMBER_RE = re.compile(r"^\W{0,3}?(?:score\s*[:=]?\s*)?(?P<num>" + _NUM + r")" + _SCALE,
                                re.IGNORECASE)
_LABELLED_RE = re.compile(r"\b(?:score|rating|relevance)\s*[:=]?\s*(?P<num>" + _NUM + r")" + _SCALE,
                          re.IGNORECASE)
_INDEXED_LINE_RE = re.compile(
    r"""^\s*(?:[-*•>]\s*)?(?:\*\*|__)?\s*
        (?:\[\s*(?P<bracket>\d+)\s*\]
          |\(\s*(?P<paren>\d+)\s*\)
          |(?:candidate|relation|entity|pair|item|option|no\.?|\#)\s*(?P<word>\d+)
          |(?P<plain>\d+)\s*[.):](?!\d))
        \s*(?:\*\*|__)?\s*[:=\-–—]?\s*(?P<rest>.*)$""",
    re.IGNORECASE | re.VERBOSE)
_BARE_LINE_RE = re.compile(r"^\s*(?:[-*•]\s*)?(?P<num>" + _NUM + r")" + _SCALE
                           + r"\s*(?:[,;:\-–—]\s*(?P<reason>.*))?$", re.IGNORECASE)
_NUMBER_LIST_RE = re.compile(r"^\s*" + _NUM + r"(?:\s*%)?(?:\s*[,;\s]\s*" + _NUM + r"(?:\s*%)?)+\s*$")
_TOG_RE = re.compile(r"\{?\s*(?P<name>[^{}\n]*?)\s*\(\s*score\s*[:=]\s*(?P<num>" + _NUM + r")"
                     + _SCALE + r"\s*\)\s*\}?\s*[:\-–—]?\s*(?P<reason>[^\n]*)", re.IGNORECASE)
_KEY_INDEX_RE = re.compile(r"^\s*(?:\[\s*(\d+)\s*\]|(?:candidate|relation|entity|pair|item|option|"
                           r"index|idx|i|no\.?|#)?\s*[_\- ]?(\d+))\s*$", re.IGNORECASE)

_LIST_KEYS = ("scores", "ratings", "results", "candidates", "relations", "entities", "pairs",
              "items", "data", "output")
_INDEX_KEYS = ("i", "index", "idx", "id", "candidate", "number", "n", "num")
_NAME_KEYS = ("relation", "entity", "name", "title", "candidate", "text", "label")
_SCORE_KEYS = ("score", "rating", "relevance", "value", "s", "probability", "confidence")


@dataclass(kw_only=True)
class Scores:
    values: list[float]  # len == n, each in [0, 1]
    reasons: list[str]  # len == n, "" when the model gave none
    fallback: str | None = None  # one of FALLBACKS, None when the reply was fully usable
    detail: str = ""  # what was recognised / what was wrong
    format: str = ""  # "json" | "tog" | "lines" | "numbers" | "" (nothing recognised)


@dataclass(kw_only=True)
class _Item:
    index: int | None  # explicit index given by the model (as written, before any 1-based shift)
    position: int  # order of appearance
    raw: float | None  # the number as written; None = unreadable
    scale: float | None = None  # explicit scale (100 for "%", 10 for "/10"), else inferred
    reason: str = ""


@dataclass(kw_only=True)
class _Notes:
    parts: list[str] = field(default_factory=list)

    def add(self, text: str) -> None:
        if text not in self.parts:
            self.parts.append(text)

    def __str__(self) -> str:
        return "; ".join(self.parts)


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[\W_]+", " ", text.casefold()).split())


def _scale_of(token: str | None) -> float | None:
    if not token:
        return None
    token = token.replace(" ", "").lower()
    if token == "%" or token.endswith("100"):
        return 100.0
    return 10.0


def _number_from_string(value: str) -> tuple[float | None, float | None]:
    lowered = value.strip().lower()
    if lowered in _WORD_SCORES:
        return _WORD_SCORES[lowered], 1.0
    match = _NUMBER_RE.search(value)
    if match is None:
        return None, None
    return float(match.group("num")), _scale_of(match.group("scale"))


def _value_of(value: Any) -> tuple[float | None, float | None]:
    """(number, explicit scale) of a JSON scalar; (None, None) when it is not a score."""
    if isinstance(value, bool):
        return (1.0 if value else 0.0), 1.0
    if isinstance(value, (int, float)):
        try:
            return float(value), None
        except OverflowError:  # a JSON integer beyond float range
            return None, None
    if isinstance(value, str):
        return _number_from_string(value)
    return None, None


def _match_candidate(name: str, candidates: list[str] | None) -> int | None:
    """Index of the candidate whose text the model echoed (exact, else unique containment)."""
    if not candidates:
        return None
    target = _norm(name)
    if not target:
        return None
    normed = [_norm(c) for c in candidates]
    exact = [k for k, c in enumerate(normed) if c == target]
    if len(exact) == 1:
        return exact[0]
    partial = [k for k, c in enumerate(normed) if c and (target in c or c in target)]
    return partial[0] if len(partial) == 1 else None


def _index_of_key(key: Any, candidates: list[str] | None) -> int | None:
    match = _KEY_INDEX_RE.match(str(key))
    if match:
        return int(match.group(1) or match.group(2))
    return _match_candidate(str(key), candidates)


def _items_from_json(value: Any, candidates: list[str] | None, depth: int = 0) -> list[_Item]:
    if depth > 4:
        return []
    if isinstance(value, dict):
        found, inner = get_key(value, _LIST_KEYS)
        if found and isinstance(inner, (list, dict)):
            items = _items_from_json(inner, candidates, depth + 1)
            if items:
                return items
        has_score, _ = get_key(value, _SCORE_KEYS)
        if has_score:  # a single scored object
            return [_item_from_object(value, 0, candidates)]
        items = []
        for position, (key, inner) in enumerate(value.items()):
            index = _index_of_key(key, candidates)
            if index is None:
                continue
            if isinstance(inner, dict):
                item = _item_from_object(inner, position, candidates)
                item.index = index
            else:
                raw, scale = _value_of(inner)
                item = _Item(index=index, position=position, raw=raw, scale=scale)
            items.append(item)
        return items
    if isinstance(value, list):
        items = []
        for position, element in enumerate(value):
            if isinstance(element, dict):
                items.append(_item_from_object(element, position, candidates))
            elif isinstance(element, list) and len(element) >= 2 and not isinstance(element[0], bool) \
                    and isinstance(element[0], (int, str)):
                raw, scale = _value_of(element[1])
                reason = short(element[2]) if len(element) > 2 else ""
                items.append(_Item(index=_index_of_key(element[0], candidates), position=position,
                                   raw=raw, scale=scale, reason=reason))
            else:
                raw, scale = _value_of(element)
                items.append(_Item(index=None, position=position, raw=raw, scale=scale))
        return items
    return []


def _item_from_object(obj: dict, position: int, candidates: list[str] | None) -> _Item:
    index: int | None = None
    found, raw_index = get_key(obj, _INDEX_KEYS)
    if found and not isinstance(raw_index, bool):
        if isinstance(raw_index, int):
            index = raw_index
        elif isinstance(raw_index, float) and raw_index.is_integer():
            index = int(raw_index)
        elif isinstance(raw_index, str):
            index = _index_of_key(raw_index, candidates)
    if index is None:
        found, name = get_key(obj, _NAME_KEYS)
        if found and isinstance(name, str):
            index = _index_of_key(name, candidates)
    _, score = get_key(obj, _SCORE_KEYS)
    raw, scale = _value_of(score)
    _, reason = get_key(obj, REASON_KEYS)
    return _Item(index=index, position=position, raw=raw, scale=scale,
                 reason=short(reason) if reason is not None else "")


def _useful_json(value: Any, text: str, n: int) -> bool:
    """Embedded lists like the ``[2]`` of ``[2] 0.3`` are not score lists."""
    if isinstance(value, dict):
        return True
    if isinstance(value, list) and value:
        if any(isinstance(e, (dict, list)) for e in value):
            return True
        return len(value) >= 2 or (n == 1 and text.strip().startswith("["))
    return False


def _items_from_tog(text: str, candidates: list[str] | None) -> list[_Item]:
    items = []
    for position, match in enumerate(_TOG_RE.finditer(text)):
        name = re.sub(r"^\s*(?:[-*•]|\d+[.)])\s*", "", match.group("name")).strip()
        index = _index_of_key(name, candidates) if name else None
        items.append(_Item(index=index, position=position, raw=float(match.group("num")),
                           scale=_scale_of(match.group("scale")),
                           reason=short(match.group("reason").strip(" :-–—"))))
    return items


def _score_in(rest: str) -> tuple[re.Match | None, str]:
    """The score inside the rest of an indexed line, and the text left over as the reason."""
    match = _LEADING_NUMBER_RE.match(rest) or _LABELLED_RE.search(rest)
    if match is None:
        plausible = [m for m in _NUMBER_RE.finditer(rest)
                     if _scale_of(m.group("scale")) is not None or 0 <= float(m.group("num")) <= 100]
        match = plausible[-1] if plausible else None
    if match is None:
        return None, rest
    reason = (rest[: match.start()] + " " + rest[match.end():]).strip(" :-–—,;()*")
    return match, reason


def _items_from_lines(text: str) -> tuple[list[_Item], str]:
    indexed: list[_Item] = []
    bare: list[_Item] = []
    for line in text.splitlines():
        match = _INDEXED_LINE_RE.match(line)
        if match:
            index = int(match.group("bracket") or match.group("paren") or match.group("word")
                        or match.group("plain"))
            number, reason = _score_in(match.group("rest"))
            indexed.append(_Item(index=index, position=len(indexed),
                                 raw=float(number.group("num")) if number else None,
                                 scale=_scale_of(number.group("scale")) if number else None,
                                 reason=short(reason) if number else ""))
            continue
        if _NUMBER_LIST_RE.match(line):
            for number in _NUMBER_RE.finditer(line):
                bare.append(_Item(index=None, position=len(bare), raw=float(number.group("num")),
                                  scale=_scale_of(number.group("scale"))))
            continue
        match = _BARE_LINE_RE.match(line)
        if match:
            bare.append(_Item(index=None, position=len(bare), raw=float(match.group("num")),
                              scale=_scale_of(match.group("scale")),
                              reason=short(match.group("reason") or "")))
    if any(item.raw is not None for item in indexed):
        return indexed, "lines"
    if bare:
        return bare, "numbers"
    return [], ""


def _resolve(items: list[_Item], n: int, notes: _Notes) -> tuple[list[float | None], list[str], int]:
    """Place items at candidate indices, normalise scales, clamp. Returns values (None = missing),
    reasons and the number of surplus entries dropped."""
    indices = [item.index for item in items if item.index is not None]
    shift = 0
    if indices and 0 not in indices and max(indices) == n and min(indices) >= 1:
        shift = 1
        notes.add("indices looked 1-based; shifted to 0-based")
    values: list[float | None] = [None] * n
    scales: list[float | None] = [None] * n
    reasons = [""] * n
    dropped = 0
    for item in items:
        index = item.position if item.index is None else item.index - shift
        if not 0 <= index < n:
            dropped += 1
            notes.add(f"entry for index {index} is outside 0..{n - 1}")
            continue
        if values[index] is not None:
            dropped += 1
            notes.add(f"duplicate entry for index {index} ignored")
            continue
        if item.raw is None or not math.isfinite(item.raw):
            notes.add(f"unreadable or NaN score for index {index}")
            continue
        values[index] = item.raw
        scales[index] = item.scale
        reasons[index] = item.reason
    implicit = [v for v, s in zip(values, scales, strict=True) if v is not None and s is None and v <= 100.0]
    inferred = 1.0
    top = max(implicit) if implicit else 0.0
    if top > 10.0:
        inferred = 100.0
    elif top >= 2.0 or (top > 1.0 and all(v.is_integer() for v in implicit)):
        inferred = 10.0  # "8" or "7.5" are 0–10 ratings; a stray 1.2 among 0–1 scores is clamped
    if inferred != 1.0:
        notes.add(f"scores read on a 0–{inferred:g} scale")
    for k in range(n):
        value = values[k]
        if value is None:
            continue
        given = scales[k]
        scale = given if given is not None else inferred
        if given is None and value > 100.0:
            notes.add(f"score {value:g} for index {k} is beyond any known scale")
            values[k] = None
            continue
        scaled = value / scale
        if not 0.0 <= scaled <= 1.0:
            notes.add("scores clamped to [0, 1]")
        values[k] = min(1.0, max(0.0, scaled))
    return values, reasons, dropped


def parse_scores(text: str, n: int, *, candidates: list[str] | None = None) -> Scores:
    """Scores for ``n`` numbered candidates from an LLM reply. Never raises; always ``n`` values
    in [0, 1]. ``candidates`` (the texts shown to the model) lets echoed names be matched."""
    if n <= 0:
        return Scores(values=[], reasons=[], detail="no candidates")
    body = strip_thinking((text or "")[:MAX_REPLY_CHARS])
    notes = _Notes()
    items: list[_Item] = []
    fmt = ""
    for value in json_values(body):
        if _useful_json(value, body, n):
            items = _items_from_json(value, candidates)
            if any(item.raw is not None for item in items):
                fmt = "json"
                break
            items = []
    if not items:
        items = _items_from_tog(body, candidates)
        fmt = "tog" if items else ""
    if not items:
        items, fmt = _items_from_lines(body)
    if not items:
        snippet = short(body, 80) or "(empty reply)"
        return Scores(values=[UNIFORM_SCORE] * n, reasons=[""] * n, fallback=FALLBACK_UNIFORM,
                      detail=f"no scores recognised in: {snippet}", format="")
    values, reasons, dropped = _resolve(items, n, notes)
    matched = sum(v is not None for v in values)
    if matched == 0:
        notes.add(f"none of {len(items)} {fmt} entries matched a candidate")
        return Scores(values=[UNIFORM_SCORE] * n, reasons=[""] * n, fallback=FALLBACK_UNIFORM,
                      detail=str(notes), format=fmt)
    fallback: str | None = None
    if matched < n:
        missing = [k for k, v in enumerate(values) if v is None]
        notes.add(f"{len(missing)} of {n} candidates unscored (indices {missing[:10]}), "
                  f"filled with {MISSING_SCORE:g}")
        fallback = FALLBACK_PARTIAL
    elif dropped:
        fallback = FALLBACK_EXTRA
    final = [MISSING_SCORE if v is None else float(v) for v in values]
    detail = f"{fmt}: {matched}/{n} scored" + (f"; {notes}" if notes.parts else "")
    return Scores(values=final, reasons=reasons, fallback=fallback, detail=detail, format=fmt)
