"""Candidates found in the source text, beside the ones the beam search finds and the ones found by their descriptions.

The questions a person asks of a GraphRAG project come from its documents, and the graph keeps, for every
relationship, the text units (chunks of those documents) it was extracted from. Here the text units behind the
relationships the topic entities reach within the search's depth are read against the question (BM25, IDF over those
units), and the entities at either end of the best units' relationships, where those units name them near the
question's words, become answer candidates, each with the shortest chain to it (policy/answers.py). The answer ranker,
fitted on every data set's dev questions, decides how far to trust them, as it does for the candidates found by their
descriptions (policy/retrieval.py): their search-side features are 0 and `beam` is 0.

Free-text (GraphRAG) graphs only. Measured on the dev sets (docs/experiment-log.md, tenth stop).
"""
from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from tog_core.policy.passages import passage_words
from tog_core.policy.retrieval import Neighbourhood, chain_to, index_of
from tog_core.scoring.text import read_tokens
from tog_core.tog.state import BeamPath

UNITS_READ = 5  # the text units whose relationships' ends become candidates, best first
MAX_RELATIONSHIPS = 20_000  # the nearest relationships of the neighbourhood whose text units are read
MAX_UNITS = 2_000  # at most this many distinct text units read per question (the nearest relationships' first)
_K1, _B = 1.2, 0.75  # BM25's usual constants (Robertson et al.); not tuned here


@lru_cache(maxsize=4096)  # a text unit is read for every question that reaches it
def _tokens(text: str) -> tuple[str, ...]:
    return tuple(read_tokens(text))


def best_units(graph: Any, near: Neighbourhood, query: frozenset[str], n: int = UNITS_READ
               ) -> list[tuple[Any, list[int]]]:
    """The `n` text units behind `near`'s relationships that score best against `query` (BM25 over those units;
    none scoring 0), best first, each with the relationships of `near` that cite it."""
    if not query or n <= 0:
        return []
    rels = list(near.rels[:MAX_RELATIONSHIPS])
    evidence = graph.evidence_many(rels) if rels else {}
    units: dict[str, Any] = {}
    cites: dict[str, list[int]] = {}
    for r in rels:
        for tu in evidence.get(r, ()):
            if tu.id not in units:
                if len(units) >= MAX_UNITS:
                    continue
                units[tu.id] = tu
            cites.setdefault(tu.id, []).append(r)
    if not units:
        return []
    docs = {u: _tokens(tu.text or "") for u, tu in units.items()}
    df = Counter(w for d in docs.values() for w in set(d) if w in query)
    mean_len = max(1.0, sum(map(len, docs.values())) / len(docs))

    def bm25(doc: tuple[str, ...]) -> float:
        tf = Counter(w for w in doc if w in query)
        norm = _K1 * (1 - _B + _B * len(doc) / mean_len)
        return sum(math.log(1 + (len(docs) - df[w] + 0.5) / (df[w] + 0.5)) * f * (_K1 + 1) / (f + norm)
                   for w, f in tf.items())

    scored = [(bm25(d), i, u) for i, (u, d) in enumerate(docs.items())]
    best = sorted((x for x in scored if x[0] > 0), key=lambda x: (-x[0], x[1]))[:n]
    return [(units[u], cites[u]) for _, _, u in best]


def found_in_text(graph: Any, near: Neighbourhood, query: frozenset[str], *, k: int,
                  exclude: frozenset[int] = frozenset(), exact: bool = False,
                  allowed: Callable[[BeamPath], bool] | None = None) -> list[BeamPath]:
    """Up to `k` entities at an end of a relationship cited by one of the best text units (`best_units`), reached in
    `near` (at exactly its depth when `exact`), not a topic and not in `exclude`: best first by the share of `query`
    found in the unit around where it names the entity (policy/passages.py), then by the unit's place. Each as the
    shortest chain from a topic (retrieval.chain_to); `allowed` refuses a chain (a person's overrides)."""
    if k <= 0 or not query:
        return []
    dist = near.dist
    found: dict[int, tuple[float, int]] = {}
    for place, (unit, rels) in enumerate(best_units(graph, near, query)):
        for r in rels:
            for e in graph.endpoints(r):
                if dist.get(e, 0) <= 0 or e in exclude or (exact and dist[e] != near.depth):
                    continue
                share = passage_words([unit], graph.title(e), query)
                found[e] = max(found.get(e, (share, -place)), (share, -place))
    index = index_of(graph)
    out: list[BeamPath] = []
    for e in sorted(found, key=lambda e: (-found[e][0], -found[e][1])):  # ties: the order met
        path = chain_to(graph, e, near, index, query)
        if allowed is None or allowed(path):
            out.append(path)
        if len(out) >= k:
            break
    return out

