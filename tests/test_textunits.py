"""Candidates found in the source text (tog_core/policy/textunits.py): the text units behind the relationships near the
topic entities are read against the question, and the entities their best units name near the question's words join
the answer ranker's candidates with the shortest chain to them (policy/answers.py), after the ones found by their
descriptions (policy/retrieval.py)."""
from __future__ import annotations

import functools
import pyarrow as pa
import pytest

from searchkit import CHEAP, only
from mill_graph import one_hop_state as retrieval_state
from tog_core.graphrag.graph import KnowledgeGraph
from tog_core.policy import answers, ranking, retrieval, textunits
from tog_core.policy.cheap import CheapPolicy
from tog_core.tog.engine import ToGEngine
from tog_core.tog.state import FORCED_ANSWER

FILLER = " ".join(["The weather was grey and the days were short that year."] * 14)  # ~800 characters
# Ann's neighbours Bob and Dan; Dan's friend Gus (two hops out) is the one the text says mends the wheel, far from
# where it names Dan; Hal, three hops out, is named in the same unit
EDGES = [("Ann", "Bob", "Ann and Bob are neighbours", ["t1"]),
         ("Ann", "Dan", "Ann hired Dan", ["t2"]),
         ("Bob", "Cat", "Bob buys flour from Cat", ["t1"]),
         ("Dan", "Gus", "Dan and Gus are friends", ["t2"]),
         ("Gus", "Hal", "Gus taught Hal", ["t2"]),
         ("Ann", "Eve", "Ann writes to Eve", ["t3"])]
UNITS = {"t1": "Ann lives next to Bob. Bob buys flour from Cat every week.",
         "t2": f"Ann hired Dan to row the ferry. {FILLER} Gus mends the old water wheel at the mill, and Hal watches.",
         "t3": "Eve teaches at the school across the water."}
QUESTION = "Who mends the old water wheel at the mill?"


def unit_graph(edges=EDGES, units=UNITS, about=None) -> KnowledgeGraph:
    names = list(dict.fromkeys([e[0] for e in edges] + [e[1] for e in edges]))
    ent = pa.table({"id": [f"id-{n}" for n in names], "title": names,
                    "description": [(about or {}).get(n, "") for n in names]})
    rel = pa.table({"id": [f"r{k}" for k in range(len(edges))], "source": [e[0] for e in edges],
                    "target": [e[1] for e in edges], "description": [e[2] for e in edges],
                    "text_unit_ids": pa.array([e[3] for e in edges], pa.list_(pa.string()))})
    tu = pa.table({"id": list(units), "text": list(units.values())})
    return KnowledgeGraph.from_tables(ent, rel, tu)


@pytest.fixture()
def graph():
    return unit_graph()


def query(g, question=QUESTION, topics=("Ann",)):
    return retrieval.query_words(question, list(topics), "en")


def ends(g, paths):
    return [g.title(p.end) for p in paths]


def near(g, depth=2, topics=("Ann",)):
    return retrieval.neighbourhood(g, [g.find_title(t) for t in topics], depth)


# ------------------------------------------------------------------------------------------------ pure parts
def test_text_units_near_gives_the_ids_per_relationship_and_the_first_units_texts(graph):
    ids, texts = graph.text_units_near([1, 3, 0], 5)
    assert ids == {1: ["t2"], 3: ["t2"], 0: ["t1"]} and list(texts) == ["t2", "t1"]  # the order met
    assert texts["t1"] == graph.evidence(0)[0].text
    ids, texts = graph.text_units_near([1, 3, 0], 1)
    assert ids == {1: ["t2"], 3: ["t2"], 0: ["t1"]} and list(texts) == ["t2"]  # past the limit: no text
    assert graph.text_units_near([], 5) == ({}, {})


def test_the_neighbourhood_holds_the_relationships_between_what_it_reached_nearest_first(graph):
    n = near(graph, depth=1)
    assert sorted(graph.title(e) for e, d in n.dist.items() if d == 1) == ["Bob", "Dan", "Eve"]
    assert [graph.endpoints(r) for r in n.rels][:1] and all(
        graph.title(a) in ("Ann", "Bob", "Dan", "Eve") for r in n.rels for a in graph.endpoints(r))
    two = near(graph, depth=2)
    assert set(two.rels) == {0, 1, 2, 3, 5} and max(two.rels.index(r) for r in (0, 1, 5)) < two.rels.index(3)


