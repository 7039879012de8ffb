"""Candidates found by their descriptions (tog_core/policy/retrieval.py): the entities near the topic entities whose
title and description read best against the question (BM25) join the answer ranker's candidates, with the shortest
chain to them, beside every entity of the kept chains (policy/answers.py)."""
from __future__ import annotations

import functools

import pytest

from builders import free_graph
from mill_graph import ABOUT, EDGES, QUESTION, one_hop_state
from searchkit import CHEAP, only
from tog_core.graphrag.pg_common import StoreError
from tog_core.policy import answers, ranking, retrieval
from tog_core.policy.cheap import CheapPolicy
from tog_core.tog.engine import ToGEngine
from tog_core.tog.state import FORCED_ANSWER, BeamPath, Hop

# the description finder alone (the paths read whole, policy/pathcover.py, find more: tests/test_pathcover.py)
ONLY_DESCRIPTIONS = functools.partial(CheapPolicy, path_found=0)


@pytest.fixture()
def graph():
    return free_graph(EDGES, ABOUT)


def titles(g, paths):
    return [[g.title(p.start)] + [g.title(h.dst) for h in p.hops] for p in paths]


def query(g, question=QUESTION, topics=("Ann",)):
    return retrieval.query_words(question, list(topics), "en")


def test_entities_within_the_depth_are_read_by_their_descriptions_best_first(graph):
    ann = [graph.find_title("Ann")]
    near = retrieval.retrieve(graph, ann, 1, query(graph))
    assert titles(graph, near) == [["Ann", "Dan"]]  # Carl is two hops out; Bob and Eve share no word with it
    two = retrieval.retrieve(graph, ann, 2, query(graph))
    assert [t[-1] for t in titles(graph, two)] == ["Carl", "Dan"]
    assert all(p.score == 0.0 and all(h.score == 0.0 for h in p.hops) for p in two)  # the search scored none
    # exactly two hops (the number of hops is known): Dan, one hop out, is no candidate
    assert [t[-1] for t in titles(graph, retrieval.retrieve(graph, ann, 2, query(graph), exact=True))] == ["Carl"]
    # Zed reads as well as Carl but is three hops out
    assert "Zed" in [t[-1] for t in titles(graph, retrieval.retrieve(graph, ann, 3, query(graph)))]


def test_the_chain_to_a_retrieved_entity_is_a_shortest_one_through_the_best_reading_bridge(graph):
    ann = graph.find_title("Ann")
    carl = next(p for p in retrieval.retrieve(graph, [ann], 2, query(graph)) if graph.title(p.end) == "Carl")
    assert titles(graph, [carl]) == [["Ann", "Dan", "Carl"]]  # Dan's description names the river, Bob's nothing
    assert [h.label for h in carl.hops] == ["Ann hired Dan", "Dan carries sacks for Carl"]
    # a chain a person's overrides rule out is skipped, not replaced by a worse entity's
    got = retrieval.retrieve(graph, [ann], 2, query(graph), allowed=lambda p: graph.title(p.end) != "Carl")
    assert [graph.title(p.end) for p in got] == ["Dan"]


def test_topics_excluded_entities_and_k_bound_what_is_retrieved(graph):
    ann, carl = graph.find_title("Ann"), graph.find_title("Carl")
    q = query(graph)
    assert [graph.title(p.end) for p in retrieval.retrieve(graph, [ann], 2, q, k=1)] == ["Carl"]
    assert [graph.title(p.end) for p in retrieval.retrieve(graph, [ann], 2, q, exclude=frozenset({carl}))] == ["Dan"]
    assert retrieval.retrieve(graph, [carl], 1, retrieval.query_words("Who is Carl?", ["Carl"], "en")) == []
    assert retrieval.retrieve(graph, [ann], 2, frozenset()) == [] and retrieval.retrieve(graph, [], 2, q) == []
    assert retrieval.retrieve(graph, [ann], 2, q, k=0) == []


