"""The test doubles the other tests stand on: ScriptedLLM (records calls, can raise) and the OpenAI-compatible fake
server on 127.0.0.1 (scripts, extras, embeddings and models through real LiteLLM, handler errors reported)."""

from __future__ import annotations

import asyncio

import pytest
from llmkit import KEY, make_client, user

from tog_core.testing.server import FakeOpenAIServer, Reply, hashed_embedding, last_user_message, script
from tog_core.llm.client import LLMError
from tog_core.testing.scripted import ScriptedLLM


# --- the scripted double and the fake server itself ------------------------------------------

def test_scripted_llm_records_calls() -> None:
    llm = ScriptedLLM(lambda messages: "yes" if "enough" in messages[-1]["content"] else "no")

    async def run() -> tuple:
        first = await llm.complete(user("is it enough?"), temperature=0, json_schema={"type": "object"})
        tokens: list[str] = []
        streamed = await llm.stream(user("answer"), temperature=0, on_token=tokens.append)
        return first, streamed, tokens

    first, streamed, tokens = asyncio.run(run())
    assert first.text == "yes" and streamed.text == "no" and tokens == ["no"]
    assert [c["stream"] for c in llm.calls] == [False, True]
    assert llm.usage.calls == 2
    assert llm.config.public_dict()["model"] == "scripted/test"


def test_scripted_llm_can_raise() -> None:
    def boom(messages: list[dict]) -> str:
        raise LLMError("timeout", "scripted timeout", model="scripted/test")

    llm = ScriptedLLM(boom)
    with pytest.raises(LLMError):
        asyncio.run(llm.complete(user("x"), temperature=0))
    assert llm.usage.failures == 1


def test_fake_server_script_and_extras() -> None:
    handler = script([(r"^hello", "hi!"), (r"fail", Reply(status=500))], default="default")
    assert handler({"messages": user("hello there")}) == "hi!"
    assert isinstance(handler({"messages": user("please fail")}), Reply)
    assert handler({"messages": [{"role": "system", "content": "hello"}] + user("x")}) == "default"
    assert last_user_message({"messages": [{"role": "user", "content": [{"type": "text",
                                                                         "text": "parts"}]}]}) == "parts"
    a, b = hashed_embedding("the director of Inception"), hashed_embedding("Inception director")
    c = hashed_embedding("banana bread recipe")
    dot = lambda x, y: sum(p * q for p, q in zip(x, y, strict=True))  # noqa: E731
    assert dot(a, b) > dot(a, c)
    assert hashed_embedding("x") == hashed_embedding("x")


def test_fake_server_embeddings_and_models_through_litellm() -> None:
    import httpx
    import litellm

    with FakeOpenAIServer(models=["test-model", "test-embed"]) as srv:
        response = asyncio.run(litellm.aembedding(model="openai/test-embed", input=["a b", "c"],
                                                  api_base=srv.base_url, api_key=KEY))
        vectors = [item["embedding"] for item in response.data]
        assert len(vectors) == 2 and len(vectors[0]) == 64
        assert vectors[0] == pytest.approx(hashed_embedding("a b"), abs=1e-6)
        listed = httpx.get(f"{srv.base_url}/models").json()
        assert [m["id"] for m in listed["data"]] == ["test-model", "test-embed"]
        assert srv.embedding_requests[0]["input"] == ["a b", "c"]


def test_fake_server_handler_errors_are_reported() -> None:
    def broken(request: dict) -> str:
        raise RuntimeError("bug in the test handler")

    with FakeOpenAIServer(broken) as srv:
        client = make_client(srv, max_retries=0)
        with pytest.raises(LLMError) as caught:
            asyncio.run(client.complete(user("x"), temperature=0))
        assert caught.value.kind == "server"
        assert "bug in the test handler" in str(caught.value)
        assert len(srv.handler_errors) == 1
