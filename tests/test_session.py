"""tog_core.app (session, runner, views) without Streamlit: saving during a run, stopping, branching, recent projects, escaping."""
from __future__ import annotations

import pytest

from test_engine import make_graph
from tog_core.policy.cheap import CheapPolicy
from tog_core.tog.engine import ToGEngine
from tog_core.runs.files import RunStore
from tog_core.app.runner import (Exploration, explore_apply, explore_back, explore_finish, explore_propose,
                                 explore_start, run_question)
from tog_core.app.session import Settings, parse_app_args, recent_projects, remember_project, run_spec
from tog_core.app.views import answer_start, candidate_rows, choice_from_rows, md_text
from tog_core.tog.state import EngineConfig

Q = "Where was the founder of Acme born?"


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("TOG_HOME", str(tmp_path))
    return tmp_path


def engine(**kw) -> ToGEngine:
    cfg = EngineConfig(width=2, depth=3, relation_pruner="bm25", entity_pruner="bm25", **kw)
    return ToGEngine(make_graph(), config=cfg, policy=CheapPolicy())


def test_run_question_saves_after_every_step():
    store, saved = RunStore(), []
    orig = store.save
    store.save = lambda tr: (saved.append(len(tr.steps)), orig(tr))[1]
    tr = run_question(engine(), Q, seeds=["Acme"], store=store)
    assert "Paris" in tr.answer and saved == sorted(saved) and saved[0] == 0  # saved once linked: a reload finds it
    assert len(saved) == len(tr.steps) + 3  # the start, every step, the answer, and the final trace
    assert store.load(tr.run_id).answer == tr.answer


class Stop(BaseException):
    """Stands in for Streamlit's StopException (a BaseException raised inside a callback)."""


def test_a_stopped_run_keeps_what_was_done():
    store = RunStore()

    def on_stage(depth, stage):
        if depth == 2:
            raise Stop()

    with pytest.raises(Stop):
        run_question(engine(), Q, seeds=["Acme"], store=store, on_stage=on_stage)
    [r] = store.list()
    t = store.load(r.run_id)
    assert [s.depth for s in t.steps] == [1, 1, 1] and not t.answer and t.state["depth"] == 2


def test_a_failure_mid_run_is_recorded_not_raised():
    store = RunStore()
    eng = engine()

    def boom(*_a, **_k):
        raise RuntimeError("scorer exploded")

    eng.entity_scorer.score = boom
    tr = run_question(eng, Q, seeds=["Acme"], store=store)
    assert tr.stop_reason == "error" and "scorer exploded" in tr.error
    assert store.load(tr.run_id).stop_reason == "error"
    with pytest.raises(ValueError):
        run_question(eng, "   ", store=store)  # bad input before any step: raised for the page to show


def test_explore_override_then_branch_keeps_the_old_run():
    store, eng = RunStore(), engine()
    ex = explore_start(eng, Settings(), Q, ["Acme"])
    explore_apply(eng, explore_propose(eng, ex), None, store)  # relations as proposed
    explore_propose(eng, ex)
    rows = candidate_rows(ex.proposal)
    assert all(r["keep"] == (r["id"] in ex.proposal.auto_choice()) for r in rows)
    top = max(rows, key=lambda r: r["score"])
    for r in rows:
        r["keep"] = r is not top
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


def test_stop_and_answer_from_an_exploration():
    store, eng = RunStore(), engine()
    ex = explore_start(eng, Settings(), Q, ["Acme"])
    explore_finish(eng, ex, store, auto=False)
    assert ex.state.stop_reason == "user" and ex.state.done
    assert isinstance(ex, Exploration) and store.load(ex.run_id).stop_reason == "user"


def test_the_app_plans_like_the_cli_an_llm_pruner_without_a_model_is_an_error():
    from tog_core.compose import plan
    from tog_core.errors import UsageError

    with pytest.raises(UsageError, match="needs a model"):
        plan(run_spec(Settings(model="none", relation_pruner="llm", entity_pruner="embedding")), None)
    p = plan(run_spec(Settings(model="openai/x", width=2, depth=4)), None)
    assert (p.config.width, p.config.depth, p.config.relation_pruner, p.config.model, p.policy) == \
        (2, 4, "llm", "openai/x", "faithful")


def test_recent_projects_newest_first_without_duplicates(home):
    assert recent_projects() == []
    remember_project("/a")
    remember_project("/b")
    assert remember_project("/a") == ["/a", "/b"]
    for i in range(12):
        remember_project(f"/p{i}")
    assert len(recent_projects()) == 8 and recent_projects()[0] == "/p11"
    (home / "recent.json").write_text("{not json")
    assert recent_projects() == []


def test_md_text_makes_data_inert():
    s = md_text("**bold** [x](https://evil.example) <b>hi</b> # h\n- item")
    assert "\\*\\*bold\\*\\*" in s and "\\[x\\]\\(https\\:\u200b//evil\\.example\\)" in s
    assert "\\<b\\>" in s and s.count("  \n") == 1 and "\\- item" in s


def test_app_args_and_answer_start():
    assert parse_app_args(["--project", "demo"]) == {"project": "demo"}
    assert parse_app_args(["--project=/x/y"]) == {"project": "/x/y"}
    assert parse_app_args([]) == {}
    assert answer_start("[No LLM] This answer is composed.\nMost likely answer: Paris") == \
        "[No LLM] Most likely answer: Paris"
