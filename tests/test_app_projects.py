"""AppTests of projects as a person tells them apart (#22 items 1 and 8): a run opens on its own project, projects are
named by their folder, switching project clears the answer, a bogus store is said once."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from builders import write_project
from streamlit.testing.v1 import AppTest

from appkit import APP, QUESTION, ROOT, ask, texts
from tog_core.app.session import K

ENTITIES = [("Harbor Lamp", "a lamp"), ("Wick Fenn", "a keeper"), ("Gull Rock", "an island")]
EDGES = [("Wick Fenn", "Harbor Lamp", "Wick Fenn keeps the Harbor Lamp"),
         ("Harbor Lamp", "Gull Rock", "the Harbor Lamp stands on Gull Rock")]


@pytest.fixture(autouse=True)
def home(app_home):
    return app_home


def _lighthouse_run(tmp_path: Path) -> tuple[str, str]:
    """A run saved on another project (a folder 'lighthouse' with its tables in lighthouse/output)."""
    from tog_core.app.runner import run_question
    from tog_core.compose import RunSpec, build_engine
    from tog_core.graphrag.graph import KnowledgeGraph
    from tog_core.graphrag.project import open_project
    from tog_core.runs.files import RunStore

    out = str((write_project(tmp_path / "lighthouse", ENTITIES, EDGES) / "output").resolve())
    info = open_project(out)
    engine = build_engine(RunSpec(model="none"), graph=KnowledgeGraph.load(info), info=info).engine
    t = run_question(engine, "Who keeps the Harbor Lamp?", store=RunStore())
    return t.run_id, out


def _sidebar(at: AppTest) -> str:
    return " ".join(c.value for c in at.sidebar.caption)


def test_a_run_of_another_project_opens_that_project(tmp_path):
    rid, out = _lighthouse_run(tmp_path)
    at = AppTest.from_file(APP, default_timeout=90)  # a new session (F5, a shared link): the app starts on the demo
    at.query_params["run"] = rid
    at.run()
    assert not at.exception, at.exception
    assert at.session_state[K.PROJECT_OK] == out
    assert "lighthouse" in _sidebar(at) and "3 entities" in _sidebar(at) and "312 entities" not in _sidebar(at)
    assert at.session_state[K.ASK_TRACE].run_id == rid
    assert "### Wick Fenn" in [m.value for m in at.markdown]
    assert at.query_params["project"] in (out, [out])


def test_a_run_whose_project_is_refused_is_not_shown_against_the_demo(tmp_path, monkeypatch):
    rid, out = _lighthouse_run(tmp_path)
    monkeypatch.setenv("TOG_PROJECT_ROOTS", str(ROOT / "demo"))  # the operator allows the demo only
    at = AppTest.from_file(APP, default_timeout=90)
    at.query_params["run"] = rid
    at.query_params["project"] = out
    at.run()
    assert not at.exception, at.exception
    assert "outside the folders this server opens projects from" in at.sidebar.error[0].value
    assert K.ASK_TRACE not in at.session_state and "Wick Fenn" not in texts(at)
    # the run alone in the address: the demo opens, the run is refused
    at = AppTest.from_file(APP, default_timeout=90)
    at.query_params["run"] = rid
    at.run()
    assert not at.exception, at.exception
    assert any("made on the project lighthouse, which cannot be opened here" in e.value for e in at.error)
    assert K.ASK_TRACE not in at.session_state and "### Wick Fenn" not in [m.value for m in at.markdown]


def test_projects_are_named_by_the_folder_above_output(tmp_path):
    from tog_core.app.session import project_label

    assert project_label("/data/christmas-carol-v3/output") == "christmas-carol-v3"
    assert project_label("/data/old/output/20240101-120000/artifacts/") == "old"
    assert project_label(ROOT / "demo") == "demo"
    rid, out = _lighthouse_run(tmp_path)
    at = AppTest.from_file(APP, default_timeout=90)
    at.session_state[K.PROJECT_INPUT] = out
    at.run()
    assert "**lighthouse** · GraphRAG" in _sidebar(at)
    at.session_state[K.RUNS_ALL] = True
    at.switch_page("pages/runs.py").run()
    assert not at.exception, at.exception
    assert list(at.dataframe[0].value["project"]) == ["lighthouse"]


def test_switching_project_takes_the_answer_away(tmp_path):
    _, out = _lighthouse_run(tmp_path)
    at = AppTest.from_file(APP, default_timeout=90)
    at.run()
    at = ask(at, QUESTION)
    assert "### Tarnby" in [m.value for m in at.markdown]
    at.session_state[K.PROJECT_OK] = out  # what the sidebar sets once the other project loaded
    at.session_state[K.PROJECT_INPUT] = out
    at.run()
    assert not at.exception, at.exception
    assert "### Tarnby" not in [m.value for m in at.markdown] and K.ASK_TRACE not in at.session_state
    assert "run" not in at.query_params


def test_a_bogus_store_is_said_once_and_the_same_in_the_sidebar_and_the_page():
    at = AppTest.from_file(APP, default_timeout=90)
    at.run()
    at.session_state[K.STORE] = "postgresql://nobody@127.0.0.1:1/none"  # nothing listens on port 1
    at.run()
    assert not at.exception, at.exception
    [side] = [e.value for e in at.sidebar.error]
    [main] = [e.value for e in at.main.error]
    assert side == main and side.startswith("Cannot open this project:") and "cannot connect" in side
    assert "--store" not in side.replace("\\", "") and "the PostgreSQL store" in side  # the app has no flags
    assert "Still using the previous project." not in _sidebar(at)  # the demo cannot be read from that store either
