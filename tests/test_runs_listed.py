"""Saved runs lists every run a person made (a newcomer's review): a branch made with Explore's "Back to depth 1"
(no step taken over), a step-by-step run before its first Continue, a run stopped before its first step. None is
"abandoned" and hidden; each can be opened, resumed and compared. And a stopped run's last save, coming after Stop
answered the run, never makes a second run of it.
"""
from __future__ import annotations

import threading

import pytest
from appkit import APP, CORIN, QUESTION, app, click, texts
from runkit import Interrupted, busy_until, demo_engine
from streamlit.testing.v1 import AppTest

from tog_core.app import runner as R
from tog_core.app.session import K
from tog_core.app.views import run_rows
from tog_core.runs.files import RunStore


@pytest.fixture(autouse=True)
def home(app_home):
    return app_home


def explore(at: AppTest) -> AppTest:
    at.switch_page("pages/explore.py").run()
    at.text_input(key=K.EXPLORE_QUESTION).set_value(QUESTION).run()
    return click(at, "Start")


def test_a_branch_back_to_depth_1_is_listed_at_once_and_can_be_compared():
    at = explore(app(**{K.MODEL: "none", K.REL_PRUNER: "bm25", K.ENT_PRUNER: "bm25"}))
    first = at.session_state[K.EXPLORE].run_id
    for _ in range(3):  # depth 1: relations, entities, evaluate; then depth 2 is offered
        at = click(at, "Continue")
    assert not at.exception, at.exception
    assert "Depth 2 · " in texts(at), texts(at)
    assert at.session_state[K.EXPLORE].back_depths()[0] == 1
    at.selectbox(key=K.EXPLORE_BACK).set_value(1)
    at = click(at, "Re-run from there")
    assert not at.exception, at.exception
    branch = at.session_state[K.EXPLORE]
    assert branch.parent_run == first and branch.branched_at == 0 and branch.run_id != first
    saved = RunStore().load(branch.run_id)
    assert (saved.parent_run, saved.branched_at, saved.steps) == (first, 0, [])  # back to the start: no step kept

    at.switch_page("pages/runs.py").run()
    assert not at.exception, at.exception
    listed = at.dataframe[0].value
    assert list(listed["branch of"]).count(first) == 1 and len(listed) == 2
    mine = listed[listed["branch of"] == first].iloc[0]
    assert mine["answer"] == "(unfinished: resume it)" and mine["stop"] == "unfinished"
    at.selectbox(key=K.RUNS_OPEN).set_value(branch.run_id).run()  # it opens (a run not offered cannot be set)
    assert not at.exception, at.exception
    assert f"branch of {first}" in texts(at)
    at.session_state[K.RUNS_TAB] = "Compare two runs"
    at.run()
    assert not at.exception, at.exception
    # Compare opens on the two runs of the question (the branch and its run) and can be set to the branch
    assert {at.session_state[K.RUNS_A], at.session_state[K.RUNS_B]} == {branch.run_id, first}
    at.selectbox(key=K.RUNS_A).set_value(branch.run_id).run()
    assert not at.exception, at.exception
    assert at.session_state[K.RUNS_B] == first  # Compare brings the run it branched from


def test_a_step_by_step_run_before_its_first_continue_is_listed():
    at = explore(app(**{K.MODEL: "none", K.REL_PRUNER: "bm25", K.ENT_PRUNER: "bm25"}))
    rid = at.session_state[K.EXPLORE].run_id
    [row] = run_rows(RunStore().list())
    assert row["run"] == rid and row["answer"] == "(unfinished: resume it)"
    again = AppTest.from_file(APP, default_timeout=90)
    again.run()
    again.switch_page("pages/runs.py").run()
    assert not again.exception, again.exception
    assert list(again.dataframe[0].value["question"]) == [QUESTION]


def test_the_stopped_runs_last_save_after_stop_answered_it_makes_no_second_run(monkeypatch):
    """Stop's page run answers the run while the stopped run still ends (here without waiting for it): the stopped
    run's last save finds the run saved meanwhile and leaves it as Stop saved it, instead of saving a new run."""
    linked, answered = threading.Event(), threading.Event()
    rid = "20260101-000000-stop02"

    tick = busy_until(monkeypatch, linked, answered)

    raised: list[BaseException] = []

    def stopped_run() -> None:
        try:
            R.run_question(demo_engine(), CORIN, R.RunCallbacks(on_tick=tick), store=RunStore(), run_id=rid)
        except BaseException as err:  # noqa: BLE001 - checked below
            raised.append(err)

    th = threading.Thread(target=stopped_run)
    th.start()
    assert linked.wait(60)
    shown = R.finish_stopped(demo_engine(), RunStore().load(rid), RunStore())
    answered.set()
    th.join(60)
    assert [type(e) for e in raised] == [Interrupted]
    assert [r.run_id for r in RunStore().list()] == [rid]
    saved = RunStore().load(rid)
    assert saved.stop_reason == "user" and saved.answer == shown.answer and saved.stats == shown.stats
