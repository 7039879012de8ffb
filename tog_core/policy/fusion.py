"""chain_fusion: the whole chain so far read by e5 against the question, for CheapPolicy (policy/cheap.py). The
entity beam is cut on the reciprocal rank fusion of that reading and the path score (and, with beam_descriptions,
each chain end's description read by BM25); relations tied at the cut-off are ordered by the same reading."""
from __future__ import annotations

from typing import Any
from collections.abc import Callable, Sequence

import numpy as np

from tog_core.policy import ranking, retrieval
from tog_core.policy.candidates import chain_text
from tog_core.tog.policy import SearchContext, uses_llm
from tog_core.tog.state import BeamPath, RelChoice, State

TIES_READ = 100  # the most relations tied at a cut-off that chain_fusion reads with e5 (one call); more: graph order
RRF_K = 60  # reciprocal rank fusion's usual constant (Cormack et al. 2009); not tuned here


def ranks(values: Sequence[float]) -> np.ndarray:
    """Each value's rank, 1 = the highest; equal values share the best rank among them (1, 1, 3): the order a graph
    happens to list its candidates in decides nothing."""
    v = np.asarray(values, dtype=float)
    return 1.0 + (v[None, :] > v[:, None]).sum(axis=1) if len(v) else np.zeros(0)


def fused_ranks(*scores: Sequence[float], k: int = RRF_K) -> np.ndarray:
    """Reciprocal rank fusion of lists of scores, each ranked by `ranks` (1 = best, equal values share a rank)."""
    return rank_fusion(*(ranks(values) for values in scores), k=k)


def rank_fusion(*rankings: np.ndarray, k: int = RRF_K) -> np.ndarray:
    """Reciprocal rank fusion: each item's 1 / (k + its rank) under every ranking, summed and scaled so the best item
    is 1. No weight between the rankings: a rank counts the same in each."""
    total = sum((1.0 / (k + np.asarray(r, dtype=float)) for r in rankings), np.zeros(len(rankings[0])))
    return total / total.max() if len(total) else total


def tie_text(graph: Any, path: BeamPath, text: str) -> str:
    """A relation tied at the cut-off as e5 reads it (`relation_ties`): the chain so far, then the entity the relation
    leaves and the relation's text."""
    head = chain_text(graph, path)
    return (f"{head} ; " if head else "") + f"{graph.title(path.end)} {text[:200]}"


class ChainFusion:
    """The chain_fusion methods of CheapPolicy; they read its switches, `relations_kept` and `description_query`."""

    chain_fusion: bool
    beam_descriptions: bool
    relations_kept: Callable[[SearchContext], int]  # CheapPolicy's
    description_query: Callable[[SearchContext, State], frozenset[str]]  # CheapAnswers'

    def _reads_chains(self, ctx: SearchContext, scorer: Any) -> bool:
        """chain_fusion applies to a stage: a GraphRAG graph (free-text relations) and a cheap scorer there."""
        return self.chain_fusion and not ctx.graph.has_relation_labels and not uses_llm(scorer)

    def relation_ties(self, ctx: SearchContext, state: State, i: int, groups: Sequence[RelChoice],
                      scores: Sequence[float]) -> tuple[list[float], list[str]] | None:
        """chain_fusion: when more relations tie with the cut-off score than the beam keeps, each is read as the
        chain so far plus the relation by e5 against the question, the closest first; None otherwise (or on a typed
        graph, with an LLM relation scorer, without the packaged e5, when the cut-off is a score of 0 that only the
        hub pre-filter gives, or when more than TIES_READ relations tie)."""
        width = self.relations_kept(ctx)
        if not self._reads_chains(ctx, ctx.relation_scorer) or not width or len(scores) <= width:
            return None
        cutoff = sorted(scores, reverse=True)[width - 1]
        if cutoff <= 0:  # the cut runs through the groups the hub pre-filter set aside (score 0): never read
            return None
        tied = [k for k, v in enumerate(scores) if v == cutoff]
        if len(tied) <= width - sum(1 for v in scores if v > cutoff):
            return None  # every relation at the cut-off is kept: nothing to break
        if len(tied) > TIES_READ:  # a hub read without its pre-filter: its order stays the graph's
            return None
        embedder = ranking.ranking_embedder()
        if embedder is None:
            return None
        texts = [tie_text(ctx.graph, state.paths[i], groups[k].text) for k in tied]
        sims = embedder.embed(texts, kind="passage") @ embedder.embed([state.question], kind="query")[0]
        keys, why = [0.0] * len(scores), [""] * len(scores)
        for k, sim in zip(tied, sims):
            keys[k] = float(sim)
            why[k] = (f"tied at {cutoff:.3g} with {len(tied) - 1} other(s) at the cut-off: the whole chain read by e5 "
                      f"{float(sim):.2f}")
        return keys, why

    def beam_scores(self, ctx: SearchContext, state: State, chains: Sequence[BeamPath], path_scores: Sequence[float]
                    ) -> tuple[list[float], list[str], str] | None:
        """chain_fusion: the entity beam's order is the reciprocal rank fusion of the path scores, the e5 similarity
        of the question to each whole chain (candidates.chain_text) and (beam_descriptions) each chain end's description
        read by BM25 against the question, scaled so the best is 1; None (the path scores) on a typed graph, with an
        LLM entity scorer, or without the packaged e5."""
        embedder = ranking.ranking_embedder() if self._reads_chains(ctx, ctx.entity_scorer) else None
        if embedder is None:
            return None
        q = embedder.embed([state.question], kind="query")[0]
        sims = embedder.embed([chain_text(ctx.graph, p) for p in chains], kind="passage") @ q
        by_path, by_chain = ranks(path_scores).astype(int), ranks(sims).astype(int)
        n = len(chains)
        why = [f"path score {s:.3g} (rank {a} of {n}) fused with the whole chain read by e5 {c:.2f} (rank {b})"
               for s, a, c, b in zip(path_scores, by_path, sims, by_chain)]
        if not self.beam_descriptions:
            return [float(v) for v in rank_fusion(by_path, by_chain)], why, "e5 chain"
        desc = retrieval.description_scores(ctx.graph, [p.end for p in chains], self.description_query(ctx, state))
        by_desc = ranks(desc).astype(int)
        why = [f"{w} and its end's description read by BM25 {d:.2f} (rank {c})" for w, d, c in zip(why, desc, by_desc)]
        return [float(v) for v in rank_fusion(by_path, by_chain, by_desc)], why, "e5 chain+description"
