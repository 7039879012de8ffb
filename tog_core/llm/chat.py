"""What a chat model is to ToG Explorer: its configuration, one call's result, running usage, and the
:class:`ChatModel` protocol — the two calls the engine makes. :class:`~tog_core.llm.client.LLMClient` is the
real implementation; ``tog_core.testing.ScriptedLLM`` the test double. No LiteLLM here.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from tog_core.errors import public_url

__all__ = ["LLMConfig", "LLMResult", "ClientUsage", "ChatModel", "estimate_tokens"]


@dataclass(frozen=True, kw_only=True)
class LLMConfig:
    """How to reach one chat model through LiteLLM."""

    model: str  # LiteLLM model string, e.g. "openai/gpt-4.1-mini", "azure/<deployment>", "ollama/llama3"
    api_base: str | None = None  # e.g. "http://127.0.0.1:11434" or an OpenAI-compatible ".../v1"
    api_version: str | None = None  # Azure API version
    api_key_env: str | None = None  # NAME of the env var holding the key; read at call time
    api_key: str | None = field(default=None, repr=False)  # a typed-in key; never shown anywhere
    send_env_key: bool = True  # False: never let LiteLLM fall back to the environment's key (a user-typed API base)
    timeout_s: float = 20.0  # per HTTP attempt of a scoring/judging call (complete)
    stream_timeout_s: float | None = None  # per attempt of the streamed answer, and per chunk; None: 3 x timeout_s
    deadline_s: float | None = None  # a complete call's bound, retries + backoff included; None: 1.5 x timeout_s
    #                                  (the stream's is 1.5 x its per-attempt timeout)
    max_retries: int = 3  # extra attempts on 429, 5xx, timeouts, dropped connections (within the deadline)
    concurrency: int | None = None  # requests in flight to this provider, process-wide (llm/limits.py);
    #                                  None: TOG_LLM_CONCURRENCY, else 8
    session: str | None = None  # whose calls these are, for fairness between sessions (llm/limits.py)
    cache_dir: Path | None = None  # one JSON file per response; None = in-memory cache only
    use_cache: bool = True  # False = every call goes to the provider (benchmarks of raw calls)
    json_mode: bool = True  # ask for JSON output (schema or json_object) when a schema is given
    backoff_base_s: float = 0.5  # first backoff; doubles per attempt, with jitter
    backoff_max_s: float = 8.0  # cap of one exponential backoff
    retry_after_max_s: float = 30.0  # cap of a server-requested Retry-After wait

    def __post_init__(self) -> None:
        if not self.model or not self.model.strip():
            raise ValueError("LLMConfig.model is empty: give a LiteLLM model string such as "
                             "'openai/gpt-4.1-mini' or 'ollama/llama3'")
        for name in ("timeout_s", "stream_timeout_s", "deadline_s"):
            value = getattr(self, name)
            if value is not None and not value > 0:
                raise ValueError(f"LLMConfig.{name} must be > 0 seconds, got {value}")
        if self.max_retries < 0:
            raise ValueError(f"LLMConfig.max_retries must be >= 0, got {self.max_retries}")
        if self.concurrency is not None and self.concurrency < 1:
            raise ValueError(f"LLMConfig.concurrency must be >= 1 (or None for the process default), "
                             f"got {self.concurrency}")
        if self.cache_dir is not None and not isinstance(self.cache_dir, Path):
            object.__setattr__(self, "cache_dir", Path(self.cache_dir))

    def attempt_s(self, *, stream: bool) -> float:
        """How long one attempt may take: the answer stream gets longer than a scoring call."""
        if stream:
            return self.stream_timeout_s if self.stream_timeout_s is not None else 3.0 * self.timeout_s
        return self.timeout_s

    def call_deadline_s(self, *, stream: bool) -> float:
        """How long one call may take from its first attempt, retries and backoff included."""
        if stream or self.deadline_s is None:
            return 1.5 * self.attempt_s(stream=stream)
        return self.deadline_s

    def public_dict(self) -> dict:
        """What a trace may record about the model: never the key."""
        return {"model": self.model, "api_base": public_url(self.api_base), "api_version": self.api_version,
                "api_key_env": self.api_key_env}


@dataclass(kw_only=True)
class LLMResult:
    text: str
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None  # None = the model's price is unknown to LiteLLM
    cached: bool
    wall_s: float
    retries: int
    response_format: str | None = None  # "json_schema" | "json_object" | None (what was requested)


@dataclass(kw_only=True)
class ClientUsage:
    """A client's running totals across every run it serves, with what only a client knows (retries, failures).
    ``calls`` counts provider requests (each once, however many retries); HTTP attempts = calls + retries. Cache
    hits cost nothing and are counted apart. A run's own usage is tog_core.llm.usage.Usage."""

    calls: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = 0.0  # None as soon as any call's cost is unknown
    retries: int = 0
    failures: int = 0  # calls that ended in LLMError

    def snapshot(self) -> ClientUsage:
        return replace(self)

    def since(self, earlier: ClientUsage) -> ClientUsage:
        """The usage accrued after ``earlier`` (a snapshot of this object)."""
        cost = None if self.cost_usd is None or earlier.cost_usd is None \
            else self.cost_usd - earlier.cost_usd
        return ClientUsage(calls=self.calls - earlier.calls, cache_hits=self.cache_hits - earlier.cache_hits,
                     prompt_tokens=self.prompt_tokens - earlier.prompt_tokens,
                     completion_tokens=self.completion_tokens - earlier.completion_tokens,
                     cost_usd=cost, retries=self.retries - earlier.retries,
                     failures=self.failures - earlier.failures)

    def to_dict(self) -> dict:
        return asdict(self)


@runtime_checkable
class ChatModel(Protocol):
    """Exactly what the engine and its scorers call on a chat model (tests/test_protocols.py checks
    this list against the code). A call that fails raises ``tog_core.llm.errors.LLMError``."""

    async def complete(self, messages: list[dict], *, temperature: float, max_tokens: int = 256,
                       json_schema: dict | None = None) -> LLMResult: ...

    async def stream(self, messages: list[dict], *, temperature: float, max_tokens: int = 512,
                     on_token: Callable[[str], None]) -> LLMResult: ...

    def cache_only(self, *, misses_fail: bool = False) -> AbstractContextManager[None]:
        """Within it, a call whose reply is not in the response cache raises ``errors.NotCached`` (with
        `misses_fail`: an ``LLMError``, as the call did when the run was made) instead of asking the provider: a
        saved run replayed to rebuild its history costs nothing, or stops."""
        ...


# a model's cache-only mode: "" off, "raise" (NotCached on a miss) or "fail" (LLMError on a miss)
CacheOnly = Literal["", "raise", "fail"]


@contextmanager
def cache_only_mode(model: Any, *, misses_fail: bool) -> Iterator[None]:
    """`ChatModel.cache_only` for a model that reads its own `_cache_only` on every call: "raise" (NotCached) or, with
    `misses_fail`, "fail" (LLMError) within the block, what it was before after it, also when the block raises."""
    before, model._cache_only = model._cache_only, "fail" if misses_fail else "raise"
    try:
        yield
    finally:
        model._cache_only = before


def estimate_tokens(text: str) -> int:
    """Rough token count (~4 characters a token) when the provider reports no usage."""
    return max(1, len(text) // 4) if text else 0
