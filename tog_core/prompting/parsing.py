"""Tolerant parsers for what LLMs really reply, with explicit named fallbacks. Pure functions.

``parse_sufficient`` reads the evaluate stage's yes/no; ``parse_entities`` the topic entity list. The
candidate-score parser lives in ``tog/score_parsing.py`` and the shared reply reading in ``tog/replies.py``;
both are re-exported here, so ``from tog_core.prompting.parsing import parse_scores`` keeps working.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from tog_core.prompting.replies import MAX_REPLY_CHARS, REASON_KEYS, get_key, json_values, short, strip_thinking
from tog_core.prompting.score_parsing import (FALLBACK_EXTRA, FALLBACK_PARTIAL, FALLBACK_UNIFORM, MISSING_SCORE,
                                        SCORE_FALLBACKS, UNIFORM_SCORE, Scores, parse_scores)

__all__ = [
    "Scores", "Verdict", "Entities", "parse_scores", "parse_sufficient", "parse_entities",
    "parse_entities_result", "strip_thinking",
    "FALLBACK_UNIFORM", "FALLBACK_PARTIAL", "FALLBACK_EXTRA", "FALLBACK_EVALUATE_NO",
    "FALLBACK_NO_ENTITIES", "FALLBACKS", "UNIFORM_SCORE", "MISSING_SCORE",
]

FALLBACK_EVALUATE_NO = "evaluate_default_no"  # no readable yes/no: keep exploring
FALLBACK_NO_ENTITIES = "no_entities_found"  # no entity names could be read
FALLBACKS = SCORE_FALLBACKS + (FALLBACK_EVALUATE_NO, FALLBACK_NO_ENTITIES)

MAX_ENTITIES = 20


@dataclass(kw_only=True)
class Verdict:
    sufficient: bool
    reason: str
    fallback: str | None = None
    detail: str = ""


@dataclass(kw_only=True)
class Entities:
    names: list[str]
    fallback: str | None = None
    detail: str = ""


# --------------------------------------------------------------------------------------------
# evaluate: yes / no

_VERDICT_KEYS = ("sufficient", "is_sufficient", "enough", "answerable", "can_answer", "sufficiency",
                 "verdict", "decision", "answer", "result")
_YES_WORDS = {"yes", "y", "true", "sufficient", "enough", "answerable", "1"}
_NO_WORDS = {"no", "n", "false", "insufficient", "not sufficient", "not enough", "unanswerable", "0"}
_NEGATIVE_RE = re.compile(r"\b(?:not\s+(?:sufficient|enough)|insufficient|cannot\s+(?:be\s+)?answer|"
                          r"can't\s+(?:be\s+)?answer|unable\s+to\s+answer|need\s+more|more\s+information"
                          r"\s+is\s+needed|not\s+possible\s+to\s+answer)\b", re.IGNORECASE)
_POSITIVE_RE = re.compile(r"\b(?:sufficient|enough\s+to\s+answer|can\s+(?:be\s+)?answer(?:ed)?)\b",
                          re.IGNORECASE)
_LEADING_VERDICT_RE = re.compile(r"^\W*(yes|no|true|false)\b\W*(.*)$", re.IGNORECASE | re.DOTALL)
_TOG_VERDICT_RE = re.compile(r"\{\s*(yes|no)\s*\}", re.IGNORECASE)


def _truth(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        lowered = " ".join(value.strip().strip(".!").lower().split())
        if lowered in _YES_WORDS:
            return True
        if lowered in _NO_WORDS:
            return False
    return None


def parse_sufficient(text: str) -> Verdict:
    """The evaluate stage's verdict. Unreadable → ``sufficient=False`` with FALLBACK_EVALUATE_NO."""
    body = strip_thinking((text or "")[:MAX_REPLY_CHARS])
    for value in json_values(body):
        if not isinstance(value, dict):
            continue
        found, raw = get_key(value, _VERDICT_KEYS)
        verdict = _truth(raw) if found else None
        if verdict is not None:
            _, reason = get_key(value, REASON_KEYS)
            return Verdict(sufficient=verdict, reason=short(reason or ""), detail="json")
    tog = _TOG_VERDICT_RE.search(body)
    if tog:
        rest = body[tog.end():].strip(" .:-–—\n")
        return Verdict(sufficient=tog.group(1).lower() == "yes", reason=short(rest), detail="tog")
    leading = _LEADING_VERDICT_RE.match(body)
    if leading:
        return Verdict(sufficient=leading.group(1).lower() in ("yes", "true"),
                       reason=short(leading.group(2)), detail="leading word")
    if _NEGATIVE_RE.search(body):
        return Verdict(sufficient=False, reason=short(body), detail="negative phrase")
    yes = re.search(r"\byes\b", body, re.IGNORECASE) is not None
    no = re.search(r"\bno\b", body, re.IGNORECASE) is not None
    if yes != no:
        return Verdict(sufficient=yes, reason=short(body), detail="yes/no word")
    if not yes and _POSITIVE_RE.search(body):
        return Verdict(sufficient=True, reason=short(body), detail="positive phrase")
    problem = "both yes and no" if yes and no else "no yes/no found"
    return Verdict(sufficient=False, reason="", fallback=FALLBACK_EVALUATE_NO,
                   detail=f"{problem} in: {short(body, 80) or '(empty reply)'}")


