"""The OpenAI wire format as the fake server speaks it: scripted replies with fault injection, a rule-based
handler, deterministic embeddings, and small helpers to read a chat request. Standard library only.
"""
from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Reply", "Handler", "script", "hashed_embedding", "last_user_message", "content_text", "count_tokens",
           "error_body", "DEFAULT_EMBEDDING_DIM", "TOKEN_RE"]

DEFAULT_EMBEDDING_DIM = 64
TOKEN_RE = re.compile(r"\S+\s*|\s+")
_WORD_RE = re.compile(r"\w+", re.UNICODE)


@dataclass(kw_only=True)
class Reply:
    """A scripted reply with optional fault injection.

    ``raw_body`` (bytes or str) replaces the JSON body entirely (for malformed-response tests).
    ``break_stream_after`` sends that many content chunks of a streamed reply, then drops the
    connection without finishing the chunked body.
    """

    text: str = ""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    raw_body: bytes | str | None = None
    break_stream_after: int | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    finish_reason: str = "stop"


Handler = Callable[[dict], "str | Reply"]


def last_user_message(request: dict) -> str:
    """The text of the last ``user`` message of a chat request ('' when there is none)."""
    for message in reversed(request.get("messages") or []):
        if message.get("role") == "user":
            return content_text(message.get("content"))
    return ""


def content_text(content: Any) -> str:
    """The text of a message's content: a string or OpenAI "content parts"."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # OpenAI "content parts"
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


def script(rules: Iterable[tuple[str, str | Reply]], default: str | Reply = "") -> Handler:
    """A handler that answers with the first rule whose regex matches the last user message."""
    compiled = [(re.compile(pattern, re.IGNORECASE | re.DOTALL), reply) for pattern, reply in rules]

    def handler(request: dict) -> str | Reply:
        text = last_user_message(request)
        for pattern, reply in compiled:
            if pattern.search(text):
                return reply
        return default

    return handler


def hashed_embedding(text: str, dim: int = DEFAULT_EMBEDDING_DIM) -> list[float]:
    """A deterministic unit vector: signed feature hashing of lower-cased words.

    Texts sharing words get positively correlated vectors, so similarity-based code has something
    meaningful to rank; the empty text maps to a fixed unit vector.
    """
    vec = [0.0] * dim
    words = _WORD_RE.findall(text.lower()) or ["<empty>"]
    for word in words:
        digest = hashlib.sha256(word.encode("utf-8")).digest()
        index = int.from_bytes(digest[:4], "little") % dim
        sign = 1.0 if digest[4] & 1 else -1.0
        vec[index] += sign
    norm = math.sqrt(sum(v * v for v in vec)) or 1.0
    return [v / norm for v in vec]


def count_tokens(text: str) -> int:
    return len(TOKEN_RE.findall(text))


def error_body(message: str, kind: str) -> dict:
    return {"error": {"message": message, "type": kind, "param": None, "code": kind}}
