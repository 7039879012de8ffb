"""A saved run made on another project, opened under Saved runs with "All projects" on, resumed on the Ask page or
with `query --resume` (the reviewer's report: a raw traceback, "entity id … of the trace is not in this project",
exports without source text and grey pictures). Two tiny projects: `near` is open in the sidebar, the run was made on
`far`, whose entity ids (e3, e4) `near` does not have."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from builders import write_project
from streamlit.testing.v1 import AppTest

from appkit import APP, click, pictures, texts
from tog_core.app.session import K
from tog_core.cli.main import main
from tog_core.render.page import picture_json
from tog_core.render.style import UNTYPED_COLOUR, type_colour
from tog_core.runs.files import RunStore

FAR = [("Ada Quill", "a keeper"), ("Bram Tor", "a smith"), ("Cole Vane", "a sailor"), ("Dara Wick", "a lamp maker"),
       ("Harbor Lamp", "a lamp"), ("Gull Rock", "an island")]
FAR_EDGES = [("Dara Wick", "Harbor Lamp", "Dara Wick made the Harbor Lamp"),
             ("Harbor Lamp", "Gull Rock", "the Harbor Lamp stands on Gull Rock"),
             ("Ada Quill", "Bram Tor", "Ada Quill knows Bram Tor")]
QUESTION = "On which island stands the lamp Dara Wick made?"


@pytest.fixture(autouse=True)
def home(app_home):
    return app_home


@pytest.fixture()
def two(tmp_path: Path) -> tuple[str, str, str]:
    """(near, far, run id): the two projects' output folders and a run on `far` stopped at the start of depth 2."""
    from tog_core.app.runner import RunCallbacks, run_question
    from tog_core.compose import RunSpec, build_engine
    from tog_core.graphrag.graph import KnowledgeGraph
    from tog_core.graphrag.project import open_project

    near = write_project(tmp_path / "near", [("Ivo Brask", "a clerk"), ("Tarn", "a town")],
                         [("Ivo Brask", "Tarn", "Ivo Brask lives in Tarn")]) / "output"
    far = write_project(tmp_path / "far", FAR, FAR_EDGES, text_units={"t1": "Dara Wick made the Harbor Lamp."},
                        edge_units={0: ["t1"]}) / "output"

    class Interrupted(BaseException):
        pass

    def on_stage(depth: int, stage: str) -> None:
        if depth == 2:
            raise Interrupted()

    info = open_project(far)
    engine = build_engine(RunSpec(model="none"), graph=KnowledgeGraph.load(info), info=info).engine
    with pytest.raises(Interrupted):
        run_question(engine, QUESTION, RunCallbacks(on_stage=on_stage), store=RunStore(),
                     model_info={"model": "none", "model_kind": "none"})
    [r] = RunStore().list()
    assert RunStore().load(r.run_id).state["paths"][0]["start"] == "e3"  # not an entity of `near`
    return str(near.resolve()), str(far.resolve()), r.run_id


def on_near(near: str) -> AppTest:
    """The app with `near` open in the sidebar and no model."""
    at = AppTest.from_file(APP, default_timeout=90)
    at.session_state[K.PROJECT_INPUT] = near
    at.session_state[K.MODEL] = "none"
    at.run()
    assert not at.exception, at.exception
    assert at.session_state[K.PROJECT_OK] == near
    return at


def open_in_runs(at: AppTest, rid: str) -> AppTest:
    """Saved runs, "All projects" on, the run opened."""
    at.session_state[K.RUNS_ALL] = True
    at.switch_page("pages/runs.py").run()
    at.selectbox(key=K.RUNS_OPEN).set_value(rid).run()
    assert not at.exception, at.exception
    return at


def test_opening_a_run_of_another_project_opens_that_project_and_continues_there(two):
    near, far, rid = two
    at = open_in_runs(on_near(near), rid)
    assert at.session_state[K.PROJECT_OK] == far  # as a run opened by its address
    assert at.selectbox(key=K.RUNS_OPEN).value == rid  # still open on its project
    assert "cannot be opened here" not in texts(at)
    # the pictures are drawn on the run's own graph: its entities in their type's colour, not grey
    nodes = [n for page in pictures(at) for n in picture_json(page)["nodes"] if "Dara Wick" in n["label"]]
    assert len(nodes) == 2 and all(n["color"]["background"] == type_colour("THING") != UNTYPED_COLOUR for n in nodes)
    at = click(at, "Continue step by step")
    assert not at.exception, at.exception
    assert at.session_state[K.EXPLORE].state.question == QUESTION
    assert at.session_state[K.PROJECT_OK] == far