# --------------------------------------------------------------------------------------------
# topic entities

_ENTITY_LIST_KEYS = ("entities", "topic_entities", "names", "topics", "entity", "topic_entity")
_BULLET_RE = re.compile(r"^\s*(?:[-*•]|\d+[.)]|\[\d+\])\s*(.+?)\s*$")
_QUOTED_RE = re.compile(r"[\"“”']([^\"“”'\n]{1,100})[\"“”']")


def _clean_name(value: Any) -> str:
    name = " ".join(str(value).split()).strip(" \"'“”`*_.,;:")
    return name[:200]


def _names_from_json(value: Any) -> list[str] | None:
    if isinstance(value, dict):
        found, inner = get_key(value, _ENTITY_LIST_KEYS)
        if not found:
            return None
        value = [inner] if isinstance(inner, str) else inner
    if not isinstance(value, list):
        return None
    names = []
    for element in value:
        if isinstance(element, str):
            names.append(element)
        elif isinstance(element, dict):
            found, name = get_key(element, ("name", "title", "entity", "text"))
            if found and isinstance(name, str):
                names.append(name)
    return names


def _dedupe(names: list[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for raw in names:
        name = _clean_name(raw)
        key = name.casefold()
        if name and key not in seen:
            seen.add(key)
            out.append(name)
    return out[:MAX_ENTITIES]


def parse_entities_result(text: str) -> Entities:
    """Topic entity names with the fallback (if any) and what was recognised."""
    body = strip_thinking((text or "")[:MAX_REPLY_CHARS])
    for value in json_values(body):
        names = _names_from_json(value)
        if names is not None:
            cleaned = _dedupe(names)
            if cleaned:
                return Entities(names=cleaned, detail="json")
            return Entities(names=[], fallback=FALLBACK_NO_ENTITIES, detail="json list was empty")
    lines = [line for line in body.splitlines() if line.strip()]
    bullets = [m.group(1) for m in map(_BULLET_RE.match, lines) if m]
    if bullets:
        return Entities(names=_dedupe(bullets), detail="list lines")
    if len(lines) == 1:
        parts = [p for p in re.split(r"[;,|]", lines[0]) if p.strip()]
        if parts and all(len(p.split()) <= 6 for p in parts):
            return Entities(names=_dedupe(parts), detail="separated names")
    quoted = _QUOTED_RE.findall(body)
    if quoted:
        return Entities(names=_dedupe(quoted), detail="quoted names")
    return Entities(names=[], fallback=FALLBACK_NO_ENTITIES,
                    detail=f"no entity names in: {short(body, 80) or '(empty reply)'}")


def parse_entities(text: str) -> list[str]:
    """Topic entity names (empty when none could be read; see ``parse_entities_result``)."""
    return parse_entities_result(text).names
