"""One AppTest per page, driven like a person would, against the demo project.

How AppTest drives st.navigation (Streamlit 1.67): `AppTest.from_file("app.py").run()` runs the entry
script (sidebar + st.navigation, which runs the default page, Ask). Later runs, and
`at.switch_page("pages/x.py").run()`, execute only the page file: AppTest builds a fresh PagesManager per
run, so the entry script (and its sidebar) is not re-run and its elements are absent from the tree. The
sidebar's values therefore go in as session state by their declared keys (`at.session_state[K.MODEL]`),
which is exactly what the pages read; the sidebar itself is checked on the first run. Buttons are
found by label. The LLM is tests/scripted.py's `toy_llm` behind FakeOpenAIServer (real LiteLLM HTTP on
127.0.0.1), or no LLM at all (`none` + bm25) where that is enough.
"""
from __future__ import annotations

import base64
import socket
import json
import os
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from streamlit.testing.v1 import AppTest

from scripted import toy_llm
from tog_core.testing.server import FakeOpenAIServer
from tog_core.runs.files import RunStore
from tog_core.app.session import K

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
QUESTION = "In which town was the founder of the Lanternwright Guild born?"
FAKE_KEY = "sk-test-typed-into-the-password-field-0123456789"


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("TOG_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("GRAPHRAG_API_KEY", raising=False)
    monkeypatch.chdir(ROOT)
    return tmp_path / "home"


@pytest.fixture()
def server():
    with FakeOpenAIServer(toy_llm) as srv:
        yield srv


def app(**sidebar) -> AppTest:
    """The app after its first run, with sidebar settings (by session-state key) for the runs to come."""
    at = AppTest.from_file(APP, default_timeout=90)
    at.run()
    assert not at.exception, at.exception
    assert at.sidebar.text_input(key=K.PROJECT_INPUT).value.endswith("demo")
    for key, value in sidebar.items():
        at.session_state[key] = value
    return at


def click(at: AppTest, label: str) -> AppTest:
    [b] = [b for b in at.button if b.label == label]
    b.click()
    return at.run()


def texts(at: AppTest) -> str:
    """Everything a person reads on the page (markdown with its escapes removed, captions, text, alerts)."""
    parts = [e.value for kind in ("markdown", "caption", "text", "info", "warning", "error", "success", "title",
                                  "subheader")
             for e in getattr(at, kind)]
    return "\n".join(parts).replace("\\", "")


def pictures(at: AppTest) -> list[str]:
    out = []
    for el in at.get("iframe"):
        src = el.proto.src or ""
        assert src.startswith("data:text/html;base64,"), "pictures are opaque-origin data: pages"
        out.append(base64.b64decode(src.split(",", 1)[1]).decode("utf-8"))
    return out


def test_ask_page_answers_with_chains_and_evidence(server, home):
    at = app(**{K.MODEL: "openai/toy", K.API_BASE: server.base_url, K.API_KEY: FAKE_KEY, K.DEPTH: 2})
    at.text_area(key=K.ASK_QUESTION).set_value(QUESTION)
    at = click(at.run(), "Ask")
    assert not at.exception, at.exception
    seen = texts(at)
    assert "The answer is Tarnby" in seen
    assert "Mara Quell was born in the town of Tarnby" in seen  # an evidence link of the answer's chain
    assert "Born in Tarnby, Mara Quell founded the Lanternwright Guild" in seen  # its source text
    assert [s.label for s in at.status][0].startswith("Done")
    pics = pictures(at)
    assert any('"Tarnby"' in p and "Mara Quell" in p for p in pics)  # the chains picture
    assert len(server.requests) > 0
    # the typed key reached the server but was never written to disk
    for p in home.rglob("*"):
        if p.is_file():
            assert FAKE_KEY not in p.read_text(encoding="utf-8", errors="ignore"), p
    [run] = RunStore().list()
    assert run.question == QUESTION and "Tarnby" in run.answer


def _editor_rows(at: AppTest):
    [ed] = at.data_editor
    return ed, ed.value


def test_explore_override_at_depth_1_changes_depth_2_and_is_saved(home):
    at = app(**{K.MODEL: "none", K.REL_PRUNER: "bm25", K.ENT_PRUNER: "bm25"})
    at.switch_page("pages/explore.py").run()
    at.text_input(key=K.EXPLORE_QUESTION).set_value(QUESTION).run()
    assert at.multiselect(key=K.EXPLORE_SEEDS).value == ["Lanternwright Guild"]
    at = click(at, "Start")
    assert not at.exception, at.exception
    assert "Depth 1 · relations" in texts(at)
    at = click(at, "Continue")  # relations as proposed
    ed, rows = _editor_rows(at)
    assert "Depth 1 · entities" in texts(at)
    top = rows["score"].idxmax()
    top_name = rows.loc[top, "candidate"].split("  (via")[0]
    assert top_name == "Mara Quell" and bool(rows.loc[top, "keep"])
    at.session_state[ed.key] = {"edited_rows": {int(top): {"keep": False}}, "added_rows": [], "deleted_rows": []}
    at = click(at, "Continue")  # the person unticks the top entity
    assert not at.exception, at.exception
    assert "Depth 1 · evaluate" in texts(at)
    at = click(at, "Continue")
    _, rows2 = _editor_rows(at)
    assert "Depth 2 · relations" in texts(at)
    assert top_name not in set(rows2["from"])  # the depth-2 frontier no longer grows from Mara Quell
    assert "Mara Quell" in "\n".join(at.dataframe[-1].value["candidate"])  # the overrides table
    [saved] = RunStore().list()
    trace = RunStore().load(saved.run_id).to_dict()
    over = [o for s in trace["steps"] for o in s["overrides"]]
    assert [(o["label"], o["auto_kept"], o["kept"]) for o in over] == [("Mara Quell", True, False)]
    assert any("✎" in p for p in pictures(at))  # the frontier picture marks the override

    # back to depth 1: the old branch stays saved, the new one names its parent
    at = click(at, "Re-run from there")
    assert not at.exception, at.exception
    assert "Depth 1 · relations" in texts(at)
    runs = {r.run_id: r for r in RunStore().list()}
    assert len(runs) == 2 and runs[saved.run_id].parent_run is None
    [branch] = [r for r in runs.values() if r.run_id != saved.run_id]
    assert branch.parent_run == saved.run_id
    at = click(at, "Auto-finish")
    assert "Tarnby" in texts(at) and not at.exception


def test_graph_page_search_neighbourhood_table_and_ask_from_here():
    at = app()
    at.switch_page("pages/graph.py").run()
    at.text_input(key=K.GRAPH_QUERY).set_value("Mara").run()
    assert not at.exception, at.exception
    assert "Mara Quell" in texts(at)
    pics = pictures(at)
    assert len(pics) == 1 and "Tarnby" in pics[0]
    table = at.dataframe[0].value
    assert "Mara Quell was born in the town of Tarnby." in set(table["relationship"])
    assert "Tarnby" in set(table["other entity"])
    at = click(at, "Ask from here")
    assert not at.exception, at.exception
    assert "Starting from: Mara Quell" in texts(at)
    assert at.session_state[K.ASK_SEEDS] == ["Mara Quell"]


def test_runs_page_lists_the_run_and_offers_exports():
    at = app(**{K.MODEL: "none"})
    at.text_area(key=K.ASK_QUESTION).set_value(QUESTION)
    at = click(at.run(), "Ask")
    at.switch_page("pages/runs.py").run()
    assert not at.exception, at.exception
    listed = at.dataframe[0].value
    assert list(listed["question"]) == [QUESTION]
    assert "Tarnby" in listed["answer"][0]
    labels = [d.label for d in at.download_button]
    assert labels == ["JSON trace", "Markdown report", "Standalone HTML"]
    assert len(pictures(at)) >= 2
    assert "Most likely answer: Tarnby" in texts(at)


def test_bad_project_path_shows_an_error_and_keeps_the_previous_project(tmp_path):
    at = app()  # the demo loads and is remembered
    recent = json.loads((Path(os.environ["TOG_HOME"]) / "recent.json").read_text())
    assert recent == [str(ROOT / "demo")]
    # a new session whose previous project is the demo; the person types a path that is no project
    at = AppTest.from_file(APP, default_timeout=90)
    at.session_state[K.PROJECT_OK] = str(ROOT / "demo")
    at.session_state[K.PROJECT_INPUT] = str(tmp_path / "no-such-project")
    at.session_state[K.MODEL] = "none"
    at.run()
    assert not at.exception, at.exception
    [err] = at.sidebar.error
    assert "Cannot open this project" in err.value and "no-such-project" in err.value
    assert "Traceback" not in err.value
    assert any("Still using the previous project" in c.value for c in at.sidebar.caption)
    assert any("demo" in c.value and "312 entities" in c.value for c in at.sidebar.caption)
    at.text_area(key=K.ASK_QUESTION).set_value(QUESTION)
    at = click(at.run(), "Ask")  # the rest of the app still works on the demo
    assert not at.exception and "Most likely answer: Tarnby" in texts(at)


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
    [box] = [e for e in at.sidebar.expander if "problem" in e.label]
    shown = " ".join(t.value for t in box.text)
    assert "1 relationship endpoints are missing from entities" in shown
    assert "reverse an earlier one" in shown and "not valid YAML" in shown


def test_a_provider_that_is_down_gives_a_readable_message_not_a_traceback():
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    at = app(**{K.MODEL: "openai/toy", K.API_BASE: dead, K.API_KEY: FAKE_KEY, K.DEPTH: 2})
    at.text_area(key=K.ASK_QUESTION).set_value(QUESTION)
    at = click(at.run(), "Ask")
    assert not at.exception, at.exception
    seen = texts(at)
    assert "Traceback" not in seen and FAKE_KEY not in seen
    assert "[No LLM]" in seen  # the answer was composed from the chains
    alerts = " ".join(e.value for kind in ("warning", "error", "info") for e in getattr(at, kind))
    assert "llm_error_used_bm25" in alerts or "could not connect" in alerts.lower(), alerts
