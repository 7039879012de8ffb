"""A hub keeps its trace small (issue #23 item 6): a relation stage records each path's top K candidates (K =
max_candidates) and every kept one, and counts the rest in `not_shown` with the best score among them; the search
keeps what it kept before; old traces (every candidate) still read; "why not X" says where X's relation ranked;
BM25 keeps a big corpus's index for the next request over the same texts (same scores)."""
from __future__ import annotations

import asyncio

import pytest

from builders import write_project
from tog_core.graphrag.open import open_graph
from tog_core.scoring.scorers import BM25Scorer, ScoreRequest
from tog_core.tog import groups as groups_module
from tog_core.tog import stages
from tog_core.tog.diagnosis import diagnose, diagnosis_text
from tog_core.tog.engine import ToGEngine
from tog_core.tog.state import EngineConfig
from tog_core.tog.trace import Trace

SPOKES = 120
K = 10


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    """Harbour Exchange with SPOKES traders around it, plus its founder; the traders' descriptions differ, so each
    edge is its own relation group."""
    root = tmp_path_factory.mktemp("hub")
    traders = [f"Trader {i}" for i in range(SPOKES)]
    entities = [("Harbour Exchange", "A market."), ("Mara Quell", "A founder.")] + [(t, "A merchant.") for t in traders]
    edges = [("Mara Quell", "Harbour Exchange", "Mara Quell founded the Harbour Exchange")] + [
        (t, "Harbour Exchange", f"{t} trades cargo number {i} at the Harbour Exchange") for i, t in enumerate(traders)]
    write_project(root, entities, edges)
    return open_graph(str(root))[1]


def run(graph, question, **cfg):
    engine = ToGEngine(graph, config=EngineConfig(relation_pruner="bm25", entity_pruner="bm25", depth=1, **cfg))
    state = asyncio.run(engine.run(question, seeds=["Harbour Exchange"]))
    return engine.trace(state).to_dict()


def test_a_hub_step_records_its_top_k_and_counts_the_rest(hub):
    trace = run(hub, "Who founded the Harbour Exchange?", max_candidates=K)
    [rel] = [s for s in trace["steps"] if s["stage"] == "relations"]
    assert len(rel["candidates"]) == K  # the kept ones are among the top K here
    [hidden] = rel["not_shown"]
    assert hidden["count"] == SPOKES + 1 - K and hidden["shown"] == K and hidden["source_entity"] == "Harbour Exchange"
    assert hidden["best_score"] <= min(c["score"] for c in rel["candidates"])
    assert Trace.from_dict(trace).steps[0].n_candidates == SPOKES + 1
    assert trace["chains"][0][0]["target"] == "Mara Quell"


def test_leaving_candidates_out_of_the_trace_changes_nothing_the_search_keeps(hub, monkeypatch):
    small = run(hub, "Who founded the Harbour Exchange?", max_candidates=K)
    monkeypatch.setattr(stages, "shown_in_trace", lambda order, paths, kept, top_k: set(order))  # keep every one
    everything = run(hub, "Who founded the Harbour Exchange?", max_candidates=K)
    assert len(everything["steps"][0]["candidates"]) == SPOKES + 1 and not everything["steps"][0]["not_shown"]
    kept = [[c["id"] for c in s["candidates"] if c["kept"]] for s in small["steps"]]
    assert kept == [[c["id"] for c in s["candidates"] if c["kept"]] for s in everything["steps"]]
    assert small["chains"] == everything["chains"] and small["answer"] == everything["answer"]


def test_an_old_trace_with_every_candidate_still_reads(hub):
    trace = run(hub, "Who founded the Harbour Exchange?", max_candidates=K)
    old = {**trace, "steps": [{k: v for k, v in s.items() if k != "not_shown"} for s in trace["steps"]]}
    step = Trace.from_dict(old).steps[0]
    assert step.not_shown == [] and step.n_candidates == len(step.candidates)


