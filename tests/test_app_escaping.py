"""Graph text reaches the page only escaped: a title, a text unit's id or an entity type written as Markdown (a
link, an image, emphasis) shows as the characters it is made of in "Why not X?", the "Did you mean" pills, the
"Starting from" banner, the evidence's passages and the "not supported by the chains" note, never as a link."""
from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from streamlit.testing.v1 import AppTest

from builders import write_project
from tog_core.app.session import K

APP = str(Path(__file__).resolve().parents[1] / "app.py")
EVIL = "Harbor ![t](https://evil.example/track.png) [login here](https://evil.example/phish) **Bold**"
UNIT = "[a](//e.co"
RAW = re.compile(r"(?<!\\)\[login here(?<!\\)\]|(?<!\\)!(?<!\\)\[t|(?<!\\)\[a(?<!\\)\]\(|(?<!\\)\*\*Bold")


@pytest.fixture(autouse=True)
def home(app_home):
    return app_home


@pytest.fixture()
def hostile(tmp_path) -> Path:
    ents = [("Start", "start entity"), (EVIL, "a harbor town"), ("Lyon", "a city"), ("Nowhere Far", "far")]
    edges = [("Start", EVIL, "Start leads to the harbor"), ("Start", "Lyon", "Start is near Lyon"),
             (EVIL, "Nowhere Far", "the harbor faces Nowhere Far")]
    return write_project(tmp_path / "hostile", ents, edges, text_units={UNIT: "Start leads to the harbor."},
                         edge_units={0: [UNIT]})


def shown(at: AppTest) -> list[str]:
    """Every text the page renders as Markdown: alerts, captions, markdown, expander labels, pill labels."""
    out = [str(e.value) for kind in ("warning", "error", "success", "info", "caption", "markdown")
           for e in getattr(at, kind)]
    out += [e.label for e in at.expander]
    out += [o.content for el in at.get("button_group") for o in el.proto.options]
    return out


def assert_inert(at: AppTest, where: str) -> None:
    assert not at.exception, at.exception
    texts = shown(at)
    assert any("evil" in t or "e.co" in t for t in texts), f"{where}: the graph's text is not on the page at all"
    bad = [t for t in texts if RAW.search(t)]
    assert not bad, f"{where}: Markdown from the graph reached the page unescaped: {bad[:2]}"


def asked(project: Path, question: str) -> AppTest:
    """A session on `project` (no LLM) that asked `question`."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state[K.PROJECT_INPUT], at.session_state[K.MODEL] = str(project), "none"
    at.run()
    at.text_area(key=K.ASK_QUESTION).set_value(question)
    [ask] = [b for b in at.button if b.label == "Ask"]
    return ask.click().run()


def test_graph_text_is_escaped_in_why_not_pills_banner_and_evidence(hostile):
    at = asked(hostile, "Where does Start lead?")
    assert_inert(at, "the answer")
    for expect in ("Harbor", "Nowhere Far", "Lyonnn"):  # in the final beam; lost, nearest point the evil title
        at.text_input(key=K.ASK_EXPECT).set_value(expect).run()
        assert_inert(at, f"Why not {expect}?")
    at.session_state[K.ASK_TAB] = "Evidence"
    at.run()
    assert_inert(at, "the evidence")
    assert any("source \\[a\\]\\(//e\\.co" in e.label for e in at.expander)  # the unit's id, shown as written
    banner = AppTest.from_file(APP, default_timeout=120)
    banner.session_state[K.PROJECT_INPUT], banner.session_state[K.MODEL] = str(hostile), "none"
    banner.session_state[K.ASK_SEEDS] = [EVIL]  # what the Graph page's "Ask from here" sets
    banner.run()
    assert_inert(banner, "the Starting from banner")


def test_the_did_you_mean_pills_and_the_unsupported_note_escape_titles(tmp_path):
    from explorer.blocks import unsupported_words

    said = unsupported_words({"chain_entities": ["Start", EVIL]}, "the LLM")
    assert not RAW.search(said) and "\\[login here\\]" in said
    alike = "Start ![t](https://evil.example/track.png) [login here](https://evil.example/phish)"  # shares "Start"
    root = write_project(tmp_path / "alike", [("Start", "start entity"), ("Harbor Town", "a town"),
                                               (alike, "a harbor town"), ("Lyon", "a city")],
                         [("Start", "Harbor Town", "Start leads to the harbor town"),
                          ("Start", "Lyon", "Start is near Lyon"), (alike, "Lyon", "the harbor faces Lyon")])
    at = asked(root, "Where does Start lead to, the harbor login?")
    pills = [o.content for el in at.get("button_group") for o in el.proto.options]
    assert any("login here" in p for p in pills), pills  # the title is offered …
    assert_inert(at, "the Did you mean pills")  # … as its characters