def test_the_query_leaves_the_topics_title_words_out_and_scores_are_scaled_by_the_best(graph):
    q = retrieval.query_words("Which miller does Ann Weaver pay?", ["Ann Weaver"], "en")
    assert q == {"mill", "pay"}  # stems; "which" and "does" are stop words
    ids = [graph.find_title(t) for t in ("Carl", "Zed", "Bob")]
    scores = retrieval.description_scores(graph, ids, query(graph))
    assert max(scores) == 1.0 and scores[2] == 0.0 and 0 < min(scores[:2])
    assert retrieval.description_scores(graph, ids, frozenset({"absent"})) == [0.0, 0.0, 0.0]


def test_the_index_is_built_once_per_graph_and_not_for_a_graph_too_large(graph, monkeypatch):
    assert retrieval.index_of(graph) is retrieval.index_of(graph)
    other = free_graph(EDGES, {**ABOUT, "Carl": "Carl bakes bread."})  # another graph: its own descriptions
    assert retrieval.index_of(other).docs[other.find_title("Carl")] != retrieval.index_of(graph).docs[
        graph.find_title("Carl")]
    monkeypatch.setattr(retrieval, "MAX_ENTITIES", 3)
    big = free_graph(EDGES, ABOUT)  # six entities
    assert retrieval.index_of(big) is None
    assert retrieval.retrieve(big, [big.find_title("Ann")], 2, query(big)) == []
    assert retrieval.description_scores(big, [0, 1], query(big)) == [0.0, 0.0]


# ------------------------------------------------------------------------------------------------ in the policy


def test_retrieved_candidates_join_the_ranking_with_the_search_side_features_at_zero(graph):
    eng = ToGEngine(graph, config=CHEAP, policy=ONLY_DESCRIPTIONS())
    st = one_hop_state(eng)
    cands = eng.policy.answer_features(eng, st, list(st.paths), None, None)
    by = {graph.title(c.entity): c for c in cands}
    assert list(by) == ["Bob", "Carl", "Dan"]  # the chain's entity, then the retrieved best first
    assert by["Bob"].features["beam"] == 1.0 and by["Bob"].features["path_rel"] == 1.0
    for t in ("Carl", "Dan"):
        f = by[t].features
        assert f["beam"] == 0.0 and f["path_rel"] == f["inv_rank"] == f["share_in"] == f["share_searches"] == 0.0
    assert by["Carl"].features["hop"] == 2.0 and by["Carl"].features["desc_bm25"] == 1.0
    assert by["Bob"].features["desc_bm25"] == 0.0  # "Bob is a farmer": no word of the question
    assert titles(graph, [by["Carl"].path]) == [["Ann", "Dan", "Carl"]]
    # switched off, none is added; a person who forced an answer in gets none either
    off = ToGEngine(graph, config=CHEAP, policy=CheapPolicy(retrieved=0, path_found=0))
    assert [graph.title(c.entity) for c in off.policy.answer_features(off, st, list(st.paths), None, None)] == ["Bob"]
    forced = st.with_(extra_usage=(*st.extra_usage, {"fallback": FORCED_ANSWER}))
    assert forced.forced
    assert [graph.title(c.entity) for c in eng.policy.answer_features(eng, forced, list(st.paths), None, None)] == \
        ["Bob"]


def test_a_store_that_went_away_leaves_the_chains_candidates(graph, monkeypatch):
    eng = ToGEngine(graph, config=CHEAP, policy=ONLY_DESCRIPTIONS())
    st = one_hop_state(eng)
    retrieval.index_of(graph)  # read while the store was up (the app warms it when a project opens)

    def down(*a, **k):
        raise StoreError("store postgresql://127.0.0.1/x: server closed the connection unexpectedly")
    monkeypatch.setattr(type(graph), "neighbors_many", down)
    cands = eng.policy.answer_features(eng, st, list(st.paths), None, None)
    assert [graph.title(c.entity) for c in cands] == ["Bob"]


def test_a_typed_graph_gets_no_retrieved_candidates(graph, monkeypatch):
    eng = ToGEngine(graph, config=CHEAP, policy=ONLY_DESCRIPTIONS())
    monkeypatch.setattr(type(eng.graph), "has_relation_labels", property(lambda self: True))
    st = one_hop_state(eng)
    cands = eng.policy.answer_features(eng, st, list(st.paths), None, None)
    assert [graph.title(c.entity) for c in cands] == ["Bob"] and cands[0].features["desc_bm25"] == 0.0


