"""What a question asks for and how much of it a chain has matched, by words — the LLM-free half of ToG.

Without an LLM nothing reads the chains, so two things are done with word overlap:

* the sufficiency judge (`verdict`): stop once a chain's relations match every content word of the
  question, as often as the question names it (the last-hop and recurring-relation conditions changed no dev
  question, and dropping "name"/"list" helped only MetaQA by one: docs/rules.md);
* the cheap scorers' query (`rest_of_question`): the question without the topic's name and without
  what the path has already matched, so a hop is not pulled back to what the chain has done.

Words are the pruners' `tokens` (lower case, stop words out, light stemming).
"""
from __future__ import annotations

import re
from collections import Counter
from typing import Any
from collections.abc import Sequence

from tog_core.scoring.text import UNSPACED, tokens, without_words



def covered(want: Counter[str], hop_texts: Sequence[str]) -> Counter[str]:
    """The wanted words the hops mention, each counted once per hop and at most as often as wanted."""
    got: Counter[str] = Counter()
    for text in hop_texts:
        got.update(set(want) & set(tokens(text)))
    return got & want


def rest_of_question(question: str, topics: Sequence[str], got: Counter[str]) -> str:
    """The question without the topics' names (they say what the topic is, not which relation is asked
    for: "Émile Zola" pulls every hop towards "written by") and without the words already matched."""
    for t in topics:
        if t:  # GraphRAG titles are upper case ("TAILOR"), the question's words are not ("the little tailor")
            # whole words ("Ann" is not the start of "annual"), except in a script without spaces (林小雨的外公)
            pattern = re.escape(t) if UNSPACED.search(t) else rf"(?<!\w){re.escape(t)}(?!\w)"
            question = re.sub(pattern, " ", question, flags=re.IGNORECASE)
    return without_words(question, got)


def verdict(want: Counter[str], chains: Sequence[Sequence[str]], written: dict[str, str] | None = None
            ) -> dict[str, Any]:
    """The LLM-free sufficiency verdict over chains given as their hops' texts: `want`, the question's content words
    (QuestionReading.want); `written` names them as the question writes them in the reason (stem -> word)."""
    say = written or {}
    if not want:
        return {"sufficient": False, "by": "coverage", "reason": "no LLM; the question has no content words to match"}
    best: Counter[str] = Counter()
    for hops in chains:
        got = covered(want, hops)
        if got.total() > best.total():
            best = got
        if got != want:
            continue
        return {"sufficient": True, "by": "coverage",
                "reason": f"a chain covers every question word ({', '.join(sorted(say.get(w, w) for w in want))})"}
    missing = ", ".join(sorted(say.get(w, w) for w in want - best))
    return {"sufficient": False, "by": "coverage", "reason": f"no LLM; not yet covered: {missing}"}
