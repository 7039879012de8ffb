"""AppTests of Explore, the step-by-step page: its address (#22 item 7: the run is saved from its start and named in
the address, so a reloaded page goes on where it was; a Continue keeps the table's last edit), Continue to the end,
data text in its header, Stop & answer before any step, a finished run reopened and branched, a width changed
mid-run; on Ask, a question naming nothing and an answer under another question (once in test_app.py). A person's
choices at a step (overrides, the evaluate choice, a click on a candidate, "why not" forcing one in):
test_app_choices.py."""
from __future__ import annotations

import os

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from streamlit.testing.v1 import AppTest

from appkit import APP, CORIN, QUESTION, app, ask, click, stepped_to_the_end, texts
from tog_core.app.session import K
from tog_core.app.views import answer_start, candidate_rows, edited_choice, md_text
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


def test_a_question_naming_nothing_of_the_graph_is_no_answer_not_done(home):
    at = ask(app(**{K.MODEL: "none"}), "Who is the president of France?")
    assert not at.exception, at.exception
    [status] = at.status
    assert status.label.startswith("No answer · ") and status.state == "error"  # not a green "Done"
    assert "No answer: no entity of this project was found" in texts(at)
    [saved] = RunStore().list()
    assert answer_start(saved.answer).startswith("No answer: no entity")  # the runs list, not a bare "[No LLM]"


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


def test_an_answer_under_another_question_in_the_box_names_its_own_question():
    """A reviewer changed the question, an error kept it from running, and the old "No answer" stood under the new
    text as if it answered it."""
    at = ask(app(**{K.MODEL: "none"}), CORIN)
    assert not [c for c in at.caption if "asked before" in c.value]
    at.session_state[K.ASK_QUESTION] = "Who was Scrooge's business partner?"  # asked, but it could not run
    at.run()
    [said] = [c.value for c in at.caption if "asked before" in c.value]
    assert "Corin Vell" in said and "Ask to search the one in the box" in said
