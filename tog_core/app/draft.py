"""The opt-in draft: a sentence written by the small local model from an LLM-free run's chains, with a token cap
and a repetition stop.

The 135M model loops ("The company is the company is the company …") and invents facts, so it is never the
default: the person asks for a draft, sees it under the chain-composed answer with a caveat, and the stream is
cut as soon as it starts repeating itself. `RepetitionGuard` wraps any chat model's `stream` (the LLM seam is
not changed): it watches the tokens and stops the stream when the text repeats a line or a stretch of text,
returning what came before the repetition.
"""
from __future__ import annotations

import asyncio
import copy
import re
from dataclasses import dataclass, replace
from typing import Any
from collections.abc import Callable

from tog_core.llm.chat import LLMResult

DRAFT_MAX_TOKENS = 160  # the cap asked of the server; a useful draft is one or two sentences
MIN_PERIOD = 12  # a repeated stretch shorter than this (characters) is not a loop ("very very")
REPEATS = 3  # a stretch seen this many times in a row at the end is a loop
_SPACE = re.compile(r"\s+")


class _Repetition(Exception):
    """Raised inside the stream callback to end the stream (never escapes RepetitionGuard.stream)."""


def repetition_cut(text: str) -> int | None:
    """Where a repetition starts, or None: the end of the first copy when the text ends with REPEATS copies of
    a stretch of at least MIN_PERIOD characters, or the start of a line (≥ MIN_PERIOD characters) that has
    already been written once."""
    n = len(text)
    for p in range(MIN_PERIOD, n // REPEATS + 1):
        tail = text[n - p:]
        if all(text[n - (k + 1) * p: n - k * p] == tail for k in range(1, REPEATS)):
            return n - (REPEATS - 1) * p
    lines = text.split("\n")
    if len(lines) > 2:  # the last line may still be growing: look at complete lines only
        seen: set[str] = set()
        pos = 0
        for line in lines[:-1]:
            key = _SPACE.sub(" ", line).strip().lower()
            if len(key) >= MIN_PERIOD and key in seen:
                return pos
            seen.add(key)
            pos += len(line) + 1
    return None


@dataclass(kw_only=True)
class Drafted:
    text: str
    stopped: str  # "repetition" | "cap" | "end"
    prompt_tokens: int = 0
    completion_tokens: int = 0


class RepetitionGuard:
    """A chat model whose streams end when they start repeating. Everything else is the wrapped model's."""

    def __init__(self, inner: Any, *, max_tokens: int = DRAFT_MAX_TOKENS) -> None:
        self.inner = inner
        self.max_tokens = max_tokens
        self.last_stop = "end"

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def stream(self, messages: list[dict], *, temperature: float, max_tokens: int = 512,
                     on_token: Callable[[str], None]) -> Any:
        text: list[str] = []
        cap = min(max_tokens, self.max_tokens)
        self.last_stop = "end"

        def guard(piece: str) -> None:
            text.append(piece)
            whole = "".join(text)
            cut = repetition_cut(whole)
            if cut is not None:
                raise _Repetition(whole[:cut])
            on_token(piece)

        try:
            res = await self.inner.stream(messages, temperature=temperature, max_tokens=cap, on_token=guard)
        except _Repetition as rep:
            self.last_stop = "repetition"
            # the provider's usage chunk never came: the pieces received stand in for the tokens
            return LLMResult(text=str(rep.args[0]).rstrip(), prompt_tokens=0, completion_tokens=len(text),
                             cost_usd=0.0, cached=False, wall_s=0.0, retries=0)
        if int(getattr(res, "completion_tokens", 0) or 0) >= cap:
            self.last_stop = "cap"
        return res


def support_sentences(engine: Any, state: Any, *, limit: int = 4) -> list[str]:
    """The sentence of the source text that supports each link of the best chain (views.support_span), the
    last link first: it names the answer, and a small model leans on what it reads first."""
    from tog_core.app.views import support_span

    out: list[str] = []
    best = engine.best_paths(state)[:1]
    for path in best:
        for hop in reversed(path.hops):
            rel = engine.graph.relationship(hop.ridx)
            src, dst = engine.graph.title(hop.src), engine.graph.title(hop.dst)
            for unit in engine.graph.evidence(hop.ridx)[:2]:
                span = support_span(unit.text, relation=rel.description or hop.label, source=src, target=dst)
                if span and unit.text[span[0]:span[1]] not in out:
                    out.append(unit.text[span[0]:span[1]])
                    break
    return out[:limit]


def draft_answer(engine: Any, state: Any, local_llm: Any, *, max_tokens: int = DRAFT_MAX_TOKENS,
                 on_token: Callable[[str], None] | None = None) -> Drafted:
    """A draft answer for an LLM-free run's state, written by `local_llm` behind a RepetitionGuard: the same
    answer prompt as an LLM run (chains + source text), at temperature 0, at most `max_tokens`."""
    guard = RepetitionGuard(local_llm, max_tokens=max_tokens)
    eng = copy.copy(engine)  # the run's engine with the guarded local model as its writer; nothing else changes
    eng.llm = guard
    eng.config = replace(engine.config, answer_max_tokens=max_tokens, temperature_reasoning=0.0)
    # the small model reads the supporting sentence of each link, not whole passages: a prompt it can take in
    # (a few hundred tokens, seconds on two CPU threads) and nothing to wander off into
    eng.evidence_texts = lambda st, **_kw: support_sentences(engine, st)
    start = state.with_(stage="answer", answer="", answer_by="")
    done = asyncio.run(eng.answer(start, on_token=on_token))
    if done.answer_by != "llm":  # the model failed: the engine fell back to the chains; say so
        return Drafted(text="", stopped="error: " + (done.error or "the local model did not answer"))
    usage = done.extra_usage[-1] if done.extra_usage else {}
    return Drafted(text=done.answer, stopped=guard.last_stop, prompt_tokens=int(usage.get("prompt_tokens") or 0),
                   completion_tokens=int(usage.get("completion_tokens") or 0))