def test_why_not_x_says_where_a_relation_left_out_of_the_trace_ranked(hub):
    trace = run(hub, "Who founded the Harbour Exchange?", max_candidates=K)
    shown = {c["relationship_ids"][0] for s in trace["steps"] for c in s["candidates"] if c.get("relationship_ids")}
    far = next(f"Trader {i}" for i in range(SPOKES) if f"r{i + 1}" not in shown)
    [d] = diagnose(trace, [far], hub)
    assert d["never_candidate"] and d["lost"]["stage"] == "relations" and d["lost"]["of"] == SPOKES + 1
    assert f"ranked below the {K} best of {SPOKES + 1} relations of Harbour Exchange" in d["lost"]["note"]
    assert "ranked below" in diagnosis_text([d])


def test_bm25_reuses_a_big_corpus_index_with_the_same_scores():
    texts = [f"trader {i} deals in {('grain', 'salt', 'wool')[i % 3]} at berth {i % 97}" for i in range(6_000)]
    kept = BM25Scorer()
    for q in ("who deals in salt", "which berth has wool"):
        req = ScoreRequest(question=q, stage="relations", anchor="", texts=list(texts))
        assert asyncio.run(kept.score(req)).values == asyncio.run(BM25Scorer().score(req)).values
    assert len(kept._indexes) == 1  # one index for both questions over the same texts
    small = BM25Scorer()
    asyncio.run(small.score(ScoreRequest(question="salt", stage="relations", anchor="", texts=texts[:50])))
    assert not small._indexes  # small corpora are indexed per request, as before


def test_a_big_corpus_index_is_the_one_bm25s_builds():
    """_flat_index (numpy over the whole corpus) against bm25s's own loop per document: the same matrix, bit for
    bit, with repeated words, empty documents and words that occur everywhere or once."""
    import bm25s
    import numpy as np

    from tog_core.scoring.scorers import _as_bm25_tokens, _flat_index

    docs = [tuple(f"w{(i * k) % 53}" for k in range(i % 7)) + (("grain",) * (i % 3)) or ("_empty_",)
            for i in range(700)]
    mine, theirs = _flat_index(docs), bm25s.BM25()
    theirs.index(_as_bm25_tokens(docs), show_progress=False)
    assert mine.vocab_dict == theirs.vocab_dict and mine.scores["num_docs"] == theirs.scores["num_docs"]
    for part in ("data", "indices", "indptr"):
        assert mine.scores[part].dtype == theirs.scores[part].dtype
        assert np.array_equal(mine.scores[part], theirs.scores[part]), part
    for query in (["grain"], ["w0", "w0", "w5"], ["w52", "nowhere"]):
        assert np.array_equal(mine.get_scores(query), theirs.get_scores(query))


def test_a_hubs_relation_groups_are_kept_for_the_next_search_with_the_same_policy_only(hub, monkeypatch):
    import gc

    from tog_core.policy.cheap import CheapPolicy

    monkeypatch.setattr(groups_module.HUB_GROUPS, "KEPT_FROM", 50)  # the fixture's 121 edges make a hub
    config = EngineConfig(relation_pruner="bm25", entity_pruner="bm25", depth=1)

    def groups(policy, **cfg):
        engine = ToGEngine(hub, config=EngineConfig(**{**vars(config), **cfg}), policy=policy)
        return engine._groups(engine.start("Who founded the Harbour Exchange?", ["Harbour Exchange"]), 0)

    policy = CheapPolicy()
    first, again = groups(policy), groups(policy)  # two searches of one question (policy/depths.py's trials)
    assert len(first) == SPOKES + 1 and first == again and all(a is b for a, b in zip(first, again))
    second = CheapPolicy()
    other = groups(second)  # another policy writes its own relation texts: built again (equal here)
    assert other == first and not any(a is b for a, b in zip(first, other)) and groups_module.HUB_GROUPS._entry
    del second
    gc.collect()
    assert groups_module.HUB_GROUPS._entry == ()  # held only while its graph and policy live
    monkeypatch.setattr(groups_module.HUB_GROUPS, "KEPT_FROM", 10**9)
    assert groups(CheapPolicy()) == first  # what is kept is what is built
