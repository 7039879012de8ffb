"""How LLM failures are told apart and kept free of secrets: :class:`LLMError` (what callers catch); the
LiteLLM/transport exception → a failure kind (timeout, rate_limit, auth, connection, server, bad_request,
bad_response) with whether a retry can help and any Retry-After; and the scrubbing of keys from any text
that may reach a person or a log. Used by the client and the LiteLLM embedder.

The exception classes of LiteLLM, the OpenAI SDK, httpx and aiohttp are looked up when a failure is
classified, so importing this module imports none of them.
"""
from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import threading
import socket
import time
from collections.abc import Mapping
from urllib.parse import parse_qsl, urlsplit
from dataclasses import dataclass
from email.utils import parsedate_to_datetime

from tog_core.llm._litellm import load_litellm

__all__ = ["ERROR_KINDS", "LLMError", "NotCached"]

ERROR_KINDS = ("timeout", "rate_limit", "server", "connection", "auth", "model", "bad_request", "bad_response")


class LLMError(Exception):
    """A failed LLM call. ``kind`` is one of :data:`ERROR_KINDS`; the message names the model and
    the likely fix, and never contains a key."""

    def __init__(self, kind: str, message: str, *, model: str, status: int | None = None,
                 attempts: int = 1):
        if kind not in ERROR_KINDS:
            raise ValueError(f"unknown LLMError kind {kind!r}; expected one of {ERROR_KINDS}")
        super().__init__(message)
        self.kind = kind
        self.model = model
        self.status = status
        self.attempts = attempts


class NotCached(Exception):
    """A reply asked for inside ``cache_only()`` that the response cache does not hold: the provider was not
    called. Not an LLMError, so no scorer falls back to BM25 on it: a saved run being replayed stops instead
    (app/runner.explore_from_trace then continues from the run's saved state). ``reason`` says why, in words."""

    def __init__(self, model: str, reason: str) -> None:
        super().__init__(f"{model}: a reply is not in the response cache ({reason})")
        self.reason = reason


_SECRET_PATTERNS = (re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{6,}"),  # Anthropic
                    re.compile(r"\bsk-[A-Za-z0-9_\-]{6,}"),  # OpenAI and many compatible servers
                    re.compile(r"\bgsk_[A-Za-z0-9]{8,}"),  # Groq
                    re.compile(r"\bAIza[0-9A-Za-z_\-]{20,}"),  # Google (Gemini)
                    re.compile(r"\bxai-[A-Za-z0-9]{8,}"),  # xAI
                    re.compile(r"\bhf_[A-Za-z0-9]{8,}"),  # Hugging Face
                    re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._\-]{6,}"),
                    re.compile(r"(?i)(api[_-]?key['\"]?\s*[:=]\s*['\"]?)[A-Za-z0-9._\-]{6,}"))


def looks_secret(text: str) -> bool:
    """Whether `text` holds something shaped like a key (sk-…, sk-ant-…, gsk_…, AIza…, xai-…, hf_…, a bearer token,
    api_key=…)."""
    return any(p.search(text) for p in _SECRET_PATTERNS)


# a variable named like a credential: its value is scrubbed wherever it appears, whoever read it (LiteLLM reads the
# provider's usual variable itself when no key is given; a server's error may quote it back)
_SECRET_NAME = re.compile(r"(?i)(_KEY|_TOKEN|_SECRET|_PASSWORD)$")


def provider_env_keys(model: str | None) -> tuple[str, ...]:
    """The variables LiteLLM reads a key from for `model`'s provider when none is given ("openai/x", or no prefix:
    OPENAI_API_KEY; "azure/…": AZURE_API_KEY, AZURE_OPENAI_API_KEY, AZURE_AD_TOKEN; "anthropic/…":
    ANTHROPIC_API_KEY; "<provider>/…": <PROVIDER>_API_KEY)."""
    provider = (model or "").split("/", 1)[0].strip().lower() if "/" in (model or "") else "openai"
    known = {"azure": ("AZURE_API_KEY", "AZURE_OPENAI_API_KEY", "AZURE_AD_TOKEN"),
             "azure_ai": ("AZURE_AI_API_KEY", "AZURE_API_KEY"), "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
             "huggingface": ("HUGGINGFACE_API_KEY", "HF_TOKEN"),
             "together_ai": ("TOGETHERAI_API_KEY", "TOGETHER_API_KEY"),
             "text-completion-openai": ("OPENAI_API_KEY",)}
    own = (re.sub(r"[^A-Z0-9]", "_", provider.upper()) + "_API_KEY",) if provider else ()
    return tuple(dict.fromkeys((*known.get(provider, ()), *own)))


