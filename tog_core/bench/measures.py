"""What a person sees, measured: the ordered answer list (Hits@k) and how well the confidence tells right answers
from wrong ones (AUROC, and the share of each flagged as a guess).

A question "right" here is chain Hits@1 (the entity the answer names is a gold answer). A question flagged as a
guess has confidence below its `low_confidence` threshold; a question with no answer at all (no chain, no seed)
has no confidence and counts as confidence 0, flagged: the page claims nothing there.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def answer_candidates(engine: Any, state: Any, ranked: Sequence[str]) -> list[str]:
    """The ordered answer list a run shows: the policy's ranked titles (the answer first), then the end entities of
    the final chains in chain order not yet listed, each title once."""
    graph = engine.graph
    ends = [graph.title(p.end) for p in engine.best_paths(state) if p.hops]
    return list(dict.fromkeys([*ranked, *ends]))


def hits_at(candidates: Sequence[str], gold: set[str] | frozenset[str], k: int) -> bool:
    """A gold answer among the first k candidates."""
    return any(c in gold for c in candidates[:k])


def effective_confidence(confidence: float | None) -> float:
    return 0.0 if confidence is None else float(confidence)


def flagged(confidence: float | None, low: float | None) -> bool:
    """Shown as a guess: confidence below the threshold; no answer (no confidence) counts as flagged."""
    if confidence is None:
        return True
    return low is not None and float(confidence) < float(low)


def auroc(right: Sequence[float], wrong: Sequence[float]) -> float | None:
    """Probability that a right answer's confidence is above a wrong one's, ties counting one half (the
    Mann-Whitney statistic); None without both a right and a wrong answer."""
    if not right or not wrong:
        return None
    wins = 0.0
    for r in right:
        for w in wrong:
            wins += 1.0 if r > w else 0.5 if r == w else 0.0
    return round(wins / (len(right) * len(wrong)), 4)


def confidence_metrics(rows: Sequence[Any]) -> dict[str, float | None]:
    """AUROC of confidence for right vs wrong, and the share of wrong / right answers flagged as guesses.
    `rows` carry `chain_hit`, `confidence` and `low_confidence`."""
    right = [r for r in rows if r.chain_hit]
    wrong = [r for r in rows if not r.chain_hit]

    def share(group: Sequence[Any]) -> float | None:
        if not group:
            return None
        return round(sum(flagged(r.confidence, r.low_confidence) for r in group) / len(group), 4)

    return {"auroc": auroc([effective_confidence(r.confidence) for r in right],
                           [effective_confidence(r.confidence) for r in wrong]),
            "wrong_flagged": share(wrong), "right_flagged": share(right)}
