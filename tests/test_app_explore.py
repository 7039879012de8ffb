"""AppTests of Explore, the step-by-step page: its address (#22 item 7: the run is saved from its start and named in
the address, so a reloaded page goes on where it was; a Continue keeps the table's last edit), overriding a pruning
choice, the evaluate stage's choice, a click on a candidate and "why not" forcing one in (moved from test_app.py)."""
from __future__ import annotations

import os

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from streamlit.testing.v1 import AppTest

from test_app import APP, CORIN, QUESTION, app, ask, click, force_in, pick, pictures, texts
from tog_core.app.session import K
from tog_core.app.views import answer_start, candidate_rows, edited_choice, md_text
from tog_core.render.page import picture_json
from tog_core.runs.files import RunStore


@pytest.fixture(autouse=True)
def home(app_home):
    return app_home


def test_explore_is_saved_from_its_start_and_a_reload_goes_on_where_it_was():
    at = app(**{K.MODEL: "none", K.REL_PRUNER: "bm25", K.ENT_PRUNER: "bm25"})
    at.switch_page("pages/explore.py").run()
    at.text_input(key=K.EXPLORE_QUESTION).set_value(QUESTION).run()
    at = click(at, "Start")
    assert not at.exception, at.exception
    rid = at.session_state[K.EXPLORE].run_id
    assert at.query_params["run"] in (rid, [rid])  # the address names the run
    [saved] = RunStore().list()  # left now, before its first Continue, the run is kept
    assert saved.run_id == rid and saved.question == QUESTION

    again = AppTest.from_file(APP, default_timeout=90)  # F5: a new session on the same address
    again.query_params["run"] = rid
    again.session_state[K.MODEL] = "none"
    again.switch_page("pages/explore.py").run()
    assert not again.exception, again.exception
    assert again.session_state[K.EXPLORE].run_id == rid
    assert "Depth 1 · relations" in texts(again) and f"run {rid}" in texts(again)
    again = click(again, "Continue")
    assert not again.exception, again.exception
    assert "Depth 1 · entities" in texts(again)
    assert RunStore().load(rid).to_dict()["steps"]  # the same run goes on


def test_a_continue_keeps_the_tables_last_edit():
    from tog_core.tog.state import Proposal
    from tog_core.tog.trace import Candidate, Step

    step = Step(depth=1, stage="entities", candidates=[
        Candidate(id="a", kind="entity", label="A", score=0.9, auto_kept=True),
        Candidate(id="b", kind="entity", label="B", score=0.5, auto_kept=False)])
    rows = candidate_rows(Proposal(step=step, payload=(None, None)), {"a"})
    assert edited_choice(rows, None) == {"a"}
    assert edited_choice(rows, {"edited_rows": {1: {"keep": True}, 0: {"keep": False}}}) == {"b"}
    assert edited_choice(rows, {"edited_rows": {"7": {"keep": True}}}) == {"a"}  # a row that is not there


def test_continue_to_the_end_shows_the_answer_once_saved_finished_and_the_hops_once():
    at = app(**{K.MODEL: "none", K.REL_PRUNER: "bm25", K.ENT_PRUNER: "bm25"})
    at.switch_page("pages/explore.py").run()
    at.text_input(key=K.EXPLORE_QUESTION).set_value(QUESTION).run()
    at = click(at, "Start")
    for _ in range(12):  # Continue with the automatic choice until the search ends
        if not [b for b in at.button if b.label == "Continue"]:
            break
        at = click(at, "Continue")
        assert not at.exception, at.exception
    rid = at.session_state[K.EXPLORE].run_id
    saved = RunStore().load(rid)
    assert saved.answer and saved.stop_reason in ("sufficient", "max_depth")
    [row] = [r for r in RunStore().list() if r.run_id == rid]
    assert row.answer == saved.answer  # listed finished, not "(unfinished: resume it)"
    assert len([e for e in at.expander if e.label.startswith("How many hops")]) == 1
    assert "Answer" not in [s.value for s in at.subheader]  # the answer's own heading is the entity


