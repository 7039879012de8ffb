"""Answer ranking over the whole beam (tog_core/policy/ranking.py): every entity of every kept chain, this search's
and the depth trials', is a candidate; a fitted conditional logit orders them; the top one's probability is the
confidence, the model's threshold says when it is a guess; the trace keeps the ordered list with chains and
sentences."""
from __future__ import annotations

import asyncio
import json

import numpy as np
import pyarrow as pa
import pytest

from builders import free_graph
from searchkit import CHAIN, CHEAP, only, state_with_trials
from tog_core.graphrag.graph import KnowledgeGraph
from tog_core.policy import candidates, depths, passages, ranking
from tog_core.policy.cheap import CheapPolicy
from tog_core.scoring.text import tokens_in
from tog_core.tog.engine import ToGEngine
from tog_core.tog.state import BeamPath, Hop, Search
from tog_core.tog.trace import Trace


def hop(src: int, dst: int, ridx: int = 0) -> Hop:
    return Hop(ridx=ridx, src=src, dst=dst, score=1.0, label=f"r{ridx}")


# ------------------------------------------------------------------------------------------------ pure parts
def test_gather_takes_every_entity_of_every_chain_once_without_topics_or_repeated_chains():
    a = BeamPath(start=0, hops=(hop(0, 1, 0), hop(1, 2, 1)), score=0.8)
    b = BeamPath(start=0, hops=(hop(0, 3, 2),), score=0.4)
    back = BeamPath(start=0, hops=(hop(0, 1, 0), hop(1, 0, 3)), score=0.2)  # comes home: the start is no candidate
    topic = BeamPath(start=0, hops=(hop(0, 9, 4),), score=0.3)  # 9 is another topic entity of the question
    searches = [Search(depth=2, paths=(a, b, back, topic)), Search(depth=1, paths=(BeamPath(start=0, hops=(
        hop(0, 1, 0),), score=0.5), b))]  # b again: counted once
    cands, chains, n_searches = candidates.gather(searches, frozenset({0, 9}))
    by = {c.entity: c for c in cands}
    assert sorted(by) == [1, 2, 3] and chains == 5 and n_searches == 2
    assert by[1].features["share_in"] == pytest.approx(3 / 5)  # on a, back and the 1-hop chain
    assert by[1].features["is_end"] == 0.0 and by[1].features["hop"] == 1.0  # its best chain is a (rank 0)
    assert by[1].path.hops == a.hops[:1] and by[2].path.hops == a.hops
    assert by[1].features["share_searches"] == 1.0 and by[2].features["share_searches"] == 0.5
    assert by[3].features["path_rel"] == pytest.approx(0.5) and by[3].features["inv_rank"] == pytest.approx(0.5)


def test_relative_features_are_read_against_the_best_candidate_and_the_model_round_trips():
    rows = [{"sim_entity": 0.9, "hop": 1.0}, {"sim_entity": 0.7, "hop": 2.0}]
    x = ranking.design(rows, ranking.FEATURES)
    j, k = ranking.FEATURES.index("sim_entity"), ranking.FEATURES.index("hop")
    assert x[:, j].tolist() == pytest.approx([0.0, -0.2]) and x[:, k].tolist() == [1.0, 2.0]
    m = only("hop", 2.0)
    back = ranking.Model.from_dict(json.loads(json.dumps(m.to_dict())))
    assert back.probabilities(rows) == pytest.approx(m.probabilities(rows))
    probs = back.probabilities(rows)
    assert probs[1] > probs[0] and sum(probs) < 1.0  # the rest is "none of these"
    assert probs[1] == pytest.approx(np.exp(4) / (1 + np.exp(2) + np.exp(4)))


