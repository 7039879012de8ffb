"""The process-wide LLM concurrency limit (tog_core/llm/limits.py): one bound per provider across threads and
event loops, measured at the loopback fake server; round-robin fairness between sessions; cancellation and
closed loops never leak a slot; the default from TOG_LLM_CONCURRENCY."""
from __future__ import annotations

import asyncio
import threading
import time
import uuid

import pytest

from tog_core.llm.client import LLMClient, LLMConfig
from tog_core.llm.limits import ProviderLimiter, default_concurrency, limiter_for, session
from tog_core.testing.server import FakeOpenAIServer, last_user_message

KEY = "sk-test-limits-not-a-real-key"


def unique_model() -> str:
    """A provider no other test uses (limiters are process-wide, keyed by model + api_base)."""
    return f"openai/limits-{uuid.uuid4().hex[:8]}"


def client_for(srv: FakeOpenAIServer, model: str, **kw) -> LLMClient:
    return LLMClient(LLMConfig(model=model, api_base=srv.base_url, api_key=KEY, timeout_s=10, max_retries=0,
                               use_cache=False, **kw))


def user(text: str) -> list[dict]:
    return [{"role": "user", "content": text}]


class Counting:
    """A fake-server handler that takes `latency_s` and counts the requests it is answering. The reply leaves after
    the count drops, so a client can only release its slot after the server stopped counting it (the server's
    own max_concurrent counts until its thread has written the reply, a moment after the client got it)."""

    def __init__(self, latency_s: float) -> None:
        self.latency_s, self.in_flight, self.peak = latency_s, 0, 0
        self._lock = threading.Lock()

    def __call__(self, request: dict) -> str:
        with self._lock:
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
        time.sleep(self.latency_s)
        with self._lock:
            self.in_flight -= 1
        return "ok"


def test_twenty_threads_with_their_own_event_loops_never_exceed_the_limit() -> None:
    limit, threads, calls = 4, 20, 5
    model = unique_model()
    counting = Counting(0.05)
    with FakeOpenAIServer(counting) as srv:
        errors: list[BaseException] = []
        start = threading.Barrier(threads)

        def one_session(k: int) -> None:
            client = client_for(srv, model, concurrency=limit)  # a client per session, as a cache-less app has

            async def work() -> None:
                await asyncio.gather(*(client.complete(user(f"s{k} c{c}"), temperature=0) for c in range(calls)))

            try:
                start.wait()
                with session(f"s{k}"):
                    asyncio.run(work())
            except BaseException as err:  # noqa: BLE001 - reported below
                errors.append(err)

        pool = [threading.Thread(target=one_session, args=(k,)) for k in range(threads)]
        for t in pool:
            t.start()
        for t in pool:
            t.join(30)
        assert not errors, errors[:3]
        assert len(srv.requests) == threads * calls
        # the server answered at most `limit` requests at once, and the limit was really used (not serialised)
        assert counting.peak == limit
        stats = limiter_for(model, srv.base_url).stats()
        assert stats.peak == limit and stats.in_flight == 0 and stats.waiting == 0
        assert stats.granted == threads * calls


def test_a_late_single_call_is_not_starved_by_a_session_with_thirty_queued() -> None:
    model = unique_model()
    finished: dict[str, float] = {}
    lock = threading.Lock()
    with FakeOpenAIServer(lambda r: "ok", latency_s=0.06) as srv:
        client = client_for(srv, model, concurrency=2)  # one shared client; sessions told apart by context

        async def call(tag: str) -> None:
            await client.complete(user(tag), temperature=0)
            with lock:
                finished[tag] = time.monotonic()

        def heavy() -> None:
            async def work() -> None:
                await asyncio.gather(*(call(f"heavy {c}") for c in range(30)))
            with session("heavy"):
                asyncio.run(work())

        def light() -> None:
            with session("light"):
                asyncio.run(call("light"))

        big = threading.Thread(target=heavy)
        big.start()
        deadline = time.monotonic() + 10
        while len(srv.requests) < 4 and time.monotonic() < deadline:  # the heavy session is well under way
            time.sleep(0.01)
        assert client.limiter.stats().waiting >= 20  # its calls are queued
        small = threading.Thread(target=light)
        small.start()
        small.join(10)
        big.join(20)
    heavy_done = sorted(t for tag, t in finished.items() if tag.startswith("heavy"))
    assert len(heavy_done) == 30 and "light" in finished
    assert finished["light"] < heavy_done[-1]
    # round-robin: the light call was served within the next couple of free slots, not after the backlog
    later = [t for t in heavy_done if t > finished["light"]]
    assert len(later) >= 20, f"only {len(later)} heavy calls finished after the light one"
    order = [last_user_message(r) for r in srv.requests]
    assert order.index("light") <= 8, order[:10]