def test_a_retrieved_answer_says_how_it_was_found_in_its_why_the_answer_and_the_trace(graph, monkeypatch):
    monkeypatch.setattr(ranking, "shipped_model", lambda typed=False: only("desc_bm25", 3.0, low=0.1))
    eng = ToGEngine(graph, config=CHEAP, policy=ONLY_DESCRIPTIONS())
    st = one_hop_state(eng)
    ranked = eng.answer_candidates(st)
    assert [graph.title(c.entity) for c in ranked][:2] == ["Carl", "Dan"]
    assert answers.found_why("description") in ranked[0].why
    assert answers.found_why("description") not in next(c.why for c in ranked if graph.title(c.entity) == "Bob")
    text = eng.compose_answer(st)
    assert "Most likely answer: Carl" in text
    assert "The answer's chain (the shortest to it: found by its description, not by the search): Ann" in text
    t = eng.trace(st)
    assert t.answer_entity == "Carl"
    assert [(x["source"], x["target"]) for x in t.candidates[0]["chain"]] == [("Ann", "Dan"), ("Dan", "Carl")]


def test_the_shipped_free_model_reads_the_description_and_the_beam_and_the_typed_one_neither():
    model = ranking.shipped_model(False)
    assert model is not None
    for f in ("desc_bm25", "beam"):
        assert f in model.features and model.weights[model.features.index(f)] >= 0
    typed = ranking.shipped_model(True)
    assert typed is not None and not {"desc_bm25", "beam"} & set(typed.features)


def test_why_not_says_a_retrieved_candidate_was_never_the_searchs_but_is_on_the_list(graph, monkeypatch):
    from tog_core.tog.diagnosis import diagnose, diagnosis_text

    monkeypatch.setattr(ranking, "shipped_model", lambda typed=False: only("beam", 3.0, low=0.1))  # the chain first
    eng = ToGEngine(graph, config=CHEAP, policy=ONLY_DESCRIPTIONS())
    t = eng.trace(one_hop_state(eng)).to_dict()
    assert [c["title"] for c in t["candidates"]][:1] == ["Bob"]
    text = diagnosis_text(diagnose(t, ["Carl"], graph))
    assert text.startswith("Carl: never a candidate of the search (the answer list holds it, found by its "
                           "description).")
    assert "The answer list places it" in text and answers.found_why("description") in text
    # an entity on no list at all is "never a candidate", as before
    assert diagnosis_text(diagnose(t, ["Zed"], graph)).startswith("Zed: never a candidate.")


def test_why_not_the_answer_itself_found_by_its_description_says_so_and_suggests_no_override(graph, monkeypatch):
    from tog_core.tog.diagnosis import diagnose, diagnosis_text

    monkeypatch.setattr(ranking, "shipped_model", lambda typed=False: only("desc_bm25", 3.0, low=0.1))
    eng = ToGEngine(graph, config=CHEAP, policy=ONLY_DESCRIPTIONS())
    t = eng.trace(one_hop_state(eng)).to_dict()
    assert t["answer_entity"] == "Carl" and t["candidates"][0]["found"] == "description"
    assert "found" not in next(c for c in t["candidates"] if c["title"] == "Bob")  # a chain's candidate
    d = diagnose(t, ["Carl"], graph)
    assert d[0]["answer"] and d[0]["force"] is None and d[0]["lost"] is None
    assert diagnosis_text(d).startswith("Carl: the answer, found by its description")


def test_the_walk_stops_reading_past_max_reached_but_scores_what_it_reached(monkeypatch):
    g = free_graph(EDGES, {**ABOUT, "Eve": "Eve is a miller who grinds rye by the river."})  # Ann's third neighbour
    ann = g.find_title("Ann")
    calls = []
    real = type(g).neighbors_many
    monkeypatch.setattr(type(g), "neighbors_many", lambda self, idxs: calls.append(list(idxs)) or real(self, idxs))
    monkeypatch.setattr(retrieval, "MAX_REACHED", 3)  # Ann and the first two of her neighbours, in the graph's order
    near = [g.title(p.end) for p in retrieval.retrieve(g, [ann], 2, query(g))]
    assert near == ["Dan"]  # Bob and Dan were read; Eve, who reads best, was not, and nothing two hops out
    assert len(calls) == 1  # full after the first level: the next is not read
    assert retrieval.retrieve(g, [ann], 1, query(g), exact=True)[0].end == g.find_title("Dan")
    monkeypatch.setattr(retrieval, "MAX_REACHED", 100)
    assert [g.title(p.end) for p in retrieval.retrieve(g, [ann], 1, query(g))][0] == "Eve"


