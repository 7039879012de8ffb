"""tog_core.app's explorations without Streamlit (runner, force, replay): an override then a branch keeps the old
run, an exploration stepped to its end is saved with its answer, its clock stops at its last step, Stop & answer, a
run keeps the time it began through steps, branches and reopening, forcing an expected entity in, and a replay
refusing a run the search no longer offers. The question and engine: test_session.py."""
from __future__ import annotations

import pytest
from builders import make_graph
from searchkit import Q, engine

from tog_core.app.runner import Exploration, explore_apply, explore_back, explore_finish, explore_propose
from tog_core.app.runner import explore_start, run_question
from tog_core.app.session import Settings
from tog_core.app.views import candidate_rows, choice_from_rows
from tog_core.policy.cheap import CheapPolicy
from tog_core.runs.files import RunStore
from tog_core.tog.engine import ToGEngine
from tog_core.tog.state import EngineConfig


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("TOG_HOME", str(tmp_path))
    return tmp_path


def test_explore_override_then_branch_keeps_the_old_run():
    store, eng = RunStore(), engine()
    ex = explore_start(eng, Settings(), Q, ["Acme"])
    explore_apply(eng, explore_propose(eng, ex), None, store)  # relations as proposed
    explore_propose(eng, ex)
    rows = candidate_rows(ex.proposal)
    assert all(r["keep"] == (r["id"] in ex.proposal.auto_choice()) for r in rows)
    top = max(rows, key=lambda r: r["score"])
    top["keep"] = False  # the person drops the best-scored candidate, and changes nothing else
    explore_apply(eng, ex, choice_from_rows(rows), store)
    first = store.load(ex.run_id)
    assert [o["id"] for s in first.steps for o in s.overrides] == [top["id"]]
    assert ex.back_depths() == [1]
    new = explore_back(eng, ex, 1, store)
    assert new.parent_run == ex.run_id and new.branched_at == 0 and len(new.states) == 1
    explore_finish(eng, new, store, auto=True)
    assert new.state.done and "Paris" in new.state.answer
    runs = {r.run_id: r for r in store.list()}
    assert runs[ex.run_id].parent_run is None and runs[new.run_id].parent_run == ex.run_id
    assert len(store.load(ex.run_id).steps) == 2  # the old branch is as it was
    with pytest.raises(ValueError):
        explore_back(eng, new, 7, store)


def test_an_exploration_stepped_to_its_end_is_saved_with_its_answer_not_as_unfinished():
    from tog_core.app.runner import is_unfinished

    store, eng = RunStore(), engine()
    ex = explore_start(eng, Settings(), Q, ["Acme"])
    while not ex.state.done:  # Continue, Continue, ... with the automatic choice
        explore_apply(eng, explore_propose(eng, ex), None, store)
    saved = store.load(ex.run_id)
    assert ex.state.stage == "done" and "Paris" in saved.answer and saved.answer == ex.state.answer
    assert not is_unfinished(saved) and saved.stop_reason in ("sufficient", "max_depth")
    [row] = [r for r in store.list() if r.run_id == ex.run_id]
    assert row.answer == saved.answer  # the saved runs list reads it finished
    first_step = store.load(ex.run_id)
    ex.started -= 30.0  # half a minute more of a person's thinking: the run's clock counts from its start
    ex.saver(eng, store).save(ex.state)
    assert store.load(ex.run_id).stats["wall_s"] >= 30.0 > first_step.stats["wall_s"]


def test_a_finished_explorations_clock_stops_at_its_last_step():
    """A reviewer saw a finished run's time grow on screen with every click (20.9 s, 27.9 s, 36.1 s): once done, the
    run's time is the one saved with its answer, on the page and reopened."""
    import time

    from tog_core.app.runner import explore_from_trace

    store, eng = RunStore(), engine()
    ex = explore_start(eng, Settings(), Q, ["Acme"])
    time.sleep(0.05)
    explore_finish(eng, ex, store, auto=True)
    assert ex.state.done
    saved = store.load(ex.run_id).stats["wall_s"]
    first = ex.saver(eng, None).trace(ex.state).stats["wall_s"]
    time.sleep(0.3)  # the page drawn again later
    assert ex.saver(eng, None).trace(ex.state).stats["wall_s"] == first >= 0.05
    assert abs(first - saved) < 0.05
    reopened = explore_from_trace(eng, Settings(), store.load(ex.run_id))
    time.sleep(0.2)
    assert reopened.saver(eng, None).trace(reopened.state).stats["wall_s"] == saved