def test_the_best_units_are_the_ones_reading_best_against_the_question_and_none_that_share_no_word(graph):
    units = textunits.best_units(graph, near(graph), query(graph))
    assert [u.id for u, _ in units] == ["t2", "t3"]  # t1 shares no word; t3 only "water"
    assert sorted(units[0][1]) == [1, 3]  # the relationships of the neighbourhood citing t2 (not Gus-Hal: 3 hops)
    assert textunits.best_units(graph, near(graph), query(graph), n=1)[0][0].id == "t2"
    assert textunits.best_units(graph, near(graph), frozenset()) == []


def test_the_entity_named_near_the_questions_words_comes_first_with_the_shortest_chain(graph):
    paths = textunits.found_in_text(graph, near(graph), query(graph), k=5)
    # Gus is named by all four words, Eve by "water"; Dan ~800 characters from them
    assert ends(graph, paths) == ["Gus", "Eve", "Dan"]
    gus = paths[0]
    assert [(graph.title(h.src), graph.title(h.dst)) for h in gus.hops] == [("Ann", "Dan"), ("Dan", "Gus")]
    assert gus.score == 0.0 and all(h.score == 0.0 for h in gus.hops)  # the search scored none of it
    assert "Ann" not in ends(graph, paths)  # a topic is no candidate


def test_found_in_text_keeps_to_the_depth_k_exclude_and_allowed(graph):
    q = query(graph)
    assert "Hal" not in ends(graph, textunits.found_in_text(graph, near(graph), q, k=5))  # three hops out
    assert "Hal" in ends(graph, textunits.found_in_text(graph, near(graph, depth=3), q, k=5))
    assert ends(graph, textunits.found_in_text(graph, near(graph), q, k=5, exact=True)) == ["Gus"]
    assert ends(graph, textunits.found_in_text(graph, near(graph), q, k=1)) == ["Gus"]
    gus = graph.find_title("Gus")
    assert "Gus" not in ends(graph, textunits.found_in_text(graph, near(graph), q, k=5, exclude=frozenset({gus})))
    got = textunits.found_in_text(graph, near(graph), q, k=5, allowed=lambda p: graph.title(p.end) != "Gus")
    assert "Gus" not in ends(graph, got) and got
    assert textunits.found_in_text(graph, near(graph), q, k=0) == []
    assert textunits.found_in_text(graph, near(graph), frozenset(), k=5) == []


def test_the_units_read_are_capped_nearest_first(graph, monkeypatch):
    monkeypatch.setattr(textunits, "MAX_UNITS", 1)
    # the nearest relationship (Ann-Bob) cites t1, which shares no word: with one unit read, nothing is found
    assert textunits.best_units(graph, near(graph), query(graph)) == []
    monkeypatch.setattr(textunits, "MAX_UNITS", 2000)
    monkeypatch.setattr(textunits, "MAX_RELATIONSHIPS", 1)
    assert textunits.best_units(graph, near(graph), query(graph)) == []


def test_a_graph_without_text_units_finds_nothing_in_text():
    g = unit_graph(edges=[(a, b, d, []) for a, b, d, _ in EDGES], units={"t0": "unused"})
    assert textunits.found_in_text(g, near(g), query(g), k=5) == []


# ------------------------------------------------------------------------------------------------ in the policy
def TEXT(**kw) -> CheapPolicy:  # noqa: N802  (a policy maker, read like the class)
    """The LLM-free policy with the candidates found in the text switched on (they are off by default: the rule read
    on a new blind set dropped them, docs/experiment-log.md, tenth stop)."""
    return CheapPolicy(text_found=5, **kw)


def test_the_shipped_policy_finds_no_candidate_in_the_text(graph):
    assert CheapPolicy().text_found == 0
    eng = ToGEngine(graph, config=CHEAP, policy=CheapPolicy())
    st = one_hop_state(eng)
    assert "Gus" not in [graph.title(c.entity) for c in eng.policy.answer_features(eng, st, list(st.paths), None,
                                                                                    None)]


def one_hop_state(eng: ToGEngine, question: str = QUESTION):
    """The search kept one chain, Ann -> Bob (the first relationship here as there), and tried no other depth."""
    return retrieval_state(eng, question)


