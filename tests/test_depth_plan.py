"""How many hops an LLM-free search on a free-text graph takes: tried, not read from the wording, by a loop around
the engine (policy/depths.py), which hands the engine the number it keeps (State.hops)."""
from __future__ import annotations

import asyncio
from dataclasses import replace

from builders import free_graph, typed_graph
from tog_core.app.replay import replay
from tog_core.policy import depths
from tog_core.policy.cheap import CheapPolicy
from tog_core.scoring.hops import expected_hops
from tog_core.tog.engine import ToGEngine
from tog_core.tog.state import Callbacks, EngineConfig
from tog_core.tog.trace import Trace

# Ann -> Bob -> Carl -> Dover: each edge says one thing
CHAIN = [("Ann", "Bob", "Ann met Bob at the fair"), ("Bob", "Carl", "Bob sold the mill to Carl"),
         ("Carl", "Dover", "Carl moved to Dover")]
CHEAP = EngineConfig(relation_pruner="bm25", entity_pruner="bm25", depth=3)


def run(question: str, *, graph=None, policy=None, config=CHEAP):
    eng = ToGEngine(graph or free_graph(CHAIN), config=config, policy=policy or CheapPolicy())
    st = asyncio.run(depths.run(eng, question, seeds=["Ann"]))
    choice = eng.answer_choice(st)
    return eng, st, eng.graph.title(choice.entity) if choice else None


def test_the_fewest_hops_whose_chain_matches_the_most_question_words():
    q = "who did Ann see when she met someone at the fair during the long winter"
    assert expected_hops(q, ["Ann"]) == 4  # the wording reads four relations ("see", "met", "fair", "long winter")
    eng, st, answer = run(q)
    assert st.plan_record is not None and st.hops == 1 and st.plan_record.depth == 1 and not st.hops_firm
    assert [t["matched"] for t in st.plan_record.trials] == [["fair", "met"]] * 3  # deeper hops match nothing more
    assert answer == "Bob" and st.depth == 1 and st.stop_reason == "sufficient"
    assert st.steps[-1].verdict["by"] == "plan" and "1 hop" in st.steps[-1].verdict["reason"]
    # read from the wording, with no other stop, the same search walks on to Dover
    words = CheapPolicy(try_depths=False, stop_when_nothing_ahead=False, type_gate=False)
    _, st2, answer2 = run(q, policy=words)
    assert st2.plan_record is None and st2.hops is None and st2.depth == 3 and answer2 == "Dover"



def test_a_deeper_chain_that_matches_more_words_is_kept():
    eng, st, answer = run("who got the mill from the man Ann met at the fair")
    assert [len(t["matched"]) for t in st.plan_record.trials] == [2, 3, 3]  # met, fair; + mill; Dover adds nothing
    assert st.hops == 2 and answer == "Carl" and st.depth == 2
    # the run is the trial it chose: the same chains, step by step
    trial, best = asyncio.run(depths.trial(eng, st.question, st.seeds, 2))
    assert [(p.start, [h.ridx for h in p.hops]) for p in best] == [(p.start, [h.ridx for h in p.hops])
                                                                   for p in eng.best_paths(st)]


def test_the_plan_is_in_the_trace_and_a_replay_keeps_it_without_trying_again(monkeypatch):
    eng, st, _ = run("who got the mill from the man Ann met at the fair")
    tr = eng.trace(st).to_dict()
    assert tr["plan"]["depth"] == 2 and len(tr["plan"]["trials"]) == 3 and "2 hops" in tr["plan"]["reason"]
    assert tr["plan"]["chosen"] is False  # the search's own choice
    back = eng.restore(tr)
    assert (back.plan_record, back.hops, back.hops_firm) == (st.plan_record, 2, False)

    def no_trials(*_a, **_k):
        raise AssertionError("a replay must not try the depths again")

    monkeypatch.setattr(depths, "trial", no_trials)
    states = replay(eng, Trace.from_dict(tr), len(tr["steps"]))
    assert states[0].plan_record == st.plan_record and states[0].hops == 2 and states[-1].paths == st.paths


