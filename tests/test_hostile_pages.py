"""Every page of the app over a graph whose titles, descriptions and relation texts carry `src=https://…`,
`src=//…`, quoted src, `href=` and `<script>`: Ask (every tab), the graph browser, Saved runs (list, one run with
its exports, compare) run without an exception, and no picture they show references anything outside the page.
Before the markup-aware check in render/page.finish, this text made every picture raise.
"""
from __future__ import annotations

import base64
import json
import os
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from streamlit.testing.v1 import AppTest

from builders import write_project
from tog_core.app.session import K
from tog_core.render.page import external_references

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
SRC = ["src=https://evil.example/a.js", "src=//evil.example/b.js", 'src="https://evil.example/c.js"',
       "href=//evil.example/d", "<script src=//evil.example/e.js></script>", "<img src=//evil.example/f.png>"]
QUESTION = "Where does Start lead?"


@pytest.fixture()
def hostile(tmp_path, monkeypatch):
    monkeypatch.setenv("TOG_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("GRAPHRAG_API_KEY", raising=False)
    monkeypatch.chdir(ROOT)
    ents = [("Start", "start " + SRC[0])] + [(f"Place {k} {p}", f"desc {p}") for k, p in enumerate(SRC)]
    edges = [("Start", t, f"Start leads to {SRC[k]}") for k, (t, _) in enumerate(ents[1:])]
    edges += [(ents[1][0], ents[2][0], f"next {SRC[1]}")]
    units = {f"t{k}": f"Start leads there {SRC[k % len(SRC)]}." for k in range(len(edges))}
    return write_project(tmp_path / "hostile", ents, edges, text_units=units,
                         edge_units={k: [f"t{k}"] for k in range(len(edges))})


def pictures(at: AppTest) -> list[str]:
    out = [base64.b64decode((el.proto.src or "").split(",", 1)[1]).decode("utf-8") for el in at.get("iframe")]
    for el in at.get("component_instance"):  # a page, or a live picture: its page and its data
        args = json.loads(el.proto.json_args)
        out += [args["page"]] if "page" in args else [args["shell"], args["data"]]
    return out


def check(at: AppTest, where: str, *, min_pictures: int = 1) -> None:
    assert not at.exception, (where, at.exception)
    pages = pictures(at)
    assert len(pages) >= min_pictures, where
    for page in pages:
        assert external_references(page) == [], where


def test_every_page_shows_a_graph_with_src_text(hostile):
    at = AppTest.from_file(APP, default_timeout=90)
    at.session_state[K.PROJECT_INPUT] = str(hostile)
    at.session_state[K.MODEL] = "none"
    at.run()
    assert not at.exception, at.exception
    at.text_area(key=K.ASK_QUESTION).set_value(QUESTION)
    [ask] = [b for b in at.button if b.label == "Ask"]
    ask.click()
    at.run()
    check(at, "ask: chains")
    for tab in ("Search replay", "Evidence"):
        at.session_state[K.ASK_TAB] = tab
        at.run()
        check(at, f"ask: {tab}", min_pictures=0 if tab == "Evidence" else 1)
    at.session_state[K.ASK_TAB] = "Reasoning chains"
    at.session_state[K.WIDTH] = 1
    at.text_area(key=K.ASK_QUESTION).set_value("Where does Start lead next?")
    [ask] = [b for b in at.button if b.label == "Ask"]
    ask.click()
    at.run()
    check(at, "ask again")

    at.switch_page("pages/graph.py").run()
    at.text_input(key=K.GRAPH_QUERY).set_value("Place 1").run()
    check(at, "graph browser")

    at.switch_page("pages/runs.py").run()
    asked = at.session_state[K.ASK_TRACE].run_id
    at.selectbox(key=K.RUNS_OPEN).set_value(asked).run()  # Saved runs reads a run only once it is opened
    check(at, "saved runs")
    assert [d.label for d in at.download_button] == ["JSON trace", "Markdown report", "Standalone HTML"]
    at.session_state[K.RUNS_TAB] = "Compare two runs"
    at.run()
    check(at, "compare")
