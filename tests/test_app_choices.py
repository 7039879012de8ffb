"""AppTests of a person's choices in Explore, the step-by-step page: overriding a pruning choice, the evaluate stage's
one choice, a click on a candidate in the picture, the words of a step's table, and "Why not X?" with its Force in (on
Explore and Ask: forcing one in, what the button says, an entity of the step on screen, and a new question or another
project starting without the last one). The page's address, reload, finishing and reopening: test_app_explore.py."""
from __future__ import annotations

import os

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from streamlit.testing.v1 import AppTest

from appkit import CORIN, QUESTION, app, ask, click, force_in, pick, pictures, texts
from appkit import _rows as _editor_rows
from tog_core.app.session import K
from tog_core.render.page import picture_json
from tog_core.runs.files import RunStore


@pytest.fixture(autouse=True)
def home(app_home):
    return app_home


def test_explore_override_at_depth_1_changes_depth_2_and_is_saved(home):
    at = app(**{K.MODEL: "none", K.REL_PRUNER: "bm25", K.ENT_PRUNER: "bm25"})
    at.switch_page("pages/explore.py").run()
    at.text_input(key=K.EXPLORE_QUESTION).set_value(QUESTION).run()
    assert at.multiselect(key=K.EXPLORE_SEEDS).value == ["Lanternwright Guild"]
    at = click(at, "Start")
    assert not at.exception, at.exception
    assert "Depth 1 · relations" in texts(at)
    plan = at.session_state[K.EXPLORE].state.plan_record  # the hops were tried before the first step, and shown
    assert plan and any(e.label.startswith(f"How many hops: {plan.depth} (tried 1 to 3") for e in at.expander)
    at = click(at, "Continue")  # relations as proposed
    ed, rows = _editor_rows(at)
    assert "Depth 1 · entities" in texts(at)
    names = rows["candidate"].str.split("  \\(via").str[0]
    [top] = [k for k in rows.index if names[k] == "Mara Quell" and bool(rows.loc[k, "keep"])]
    top_name = "Mara Quell"  # kept by the automatic choice (the founder's edge), among the beam's best scores
    assert rows.loc[top, "score"] >= sorted(rows["score"], reverse=True)[min(2, len(rows) - 1)]
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


def test_explore_evaluate_is_one_choice_and_the_other_outcome_is_an_override(home):
    at = app(**{K.MODEL: "none", K.REL_PRUNER: "bm25", K.ENT_PRUNER: "bm25"})
    at.switch_page("pages/explore.py").run()
    at.text_input(key=K.EXPLORE_QUESTION).set_value(QUESTION).run()
    at = click(click(click(at, "Start"), "Continue"), "Continue")
    assert "Depth 1 · evaluate" in texts(at) and not at.data_editor  # no table of two tickable outcomes
    [verdict] = [r for r in at.radio if r.label == "What next?"]
    assert verdict.options == ["The chains are enough: answer now", "Search one level deeper"]
    assert verdict.value == "continue"  # the automatic choice on a two-hop question, pre-set
    verdict.set_value("sufficient")
    at = click(at.run(), "Continue")
    assert not at.exception, at.exception
    state = at.session_state[K.EXPLORE].state
    assert state.done and state.depth == 1  # answered at depth 1, as chosen
    [saved] = RunStore().list()
    trace = RunStore().load(saved.run_id).to_dict()
    over = [o for st in trace["steps"] for o in st["overrides"]]
    assert [(o["label"], o["auto_kept"], o["kept"]) for o in over] == [
        ("The chains are enough: answer now", False, True), ("Search one level deeper", True, False)]
    # one decision: one row in the overrides table and one override in compare (both outcomes changed)
    from tog_core.app.views import compare_rows, overrides
    saved_trace = RunStore().load(saved.run_id)
    assert overrides(saved_trace) == [{"depth": 1, "stage": "evaluate", "candidate": "what next",
                                       "automatic": "Search one level deeper",
                                       "person": "The chains are enough: answer now"}]
    assert next(r["A"] for r in compare_rows(saved_trace, saved_trace) if r[""] == "overrides") == "1"


