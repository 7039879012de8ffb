"""The LLM reader: one call reads the question (prompts.reading_prompt) into the same QuestionReading the rule reader
makes, so the LLM-free policy reads it the same way.

The model gives the number of hops, the answer's type word and the relation phrases in walking order; the
question's language, topic spans, near / far split and content words stay the rule reader's (`base`), which is also
the named fallback: on a failed call or an unreadable reply the reading is `base` with `fallback` saying why, and the
usage record says it too (it lands in the trace's `stats.other_fallbacks`). A field the reply did not give is the
rule reader's (named in the usage's `detail`).
"""
from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from tog_core.llm.errors import LLMError
from tog_core.llm.usage import Usage
from tog_core.prompting import prompts
from tog_core.prompting.reading_parsing import FALLBACK_READING_UNPARSED, parse_reading
from tog_core.reading import QuestionReading
from tog_core.reading.readers import type_stems
from tog_core.scoring.text import tokens

FALLBACK_READING_ERROR = "llm_reading_error"  # the reading call failed: the rule reading
__all__ = ["FALLBACK_READING_ERROR", "FALLBACK_READING_UNPARSED", "read_with_llm"]
MAX_TOKENS = 200  # the reply is one short JSON object


async def read_with_llm(question: str, topics: Sequence[str], llm: Any, base: QuestionReading, *,
                        temperature: float = 0.0,
                        clock: Callable[[], float] = time.perf_counter) -> tuple[QuestionReading, dict[str, Any]]:
    """(the reading, the call's usage) from one call. On success `by` is "llm": hops (at least 1), `asked` (the stems
    of the type word), `phrases` from the reply, the rest from `base` (the rule reading of the same question). On an
    LLM error or an unreadable reply: `base` with `fallback` set to the reason's name. The usage dict is shaped like
    the linking call's (tog/engine.py `_linked`): stage "reading", plus "fallback" and "detail" when it fell back."""
    t0 = clock()
    try:
        res = await llm.complete(prompts.reading_prompt(question, [t for t in topics if t]), temperature=temperature,
                                 max_tokens=MAX_TOKENS, json_schema=prompts.READING_SCHEMA)
    except LLMError as err:  # its message names the model and the fix, never a key (llm/errors.py)
        usage = {"stage": "reading", **Usage.failed_call().to_dict(), "fallback": FALLBACK_READING_ERROR,
                 "detail": f"{err.kind}: {str(err)[:200]}", "wall_s": clock() - t0}
        return replace(base, fallback=f"{FALLBACK_READING_ERROR}: {err.kind}"), usage
    usage = {"stage": "reading", **Usage.of_result(res).to_dict(), "wall_s": clock() - t0}
    reply = parse_reading(res.text)
    if reply.fallback:
        return (replace(base, fallback=FALLBACK_READING_UNPARSED),
                {**usage, "fallback": FALLBACK_READING_UNPARSED, "detail": reply.detail})
    asked = type_stems(reply.answer_type) if reply.answer_type else base.asked
    named = bool(set(asked) & set(tokens(question))) if reply.answer_type else base.asked_named
    reading = replace(base, by="llm", fallback="", hops=reply.hops or base.hops, asked=asked, asked_named=named,
                      phrases=tuple(reply.phrases) or base.phrases)
    return reading, {**usage, "detail": reply.detail}
