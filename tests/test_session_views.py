"""tog_core.app's views without Streamlit: the saved runs' rows, compare, the graph search, departures, the ways a
person dropped or stopped, the remembered sidebar values, a run saved under another automatic choice. The answer's
view (the supporting sentence, the answer box and its chain, the depth plan's rows, status lines):
test_answer_view.py. Helpers: test_session.py."""
from __future__ import annotations

from pathlib import Path

import pytest

from tog_core.app.runner import (
    explore_apply,
    explore_finish,
    explore_propose,
    explore_start,
)
from tog_core.app.session import Settings, remember_project, run_spec
from tog_core.app.views import candidate_rows, choice_from_rows
from tog_core.policy.cheap import CheapPolicy
from tog_core.tog.engine import ToGEngine
from tog_core.tog.trace import Trace


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("TOG_HOME", str(tmp_path))
    return tmp_path


# ---------------------------------------------------------------------------------------------- views

def test_run_rows_filter_by_project_and_search_and_list_runs_without_steps():
    from pathlib import Path

    from dataclasses import replace

    from tog_core.app.views import run_rows
    from tog_core.runs.files import RunSummary

    def summary(rid, project, question, answer="", steps=3):
        return RunSummary(run_id=rid, question=question, created_at="2026-01-01T00:00:00", project=project,
                          answer=answer, stop_reason=None, llm_calls=0, cost_usd=None, width=3, depth=3, pruner="x",
                          model="none", finished=bool(answer), parent_run=None, path=Path("."), steps=steps,
                          resumable=not answer)

    runs = [summary("1", "/p/demo", "Who founded Acme?", "Alice"), summary("2", "/p/demo", "Where is Acme?"),
            summary("3", "/q/other", "Who founded Acme?", "Alice"), summary("4", "/p/demo", "Stopped early?", steps=0)]
    rows = run_rows(runs, project="/p/demo")
    # a run without steps is listed too (stopped or left before its first step, a branch back to depth 1)
    assert [r["run"] for r in rows] == ["1", "2", "4"] and "project" not in rows[0]
    assert rows[1]["answer"] == "(unfinished: resume it)" and rows[1]["stop"] == "unfinished"
    failed = run_rows([replace(runs[3], stop_reason="error", resumable=False)])  # cannot be resumed: not offered
    assert (failed[0]["answer"], failed[0]["stop"]) == ("", "failed")
    done = run_rows([replace(runs[0], stop_reason="sufficient"), replace(runs[1], stop_reason="no_candidates")])
    assert [r["stop"] for r in done] == ["judged enough to answer", "nothing further to follow"]  # words
    assert [r["run"] for r in run_rows(runs, project="/p/demo", search="where")] == ["2"]
    every = run_rows(runs)
    assert [r["project"] for r in every] == ["demo", "demo", "other", "demo"]
    # a search reads the answer as the table shows it: an LLM-free answer's entity, not the candidates it lists after
    composed = ("[No LLM] This answer is composed from the reasoning chains.\nMost likely answer: Cairn River "
                "(confidence 0.41; a guess)\nOther candidates: Reedwind, Fenwater")
    listed = [summary("5", "/p/demo", "Which river?", composed), summary("6", "/p/demo", "Who?", "Alice met Reedwind.")]
    assert [r["run"] for r in run_rows(listed, search="reedwind")] == ["6"]  # an LLM's whole answer is read
    assert [r["run"] for r in run_rows(listed, search="cairn")] == ["5"]


def test_compare_defaults_to_the_parent_then_the_same_question():
    from tog_core.app.views import compare_default

    rows = [{"run": "3", "question": "q1", "branch of": ""}, {"run": "2", "question": "q2", "branch of": "1"},
            {"run": "1", "question": "q2", "branch of": ""}, {"run": "0", "question": "q1", "branch of": ""}]
    assert compare_default(rows, "2") == "1" and compare_default(rows, "3") == "0"
    assert compare_default(rows[:1] + rows[1:2], "3") == "2" and compare_default(rows[:1], "3") == "3"


def test_graph_search_has_no_match_for_nonsense_and_did_you_mean_offers_close_titles():
    from tog_core.app.views import did_you_mean, entity_matches
    from tog_core.graphrag.graph import KnowledgeGraph

    g = KnowledgeGraph.load(Path(__file__).resolve().parents[1] / "demo")
    assert entity_matches(g, "xyzzy") == []
    assert entity_matches(g, "Mara")[0][1] == "Mara Quell"
    alts = did_you_mean(g, "Who founded the Lanternwrite Guild?", ["Lanternwright Guild"])
    assert "Lanternwright Guild" not in alts


