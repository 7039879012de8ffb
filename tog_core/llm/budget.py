"""What one LLM call may spend: its time (`Deadline`: a per-attempt timeout within one deadline per call) and its
money (`call_cost` from LiteLLM's price list, None for a model it does not price; `register_zero_cost` for a local
model). Used by `llm/client.py`."""

from __future__ import annotations

import time

from tog_core.llm._litellm import load_litellm
from tog_core.llm.chat import LLMConfig


def register_zero_cost(model_name: str) -> None:
    """Tell LiteLLM that ``model_name`` (e.g. a local "openai/my-model" behind a custom api_base)
    costs nothing, so usage reports $0 instead of "unknown"."""
    litellm = load_litellm()
    try:
        provider = litellm.get_llm_provider(model_name)[1]
    except litellm.BadRequestError:
        provider = "openai"
    litellm.register_model({model_name: {"input_cost_per_token": 0.0, "output_cost_per_token": 0.0,
                                         "litellm_provider": provider, "mode": "chat"}})


def call_cost(model: str, prompt_tokens: int, completion_tokens: int) -> float | None:
    """The price of one call in US dollars by LiteLLM's price list; None for a model it does not price."""
    litellm = load_litellm()
    try:
        prompt_cost, completion_cost = litellm.cost_per_token(
            model=model, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens)
    except (litellm.ModelNotMappedError, litellm.BadRequestError, litellm.NotFoundError):
        return None
    return float(prompt_cost + completion_cost)


class Deadline:
    """One call's time. Each attempt gets its per-attempt timeout, cut to what is left of the call's deadline;
    the clock starts at the first attempt (time queued for the first slot is the process's, not the provider's)."""

    def __init__(self, config: LLMConfig, *, stream: bool) -> None:
        self.attempt_s = config.attempt_s(stream=stream)
        self.deadline_s = config.call_deadline_s(stream=stream)
        self._ends: float | None = None

    def budget_s(self) -> float:
        now = time.monotonic()
        if self._ends is None:
            self._ends = now + self.deadline_s
        left = self._ends - now
        if left <= 0:
            raise TimeoutError(f"the call's deadline of {self.deadline_s:g}s passed")
        return min(self.attempt_s, left)

    def room_for(self, delay_s: float) -> bool:
        """Whether a retry after ``delay_s`` would still get a useful share of an attempt."""
        if self._ends is None:
            return True
        return self._ends - time.monotonic() - delay_s >= 0.1 * min(self.attempt_s, self.deadline_s)