def test_an_entity_the_question_names_takes_no_retrieved_place(graph):
    eng = ToGEngine(graph, config=CHEAP, policy=ONLY_DESCRIPTIONS())
    st = one_hop_state(eng, "Which miller by the river does Dan carry sacks for?")
    got = [graph.title(c.entity) for c in eng.policy.answer_features(eng, st, list(st.paths), None, None)]
    assert "Carl" in got and "Dan" not in got  # Dan reads well ("river") but the question names him


def test_the_question_is_stemmed_in_the_language_it_is_read_in():
    assert "rivi" in retrieval.query_words("rivières", [], "fr") and "rivièr" in retrieval.query_words("rivières", [],
                                                                                                       "en")
    g = free_graph([("Lucien", "Moulin Vert", "Lucien tient le Moulin Vert"),
                    ("Lucien", "Atelier Roux", "Lucien a fondé l'Atelier Roux")],
                   {"Moulin Vert": "Le Moulin Vert est un moulin sur la rivière, à côté du pont de pierre.",
                    "Atelier Roux": "L'Atelier Roux est une fabrique de cloches en bronze."})
    eng = ToGEngine(g, config=CHEAP, policy=ONLY_DESCRIPTIONS())
    lucien, roux = g.find_title("Lucien"), g.find_title("Atelier Roux")
    path = BeamPath(start=lucien, hops=(Hop(ridx=1, src=lucien, dst=roux, score=1.0, label="fondé"),), score=1.0)
    st = eng.start("Où Lucien travaille-t-il, sur les rivières ?", ["Lucien"])  # "rivières": the only word shared
    assert st.reading is not None and st.reading.language == "fr"
    st = st.with_(paths=(path,), depth=1, stage="done")
    got = [g.title(c.entity) for c in eng.policy.answer_features(eng, st, list(st.paths), None, None)]
    assert got == ["Atelier Roux", "Moulin Vert"]  # "rivières" meets "rivière" only when both are read as French


