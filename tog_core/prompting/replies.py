"""Reading what chat models really reply, shared by the score parser and the verdict/entity parsers:
reasoning blocks dropped, JSON found in fences, whole text or embedded in prose, case-insensitive keys.
Pure functions; nothing here raises on a bad reply.
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

__all__ = ["strip_thinking", "short", "json_values", "get_key", "REASON_KEYS", "REASON_CHARS", "MAX_REPLY_CHARS",
           "MAX_JSON_STARTS"]

REASON_CHARS = 300
MAX_REPLY_CHARS = 20_000  # longer replies are parsed from their first this-many characters
MAX_JSON_STARTS = 200  # embedded-JSON decode attempts per source text

_FENCE_RE = re.compile(r"```[ \t]*(?:json|JSON|js)?[ \t]*\n?(.*?)```", re.DOTALL)
_THINK_RE = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.DOTALL | re.IGNORECASE)
_THINK_CLOSE_RE = re.compile(r"</(?:think|thinking|reasoning)>", re.IGNORECASE)
REASON_KEYS = ("reason", "why", "explanation", "rationale", "justification", "comment")


def strip_thinking(text: str) -> str:
    """Drop ``<think>…</think>`` blocks of reasoning models (and a dangling prefix before ``</think>``)."""
    text = _THINK_RE.sub(" ", text)
    closes = list(_THINK_CLOSE_RE.finditer(text))
    if closes:
        text = text[closes[-1].end():]
    return text.strip()


def short(text: Any, limit: int = REASON_CHARS) -> str:
    value = " ".join(str(text).split())
    return value if len(value) <= limit else value[: limit - 1] + "…"


def json_values(text: str) -> Iterator[Any]:
    """JSON values found in the text: fenced blocks, the whole text, then embedded objects/lists."""
    decoder = json.JSONDecoder()
    sources = [m.group(1) for m in _FENCE_RE.finditer(text)] + [text]
    for source in sources:
        stripped = source.strip()
        try:
            yield json.loads(stripped)
            continue
        except (json.JSONDecodeError, RecursionError):
            pass
        pos = 0
        for _attempt in range(MAX_JSON_STARTS):
            starts = [p for p in (stripped.find("{", pos), stripped.find("[", pos)) if p >= 0]
            if not starts:
                break
            start = min(starts)
            try:
                value, end = decoder.raw_decode(stripped, start)
            except (json.JSONDecodeError, RecursionError):
                pos = start + 1
                continue
            yield value
            pos = end


def get_key(obj: dict, keys: tuple[str, ...]) -> tuple[bool, Any]:
    lowered = {str(k).strip().lower(): v for k, v in obj.items()}
    for key in keys:
        if key in lowered:
            return True, lowered[key]
    return False, None