def test_passage_words_reads_the_source_text_around_the_candidates_name(monkeypatch):
    """The share of the question's fact words within _PASSAGE_CHARS (here 45) of a place naming the candidate, in
    the link's text units: a word further away, cut by the window's edge, or in a unit that never names it, does
    not count; the name is found with its article aside, in any case, and wrapped over a line break."""
    from types import SimpleNamespace as Unit

    from tog_core.scoring.text import tokens

    monkeypatch.setattr(passages, "_PASSAGE_CHARS", 45)
    facts = frozenset(tokens("odious stingy apple sauce"))
    text = ("She called the man odious and stingy, said Mrs.\nCratchit to Belinda. " + "Nothing else. " * 8
            + "Then came the apple sauce.")
    units = [Unit(text=text), Unit(text="The sauce and the apple were odious and stingy.")]
    assert passages.passage_words(units, "BELINDA", facts) == pytest.approx(2 / 4)  # odious, stingy; sauce too far
    assert passages.passage_words(units, "THE MRS. CRATCHIT", facts) == pytest.approx(2 / 4)  # wrapped, article aside
    assert passages.passage_words(units[1:], "BELINDA", facts) == 0.0  # never named there
    monkeypatch.setattr(passages, "_PASSAGE_CHARS", 40)  # the window starts inside "odious": the word is cut, not read
    assert passages.passage_words(units, "BELINDA", facts) == pytest.approx(1 / 4)
    monkeypatch.setattr(passages, "_PASSAGE_CHARS", 45)
    assert passages.passage_words(units, "BEL", facts) == 0.0  # a part of a word is no name
    assert passages.passage_words(units, "BELINDA", frozenset()) == 0.0
    assert passages.passage_words([Unit(text="李明住在茶园旁边。王芳在城里。")], "李明",
                                 frozenset(tokens("茶园"))) == 1.0
    monkeypatch.setattr(passages, "_PASSAGE_CHARS", 400)
    assert passages.passage_words(units, "BELINDA", facts) == 1.0  # a paragraph reaches the apple sauce


def test_the_shipped_model_reads_every_feature_and_has_a_threshold():
    m = ranking.shipped_model()
    assert m is not None, "tog_core/policy/ranker.json is missing or unreadable (bench/fit_ranker.py fit --write)"
    assert m.features == ranking.FEATURES and m.weights.shape == (len(ranking.FEATURES),)
    assert 0.0 < m.low < 1.0 and np.all(m.scale > 0) and "fitted by bench/fit_ranker.py" in m.note


# ------------------------------------------------------------------------------------------------ in the search


def test_the_answer_may_come_from_another_search_and_the_trace_keeps_its_chain(monkeypatch):
    monkeypatch.setattr(ranking, "shipped_model", lambda typed=False: only("hop", 3.0, low=0.99))
    eng = ToGEngine(free_graph(CHAIN), config=CHEAP, policy=CheapPolicy())
    st = state_with_trials(eng)
    ranked = eng.answer_candidates(st)
    assert [eng.graph.title(c.entity) for c in ranked] == ["Carl", "Bob"]
    assert 0.8 < ranked[0].confidence < 0.99 and ranked[0].low == 0.99 and "ranked 1 of 2" in ranked[0].why
    text = eng.compose_answer(st)
    assert "Most likely answer: Carl" in text and "treat it as a guess" in text  # below the model's threshold
    assert "The answer's chain (from another number of hops tried): Ann" in text
    t = eng.trace(st)
    assert t.answer_entity == "Carl" and t.low_confidence == 0.99 and t.confidence == ranked[0].confidence
    assert [c["title"] for c in t.candidates] == ["Carl", "Bob"]
    assert [(x["source"], x["target"]) for x in t.candidates[0]["chain"]] == [("Ann", "Bob"), ("Bob", "Carl")]
    assert t.candidates[0]["chain"][1]["relationship_id"] == "r1" and t.candidates[0]["score"] > 0.8
    # kept through JSON and resumed with the other searches
    back = Trace.from_json(t.to_json())
    assert back.candidates == t.candidates
    st2 = eng.restore(back)
    assert st2.other_searches == st.other_searches


