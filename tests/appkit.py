"""Helpers for the AppTests of the Streamlit app on the demo project (how AppTest drives the app: tests/test_app.py):
the app after its first run with sidebar settings (`app`), a click on a button by its label (`click`), a question
asked with the Ask button (`ask`), everything a person reads (`texts`), the picture pages (`pictures`), a click on
a picture node (`pick`), a tab opened by its key (`open_tab`), "Force … in" (`force_in`), the step's table and
its ticks (`_rows`, `_kept`), Explore stepped to the end (`stepped_to_the_end`), a reload on a run's address
(`_reload`) and a server keeping runs per person (`HEADER`, `_as`, `runs_per_person`); with the app's path and
the demo's questions (`ROOT`, `APP`, `QUESTION`, `CORIN`) and a key typed into the key field (`FAKE_KEY`)."""
from __future__ import annotations

import base64
import json
from pathlib import Path

from streamlit.proto.WidgetStates_pb2 import WidgetState
from streamlit.testing.v1 import AppTest

from tog_core.app.session import K

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
QUESTION = "In which town was the founder of the Lanternwright Guild born?"
CORIN = "Who founded the company that manufactures the invention of Corin Vell?"
FAKE_KEY = "sk-test-typed-into-the-password-field-0123456789"


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


def ask(at: AppTest, question: str) -> AppTest:
    """Type the question and press Ask once (the form submits both together)."""
    at.text_area(key=K.ASK_QUESTION).set_value(question)
    at = click(at, "Ask")
    assert not at.exception, at.exception
    return at


def texts(at: AppTest) -> str:
    """Everything a person reads on the page (markdown with its escapes removed, captions, text, alerts)."""
    parts = [e.value for kind in ("markdown", "caption", "text", "info", "warning", "error", "success", "title",
                                  "subheader")
             for e in getattr(at, kind)]
    return "\n".join(parts).replace("\\", "")


def pictures(at: AppTest) -> list[str]:
    """Every picture page on the page: opaque-origin iframes and picture components."""
    out = []
    for el in at.get("iframe"):
        src = el.proto.src or ""
        assert src.startswith("data:text/html;base64,"), "pictures are opaque-origin data: pages"
        out.append(base64.b64decode(src.split(",", 1)[1]).decode("utf-8"))
    for el in at.get("component_instance"):  # a page, or a live picture's data (render.live.live_shell draws it)
        args = json.loads(el.proto.json_args)
        out.append(args["page"] if "page" in args else args["data"])
    return out


def pick(at: AppTest, ref: str) -> AppTest:
    """A click on a picture node: the picture component's value, as its frontend would send it."""
    [comp] = at.get("component_instance")
    states = at._tree.get_widget_states()  # AppTest has no setter for custom components: add the widget state
    states.widgets.append(WidgetState(id=comp.proto.id, json_value=json.dumps({"ref": ref, "label": "", "nonce": 1})))
    at._run(states)
    assert not at.exception, at.exception
    return at


def open_tab(at: AppTest, key: str, label: str) -> AppTest:
    at.session_state[key] = label
    return at.run()


def force_in(at: AppTest, key: str) -> tuple[str, AppTest]:
    """Click "Force … in" under a "why not" answer: (the run id before, the page after, with no exception)."""
    old = at.session_state[key].run_id
    [force] = [b for b in at.button if b.label.startswith("Force")]
    force.click()
    at.run()
    assert not at.exception, at.exception
    return old, at


def _rows(at: AppTest):
    [ed] = at.data_editor
    return ed, ed.value


def _kept(rows) -> dict[str, bool]:
    return {str(c).split("  (via")[0]: bool(k) for c, k in zip(rows["candidate"], rows["keep"])}


def stepped_to_the_end(**sidebar) -> AppTest:
    """Explore: the question started and Continue pressed until the run has finished."""
    at = app(**sidebar)
    at.switch_page("pages/explore.py").run()
    at.text_input(key=K.EXPLORE_QUESTION).set_value(QUESTION).run()
    at = click(at, "Start")
    for _ in range(12):
        if not [b for b in at.button if b.label == "Continue"]:
            break
        at = click(at, "Continue")
    return at


def _reload(run_id: str) -> AppTest:
    """F5: a new browser session on the run's address."""
    at = AppTest.from_file(APP, default_timeout=90)
    at.query_params["run"] = run_id
    at.session_state[K.MODEL] = "none"
    at.switch_page("pages/explore.py").run()
    assert not at.exception, at.exception
    return at


HEADER = {"TOG_RUN_OWNER": "header:X-Forwarded-User"}


def _as(monkeypatch, who: str | None) -> None:
    """The app's requests come from `who` (through the proxy's header; None: around the proxy, no header)."""
    import explorer.ui as ui

    monkeypatch.setattr(ui, "_request_headers", lambda: {} if who is None else {"x-forwarded-user": who})


def runs_per_person(monkeypatch, first: str) -> None:
    """The server keeps runs per person, named by the proxy's header; the first request comes from `first`."""
    for k, v in HEADER.items():
        monkeypatch.setenv(k, v)
    _as(monkeypatch, first)
