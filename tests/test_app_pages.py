"""AppTests of the pages other than Ask and Explore, driven like a person would, against the demo project: the
graph browser, the saved runs (filter, search, resume, delete, export, compare) and the sidebar (a bad project, no
project, a project with problems, a provider that is down, the topic entities of a chosen start, an address naming
no run). How AppTest drives the app: test_app.py; the helpers: tests/appkit.py."""
from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from streamlit.testing.v1 import AppTest  # noqa: E402
from appkit import APP, CORIN, FAKE_KEY, QUESTION, ROOT, app, ask, click, open_tab, pick, pictures, texts  # noqa: E402
from runkit import _unfinished_run  # noqa: E402
from tog_core.app.session import K  # noqa: E402
from tog_core.render.page import picture_json  # noqa: E402
from tog_core.runs.files import RunStore  # noqa: E402


@pytest.fixture(autouse=True)
def home(app_home):
    return app_home


# ---------------------------------------------------------------------------------------------- graph

def test_graph_page_search_no_match_click_to_move_and_ask_from_here():
    at = ask(app(**{K.MODEL: "none"}), QUESTION)  # an answer on the Ask page, from the question's own start
    assert at.session_state[K.ASK_TRACE].answer_entity
    at.switch_page("pages/graph.py").run()
    starts = [b for b in at.button if b.key and b.key.startswith("graph_start_")]  # an empty page offers hubs
    assert len(starts) == 6 and not pictures(at)
    first = starts[0].label
    starts[0].click()
    at.run()
    assert not at.exception, at.exception
    assert at.text_input(key=K.GRAPH_QUERY).value == first and at.subheader[0].value == first and pictures(at)
    at.text_input(key=K.GRAPH_QUERY).set_value("xyzzy").run()
    assert "No entity matches “xyzzy”" in texts(at) and not pictures(at)
    at.text_input(key=K.GRAPH_QUERY).set_value("Mara").run()
    assert not at.exception, at.exception
    assert at.subheader[0].value == "Mara Quell"
    [page] = pictures(at)
    data = picture_json(page)
    assert "person" in page and "geo" in page  # colours by type, with a legend
    colours = {n["color"]["background"] for n in data["nodes"]}
    assert len(colours) >= 2
    table = at.dataframe[0].value
    assert "Mara Quell was born in the town of Tarnby." in set(table["relationship"])
    tarnby = next(n for n in data["nodes"] if n["label"] == "Tarnby")
    at = pick(at, tarnby["ref"])  # click a neighbour: the browser moves to it
    assert at.subheader[0].value == "Tarnby"
    at.selectbox(key=f"graph_go_{tarnby['id']}").set_value("Mara Quell").run()  # the same without the picture
    assert at.subheader[0].value == "Mara Quell"
    at = click(at, "Ask from here")
    assert not at.exception, at.exception
    assert at.session_state[K.ASK_SEEDS] == ["Mara Quell"] and "Starting from: Mara Quell" in texts(at)
    # the earlier answer (from another start) is not left under the new start: the page waits for a question
    assert K.ASK_TRACE not in at.session_state and not [m for m in at.markdown if m.value.startswith("### ")]
    assert at.text_area(key=K.ASK_QUESTION).value == ""  # Ask would not run the old question from the new start
    # the example questions say they start from what they name, the chosen start kept for a typed question
    assert "each starts from the entity it names, not from Mara Quell" in texts(at)


# ---------------------------------------------------------------------------------------------- saved runs

def test_runs_page_filters_searches_resumes_deletes_and_exports_source_text(tmp_path):
    rid = _unfinished_run()  # an unfinished run of this project
    at = app(**{K.MODEL: "none"})
    at = ask(at, QUESTION)
    asked = at.session_state[K.ASK_TRACE].run_id
    other = RunStore().load(asked)
    other.run_id, other.project = "20200101-000000-other1", "/elsewhere/other-project"
    RunStore().save(other)
    empty = RunStore().load(rid)
    empty.run_id, empty.steps, empty.created_at = "20200101-000000-empty1", [], "2020-01-01T00:00:00.000+00:00"
    RunStore().save(empty)  # left before its first step: listed too, to resume
    at.switch_page("pages/runs.py").run()
    assert not at.exception, at.exception
    listed = at.dataframe[0].value
    assert sorted(listed["question"]) == sorted([QUESTION, CORIN, CORIN]) and "project" not in listed.columns
    assert "(unfinished: resume it)" in set(listed["answer"])
    at.toggle(key=K.RUNS_ALL).set_value(True).run()
    listed = at.dataframe[0].value
    assert len(listed) == 4 and set(listed["project"]) == {"demo", "other-project"}
    at.toggle(key=K.RUNS_ALL).set_value(False).run()
    at.text_input(key=K.RUNS_SEARCH).set_value("Lanternwright").run()
    assert list(at.dataframe[0].value["question"]) == [QUESTION]
    assert not at.download_button  # no run is read before the person opens one
    at.selectbox(key=K.RUNS_OPEN).set_value(asked).run()
    labels = [d.label for d in at.download_button]
    assert labels == ["JSON trace", "Markdown report", "Standalone HTML"]
    assert "### Tarnby" in [m.value for m in at.markdown]
    assert len(pictures(at)) == 2
    at.text_input(key=K.RUNS_SEARCH).set_value("").run()
    at.selectbox(key=K.RUNS_OPEN).set_value(rid).run()
    at = click(at, "Resume on the Ask page")
    assert not at.exception, at.exception
    assert RunStore().load(rid).answer and at.session_state[K.ASK_TRACE].run_id == rid
    # the box shows the resumed run's question (it showed the last one asked, which Ask would run again)
    assert at.text_area(key=K.ASK_QUESTION).value == RunStore().load(rid).question != QUESTION
    at.switch_page("pages/runs.py").run()
    at.selectbox(key=K.RUNS_OPEN).set_value(rid).run()
    at = click(at, "Delete this run")
    assert rid not in {r.run_id for r in RunStore().list()}


