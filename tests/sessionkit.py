"""Helpers for the AppTests that open the app as a new browser session (the sidebar included): `session` on a
project with the LLM-free model, `plain_session` with only the session state given, a question asked with
the Ask button (`ask`), the page's text without its titles (`texts`), and a small Acme project written to disk
with Alice born where a test says (`acme`, asked about by `ALICE`)."""
from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from appkit import APP
from builders import ACME_EDGES, write_project
from tog_core.app.session import K

ALICE = "Where was Alice born?"


def session(project: str | Path | None = None, **state) -> AppTest:
    """A new browser session's first run (the sidebar included), the LLM-free model."""
    at = AppTest.from_file(APP, default_timeout=90)
    if project is not None:
        at.session_state[K.PROJECT_INPUT] = str(project)
    at.session_state[K.MODEL] = "none"
    for k, v in state.items():
        at.session_state[k] = v
    at.run()
    assert not at.exception, at.exception
    return at


def ask(at: AppTest, question: str) -> AppTest:
    at.text_area(key=K.ASK_QUESTION).set_value(question)
    [b] = [b for b in at.button if b.label == "Ask"]
    b.click()
    at.run()
    assert not at.exception, at.exception
    return at


def texts(at: AppTest) -> str:
    return "\n".join(e.value for kind in ("markdown", "caption", "text", "info", "warning", "error", "success")
                     for e in getattr(at, kind)).replace("\\", "")


def acme(root: Path, birthplace: str, extra: int = 0) -> Path:
    """The Acme graph with Alice born in `birthplace` (and `extra` unconnected entities): one version of an index."""
    edges = [e if e[0] != "Alice" or "born" not in e[2] else ("Alice", birthplace, f"Alice was born in {birthplace}")
             for e in ACME_EDGES]
    names = sorted({t for e in edges for t in e[:2]}) + [f"Extra {i}" for i in range(extra)]
    return write_project(root, [(t, f"{t} desc") for t in names], edges)


def plain_session(**state) -> AppTest:
    """A new browser session's first run with the session state given, nothing else set (not even the model)."""
    at = AppTest.from_file(APP, default_timeout=90)
    for k, v in state.items():
        at.session_state[k] = v
    at.run()
    assert not at.exception, at.exception
    return at