def test_a_known_number_of_hops_keeps_the_answer_at_the_chains_ends(monkeypatch):
    monkeypatch.setattr(ranking, "shipped_model", lambda typed=False: only("hop", -3.0))  # prefers the first hop
    eng = ToGEngine(free_graph(CHAIN), config=CHEAP, policy=CheapPolicy())
    st = state_with_trials(eng)
    assert eng.graph.title(eng.answer_choice(st).entity) == "Bob"
    firm = st.with_(hops_firm=True, other_searches=(), paths=st.other_searches[0].paths, hops=2)
    assert [eng.graph.title(c.entity) for c in eng.answer_candidates(firm)] == ["Carl"]  # Bob is no chain's end


def test_without_the_model_the_rule_choice_answers(monkeypatch):
    monkeypatch.setattr(ranking, "shipped_model", lambda typed=False: None)
    eng = ToGEngine(free_graph(CHAIN), config=CHEAP, policy=CheapPolicy())
    st = state_with_trials(eng)
    ranked = eng.answer_candidates(st)
    assert [eng.graph.title(c.entity) for c in ranked] == ["Bob"] and "ranked" not in ranked[0].why
    off = ToGEngine(free_graph(CHAIN), config=CHEAP, policy=CheapPolicy(answer_model=False))
    assert "ranked" not in off.answer_candidates(state_with_trials(off))[0].why
    assert off.trace(state_with_trials(off)).config["policy_params"]["answer_model"] is False


def test_a_demo_run_records_the_ordered_answer_list_with_chains_and_sentences(demo_project):
    from tog_core.graphrag.open import open_graph

    _, g = open_graph(str(demo_project))
    eng = ToGEngine(g, config=CHEAP, policy=CheapPolicy())
    st = asyncio.run(depths.run(eng, "Which ship was captained by the mentor of Ivo Brask?"))
    t = eng.trace(st)
    model = ranking.shipped_model()
    assert t.candidates and t.candidates[0]["title"] == t.answer_entity and t.low_confidence == model.low
    scores = [c["score"] for c in t.candidates]
    assert scores == sorted(scores, reverse=True) and sum(scores) <= 1.0 + 1e-6
    seeds = {s.title for s in t.seeds}
    for c in t.candidates:
        assert c["chain"][0]["source"] in seeds and c["chain"][-1]["target"] == c["title"]
        assert all(a["target_id"] == b["source_id"] for a, b in zip(c["chain"], c["chain"][1:]))
    assert any(c["sentence"] for c in t.candidates)  # the demo's text units name both ends of some link
    assert t.answer_entity == "Lantern's Promise"  # demo/questions.jsonl's answer


def test_a_graph_without_text_units_still_ranks(monkeypatch):
    ent = pa.table({"id": ["a", "b"], "title": ["A", "B"], "description": ["", ""]})
    rel = pa.table({"id": ["r0"], "source": ["A"], "target": ["B"], "description": ["A knows B"],
                    "text_unit_ids": pa.array([[]], pa.list_(pa.string()))})
    g = KnowledgeGraph.from_tables(ent, rel, None)
    eng = ToGEngine(g, config=CHEAP, policy=CheapPolicy())
    st = asyncio.run(depths.run(eng, "Whom does A know?", seeds=["A"]))
    t = eng.trace(st)
    assert [c["title"] for c in t.candidates] == ["B"] and t.candidates[0]["sentence"] == ""
    assert 0.0 < t.confidence < 1.0  # the only candidate, yet not certain: "none of these" stays possible