def test_no_plan_on_a_typed_graph_with_a_known_depth_or_with_an_llm_or_random_scorer():
    typed = typed_graph([("Jaws", "directed_by", "Spielberg"), ("Duel", "directed_by", "Spielberg")])
    eng = ToGEngine(typed, config=CHEAP, policy=CheapPolicy())
    assert asyncio.run(depths.run(eng, "who directed Jaws", seeds=["Jaws"])).hops is None  # typed: the wording
    q = "who got the mill from the man Ann met at the fair"
    assert run(q, config=replace(CHEAP, exact_depth=True))[1].hops is None  # the depth is known
    assert run(q, config=replace(CHEAP, relation_pruner="random", entity_pruner="random"))[1].hops is None
    assert run(q, config=replace(CHEAP, depth=1))[1].hops is None  # nothing to choose
    assert run(q, policy=CheapPolicy(try_depths=False))[1].hops is None


def test_no_plan_when_the_llm_judges_and_a_run_saved_before_planning_is_planned_on_resume():
    q = "who got the mill from the man Ann met at the fair"
    eng = ToGEngine(free_graph(CHAIN), config=CHEAP, policy=CheapPolicy(), llm=object())  # cheap pruners, LLM judge
    st = eng.start(q, seeds=["Ann"])
    assert asyncio.run(depths.settle(eng, st)) is st  # the paper's judge decides when to stop: nothing settled
    plain = ToGEngine(free_graph(CHAIN), config=CHEAP, policy=CheapPolicy())
    linked = asyncio.run(plain.start_async(q, seeds=["Ann"]))  # saved after linking, then stopped
    assert linked.hops is None
    assert asyncio.run(depths.run(plain, q, state=linked)).hops == 2  # resumed: settled before the first step


def test_a_person_who_searches_on_past_the_plan_gets_the_usual_rules():
    q = "who did Ann see when she met someone at the fair during the long winter"
    eng = ToGEngine(free_graph(CHAIN), config=CHEAP, policy=CheapPolicy())
    st = asyncio.run(depths.start(eng, q, seeds=["Ann"]))
    assert st.hops == 1
    while st.stage != "evaluate":
        st = eng.apply(st, asyncio.run(eng.propose(st)))
    prop = asyncio.run(eng.propose(st))
    assert prop.step.verdict["by"] == "plan" and prop.auto_choice() == {"sufficient"}
    st = eng.apply(st, prop, {"continue"})  # the person overrides: search one level deeper
    assert st.depth == 2 and eng.last_depth(st) == 3  # past the plan: the maximum
    while st.stage != "evaluate":
        st = eng.apply(st, asyncio.run(eng.propose(st)))
    assert asyncio.run(eng.propose(st)).step.verdict["by"] != "plan"


def test_the_progress_says_planning_only_when_the_hops_are_tried():
    def stages(eng, question, seed):
        seen = []
        asyncio.run(depths.run(eng, question, seeds=[seed],
                               callbacks=Callbacks(on_stage=lambda d, s: seen.append(s))))
        return seen

    free = ToGEngine(free_graph(CHAIN), config=CHEAP, policy=CheapPolicy())
    assert stages(free, "who got the mill from the man Ann met at the fair", "Ann")[:2] == ["planning", "relations"]
    typed = ToGEngine(typed_graph([("Jaws", "directed_by", "Spielberg")]), config=CHEAP, policy=CheapPolicy())
    assert "planning" not in stages(typed, "who directed Jaws", "Jaws")