def test_explore_shows_data_text_as_text_in_its_header_and_evaluate_choice(tmp_path):
    """Titles carrying Markdown and HTML: the run header's start and the evaluate stage's reasons are escaped (a
    bare `**`, `[..](..)` or `<b>` would become markup)."""
    from builders import write_project

    start = "**Bold** [x](http://evil.example) <b>Start</b>"
    project = write_project(tmp_path / "md", [(start, "a start"), ("_Harbour_ <i>", "a place")],
                            [(start, "_Harbour_ <i>", "It leads to the harbour")])
    at = AppTest.from_file(APP, default_timeout=90)
    at.session_state[K.PROJECT_INPUT] = str(project)
    for key, value in {K.MODEL: "none", K.REL_PRUNER: "bm25", K.ENT_PRUNER: "bm25"}.items():
        at.session_state[key] = value
    at.run()
    at.switch_page("pages/explore.py").run()
    at.text_input(key=K.EXPLORE_QUESTION).set_value("Where does Bold Start lead?").run()
    at.multiselect(key=K.EXPLORE_SEEDS).select(start).run()
    at = click(at, "Start")
    assert not at.exception, at.exception
    header = next(c.value for c in at.caption if c.value.startswith("run "))
    assert "start: \\*\\*Bold\\*\\* \\[x\\]\\(http\\:\u200b//evil\\.example\\) \\<b\\>Start\\</b\\>" in header
    for _ in range(8):  # on to the evaluate stage: its reasons may carry data text too
        if [r for r in at.radio if r.label == "What next?"]:
            break
        at = click(at, "Continue")
        assert not at.exception, at.exception
    [choice] = [r for r in at.radio if r.label == "What next?"]
    reasons = [c.reason if c.auto_kept else "" for c in at.session_state[K.EXPLORE].proposal.step.candidates]
    assert list(choice.proto.captions) == [md_text(r) for r in reasons] and any(reasons)
    at.session_state[K.GRAPH_QUERY] = start  # the graph browser's heading names the entity as text
    at.switch_page("pages/graph.py").run()
    assert not at.exception, at.exception
    assert at.subheader[0].value == md_text(start)


def test_stop_and_answer_before_any_step_says_its_chain_comes_from_the_search_before_the_run():
    """Stop & answer at Explore's first stage: the answer comes from the numbers of hops searched before the run
    (the run itself has no chain yet), and the page says so instead of leaving the search picture to contradict
    it."""
    at = app(**{K.MODEL: "none", K.REL_PRUNER: "bm25", K.ENT_PRUNER: "bm25"})
    at.switch_page("pages/explore.py").run()
    at.text_input(key=K.EXPLORE_QUESTION).set_value(QUESTION).run()
    at = click(click(at, "Start"), "Stop & answer")
    assert not at.exception, at.exception
    trace = RunStore().load(at.session_state[K.EXPLORE].run_id)
    assert not [c for c in trace.chains if c] and trace.candidates and trace.answer_entity
    assert "was found by one of the searches made before the run" in texts(at)
    from tog_core.app.views import plan_rows
    kept = [r for r in plan_rows(trace) if r["kept"]]  # the hops table marks the answer's own number of hops
    assert [(r["hops"], r["the answer"]) for r in kept] == [(len(trace.candidates[0]["chain"]), trace.answer_entity)]


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