def env_secrets(model: str | None = None, environ: Mapping[str, str] | None = None) -> list[str]:
    """Values of the environment to scrub from any text: the key variables of `model`'s provider (4+ characters), and
    every variable named *_KEY, *_TOKEN, *_SECRET or *_PASSWORD whose value has 8+ characters."""
    env = os.environ if environ is None else environ
    out = [env.get(name, "") for name in provider_env_keys(model)] if model else []
    out = [v for v in out if len(v) >= 4]
    out += [v for name, v in env.items() if len(v) >= 8 and _SECRET_NAME.search(name)]
    return list(dict.fromkeys(out))


# a URL's user:password@ and the values of its query string: an API base may carry either ("https://user:pw@host/v1",
# "…/v1?api-key=…"), and a provider's or transport's error may quote the URL it called
_URL_USERINFO = re.compile(r"(?i)(\b[a-z][a-z0-9+.-]*://)[^/\s@?#]+@")
_URL_QUERY = re.compile(r"(?i)\b[a-z][a-z0-9+.-]*://[^\s?#]*\?[^\s#'\"]*")
_QUERY_VALUE = re.compile(r"=[^&;]+")


def url_secrets(url: str | None) -> list[str]:
    """The parts of a URL that may be secret, to scrub wherever they appear, even quoted without the URL: its password
    and each query value of at least 6 characters (a shorter one, "true", "json", would blank common words; the URL
    patterns of `_scrub` still hide it inside a URL)."""
    if not url:
        return []
    parts = urlsplit(url)
    out = [parts.password or "", *(v for _k, v in parse_qsl(parts.query))]
    return [x for x in out if len(x) >= 6]


def _scrub(text: str, secrets: list[str]) -> str:
    for secret in sorted((s for s in secrets if s), key=len, reverse=True):
        text = text.replace(secret, "***")
    for pattern in _SECRET_PATTERNS:
        text = pattern.sub(lambda m: (m.group(1) if m.re.groups else "") + "***", text)
    text = _URL_USERINFO.sub(r"\1***@", text)
    return _URL_QUERY.sub(lambda m: m[0].split("?", 1)[0] + "?" + _QUERY_VALUE.sub("=***", m[0].split("?", 1)[1]),
                          text)


_LOG_LOCK = threading.Lock()
_LOGS_SCRUBBED: list[bool] = []


def scrub_logs() -> None:
    """From now on, every log record of this process (LiteLLM's, httpx's and the OpenAI SDK's debug lines quote the
    URL they call, and a provider's error body) is scrubbed of URL passwords, URL query values, key-shaped text and
    the values of the environment's credential-named variables (`env_secrets`) before any handler sees it.
    Idempotent; called when an LLM client or embedder is built, so no credential of an API base reaches a log."""
    with _LOG_LOCK:
        if _LOGS_SCRUBBED:
            return
        made = logging.getLogRecordFactory()

        def factory(*args: object, **kwargs: object) -> logging.LogRecord:
            record = made(*args, **kwargs)
            try:
                said = record.getMessage()
            except Exception:  # noqa: BLE001  — a record whose arguments do not fit is logging's to report
                return record
            clean = _scrub(said, env_secrets())
            if clean != said:
                record.msg, record.args = clean, ()
            return record

        logging.setLogRecordFactory(factory)
        _LOGS_SCRUBBED.append(True)


