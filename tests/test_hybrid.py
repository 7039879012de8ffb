"""The hybrid pruner: BM25 and the embedder fused by rank (reciprocal rank fusion), no weight between them."""
from __future__ import annotations

import asyncio
import json
import os

import numpy as np
import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from tog_core.cli.main import main
from tog_core.scoring.scorers import HybridScorer, ScoreRequest, UnknownScorer, make_scorer, reads_question


class TableEmbedder:
    """Each passage's similarity to any query is given by a table (unit vectors in two dimensions)."""

    name = "test/table"

    def __init__(self, sims: dict[str, float]) -> None:
        self.sims = sims

    def embed(self, texts, *, kind="passage"):
        if kind == "query":
            return np.array([[1.0, 0.0]] * len(texts))
        return np.array([[self.sims[t], float(np.sqrt(1 - self.sims[t] ** 2))] for t in texts])


def score(scorer, texts, question="who founded the guild"):
    return asyncio.run(scorer.score(ScoreRequest(question=question, stage="relations", anchor="", texts=texts)))


def test_ranks_are_fused_without_a_weight():
    # BM25 ranks A > B > C (only A and B share words, A twice); the embedder ranks B > C > A
    texts = ["A founded the guild, the guild founded", "B founded it", "C, a maker of clocks"]
    emb = TableEmbedder({texts[0]: 0.1, texts[1]: 0.9, texts[2]: 0.5})
    res = score(HybridScorer(emb), texts)
    k = HybridScorer.K
    fused = [1 / (k + 1) + 1 / (k + 3), 1 / (k + 2) + 1 / (k + 1), 1 / (k + 3) + 1 / (k + 2)]
    assert res.values == pytest.approx([f / max(fused) for f in fused])
    assert res.values[1] == 1.0 and res.values[1] > res.values[0] > res.values[2] and res.scored_by == "hybrid"
    assert score(HybridScorer(emb), []).values == []


def test_the_hybrid_pruner_needs_the_embedder_and_says_so():
    with pytest.raises(UnknownScorer, match="'hybrid' needs an embedder"):
        make_scorer("hybrid")


def test_the_hybrid_pruner_reads_the_question_as_bm25_does_and_random_does_not():
    emb = TableEmbedder({})
    assert reads_question(HybridScorer(emb), make_scorer("bm25"))
    assert not reads_question(HybridScorer(emb), make_scorer("random"))
    assert not reads_question(make_scorer("bm25"), object())  # a scorer without a name (an LLM's own) reads as not


def test_a_hybrid_run_builds_the_embedder_and_tries_the_numbers_of_hops(demo_project, capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("TOG_HOME", str(tmp_path))
    assert main(["query", str(demo_project), "Who founded the Lanternwright Guild?", "--model", "none",
                 "--pruner", "hybrid", "--no-save", "--json"]) == 0
    trace = json.loads(capsys.readouterr().out)
    assert trace["config"]["relation_pruner"] == "hybrid" and trace["plan"] is not None  # depth trials ran
    scored = {c["scored_by"] for s in trace["steps"] for c in s["candidates"] if c.get("scored_by")}
    assert "hybrid" in scored
