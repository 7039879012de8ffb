"""The one LLM seam: an async LiteLLM client with bounded concurrency, retries, a cache and usage.

Everything the rest of ToG Explorer needs from a chat model goes through :class:`LLMClient`, which
fits the :class:`~tog_core.llm.chat.ChatModel` protocol: ``complete`` for scoring/evaluation prompts
and ``stream`` for the final answer. LiteLLM's own retries are switched off (``num_retries=0``) so every
retry is ours: bounded, counted, with exponential backoff + jitter, honouring ``Retry-After``, and all
within one deadline per call (``LLMConfig.timeout_s`` a try for scoring, ``stream_timeout_s`` for the answer,
1.5 x that a call), so a hung provider costs a bounded time. Requests in flight are bounded per provider for
the whole process, fairly between sessions (``llm/limits.py``); ``for_session`` gives an app session its view
(its id, its typed key) of a shared client.
LiteLLM is imported at the first call (``llm/_litellm.py``), not when this module is imported.

A reply is untrusted (a person may type an API base of their own): one is read up to :func:`reply_cap` characters
(what its ``max_tokens`` allows, generously, never over 1,000,000; ``llm/reply_limit.py``, with the stream reader that
stops there), and a longer reply is refused as an ``LLMError`` ("bad_response", named ``reply_too_long``): never used,
never cached, and the caller falls back by name as for any failed call, so the trace records it.

Secrets: ``LLMConfig.api_key`` never appears in ``repr``/``public_dict``; the key (typed in, read from
``api_key_env`` at call time, or the provider's usual variable that LiteLLM reads itself) is scrubbed from every
error message this module produces.

The config, result and usage types live in ``llm/chat.py``, the cache in ``llm/cache.py``, a call's deadline and
price in ``llm/budget.py`` and ``LLMError`` in ``llm/errors.py``; they are re-exported here for callers. The test double
``ScriptedLLM`` is in ``tog_core.testing``.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import re
import threading
import time
from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager
from dataclasses import replace
from typing import Any

from tog_core.llm._litellm import load_litellm
from tog_core.llm.budget import Deadline, call_cost, register_zero_cost
from tog_core.errors import public_url
from tog_core.llm.cache import ResponseCache, cache_key
from tog_core.llm.circuit import Circuit
from tog_core.llm.chat import (CacheOnly, ChatModel, LLMConfig, LLMResult, ClientUsage, cache_only_mode,
                               estimate_tokens)
from tog_core.llm.errors import (ERROR_KINDS, LLMError, NotCached, _classify, _Failure, _mentions_response_format,
                                  _scrub, env_secrets, scrub_logs, url_secrets)
from tog_core.llm.limits import ProviderLimiter, current_session, default_concurrency, limiter_for
from tog_core.llm.reply_limit import TOO_LONG, ReplyTooLong, read_stream, reply_cap, too_long

__all__ = ["LLMConfig", "LLMResult", "LLMError", "ClientUsage", "LLMClient", "ChatModel",
           "register_zero_cost", "cache_key", "ERROR_KINDS", "reply_cap", "TOO_LONG"]

log = logging.getLogger(__name__)
NO_KEY = "no-key-sent"  # what goes as the key where the server's keys may not go (never a secret)


# --------------------------------------------------------------------------------------------
# the client

class LLMClient:
    """Async LiteLLM client: ``await client.complete(messages, temperature=0)``."""

    def __init__(self, config: LLMConfig, *, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
                 rng: random.Random | None = None):
        scrub_logs()  # an API base may hold a password or a key in its query: LiteLLM and httpx log the URL
        self.config = config
        self.usage = ClientUsage()
        self._clock = clock
        self._sleep = sleep
        self._rng = rng or random.Random()
        self._lock = threading.Lock()
        self._cache = ResponseCache(model=config.model, directory=config.cache_dir, enabled=config.use_cache)
        limit = config.concurrency if config.concurrency is not None else default_concurrency()
        self._limiter: ProviderLimiter = limiter_for(config.model, config.api_base, limit=limit)
        self._json_level: str | None | bool = False  # False = not decided yet
        self.circuit = Circuit()  # per run: opens after a provider's failure (llm/circuit.py)
        self._cache_only: CacheOnly = ""  # cache_only(): "raise" (NotCached) or "fail" (LLMError) on a miss

    def for_session(self, *, session: str | None = None, api_key: str | None = None) -> LLMClient:
        """This client as one app session sees it: the same provider limit, response cache and JSON mode; its
        own usage; ``session`` for fairness; the session's typed ``api_key`` (held by this view only, so a
        process-wide client cache never needs the key)."""
        view = object.__new__(LLMClient)
        view.config = replace(self.config, session=session or self.config.session,
                              api_key=api_key or self.config.api_key)
        view.usage = ClientUsage()
        view._clock, view._sleep, view._rng = self._clock, self._sleep, random.Random()
        view._lock = threading.Lock()
        view._cache, view._limiter, view._json_level = self._cache, self._limiter, self._json_level
        view.circuit = Circuit()  # a view is one session's run: its own circuit, closed
        view._cache_only = ""
        return view

    def cache_only(self, *, misses_fail: bool = False) -> AbstractContextManager[None]:
        """Within it, a call whose reply the response cache does not hold raises NotCached, or with `misses_fail`
        an LLMError (a call that failed when a saved run was made, replayed: its reply was never cached, and the
        caller takes the fallback it took then); the provider is not called. A session's view (`for_session`) is
        one person's: the mode is that view's alone."""
        return cache_only_mode(self, misses_fail=misses_fail)

    def _not_cached(self) -> Exception:
        model = self.config.model
        if self._cache_only == "fail":
            return LLMError("connection", f"{model}: replayed a call that failed when the run was made", model=model)
        return NotCached(model, "the response cache is off" if not self._cache.enabled else
                         "cleared, or the run was made on another machine or replica")

    @property
    def limiter(self) -> ProviderLimiter:
        """The process-wide limiter of this client's provider (peak in flight: ``limiter.stats().peak``)."""
        return self._limiter

    def __repr__(self) -> str:
        return f"LLMClient(model={self.config.model!r}, api_base={self.config.api_base!r})"

    # --- public API ------------------------------------------------------------------------
    async def complete(self, messages: list[dict], *, temperature: float, max_tokens: int = 256,
                       json_schema: dict | None = None) -> LLMResult:
        started = self._clock()
        key = self._key(messages, temperature, max_tokens, json_schema)
        hit = self._hit(key, max_tokens)
        if hit is not None:
            return self._hit_result(hit, started)
        if self._cache_only:
            raise self._not_cached()
        level = self._json_level_for(json_schema)
        attempt = 0  # transient-failure retries used
        degraded = 0  # extra requests made after a response_format rejection
        clock = Deadline(self.config, stream=False)
        while True:
            kwargs = self._kwargs(messages, temperature, max_tokens)
            if level is not None and json_schema is not None:
                kwargs["response_format"] = self._response_format(level, json_schema)
            try:
                async with self._limiter.slot(self._session()):
                    self.circuit.check(self.config.model)
                    budget = clock.budget_s()
                    kwargs["timeout"] = budget
                    response = await asyncio.wait_for(load_litellm().acompletion(**kwargs), budget)
                text, prompt_tokens, completion_tokens = self._read_response(response, attempt, max_tokens)
                break
            except LLMError:
                raise
            except Exception as exc:  # classified below by name; unknown exceptions re-raised
                failure = _classify(exc)
                if failure is None:
                    raise
                if failure.kind in ("bad_request", "model") and level is not None and json_schema is not None \
                        and _mentions_response_format(failure.detail):
                    level = self._degrade_json(level, failure.detail)  # at most two steps down
                    degraded += 1
                    with self._lock:
                        self.usage.retries += 1
                    continue
                await self._retry_or_raise(failure, attempt, clock)
                attempt += 1
        retries = attempt + degraded
        return self._finish(key, text, prompt_tokens, completion_tokens, started, retries,
                            level if json_schema is not None else None)

    async def stream(self, messages: list[dict], *, temperature: float, max_tokens: int = 512,
                     on_token: Callable[[str], None]) -> LLMResult:
        started = self._clock()
        key = self._key(messages, temperature, max_tokens, None)
        hit = self._hit(key, max_tokens)
        if hit is not None:
            if hit["text"]:
                on_token(hit["text"])
            return self._hit_result(hit, started)
        if self._cache_only:
            raise self._not_cached()
        retries = 0
        clock = Deadline(self.config, stream=True)
        cap = reply_cap(max_tokens)
        usage: Any = None
        for attempt in range(self.config.max_retries + 1):
            pieces: list[str] = []
            kwargs = self._kwargs(messages, temperature, max_tokens)
            kwargs.update(stream=True, stream_options={"include_usage": True})
            try:
                async with self._limiter.slot(self._session()):
                    self.circuit.check(self.config.model)
                    kwargs["timeout"] = clock.budget_s()
                    response = await asyncio.wait_for(load_litellm().acompletion(**kwargs), kwargs["timeout"])
                    try:
                        usage = await read_stream(response, cap=cap, max_tokens=max_tokens, budget_s=clock.budget_s,
                                                  on_token=on_token, pieces=pieces)
                    except ReplyTooLong as refused:
                        self._fail("bad_response", str(refused), attempts=attempt + 1)
                break
            except LLMError:
                raise
            except Exception as exc:  # classified below by name; unknown exceptions re-raised
                failure = _classify(exc)
                if failure is None:
                    raise
                if pieces:  # tokens already reached the caller: a retry would duplicate them
                    received = sum(len(p) for p in pieces)
                    failure = _Failure(kind=failure.kind, retryable=False, status=failure.status,
                                       detail=f"stream broke after {received} characters: {failure.detail}")
                await self._retry_or_raise(failure, attempt, clock)
                retries += 1
        text = "".join(pieces)
        if not text.strip():  # a 200 whose body was not an SSE stream (bad JSON, no choices) yields nothing
            self._fail("bad_response", "the streamed reply carried no text (the body was not an "
                                       "OpenAI event stream, or it had no choices)", attempts=retries + 1)
        prompt_tokens = int(getattr(usage, "prompt_tokens", 0) or 0) if usage is not None else 0
        completion_tokens = int(getattr(usage, "completion_tokens", 0) or 0) if usage is not None else 0
        if usage is None:  # provider sent no usage chunk: estimate, never leave it at zero
            prompt_tokens = sum(estimate_tokens(str(m.get("content", ""))) for m in messages)
            completion_tokens = estimate_tokens(text)
        return self._finish(key, text, prompt_tokens, completion_tokens, started, retries, None)

    # --- request building ------------------------------------------------------------------
    def _kwargs(self, messages: list[dict], temperature: float, max_tokens: int) -> dict:
        cfg = self.config
        kwargs: dict[str, Any] = {"model": cfg.model, "messages": messages, "temperature": temperature,
                                  "max_tokens": max_tokens, "num_retries": 0, "drop_params": True}
        if cfg.api_base:
            kwargs["api_base"] = cfg.api_base
        if cfg.api_version:
            kwargs["api_version"] = cfg.api_version
        key = self._api_key()
        if key:
            kwargs["api_key"] = key
        return kwargs

    def _api_key(self) -> str | None:
        cfg = self.config
        if cfg.api_key:
            return cfg.api_key
        if cfg.api_key_env:
            value = os.environ.get(cfg.api_key_env)
            if not value:
                self._fail("auth", f"the environment variable {cfg.api_key_env} is not set; "
                                   f"export it (or put it in the project's .env) or type a key in")
            return value
        if not cfg.send_env_key:  # a base the server's keys may not go to: a placeholder, so LiteLLM reads none
            return NO_KEY
        return None  # LiteLLM falls back to the provider's usual variable (e.g. OPENAI_API_KEY)

    def _json_level_for(self, json_schema: dict | None) -> str | None:
        if json_schema is None or not self.config.json_mode:
            return None
        if self._json_level is False:
            self._json_level = self._detect_json_level()
        return self._json_level  # type: ignore[return-value]

    def _detect_json_level(self) -> str | None:
        model = self.config.model
        litellm = load_litellm()
        if litellm.supports_response_schema(model=model):
            return "json_schema"
        try:
            bare, provider = litellm.get_llm_provider(model)[:2]
        except litellm.BadRequestError:
            return None
        params = litellm.get_supported_openai_params(model=bare, custom_llm_provider=provider) or []
        return "json_object" if "response_format" in params else None

    def _degrade_json(self, level: str, detail: str) -> str | None:
        lower = {"json_schema": "json_object", "json_object": None}[level]
        log.warning("%s rejected response_format=%s (%s); retrying with %s", self.config.model, level,
                    self._scrub(detail)[:200], lower or "no JSON mode")
        self._json_level = lower
        return lower

    @staticmethod
    def _response_format(level: str, json_schema: dict) -> dict:
        if level == "json_schema":
            name = re.sub(r"[^A-Za-z0-9_-]", "_", str(json_schema.get("title", "reply")))[:64] or "reply"
            return {"type": "json_schema",
                    "json_schema": {"name": name, "schema": json_schema, "strict": False}}
        return {"type": "json_object"}

    def _session(self) -> str:
        return self.config.session or current_session()

    # --- responses, retries, errors --------------------------------------------------------
    def _read_response(self, response: Any, attempt: int, max_tokens: int) -> tuple[str, int, int]:
        choices = getattr(response, "choices", None) or []
        if not choices:
            self._fail("bad_response", "the reply had no choices", attempts=attempt + 1)
        message = getattr(choices[0], "message", None)
        content = getattr(message, "content", None)
        if content is None:
            finish = getattr(choices[0], "finish_reason", None)
            self._fail("bad_response", f"the reply had no text (finish_reason={finish}); a reasoning "
                                       f"model may need a larger max_tokens", attempts=attempt + 1)
        text, cap = str(content), reply_cap(max_tokens)
        if len(text) > cap:  # LiteLLM has read it whole: never used, never cached
            self._fail("bad_response", too_long(cap, max_tokens), attempts=attempt + 1)
        usage = getattr(response, "usage", None)
        prompt_tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
        completion_tokens = int(getattr(usage, "completion_tokens", 0) or 0)
        return text, prompt_tokens, completion_tokens

    async def _retry_or_raise(self, failure: _Failure, attempt: int, clock: Deadline) -> None:
        delay = self._backoff_s(attempt)
        if failure.retry_after_s is not None:
            delay = max(delay, min(failure.retry_after_s, self.config.retry_after_max_s))
        if not failure.retryable or attempt >= self.config.max_retries or not clock.room_for(delay):
            self._fail(failure.kind, failure.detail, status=failure.status, attempts=attempt + 1, clock=clock)
        log.warning("%s: %s on attempt %d/%d; retrying in %.2fs", self.config.model, failure.kind,
                    attempt + 1, self.config.max_retries + 1, delay)
        with self._lock:
            self.usage.retries += 1
        await self._sleep(delay)

    def _backoff_s(self, attempt: int) -> float:
        base = min(self.config.backoff_max_s, self.config.backoff_base_s * (2 ** attempt))
        return base * (0.5 + 0.5 * self._rng.random())

    def _secrets(self) -> list[str]:
        """Every key this client may have sent: the typed one, the named variable's, the API base's credentials, and
        the provider's usual variables, which LiteLLM reads itself when no key is given (`errors.env_secrets`)."""
        secrets = [self.config.api_key or "", *url_secrets(self.config.api_base), *env_secrets(self.config.model)]
        if self.config.api_key_env:
            secrets.append(os.environ.get(self.config.api_key_env, ""))
        return [s for s in secrets if len(s) >= 4]

    def _scrub(self, text: str) -> str:
        return _scrub(text, self._secrets())

    def _fail(self, kind: str, detail: str, *, status: int | None = None, attempts: int = 1,
              clock: Deadline | None = None) -> None:
        cfg = self.config
        where = public_url(cfg.api_base) or "the provider's default endpoint"
        per_attempt, per_call = (clock.attempt_s, clock.deadline_s) if clock else (cfg.timeout_s, cfg.timeout_s)
        hints = {
            "timeout": f"no reply within {per_attempt:g}s a try ({attempts} attempt(s), at most {per_call:g}s "
                       f"a call); raise the timeout or check that {where} is up and not overloaded",
            "rate_limit": f"the provider is rate limiting ({attempts} attempt(s)); lower concurrency "
                          f"(now {self._limiter.limit} in flight, TOG_LLM_CONCURRENCY) or wait and try again",
            "server": f"the server failed (HTTP {status}) {attempts} time(s); try again later or "
                      f"check the server at {where}",
            "connection": (f"the connection to {where} dropped in the middle of the reply; try again"
                           if detail.startswith("stream broke") else
                           f"could not connect to {where}; check that the server is running and the "
                           f"api_base is right"),
            "auth": ("the key was rejected or is missing; no key was sent to this API base (the server's keys go "
                     "only to the provider's own endpoint, the project's configured one, or TOG_ALLOWED_API_BASES): "
                     "type your own key" if not cfg.send_env_key and not cfg.api_key else
                     "the key was rejected or is missing; check "
                     + (f"the environment variable {cfg.api_key_env}" if cfg.api_key_env
                        else "the API key you gave (or the provider's usual variable, e.g. OPENAI_API_KEY)")),
            "model": f"{where} has no such model or path; check the model's name against the provider's list, "
                     "and the api_base (an OpenAI-compatible api_base usually ends in /v1)",
            "bad_request": "the request was rejected; check the model name and parameters",
            "bad_response": (f"{TOO_LONG}: the reply went past what its max_tokens allows, so it was read no "
                             f"further, not used and not cached; check that {where} honours max_tokens"
                             if detail.startswith(TOO_LONG) else
                             f"the reply could not be read; check that {where} speaks the OpenAI API "
                             f"(an OpenAI-compatible api_base usually ends in /v1)"),
        }
        short = " ".join(self._scrub(detail).split())[:400]
        with self._lock:
            self.usage.failures += 1
        err = LLMError(kind, f"{cfg.model}: {kind} — {hints[kind]}. Detail: {short}",
                       model=cfg.model, status=status, attempts=attempts)
        self.circuit.record(err)
        raise err from None

    def _finish(self, key: str, text: str, prompt_tokens: int, completion_tokens: int,
                started: float, retries: int, response_format: str | None) -> LLMResult:
        cost = call_cost(self.config.model, prompt_tokens, completion_tokens)
        with self._lock:
            self.usage.calls += 1
            self.usage.prompt_tokens += prompt_tokens
            self.usage.completion_tokens += completion_tokens
            if cost is None or self.usage.cost_usd is None:
                self.usage.cost_usd = None
            else:
                self.usage.cost_usd += cost
        self._cache.put(key, {"text": text, "prompt_tokens": prompt_tokens,
                              "completion_tokens": completion_tokens, "cost_usd": cost,
                              "response_format": response_format})
        return LLMResult(text=text, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens,
                         cost_usd=cost, cached=False, wall_s=self._clock() - started, retries=retries,
                         response_format=response_format)

    # --- cache -----------------------------------------------------------------------------
    def _key(self, messages: list[dict], temperature: float, max_tokens: int,
             json_schema: dict | None) -> str:
        return cache_key(model=self.config.model, api_base=self.config.api_base, messages=messages,
                         temperature=temperature, max_tokens=max_tokens, json_schema=json_schema)

    def _hit(self, key: str, max_tokens: int) -> dict | None:
        """The cached reply, unless it is longer than this call may read (written before the cap)."""
        hit = self._cache.get(key)
        return hit if hit is not None and len(hit["text"]) <= reply_cap(max_tokens) else None

    def _hit_result(self, entry: dict, started: float) -> LLMResult:
        with self._lock:
            self.usage.cache_hits += 1
        return LLMResult(text=entry["text"], prompt_tokens=int(entry.get("prompt_tokens", 0)),
                         completion_tokens=int(entry.get("completion_tokens", 0)), cost_usd=0.0,
                         cached=True, wall_s=self._clock() - started, retries=0,
                         response_format=entry.get("response_format"))

