"""Reading what a model replies to the reading prompt (prompts.reading_prompt): the number of hops, the answer's
type word and the relation phrases in walking order. Pure functions; nothing here raises on a bad reply.

Tolerant of what chat models really send: JSON in a code fence or followed by prose, a Python-style dict with single
quotes, hops as 2, 2.0, "2", "two" or "2 hops", relations as a list or as one string ("wife -> born in"), a missing
field (the fields read are returned and the missing ones named in `detail`; the reader keeps the rules' for them).
When no field could be read the result names its fallback (FALLBACK_READING_UNPARSED).
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any

from tog_core.prompting.replies import MAX_REPLY_CHARS, get_key, json_values, short, strip_thinking

__all__ = ["ReadingReply", "parse_reading", "FALLBACK_READING_UNPARSED", "MAX_HOPS", "MAX_PHRASES"]

FALLBACK_READING_UNPARSED = "llm_reading_unparsed"  # no hops, type or relation phrase could be read
MAX_HOPS = 10  # the engine's largest depth
MAX_PHRASES = 10
PHRASE_CHARS = 80

_HOPS_KEYS = ("hops", "hop", "num_hops", "number_of_hops", "n_hops", "hop_count", "depth", "steps")
_TYPE_KEYS = ("answer_type", "type", "answer_kind", "kind", "asked", "asks_for")
_PHRASE_KEYS = ("relations", "relation_phrases", "phrases", "relation_path", "path", "chain", "relation")
_NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
                 "ten": 10, "single": 1, "once": 1, "twice": 2}
_NO_TYPE = {"", "unknown", "none", "n/a", "na", "null", "thing", "entity", "any", "other"}
_DICT_RE = re.compile(r"\{[^{}]*\}", re.DOTALL)  # a flat dict (the reply's shape), for the single-quoted fallback
_SPLIT_RE = re.compile(r"\s*(?:->|→|=>|>|;|,|\|)\s*")


@dataclass(kw_only=True)
class ReadingReply:
    """What the reply said: None / "" / [] for a field it did not give."""

    hops: int | None = None
    answer_type: str = ""
    phrases: list[str] = field(default_factory=list)
    fallback: str | None = None
    detail: str = ""

    @property
    def read_anything(self) -> bool:
        return self.hops is not None or bool(self.answer_type) or bool(self.phrases)


def _hops(value: Any) -> int | None:
    """A number of hops from 2, 2.0, "2", "two", "2 hops"; None when it is not one. Clamped to 1..MAX_HOPS."""
    n: int | None = None
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)) and value == value and abs(value) < 1e6:  # not NaN, not huge
        n = round(value)
    elif isinstance(value, str):
        low = value.strip().lower()
        digits = re.match(r"^\D{0,20}?(\d{1,3})\b", low)
        if digits:
            n = int(digits.group(1))
        else:
            n = next((v for w, v in _NUMBER_WORDS.items() if re.search(rf"\b{w}\b", low)), None)
    if n is None:
        return None
    return max(1, min(MAX_HOPS, n))


def _answer_type(value: Any) -> str:
    """The type word(s): a string, or the first string of a list; "" for unknown / none."""
    if isinstance(value, list):
        value = next((v for v in value if isinstance(v, str) and v.strip()), "")
    if not isinstance(value, str):
        return ""
    text = " ".join(value.strip().strip(".\"'`*").split())[:PHRASE_CHARS]
    text = re.sub(r"^(?:an?|the)\s+", "", text, flags=re.IGNORECASE)
    return "" if text.lower() in _NO_TYPE else text


def _phrases(value: Any) -> list[str]:
    """Relation phrases in order: a list of strings (or of {"relation": ...}), or one string split at -> , ; |."""
    if isinstance(value, str):
        items: list[Any] = _SPLIT_RE.split(value)
    elif isinstance(value, list):
        items = []
        for v in value:
            if isinstance(v, dict):
                v = get_key(v, ("relation", "phrase", "name", "text"))[1]
            if isinstance(v, str):
                items.append(v)
    else:
        return []
    out = []
    for item in items:
        text = " ".join(str(item).replace("_", " ").split()).strip(" .\"'`*")[:PHRASE_CHARS]
        if text:
            out.append(text)
    return out[:MAX_PHRASES]


def _dicts(body: str) -> list[tuple[dict, str]]:
    """Dicts in the reply, with how each was read: JSON (fenced, whole, embedded), then single-quoted literals."""
    found: list[tuple[dict, str]] = []
    for v in json_values(body):
        if isinstance(v, dict):  # the reading itself, or wrapped once ({"reading": {...}})
            found += [(v, "json")] + [(inner, "json") for inner in v.values() if isinstance(inner, dict)]
    if found:
        return found
    for m in _DICT_RE.finditer(body):
        try:
            value = ast.literal_eval(m.group(0))
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
        if isinstance(value, dict):
            found.append((value, "python literal"))
    return found


def parse_reading(text: str) -> ReadingReply:
    """The reading in a reply: the first dict that gives any of hops, answer type, relation phrases. Hops missing
    but phrases given: as many hops as phrases. Nothing readable: FALLBACK_READING_UNPARSED with what was seen."""
    body = strip_thinking((text or "")[:MAX_REPLY_CHARS])
    for value, how in _dicts(body):
        reply = ReadingReply(hops=_hops(get_key(value, _HOPS_KEYS)[1]),
                             answer_type=_answer_type(get_key(value, _TYPE_KEYS)[1]),
                             phrases=_phrases(get_key(value, _PHRASE_KEYS)[1]))
        if not reply.read_anything:
            continue
        missing = [name for name, got in (("hops", reply.hops is not None), ("answer_type", reply.answer_type),
                                          ("relations", reply.phrases)) if not got]
        if reply.hops is None and reply.phrases:
            reply.hops = min(MAX_HOPS, len(reply.phrases))
        reply.detail = how + (f"; missing {', '.join(missing)}" if missing else "")
        return reply
    return ReadingReply(fallback=FALLBACK_READING_UNPARSED,
                        detail=f"no hops, answer type or relations in: {short(body, 80) or '(empty reply)'}")
