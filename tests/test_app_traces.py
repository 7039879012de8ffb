"""#20 item 5 (the UI part): the Ask page keeps a Trace in session state and reads its attributes; a trace saved
by an old version (a JSON dict without plan, state or stats, its project named relatively) still opens on the
Ask page from the address and on Saved runs."""
from __future__ import annotations

import json
import os

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from streamlit.testing.v1 import AppTest

from appkit import APP, QUESTION, app, ask, texts
from tog_core.app.session import K
from tog_core.tog.trace import Trace

OLD_ID = "20240102-030405-abc123"
OLD = {  # as an early version saved it: no plan, state, stats, created_at, answer_entity …
    "version": 1, "question": "Who founded the Lanternwright Guild?", "project": "demo",
    "config": {"model": "none", "width": 3, "depth": 3},
    "seeds": [{"id": "e1", "title": "Lanternwright Guild", "how": "exact"}],
    "steps": [],
    "chains": [[{"source": "Lanternwright Guild", "source_id": "x1", "relation": "founded by",
                 "target": "Mara Quell", "target_id": "x2", "relationship_id": "r1"}]],
    "answer": "Mara Quell", "answer_by": "chains", "stop_reason": "sufficient", "run_id": OLD_ID,
}


def opened(home, trace: dict) -> AppTest:
    """A new session whose address names the run `trace` (a JSON dict written into the run store as it is)."""
    (home / "runs").mkdir(parents=True, exist_ok=True)
    (home / "runs" / f"{trace['run_id']}.json").write_text(json.dumps(trace), encoding="utf-8")
    at = AppTest.from_file(APP, default_timeout=90)
    at.query_params["run"] = trace["run_id"]
    at.run()
    assert not at.exception, at.exception
    return at


@pytest.fixture(autouse=True)
def home(app_home):
    return app_home


def test_the_ask_page_keeps_a_trace_object():
    at = ask(app(**{K.MODEL: "none"}), QUESTION)
    t = at.session_state[K.ASK_TRACE]
    assert isinstance(t, Trace) and t.answer_entity and t.question == QUESTION
    assert at.query_params["run"] in (t.run_id, [t.run_id])


def test_an_old_trace_opens_on_the_ask_page_and_on_saved_runs(home):
    at = opened(home, OLD)
    t = at.session_state[K.ASK_TRACE]
    assert isinstance(t, Trace) and t.run_id == OLD_ID
    assert "### Mara Quell" in [m.value for m in at.markdown]
    at.session_state[K.RUNS_OPEN] = OLD_ID
    at.switch_page("pages/runs.py").run()
    assert not at.exception, at.exception
    seen = texts(at)
    assert "Who founded the Lanternwright Guild?" in seen and "stopped: judged enough to answer" in seen


def test_an_answer_part_way_along_its_chain_says_how_deep_the_search_went(home):
    """A run whose answer stands one hop along a two-hop chain (as a forced or a ranked answer may): the hops block
    says the search went 2 hops deep and the answer is 1 hop along (was checked only in Chromium)."""
    run_id = "20240102-030405-def456"
    link2 = {"source": "Mara Quell", "source_id": "x2", "relation": "born in", "target": "Tarnby",
             "target_id": "x3", "relationship_id": "r2"}
    trace = {**OLD, "run_id": run_id, "answer_entity": "Mara Quell", "chains": [OLD["chains"][0] + [link2]],
             "plan": {"depth": 2, "trials": [{"depth": 1, "matched": ["found"], "end": "Mara Quell"},
                                             {"depth": 2, "matched": ["found"], "end": "Tarnby"}]}}
    at = opened(home, trace)
    assert "### Mara Quell" in [m.value for m in at.markdown]
    assert "The search went 2 hops deep; the answer is 1 hop along its chain" in texts(at)
