"""The LLM seam through real LiteLLM code, talking HTTP to the fake server on 127.0.0.1. Retries, errors and the
bounded time of a hung provider: test_llm_failures.py; the test doubles themselves: test_test_doubles.py."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tog_core.testing.server import FakeOpenAIServer, Reply, script
from tog_core.llm.client import LLMClient, LLMConfig, LLMError, ClientUsage, register_zero_cost
from tog_core.llm.limits import all_limiters
from llmkit import KEY, MODEL, Sleeps, make_client, user


@pytest.fixture
def server(fake_openai) -> FakeOpenAIServer:
    return fake_openai(script([(r"capital of France", "Paris")], default="ok"))


# --- plain completion ------------------------------------------------------------------------

def test_completion_round_trip(server: FakeOpenAIServer) -> None:
    client = make_client(server)
    result = asyncio.run(client.complete(user("What is the capital of France?"), temperature=0.4,
                                         max_tokens=32))
    assert result.text == "Paris"
    assert not result.cached and result.retries == 0
    assert result.prompt_tokens > 0 and result.completion_tokens == 1
    sent = server.requests[0]
    assert sent["model"] == "test-model"
    assert sent["messages"] == user("What is the capital of France?")
    assert sent["temperature"] == 0.4 and sent["max_tokens"] == 32
    assert "response_format" not in sent  # no schema asked, no JSON mode
    assert server.auth_headers == [f"Bearer {KEY}"]
    assert client.usage.calls == 1 and client.usage.cache_hits == 0
    assert client.usage.prompt_tokens == result.prompt_tokens


def test_json_mode_request_is_sent(server: FakeOpenAIServer) -> None:
    client = make_client(server)
    result = asyncio.run(client.complete(user("score these"), temperature=0,
                                         json_schema={"title": "scores", "type": "object"}))
    # LiteLLM does not know "openai/test-model" supports schemas, but OpenAI-style json_object works
    assert server.requests[0]["response_format"] == {"type": "json_object"}
    assert result.response_format == "json_object"


def test_json_schema_sent_when_litellm_knows_the_model_supports_it(server: FakeOpenAIServer) -> None:
    import litellm

    litellm.register_model({"openai/schema-test-model": {
        "litellm_provider": "openai", "mode": "chat", "supports_response_schema": True,
        "input_cost_per_token": 0.0, "output_cost_per_token": 0.0}})
    client = make_client(server, model="openai/schema-test-model")
    schema = {"title": "scores", "type": "object", "properties": {"x": {"type": "number"}}}
    asyncio.run(client.complete(user("score"), temperature=0, json_schema=schema))
    sent = server.requests[0]["response_format"]
    assert sent["type"] == "json_schema"
    assert sent["json_schema"]["name"] == "scores" and sent["json_schema"]["schema"] == schema


def test_json_mode_degrades_when_the_server_rejects_it() -> None:
    def handler(request: dict) -> str | Reply:
        if "response_format" in request:
            return Reply(status=400, text="response_format is not supported by this server")
        return '{"scores": []}'

    with FakeOpenAIServer(handler) as srv:
        client = make_client(srv)

        async def two_calls() -> tuple:
            first = await client.complete(user("a"), temperature=0, json_schema={"type": "object"})
            second = await client.complete(user("b"), temperature=0, json_schema={"type": "object"})
            return first, second

        first, second = asyncio.run(two_calls())
        assert first.text == '{"scores": []}' and first.response_format is None
        assert first.retries == 1
        assert [("response_format" in r) for r in srv.requests] == [True, False, False]
        assert second.retries == 0


def test_json_mode_off(server: FakeOpenAIServer) -> None:
    client = make_client(server, json_mode=False)
    asyncio.run(client.complete(user("x"), temperature=0, json_schema={"type": "object"}))
    assert "response_format" not in server.requests[0]


# --- streaming -------------------------------------------------------------------------------

def test_stream_tokens_arrive_in_order() -> None:
    answer = "The director of Inception is Christopher Nolan [1]."
    with FakeOpenAIServer(lambda request: answer) as srv:
        client = make_client(srv)
        tokens: list[str] = []
        result = asyncio.run(client.stream(user("who?"), temperature=0, on_token=tokens.append))
        assert len(tokens) > 3
        assert "".join(tokens) == answer == result.text
        assert srv.requests[0]["stream"] is True
        assert srv.requests[0]["stream_options"] == {"include_usage": True}
        assert result.completion_tokens == len(answer.split())  # from the stream's usage chunk
        assert client.usage.calls == 1


def test_stream_is_cached_and_replayed(server: FakeOpenAIServer) -> None:
    client = make_client(server)

    async def twice() -> tuple[list[str], list[str]]:
        first: list[str] = []
        second: list[str] = []
        await client.stream(user("capital of France?"), temperature=0, on_token=first.append)
        replay = await client.stream(user("capital of France?"), temperature=0, on_token=second.append)
        assert replay.cached
        return first, second

    first, second = asyncio.run(twice())
    assert "".join(first) == "".join(second) == "Paris"
    assert len(server.requests) == 1


def test_stream_retried_before_the_first_token() -> None:
    replies = iter([Reply(status=502, text="bad gateway"), "fine now"])
    with FakeOpenAIServer(lambda r: next(replies)) as srv:
        sleeps = Sleeps()
        client = make_client(srv, sleeps)
        tokens: list[str] = []
        result = asyncio.run(client.stream(user("x"), temperature=0, on_token=tokens.append))
        assert "".join(tokens) == "fine now" and result.retries == 1
        assert len(srv.requests) == 2 and len(sleeps.delays) == 1


def test_broken_stream_raises_without_retry() -> None:
    with FakeOpenAIServer(lambda r: Reply(text="one two three four five", break_stream_after=2)) as srv:
        sleeps = Sleeps()
        client = make_client(srv, sleeps)
        tokens: list[str] = []
        with pytest.raises(LLMError) as caught:
            asyncio.run(client.stream(user("x"), temperature=0, on_token=tokens.append))
        assert caught.value.kind == "connection"
        assert "stream broke after" in str(caught.value)
        text = "".join(tokens)
        # Whatever the network timing, the caller never sees a token twice: an attempt that already
        # streamed tokens is not retried, so the text is a prefix of one attempt's reply.
        assert text and "one two three four five".startswith(text)
        assert len(srv.requests) == len(sleeps.delays) + 1


# --- cache -----------------------------------------------------------------------------------

def test_second_identical_call_makes_no_request(server: FakeOpenAIServer) -> None:
    client = make_client(server)

    async def calls() -> list:
        first = await client.complete(user("capital of France?"), temperature=0)
        second = await client.complete(user("capital of France?"), temperature=0)
        other = await client.complete(user("capital of France?"), temperature=0.4)  # new key
        return [first, second, other]

    first, second, other = asyncio.run(calls())
    assert len(server.requests) == 2
    assert not first.cached and second.cached and not other.cached
    assert second.text == first.text and second.cost_usd == 0.0
    assert client.usage.calls == 2 and client.usage.cache_hits == 1


def test_disk_cache_survives_a_new_client(server: FakeOpenAIServer, tmp_path: Path) -> None:
    cache = tmp_path / "llm-cache"
    first = make_client(server, cache_dir=cache)
    asyncio.run(first.complete(user("capital of France?"), temperature=0))
    files = list(cache.rglob("*.json"))
    assert len(files) == 1
    assert not list(cache.rglob("*.tmp"))  # written atomically, nothing left behind
    assert KEY not in files[0].read_text()

    second = make_client(server, cache_dir=str(cache))  # a str path works too
    result = asyncio.run(second.complete(user("capital of France?"), temperature=0))
    assert result.cached and result.text == "Paris"
    assert len(server.requests) == 1
    assert second.usage.calls == 0 and second.usage.cache_hits == 1


def test_corrupt_cache_file_is_ignored_and_rewritten(server: FakeOpenAIServer, tmp_path: Path) -> None:
    client = make_client(server, cache_dir=tmp_path)
    asyncio.run(client.complete(user("q"), temperature=0))
    (path,) = list(tmp_path.rglob("*.json"))
    path.write_text("{not json")
    fresh = make_client(server, cache_dir=tmp_path)
    result = asyncio.run(fresh.complete(user("q"), temperature=0))
    assert not result.cached and len(server.requests) == 2


def test_cache_can_be_switched_off(server: FakeOpenAIServer) -> None:
    client = make_client(server, use_cache=False)

    async def twice() -> None:
        await client.complete(user("q"), temperature=0)
        await client.complete(user("q"), temperature=0)

    asyncio.run(twice())
    assert len(server.requests) == 2 and client.usage.cache_hits == 0


# --- keys are never part of anything process-wide ---------------------------------------------

def test_clients_with_different_keys_share_cached_replies_and_no_key_is_stored(
        server: FakeOpenAIServer, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    alice, bob = "sk-test-alice-1111111111", "sk-test-bob-2222222222"
    first = make_client(server, cache_dir=cache, api_key=alice)
    second = make_client(server, cache_dir=cache, api_key=bob)
    a = asyncio.run(first.complete(user("capital of France?"), temperature=0))
    b = asyncio.run(second.complete(user("capital of France?"), temperature=0))
    assert not a.cached and b.cached and b.text == a.text == "Paris"
    assert len(server.requests) == 1 and server.auth_headers == [f"Bearer {alice}"]
    stored = [p for p in cache.rglob("*") if p.is_file()]
    assert stored
    for path in stored:
        assert alice not in path.read_text() and bob not in path.read_text()
        assert alice not in str(path) and bob not in str(path)
    assert first.limiter is second.limiter
    assert all(alice not in repr(k) and bob not in repr(k) for k in all_limiters())


def test_a_session_view_has_its_own_key_usage_and_session_and_shares_the_rest(server: FakeOpenAIServer) -> None:
    shared = make_client(server, api_key=None)  # what a process-wide cache of clients would hold: no key
    alice = shared.for_session(session="alice", api_key="sk-test-alice-1111111111")
    bob = shared.for_session(session="bob", api_key="sk-test-bob-2222222222")
    asyncio.run(alice.complete(user("capital of France?"), temperature=0))
    again = asyncio.run(bob.complete(user("capital of France?"), temperature=0))
    asyncio.run(bob.complete(user("something else"), temperature=0))
    assert again.cached  # one response cache for everyone on this provider
    assert server.auth_headers == ["Bearer sk-test-alice-1111111111", "Bearer sk-test-bob-2222222222"]
    assert (alice.usage.calls, bob.usage.calls, bob.usage.cache_hits, shared.usage.calls) == (1, 1, 1, 0)
    assert alice.limiter is bob.limiter is shared.limiter
    assert (alice.config.session, bob.config.session, shared.config.api_key) == ("alice", "bob", None)
    assert "sk-test-alice" not in repr(alice) and "sk-test-alice" not in repr(alice.config)


# --- concurrency -----------------------------------------------------------------------------

def test_concurrency_is_bounded_by_the_semaphore() -> None:
    with FakeOpenAIServer(lambda r: "ok", latency_s=0.05) as srv:
        client = make_client(srv, concurrency=3)

        async def many() -> list:
            return await asyncio.gather(*(client.complete(user(f"q{k}"), temperature=0)
                                          for k in range(12)))

        results = asyncio.run(many())
        assert len(results) == 12 and len(srv.requests) == 12
        assert 2 <= srv.max_concurrent <= 3


def test_client_works_across_event_loops(server: FakeOpenAIServer) -> None:
    client = make_client(server, concurrency=1)
    for k in range(3):  # e.g. Streamlit runs asyncio.run per question with one cached client
        asyncio.run(client.complete(user(f"loop {k}"), temperature=0))
    assert client.usage.calls == 3


# --- keys never leak -------------------------------------------------------------------------

def test_key_not_in_repr_str_or_public_dict() -> None:
    config = LLMConfig(model=MODEL, api_key=KEY, api_key_env="MY_KEY")
    assert KEY not in repr(config) and KEY not in str(config)
    assert KEY not in repr(config.public_dict())
    assert config.public_dict() == {"model": MODEL, "api_base": None, "api_version": None,
                                    "api_key_env": "MY_KEY"}
    assert KEY not in repr(LLMClient(config))


def test_key_scrubbed_from_error_messages() -> None:
    echo = Reply(status=401, text=f"Incorrect API key provided: {KEY}. Header: Bearer {KEY}")
    with FakeOpenAIServer(lambda r: echo) as srv:
        client = make_client(srv)
        with pytest.raises(LLMError) as caught:
            asyncio.run(client.complete(user("x"), temperature=0))
        assert caught.value.kind == "auth"
        assert KEY not in str(caught.value) and KEY not in repr(caught.value)
        assert "***" in str(caught.value)


def test_key_from_env_read_at_call_time(monkeypatch: pytest.MonkeyPatch,
                                        server: FakeOpenAIServer) -> None:
    monkeypatch.delenv("TOG_TEST_KEY", raising=False)
    client = LLMClient(LLMConfig(model=MODEL, api_base=server.base_url, api_key_env="TOG_TEST_KEY"))
    with pytest.raises(LLMError) as caught:
        asyncio.run(client.complete(user("x"), temperature=0))
    assert caught.value.kind == "auth" and "TOG_TEST_KEY" in str(caught.value)
    assert server.requests == []

    monkeypatch.setenv("TOG_TEST_KEY", "sk-from-env-123456")
    asyncio.run(client.complete(user("x"), temperature=0))
    assert server.auth_headers == ["Bearer sk-from-env-123456"]


def test_env_key_scrubbed_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOG_TEST_KEY2", "envsecret-abcdef")
    with FakeOpenAIServer(lambda r: Reply(status=400, text="bad key envsecret-abcdef")) as srv:
        client = LLMClient(LLMConfig(model=MODEL, api_base=srv.base_url, api_key_env="TOG_TEST_KEY2"))
        with pytest.raises(LLMError) as caught:
            asyncio.run(client.complete(user("x"), temperature=0))
        assert "envsecret-abcdef" not in str(caught.value)


# --- cost ------------------------------------------------------------------------------------

def test_unknown_model_cost_is_none_not_a_crash(server: FakeOpenAIServer) -> None:
    client = make_client(server)
    result = asyncio.run(client.complete(user("x"), temperature=0))
    assert result.cost_usd is None and client.usage.cost_usd is None


def test_register_zero_cost(server: FakeOpenAIServer) -> None:
    register_zero_cost("openai/zero-cost-test-model")
    client = make_client(server, model="openai/zero-cost-test-model")
    result = asyncio.run(client.complete(user("x"), temperature=0))
    assert result.cost_usd == 0.0 and client.usage.cost_usd == 0.0


def test_usage_since_snapshot() -> None:
    usage = ClientUsage(calls=3, prompt_tokens=30, cost_usd=0.5)
    before = usage.snapshot()
    usage.calls += 2
    usage.prompt_tokens += 7
    delta = usage.since(before)
    assert delta.calls == 2 and delta.prompt_tokens == 7 and delta.cost_usd == 0.0


# --- config ----------------------------------------------------------------------------------

@pytest.mark.parametrize("bad", [{"model": ""}, {"model": MODEL, "timeout_s": 0},
                                 {"model": MODEL, "max_retries": -1},
                                 {"model": MODEL, "concurrency": 0}])
def test_config_validation(bad: dict) -> None:
    with pytest.raises(ValueError):
        LLMConfig(**bad)