def test_the_pictures_know_the_type_of_an_answer_found_only_by_a_depth_trial(monkeypatch):
    from tog_core.render.frontier_items import trace_entity_types

    monkeypatch.setattr(ranking, "shipped_model", lambda typed=False: only("hop", 3.0))
    about = {"Carl": "Carl is a miller."}
    g = KnowledgeGraph.from_tables(
        pa.table({"id": ["id-Ann", "id-Bob", "id-Carl"], "title": ["Ann", "Bob", "Carl"],
                  "type": ["PERSON", "PERSON", "MILLER"], "description": ["", "", about["Carl"]]}),
        pa.table({"id": ["r0", "r1"], "source": ["Ann", "Bob"], "target": ["Bob", "Carl"],
                  "description": [CHAIN[0][2], CHAIN[1][2]],
                  "text_unit_ids": pa.array([[], []], pa.list_(pa.string()))}),
        None)
    eng = ToGEngine(g, config=CHEAP, policy=CheapPolicy())
    t = eng.trace(state_with_trials(eng)).to_dict()
    assert t["answer_entity"] == "Carl" and all(link["target"] != "Carl" for c in t["chains"] for link in c)
    assert trace_entity_types(g, t)["id-Carl"] == "MILLER"  # read from the answer's own chain


def test_the_memo_of_rankings_tells_a_known_number_of_hops_apart(monkeypatch):
    """The same chains ranked twice, once with the number of hops chosen by a person: the second run may not be
    served the first's list (only chain ends answer a known number of hops)."""
    monkeypatch.setattr(ranking, "shipped_model", lambda typed=False: only("hop", -3.0))  # prefers the first hop
    eng = ToGEngine(free_graph(CHAIN), config=CHEAP, policy=CheapPolicy())
    st = state_with_trials(eng)
    st = st.with_(paths=st.other_searches[0].paths, other_searches=(), depth=2, hops=2)
    assert [eng.graph.title(c.entity) for c in eng.answer_candidates(st)] == ["Bob", "Carl"]
    assert [eng.graph.title(c.entity) for c in eng.answer_candidates(st.with_(hops_firm=True))] == ["Carl"]


def test_the_papers_answer_list_starts_with_its_answer():
    from tog_core.tog.policy import PaperAnswer
    g = free_graph(CHAIN)
    ann, bob = g.find_title("Ann"), g.find_title("Bob")
    still = BeamPath(start=ann, hops=(), score=2.0)  # the best chain never left its topic entity
    moved = BeamPath(start=ann, hops=(hop(ann, bob),), score=1.0)
    paper = PaperAnswer()
    ranked = paper.rank_answers(None, None, [still, moved])  # type: ignore[arg-type]
    assert ranked[0].entity == paper.choose_answer(None, None, [still, moved]).entity == ann  # type: ignore[arg-type,union-attr]
    assert [c.entity for c in ranked] == [ann, bob]


# ------------------------------------------------------------------------------------- what the question names
# (tests/test_naming.py reads the titles a question names)


def test_a_candidate_the_question_names_goes_after_every_one_it_does_not():
    feats = [{"named": 1.0, "is_pick": 1.0}, {"named": 0.0}, {"named": 0.0}]
    assert ranking.order([0.9, 0.5, 0.7], feats) == [2, 1, 0]
    every = [{"named": 1.0}, {"named": 1.0}]
    assert ranking.order([0.2, 0.7], every) == [1, 0]  # when it names every one, the ranking alone decides
    assert ranking.order([0.9, 0.5, 0.7], feats, rule_first=True) == [0, 2, 1]  # a typed graph's rule choice stays


def test_the_policy_marks_what_the_question_names_and_ranks_it_last(monkeypatch):
    monkeypatch.setattr(ranking, "shipped_model", lambda typed=False: only("hop", -3.0))  # prefers Bob, hop 1
    eng = ToGEngine(free_graph(CHAIN), config=CHEAP, policy=CheapPolicy())
    st = state_with_trials(eng).with_(question="Who bought the mill from Bob?")
    ranked = eng.answer_candidates(st)
    assert [eng.graph.title(c.entity) for c in ranked] == ["Carl", "Bob"]
    assert "the question names it" in ranked[1].why and "names" not in ranked[0].why
    plain = eng.answer_candidates(state_with_trials(eng))  # "Who bought the mill?" names neither
    assert [eng.graph.title(c.entity) for c in plain] == ["Bob", "Carl"]