def test_a_person_who_chooses_the_number_of_hops_gets_a_search_exactly_that_deep(monkeypatch):
    """The app's "Answer at N hops": the search the person asks for runs to exactly N hops (the policy keeps the plan
    it is given and tries nothing), with the earlier trials kept in the trace beside the person's choice."""
    from tog_core.app.runner import run_question

    q = "who did Ann see when she met someone at the fair during the long winter"
    eng, st, answer = run(q)
    assert st.hops == 1 and answer == "Bob"  # the search keeps 1 hop (as above)

    def no_trials(*_a, **_k):
        raise AssertionError("a chosen number of hops is not tried again")

    monkeypatch.setattr(depths, "trial", no_trials)
    tr = run_question(eng, q, seeds=["Ann"], hops=2, tried=[dict(t) for t in st.plan_record.trials]).to_dict()
    assert tr["plan"]["depth"] == 2 and "chosen by the person" in tr["plan"]["reason"] and tr["plan"]["chosen"]
    assert tr["plan"]["trials"] == [dict(t) for t in st.plan_record.trials]
    assert [len(c) for c in tr["chains"]] and all(len(c) == 2 for c in tr["chains"])
    assert tr["answer_entity"] == "Carl" and tr["stop_reason"] == "sufficient"  # stopped by the plan, not the maximum
    try:
        run_question(eng, q, seeds=["Ann"], hops=4)  # deeper than the maximum depth (3)
    except ValueError as err:
        assert "between 1 and the maximum depth (3)" in str(err)
    else:
        raise AssertionError("a number of hops past the maximum depth is refused")


def test_a_chosen_number_of_hops_is_refused_where_an_llm_judges_and_kept_when_a_run_is_resumed():
    from tog_core.tog.trace import DepthPlan

    q = "who did Ann see when she met someone at the fair during the long winter"
    judged = ToGEngine(free_graph(CHAIN), config=CHEAP, policy=CheapPolicy(), llm=object())  # cheap pruners, LLM judge
    for hops in (1, 2):
        try:
            asyncio.run(depths.start(judged, q, seeds=["Ann"], hops=hops))
        except ValueError as err:
            assert "the LLM decides how many hops" in str(err)
        else:
            raise AssertionError("the LLM judge would ignore the chosen number of hops: refused")
    local = ToGEngine(free_graph(CHAIN), config=replace(CHEAP, judge="coverage"), policy=CheapPolicy(), llm=object())
    assert asyncio.run(depths.start(local, q, seeds=["Ann"], hops=2)).hops_firm  # the coverage judge reads them

    eng = ToGEngine(free_graph(CHAIN), config=CHEAP, policy=CheapPolicy())
    st = asyncio.run(depths.start(eng, q, seeds=["Ann"], hops=2))
    st = eng.apply(st, asyncio.run(eng.propose(st)))  # one step, then the run is saved and stopped
    tr = eng.trace(st).to_dict()
    assert tr["plan"]["chosen"] is True
    done = asyncio.run(depths.run(eng, q, state=eng.restore(tr)))  # resumed: still exactly two hops
    assert done.hops_firm and done.plan_record.chosen and all(len(p.hops) == 2 for p in eng.best_paths(done))
    old = {k: v for k, v in tr["plan"].items() if k != "chosen"}  # a trace written before the flag existed
    assert DepthPlan.from_dict(old).chosen is False and DepthPlan.from_dict(old).depth == 2


def test_a_reading_given_is_the_searchs_and_the_caller_is_told_once_linked_before_the_hops_are_tried():
    """"Search again with this reading": the corrected reading is used as given (not read again) and recorded; the
    app saves the run when it is told the topic entities are linked, before the numbers of hops are tried."""
    q = "who got the mill from the man Ann met at the fair"
    eng = ToGEngine(free_graph(CHAIN), config=CHEAP, policy=CheapPolicy())
    mine = eng.start(q, seeds=["Ann"]).reading.edit(asked=["town"])
    told = []
    st = asyncio.run(depths.start(eng, q, seeds=["Ann"], reading=mine, on_linked=told.append))
    assert st.reading == mine and st.reading.edited == ("asked",) and st.hops == 2
    assert eng.trace(st).reading["asked"] == ["town"] and eng.trace(st).reading["edited"] == ["asked"]
    [linked] = told
    assert linked.hops is None and linked.plan_record is None and linked.reading == mine  # not yet planned
    deeper = mine.edit(hops=3)
    st = asyncio.run(depths.start(eng, q, seeds=["Ann"], hops=3, reading=deeper, on_linked=told.append))
    assert st.reading.edited == ("asked", "hops") and st.hops == 3 and st.plan_record.chosen
    assert told[-1] is st  # chosen by the person: nothing is tried after linking
