"""One-step lookahead for the cheap (LLM-free) pruners.

A cheap scorer rates an entity by its own text, which says nothing about whether the search can go on
from it: in "what languages are the films starring the actors of X in", a film picked at hop 2 is worth
keeping only if it has a language edge, and its title does not say so. Before the beam cut of a hop
that is not the last, each candidate entity is rated by the best relation it would offer at the next
hop — only edges the search could really take — scored by the same scorer against the question and the
next hop's focus. The rating is that score over the best of the step, so 1 for the best and 0 for a dead end. The engine
folds it into the candidate's score and uses it to choose which entities of a big relation group are
looked at at all.

The ratio is deliberately soft: an embedder's similarities between relation types differ by hundredths,
so what the rating mostly carries is "can go on / can only repeat itself / cannot go on". A rank-based
rating (1, 1/2, 1/3 …) amplified those hundredths and cost 2 points of MetaQA beam recall.

On a typed graph (a `relation` column) a relation type reads the same everywhere, so there are only a
few distinct texts to score. On a GraphRAG graph every edge has its own description, so the lookahead
reads at most `per_entity` of them per candidate and the engine scores them with its pre-filter (BM25)
rather than the embedder.
"""
from __future__ import annotations

from typing import Any
from collections.abc import Callable, Sequence

from tog_core.scoring.scorers import ScoreRequest
from tog_core.tog.policy import NextEdges, NextHop


async def rate_next_hops(graph: Any, scorer: Any, *, question: str, focus: str, options: Sequence[NextEdges],
                         text_of: Callable[[Any, str, int], str], ctx: Any, floor: float = 0.0, per_entity: int = 30
                         ) -> list[NextHop]:
    """For each candidate entity: its best next relation, among the edges the engine says the search could take
    from it (`options`, NextEdges in candidate order), so a writer whose only film is the one we came from is a
    dead end. `text_of(ctx, label, ridx)` is how the policy reads a relation. Every candidate is rated against the
    same query, so ratings compare across paths. The ratings come in candidate order."""
    typed = graph.has_relation_labels
    scan = 5000 if typed else per_entity  # edges read per candidate: a type repeats, a description does not
    groups: list[list[tuple[tuple[str, bool], str]]] = []  # per candidate: ((label, out), text) of each group
    for nxt in options:
        rels, outs = nxt.rels[:scan], nxt.outs[:scan]
        firsts: dict[tuple[str, bool], int] = {}
        for r, lab, out in zip(rels, graph.labels(rels), outs):
            firsts.setdefault((lab, bool(out)), int(r))
        groups.append([(key, text_of(ctx, key[0], r)) for key, r in firsts.items()])
    texts = sorted({t for opts in groups for _, t in opts})
    if not texts:
        return [NextHop(value=0.0, text="") for _ in options]
    res = await scorer.score(ScoreRequest(question=question, stage="relations", anchor="", texts=texts, focus=focus))
    by_text = dict(zip(texts, res.values))
    raw: list[tuple[float, str]] = []
    for opts in groups:
        best = (0.0, "")
        for _key, t in opts:
            v = floor + (1 - floor) * by_text[t]  # as the relation stage floors it
            if v > best[0]:
                best = (v, t)
        raw.append(best)
    top = max(v for v, _ in raw)
    return [NextHop(value=round(v / top, 6) if top > 0 else 0.0, text=t) for v, t in raw]
