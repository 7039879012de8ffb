"""Why the answer ranker placed a candidate where it did, in words: the signals on which it leads or trails.

The ranker (policy/ranking.py) is a conditional logit: a candidate's probability depends only on how its weighted,
standardised features differ from the other candidates' of the same question. So the part a signal plays between two
candidates is its weight times their distance on it. The answer is read against the runner-up ("ahead of X on …"),
every other candidate against the answer ("behind Y on …"): what a person asking "why not X?" wants to know. The
words go into each candidate's `why` in the trace.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tog_core.policy.ranking import Model

# what each ranking feature reads, as a person would say it (policy/candidates.py describes each)
SIGNAL_WORDS = {
    "path_rel": "its chain's score in the search",
    "inv_rank": "its chain's place in the beam",
    "is_end": "ending its chain",
    "share_in": "the chains through it",
    "share_end": "the chains ending at it",
    "hop": "how many hops it is from the topic",
    "search_depth": "the depth of the search that found it",
    "share_searches": "the searches that reach it",
    "sim_entity": "its title and description read against the question",
    "sim_chain": "its whole chain read against the question",
    "sim_sentence": "the source sentence of its last link read against the question",
    "sim_type": "its entity type read against the question",
    "type_fit": "its entity type against what the question asks for",
    "coverage": "the question words its chain's relations cover",
    "overlap": "the question words in its chain",
    "log_degree": "how many links it has",
    "is_pick": "being the rule's pick (the wording rules' choice on the best chains)",
    "passage_words": "the question's words near its name in the source text",
    "asked_head": "its description saying it is what the question asks for",
    "title_named": "how much of its title the question itself uses",
    "desc_bm25": "how many of the question's words its whole description uses",
    "beam": "being on a kept chain",
    "path_cover": "how much of the question the best path to it names",
}
SHOWN = 2  # signals named on each side
MIN_PART = 0.25  # a signal parting two candidates' log-odds by less than this is not named


def parts(model: Model, rows: Sequence[dict[str, float]]) -> np.ndarray:
    """Per candidate and feature, the feature's part in its log-odds (candidates x features); only differences
    between candidates of one question count."""
    if not rows:
        return np.zeros((0, len(model.features)))
    return np.asarray((model.matrix(rows) - model.mean) / model.scale * model.weights)


def _named(diff: np.ndarray, names: list[str], sign: int) -> list[str]:
    """The signals (at most SHOWN) on which `diff` is furthest from zero in direction `sign`, each by MIN_PART."""
    order = np.argsort(-sign * diff)
    return [SIGNAL_WORDS[names[j]] for j in order[:SHOWN] if sign * diff[j] >= MIN_PART and names[j] in SIGNAL_WORDS]


def reasons(model: Model, rows: Sequence[dict[str, float]], titles: Sequence[str]) -> list[str]:
    """Per candidate, best first (`rows`, `titles` in the ranked order): the answer against the runner-up, "ahead
    of X on: …; behind X on: …", every other against the answer, "behind Y on: …; ahead of Y on: …", naming the
    signals that part them most (at most SHOWN each side, each by MIN_PART); "" for a lone candidate or where
    nothing parts them."""
    p = parts(model, rows)
    names = list(model.features)
    out = []
    for i in range(len(rows)):
        if i == 0 and len(rows) < 2:
            out.append("")
            continue
        other = 1 if i == 0 else 0
        diff = p[i] - p[other]
        lead, trail = _named(diff, names, 1), _named(diff, names, -1)
        first, second = (lead, trail) if i == 0 else (trail, lead)
        said = []
        if first:
            said.append(f"{'ahead of' if i == 0 else 'behind'} {titles[other]} on: {', '.join(first)}")
        if second:
            # the other candidate named again, not "it": a reader could not tell who "it" was
            said.append(f"{'behind' if i == 0 else 'ahead of'} {titles[other]} on: {', '.join(second)}")
        out.append("; ".join(said))
    return out
