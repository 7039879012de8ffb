"""A toy "LLM" for tests: a pure function from a chat request to a reply, served over real HTTP by
tog_core.testing.server.FakeOpenAIServer so LiteLLM's own code runs.

It scores candidates by word overlap with the question, judges chains sufficient when they mention
every question word, and answers with the end of the first chain — simple enough to check by eye.
"""
from __future__ import annotations

import json
import re

from tog_core.testing.server import last_user_message
from tog_core.scoring.text import tokens

_Q = re.compile(r"^Question:\s*(.*)$", re.MULTILINE)
_CAND = re.compile(r"^\[(\d+)\]\s*(.*)$", re.MULTILINE)
_WH = {"who", "what", "which", "where", "when", "how"}


def question_of(text: str) -> str:
    m = _Q.search(text)
    return m.group(1) if m else ""


def overlap_scores(question: str, text: str) -> list[dict]:
    q = set(tokens(question)) - _WH
    items = []
    for i, cand in _CAND.findall(text):
        words = set(tokens(cand))
        score = len(q & words) / max(1, len(q))
        items.append({"i": int(i), "score": round(score, 3), "reason": f"{len(q & words)} shared words"})
    return items


def toy_llm(request: dict) -> str:
    text = last_user_message(request)
    if "Reply with JSON only: {\"entities\"" in text or "named entities this question" in text:
        return json.dumps({"entities": []})
    if "enough to answer" in text:
        q = set(tokens(question_of(text))) - _WH
        chains = text.split("Knowledge chains from the graph:", 1)[-1]
        covered = any(line.startswith("[") and q <= set(tokens(line)) for line in chains.splitlines())
        return json.dumps({"sufficient": covered, "reason": "all question words covered" if covered else "not yet"})
    if "Answer the question" in text:
        chains = [line for line in text.splitlines() if line.startswith("[1]")]
        end = chains[0].rsplit(" ", 1)[-1] if chains else "unknown"
        return f"The answer is {end} [1]."
    if "in candidate order" in text:  # the compact format: a bare list of numbers
        return json.dumps({"scores": [item["score"] for item in overlap_scores(question_of(text), text)]})
    if "score" in text:
        return json.dumps({"scores": overlap_scores(question_of(text), text)})
    return "I cannot help with that."
