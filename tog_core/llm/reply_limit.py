"""How much of a reply is read: the size cap, and the stream reader that stops at it.

A reply is untrusted (a person may type an API base of their own): one is read up to :func:`reply_cap` characters
(what its ``max_tokens`` allows, generously, never over 1,000,000). A stream stops being read there and is closed
(:func:`read_stream` raises :class:`ReplyTooLong`); a reply that is not streamed is measured once LiteLLM has read
it. Either way the client refuses it as an ``LLMError`` ("bad_response", named ``reply_too_long``): never used,
never cached, and the caller falls back by name as for any failed call, so the trace records it.
"""
from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from tog_core.llm.cache import ENTRY_MAX_CHARS

log = logging.getLogger(__name__)
TOO_LONG = "reply_too_long"  # the name a refused over-long reply goes by in its LLMError, so in the trace
REPLY_CHARS_PER_TOKEN = 32  # a token is ~4 characters of text; 8x that covers the longest tokens (runs of spaces)
REPLY_MIN_CHARS = 16_384  # however small max_tokens, this much is read (a 128-token topic call, a compact score)
REPLY_MAX_CHARS = ENTRY_MAX_CHARS  # 1,000,000 characters: the ceiling whatever max_tokens (the cache's own)


def reply_cap(max_tokens: int) -> int:
    """The characters a reply asked for with `max_tokens` may have: 32 a token (a server honouring max_tokens sends
    far fewer), at least 16,384, at most 1,000,000. The app asks for 128 to 4,096 tokens: 16,384 to 131,072."""
    return min(REPLY_MAX_CHARS, max(REPLY_MIN_CHARS, REPLY_CHARS_PER_TOKEN * max(0, int(max_tokens))))


def too_long(cap: int, max_tokens: int) -> str:
    """The detail of a refused reply; it starts with TOO_LONG, which the client's hint and the trace go by."""
    return f"{TOO_LONG}: over {cap:,} characters for max_tokens={max_tokens}"


class ReplyTooLong(Exception):
    """A stream went past its cap: read no further and closed. The message is `too_long`'s."""


async def read_stream(response: Any, *, cap: int, max_tokens: int, budget_s: Callable[[], float],
                      on_token: Callable[[str], None], pieces: list[str]) -> Any:
    """Read a LiteLLM stream into `pieces` (each also given to `on_token` as it comes), each chunk within what is left
    of the call's deadline (`budget_s`); returns the last usage a chunk carried, or None. `pieces` is the caller's,
    so after a failure it knows what already reached the person. Past `cap` characters: closed, ReplyTooLong."""
    usage: Any = None
    received = 0
    iterator = response.__aiter__()
    while True:
        try:
            chunk = await asyncio.wait_for(iterator.__anext__(), budget_s())
        except StopAsyncIteration:
            return usage
        usage = getattr(chunk, "usage", None) or usage
        piece = chunk.choices[0].delta.content if chunk.choices else None
        if not piece:
            continue
        if received + len(piece) > cap:  # read no further: refused, the stream closed
            await close(response)
            raise ReplyTooLong(too_long(cap, max_tokens))
        pieces.append(piece)
        received += len(piece)
        on_token(piece)


async def close(response: Any) -> None:
    """Close a stream read no further (LiteLLM's stream wrapper has aclose), so its connection is let go now."""
    try:
        closing = getattr(response, "aclose", None)
        if closing is not None:
            await closing()
    except Exception:  # noqa: BLE001 - the reply is refused either way
        log.debug("closing a refused stream failed", exc_info=True)
