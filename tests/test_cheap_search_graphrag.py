"""LLM-free search on GraphRAG (free-text) graphs: the asked type at the last hop (`type_prior`) and the whole chain
read by the embedder (`chain_fusion`: the entity beam and the relations tied at the cut-off). Small hand-made graphs;
the helpers are tests/builders.py's and tests/searchkit.py's."""
from __future__ import annotations

import pyarrow as pa
import pytest
from builders import free_graph, typed_graph
from searchkit import _ChainReader, chains, run

from tog_core.tog.engine import ToGEngine
from tog_core.graphrag.graph import KnowledgeGraph
from tog_core.policy.cheap import CheapPolicy
from tog_core.tog.state import EngineConfig


# ---------------------------------------------------------------- the asked type at the last hop
def _haunting_graph() -> KnowledgeGraph:
    """Two titles for one ghost (as GraphRAG splits a character), most of whose edges lead to people who match the
    question's word "appears", and one to the house it asks about ("where"), typed as GraphRAG types them."""
    edges = [("Marley's Ghost", "Scrooge", "Marley's Ghost appears to Scrooge and appears again at night"),
             ("Marley's Ghost", "Jacob Marley", "Marley's Ghost appears as the apparition of Jacob Marley"),
             ("Marley's Ghost", "Scrooge's House",
              "Marley's Ghost appears in the dark rooms of Scrooge's house, rattling its chains"),
             ("Ghost of Jacob Marley", "Ebenezer Scrooge", "The Ghost of Jacob Marley appears to Ebenezer Scrooge"),
             ("Ghost of Jacob Marley", "Bob Cratchit", "The Ghost of Jacob Marley appears unseen by Bob Cratchit")]
    kinds = {"Scrooge's House": "GEO"}
    names = list(dict.fromkeys([s for s, _, _ in edges] + [t for _, t, _ in edges]))
    ent = pa.table({"id": [f"id-{n}" for n in names], "title": names,
                    "type": [kinds.get(n, "PERSON") for n in names], "description": [""] * len(names)})
    rel = pa.table({"id": [f"r{k}" for k in range(len(edges))], "source": [s for s, _, _ in edges],
                    "target": [t for _, t, _ in edges], "description": [d for _, _, d in edges],
                    "text_unit_ids": pa.array([[] for _ in edges], pa.list_(pa.string()))})
    return KnowledgeGraph.from_tables(ent, rel, None)


def test_at_the_last_hop_an_entity_of_another_type_than_asked_keeps_half_its_score():
    g = _haunting_graph()
    q = "Where does Marley's Ghost appear?"
    seeds = ["Marley's Ghost", "Ghost of Jacob Marley"]
    # the type prior alone (the whole chain read by e5 finds the house too: chain_fusion, tested below)
    eng, st = run(g, q, seeds, depth=1, width=3, policy=CheapPolicy(chain_fusion=False))
    assert "Scrooge's House" in [c[-1] for c in chains(eng, st)]
    step = next(s for s in st.steps if s.stage == "entities")
    person = next(c for c in step.candidates if c.target == "Jacob Marley")
    house = next(c for c in step.candidates if c.target == "Scrooge's House")
    assert "type PERSON, not what the question asks for (x0.5)" in person.reason and "type" not in house.reason
    # switched off, the people who match "appears" fill the beam and the house is lost
    eng0, st0 = run(g, q, seeds, depth=1, width=3, policy=CheapPolicy(type_prior=False, chain_fusion=False))
    assert "Scrooge's House" not in [c[-1] for c in chains(eng0, st0)]
    assert eng.policy.params()["type_prior"] and not eng0.policy.params()["type_prior"]


