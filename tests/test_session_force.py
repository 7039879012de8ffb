""""Force X in" (tog_core/app/force.py) on the hand-checkable graph of test_engine.make_graph: Acme's founder Alice
was born in Paris; Bob, who works at Acme, in Lyon. At width 1 the search keeps Alice's path only, so Lyon, two hops
from Acme, was lost at depth 1. One press brings the whole way in; where the way cannot be followed, or the forced
step ends the search, the person is told what happened."""
from __future__ import annotations

import re

import pytest
from builders import make_graph
from searchkit import bm25_engine

from tog_core.app.force import force_in
from tog_core.app.run_notes import fallbacks, person_notes
from tog_core.app.runner import run_question
from tog_core.app.session import Settings
from tog_core.app.views import overrides
from tog_core.policy.cheap import CheapPolicy
from tog_core.runs.files import RunStore
from tog_core.tog.diagnosis import diagnose
from tog_core.tog.engine import ToGEngine
from tog_core.tog.state import EngineConfig

Q = "Where was the founder of Acme born?"


pytestmark = pytest.mark.usefixtures("tog_home")


@pytest.fixture()
def lost():
    """(engine, the width-1 run, the diagnosis of Lyon)."""
    eng = bm25_engine(width=1, depth=2)
    run = run_question(eng, Q, seeds=["Acme"], store=RunStore())
    [d] = diagnose(run.to_dict(), ["Lyon"], eng.graph)
    assert d["force"]["route"] == [["r2", "id-Bob"], ["r3", "id-Lyon"]]  # lost at its first relation, two hops on
    return eng, run, d


def test_one_press_keeps_every_link_to_lyon_each_marked_as_the_persons(lost):
    eng, run, d = lost
    ex = force_in(eng, Settings(), run, d["force"], None, follow=False)  # Explore
    forced = [(s.depth, s.stage, o["label"]) for s in ex.state.steps for o in s.overrides if o.get("forced") == "Lyon"]
    # Bob's relation to Lyon is among the 2 relations of Bob kept anyway (no override); every other link is forced
    assert forced == [(1, "relations", "Bob works at Acme"), (1, "entities", "Bob"), (2, "entities", "Lyon")]
    assert (ex.state.depth, ex.state.stage) == (2, "evaluate")  # waits for the person once Lyon is in the beam
    assert "Lyon is in the beam now" in ex.forced
    rows = overrides(ex.saver(eng, None).trace(ex.state))  # the page's overrides table says why each was made
    assert [r["why"] for r in rows] == ["forcing Lyon in"] * 3


def test_the_forced_answer_comes_first_and_the_search_s_other_candidates_follow(lost):
    eng, run, d = lost
    ex = force_in(eng, Settings(), run, d["force"], None)  # Ask
    t = ex.saver(eng, None).trace(ex.state)
    assert t.answer_entity == "Lyon" and t.confidence is None
    assert [c["title"] for c in t.candidates][0] == "Lyon" and t.candidates[0]["why"] == "forced in by you"
    assert "Paris" in [c["title"] for c in t.candidates[1:]]  # Alice's chain, still the branch's, not dropped
    assert "Other candidates: " in t.answer and "Paris" in t.answer.split("Other candidates: ")[1].split("\n")[0]


# a way the graph no longer holds: its second link is gone, and no other relation of Bob leads to Paris (a link whose id
# is gone while another relation joins the same two entities is followed by that one: see TWIN_EDGES below)
BROKEN = {"route": [["r2", "id-Bob"], ["r-gone", "id-Paris"]], "entity_id": "id-Paris"}


def test_a_way_no_longer_offered_stops_where_it_breaks_and_says_what_to_do(lost):
    eng, run, d = lost
    ex = force_in(eng, Settings(), run, {**d["force"], **BROKEN}, None, follow=False)
    assert (ex.state.depth, ex.state.stage) == (2, "relations") and not ex.state.done
    assert "at depth 2 (relations) the way on towards Paris is not offered" in ex.forced
    assert "tick the candidate that leads to Paris" in ex.forced


def test_a_forced_verdict_that_ends_the_search_on_explore_answers_it(lost):
    """Forcing "answer now" at depth 1 with Alice (the diagnosis's `action` for an entity kept, then lost deeper)
    ends the search: Explore answers with the person's entity rather than leaving the run without an answer."""
    eng, run, _ = lost
    force = {"step": 2, "candidate_id": "sufficient", "label": "Alice", "route": [], "from_id": "id-Alice",
             "entity_id": "id-Alice", "action": "answer at depth 1"}
    ex = force_in(eng, Settings(), run, force, None, follow=False)
    assert ex.state.stage == "done" and "Answer you forced in: Alice" in ex.state.answer
    assert "that ended the search" in ex.forced and "with Alice, your answer" in ex.forced


