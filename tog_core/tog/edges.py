"""Which edges a chain may take next (docs/algorithm.md, "Paths"): the edge rule `open_edges` that relation
exploration (stages.py: `_groups`) applies to each path's end; the same rule one hop further, for what the policy's
lookahead rates (`_next_edges`) and its judge reads (`_ahead`); and what the last hop's rules read: the depth the
search expects to answer at (`last_depth`) and the question's topic entities (`topic_ids`). Mixed into ToGEngine
under the stages (StageProposals builds on it).
"""
from __future__ import annotations

from typing import Any, cast

import numpy as np

from tog_core.tog.policy import NextEdges, SearchContext, SearchPolicy
from tog_core.tog.state import BeamPath, Hop, RelChoice, State


class EdgeRules:
    """The edge rule of ToGEngine (see engine.py) and what it reads; a policy reads `last_depth` and `topic_ids`."""

    graph: Any
    config: Any
    policy: SearchPolicy

    # ------------------------------------------------------------------ the edges a path's end may take
    def open_edges(self, p: BeamPath, rels: np.ndarray, others: np.ndarray, outs: np.ndarray,
                   last_depth: int | None = None, topics: frozenset[int] = frozenset()) -> np.ndarray:
        """Which edges of the path's end it may take next (README: "Paths").
        - No edge is walked backwards. An edge taken before may be taken again from the entity it was taken from:
          a round trip closes ("X's son's mother's children" include the son).
        - GraphRAG writes some relationships twice (B→A after A→B): that reversed duplicate is the same edge, so it
          is never walked back either. On a typed graph a fact stated from both ends (X spouse→ Y, Y spouse→ X;
          X children→ Y, Y parents→ X) is offered once, from the side that states it (the neighbour stays
          reachable; only the second reading of the pair goes), and may be walked: "X's wife's spouse's children"
          pass through X.
        - Any entity may be reached again ("the director of the films written by W" may be W), but the last hop may
          not end at the start -- a question names its topic, it does not ask for it -- unless, on a typed graph, by
          a self-loop (X r X): then the graph itself says X's r is X (BeamPath.back_home). A GraphRAG self-loop is
          extraction noise and never answers. Nor may it end at another of the question's topic entities (`topics`,
          entity indices): "the helmsman of the ship where the look-out kept watch" does not ask for the look-out
          (linked seeds, depth 3, chain Hits@1 bm25 / embedding: Christmas Carol 0.550 / 0.425 -> 0.575 / 0.475,
          its dev2 0.467 / 0.500 -> 0.500 / 0.533; every other dev set unchanged)."""
        keep = np.ones(len(rels), dtype=bool)
        typed = self.graph.has_relation_labels
        if typed and len(outs) and self.config.typed_facts_once:
            # a typed graph that states a fact both ways (Y parents→ X beside X children→ Y): the incoming reading
            # is the outgoing one backwards; offer only the reading from this side, whose label says what Y is to X
            out = outs.astype(bool)
            keep &= out | ~np.isin(others, others[out])
        if p.hops:
            taken = {h.ridx for h in p.hops}
            # an edge taken before may be taken again only from the entity it was taken from: round trips close
            # ("X's son's mother's children" include the son; a self-loop applied twice) but no edge is walked back
            same_way = np.fromiter((h.ridx for h in p.hops if h.src == p.end), dtype=np.int64)
            keep &= ~np.isin(rels, np.fromiter(taken, dtype=np.int64)) | np.isin(rels, same_way)
            # a reversed duplicate joins two entities of the path: only edges back onto the path need the check
            on_path = np.fromiter(p.entities, dtype=np.int64)
            back = np.empty(0, dtype=np.intp) if typed else np.flatnonzero(keep & np.isin(others, on_path))
            reversed_by: dict[int | None, int] = {}  # the path's edges by the edge each reverses, read once
            for t in taken if len(back) else ():
                reversed_by.setdefault(self.graph.relationship(t).reverse_of, t)
            for k in back:
                r = self.graph.relationship(int(rels[k]))
                twin = r.reverse_of if r.reverse_of in taken else reversed_by.get(r.idx)
                if twin is not None:
                    keep[k] = False
        if len(p.hops) + 1 >= (last_depth or self.config.depth):
            keep &= (others != p.start) | ((others == p.end) & typed)  # a typed self-loop may answer
            # nor at another of the question's topics: it is named, not asked for (departure topic_ends)
            if self.config.topic_ends and len(topics - {p.start}):
                keep &= ~np.isin(others, np.fromiter(topics - {p.start}, dtype=np.int64))
        return keep

    # ------------------------------------------------------------------ the same rule one hop further
    def _next_edges(self, state: State, targets: list[tuple[RelChoice, list[tuple[int, int]]]]) -> list[NextEdges]:
        """Each candidate entity of the entity stage with the edges the search could take from it next (the
        edge rule applied to the chain one hop longer): what the policy's lookahead rates."""
        last, topics = self.last_depth(state), self.topic_ids(state)
        cands = [(rc, o, r) for rc, ts in targets for o, r in ts]
        nbrs = self.graph.neighbors_many(sorted({o for _, o, _ in cands}))  # one round trip for all candidates
        out = []
        for rc, o, r in cands:
            p = state.paths[rc.path]
            ext = BeamPath(start=p.start, score=p.score,
                           hops=p.hops + (Hop(ridx=r, src=p.end, dst=o, score=rc.score, label=rc.text),))
            rels, others, outs = nbrs[o]
            keep = self.open_edges(ext, rels, others, outs, last, topics)
            out.append(NextEdges(key=(rc.key, o), path=ext, rels=rels[keep], others=others[keep], outs=outs[keep]))
        return out

    def _ahead(self, state: State) -> list[NextEdges]:
        """Each chain with the edges it could take one hop further: what a policy's judge may read."""
        paths = [p for p in state.paths if p.hops]
        nbrs = self.graph.neighbors_many(sorted({p.end for p in paths}))  # one round trip
        last, topics, out = self.last_depth(state), self.topic_ids(state), []
        for p in paths:
            rels, others, outs = nbrs[p.end]
            keep = self.open_edges(p, rels, others, outs, last, topics)
            out.append(NextEdges(key=("", p.end), path=p, rels=rels[keep], others=others[keep], outs=outs[keep]))
        return out

    # ------------------------------------------------------------------ what the last hop's rules read
    def last_depth(self, state: State) -> int:
        """The depth the search expects to answer at, where the last hop's rules apply: the number of hops given
        before the search (past it, when a person searched on, the maximum), else the policy's planned depth."""
        if state.hops is not None:
            return state.hops if state.depth <= state.hops else self.config.depth
        return self.policy.planned_depth(cast("SearchContext", self), state)  # the engine this rule is part of

    def topic_ids(self, state: State) -> frozenset[int]:
        """The entities of the question's topics (its seeds) that are in the graph."""
        found = (self.graph.find(x.id) for x in state.seeds)
        return frozenset(i for i in found if i is not None)
