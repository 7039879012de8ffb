"""What LLM work cost: calls, cache hits, tokens and money, added up in one place.

Every piece of a run that may call the model (a scoring call, the evaluate stage, linking, the answer)
reports a `Usage`; steps, the trace's stats and the benchmarks add them with `+`. The rules live here
once: a cached reply is a cache hit that costs nothing (no call, no tokens, $0); a call that failed still
counts as a call; a cost LiteLLM does not know (`None`) makes every sum it enters unknown.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any


@dataclass(frozen=True, kw_only=True)
class Usage:
    llm_calls: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = 0.0  # None: the provider's price is unknown

    def __add__(self, other: Usage) -> Usage:
        cost = None if self.cost_usd is None or other.cost_usd is None else self.cost_usd + other.cost_usd
        return Usage(llm_calls=self.llm_calls + other.llm_calls, cache_hits=self.cache_hits + other.cache_hits,
                     prompt_tokens=self.prompt_tokens + other.prompt_tokens,
                     completion_tokens=self.completion_tokens + other.completion_tokens, cost_usd=cost)

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @classmethod
    def of_result(cls, res: Any) -> Usage:
        """The usage of one LLM reply (an LLMResult): a cache hit costs nothing."""
        if res.cached:
            return cls(cache_hits=1)
        return cls(llm_calls=1, prompt_tokens=int(res.prompt_tokens or 0),
                   completion_tokens=int(res.completion_tokens or 0), cost_usd=res.cost_usd)

    @classmethod
    def failed_call(cls) -> Usage:
        """A call that ended in an error: it was made, its tokens and cost are not known to us."""
        return cls(llm_calls=1)

    @classmethod
    def of(cls, obj: Any) -> Usage:
        """The usage fields of anything that carries them (a trace Step, a dict, a ScoreResult)."""
        get = obj.get if isinstance(obj, dict) else (lambda k, d=None: getattr(obj, k, d))
        return cls(**{f.name: get(f.name, 0 if f.name != "cost_usd" else 0.0) for f in fields(cls)})

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def total(items: Any) -> Usage:
    """The sum of the usages of an iterable of Usage-carrying objects."""
    out = Usage()
    for x in items:
        out = out + (x if isinstance(x, Usage) else Usage.of(x))
    return out