def test_explore_a_click_on_a_proposed_candidate_keeps_or_drops_it():
    at = app(**{K.MODEL: "none", K.REL_PRUNER: "bm25", K.ENT_PRUNER: "bm25"})
    at.switch_page("pages/explore.py").run()
    at.text_input(key=K.EXPLORE_QUESTION).set_value(QUESTION).run()
    at = click(click(at, "Start"), "Continue")
    _, rows = _editor_rows(at)
    mara = rows.index[rows["candidate"].str.startswith("Mara Quell")][0]
    assert bool(rows.loc[mara, "keep"])
    [page] = pictures(at)
    node = next(n for n in picture_json(page)["nodes"] if "Mara Quell" in n["label"])
    assert node["label"].startswith("☑") and node["ref"] == rows.loc[mara, "id"]
    at = pick(at, node["ref"])  # the person clicks Mara Quell in the picture
    _, rows = _editor_rows(at)
    assert not bool(rows.loc[rows["candidate"].str.startswith("Mara Quell")].iloc[0]["keep"])  # the table follows
    node = next(n for n in picture_json(pictures(at)[0])["nodes"] if "Mara Quell" in n["label"])
    assert node["label"].startswith("☐")
    at = pick(at, "not-a-candidate")  # a stale or forged click changes nothing
    at = click(at, "Continue")
    trace = RunStore().load(RunStore().list()[0].run_id).to_dict()
    assert [(o["label"], o["kept"]) for s in trace["steps"] for o in s["overrides"]] == [("Mara Quell", False)]


def test_explore_why_not_forces_it_in_and_waits_at_the_next_stage():
    at = app(**{K.MODEL: "none", K.REL_PRUNER: "random", K.ENT_PRUNER: "random", K.WIDTH: 1})
    at.switch_page("pages/explore.py").run()
    at.text_input(key=K.EXPLORE_QUESTION).set_value(CORIN).run()
    at = click(at, "Start")
    at = click(at, "Auto-finish")
    at.text_input(key=K.EXPLORE_EXPECT).set_value("Pell Ardent").run()
    assert "never a candidate" in at.error[0].value
    old, at = force_in(at, K.EXPLORE)
    ex = at.session_state[K.EXPLORE]
    assert ex.parent_run == old and not ex.state.done
    # one press keeps the whole way (Corin Vell → Kestrel Telescope → Tarnby Lensworks → Pell Ardent), each link the
    # person's override, and waits for the person once Pell Ardent is in the beam
    assert "Depth 3 · evaluate" in texts(at)
    assert "Pell Ardent is in the beam now" in texts(at) and "Pell Ardent: in the final beam" in texts(at)
    forced = [o for s in ex.state.steps for o in s.overrides if o.get("forced") == "Pell Ardent"]
    assert {"Kestrel Telescope", "Pell Ardent"} <= {o["label"] for o in forced}  # Tarnby Lensworks: kept anyway
    assert all(o["kept"] and not o["auto_kept"] for o in forced)


def test_a_new_question_or_another_project_starts_without_the_last_why_not(tmp_path):
    """A reviewer typed "Why not Ashwater River?" in Explore, then "New question": the old expectation was diagnosed
    (and offered a Force in) against the unrelated run; after switching project it read "not an entity of this
    project", and the start form kept the other project's topic entities. Each now starts empty."""
    from builders import write_project

    def said(at: AppTest) -> str:
        return " ".join(e.value for kind in (at.error, at.warning, at.success) for e in kind)

    at = app(**{K.MODEL: "none"})
    at.switch_page("pages/explore.py").run()
    at.text_input(key=K.EXPLORE_QUESTION).set_value(CORIN).run()
    at = click(at, "Start")
    at.text_input(key=K.EXPLORE_EXPECT).set_value("Ashwater River").run()
    assert "Ashwater River" in said(at)
    at = click(at, "New question")
    at.text_input(key=K.EXPLORE_QUESTION).set_value(QUESTION).run()
    at = click(at, "Start")
    assert "Ashwater" not in said(at) and not [b for b in at.button if "Ashwater" in b.label]  # no Force in
    at.text_input(key=K.EXPLORE_EXPECT).set_value("Ashwater River").run()
    assert "Ashwater River" in said(at)
    other = write_project(tmp_path / "acme", [("Acme", "a firm"), ("Paris", "a city")],
                          [("Acme", "Paris", "Acme is in Paris")])
    at.session_state[K.PROJECT_INPUT] = str(other)
    at.run()
    assert not at.exception, at.exception
    assert "Ashwater" not in said(at)
    assert not at.session_state[K.EXPLORE_SEEDS] if K.EXPLORE_SEEDS in at.session_state else True