def test_candidates_found_in_text_follow_the_ones_found_by_description_marked_and_at_zero(graph):
    g = unit_graph(about={"Eve": "Eve is a teacher; she once mended a water wheel at a mill."})
    eng = ToGEngine(g, config=CHEAP, policy=TEXT())
    st = one_hop_state(eng)
    cands = eng.policy.answer_features(eng, st, list(st.paths), None, None)
    titles = [g.title(c.entity) for c in cands]
    assert titles[0] == "Bob" and titles[1] == "Eve"  # the chain's, then found by description
    assert titles[2:4] == ["Gus", "Dan"] and titles.count("Eve") == 1  # then found in the text, Eve not twice
    by = {g.title(c.entity): c for c in cands}
    assert answers._found(by["Bob"]) == "" and answers._found(by["Eve"]) == "description"
    assert answers._found(by["Gus"]) == "text" and by["Gus"].features["found_text"] == 1.0
    assert by["Gus"].features["beam"] == 0.0 and by["Gus"].features["path_rel"] == 0.0
    assert "found_text" not in ranking.FEATURES  # a marker for the trace, no model input


def test_text_found_off_when_its_count_is_zero_forced_or_on_a_typed_graph(graph, monkeypatch):
    eng = ToGEngine(graph, config=CHEAP, policy=CheapPolicy(text_found=0))
    st = one_hop_state(eng)
    assert "Gus" not in [graph.title(c.entity) for c in eng.policy.answer_features(eng, st, list(st.paths), None,
                                                                                    None)]
    eng = ToGEngine(graph, config=CHEAP, policy=TEXT(retrieved=0))
    assert "Gus" in [graph.title(c.entity) for c in eng.policy.answer_features(eng, st, list(st.paths), None, None)]
    forced = st.with_(extra_usage=(*st.extra_usage, {"fallback": FORCED_ANSWER}))
    assert forced.forced
    assert [graph.title(c.entity) for c in eng.policy.answer_features(eng, forced, list(st.paths), None, None)] == \
        ["Bob"]
    monkeypatch.setattr(type(eng.graph), "has_relation_labels", property(lambda self: True))
    assert [graph.title(c.entity) for c in eng.policy.answer_features(eng, st, list(st.paths), None, None)] == ["Bob"]


def test_an_entity_the_question_names_takes_no_place_found_in_text(graph):
    eng = ToGEngine(graph, config=CHEAP, policy=TEXT())
    st = one_hop_state(eng, "Who mends the old water wheel at the mill with Dan?")
    titles = [graph.title(c.entity) for c in eng.policy.answer_features(eng, st, list(st.paths), None, None)]
    assert "Gus" in titles and "Dan" not in titles


def test_an_answer_found_in_text_says_so_in_its_why_the_answer_the_trace_the_app_and_why_not(graph, monkeypatch):
    from tog_core.app.views import answer_view
    from tog_core.render.chains import unscored, with_answer_chain
    from tog_core.render.export_common import own_answer_chain
    from tog_core.tog.diagnosis import diagnose, diagnosis_text

    monkeypatch.setattr(ranking, "shipped_model", lambda typed=False: only("beam", -3.0, low=0.1))  # off-chain first
    eng = ToGEngine(graph, config=CHEAP, policy=TEXT())
    st = one_hop_state(eng)
    ranked = eng.answer_candidates(st)
    assert graph.title(ranked[0].entity) == "Gus" and ranked[0].found == "text"
    assert answers.found_why("text") in ranked[0].why and "found in the source text" in answers.found_why("text")
    text = eng.compose_answer(st)
    assert "The answer's chain (the shortest to it: found in the source text, not by the search): Ann" in text
    t = eng.trace(st)
    assert t.answer_entity == "Gus" and t.candidates[0]["found"] == "text"
    view = answer_view(t)
    assert view["found"] == "text" and not view["from_trial"] and [h[2] for h in view["hops"]] == ["Dan", "Gus"]
    chains, at = with_answer_chain(t.to_dict())
    assert at == 0 and all(link["unscored"] == unscored("text") for link in chains[0])
    own = own_answer_chain(t.to_dict())
    assert own is not None and own[1].startswith("found in the source text, on no kept chain")
    d = diagnose(t.to_dict(), ["Gus"], graph)
    assert d[0]["found_by"] == "text" and d[0]["answer"]
    assert diagnosis_text(d).startswith("Gus: the answer, found in the source text")