def test_the_type_prior_holds_only_at_the_last_hop_of_a_graphrag_search_for_a_type_the_graph_has():
    g = _haunting_graph()
    pol = CheapPolicy()
    person = g.find_title("Jacob Marley")
    eng = ToGEngine(g, config=EngineConfig(relation_pruner="bm25", entity_pruner="bm25", exact_depth=True, depth=2),
                    policy=pol)
    st = eng.start("Where does Marley's Ghost appear?", seeds=["Marley's Ghost"])
    assert pol.entity_prior(eng, st.with_(depth=1), person) == (1.0, "")  # on the way: any type may lead on
    assert pol.entity_prior(eng, st.with_(depth=2), person)[0] == 0.5  # the last hop
    # a question for a type the graph does not have ("which language") leaves every candidate as it was
    st_lang = eng.start("Which language does Marley's Ghost speak?", seeds=["Marley's Ghost"])
    assert pol.entity_prior(eng, st_lang.with_(depth=2), person) == (1.0, "")
    # a typed graph's relation templates already say the types (MetaQA: no gain, 0.883 -> 0.880): nothing there
    t = typed_graph([("Jaws", "directed_by", "Steven Spielberg"), ("Jaws", "has_genre", "Thriller")])
    teng = ToGEngine(t, config=EngineConfig(relation_pruner="bm25", entity_pruner="bm25", exact_depth=True, depth=1),
                     policy=pol)
    tst = teng.start("Who directed Jaws?", seeds=["Jaws"])
    assert pol.entity_prior(teng, tst.with_(depth=1), t.find_title("Thriller")) == (1.0, "")


# ---------------------------------------------------------------- the whole chain read by the embedder


def test_ranks_are_fused_without_a_weight_and_the_best_is_one():
    from tog_core.policy import fusion

    fused = fusion.fused_ranks([3.0, 2.0, 1.0], [0.1, 0.9, 0.5])  # ranks (1, 3), (2, 1), (3, 2)
    k = fusion.RRF_K
    raw = [1 / (k + 1) + 1 / (k + 3), 1 / (k + 2) + 1 / (k + 1), 1 / (k + 3) + 1 / (k + 2)]
    assert list(fused) == pytest.approx([v / max(raw) for v in raw]) and fused.max() == 1.0
    assert fused[1] > fused[0] > fused[2]  # second by score, first by the other reading: it leads
    # equal items share their rank under both readings: equal fused scores, whatever their order
    assert list(fusion.fused_ranks([1.0, 1.0], [0.5, 0.5])) == [1.0, 1.0]


def test_the_entity_beam_is_cut_on_the_path_score_fused_with_the_whole_chain_read_by_the_embedder(monkeypatch):
    from tog_core.policy import ranking

    monkeypatch.setattr(ranking, "ranking_embedder", lambda: _ChainReader({"Yara": 1.0, "Zed": 0.9, "Vic": 0.8,
                                                                           "Uma": 0.7}))
    g = free_graph([("Ann", "Xavier", "Ann visited Xavier in the village"), ("Ann", "Yara", "Ann visited Yara once"),
                    ("Bea", "Wes", "Bea visited Wes in the village"), ("Bea", "Zed", "Bea knows Zed from the village"),
                    ("Cal", "Vic", "Cal visited Vic"), ("Cal", "Uma", "Cal knows Uma")])
    q, seeds = "Whom did Ann, Bea and Cal visit in the village?", ["Ann", "Bea", "Cal"]
    eng, st = run(g, q, seeds, depth=1, width=2)
    # Xavier, Wes and Vic share the best path score (rank 1); of them only Vic reads close to the question (e5 rank
    # 3), Xavier and Wes not at all (rank 5). Yara is 4th by path score but the first chain by meaning
    assert chains(eng, st) == [["Cal", "Vic"], ["Ann", "Yara"]]
    step = next(s for s in st.steps if s.stage == "entities")
    yara, vic = (next(c for c in step.candidates if c.target == t) for t in ("Yara", "Vic"))
    assert vic.kept and vic.score == 1.0 and yara.kept and yara.scored_by == "bm25+e5 chain"
    assert vic.reason.startswith("path score 1 (rank 1 of 6) fused with the whole chain read by e5 0.80 (rank 3)")
    assert yara.reason.startswith("path score 0.248 (rank 4 of 6) fused with the whole chain read by e5 1.00 (rank 1)")
    assert max(c.score for c in step.candidates if not c.kept) < min(c.score for c in step.candidates if c.kept)
    assert [round(p.score, 3) for p in st.paths] == [1.0, 0.248]  # a chain keeps its path score
    # switched off (or on a typed graph, or with an LLM entity scorer): the path scores alone, the paper's top N
    eng0, st0 = run(g, q, seeds, depth=1, width=2, policy=CheapPolicy(chain_fusion=False))
    assert chains(eng0, st0) == [["Ann", "Xavier"], ["Bea", "Wes"]]
    assert {c.scored_by for c in st0.steps[1].candidates} == {"bm25"}
    # without the packaged embedder the same: nothing to read the chains with
    monkeypatch.setattr(ranking, "ranking_embedder", lambda: None)
    eng1, st1 = run(g, q, seeds, depth=1, width=2)
    assert chains(eng1, st1) == [["Ann", "Xavier"], ["Bea", "Wes"]]