def test_what_the_press_did_is_said_until_the_next_step_only(lost):
    """A reviewer saw "…the search waits here…" and "Lyon is in the beam now" in the header through every later step,
    even once the run was answered: it is said at the step the press left the search at, then no more."""
    from tog_core.app.runner import explore_apply, explore_finish, explore_propose

    eng, run, d = lost
    ex = force_in(eng, Settings(), run, d["force"], None, follow=False)
    assert "Lyon is in the beam now" in ex.forced
    explore_apply(eng, explore_propose(eng, ex), None, None)
    assert ex.forced == ""
    ex = force_in(eng, Settings(), run, {**d["force"], **BROKEN}, None, follow=False)
    assert "the search waits here" in ex.forced
    explore_finish(eng, ex, None, auto=True)
    assert ex.state.done and ex.forced == ""


def test_an_entity_this_graph_does_not_hold_is_named_so_and_the_answer_is_not_swapped_silently(lost):
    """A reviewer forced an entity missing from the graph: the page said "tick the candidate that leads to Bob works at
    Acme" (the relation's text), the overrides were marked forced: "Bob works at Acme", and Ask answered the search's
    own answer without a word."""
    eng, run, d = lost
    gone = {**d["force"], "entity_id": "id-Gone", "route": [["r2", "id-Bob"], ["r3", "id-Gone"]]}
    ex = force_in(eng, Settings(), run, gone, None, follow=False)  # Explore
    assert ex.forced.startswith("The entity to force in (id-Gone) is not in this project's graph, so it cannot be "
                                "forced in. ")
    assert "tick the candidate that leads to the expected entity" in ex.forced and "Bob works at Acme" not in [
        o.get("forced") for s in ex.state.steps for o in s.overrides]
    ex = force_in(eng, Settings(), run, gone, None)  # Ask
    t = ex.saver(eng, None).trace(ex.state)
    assert t.answer_entity == "Paris" and "the answer is the search's own" in ex.forced
    [note] = [f for f in t.stats["other_fallbacks"] if f["name"] == "forced_entity_not_in_graph"]
    assert "id-Gone" in note["detail"] and "the answer is the search's own" in note["detail"]
    # said as what the person's press did, not listed among the search's fallbacks
    assert any("id-Gone" in n for n in person_notes(t)) and not any("id-Gone" in f for f in fallbacks(t))


def test_an_entity_id_not_in_the_graph_is_read_from_the_way_to_it(lost):
    eng, run, d = lost
    ex = force_in(eng, Settings(), run, {**d["force"], "entity_id": "id-Gone"}, None)  # the way still ends at Lyon
    assert ex.saver(eng, None).trace(ex.state).answer_entity == "Lyon" and "not in this project" not in ex.forced
    assert {o.get("forced") for s in ex.state.steps for o in s.overrides} - {None} == {"Lyon"}


@pytest.mark.parametrize(("change", "field"), [
    ({"step": 99}, "`step` must be a whole number from 0 to 5 (the run has 6 step(s)), not 99"),
    ({"step": 6}, "`step` must be a whole number from 0 to 5"),  # a finished run has no step after its last
    ({"step": -1}, "`step` must be a whole number from 0 to 5 (the run has 6 step(s)), not -1"),
    ({"step": "2"}, "`step` must be a whole number"),
    ({"candidate_id": None}, "`candidate_id` must name a candidate of step 1"),
    ({"route": [["r2", "id-Bob"], ["r3"]]}, "`route` link 2 must be a pair [relationship id, entity id]"),
    ({"route": "r2"}, "`route` must be a list of"),
])
def test_a_malformed_force_is_refused_naming_what_is_wrong(lost, change, field):
    """A reviewer's step past a finished run's end, a negative one or a route link of one id gave a confusing run or
    "not enough values to unpack": the pages show the error as "Cannot force it in: …", so it names the field."""
    eng, run, d = lost
    assert len(run.steps) == 6 and run.answer
    with pytest.raises(ValueError, match=re.escape(field)):
        force_in(eng, Settings(), run, {**d["force"], **change}, None, follow=False)


def test_the_llm_answering_a_forced_entity_reads_the_passages_of_its_chains_only(lost):
    """The prompt's chains were cut to those reaching the forced entity, but its passages came from every best chain:
    the LLM read Alice's birth in Paris next to the chain to Lyon it was asked about."""
    import asyncio

    from tog_core.app.force import _answer_at
    from tog_core.testing.scripted import ScriptedLLM

    eng, run, d = lost
    ex = force_in(eng, Settings(), run, d["force"], None, follow=False)
    stopped = eng.stop(ex.state)  # Stop & answer where the press left the search
    forced = _answer_at(eng, stopped, "id-Lyon", eng.graph.find("id-Lyon"))
    assert "Paris" in {eng.graph.title(p.end) for p in eng.best_paths(forced)}  # Alice's chain is still there
    llm = ScriptedLLM(lambda _msgs: "Lyon")
    reader = ToGEngine(eng.graph, llm=llm, config=eng.config, policy=CheapPolicy())
    done = asyncio.run(reader.answer(forced))
    [call] = llm.calls
    prompt = "\n".join(str(m["content"]) for m in call["messages"])
    assert done.answer == "Lyon" and "Source: Bob was born in Lyon." in prompt
    assert "Source: Alice was born in Paris." not in prompt