def test_a_store_gone_away_leaves_the_chains_candidates(graph, monkeypatch):
    from tog_core.graphrag.pg_common import StoreError

    eng = ToGEngine(graph, config=CHEAP, policy=TEXT())
    st = one_hop_state(eng)
    retrieval.index_of(graph)

    def down(*a, **k):
        raise StoreError("store postgresql://127.0.0.1/x: server closed the connection unexpectedly")
    monkeypatch.setattr(type(graph), "text_units_near", down)
    assert [graph.title(c.entity) for c in eng.policy.answer_features(eng, st, list(st.paths), None, None)] == ["Bob"]
    # the text units unread, the candidates found by description still count
    g = unit_graph(about={"Eve": "Eve is a teacher; she once mended a water wheel at a mill."})
    eng = ToGEngine(g, config=CHEAP, policy=TEXT())
    st = one_hop_state(eng)
    assert [g.title(c.entity) for c in eng.policy.answer_features(eng, st, list(st.paths), None, None)] == \
        ["Bob", "Eve"]



def test_the_ask_page_says_an_answer_found_in_the_source_text_is_not_on_a_kept_chain(app_home, monkeypatch):
    from appkit import app, ask, texts
    from tog_core.app.session import K

    # switched on, nothing found by description, and a model that puts the candidates no kept chain reaches first
    monkeypatch.setattr(CheapPolicy, "__init__", functools.partialmethod(CheapPolicy.__init__, text_found=5))
    monkeypatch.setattr(retrieval, "retrieve", lambda *a, **k: [])
    monkeypatch.setattr(ranking, "shipped_model", lambda typed=False: only("beam", -3.0, low=0.01))
    at = ask(app(), "Who founded the Lanternwright Guild?")
    t = at.session_state[K.ASK_TRACE].to_dict()
    assert t["candidates"][0]["found"] == "text" and t["answer_entity"] == t["candidates"][0]["title"]
    seen = texts(at)
    assert "The answer was found in the source text (the source text behind the relationships" in seen
    assert "found by its description" not in seen
    hops = [e for e in at.expander if e.label.startswith("How many hops")]
    assert hops and "it was found in the source text" in " ".join(c.value for c in hops[0].caption)


# ------------------------------------------------------------------------------------------------ after a review
def test_an_entity_named_in_two_best_units_keeps_its_better_reading():
    # u1 (the best unit) says Gus mends the old wheel; u2 names Gus too, far from its words, and Lee near three
    edges = [("Ann", "Dan", "Ann hired Dan", ["u1"]), ("Ann", "Kim", "Ann knows Kim", ["u2"]),
             ("Dan", "Gus", "Dan and Gus are friends", ["u1", "u2"]), ("Kim", "Lee", "Kim and Lee", ["u2"])]
    units = {"u1": f"Ann hired Dan. {FILLER} Gus mends the old water wheel at the mill.",
             "u2": f"Lee mends the water wheel. {FILLER} Kim met Gus."}
    g = unit_graph(edges, units)
    assert ends(g, textunits.found_in_text(g, near(g), query(g), k=5))[:2] == ["Gus", "Lee"]


def test_a_rare_word_outweighs_a_common_one_said_often():
    edges = [("Ann", "Bob", "Ann and Bob", ["u1"]), ("Ann", "Cy", "Ann and Cy", ["u2"]),
             ("Ann", "Dee", "Ann and Dee", ["u3"]), ("Ann", "Eli", "Ann and Eli", ["u4"])]
    units = {"u1": "Bob went to the mill, the mill, the mill and the mill again.", "u2": "Cy saw a wheel.",
             "u3": "Dee walked past the mill.", "u4": "Eli sold the mill."}
    g = unit_graph(edges, units)
    q = query(g, "Which wheel at the mill?")
    assert q == {"wheel", "mill"}
    # "wheel" is in one unit, "mill" in three: counted alike, u1's four mills would read first
    assert [u.id for u, _ in textunits.best_units(g, near(g, depth=1), q)][:2] == ["u2", "u1"]


