"""One LLM concurrency limit per provider for the whole process, fair between sessions.

Streamlit runs each session's script in its own thread and the app calls ``asyncio.run`` per action, so a limit
held by one event loop (an ``asyncio.Semaphore``) bounds nothing across users: 20 sessions x 8 = 160 requests in
flight. :class:`ProviderLimiter` is a counter under a ``threading.Lock``; a call that finds every slot taken
queues a future of its own event loop, and the releasing call (in whatever thread or loop) hands its slot
directly to the next waiter and wakes it with ``loop.call_soon_threadsafe``. No thread blocks and nothing polls:
a queued call costs one future, and the hand-off takes one loop iteration (bench/load_sessions.py --handoff
measures it against a 5 ms poll).

Fairness: waiters queue per session (FIFO inside a session) and sessions are served round-robin, so a session
with 30 queued calls cannot starve another's single call: the latecomer gets one of the next few free slots.
The session of a call is ``llm_session`` (a context variable the app sets around its work, see :func:`session`)
or ``LLMConfig.session``, else the calling thread.

Limiters are keyed by provider (model + api_base, the base compared as a person means it: :func:`normalise_base`,
which TOG_ALLOWED_API_BASES compares with too, so spellings of one base share its slots), never by the API key. The
default limit is ``TOG_LLM_CONCURRENCY`` (read when a client is made, not at import), else 8; a client that asks
for an explicit ``LLMConfig.concurrency`` sets its provider's limit (the last one made wins; in one process they
agree).
"""
from __future__ import annotations

import asyncio
import contextlib
import contextvars
import os
import threading
from collections import deque
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from urllib.parse import urlsplit

__all__ = ["DEFAULT_CONCURRENCY", "ENV_CONCURRENCY", "ProviderLimiter", "LimiterStats", "default_concurrency",
           "limiter_for", "llm_session", "session", "current_session", "all_limiters", "normalise_base"]

DEFAULT_CONCURRENCY = 8
ENV_CONCURRENCY = "TOG_LLM_CONCURRENCY"

llm_session: contextvars.ContextVar[str | None] = contextvars.ContextVar("llm_session", default=None)


def normalise_base(url: str | None) -> str:
    """An API base compared as a person means it: scheme and host lower-case, default port and trailing '/' dropped
    (no user, password or query either). One provider's limiter here, one address for the key allow-list
    (llm/factory.server_key_may_go)."""
    if not url or not url.strip():
        return ""
    parts = urlsplit(url.strip())
    scheme, host = parts.scheme.lower(), (parts.hostname or "").lower()
    try:
        port = parts.port
    except ValueError:  # a port that is not a number: compare the text as typed
        return url.strip().rstrip("/").lower()
    default = {"http": 80, "https": 443}.get(scheme)
    netloc = host if port in (None, default) else f"{host}:{port}"
    if ":" in host:  # IPv6 literal
        netloc = f"[{host}]" if port in (None, default) else f"[{host}]:{port}"
    return f"{scheme}://{netloc}{parts.path.rstrip('/')}"


def default_concurrency(environ: dict[str, str] | None = None) -> int:
    """The process-wide default limit per provider: TOG_LLM_CONCURRENCY, else 8."""
    env = os.environ if environ is None else environ
    raw = (env.get(ENV_CONCURRENCY) or "").strip()
    if not raw:
        return DEFAULT_CONCURRENCY
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise ValueError(f"{ENV_CONCURRENCY}={raw!r} is not a whole number >= 1; set it to the number of LLM "
                         f"requests this process may have in flight per provider (e.g. 8), or unset it")
    return value


@contextlib.contextmanager
def session(session_id: str) -> Iterator[None]:
    """Every LLM call made inside (including tasks started inside, and ``asyncio.run`` from this thread)
    counts as ``session_id``'s for fairness."""
    token = llm_session.set(str(session_id))
    try:
        yield
    finally:
        llm_session.reset(token)


def current_session(default: str | None = None) -> str:
    """The session a call made now belongs to: the context variable, else ``default``, else this thread."""
    return llm_session.get() or default or f"thread-{threading.get_ident()}"


@dataclass(frozen=True, kw_only=True)
class LimiterStats:
    limit: int
    in_flight: int
    peak: int  # most slots ever held at once (since the last reset_peak)
    waiting: int
    granted: int  # slots handed out in total


class _Waiter:
    __slots__ = ("loop", "future", "session", "granted")

    def __init__(self, loop: asyncio.AbstractEventLoop, future: asyncio.Future, session_id: str) -> None:
        self.loop = loop
        self.future = future
        self.session = session_id
        self.granted = False


def _wake(future: asyncio.Future) -> None:
    if not future.done():
        future.set_result(None)