def test_one_index_is_built_per_graph_when_many_threads_ask_at_once(monkeypatch):
    import threading

    g = free_graph(EDGES, ABOUT)
    builds = []
    real = retrieval.DescriptionIndex.build
    monkeypatch.setattr(retrieval.DescriptionIndex, "build",
                        classmethod(lambda cls, t, d: builds.append(1) or real.__func__(cls, t, d)))
    got: list = []
    threads = [threading.Thread(target=lambda: got.append(retrieval.index_of(g))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(builds) == 1 and len(got) == 8 and all(x is got[0] for x in got)
    assert id(g) not in retrieval._BUILDING  # the build lock is let go


def test_a_failed_build_lets_its_lock_go_and_the_next_reader_builds_again(monkeypatch):
    g = free_graph(EDGES, ABOUT)
    real = type(g).entity_descriptions

    def down(*a, **k):
        raise StoreError("store postgresql://127.0.0.1/x: server closed the connection unexpectedly")
    monkeypatch.setattr(type(g), "entity_descriptions", down)
    with pytest.raises(StoreError):
        retrieval.index_of(g)
    assert id(g) not in retrieval._BUILDING
    monkeypatch.setattr(type(g), "entity_descriptions", real)
    assert retrieval.index_of(g) is not None


def test_a_step_a_person_dropped_keeps_a_retrieved_chain_through_it_out(graph):
    from tog_core.tog.trace import Candidate, Step

    eng = ToGEngine(graph, config=CHEAP, policy=ONLY_DESCRIPTIONS())
    st = one_hop_state(eng)
    # at depth 1 the person dropped Ann -> Dan, which the policy had kept
    dropped = Candidate(id="e|p0|x|id-Dan", label="Dan", score=0.5, kind="entity", auto_kept=True, kept=False,
                        source_id="id-Ann", target_id="id-Dan", relationship_ids=["r1"])
    st = st.with_(steps=(Step(depth=1, stage="entities", candidates=[dropped]),))
    cands = eng.policy.answer_features(eng, st, list(st.paths), None, None)
    assert [graph.title(c.entity) for c in cands] == ["Bob"]  # Carl's chain and Dan's both take the dropped link


def test_an_index_that_cannot_be_read_leaves_the_description_features_at_zero(monkeypatch):
    g = free_graph(EDGES, ABOUT)  # a graph whose index was never built

    def down(*a, **k):
        raise StoreError("store postgresql://127.0.0.1/x: server closed the connection unexpectedly")
    eng = ToGEngine(g, config=CHEAP, policy=ONLY_DESCRIPTIONS())
    st = one_hop_state(eng)
    monkeypatch.setattr(type(g), "entity_descriptions", down)
    cands = eng.policy.answer_features(eng, st, list(st.paths), None, None)
    assert [(g.title(c.entity), c.features["desc_bm25"]) for c in cands] == [("Bob", 0.0)]


def test_the_ranking_is_not_reused_across_search_depths(graph, monkeypatch):
    monkeypatch.setattr(ranking, "shipped_model", lambda typed=False: only("desc_bm25", 3.0, low=0.1))
    eng = ToGEngine(graph, config=CHEAP, policy=ONLY_DESCRIPTIONS())
    deep = one_hop_state(eng)
    assert eng.graph.title(eng.answer_candidates(deep)[0].entity) == "Carl"  # two hops out: read at depth 2
    shallow = deep.with_(depth=1)
    assert "Carl" not in [eng.graph.title(c.entity) for c in eng.answer_candidates(shallow)]


def test_the_app_says_a_retrieved_answer_was_found_by_its_description(graph, monkeypatch):
    from tog_core.app.views import answer_view
    from tog_core.render.chains import unscored, with_answer_chain
    from tog_core.render.export_common import own_answer_chain

    monkeypatch.setattr(ranking, "shipped_model", lambda typed=False: only("desc_bm25", 3.0, low=0.1))
    eng = ToGEngine(graph, config=CHEAP, policy=ONLY_DESCRIPTIONS())
    t = eng.trace(one_hop_state(eng))
    view = answer_view(t)
    assert view["entity"] == "Carl" and view["found"] == "description" and not view["from_trial"]
    assert [h[2] for h in view["hops"]] == ["Dan", "Carl"]
    chains, at = with_answer_chain(t.to_dict())
    assert at == 0 and all(link["unscored"] == unscored("description") and link["score"] is None for link in chains[0])
    own = own_answer_chain(t.to_dict())
    assert own is not None and "found by its description" in own[1]
    # a chain's answer is none of this
    monkeypatch.setattr(ranking, "shipped_model", lambda typed=False: only("beam", 3.0, low=0.1))
    eng = ToGEngine(graph, config=CHEAP, policy=ONLY_DESCRIPTIONS())
    t = eng.trace(one_hop_state(eng))
    view = answer_view(t)
    assert view["entity"] == "Bob" and not view["found"]
    assert own_answer_chain(t.to_dict()) is None


def test_the_ask_page_says_an_answer_found_by_its_description_is_not_on_a_kept_chain(app_home, monkeypatch):
    from appkit import app, ask, texts
    from tog_core.app.session import K

    # a model that puts the candidates no kept chain reaches first: the answer is one found by its description
    monkeypatch.setattr(ranking, "shipped_model", lambda typed=False: only("beam", -3.0, low=0.01))
    at = ask(app(), "Who founded the Lanternwright Guild?")
    t = at.session_state[K.ASK_TRACE].to_dict()
    assert t["candidates"][0]["found"] == "description" and t["answer_entity"] == t["candidates"][0]["title"]
    seen = texts(at)
    assert f"### {t['answer_entity']}" in [m.value for m in at.markdown]
    assert "The answer was found by its description" in seen
    assert "found by one of the searches made before the run" not in seen
    hops = [e for e in at.expander if e.label.startswith("How many hops")]
    assert hops and "it was found by its description" in " ".join(c.value for c in hops[0].caption)