def _exception_chain(exc: BaseException) -> list[BaseException]:
    chain: list[BaseException] = []
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen and len(chain) < 20:
        seen.add(id(current))
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def _retry_after_s(exc: BaseException) -> float | None:
    for headers in (getattr(exc, "litellm_response_headers", None),
                    getattr(getattr(exc, "response", None), "headers", None),
                    getattr(exc, "headers", None)):
        if not headers:
            continue
        lowered = {str(k).lower(): str(v) for k, v in dict(headers).items()}
        if "retry-after-ms" in lowered:
            try:
                return max(0.0, float(lowered["retry-after-ms"]) / 1000.0)
            except ValueError:
                pass
        value = lowered.get("retry-after")
        if value is None:
            continue
        try:
            return max(0.0, float(value))
        except ValueError:
            try:
                return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
            except (TypeError, ValueError):
                return None
    return None


_MISSING_KEY = re.compile(r"(?i)missing credentials|api_key client option must be set|pass an `?api_key")


@dataclass(kw_only=True)
class _Failure:
    kind: str
    retryable: bool
    detail: str
    status: int | None = None
    retry_after_s: float | None = None


def _classify(exc: BaseException) -> _Failure | None:
    """Map a LiteLLM/transport exception to a failure kind; None = not an LLM failure (a bug)."""
    litellm = load_litellm()
    import aiohttp  # LiteLLM's default async transport; all three come with litellm
    import httpx
    import openai  # litellm's exceptions subclass the OpenAI SDK's

    chain = _exception_chain(exc)
    status = getattr(exc, "status_code", None)
    status = status if isinstance(status, int) else None
    detail = str(exc) or f"{type(exc).__name__}: no reply in time"
    if any(isinstance(e, (TimeoutError, asyncio.TimeoutError, openai.APITimeoutError,
                          httpx.TimeoutException, aiohttp.ServerTimeoutError)) for e in chain):
        return _Failure(kind="timeout", retryable=True, detail=detail, status=status)
    if isinstance(exc, litellm.RateLimitError) or status == 429:
        return _Failure(kind="rate_limit", retryable=True, detail=detail, status=429,
                        retry_after_s=_retry_after_s(exc))
    if isinstance(exc, (litellm.AuthenticationError, litellm.PermissionDeniedError)) or status in (401, 403):
        return _Failure(kind="auth", retryable=False, detail=detail, status=status)
    if any(type(e) is openai.OpenAIError for e in chain) and _MISSING_KEY.search(detail):
        # raised by the OpenAI SDK before any request (LiteLLM wraps it as a "500"): no key at all
        return _Failure(kind="auth", retryable=False, detail=detail, status=None)
    if any(isinstance(e, (ConnectionRefusedError, socket.gaierror)) for e in chain):
        return _Failure(kind="connection", retryable=False, detail=detail, status=None)
    if any(isinstance(e, (openai.APIConnectionError, ConnectionError, httpx.TransportError,
                          aiohttp.ClientConnectionError, aiohttp.ClientPayloadError)) for e in chain) \
            or isinstance(exc, litellm.APIConnectionError):
        return _Failure(kind="connection", retryable=True, detail=detail, status=None)
    if any(isinstance(e, json.JSONDecodeError) for e in chain):
        return _Failure(kind="bad_response", retryable=False, detail=detail, status=status)
    if (status is not None and status >= 500) or isinstance(
            exc, (litellm.InternalServerError, litellm.ServiceUnavailableError, litellm.BadGatewayError)):
        return _Failure(kind="server", retryable=True, detail=detail, status=status)
    if isinstance(exc, litellm.NotFoundError) or status == 404:  # the provider does not know the model
        return _Failure(kind="model", retryable=False, detail=detail, status=status)
    if isinstance(exc, (litellm.BadRequestError, litellm.NotFoundError, litellm.UnprocessableEntityError,
                        litellm.UnsupportedParamsError)) or (status is not None and 400 <= status < 500):
        return _Failure(kind="bad_request", retryable=False, detail=detail, status=status)
    if isinstance(exc, openai.OpenAIError):
        return _Failure(kind="bad_response", retryable=False, detail=detail, status=status)
    return None


def _mentions_response_format(detail: str) -> bool:
    lowered = detail.lower()
    return any(word in lowered for word in ("response_format", "response format", "json_schema",
                                            "json_object", "json mode", "structured output"))