def test_the_walk_reads_a_relationship_between_two_entities_at_the_same_distance():
    edges = [("Ann", "Bob", "Ann and Bob", ["u0"]), ("Ann", "Dan", "Ann and Dan", ["u0"]),
             ("Bob", "Dan", "Bob and Dan", ["u1"])]
    g = unit_graph(edges, {"u0": "Ann's friends.", "u1": "Bob mends the old water wheel at the mill with Dan."})
    n = near(g, depth=2)
    assert 2 in n.rels and set(n.ends[2]) == {g.find_title("Bob"), g.find_title("Dan")}
    assert ends(g, textunits.found_in_text(g, n, query(g), k=5))[:1] == ["Bob"]


def test_an_entity_its_unit_never_names_is_not_found_in_it():
    edges = [("Ann", "Dan", "Ann hired Dan", ["u1"]), ("Dan", "Zoe", "Dan and Zoe", ["u1"])]
    g = unit_graph(edges, {"u1": "Dan mends the old water wheel at the mill."})
    assert ends(g, textunits.found_in_text(g, near(g), query(g), k=5)) == ["Dan"]


def test_the_chain_to_an_entity_found_in_text_ends_with_a_relationship_that_cites_the_unit():
    # Gus is two hops out through Bob (the first relationship listed) or through Cy; only Cy-Gus cites the unit
    edges = [("Ann", "Bob", "Ann and Bob", ["u0"]), ("Ann", "Cy", "Ann and Cy", ["u0"]),
             ("Bob", "Gus", "Bob and Gus", ["u0"]), ("Cy", "Gus", "Cy and Gus", ["u1"])]
    g = unit_graph(edges, {"u0": "Ann's friends.", "u1": "Gus mends the old water wheel at the mill."})
    gus = next(p for p in textunits.found_in_text(g, near(g), query(g), k=5) if g.title(p.end) == "Gus")
    assert [(g.title(h.src), g.title(h.dst)) for h in gus.hops] == [("Ann", "Cy"), ("Cy", "Gus")]
    assert [u.id for u in g.evidence(gus.hops[-1].ridx)] == ["u1"] and gus.hops[-1].label == "Cy and Gus"
    # with no citing relationship from a nearer entity, the shortest chain as retrieval builds it
    assert [(g.title(h.src), g.title(h.dst)) for h in retrieval.chain_to(g, g.find_title("Gus"), near(g), None,
                                                                         query(g)).hops] == [("Ann", "Bob"),
                                                                                              ("Bob", "Gus")]


def test_text_units_near_skips_a_text_unit_id_missing_from_the_text_units():
    g = unit_graph([("Ann", "Bob", "Ann and Bob", ["gone", "t1"])], {"t1": "Ann and Bob talk."})
    assert g.text_units_near([0], 5) == ({0: ["t1"]}, {"t1": "Ann and Bob talk."})
    assert [u.id for u in g.evidence(0)] == ["t1"]


def test_with_a_known_number_of_hops_only_entities_at_that_depth_are_found_in_text(graph):
    eng = ToGEngine(graph, config=CHEAP.__class__(**{**CHEAP.__dict__, "exact_depth": True}), policy=TEXT())
    st = one_hop_state(eng)
    titles = [graph.title(c.entity) for c in eng.policy.answer_features(eng, st, list(st.paths), None, None)]
    assert "Gus" in titles and "Eve" not in titles and "Dan" not in titles  # Eve and Dan are one hop out


def test_the_ranking_memo_knows_how_many_are_found_in_text(graph, monkeypatch):
    monkeypatch.setattr(ranking, "shipped_model", lambda typed=False: only("beam", -3.0, low=0.1))
    eng = ToGEngine(graph, config=CHEAP, policy=TEXT())
    st = one_hop_state(eng)
    assert "Gus" in [graph.title(c.entity) for c in eng.answer_candidates(st)]
    eng.policy.text_found = 0
    assert "Gus" not in [graph.title(c.entity) for c in eng.answer_candidates(st)]