def test_fairness_order_is_round_robin_between_sessions() -> None:
    limiter = ProviderLimiter(1)
    served: list[str] = []

    async def run() -> None:
        await limiter.acquire("holder")

        async def one(name: str) -> None:
            await limiter.acquire(name)
            served.append(name)
            limiter.release()

        tasks = [asyncio.create_task(one(n)) for n in ("a", "a", "a", "b", "c", "c")]
        await asyncio.sleep(0)  # all queued
        limiter.release()
        await asyncio.gather(*tasks)

    asyncio.run(run())
    assert served == ["a", "b", "c", "a", "c", "a"]
    assert limiter.stats().in_flight == 0


def test_a_cancelled_waiter_gives_its_place_on_and_a_granted_one_its_slot() -> None:
    limiter = ProviderLimiter(1)

    async def run() -> None:
        await limiter.acquire("x")
        waiting = asyncio.create_task(limiter.acquire("y"))
        await asyncio.sleep(0)
        assert limiter.stats().waiting == 1
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        assert limiter.stats().waiting == 0
        # granted by release, then cancelled before it ran: the slot must come back
        granted = asyncio.create_task(limiter.acquire("z"))
        await asyncio.sleep(0)
        limiter.release()  # hands the slot to z (wake-up scheduled, not yet run)
        granted.cancel()
        with pytest.raises(asyncio.CancelledError):
            await granted
        assert limiter.stats().in_flight == 0
        await asyncio.wait_for(limiter.acquire("w"), 1)  # the slot is free again
        limiter.release()

    asyncio.run(run())


def test_a_waiter_whose_event_loop_closed_is_skipped() -> None:
    limiter = ProviderLimiter(1)
    loop = asyncio.new_event_loop()
    loop.run_until_complete(limiter.acquire("holder"))
    orphan = loop.create_task(limiter.acquire("gone"))
    loop.run_until_complete(asyncio.sleep(0))
    assert limiter.stats().waiting == 1
    # the loop stops without the waiter ever being resumed (an abandoned asyncio.run)
    loop.close()
    assert not orphan.done()

    async def next_user() -> None:
        waiter = asyncio.create_task(limiter.acquire("next"))
        await asyncio.sleep(0)
        limiter.release()  # the closed loop's waiter is skipped; "next" gets the slot
        await asyncio.wait_for(waiter, 1)
        limiter.release()

    asyncio.run(next_user())
    assert limiter.stats().in_flight == 0 and limiter.stats().waiting == 0


def test_raising_the_limit_wakes_waiters_and_release_without_acquire_is_an_error() -> None:
    limiter = ProviderLimiter(1)

    async def run() -> None:
        await limiter.acquire("a")
        second = asyncio.create_task(limiter.acquire("b"))
        await asyncio.sleep(0)
        assert not second.done()
        limiter.set_limit(2)
        await asyncio.wait_for(second, 1)
        assert limiter.stats().in_flight == 2
        limiter.release()
        limiter.release()

    asyncio.run(run())
    with pytest.raises(RuntimeError, match="without a matching acquire"):
        limiter.release()
    with pytest.raises(ValueError, match=">= 1"):
        ProviderLimiter(0)


def test_default_limit_comes_from_the_environment_when_a_client_is_made(monkeypatch) -> None:
    assert default_concurrency({}) == 8
    assert default_concurrency({"TOG_LLM_CONCURRENCY": "3"}) == 3
    with pytest.raises(ValueError, match="TOG_LLM_CONCURRENCY"):
        default_concurrency({"TOG_LLM_CONCURRENCY": "many"})
    model = unique_model()
    monkeypatch.setenv("TOG_LLM_CONCURRENCY", "5")
    client = LLMClient(LLMConfig(model=model, api_base="http://127.0.0.1:9/v1"))
    assert client.limiter.limit == 5
    other = LLMClient(LLMConfig(model=model, api_base="http://127.0.0.1:9/v1", api_key="sk-test-another-key"))
    assert other.limiter is client.limiter  # one limiter per provider, whatever the key
    explicit = LLMClient(LLMConfig(model=model, api_base="http://127.0.0.1:9/v1", concurrency=2))
    assert explicit.limiter is client.limiter and client.limiter.limit == 2
