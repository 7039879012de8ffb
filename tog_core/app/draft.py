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
import re
from dataclasses import dataclass
from typing import Any
from collections.abc import Callable

from tog_core.graphrag.store import GraphStore
from tog_core.llm.chat import LLMResult
from tog_core.tog.trace import Trace

DRAFT_MAX_TOKENS = 160  # the cap asked of the server; a useful draft is one or two sentences
MIN_PERIOD = 12  # a repeated stretch shorter than this (characters) is not a loop ("very very")
REPEATS = 3  # a stretch seen this many times in a row at the end is a loop
_SPACE = re.compile(r"\s+")
_MARKER = re.compile(r"^[\W\d_]*")  # a list marker or number at the start of a line: "[3] ", "2. ", "- "


class _Repetition(Exception):
    """Raised inside the stream callback to end the stream (never escapes RepetitionGuard.stream)."""


def repetition_cut(text: str) -> int | None:
    """Where a repetition starts, or None: the end of the first copy when the text ends with REPEATS copies of
    a stretch of at least MIN_PERIOD characters, or the start of a line (≥ MIN_PERIOD characters) that has
    already been written once, its list marker or number aside."""
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
            key = _MARKER.sub("", _SPACE.sub(" ", line).strip().lower())  # "[2] x" repeats "[1] x"
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


def draft_messages(question: str, answer: str, facts: list[str]) -> list[dict[str, str]]:
    """The draft's prompt: the question, the answer the chain reached, and the facts it rests on (the last link
    first: it names the answer). The model is asked to phrase, not to find: a 135M model cannot search, but it
    can often turn three facts and a name into one sentence."""
    lines = "\n".join(f"- {f}" for f in facts)
    return [{"role": "system", "content": "You write one short sentence that answers the question, using only the "
                                          "facts given. Write nothing else."},
            {"role": "user", "content": f"Facts:\n{lines}\n\nQuestion: {question}\nAnswer: {answer}\n\n"
                                        "Write the answer as one sentence."}]


def draft_facts(trace: Trace, graph: GraphStore, *, limit: int = 4) -> list[str]:
    """What the answer's chain rests on, last link first: each link's relation text and the sentence of its
    source text that supports it (views.support_span), without repeats."""
    from tog_core.app.views import answer_view, evidence

    view = answer_view(trace)
    out: list[str] = []
    for link in reversed(evidence(graph, trace.to_dict(), view["chain_index"], per_link=2)):
        said = [text[span[0]:span[1]] for _, text, span in link["units"] if span]
        for fact in [link["description"] or link["relation"], *said[:1]]:
            if fact and fact not in out:
                out.append(fact)
    return out[:limit]


def draft_answer(trace: Trace, graph: GraphStore, local_llm: Any, *, max_tokens: int = DRAFT_MAX_TOKENS,
                 on_token: Callable[[str], None] | None = None) -> Drafted:
    """A one-sentence draft of an LLM-free run's answer, written by `local_llm` behind a RepetitionGuard at
    temperature 0 and at most `max_tokens`. The run itself is not changed."""
    from tog_core.app.views import answer_view
    from tog_core.llm.errors import LLMError

    answer = answer_view(trace)["entity"]
    if not answer:
        return Drafted(text="", stopped="no chain to draft from")
    guard = RepetitionGuard(local_llm, max_tokens=max_tokens)
    msgs = draft_messages(trace.question or "", answer, draft_facts(trace, graph))
    try:
        res = asyncio.run(guard.stream(msgs, temperature=0.0, max_tokens=max_tokens,
                                       on_token=on_token or (lambda _t: None)))
    except LLMError as err:
        return Drafted(text="", stopped=f"error: {err}")
    return Drafted(text=res.text.strip(), stopped=guard.last_stop, prompt_tokens=int(res.prompt_tokens or 0),
                   completion_tokens=int(res.completion_tokens or 0))