def test_the_words_for_how_an_off_chain_answer_was_found():
    from tog_core.render.chains import found_off_chain, unscored
    from tog_core.tog.diagnosis import diagnosis_text

    assert unscored("text") == "not scored: the shortest chain to an answer found in the source text"
    assert unscored("later") == "not scored: the shortest chain to an answer found off the kept chains"
    top = {"title": "Gus", "found": "text"}
    assert found_off_chain({"candidates": [top], "answer_entity": "Gus"}) == "text"
    assert found_off_chain({"candidates": [top], "answer_entity": "Dan"}) == ""  # the answer is not that candidate
    assert found_off_chain({"candidates": [{"title": "Gus"}], "answer_entity": "Gus"}) == ""
    # a diagnosis stored before "found_by" said "by_description"
    old = {"title": "Carl", "found": True, "in_final_beam": False, "never_candidate": True, "by_description": True,
           "lost": None, "nearest": None, "force": None, "did_you_mean": [], "ranked": None}
    assert diagnosis_text([old]).startswith("Carl: never a candidate of the search (the answer list holds it, "
                                            "found by its description).")
    assert diagnosis_text([{**old, "answer": True}]).startswith("Carl: the answer, found by its description")


# ------------------------------------------------------------------------------------------------ a second review
def test_the_last_link_is_the_relationship_citing_the_unit_that_reads_best_for_the_entity():
    # u1 reads best for the question (more of its words) but names Gus far from them; u2 names Gus among them
    edges = [("Ann", "Dan", "Ann and Dan", ["u0"]), ("Ann", "Cy", "Ann and Cy", ["u0"]),
             ("Dan", "Gus", "Dan and Gus", ["u1"]), ("Cy", "Gus", "Cy and Gus", ["u2"])]
    units = {"u0": "Ann's friends.",
             "u1": f"The old water wheel at the mill was mended by a man. {FILLER} Gus lived there.",
             "u2": "Gus mends the wheel."}
    g = unit_graph(edges, units)
    got = textunits.best_units(g, near(g), query(g))
    assert [u.id for u, _ in got][:2] == ["u1", "u2"]
    gus = next(p for p in textunits.found_in_text(g, near(g), query(g), k=5) if g.title(p.end) == "Gus")
    assert [(g.title(h.src), g.title(h.dst)) for h in gus.hops] == [("Ann", "Cy"), ("Cy", "Gus")]


def test_a_citing_relationship_at_the_same_distance_leaves_the_shortest_chain():
    edges = [("Ann", "Bob", "Ann and Bob", ["u0"]), ("Ann", "Dan", "Ann and Dan", ["u0"]),
             ("Bob", "Dan", "Bob and Dan", ["u1"])]
    g = unit_graph(edges, {"u0": "Ann's friends.", "u1": "Bob mends the old water wheel at the mill with Dan."})
    bob = textunits.found_in_text(g, near(g), query(g), k=5)[0]
    assert g.title(bob.end) == "Bob" and [(g.title(h.src), g.title(h.dst)) for h in bob.hops] == [("Ann", "Bob")]


def test_text_units_near_refuses_an_index_out_of_range(graph):
    for bad in ([-1], [graph.n_relationships], [0, -7]):
        with pytest.raises(IndexError, match="relationship index"):
            graph.text_units_near(bad, 5)


def test_the_shipped_policy_records_no_text_found_and_walks_nothing_without_a_finder(graph, monkeypatch):
    assert "text_found" not in CheapPolicy().params() and TEXT().params()["text_found"] == 5
    eng = ToGEngine(graph, config=CHEAP, policy=CheapPolicy())
    st = one_hop_state(eng)
    monkeypatch.setattr(retrieval, "index_of", lambda g: None)  # a graph too large for the description index

    def no_walk(*a, **k):
        raise AssertionError("walked the neighbourhood with no finder to read it")
    monkeypatch.setattr(retrieval, "neighbourhood", no_walk)
    assert [graph.title(c.entity) for c in eng.policy.answer_features(eng, st, list(st.paths), None, None)] == ["Bob"]


def test_the_words_said_of_an_answer_found_by_its_description_stay_as_they_were():
    from tog_core.tog.diagnosis import diagnose

    assert answers.found_why("description") == \
        "found by its description, not on a kept chain (its chain is the shortest to it)"
    from explorer.blocks import FOUND_WHERE
    assert FOUND_WHERE["description"] == \
        "it reads best against the question among the entities this near the topic entities"
    g = unit_graph()
    t = {"candidates": [{"title": "Gus", "entity_id": "id-Gus", "found": "description"}], "answer_entity": "Dan",
         "chains": [], "seeds": [{"id": "id-Ann"}], "steps": []}
    d = diagnose(t, ["Gus"], g)[0]
    assert d["found_by"] == "description" and d["by_description"] is True  # the older key, still written
