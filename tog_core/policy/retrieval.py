"""Candidates found by what their descriptions say, beside the ones the beam search finds.

A GraphRAG entity description is a summary of everything the source text says about the entity, written from the
text's own words, so the answer's description often shares the question's rarer words ("green body and yellow tail"
for the parrot Scrooge remembers) where the relation the beam would have to take at a hub is one of a hundred and
forty. The beam reads one relation at a time and cuts; this reads every entity the question's topic entities reach
within the search's depth, by BM25 of its title and whole description against the question (the topic entities'
title words left out, IDF over the graph's entity descriptions), and hands the best few to the answer ranker as
candidates with the shortest chain that reaches them (policy/answers.py). The ranker, fitted on every data set's dev
questions, decides how far to trust them (`beam`: whether the search itself reached the candidate; `desc_bm25`: the
same description score, read for every candidate).

Free-text (GraphRAG) graphs only: a typed graph's descriptions are templates ("X directed_by Y").
"""
from __future__ import annotations

import math
import threading
import weakref
from collections import Counter, OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from tog_core.scoring.text import read_tokens, tokens_in
from tog_core.tog.state import BeamPath, Hop

RETRIEVED = 5  # candidates added per question (3 / 10 read on the dev sets: docs/experiment-log.md)
MAX_ENTITIES = 200_000  # a larger graph is not indexed: its descriptions are not all read into memory
MAX_REACHED = 20_000  # the neighbourhood walk reads at most this many entities (the nearest first)
INDEXES_KEPT = 4  # as many graphs as the app keeps loaded (explorer/projects.py)
_K1, _B = 1.2, 0.75  # BM25's usual constants (Robertson et al.); not tuned here


@dataclass(frozen=True)
class DescriptionIndex:
    """Every entity's title and description as tokens, with document frequencies for IDF and, per word, the
    entities that use it (so a question scores only the entities sharing a word with it)."""

    docs: tuple[tuple[str, ...], ...]
    df: dict[str, int]
    postings: dict[str, tuple[int, ...]]
    mean_len: float

    @classmethod
    def build(cls, titles: Sequence[str], descriptions: Sequence[str]) -> DescriptionIndex:
        docs = tuple(read_tokens(f"{t or ''} {d or ''}") for t, d in zip(titles, descriptions))
        postings: dict[str, list[int]] = {}
        for i, doc in enumerate(docs):
            for w in set(doc):
                postings.setdefault(w, []).append(i)
        return cls(docs=docs, df={w: len(v) for w, v in postings.items()},
                   postings={w: tuple(v) for w, v in postings.items()},
                   mean_len=max(1.0, sum(map(len, docs)) / max(1, len(docs))))

    def bm25(self, entity: int, query: frozenset[str]) -> float:
        doc = self.docs[entity]
        if not doc or not query:
            return 0.0
        tf = Counter(w for w in doc if w in query)
        n, norm = len(self.docs), _K1 * (1 - _B + _B * len(doc) / self.mean_len)
        return sum(math.log(1 + (n - self.df[w] + 0.5) / (self.df[w] + 0.5)) * f * (_K1 + 1) / (f + norm)
                   for w, f in tf.items())

    def matching(self, query: frozenset[str]) -> set[int]:
        """The entities whose title or description uses a word of `query` (the only ones BM25 scores above 0)."""
        return {e for w in query for e in self.postings.get(w, ())}


# by the graph's id, with a weak reference to the graph (an id is reused once a graph is gone; the index must not keep
# an evicted graph alive); None for a graph too large to index
_INDEXES: OrderedDict[int, tuple[Callable[[], Any], DescriptionIndex | None]] = OrderedDict()
_LOCK = threading.Lock()  # guards _INDEXES and _BUILDING only; an index is built outside it
_BUILDING: dict[int, threading.Lock] = {}  # one lock per graph being indexed: a second reader waits for the first


def index_of(graph: Any) -> DescriptionIndex | None:
    """The graph's description index, built once per graph (None for a graph above MAX_ENTITIES entities). Building
    one graph's index never holds up a reader of another's."""
    key = id(graph)
    with _LOCK:
        hit = _cached(graph)
        if hit is not None:
            return hit[0]
        building = _BUILDING.setdefault(key, threading.Lock())
    with building:
        try:
            with _LOCK:
                hit = _cached(graph)
                if hit is not None:
                    return hit[0]
            index = None
            if int(getattr(graph, "n_entities", 0) or 0) <= MAX_ENTITIES:
                titles = graph.all_titles()
                index = DescriptionIndex.build(titles, graph.entity_descriptions(range(len(titles))))
            with _LOCK:
                _INDEXES[key] = (_ref(graph), index)
                _INDEXES.move_to_end(key)
                while len(_INDEXES) > INDEXES_KEPT:
                    _INDEXES.popitem(last=False)
            return index
        finally:  # built or failed (a store gone away), the graph's build lock is not kept
            with _LOCK:
                if _BUILDING.get(key) is building:
                    del _BUILDING[key]


def _cached(graph: Any) -> tuple[DescriptionIndex | None] | None:
    """(the index,) when `graph`'s is cached (under _LOCK), else None; a dead graph's entry is dropped."""
    hit = _INDEXES.get(id(graph))
    if hit is None:
        return None
    if hit[0]() is not graph:  # the id of a graph that is gone, now another's
        del _INDEXES[id(graph)]
        return None
    _INDEXES.move_to_end(id(graph))
    return (hit[1],)