def test_the_entity_beam_reads_each_chain_ends_description_as_a_third_ranking(monkeypatch):
    """beam_descriptions (off by default: it lost on a blind set): two chains tied on the path score and on e5's
    reading of the chain; the one whose end's whole description (past the first sentence the relation stage reads
    beside the relation) shares the question's words is kept."""
    from tog_core.policy import ranking

    monkeypatch.setattr(ranking, "ranking_embedder", lambda: _ChainReader({"Xavier": 0.5, "Yara": 0.5}))
    about = {"Xavier": "Xavier is a person of the coast. He mends nets in the harbour.",
             "Yara": "Yara is a person of the coast. She keeps the lighthouse on the northern cliff."}
    g = free_graph([("Ann", "Xavier", "Ann visited Xavier"), ("Ann", "Yara", "Ann visited Yara")], about)
    q = "Whom did Ann visit, the keeper of the lighthouse on the cliff?"
    eng, st = run(g, q, ["Ann"], depth=1, width=1, policy=CheapPolicy(beam_descriptions=True))
    assert chains(eng, st) == [["Ann", "Yara"]]
    step = next(s for s in st.steps if s.stage == "entities")
    yara, xavier = (next(c for c in step.candidates if c.target == t) for t in ("Yara", "Xavier"))
    assert yara.kept and not xavier.kept and yara.scored_by.endswith("+e5 chain+description")
    assert "its end's description read by BM25 1.00 (rank 1)" in yara.reason
    assert "its end's description read by BM25 0.00 (rank 2)" in xavier.reason
    assert eng.policy.params()["beam_descriptions"] is True  # recorded when on (a saved run notes the change)
    # off (the default): the two readings tie, and the graph's order keeps Xavier
    eng0, st0 = run(g, q, ["Ann"], depth=1, width=1)
    assert "beam_descriptions" not in eng0.policy.params()
    assert chains(eng0, st0) == [["Ann", "Xavier"]]
    assert next(s for s in st0.steps if s.stage == "entities").candidates[0].scored_by.endswith("+e5 chain")