def test_departures_switched_off_in_the_sidebar_reach_the_engine_and_come_back_from_a_trace():
    from tog_core.app.session import settings_from_trace
    from tog_core.compose import DEPARTURES, plan

    p = plan(run_spec(Settings(model="none", without=("degree_filter", "cumulative_score"))), None)
    assert "degree_filter" not in p.config.departures() and not p.config.cumulative_score
    trace = {"config": {"departures": p.config.departures(), "mode": "faithful"}}
    assert set(settings_from_trace(trace, "demo").without) == {"degree_filter", "cumulative_score"}
    assert settings_from_trace({"config": {"departures": []}}, "demo").without == tuple(DEPARTURES)  # --paper
    assert settings_from_trace({"config": {}}, "demo").without == ()  # an older trace: the defaults


def test_a_way_a_person_dropped_is_not_an_answers_way_even_through_the_depth_trials():
    """Explore on the demo: the person drops the relation the search kept first. The depth trials (searched before
    the run) took that way too; the answer and every candidate come along other ways only (the finished run listed
    candidates reached through the dropped link)."""
    from tog_core.compose import RunSpec, build_engine
    from tog_core.graphrag.graph import KnowledgeGraph
    from tog_core.graphrag.project import open_project

    info = open_project(Path(__file__).resolve().parents[1] / "demo")
    eng = build_engine(RunSpec(model="none"), graph=KnowledgeGraph.load(info), info=info).engine
    question = "In which town was the founder of the Lanternwright Guild born?"
    auto = explore_start(eng, Settings(), question, ["Lanternwright Guild"])
    explore_finish(eng, auto, None, auto=True)
    auto_trace = eng.trace(auto.state).to_dict()
    ex = explore_start(eng, Settings(), question, ["Lanternwright Guild"])
    explore_propose(eng, ex)
    rows = candidate_rows(ex.proposal)
    top = max(rows, key=lambda r: r["score"])
    [cand] = [c for c in ex.proposal.step.candidates if c.id == top["id"]]
    dropped = set(cand.relationship_ids)

    def first_hops(trace: dict) -> set[str]:
        return {c["chain"][0]["relationship_id"] for c in trace["candidates"] if c.get("chain")}
    assert first_hops(auto_trace) & dropped  # left alone, candidates come that way
    for r in rows:
        r["keep"] = r is not top
    explore_apply(eng, ex, choice_from_rows(rows), None)
    explore_finish(eng, ex, None, auto=True)
    trace = eng.trace(ex.state).to_dict()
    assert trace["candidates"] and not first_hops(trace) & dropped
    assert all(lk["relationship_id"] not in dropped for c in trace["chains"] for lk in c[:1])
    # a trace written before overrides were recorded (kept differing from auto_kept) reads the same drops
    from dataclasses import replace

    from tog_core.policy.answers import person_dropped
    bare = ex.state.with_(steps=tuple(replace(s, overrides=[]) for s in ex.state.steps))
    assert person_dropped(bare) == person_dropped(ex.state) and person_dropped(ex.state)
    # a replay of the run (force it in, back to depth, a reopened run) starts with the same searches before the run
    from tog_core.app.replay import replay
    saved = eng.trace(ex.state)
    assert replay(eng, saved, 1)[0].other_searches == ex.states[0].other_searches != ()
    old = Trace.from_dict({**saved.to_dict(), "state": None})  # written before resume states: replayed all the same
    assert len(replay(eng, old, 2)) == 3


def test_a_person_who_says_the_chains_are_enough_gets_an_answer_from_those_chains():
    """Explore on the demo, a two-hop question: at depth 1 the person chooses "the chains are enough: answer now"
    against the automatic "search deeper". The answer and every candidate come from the run's one-hop chains, not
    from the depth trials searched before the run (it answered along a two-hop trial chain) nor from entities found
    off the chains."""
    from tog_core.compose import RunSpec, build_engine
    from tog_core.graphrag.graph import KnowledgeGraph
    from tog_core.graphrag.project import open_project
    from tog_core.app.runner import explore_finish
    from tog_core.policy.answers import person_stopped

    info = open_project(Path(__file__).resolve().parents[1] / "demo")
    eng = build_engine(RunSpec(model="none"), graph=KnowledgeGraph.load(info), info=info).engine
    question = "In which town was the mentor of Teodor Ashgrove born?"
    ex = explore_start(eng, Settings(), question, None)
    assert ex.state.other_searches  # the depth trials were searched before the run
    while True:
        explore_propose(eng, ex)
        if ex.proposal.step.stage == "evaluate":
            break
        explore_apply(eng, ex, None, None)
    assert ex.state.depth == 1 and not any(c.auto_kept for c in ex.proposal.step.candidates if c.id == "sufficient")
    run_titles = {eng.graph.title(p.hops[-1].dst) for p in ex.state.paths}
    explore_apply(eng, ex, {"sufficient"}, None)
    assert ex.state.stage == "done" and person_stopped(ex.state)
    trace = eng.trace(ex.state).to_dict()
    assert trace["answer_entity"] in run_titles
    assert trace["candidates"] and all(len(c["chain"]) == 1 for c in trace["candidates"])
    assert {c["title"] for c in trace["candidates"]} <= run_titles
    # left alone, the same run answers from deeper (trial or own) chains: the person's choice made the difference
    auto = explore_start(eng, Settings(), question, None)
    explore_finish(eng, auto, None, auto=True)
    assert not person_stopped(auto.state)
    assert any(len(c["chain"]) > 1 for c in eng.trace(auto.state).to_dict()["candidates"])


