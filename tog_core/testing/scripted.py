"""ScriptedLLM: a chat model that is a function from messages to reply text. No network, no LiteLLM.

It fits :class:`tog_core.llm.chat.ChatModel` like the real client does, so the engine can be tested with
replies you can read. ``calls`` records every request (messages, temperature, max_tokens, json_schema,
stream). The function may raise :class:`~tog_core.llm.errors.LLMError` to play a provider failure.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from contextlib import AbstractContextManager

from tog_core.llm.chat import CacheOnly, LLMConfig, LLMResult, ClientUsage, cache_only_mode, estimate_tokens
from tog_core.llm.errors import LLMError, NotCached

__all__ = ["ScriptedLLM"]


class ScriptedLLM:
    """``ScriptedLLM(lambda messages: "reply")``: the reply function behind the LLMClient interface."""

    def __init__(self, reply: Callable[[list[dict]], str], *, model: str = "scripted/test"):
        self.reply = reply
        self.config = LLMConfig(model=model)
        self.usage = ClientUsage()
        self.calls: list[dict] = []
        self._cache_only: CacheOnly = ""

    def cache_only(self, *, misses_fail: bool = False) -> AbstractContextManager[None]:
        """As LLMClient.cache_only; a scripted model keeps no cache, so every call within raises NotCached (with
        `misses_fail`, LLMError)."""
        return cache_only_mode(self, misses_fail=misses_fail)

    def _call(self, messages: list[dict], temperature: float, max_tokens: int,
              json_schema: dict | None, stream: bool) -> tuple[str, LLMResult]:
        if self._cache_only == "fail":
            raise LLMError("connection", "replayed a failed call", model=self.config.model)
        if self._cache_only:
            raise NotCached(self.config.model, "a scripted model caches no reply")
        self.calls.append({"messages": messages, "temperature": temperature, "max_tokens": max_tokens,
                           "json_schema": json_schema, "stream": stream})
        self.usage.calls += 1
        try:
            text = self.reply(messages)
        except LLMError:
            self.usage.failures += 1
            raise
        prompt_tokens = sum(estimate_tokens(str(m.get("content", ""))) for m in messages)
        completion_tokens = estimate_tokens(text)
        self.usage.prompt_tokens += prompt_tokens
        self.usage.completion_tokens += completion_tokens
        return text, LLMResult(text=text, prompt_tokens=prompt_tokens,
                               completion_tokens=completion_tokens, cost_usd=0.0, cached=False,
                               wall_s=0.0, retries=0,
                               response_format="json_object" if json_schema is not None else None)

    async def complete(self, messages: list[dict], *, temperature: float, max_tokens: int = 256,
                       json_schema: dict | None = None) -> LLMResult:
        return self._call(messages, temperature, max_tokens, json_schema, stream=False)[1]

    async def stream(self, messages: list[dict], *, temperature: float, max_tokens: int = 512,
                     on_token: Callable[[str], None]) -> LLMResult:
        text, result = self._call(messages, temperature, max_tokens, None, stream=True)
        for piece in re.findall(r"\S+\s*|\s+", text):
            on_token(piece)
        return result