def test_runs_compare_is_one_path_diff_picture():
    at = app(**{K.MODEL: "none"})
    at = ask(at, CORIN)
    at.session_state[K.REL_PRUNER] = at.session_state[K.ENT_PRUNER] = "random"
    at.session_state[K.WIDTH] = 1
    at = ask(at, CORIN)
    at.switch_page("pages/runs.py").run()
    at = open_tab(at, K.RUNS_TAB, "Compare two runs")
    assert not at.exception, at.exception
    [page] = pictures(at)
    assert "only run A" in page and "only run B" in page and "both runs" in page
    assert "Run B asks another question" not in texts(at)  # the same question twice: nothing to warn of
    edges = picture_json(page)["edges"]
    assert any("only run A" in e["title"] for e in edges) and any("only run B" in e["title"] for e in edges)
    assert "link(s) in both runs" in texts(at)


def _compare_two_questions():
    """Compare opened on two runs of two questions: it says it drew the newest two."""
    at = app(**{K.MODEL: "none"})
    at = ask(at, CORIN)
    at = ask(at, QUESTION)
    at.switch_page("pages/runs.py").run()
    at = open_tab(at, K.RUNS_TAB, "Compare two runs")
    assert not at.exception, at.exception
    assert "No two of these runs ask the same question" in texts(at)  # said, the newest two drawn
    return at


def test_compare_opens_on_the_newest_two_runs_of_one_question_and_says_why():
    at = _compare_two_questions()
    at.switch_page("pages/ask.py").run()
    at.session_state[K.WIDTH] = 1
    at = ask(at, CORIN)  # CORIN asked again…
    at = ask(at, "Who was mentored by Hestia Rook?")  # …and the newest run asks a third question
    corin = sorted((r for r in RunStore().list() if r.question == CORIN), key=lambda r: (r.created_at, r.run_id),
                   reverse=True)  # the store's order: runs of one second by id
    assert len(corin) == 2
    at.switch_page("pages/runs.py").run()
    at = open_tab(at, K.RUNS_TAB, "Compare two runs")
    assert not at.exception, at.exception
    # CORIN's two runs, not the newest two (the third question's and CORIN's): the newest pair of one question
    assert (at.selectbox(key=K.RUNS_A).value, at.selectbox(key=K.RUNS_B).value) == (corin[0].run_id, corin[1].run_id)
    said = texts(at)
    assert "Compared: the newest two runs that ask the same question on one project" in said
    assert "Run B asks another question" not in said and "No two of these runs" not in said
    # the person can still pick any two: the third question's run (by its question: runs made within one second tie
    # on their time)
    newest = next(r.run_id for r in RunStore().list() if r.question == "Who was mentored by Hestia Rook?")
    at.selectbox(key=K.RUNS_A).set_value(newest).run()
    assert at.selectbox(key=K.RUNS_A).value == newest and "Compared: the newest two" not in texts(at)
    assert "Run B asks another question" in texts(at)


def test_compare_says_it_drew_the_newest_two_only_while_it_draws_them():
    at = _compare_two_questions()
    shown = at.selectbox(key=K.RUNS_A).value  # (two runs made within one second tie on their time: not read here)
    older = next(r.run_id for r in RunStore().list() if r.run_id != shown)
    at.selectbox(key=K.RUNS_A).set_value(older).run()  # the person picks another pair
    assert not at.exception, at.exception
    assert at.selectbox(key=K.RUNS_A).value == older
    assert "No two of these runs ask the same question" not in texts(at)  # no longer the pair it speaks of


# ---------------------------------------------------------------------------------------------- sidebar