def test_relations_tied_at_the_cut_off_are_ordered_by_the_whole_chain_read_by_the_embedder(monkeypatch):
    from tog_core.policy import ranking

    monkeypatch.setattr(ranking, "ranking_embedder", lambda: _ChainReader({"Zed": 0.9, "Yara": 0.6}))
    # no relation shares a word with the question: BM25 gives each the floor, and the graph's order would decide
    g = free_graph([("Ann", "Xavier", "Ann hired Xavier"), ("Ann", "Wes", "Ann paid Wes"),
                    ("Ann", "Yara", "Ann thanked Yara"), ("Ann", "Zed", "Ann taught Zed")])
    q = "Whom did Ann train as an apprentice?"
    n = CheapPolicy(relation_width=1)  # the relation stage keeps N = 2 relations: the ties decide which
    eng, st = run(g, q, ["Ann"], depth=1, width=2, policy=n)
    rel = next(s for s in st.steps if s.stage == "relations")
    assert {c.score for c in rel.candidates} == {0.05}
    assert sorted(c.label for c in rel.candidates if c.kept) == ["Ann taught Zed", "Ann thanked Yara"]
    zed = next(c for c in rel.candidates if c.label == "Ann taught Zed")
    assert zed.reason == "tied at 0.05 with 3 other(s) at the cut-off: the whole chain read by e5 0.90"
    assert sorted(c[-1] for c in chains(eng, st)) == ["Yara", "Zed"]
    # off: the first two in the graph's order
    eng0, st0 = run(g, q, ["Ann"], depth=1, width=2, policy=CheapPolicy(chain_fusion=False, relation_width=1))
    assert sorted(c.label for c in st0.steps[0].candidates if c.kept) == ["Ann hired Xavier", "Ann paid Wes"]
    # a relation that matches the question is kept by its score; only the tie below it is read, and only the tie
    g2 = free_graph([("Ann", "Xavier", "Ann hired Xavier"), ("Ann", "Wes", "Ann trained Wes as an apprentice"),
                     ("Ann", "Zed", "Ann taught Zed")])
    eng2, st2 = run(g2, q, ["Ann"], depth=1, width=2, policy=n)
    kept = {c.label: c.reason for c in st2.steps[0].candidates if c.kept}
    assert set(kept) == {"Ann trained Wes as an apprentice", "Ann taught Zed"}
    assert kept["Ann trained Wes as an apprentice"] == "" and kept["Ann taught Zed"].startswith("tied at 0.05 with 1")
    # nothing tied across the cut-off: nothing read (no reason written)
    eng3, st3 = run(g2, q, ["Ann"], depth=1, width=3, policy=n)
    assert all(not c.reason.startswith("tied") for c in st3.steps[0].candidates)


def test_equal_scores_share_a_rank_and_a_tie_too_large_or_set_aside_by_the_pre_filter_is_not_read(monkeypatch):
    from tog_core.policy import fusion, ranking

    assert list(fusion.ranks([1.0, 0.5, 1.0, 0.2])) == [1, 3, 1, 4]  # the graph's order decides nothing
    assert list(fusion.fused_ranks([1.0, 1.0], [0.2, 0.9])) == pytest.approx(
        [(1 / 61 + 1 / 62) / (2 / 61), 1.0])  # tied on one reading, the other decides
    calls = []

    class Counting(_ChainReader):
        def embed(self, texts, kind="passage"):
            calls.append(len(texts))
            return super().embed(texts, kind)

    monkeypatch.setattr(ranking, "ranking_embedder", lambda: Counting({"Zed": 0.9}))
    g = free_graph([("Ann", "Xavier", "Ann hired Xavier"), ("Ann", "Wes", "Ann paid Wes"),
                    ("Ann", "Zed", "Ann taught Zed")])
    eng = ToGEngine(g, config=EngineConfig(relation_pruner="bm25", entity_pruner="bm25", exact_depth=True, depth=1,
                                           width=2), policy=CheapPolicy(relation_width=1))
    st = eng.start("Whom did Ann train?", seeds=["Ann"])
    pol = eng.policy
    groups = eng._groups(st, 0)
    assert pol.relation_ties(eng, st, 0, groups, [0.05, 0.05, 0.05]) is not None and calls
    calls.clear()
    assert pol.relation_ties(eng, st, 0, groups, [0.4, 0.0, 0.0]) is None  # 0: set aside by the pre-filter
    monkeypatch.setattr(fusion, "TIES_READ", 2)
    assert pol.relation_ties(eng, st, 0, groups, [0.05, 0.05, 0.05]) is None and not calls  # too many to read