def test_remembered_sidebar_values_are_checked_and_never_hold_a_key(home):
    from tog_core.app.session import K, remember_settings, remembered_settings, usable_settings

    good = {K.MODEL: "ollama/llama3.1", K.API_BASE: "http://127.0.0.1:11434", K.WIDTH: 5, K.DEPTH: 2,
            K.REL_PRUNER: "bm25", K.ENT_PRUNER: "embedding", K.T_EXPLORE: 0.3, K.T_REASON: 0.0, K.MODE: "fast",
            K.WITHOUT: ["degree_filter"]}
    remember_settings({**good, K.API_KEY: "sk-secret-0123456789", K.PROJECT_INPUT: "/somewhere"})
    written = (home / "sidebar.json").read_text()
    assert "sk-secret" not in written and "/somewhere" not in written
    assert remembered_settings() == good
    bad = {K.WIDTH: 99, K.DEPTH: True, K.REL_PRUNER: "magic", K.MODE: None, K.T_EXPLORE: 7, K.WITHOUT: ["nope"],
           K.MODEL: "x\n" * 3, K.API_BASE: "https://user:pw@proxy.example/v1"}
    assert usable_settings(bad) == {}  # each outside what its widget accepts, or a base with credentials
    assert usable_settings({K.API_BASE: "https://proxy.example/v1?token=abc"}) == {}
    assert usable_settings({K.API_BASE: "https://gw.example/v1/sk-live-0123456789abc"}) == {}  # a key in the path
    assert usable_settings({K.MODEL: "openai/sk-0123456789abcdef"}) == {}
    assert usable_settings("not a dict") == {} and usable_settings([1]) == {}
    (home / "sidebar.json").write_text("{broken")
    assert remembered_settings() == {}
    (home / "sidebar.json").unlink()
    (home / "sidebar.json").mkdir()  # TOG_HOME not writable there: nothing kept, no crash
    assert remember_settings({K.WIDTH: 4}) is False and remembered_settings() == {}

    (home / "recent.json").mkdir()
    assert remember_project("/a/project") == ["/a/project"]  # kept in the session, not on disk, no crash


def test_a_run_saved_under_another_automatic_choice_replays_with_its_own_history(monkeypatch):
    """A run saved before the search changed (here: without chain_fusion) and reopened today: the steps replay as
    recorded, and a choice today's search would make differently is not written down as a person's override."""
    from builders import free_graph
    from searchkit import _ChainReader, run
    from tog_core.app.replay import replay
    from tog_core.policy import ranking
    from tog_core.policy.answers import person_dropped

    monkeypatch.setattr(ranking, "ranking_embedder",
                        lambda: _ChainReader({"Xavier": 0.5, "Wes": 0.6, "Vic": 0.7, "Uma": 0.65}))
    g = free_graph([("Ann", "Xavier", "Ann visited Xavier in the village"),
                    ("Bea", "Wes", "Bea visited Wes in the village"), ("Cal", "Vic", "Cal visited Vic in the village"),
                    ("Dan", "Uma", "Dan visited Uma in the village")])
    q, seeds = "Whom did Ann, Bea, Cal and Dan visit in the village?", ["Ann", "Bea", "Cal", "Dan"]
    old_eng, old_st = run(g, q, seeds, depth=1, width=2, policy=CheapPolicy(chain_fusion=False))
    saved = old_eng.trace(old_st)
    assert not any(s.overrides for s in saved.steps)
    today = ToGEngine(g, config=old_eng.config, policy=CheapPolicy())
    fresh = run(g, q, seeds, depth=1, width=2)[1]  # today's search keeps other entities: the choice differs
    assert {c.target for c in fresh.steps[1].candidates if c.kept} != \
        {c.target for c in saved.steps[1].candidates if c.kept}
    states = replay(today, saved, len(saved.steps))
    assert not any(s.overrides for s in states[-1].steps) and not person_dropped(states[-1])
    assert [[c.kept for c in s.candidates] for s in states[-1].steps] == [[c.kept for c in s.candidates]
                                                                          for s in saved.steps]
    # a person's own override in the saved run stays one
    ent = saved.steps[1]
    dropped = next(c for c in ent.candidates if c.kept)
    dropped.kept = False
    states = replay(today, saved, len(saved.steps))
    assert [(o["label"], o["auto_kept"], o["kept"]) for o in states[-1].steps[1].overrides] == \
        [(dropped.label, True, False)]