def test_a_finished_run_reopened_from_its_address_can_branch():
    """Without an LLM the run's history is rebuilt on reopening (its steps replayed), so "Back to depth" offers
    what it offered in the session that stepped it (it offered nothing: the history began at the saved state)."""
    first = stepped_to_the_end(**{K.MODEL: "none", K.REL_PRUNER: "bm25", K.ENT_PRUNER: "bm25"}).session_state[
        K.EXPLORE]
    assert first.state.done and first.back_depths()
    again = AppTest.from_file(APP, default_timeout=90)
    again.query_params["run"] = first.run_id
    again.session_state[K.MODEL] = "none"
    again.switch_page("pages/explore.py").run()
    assert not again.exception, again.exception
    reopened = again.session_state[K.EXPLORE]
    assert reopened.run_id == first.run_id and reopened.back_depths() == first.back_depths()
    assert [s.depth for s in reopened.states[0].steps] == [] and reopened.state.answer == first.state.answer
    again = click(again, "Re-run from there")
    assert not again.exception, again.exception
    branch = again.session_state[K.EXPLORE]
    assert branch.run_id != first.run_id and branch.parent_run == first.run_id
    # the branch starts with the run's own searches of the other numbers of hops and its reading
    assert branch.state.other_searches == first.states[0].other_searches and branch.state.reading == \
        first.states[0].reading


# ---------------------------------------------------------------------------------------------- explore

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


def test_a_question_naming_nothing_of_the_graph_is_no_answer_not_done(home):
    at = ask(app(**{K.MODEL: "none"}), "Who is the president of France?")
    assert not at.exception, at.exception
    [status] = at.status
    assert status.label.startswith("No answer · ") and status.state == "error"  # not a green "Done"
    assert "No answer: no entity of this project was found" in texts(at)
    [saved] = RunStore().list()
    assert answer_start(saved.answer).startswith("No answer: no entity")  # the runs list, not a bare "[No LLM]"


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


def test_a_width_changed_mid_exploration_is_said_to_apply_to_the_next_question():
    """A reviewer set Width 5 in the sidebar at depth 2 and continued: 3 entities stayed ticked and nothing said
    why. The header names the run's width and depth, and a change in the sidebar is said to wait for the next run."""
    at = app(**{K.MODEL: "none"})
    at.switch_page("pages/explore.py").run()
    at.text_input(key=K.EXPLORE_QUESTION).set_value(QUESTION).run()
    at = click(at, "Start")
    header = next(c.value for c in at.caption if c.value.startswith("run "))
    assert "width 3, depth 3" in header
    assert not [i for i in at.info if "this run keeps width" in i.value]
    at.session_state[K.WIDTH] = 5
    at.run()
    [note] = [i.value for i in at.info if "this run keeps width" in i.value]
    assert "width 5" in note and "keeps width 3, depth 3" in note and "next question" in note
    assert at.session_state[K.EXPLORE].settings.width == 3  # the run itself is unchanged


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


def test_an_answer_under_another_question_in_the_box_names_its_own_question():
    """A reviewer changed the question, an error kept it from running, and the old "No answer" stood under the new
    text as if it answered it."""
    at = ask(app(**{K.MODEL: "none"}), CORIN)
    assert not [c for c in at.caption if "asked before" in c.value]
    at.session_state[K.ASK_QUESTION] = "Who was Scrooge's business partner?"  # asked, but it could not run
    at.run()
    [said] = [c.value for c in at.caption if "asked before" in c.value]
    assert "Corin Vell" in said and "Ask to search the one in the box" in said


def test_the_force_button_says_what_it_does_on_each_page_and_a_step_says_when_ticks_count():
    """Explore's "Force X in" keeps X and waits at the next stage (the answer may be another); the Ask page's answers
    X when a chain reaches it: the button's help says which. Ticks not yet continued are lost on a reload: said."""
    from explorer.blocks import FORCE_ANSWERS, FORCE_WAITS

    at = app(**{K.MODEL: "none", K.REL_PRUNER: "random", K.ENT_PRUNER: "random", K.WIDTH: 1})
    at.switch_page("pages/explore.py").run()
    at.text_input(key=K.EXPLORE_QUESTION).set_value(CORIN).run()
    at = click(at, "Start")
    assert any("until then they live in this page only" in c.value for c in at.caption)
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