def test_a_cheap_relation_stage_keeps_relation_width_times_n_relations_and_the_entity_beam_n(monkeypatch):
    """BM25 ranks a relation by the words it shares with the question, and the one a question paraphrases often
    shares none: on a GraphRAG graph with cheap scorers on both stages the cheap policy keeps relation_width x N
    relations per frontier entity, the ties at that cut-off read by e5 on the whole chain, and the entity beam still
    keeps N chains. The paper's policy, the LLM on either stage, and a typed graph keep N."""
    from types import SimpleNamespace

    from tog_core.policy import ranking
    from tog_core.tog.policy import FaithfulPolicy

    reads = {"Zed": 0.9, "Yara": 0.8, "Uma": 0.7, "Tom": 0.6, "Sol": 0.5}  # e5's order; Xavier, Wes, Rob: 0
    monkeypatch.setattr(ranking, "ranking_embedder", lambda: _ChainReader(reads))
    people = (("Xavier", "hired"), ("Wes", "paid"), ("Rob", "fed"), ("Sol", "met"), ("Tom", "saw"),
              ("Uma", "called"), ("Yara", "thanked"), ("Zed", "taught"))  # none shares a word with the question
    g = free_graph([("Ann", x, f"Ann {verb} {x}") for x, verb in people])
    q = "Whom did Ann train as an apprentice?"
    best = ["Zed", "Yara", "Uma", "Tom", "Sol"]
    for width, policy, kept in ((2, CheapPolicy(), 4), (1, CheapPolicy(relation_width=3), 3),
                                (2, CheapPolicy(relation_width=1), 2)):
        eng, st = run(g, q, ["Ann"], depth=1, width=width, policy=policy)
        rel = next(s for s in st.steps if s.stage == "relations")
        got = sorted(c.label.split()[-1] for c in rel.candidates if c.kept)
        assert got == sorted(best[:kept]), (width, policy.relation_width)  # the e5 reading's best, not graph order
        assert all(c.reason.startswith("tied at 0.05 with 7 other(s)") for c in rel.candidates if c.kept)
        assert len(st.paths) == width  # the entity beam: N chains
    # two relations the question's words match are kept by their scores; the cut-off at 2N runs through the ties
    # below them, and those are read (at N the cut would pass above them, and the graph's order would pick)
    g2 = free_graph([("Ann", "Vic", "Ann trained Vic as an apprentice"), ("Ann", "Quin", "Ann trained Quin")]
                    + [("Ann", x, f"Ann {verb} {x}") for x, verb in people])
    eng, st = run(g2, q, ["Ann"], depth=1, width=2)
    kept = {c.label.split()[2]: c.reason for c in st.steps[0].candidates if c.kept}
    assert sorted(kept) == ["Quin", "Vic", "Yara", "Zed"]
    assert kept["Zed"].startswith("tied at 0.05 with 7 other(s)") and not kept["Vic"].startswith("tied")
    with pytest.raises(ValueError, match="relation_width"):
        CheapPolicy(relation_width=0)

    def ctx(relations_llm=False, entities_llm=False, typed=False):
        return SimpleNamespace(config=EngineConfig(width=2), graph=SimpleNamespace(has_relation_labels=typed),
                               relation_scorer=SimpleNamespace(uses_llm=relations_llm),
                               entity_scorer=SimpleNamespace(uses_llm=entities_llm))

    assert CheapPolicy().relations_kept(ctx()) == 4
    assert CheapPolicy().relations_kept(ctx(relations_llm=True)) == 2  # the LLM scores relations: N, as the paper
    assert CheapPolicy().relations_kept(ctx(entities_llm=True)) == 2  # the LLM would read twice the entities
    assert CheapPolicy().relations_kept(ctx(typed=True)) == 2  # a typed graph: N
    assert FaithfulPolicy().relations_kept(ctx()) == 2
    assert CheapPolicy().params()["relation_width"] == 2  # recorded in the trace with the policy's settings