def test_resume_of_a_run_of_another_project_opens_that_project_first(two):
    near, far, rid = two
    at = on_near(near)
    at.session_state[K.ASK_RESUME] = rid  # what "Resume on the Ask page" sets
    at.session_state[K.ASK_QUESTION] = QUESTION
    at.switch_page("pages/ask.py").run()
    assert not at.exception, at.exception
    assert "Could not start" not in texts(at) and "not in this project" not in texts(at)
    assert at.session_state[K.PROJECT_OK] == far
    t = at.session_state[K.ASK_TRACE]
    assert t.run_id == rid and t.answer and "Gull Rock" in t.answer
    assert RunStore().load(rid).answer


def test_a_run_whose_project_cannot_be_opened_says_which_and_offers_nothing_that_fails(two, monkeypatch):
    near, far, rid = two
    monkeypatch.setenv("TOG_PROJECT_ROOTS", str(Path(near).parent))  # the operator allows `near` only
    at = open_in_runs(on_near(near), rid)
    assert at.session_state[K.PROJECT_OK] == near
    said = texts(at)
    assert "This run was made on the project far, which cannot be opened here" in said
    assert "it cannot be resumed or continued" in said and far in said
    labels = {b.label for b in at.button}
    assert "Continue step by step" not in labels and "Resume on the Ask page" not in labels
    assert not pictures(at)  # never drawn against `near`
    assert [d.label for d in at.download_button] == ["JSON trace", "Markdown report", "Standalone HTML"]
    # Resume asked for on the Ask page: the same words, no "Could not start"
    at.session_state[K.ASK_RESUME] = rid
    at.switch_page("pages/ask.py").run()
    assert not at.exception, at.exception
    said = texts(at)
    assert "This run was made on the project far, which cannot be opened here" in said
    assert "Could not start" not in said and "not in this project" not in said
    assert not RunStore().load(rid).answer


def test_the_person_switching_project_closes_the_run_of_the_other(two):
    near, far, rid = two
    at = open_in_runs(on_near(near), rid)
    assert at.session_state[K.PROJECT_OK] == far
    at.sidebar.text_input(key=K.PROJECT_INPUT).set_value(near).run()  # the person goes back to `near`
    assert not at.exception, at.exception
    assert at.session_state[K.PROJECT_OK] == near  # not switched back by the run still chosen
    assert at.selectbox(key=K.RUNS_OPEN).value is None
    assert "cannot be opened here" not in texts(at)


def test_cli_resume_on_another_project_names_the_project_and_the_command(two, capsys):
    near, far, rid = two
    assert main(["query", near, QUESTION, "--model", "none", "--resume", rid]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and "not in this project" not in err
    assert f"made on the project {far}, not on {near}" in err and f"query {far} '{QUESTION}' --resume {rid}" in err
    assert not RunStore().load(rid).answer  # nothing was run on `near`
    assert main(["query", far, QUESTION, "--model", "none", "--resume", rid]) == 0  # on its own project it goes on
    assert RunStore().load(rid).answer


def test_compare_says_a_run_of_another_project_is_drawn_without_its_types(two):
    """Compare colours by the open project's types: a run of another project is grey there, and the page says why."""
    near, far, rid = two
    at = on_near(near)
    at.text_area(key=K.ASK_QUESTION).set_value("Where does Ivo Brask live?")
    [ask] = [b for b in at.button if b.label == "Ask"]
    at = ask.click().run()
    mine = at.session_state[K.ASK_TRACE].run_id
    at.session_state[K.RUNS_ALL] = True
    at.switch_page("pages/runs.py").run()
    at.session_state[K.RUNS_TAB] = "Compare two runs"
    at.run()
    at.selectbox(key=K.RUNS_A).set_value(mine).run()  # named: two runs made in one second list in either order
    at.selectbox(key=K.RUNS_B).set_value(rid).run()
    assert not at.exception, at.exception
    said = " ".join(c.value for c in at.caption)
    assert "a run of another project is drawn without its types" in said
    at.selectbox(key=K.RUNS_B).set_value(mine).run()  # both runs of the open project: nothing to say
    assert "drawn without its types" not in " ".join(c.value for c in at.caption)