def _ref(graph: Any) -> Callable[[], Any]:
    try:
        return weakref.ref(graph)
    except TypeError:  # a graph type without weak references: held as long as its index
        return lambda: graph


def query_words(question: str, topic_titles: Sequence[str], language: str) -> frozenset[str]:
    """The question's words (stems, read in the question's `language`) less its topic entities' title words: every
    description near a topic names it."""
    drop = {w for t in topic_titles for w in tokens_in(t, language)}
    return frozenset(w for w in tokens_in(question, language) if w not in drop)


def description_scores(graph: Any, entities: Sequence[int], query: frozenset[str]) -> list[float]:
    """Each entity's BM25 against `query`, scaled so the best of them is 1 (all 0 without an index or a match)."""
    index = index_of(graph)
    if index is None:
        return [0.0] * len(entities)
    raw = [index.bm25(int(e), query) for e in entities]
    top = max(raw, default=0.0)
    return [v / top if top > 0 else 0.0 for v in raw]


@dataclass(frozen=True)
class Neighbourhood:
    """What the topic entities reach within a depth: each entity's distance (`dist`, the topics at 0), the (entity,
    relationship) steps one level nearer that reach it (`parents`), and the relationships the walk read with their two
    ends, the one it came from first (`ends`, nearest first, each once: every relationship of an entity nearer than
    `depth` to an entity reached; those between two entities at `depth` itself are not read)."""

    depth: int
    dist: dict[int, int]
    parents: dict[int, list[tuple[int, int]]]
    ends: dict[int, tuple[int, int]]

    @property
    def rels(self) -> tuple[int, ...]:
        """The relationships the walk read, nearest first."""
        return tuple(self.ends)


def neighbourhood(graph: Any, topics: Sequence[int], depth: int) -> Neighbourhood:
    """The breadth-first walk from `topics` to `depth` hops. It reads at most MAX_REACHED entities, the nearest
    first; past that, the farther ones are not read."""
    dist = {int(t): 0 for t in topics}
    parents: dict[int, list[tuple[int, int]]] = {}
    rels: dict[int, tuple[int, int]] = {}
    front = list(dist)
    for d in range(1, depth + 1):
        nxt: list[int] = []
        for e, (rs, others, _) in graph.neighbors_many(front).items():
            for r, o in zip(rs.tolist(), others.tolist()):
                if o not in dist:
                    if len(dist) >= MAX_REACHED:
                        continue  # full: an entity already reached may still gain a parent
                    dist[o] = d
                    nxt.append(o)
                rels.setdefault(r, (e, o))
                if dist[o] == d:
                    parents.setdefault(o, []).append((e, r))
        front = nxt
        if not front or len(dist) >= MAX_REACHED:  # full: a further level could add no entity
            break
    return Neighbourhood(depth=depth, dist=dist, parents=parents, ends=rels)


def retrieve(graph: Any, topics: Sequence[int], depth: int, query: frozenset[str], *, k: int = RETRIEVED,
             exclude: frozenset[int] = frozenset(), exact: bool = False,
             allowed: Callable[[BeamPath], bool] | None = None, near: Neighbourhood | None = None) -> list[BeamPath]:
    """The `k` entities within `depth` hops of `topics` (exactly `depth` when `exact`) whose descriptions score best
    against `query`, best first, not a topic and not in `exclude`, each as a chain from a topic: a shortest one,
    through the best-scoring entity at each step back (`allowed`: a chain it refuses, one a person's overrides rule
    out, is skipped). A chain's hops and score are 0: the search did not score them. `near`: the walk from `topics`
    to `depth`, when the caller has it (else walked here, `neighbourhood`)."""
    index = index_of(graph)
    if index is None or not topics or not query or k <= 0 or depth < 1:
        return []
    near = near if near is not None else neighbourhood(graph, topics, depth)
    dist = near.dist
    words = index.matching(query)
    score = {e: index.bm25(e, query) for e in words
             if e in dist and dist[e] > 0 and (dist[e] == depth or not exact) and e not in exclude}
    out: list[BeamPath] = []
    for e in sorted(score, key=lambda e: (-score[e], e)):
        path = chain_to(graph, e, near, index, query)
        if allowed is None or allowed(path):
            out.append(path)
        if len(out) >= k:
            break
    return out


def chain_to(graph: Any, entity: int, near: Neighbourhood, index: DescriptionIndex | None,
             query: frozenset[str]) -> BeamPath:
    """A shortest chain from a topic to `entity` (reached in `near`): at each step back, through the entity whose
    description reads best against `query` (without an index, the first relationship); hops and score 0."""
    steps: list[tuple[int, int, int]] = []
    cur = entity
    dist = near.dist
    while dist[cur] > 0:
        # a step back to a topic scores nothing; among bridges, the one whose description reads best
        src, ridx = max(near.parents[cur], key=lambda p: (
            index.bm25(p[0], query) if dist[p[0]] and index is not None else 0.0, -p[1]))
        steps.append((ridx, src, cur))
        cur = src
    steps.reverse()
    labels = graph.labels([r for r, _, _ in steps]) if steps else []  # one read for the chain
    return BeamPath(start=cur, hops=tuple(Hop(ridx=r, src=a, dst=b, score=0.0, label=lab)
                                          for (r, a, b), lab in zip(steps, labels)), score=0.0)
