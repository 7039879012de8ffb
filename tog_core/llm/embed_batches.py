"""When a long encoding pauses: the run's between-batches hook (the app's ticker, a person's Stop heard between two
batches) and the background warm that gives way to every other thread's encoding."""

from __future__ import annotations

import contextlib
import contextvars
import threading
from collections.abc import Callable, Iterator

BACKGROUND_BATCH = 8  # texts a background thread encodes at a time: about a second of GraphRAG sentences
_THREAD = threading.local()
_FOREGROUND = [0]  # calls of threads not in the background, encoding or waiting to
_COUNT = threading.Lock()


BETWEEN_BATCH = 16  # texts encoded between two calls of a `between_batches` hook: about two seconds, at worst
_BETWEEN: contextvars.ContextVar[tuple[int, Callable[[], None]] | None] = contextvars.ContextVar(
    "tog_embed_between_batches", default=None)


@contextlib.contextmanager
def between_batches(hook: Callable[[], None]) -> Iterator[None]:
    """Within this block (and the asyncio tasks it starts), a long encoding calls `hook()` after every BETWEEN_BATCH
    texts, in the thread that set it only: the app's run ticker, as e5 blocks the search's event loop (a person's
    Stop waited for the whole encoding, up to 3.8 s a call on cold questions); what it raises ends the encoding."""
    token = _BETWEEN.set((threading.get_ident(), hook))
    try:
        yield
    finally:
        _BETWEEN.reset(token)


def hook_here() -> Callable[[], None] | None:
    """The between-batches hook set by this thread, if any."""
    got = _BETWEEN.get()
    return got[1] if got is not None and got[0] == threading.get_ident() else None


def is_background() -> bool:
    """Whether this thread is inside `in_background()`."""
    return getattr(_THREAD, "background", False)


def foreground_busy() -> bool:
    """Whether a thread not in the background is encoding or waiting to."""
    return bool(_FOREGROUND[0])


@contextlib.contextmanager
def foreground() -> Iterator[None]:
    """This thread counts as encoding (or about to) for the whole block, as one LocalEmbedder.embed call does:
    a warm in_background() waits until it ends."""
    if is_background():
        yield
        return
    with _COUNT:
        _FOREGROUND[0] += 1
    try:
        yield
    finally:
        with _COUNT:
            _FOREGROUND[0] -= 1


@contextlib.contextmanager
def in_background() -> Iterator[None]:
    """This thread's local embedding gives way to every other thread's (a warm the app runs beside the questions)."""
    before = is_background()
    _THREAD.background = True
    try:
        yield
    finally:
        _THREAD.background = before