def test_bad_project_path_shows_an_error_and_keeps_the_previous_project(tmp_path):
    at = app()  # the demo loads and is remembered
    recent = json.loads((Path(os.environ["TOG_HOME"]) / "recent.json").read_text())
    assert recent == [str(ROOT / "demo")]
    at = AppTest.from_file(APP, default_timeout=90)
    at.session_state[K.PROJECT_OK] = str(ROOT / "demo")
    at.session_state[K.PROJECT_INPUT] = str(tmp_path / "no-such-project")
    at.session_state[K.MODEL] = "none"
    at.run()
    assert not at.exception, at.exception
    [err] = at.sidebar.error
    assert "Cannot open this project" in err.value and "no\\-such\\-project" in err.value  # the path, escaped
    assert "Traceback" not in err.value
    assert any("Still using the previous project" in c.value for c in at.sidebar.caption)
    assert any("demo" in c.value and "312 entities" in c.value for c in at.sidebar.caption)
    at = ask(at, QUESTION)  # the rest of the app still works on the demo
    assert "### Tarnby" in [m.value for m in at.markdown]


def test_no_project_at_all_asks_for_one(tmp_path):
    at = AppTest.from_file(APP, default_timeout=90)
    at.session_state[K.PROJECT_INPUT] = str(tmp_path)
    at.run()
    assert not at.exception, at.exception
    assert "no GraphRAG tables" in at.sidebar.error[0].value
    assert "Open a GraphRAG project" in at.info[0].value


def test_a_project_with_problems_lists_them_in_plain_words(tmp_path):
    from builders import write_project

    root = write_project(tmp_path / "quirky", [("A", "a"), ("B", "b")],
                         [("A", "B", "A knows B"), ("B", "A", "B knows A"), ("A", "Nowhere", "A points nowhere")],
                         settings="llm: [unclosed\n")
    at = AppTest.from_file(APP, default_timeout=90)
    at.session_state[K.PROJECT_INPUT] = str(root)
    at.session_state[K.MODEL] = "none"
    at.run()
    assert not at.exception, at.exception
    [box] = [e for e in at.sidebar.expander if "note(s) on how this project was read" in e.label]
    shown = " ".join(t.value for t in box.text)
    assert "1 relationship endpoints are missing from entities" in shown
    assert "reverse an earlier one" in shown and "not valid YAML" in shown


def test_a_provider_that_is_down_gives_a_readable_message_not_a_traceback():
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    at = app(**{K.MODEL: "openai/toy", K.API_BASE: dead, K.API_KEY: FAKE_KEY, K.DEPTH: 2})
    at = ask(at, QUESTION)
    seen = texts(at)
    assert "Traceback" not in seen and FAKE_KEY not in seen
    assert "Composed from the reasoning chains" in seen  # the answer was composed from the chains
    alerts = " ".join(e.value for kind in ("warning", "error", "info") for e in getattr(at, kind))
    assert "llm_error" in alerts or "could not connect" in alerts.lower(), alerts


def test_changing_the_topic_entities_under_a_chosen_start_changes_the_start():
    """A start chosen for the questions to come ("Starting from", from the graph browser) and then changed under
    the answer: the banner and the next question follow the change (they went back to the old start)."""
    at = app(**{K.MODEL: "none"})
    at.session_state[K.ASK_SEEDS] = ["Lanternwright Guild"]
    at = ask(at, QUESTION)
    assert "Starting from: Lanternwright Guild" in texts(at)
    [edit] = [m for m in at.multiselect if m.label == "Topic entities"]
    edit.set_value(["Lanternwright Guild", "Mara Quell"])
    at = click(at, "Ask again from these")
    at.run()
    assert not at.exception, at.exception
    assert at.session_state[K.ASK_SEEDS] == ["Lanternwright Guild", "Mara Quell"]
    assert "Starting from: Lanternwright Guild, Mara Quell" in texts(at)
    at = ask(at, QUESTION)
    assert [s["title"] for s in at.session_state[K.ASK_TRACE].to_dict()["seeds"]] == ["Lanternwright Guild",
                                                                                         "Mara Quell"]


@pytest.mark.parametrize("page", ["pages/ask.py", "pages/explore.py"])
def test_an_address_naming_no_saved_run_says_so(page):
    for wanted, said in (("20200101-000000-gone01", "is not saved here (deleted, or saved elsewhere)"),
                         ("../**x**", "cannot be read (invalid run id")):
        at = AppTest.from_file(APP, default_timeout=90)
        at.query_params["run"] = wanted
        at.session_state[K.MODEL] = "none"
        at.switch_page(page).run()
        assert not at.exception, at.exception
        [warning] = [w.value for w in at.warning if "named in the address" in w.value]
        assert said in warning.replace("\\", "") and "**x**" not in warning  # the address's text is text
        assert "run" not in at.query_params  # the address no longer names it