def test_the_words_naming_what_is_asked_are_no_fact_a_chain_must_state(monkeypatch):
    """ "Which place …": a chain that says "took place" states nothing the question asks about; only the mill does.
    Coverage and overlap leave the asked noun out (free text), so the model reading coverage puts Dale first. A
    question that asks for a place without naming one ("where") keeps "place" as a fact, and so does a typed graph
    (its shipped model was fitted with it)."""
    monkeypatch.setattr(ranking, "shipped_model", lambda typed=False: only("coverage", 3.0))
    edges = [("Ann", "Bob", "The fair with Ann took place at Bob"), ("Ann", "Dale", "Ann kept the mill at Dale")]
    eng = ToGEngine(free_graph(edges), config=CHEAP, policy=CheapPolicy())
    g = eng.graph
    ann, bob, dale = (g.find_title(t) for t in ("Ann", "Bob", "Dale"))
    paths = tuple(BeamPath(start=ann, hops=(Hop(ridx=k, src=ann, dst=d, score=1.0, label=edges[k][2]),), score=1.0)
                  for k, d in enumerate((bob, dale)))
    st = eng.start("Which place had the mill of Ann?", ["Ann"]).with_(paths=paths, depth=1, stage="done", hops=1)
    ranked = eng.answer_candidates(st)
    assert [g.title(c.entity) for c in ranked] == ["Dale", "Bob"]
    feats = {g.title(c.entity): c.features for c in eng.policy.answer_features(eng, st, list(paths), None, None)}
    # "place" is what is asked, not a fact: Bob's chain shares only "the" of which / had / the / mill / of
    assert feats["Bob"]["coverage"] == 0.0 and feats["Bob"]["overlap"] == pytest.approx(1 / 5)
    assert feats["Dale"]["coverage"] == 1.0 and feats["Dale"]["overlap"] == pytest.approx(2 / 5)  # "mill" too
    where = eng.start("Where had Ann the mill at the place?", ["Ann"]).with_(paths=paths, depth=1, stage="done")
    kept = {g.title(c.entity): c.features for c in eng.policy.answer_features(eng, where, list(paths), None, None)}
    assert kept["Bob"]["coverage"] == 0.5  # "place" a fact here (of "mill", "place"), though the type asked is place
    names = ["Ann", "Bob", "Dale"]
    typed = KnowledgeGraph.from_tables(
        pa.table({"id": [f"id-{n}" for n in names], "title": names, "description": ["", "", ""]}),
        pa.table({"id": ["r0", "r1"], "source": ["Ann", "Ann"], "target": ["Bob", "Dale"],
                  "description": [d for _, _, d in edges], "relation": ["took_place_at", "kept_mill_at"],
                  "text_unit_ids": pa.array([[], []], pa.list_(pa.string()))}), None)
    assert typed.has_relation_labels
    teng = ToGEngine(typed, config=CHEAP, policy=CheapPolicy())
    tst = teng.start("Which place had the mill of Ann?", ["Ann"]).with_(paths=paths, depth=1, stage="done", hops=1)
    on_typed = {typed.title(c.entity): c.features
                for c in teng.policy.answer_features(teng, tst, list(paths), None, None)}
    assert on_typed["Bob"]["coverage"] > 0  # "took_place_at" covers "place": the typed model reads it as before


