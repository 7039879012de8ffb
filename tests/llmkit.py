"""Helpers for the tests of the LLM seam through real LiteLLM code (tests/test_llm.py, test_llm_failures.py,
test_test_doubles.py): the provider key that must never leak (`KEY`) and the model named (`MODEL`), a user message
(`user`), an injected sleep that records the backoff delays (`Sleeps`), an LLMClient on a fake server
(`make_client`) and a loopback port nothing listens on (`free_closed_port`)."""
from __future__ import annotations

import asyncio
import socket

from tog_core.llm.client import LLMClient, LLMConfig
from tog_core.testing.server import FakeOpenAIServer

KEY = "sk-test-DO-NOT-LEAK-7f3a9c"
MODEL = "openai/test-model"


def user(text: str) -> list[dict]:
    return [{"role": "user", "content": text}]


class Sleeps:
    """Injected sleep: records the backoff delays and returns at once."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)
        await asyncio.sleep(0)


def make_client(server: FakeOpenAIServer, sleeps: Sleeps | None = None, **overrides) -> LLMClient:
    settings = {"model": MODEL, "api_base": server.base_url, "api_key": KEY, "timeout_s": 5.0,
                "max_retries": 3, **overrides}
    return LLMClient(LLMConfig(**settings), sleep=sleeps or Sleeps())


def free_closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