class ProviderLimiter:
    """At most ``limit`` slots held at once, across threads and event loops; waiters served round-robin by
    session. ``async with limiter.slot(session_id): ...`` around one provider request."""

    def __init__(self, limit: int = DEFAULT_CONCURRENCY) -> None:
        self._lock = threading.Lock()
        self._limit = self._checked(limit)
        self._in_flight = 0
        self._peak = 0
        self._granted = 0
        self._queues: dict[str, deque[_Waiter]] = {}
        self._turns: deque[str] = deque()  # sessions with waiters, in the order they will be served
        self._waiting = 0

    @staticmethod
    def _checked(limit: int) -> int:
        if int(limit) < 1:
            raise ValueError(f"an LLM concurrency limit must be >= 1, got {limit}")
        return int(limit)

    # --- observing -----------------------------------------------------------------------------
    @property
    def limit(self) -> int:
        return self._limit

    def stats(self) -> LimiterStats:
        with self._lock:
            return LimiterStats(limit=self._limit, in_flight=self._in_flight, peak=self._peak,
                                waiting=self._waiting, granted=self._granted)

    def reset_peak(self) -> None:
        with self._lock:
            self._peak = self._in_flight

    def set_limit(self, limit: int) -> None:
        """Change the limit; a raise wakes waiters at once, a cut lets the calls in flight finish."""
        limit = self._checked(limit)
        with self._lock:
            self._limit = limit
            self._grant_locked()

    # --- slots ---------------------------------------------------------------------------------
    async def acquire(self, session_id: str) -> None:
        loop = asyncio.get_running_loop()
        with self._lock:
            if self._in_flight < self._limit and not self._waiting:
                self._take_locked()
                return
            waiter = _Waiter(loop, loop.create_future(), session_id)
            queue = self._queues.get(session_id)
            if queue is None:
                queue = self._queues[session_id] = deque()
                self._turns.append(session_id)
            queue.append(waiter)
            self._waiting += 1
        try:
            await waiter.future
        except BaseException:  # cancelled while queued (or just after being granted): give the slot on
            with self._lock:
                if waiter.granted:
                    self._in_flight -= 1
                else:
                    self._forget_locked(waiter)
                self._grant_locked()
            raise

    def release(self) -> None:
        with self._lock:
            if self._in_flight <= 0:
                raise RuntimeError("ProviderLimiter.release() without a matching acquire()")
            self._in_flight -= 1
            self._grant_locked()

    @contextlib.asynccontextmanager
    async def slot(self, session_id: str) -> AsyncIterator[None]:
        await self.acquire(session_id)
        try:
            yield
        finally:
            self.release()

    # --- internals (called with the lock held) ---------------------------------------------------
    def _take_locked(self) -> None:
        self._in_flight += 1
        self._granted += 1
        self._peak = max(self._peak, self._in_flight)

    def _forget_locked(self, waiter: _Waiter) -> None:
        queue = self._queues.get(waiter.session)
        if queue is None or waiter not in queue:
            return
        queue.remove(waiter)
        self._waiting -= 1
        if not queue:
            del self._queues[waiter.session]
            self._turns.remove(waiter.session)

    def _grant_locked(self) -> None:
        while self._in_flight < self._limit and self._turns:
            session_id = self._turns.popleft()
            queue = self._queues[session_id]
            waiter = queue.popleft()
            self._waiting -= 1
            if queue:
                self._turns.append(session_id)  # round-robin: the session goes to the back of the line
            else:
                del self._queues[session_id]
            if waiter.future.done():  # cancelled; its own handler finds it gone from the queue
                continue
            try:
                waiter.loop.call_soon_threadsafe(_wake, waiter.future)
            except RuntimeError:  # its event loop is closed: nobody is waiting any more
                continue
            waiter.granted = True
            self._take_locked()


_registry_lock = threading.Lock()
_registry: dict[tuple[str, str], ProviderLimiter] = {}


def limiter_for(model: str, api_base: str | None, *, limit: int | None = None) -> ProviderLimiter:
    """The process-wide limiter of a provider (model + api_base, normalised: every spelling of one base is one
    provider). ``limit`` (when given) becomes its limit; a new limiter without one starts at
    :func:`default_concurrency`."""
    key = (model, normalise_base(api_base))
    with _registry_lock:
        limiter = _registry.get(key)
        if limiter is None:
            limiter = _registry[key] = ProviderLimiter(limit if limit is not None else default_concurrency())
            return limiter
    if limit is not None and limit != limiter.limit:
        limiter.set_limit(limit)
    return limiter


def all_limiters() -> dict[tuple[str, str], ProviderLimiter]:
    """Every provider's limiter in this process, by (model, normalised api_base): for the load test and diagnostics."""
    with _registry_lock:
        return dict(_registry)