def test_asking_another_question_drops_the_last_why_not():
    at = ask(app(**{K.MODEL: "none"}), CORIN)
    at.text_input(key=K.ASK_EXPECT).set_value("Ashwater River").run()
    assert any("Ashwater River" in e.value for kind in (at.error, at.warning, at.success) for e in kind)
    at = ask(at, QUESTION)
    assert not any("Ashwater" in e.value for kind in (at.error, at.warning, at.success) for e in kind)
    assert at.text_input(key=K.ASK_EXPECT).value == ""


def test_each_stage_says_what_the_words_of_its_table_mean():
    """A reviewer met "e5", "BM25", "cut-off", "lookahead" and "fused" with no word of what they are."""
    from tog_core.app.guide import STEP_WORDS

    at = app(**{K.MODEL: "none"})
    at.switch_page("pages/explore.py").run()
    at.text_input(key=K.EXPLORE_QUESTION).set_value(QUESTION).run()
    at = click(at, "Start")
    [ex] = [e for e in at.expander if e.label == "What the words in this table mean"]
    said = " ".join(m.value for m in ex.markdown)
    reasons = " ".join(str(r) for r in _editor_rows(at)[1]["reason"]).lower()
    used = [term for term in ("bm25", "e5", "cut-off", "fused", "lookahead") if term in reasons]
    assert used, reasons[:300]  # the first stage's reasons use some of them …
    for term in used:  # … and each is explained
        assert any(term in t.lower() for t, _ in STEP_WORDS) and term in said.lower(), term
    assert len(STEP_WORDS) >= 8 and all(len(m) > 30 for _, m in STEP_WORDS)


def test_the_force_button_says_what_it_does_on_each_page_and_a_step_says_when_ticks_count():
    """Explore's "Force X in" keeps X and waits at the next stage (the answer may be another); the Ask page's answers
    X when a chain reaches it: the button's help says which. Ticks not yet continued are kept with the run for a reload:
    said (tests/test_drafts.py)."""
    from explorer.blocks import FORCE_ANSWERS, FORCE_WAITS

    at = app(**{K.MODEL: "none", K.REL_PRUNER: "random", K.ENT_PRUNER: "random", K.WIDTH: 1})
    at.switch_page("pages/explore.py").run()
    at.text_input(key=K.EXPLORE_QUESTION).set_value(CORIN).run()
    at = click(at, "Start")
    assert any("until then they are kept with this run, and a reload brings them back" in c.value for c in at.caption)
    at = click(at, "Auto-finish")
    at.text_input(key=K.EXPLORE_EXPECT).set_value("Pell Ardent").run()
    [force] = [b for b in at.button if b.label.startswith("Force")]
    assert force.help == FORCE_WAITS and "may still be another entity" in force.help
    ask_page = ask(app(**{K.MODEL: "none", K.REL_PRUNER: "random", K.ENT_PRUNER: "random", K.WIDTH: 1}), CORIN)
    ask_page.text_input(key=K.ASK_EXPECT).set_value("Pell Ardent").run()
    [force] = [b for b in ask_page.button if b.label.startswith("Force")]
    assert force.help == FORCE_ANSWERS and "it is the answer" in force.help


def test_why_not_an_entity_of_the_step_on_screen_says_it_is_there_to_tick():
    """A newcomer typed the name of row 5 of the entity table in "Why not …?" and was told it was never a candidate:
    the step on screen is not in the trace yet. It is now said to be a candidate there, with its row, and whether it
    is ticked; Force in is not offered (a tick does it)."""
    at = app(**{K.MODEL: "none"})
    at.switch_page("pages/explore.py").run()
    at.text_input(key=K.EXPLORE_QUESTION).set_value(CORIN).run()
    at = click(at, "Start")
    at = click(at, "Continue")
    assert "Depth 1 · entities" in texts(at)
    _, rows = _editor_rows(at)
    unticked = rows.loc[~rows["keep"].astype(bool)]
    ticked = rows.loc[rows["keep"].astype(bool)]
    assert len(unticked) and len(ticked)
    for row, said in ((unticked.iloc[0], "not ticked: tick it"), (ticked.iloc[0], "it is ticked")):
        name = row["candidate"].split("  (via:")[0]
        at.text_input(key=K.EXPLORE_EXPECT).set_value(name).run()
        assert not at.exception, at.exception
        notes = [i.value.replace("\\", "") for i in at.info if "is a candidate at this step" in i.value]
        assert len(notes) == 1 and said in notes[0] and "never a candidate" not in texts(at), texts(at)
        assert not [b for b in at.button if b.label.startswith("Force")]