# Christmas Carol's FRED, in small (a reviewer's "Who is Scrooge's nephew?"): the search answers at depth 1, so Zed, one
# hop past Alice, was never a candidate. The diagnosis's way to Zed is the relationship GraphRAG stored first, Zed →
# Alice; at Alice, a hub, the pre-filter cuts that one from the candidates and offers its reversed twin Alice → Zed.
TWIN_EDGES = [
    ("Zed", "Alice", "Zed is the partner of Alice"),  # r0: stored target → source, the way the diagnosis finds
    ("Alice", "Acme", "Alice founded Acme"),
    ("Alice", "Paris", "Alice founded the Acme office in Paris"),
    ("Alice", "Rome", "Alice founded the Acme office in Rome"),
    ("Alice", "Oslo", "Alice founded the Acme office in Oslo"),
    ("Alice", "Zed", "Alice and Zed share a house"),  # r5: the reversed twin of r0, offered at depth 2
]


@pytest.fixture()
def twin():
    """(engine, the run that answered at depth 1, the diagnosis of Zed)."""
    eng = ToGEngine(make_graph(TWIN_EDGES), policy=CheapPolicy(),
                    config=EngineConfig(width=1, depth=3, relation_pruner="bm25", entity_pruner="bm25",
                                        max_candidates=3))
    run = run_question(eng, "Who founded Acme?", seeds=["Acme"], store=RunStore())
    assert run.answer_entity == "Alice" and [s.stage for s in run.steps][-1] == "evaluate"
    [d] = diagnose(run.to_dict(), ["Zed"], eng.graph)
    assert d["force"]["candidate_id"] == "continue" and d["force"]["route"] == [["r0", "id-Zed"]]
    assert eng.graph.relationship(5).reverse_of == 0
    return eng, run, d


def test_forcing_past_an_evaluate_step_takes_the_reversed_twin_of_a_relationship_the_search_does_not_offer(twin):
    """The press kept "search one level deeper" only: at depth 2 the route's relationship r0 was not a candidate, its
    twin "Alice and Zed share a house" was, and was left unticked, so Zed was not kept, the branch answered the
    search's own answer, and the page said "Zed was forced in, but no kept chain reaches it"."""
    eng, run, d = twin
    for follow in (False, True):  # Explore, Ask
        ex = force_in(eng, Settings(), run, d["force"], None, follow=follow)
        t = ex.saver(eng, None).trace(ex.state)
        made = [(s.depth, s.stage, o["label"], o.get("forced")) for s in t.steps for o in s.overrides if o["kept"]]
        assert made[:3] == [(1, "evaluate", "Search one level deeper", "Zed"),
                            (2, "relations", "Alice and Zed share a house", "Zed"), (2, "entities", "Zed", "Zed")]
        [rels] = [s for s in t.steps if (s.depth, s.stage) == (2, "relations")]
        assert "r0" not in {r for c in rels.candidates for r in c.relationship_ids}  # the twin is offered instead
        assert all(forced == "Zed" for *_, forced in made)  # every link the press made is marked as forcing Zed
        assert any(eng.graph.title(p.end) == "Zed" for p in ex.state.paths) and "was forced in, but" not in ex.forced
        if follow:
            assert t.answer_entity == "Zed" and t.candidates[0]["why"] == "forced in by you"
            assert not any("no kept chain reaches it" in n for n in person_notes(t))
        else:
            assert "Zed is in the beam now" in ex.forced


def test_a_way_that_stops_on_ask_says_where_and_never_that_the_entity_was_forced_in(twin):
    """Where no candidate leads on towards the entity (Oslo's one relation to Alice, r4, is cut by the pre-filter, and
    the way's own link is gone), Ask answers the search's own answer and says where the way stopped; nothing after
    that is forced (the depth-2 evaluate was forced to "continue" before, in the entity's name, though the way was
    lost)."""
    eng, run, d = twin
    gone = {**d["force"], "route": [["r-gone", "id-Oslo"]], "entity_id": "id-Oslo"}
    ex = force_in(eng, Settings(), run, gone, None)  # Ask
    t = ex.saver(eng, None).trace(ex.state)
    [rels] = [s for s in t.steps if (s.depth, s.stage) == (2, "relations")]
    assert "r4" not in {r for c in rels.candidates for r in c.relationship_ids}
    assert t.answer_entity != "Oslo" and not [n for n in person_notes(t) if "Oslo was forced in" in n]
    [note] = [n for n in person_notes(t) if "Oslo" in n]
    assert note == ("Oslo could not be forced in: at depth 2 (relations) the way on towards Oslo is not offered, so it "
                    "was not kept and the answer is the search's own")
    assert "the search went on without it" in ex.forced and "the search waits here" not in ex.forced
    forced = [(s.depth, s.stage) for s in t.steps for o in s.overrides if o.get("forced")]
    assert forced == [(1, "evaluate")]  # the press itself; nothing in Oslo's name once the way stopped
