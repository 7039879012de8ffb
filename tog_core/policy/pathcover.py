"""Candidates found by whole paths: every path up to the search's depth from the topic entities, read as a whole.

The beam cuts at every hop on what that hop says. At a hub (SCROOGE: 145 relationships) the relation a multi-hop
question needs first often shares no word with it; the words that lead there belong to the later hops, which the
beam never sees once it has cut. On the graphs a GraphRAG project makes (a few thousand relationships) every path
within three hops of the topic entities can be read instead: a path's worth is the share of the question's words
(without the topics' names; each weighed by its rarity among the graph's entity descriptions, the IDF that
policy/retrieval.py's BM25 uses) that its hops name. A hop names the words of its relationship's description, of
the title of the entity it reaches and of that entity description's first sentence (what the relation stage reads:
CheapPolicy.relation_evidence). The walk is a dynamic programme over (entity, the set of question words named so
far), so it costs the number of such pairs, not the number of paths.

The best few ends at each number of hops join the answer ranker's candidates with the path that named the most
(policy/answers.py), and every candidate gets `path_cover`: the best share any path to it names. No word list and
no hand weight; the ranker, fitted on the dev sets, decides how far to trust them. Free-text (GraphRAG) graphs only.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from tog_core.policy import retrieval
from tog_core.scoring.text import first_sentence, tokens_in
from tog_core.tog.state import BeamPath, Hop

PATH_FOUND = 5  # ends added per number of hops (the study: docs/experiment-log.md, eighteenth stop)
MAX_STATES = 200_000  # (entity, words named) pairs the walk holds per level; past it, the farther ones are not read
EVIDENCE_CHARS = 300  # the first sentence of a reached entity's description, as the relation stage reads it


@lru_cache(maxsize=100_000)
def _words(text: str, language: str) -> frozenset[str]:
    return frozenset(tokens_in(text, language))


State = tuple[int, int]  # (entity, the question's words named so far as a bit mask)


@dataclass(frozen=True)
class Walk:
    """The walk's result: per number of hops (1 … depth), each entity reached with the best share of the question's
    words a path to it names and that path's last state (`back`: each state's previous one, the relationship and
    the entity it came from; paths are read back only for the ends found)."""

    best: dict[int, dict[int, tuple[float, State]]]
    back: dict[tuple[int, State], tuple[State | None, int, int]]
    graph: object = None

    def cover(self, entity: int) -> float:
        """The best share any path to `entity` names (0 when no path reaches it)."""
        return max((by[entity][0] for by in self.best.values() if entity in by), default=0.0)

    def found(self, k: int, *, exclude: frozenset[int], exact_hops: int | None = None,
              allowed: Callable[[BeamPath], bool] | None = None) -> list[BeamPath]:
        """The `k` best ends at each number of hops (only `exact_hops` when given), not in `exclude`, each once,
        with its path; a share of 0 is never found."""
        out: list[BeamPath] = []
        seen = set(exclude)
        for hops, by in sorted(self.best.items()):
            if exact_hops is not None and hops != exact_hops:
                continue
            taken = 0
            for e, (v, key) in sorted(by.items(), key=lambda kv: (-kv[1][0], kv[0])):
                if taken >= k or v <= 0:
                    break
                if e in seen:
                    continue
                path = self.path(hops, key)
                if allowed is not None and not allowed(path):
                    continue
                seen.add(e)
                out.append(path)
                taken += 1
        return out

    def path(self, d: int, key: State) -> BeamPath:
        """The path to state `key` at level `d`, read back from the pointers; its hops scored 0 (the search did not
        score them)."""
        steps: list[tuple[int, int, int]] = []
        cur: State | None = key
        while d > 0 and cur is not None:
            prev, r, e = self.back[(d, cur)]
            steps.append((r, e, cur[0]))
            cur = prev
            d -= 1
        steps.reverse()
        labels = self.graph.labels([r for r, _, _ in steps])  # type: ignore[attr-defined]
        return BeamPath(start=steps[0][1], hops=tuple(Hop(ridx=r, src=a, dst=b, score=0.0, label=lab)
                                                      for (r, a, b), lab in zip(steps, labels)), score=0.0)


def weights(graph: object, query: frozenset[str]) -> dict[str, float]:
    """Each query word's IDF over the graph's entity descriptions (retrieval's index; a word no description uses
    weighs as the rarest); all 1 without an index."""
    index = retrieval.index_of(graph)
    if index is None:
        return {w: 1.0 for w in query}
    n = len(index.docs)
    return {w: math.log(1 + (n - index.df.get(w, 0) + 0.5) / (index.df.get(w, 0) + 0.5)) for w in query}


def walk(graph, topics: Sequence[int], depth: int, query: frozenset[str], language: str) -> Walk:  # noqa: ANN001
    """The dynamic programme over (entity, words named) from `topics` up to `depth` hops. A step straight back to
    the entity it came from, or to a topic, is not taken."""
    words = sorted(query)
    weight = weights(graph, query)
    total = sum(weight.values())
    bit = {w: 1 << i for i, w in enumerate(words)}
    best: dict[int, dict[int, tuple[float, State]]] = {}
    back: dict[tuple[int, State], tuple[State | None, int, int]] = {}
    if not words or total <= 0 or not topics or depth < 1:
        return Walk(best={}, back={}, graph=graph)
    value: dict[int, float] = {}

    def share(mask: int) -> float:
        if mask not in value:
            value[mask] = sum(weight[w] for w in words if mask & bit[w]) / total
        return value[mask]

    tops = {int(t) for t in topics}
    # a state -> (the previous state or None, the relationship, the entity before)
    level: dict[State, tuple[State | None, int, int]] = {(t, 0): (None, -1, -1) for t in tops}
    hop_mask: dict[tuple[int, int], int] = {}
    for d in range(1, depth + 1):
        nodes = sorted({e for e, _ in level})
        nbrs = graph.neighbors_many(nodes)
        pairs = {(int(r), int(o)) for e in nodes for r, o in zip(nbrs[e][0].tolist(), nbrs[e][1].tolist())}
        new = [p for p in pairs if p not in hop_mask]
        if new:
            rels = graph.descriptions([r for r, _ in new])
            ents = sorted({o for _, o in new})
            reached = {o: _words(x.title or "", language) | _words(first_sentence(x.description or "",
                                                                                  limit=EVIDENCE_CHARS), language)
                       for o, x in zip(ents, graph.entities(ents))}  # one read for the level
            for (r, o), rel in zip(new, rels):
                named = _words(rel or "", language) | reached[o]
                m = 0
                for w in words:
                    if w in named:
                        m |= bit[w]
                hop_mask[(r, o)] = m
        nxt: dict[State, tuple[State | None, int, int]] = {}
        for (e, mask), (_, _, before) in level.items():
            for r, o in zip(nbrs[e][0].tolist(), nbrs[e][1].tolist()):
                if o in tops or o == before:
                    continue
                key = (o, mask | hop_mask[(r, o)])
                if key not in nxt:
                    if len(nxt) >= MAX_STATES:
                        continue
                    nxt[key] = ((e, mask), r, e)
        by: dict[int, tuple[float, State]] = {}
        for key in nxt:
            v = share(key[1])
            if key[0] not in by or v > by[key[0]][0]:
                by[key[0]] = (v, key)
        for key, val in nxt.items():
            back[(d, key)] = val
        best[d] = by
        level = nxt
        if not level:
            break
    return Walk(best=best, back=back, graph=graph)