# ------------------------------------------------------------------------- what the candidate's description says it is
@pytest.mark.parametrize("description, title, head", [
    ("The shirt is a garment taken from the dead man's body.", "THE SHIRT", True),
    ("Gullhaven is a small, remote island off the northern coast.", "GULLHAVEN", True),  # adjectives first
    ("The Caradec company is a shipping firm that owns the island's only boat.", "CARADEC COMPANY", False),  # mentioned
    ("", "THE SHIRT", False),
    ("The shirt is an old rag. Garments sell well.", "THE SHIRT", False),  # the first sentence only
    ("Tarnby is a lakeside town on the island of Thornholm.", "TARNBY", False),  # a town; the island comes later
    ("The shirt, a garment of the dead man's, is sold.", "THE SHIRT", True),  # no verb before the phrase
    ("Thornholm Island is an island of the lake.", "THORNHOLM ISLAND", True),  # the title's own noun counts
    ("Garment is a small town near the island.", "GARMENT", False),  # ... but not the name itself
    ("Scrooge is an island of a man.", "EBENEZER SCROOGE", True),  # the text shortens the name
    ("A shirt: the garment of the dead man.", "THE SHIRT", True),  # the name after an article
    ("Sold with the shirt: a garment of the dead man.", "THE SHIRT", False),  # ... not after a content word
    ("衬衫是一件死者的衣服，岛上的人卖了它。", "衬衫", False),  # no spaces: a clause is no phrase, not read
])
def test_asked_head_reads_the_opening_phrase_of_the_description(description, title, head):
    asked = frozenset({"garment", "island", "boat", "岛"})
    assert candidates.asked_head(frozenset(tokens_in(" ".join(asked), "en")), title, description, "en") is head
    assert not candidates.asked_head(frozenset(), title, description, "en")  # nothing asked: nothing found


def test_the_policy_marks_a_candidate_whose_description_says_it_is_what_is_asked(monkeypatch):
    monkeypatch.setattr(ranking, "shipped_model", lambda typed=False: only("asked_head", 3.0))
    about = {"Bob": "Bob is a farmer of the valley.", "Carl": "Carl is a miller of the valley who once bought a farm."}
    eng = ToGEngine(free_graph(CHAIN, about), config=CHEAP, policy=CheapPolicy())

    def features(question: str) -> dict[str, float]:
        st = state_with_trials(eng, question)
        paths = [*st.paths, *(p for s in st.other_searches for p in s.paths)]
        cands = eng.policy.answer_features(eng, st, paths, None, None)
        return {eng.graph.title(c.entity): c.features["asked_head"] for c in cands}

    assert features("Which farmer did Ann meet?") == {"Bob": 1.0, "Carl": 0.0}  # Carl's names a farm further on
    assert features("Who did Ann meet?") == {"Bob": 0.0, "Carl": 0.0}  # no noun names what is asked
    ranked = eng.answer_candidates(state_with_trials(eng, "Which farmer did Ann meet?"))
    assert eng.graph.title(ranked[0].entity) == "Bob"
    ranked = eng.answer_candidates(state_with_trials(eng, "Which miller did Ann meet?"))
    assert eng.graph.title(ranked[0].entity) == "Carl"


# ------------------------------------------------------------------------------------- why a candidate placed so
def test_why_names_the_signals_that_part_a_candidate_from_the_answer():
    from tog_core.policy import explain

    model = ranking.Model(features=("type_fit", "log_degree", "hop", "bias"), weights=np.array([2.0, -1.0, 0.1, 0.0]),
                          mean=np.zeros(4), scale=np.ones(4), low=0.5)
    rows = [{"type_fit": 1.0, "log_degree": 3.0, "hop": 1.0}, {"type_fit": -1.0, "log_degree": 1.0, "hop": 1.0},
            {"type_fit": 1.0, "log_degree": 3.0, "hop": 1.0}]
    said = explain.reasons(model, rows, ["Ann", "Bob", "Cy"])
    words = explain.SIGNAL_WORDS
    # the answer against the runner-up: ahead on type (+4), behind on links (-2); hop parts them by nothing; each side
    # names the other candidate (a reader of "ahead of it on" could not tell who "it" was)
    assert said[0] == f"ahead of Bob on: {words['type_fit']}; behind Bob on: {words['log_degree']}"
    assert said[1] == f"behind Ann on: {words['type_fit']}; ahead of Ann on: {words['log_degree']}"
    assert not any(" it on:" in s for s in said)
    assert said[2] == ""  # the answer's twin: nothing parts them
    assert explain.reasons(model, rows[:1], ["Ann"]) == [""]  # a lone candidate
    assert explain.reasons(model, [], []) == []
    assert set(words) == set(ranking.FEATURES) - {"bias"}  # every signal the ranker reads has its words


