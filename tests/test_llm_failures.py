"""The LLM seam's failures through real LiteLLM code, against the fake server on 127.0.0.1: retries with backoff
(Retry-After honoured, bounded), errors classified (rate limit, timeout, refused connection, unreadable body, bad
request), and the bounded time a hung provider costs. Helpers: test_llm.py."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
from llmkit import KEY, MODEL, Sleeps, free_closed_port, make_client, user

from tog_core.testing.server import FakeOpenAIServer, Reply
from tog_core.llm.client import LLMClient, LLMConfig, LLMError


# --- retries and errors ----------------------------------------------------------------------

def test_retry_on_500_then_success() -> None:
    lock = threading.Lock()
    seen = {"n": 0}

    def handler(request: dict) -> str | Reply:
        with lock:
            seen["n"] += 1
            return Reply(status=500, text="boom") if seen["n"] <= 2 else "recovered"

    with FakeOpenAIServer(handler) as srv:
        sleeps = Sleeps()
        client = make_client(srv, sleeps, backoff_base_s=0.5, backoff_max_s=8.0)
        result = asyncio.run(client.complete(user("x"), temperature=0))
        assert result.text == "recovered" and result.retries == 2
        assert len(srv.requests) == 3
        assert client.usage.retries == 2 and client.usage.calls == 1
        # exponential backoff with jitter in [base/2, base]: 0.25–0.5 then 0.5–1.0
        assert 0.25 <= sleeps.delays[0] <= 0.5 and 0.5 <= sleeps.delays[1] <= 1.0


def test_retries_are_bounded() -> None:
    with FakeOpenAIServer(lambda r: Reply(status=503, text="down")) as srv:
        sleeps = Sleeps()
        client = make_client(srv, sleeps, max_retries=2)
        with pytest.raises(LLMError) as caught:
            asyncio.run(client.complete(user("x"), temperature=0))
        assert caught.value.kind == "server" and caught.value.attempts == 3
        assert len(srv.requests) == 3 and len(sleeps.delays) == 2
        assert MODEL in str(caught.value)
        assert client.usage.failures == 1


def test_rate_limit_honours_retry_after() -> None:
    replies = iter([Reply(status=429, headers={"Retry-After": "7"}, text="slow down"),
                    Reply(status=429, headers={"Retry-After": "3600"}, text="slow down"),
                    "finally"])
    with FakeOpenAIServer(lambda r: next(replies)) as srv:
        sleeps = Sleeps()
        client = make_client(srv, sleeps, retry_after_max_s=20.0, deadline_s=60.0)
        result = asyncio.run(client.complete(user("x"), temperature=0))
        assert result.text == "finally" and result.retries == 2
        assert sleeps.delays[0] == pytest.approx(7.0)
        assert sleeps.delays[1] == pytest.approx(20.0)  # an hour is capped


def test_retry_after_beyond_the_call_deadline_fails_at_once() -> None:
    with FakeOpenAIServer(lambda r: Reply(status=429, headers={"Retry-After": "7"}, text="slow down")) as srv:
        sleeps = Sleeps()
        client = make_client(srv, sleeps, retry_after_max_s=20.0, deadline_s=5.0)
        with pytest.raises(LLMError) as caught:
            asyncio.run(client.complete(user("x"), temperature=0))
        assert caught.value.kind == "rate_limit" and caught.value.attempts == 1
        assert sleeps.delays == [] and len(srv.requests) == 1  # waiting 7 s would break the 5 s deadline


def test_rate_limit_exhausted_is_rate_limit_error() -> None:
    with FakeOpenAIServer(lambda r: Reply(status=429, text="quota")) as srv:
        client = make_client(srv, max_retries=1)
        with pytest.raises(LLMError) as caught:
            asyncio.run(client.complete(user("x"), temperature=0))
        assert caught.value.kind == "rate_limit"
        assert "concurrency" in str(caught.value)


def test_timeout_after_max_retries() -> None:
    # litellm builds its OpenAI client on the first call (imports that take seconds on a cold disk, with no .pyc
    # written): warm it on a server that answers, so the 0.2 s tries below time the server, not the imports
    with FakeOpenAIServer(lambda r: Reply(text="ok")) as fast:
        assert asyncio.run(make_client(fast).complete(user("x"), temperature=0)).text == "ok"
    with FakeOpenAIServer(lambda r: Reply(delay_s=30, text="too late")) as srv:
        sleeps = Sleeps()
        client = make_client(srv, sleeps, timeout_s=0.2, max_retries=1, deadline_s=2.0)
        with pytest.raises(LLMError) as caught:
            asyncio.run(client.complete(user("x"), temperature=0))
        assert caught.value.kind == "timeout" and caught.value.attempts == 2
        assert len(srv.requests) == 2 and len(sleeps.delays) == 1
        assert "raise the timeout" in str(caught.value)


def test_connection_refused_fails_fast() -> None:
    port = free_closed_port()
    sleeps = Sleeps()
    client = LLMClient(LLMConfig(model=MODEL, api_base=f"http://127.0.0.1:{port}/v1", api_key=KEY),
                       sleep=sleeps)
    with pytest.raises(LLMError) as caught:
        asyncio.run(client.complete(user("x"), temperature=0))
    assert caught.value.kind == "connection"
    assert f"127.0.0.1:{port}" in str(caught.value)
    assert sleeps.delays == []  # refused = nothing listening: not retried


def test_unreadable_body_is_bad_response() -> None:
    with FakeOpenAIServer(lambda r: Reply(raw_body="<html>not an API</html>")) as srv:
        sleeps = Sleeps()
        client = make_client(srv, sleeps)
        with pytest.raises(LLMError) as caught:
            asyncio.run(client.complete(user("x"), temperature=0))
        assert caught.value.kind == "bad_response"
        assert "/v1" in str(caught.value) and sleeps.delays == []


@pytest.mark.parametrize("status, kind", [(400, "bad_request"), (404, "model")])
def test_bad_request_is_not_retried(status: int, kind: str) -> None:
    """A rejected request (400) and a model or path the provider does not have (404) fail at once, unretried."""
    with FakeOpenAIServer(lambda r: Reply(status=status, text="model not found")) as srv:
        client = make_client(srv)
        with pytest.raises(LLMError) as caught:
            asyncio.run(client.complete(user("x"), temperature=0))
        assert caught.value.kind == kind and len(srv.requests) == 1


# --- bounded time for a hung provider ---------------------------------------------------------

def test_a_hung_provider_costs_at_most_the_call_deadline() -> None:
    with FakeOpenAIServer(lambda r: Reply(delay_s=30, text="too late")) as srv:
        # real backoff sleeps: everything (attempts, backoff) must fit in 1.5 x timeout_s = 0.45 s
        client = LLMClient(LLMConfig(model=MODEL, api_base=srv.base_url, api_key=KEY, timeout_s=0.3,
                                     max_retries=5, backoff_base_s=0.05))
        t0 = time.monotonic()
        with pytest.raises(LLMError) as caught:
            asyncio.run(client.complete(user("x"), temperature=0))
        spent = time.monotonic() - t0
        assert caught.value.kind == "timeout" and caught.value.attempts >= 2  # a retry got what was left
        assert len(srv.requests) < 6  # five retries would be allowed, the deadline stops them
        assert 0.3 <= spent < 0.45 + 0.35, spent
        assert "at most 0.45s a call" in str(caught.value)


def test_the_streamed_answer_gets_a_longer_timeout_than_a_scoring_call() -> None:
    with FakeOpenAIServer(lambda r: Reply(delay_s=0.4, text="slow but fine")) as srv:
        client = make_client(srv, timeout_s=0.2, max_retries=0)  # stream: 3 x 0.2 = 0.6 s a try
        tokens: list[str] = []  # the stream first: a timed-out call opens the run's circuit (llm/circuit.py)
        result = asyncio.run(client.stream(user("answer"), temperature=0, on_token=tokens.append))
        assert result.text == "slow but fine" == "".join(tokens)
        with pytest.raises(LLMError) as caught:
            asyncio.run(client.complete(user("score"), temperature=0))
        assert caught.value.kind == "timeout"


def test_a_hung_stream_costs_at_most_its_deadline() -> None:
    with FakeOpenAIServer(lambda r: Reply(delay_s=30, text="never")) as srv:
        client = LLMClient(LLMConfig(model=MODEL, api_base=srv.base_url, api_key=KEY, timeout_s=5,
                                     stream_timeout_s=0.3, max_retries=5, backoff_base_s=0.05))
        t0 = time.monotonic()
        with pytest.raises(LLMError) as caught:
            asyncio.run(client.stream(user("x"), temperature=0, on_token=lambda t: None))
        spent = time.monotonic() - t0
        assert caught.value.kind == "timeout" and 0.3 <= spent < 0.45 + 0.35, spent
