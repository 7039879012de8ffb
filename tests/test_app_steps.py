"""AppTests of Explore's steps as a daily user meets them (a newcomer's review): "Back to depth" keeps the person's
ticks, a relations table says why it ticks more relations than the width, and the sidebar's width and depth say
their limits and when a number typed was refused."""
from __future__ import annotations

import os

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from streamlit.testing.v1 import AppTest

from appkit import APP, QUESTION, _kept, _rows, app, click, texts
from tog_core.app.session import K


@pytest.fixture(autouse=True)
def home(app_home):
    return app_home


def _explore(**sidebar) -> AppTest:
    at = app(**{K.MODEL: "none", K.REL_PRUNER: "bm25", K.ENT_PRUNER: "bm25", **sidebar})
    at.switch_page("pages/explore.py").run()
    at.text_input(key=K.EXPLORE_QUESTION).set_value(QUESTION).run()
    at = click(at, "Start")
    assert not at.exception, at.exception
    return at


def test_back_to_a_depth_starts_each_step_from_the_persons_earlier_ticks():
    """The person unticks Mara Quell at depth 1, goes on to depth 2, then goes back to depth 1: the branch's depth-1
    steps start from what they ticked (Mara Quell still unticked, said so), not from the automatic choice."""
    at = _explore()
    at = click(at, "Continue")  # relations as proposed
    ed, rows = _rows(at)
    [mara] = [k for k in rows.index if str(rows.loc[k, "candidate"]).startswith("Mara Quell") and rows.loc[k, "keep"]]
    at.session_state[ed.key] = {"edited_rows": {int(mara): {"keep": False}}, "added_rows": [], "deleted_rows": []}
    at = click(at, "Continue")  # entities: Mara Quell dropped by the person
    at = click(at, "Continue")  # evaluate
    assert "Depth 2 · relations" in texts(at)
    old = at.session_state[K.EXPLORE].run_id

    at = click(at, "Re-run from there")  # back to depth 1 (the first depth offered)
    assert not at.exception, at.exception
    assert "Depth 1 · relations" in texts(at) and at.session_state[K.EXPLORE].parent_run == old
    assert f"Ticked as you chose it on run {old} before going back" in texts(at)
    at = click(at, "Continue")
    _, rows = _rows(at)
    assert "Depth 1 · entities" in texts(at)
    assert _kept(rows)["Mara Quell"] is False  # the person's tick, kept
    assert "(the automatic choice differs)" in texts(at)
    at = click(at, "Continue")
    trace = at.session_state[K.EXPLORE].state
    assert [(o["label"], o["kept"]) for s in trace.steps for o in s.overrides] == [("Mara Quell", False)]


@pytest.mark.parametrize("width", [3, 2])
def test_a_relations_step_says_why_it_ticks_more_relations_than_the_width(width):
    """Without an LLM on the demo (GraphRAG free text) the policy keeps 2N relations of each entity, the beam N chains:
    the table says so in the search's own numbers, which match the ticks (a newcomer saw 6 ticked at width 3)."""
    at = _explore(**{K.WIDTH: width})
    ex = at.session_state[K.EXPLORE]
    _, rows = _rows(at)
    ticked = int(rows["keep"].sum())
    assert ticked == 2 * width  # one topic entity (Lanternwright Guild), with more relations than that
    said = texts(at)
    assert (f"At width {width} the search keeps up to {2 * width} relations of each entity (2× the width" in said
            and f"the entity stage then keeps the best {width} chains" in said)
    assert f"Ticked by the automatic choice: {ticked} relations of 1 entity." in said
    assert ex.settings.width == width
    at = click(at, "Continue")
    assert f"At width {width} the beam keeps the best {width} chains" in texts(at)


def test_a_width_or_depth_outside_its_range_is_said_not_refused_silently():
    """A newcomer typed Width 0: the browser kept the last number without a word. The fields name their range in the
    label and help; a number outside is set to the nearest limit, and the sidebar says so until a good one is typed."""
    at = AppTest.from_file(APP, default_timeout=90)
    at.run()
    width, depth = at.sidebar.number_input(key=K.WIDTH), at.sidebar.number_input(key=K.DEPTH)
    assert width.label == "Width N (1–10)" and width.help.startswith("From 1 to 10:")
    assert depth.label == "Depth D (1–6)" and depth.help.startswith("From 1 to 6:")
    assert "nearest limit" in width.help and "nearest limit" in depth.help
    width.set_value(0).run()
    assert not at.exception, at.exception
    assert at.session_state[K.WIDTH] == 1 and at.sidebar.number_input(key=K.WIDTH).value == 1
    assert [w.value for w in at.sidebar.warning] == ["Width 0 is not taken (it goes from 1 to 10): set to 1."]
    at.sidebar.number_input(key=K.DEPTH).set_value(9).run()
    assert at.session_state[K.DEPTH] == 6
    assert "Depth 9 is not taken (it goes from 1 to 6): set to 6." in [w.value for w in at.sidebar.warning]
    at.sidebar.number_input(key=K.WIDTH).set_value(4).run()
    assert at.session_state[K.WIDTH] == 4
    assert [w.value for w in at.sidebar.warning] == ["Depth 9 is not taken (it goes from 1 to 6): set to 6."]