def test_stop_and_answer_from_an_exploration():
    store, eng = RunStore(), engine()
    ex = explore_start(eng, Settings(), Q, ["Acme"])
    explore_finish(eng, ex, store, auto=False)
    assert ex.state.stop_reason == "user" and ex.state.done
    assert isinstance(ex, Exploration) and store.load(ex.run_id).stop_reason == "user"


def test_force_in_follows_the_route_to_the_expected_entity(home):
    from tog_core.app.force import force_in
    from tog_core.tog.diagnosis import diagnose

    eng = ToGEngine(make_graph(), config=EngineConfig(width=1, depth=2, relation_pruner="bm25",
                                                      entity_pruner="bm25"), policy=CheapPolicy())
    run = run_question(eng, Q, seeds=["Acme"], store=RunStore())
    tr = run.to_dict()
    [d] = diagnose(tr, ["Lyon"], eng.graph)  # Bob's birthplace: width 1 keeps only Alice's path
    assert not d["in_final_beam"] and d["force"]
    ex = force_in(eng, Settings(), run, d["force"], RunStore())
    after = ex.saver(eng, None).trace(ex.state).to_dict()
    assert diagnose(after, ["Lyon"], eng.graph)[0]["in_final_beam"]
    assert after["parent_run"] == tr["run_id"] and after["answer"]
    assert any(o["kept"] and not o["auto_kept"] for s in after["steps"] for o in s["overrides"])
    assert RunStore().load(ex.run_id).parent_run == tr["run_id"]
    waiting = force_in(eng, Settings(), run, d["force"], None, follow=False)  # Explore: waits once Lyon is kept
    assert not waiting.state.done and waiting.state.stage == "evaluate" and "Lyon is in the beam now" in waiting.forced


def test_replay_refuses_a_run_the_search_no_longer_offers(home):
    from tog_core.app.replay import replay

    tr = run_question(engine(), Q, seeds=["Acme"])
    assert len(replay(engine(), tr, len(tr.steps))) == len(tr.steps) + 1
    first = tr.steps[0].candidates[0]
    first.id, first.kept = "p0|>|something else|999", True
    with pytest.raises(ValueError, match="no longer offers"):
        replay(engine(), tr, 1)


def test_a_run_keeps_the_time_it_began_through_steps_branches_and_reopening(monkeypatch):
    """A reviewer saw Saved runs' time move on resume and branching (10:08:49, then 10:18:15 for the parent): each
    save now keeps the time the run began."""
    from tog_core.app import runner
    from tog_core.app.runner import explore_back, explore_from_trace
    from tog_core.runs import saving

    clock = iter(f"2026-01-01T10:{m:02d}:00" for m in range(60))
    monkeypatch.setattr(saving, "now_iso", lambda: next(clock))
    monkeypatch.setattr(runner, "now_iso", lambda: next(clock))
    store, eng = RunStore(), engine()
    ex = explore_start(eng, Settings(), Q, ["Acme"])
    began = ex.created_at
    ex.saver(eng, store).save(ex.state)
    while not ex.state.done and ex.state.depth < 2:
        explore_apply(eng, explore_propose(eng, ex), None, store)
    assert store.load(ex.run_id).created_at == began  # every step's save kept it
    new = explore_back(eng, ex, 1, store)
    assert store.load(ex.run_id).created_at == began  # the parent, saved again as it stands
    assert new.created_at > began and store.load(new.run_id).created_at == new.created_at  # the branch is new
    reopened = explore_from_trace(eng, Settings(), store.load(ex.run_id))
    reopened.saver(eng, store).save(reopened.state)
    assert store.load(ex.run_id).created_at == began
