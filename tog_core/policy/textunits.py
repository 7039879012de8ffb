"""Candidates found in the source text, beside the ones the beam search finds and the ones found by their descriptions.

The questions a person asks of a GraphRAG project come from its documents, and the graph keeps, for every
relationship, the text units (chunks of those documents) it was extracted from. Here the text units behind the
relationships the topic entities reach within the search's depth are read against the question (BM25, IDF over those
units), and the entities at either end of the best units' relationships, where those units name them near the
question's words, become answer candidates, each with the shortest chain to it (policy/answers.py). The answer ranker,
fitted on every data set's dev questions, decides how far to trust them, as it does for the candidates found by their
descriptions (policy/retrieval.py): their search-side features are 0 and `beam` is 0.

Free-text (GraphRAG) graphs only, and off by default (`CheapPolicy.text_found` 0): with five of them and the ranker
refitted, the sets left out gained a few first answers, and so did the seven unseen sets, but a new blind set lost
one, and the rule written before that reading dropped them (docs/experiment-log.md, tenth stop). The shipped ranker
was fitted without them; switching them on without refitting it is untested.
"""
from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from tog_core.graphrag.store import TextUnit
from tog_core.policy.passages import passage_words
from tog_core.policy.retrieval import Neighbourhood, chain_to, index_of
from tog_core.scoring.text import read_tokens
from tog_core.scoring.sentences import name_pattern
from tog_core.tog.state import BeamPath, Hop

UNITS_READ = 5  # the text units whose relationships' ends become candidates, best first
MAX_RELATIONSHIPS = 20_000  # the nearest relationships of the neighbourhood whose text units are read
MAX_UNITS = 2_000  # at most this many distinct text units read per question (the nearest relationships' first)
_K1, _B = 1.2, 0.75  # BM25's usual constants (Robertson et al.); not tuned here


@lru_cache(maxsize=4096)  # a text unit is read for every question that reaches it
def _counts(text: str) -> tuple[Counter[str], int]:
    """A text's word counts and its length in words."""
    words = read_tokens(text)
    return Counter(words), len(words)


def best_units(graph: Any, near: Neighbourhood, query: frozenset[str], n: int = UNITS_READ
               ) -> list[tuple[Any, list[int]]]:
    """The `n` text units behind `near`'s relationships that score best against `query` (BM25 over those units;
    none scoring 0), best first, each with the relationships of `near` that cite it. The nearest MAX_RELATIONSHIPS
    relationships' units are read, at most MAX_UNITS of them (the nearest first)."""
    if not query or n <= 0:
        return []
    rels = list(near.rels[:MAX_RELATIONSHIPS])
    ids_of, texts = graph.text_units_near(rels, MAX_UNITS) if rels else ({}, {})
    units: dict[str, TextUnit] = {u: TextUnit(id=u, text=t) for u, t in texts.items()}
    cites: dict[str, list[int]] = {}
    for r in rels:
        for u in ids_of.get(r, ()):
            if u in units:
                cites.setdefault(u, []).append(r)
    if not units:
        return []
    docs = {u: _counts(tu.text or "") for u, tu in units.items()}
    df = Counter(w for counts, _ in docs.values() for w in query if w in counts)
    mean_len = max(1.0, sum(length for _, length in docs.values()) / len(docs))

    def bm25(doc: tuple[Counter[str], int]) -> float:
        counts, length = doc
        norm = _K1 * (1 - _B + _B * length / mean_len)
        return sum(math.log(1 + (len(docs) - df[w] + 0.5) / (df[w] + 0.5)) * f * (_K1 + 1) / (f + norm)
                   for w in query if (f := counts.get(w, 0)))

    scored = [(bm25(d), i, u) for i, (u, d) in enumerate(docs.items())]
    best = sorted((x for x in scored if x[0] > 0), key=lambda x: (-x[0], x[1]))[:n]
    return [(units[u], cites[u]) for _, _, u in best]


def found_in_text(graph: Any, near: Neighbourhood, query: frozenset[str], *, k: int,
                  exclude: frozenset[int] = frozenset(), exact: bool = False,
                  allowed: Callable[[BeamPath], bool] | None = None) -> list[BeamPath]:
    """Up to `k` entities at an end of a relationship cited by one of the best text units (`best_units`), reached in
    `near` (at exactly its depth when `exact`), not a topic and not in `exclude`, and named by the unit: best first by
    the share of `query` found in the unit around where it names the entity (policy/passages.py), then by the unit's
    place. Each as the shortest chain from a topic ending with a relationship that cites the unit, when one comes from
    an entity a level nearer (else retrieval.chain_to's); `allowed` refuses a chain (a person's overrides)."""
    if k <= 0 or not query:
        return []
    dist = near.dist
    met: list[tuple[int, int, int, Any]] = []  # (place, relationship, entity, unit)
    for place, (unit, rels) in enumerate(best_units(graph, near, query)):
        for r in rels:
            for e in near.ends[r]:
                if dist.get(e, 0) > 0 and e not in exclude and (not exact or dist[e] == near.depth):
                    met.append((place, r, e, unit))
    titles = _titles(graph, [e for _, _, e, _ in met])
    found: dict[int, tuple[float, int]] = {}
    via: dict[int, tuple[int, int]] = {}  # (the relationship citing its best unit, its end a level nearer)
    for place, r, e, unit in met:
        share = passage_words([unit], titles[e], query)
        if share == 0.0 and not _names(unit, titles[e]):  # a unit that never names it did not find it
            continue
        key = (share, -place)
        if e not in found or key > found[e]:
            found[e] = key
            via.pop(e, None)
        if key == found[e] and e not in via:
            a, b = near.ends[r]
            other = b if a == e else a
            if dist.get(other, -1) == dist[e] - 1:
                via[e] = (r, other)
    index = index_of(graph)
    out: list[BeamPath] = []
    for e in sorted(found, key=lambda e: (-found[e][0], -found[e][1])):  # ties: the order met
        path = _chain(graph, e, via.get(e), near, index, query)
        if allowed is None or allowed(path):
            out.append(path)
        if len(out) >= k:
            break
    return out


def _titles(graph: Any, entities: list[int]) -> dict[int, str]:
    """{entity: title} of `entities`, read in one call."""
    distinct = list(dict.fromkeys(entities))
    return {e: x.title for e, x in zip(distinct, graph.entities(distinct))} if distinct else {}


def _names(unit: Any, title: str) -> bool:
    pattern = name_pattern(title)
    return pattern is not None and pattern.search(unit.text or "") is not None


def _chain(graph: Any, entity: int, via: tuple[int, int] | None, near: Neighbourhood, index: Any,
           query: frozenset[str]) -> BeamPath:
    """retrieval.chain_to's chain to `entity`, or, with `via` (a relationship and its other end), the chain to that end
    and then the relationship."""
    if via is None:
        return chain_to(graph, entity, near, index, query)
    ridx, other = via
    head = chain_to(graph, other, near, index, query)
    hop = Hop(ridx=ridx, src=other, dst=entity, score=0.0, label=graph.labels([ridx])[0])
    return BeamPath(start=head.start, hops=(*head.hops, hop), score=0.0)