def test_the_trace_and_why_not_say_why_a_candidate_trails_the_answer(monkeypatch):
    from tog_core.tog.choice import place_words
    from tog_core.tog.diagnosis import diagnose, diagnosis_text

    model = ranking.Model(features=("hop", "bias"), weights=np.array([3.0, 0.0]), mean=np.zeros(2), scale=np.ones(2),
                          low=0.5)
    monkeypatch.setattr(ranking, "shipped_model", lambda typed=False: model)  # prefers the deeper Carl
    eng = ToGEngine(free_graph(CHAIN), config=CHEAP, policy=CheapPolicy())
    ranked = eng.answer_candidates(state_with_trials(eng))
    assert [eng.graph.title(c.entity) for c in ranked] == ["Carl", "Bob"]
    assert ranked[1].why.endswith("behind Carl on: how many hops it is from the topic")
    assert ranked[0].why.endswith("ahead of Bob on: how many hops it is from the topic")
    trace = {"candidates": [{"title": "Carl", "entity_id": "id-Carl", "why": ranked[0].why},
                            {"title": "Bob", "entity_id": "id-Bob", "why": ranked[1].why}], "chains": [], "steps": []}
    d = diagnose(trace, ["Bob", "Carl"], eng.graph)
    assert d[0]["ranked"] == {"place": 2, "of": 2,  # Bob is also the rule choice
                              "why": "also the rule's pick: the best chain's end (the question asks for no type "
                                     "this graph has); behind Carl on: how many hops it is from the topic"}
    assert d[1]["ranked"] is None  # the answer itself
    assert "The answer list places it 2 of 2: also the rule's pick: the best chain's end" in diagnosis_text(d)
    assert ranked[1].why.startswith(place_words(2, 2) + "; ")  # the place in the one wording the diagnosis reads
    trace["candidates"][1]["why"] = "ranked by hand; behind Carl"  # not the list's place words (another version)
    assert diagnose(trace, ["Bob"], eng.graph)[0]["ranked"]["why"] == "ranked by hand; behind Carl"  # said whole
    # the trace keeps the first few candidates of a longer ranking: the place is read against the whole ranking
    trace["candidates"][1]["why"] = place_words(2, 13) + "; behind Carl"
    assert diagnose(trace, ["Bob"], eng.graph)[0]["ranked"] == {"place": 2, "of": 13, "why": "behind Carl"}


def test_the_rules_pick_claims_a_fitting_type_only_when_its_type_fits():
    """A reviewer saw CHURCHYARD (a place) answer "Which spirit …?" as "the rule's pick (… whose type fits the
    question)": the words now follow the candidate's type_fit (1 fits, -1 does not, 0 no type asked)."""
    from tog_core.policy.answers import _why

    assert _why(0, 3, True, False, 1.0).endswith("whose type fits the question")
    assert "not the one asked for" in _why(0, 3, True, False, -1.0) and "fits" not in _why(0, 3, True, False, -1.0)
    assert "asks for no type" in _why(0, 3, True, False, 0.0) and "fits" not in _why(0, 3, True, False, 0.0)
    assert "not the one asked for" in _why(0, 3, True, True, -1.0)  # the rule choice first (typed graphs)
    assert "rule" not in _why(1, 3, False, False, 1.0)  # not the pick: nothing said of it
