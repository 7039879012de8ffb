"""The Ask page's own blocks (pages/ask.py reads as the order they are drawn in): the question form and its start
entities, running, resuming and finishing a stopped question, the example questions of an empty page, a run that
stopped before its answer, the answer with the person's choice and the ways to ask again, "force it in", and the
pictures' tabs. Blocks shared with other pages are in explorer/blocks.py; the logic is in tog_core.app.
"""
from __future__ import annotations

from typing import Any
from collections.abc import Callable

import streamlit as st

from explorer import blocks as B
from explorer import pick
from explorer import projects
from explorer import ui
from explorer.reading import reading_block
from tog_core.app import force as F
from tog_core.app import runner as R
from tog_core.app import run_notes as N
from tog_core.app import views as V
from tog_core.app.inputs import MAX_QUESTION_CHARS
from tog_core.app.session import AskAgain, K, settings_from_trace
from tog_core.graphrag.store import GraphStore
from tog_core.runs.files import new_run_id
from tog_core.tog.state import Seed
from tog_core.tog.trace import DepthPlan, Trace

ss = st.session_state


def load(store: Any, run_id: str) -> Trace | None:
    try:
        return store.load(run_id)
    except (FileNotFoundError, ValueError):
        return None


def show(trace: Trace) -> None:
    ss[K.ASK_TRACE] = trace
    ss.pop(K.ASK_DEPTH, None)
    ui.put_in_address(trace.run_id)


def forget_other_project(project: str) -> None:
    """The project was switched: its answer goes with it."""
    if (shown := ss.get(K.ASK_TRACE)) and not V.made_on(shown, project):
        ss.pop(K.ASK_TRACE)
        ui.put_in_address(None)


def answer_stopped(run_id: str, store: Any, project: str) -> None:
    """Stop was pressed during the run `run_id`: once it has ended in its own thread (Streamlit runs the page again
    at once) and saved what it did with its time, answer from what it found; what is shown is what is saved."""
    with st.spinner("Stopping the search…"):
        R.wait_stopped(run_id)
    saved = load(store, run_id)
    if saved and R.is_unfinished(saved):
        engine, model_info, _ = ui.engine_or_stop(settings_from_trace(saved, project))
        notes: list[str] = []
        kept: list[bool] = []
        done = R.finish_stopped(engine, saved, store, model_info=model_info, on_note=notes.append,
                                on_saved=kept.append)
        if notes:  # saved as a new run (someone else saved the run meanwhile), or not saved: said while it is shown
            ss[K.ASK_SAVED_AS] = (done.run_id, done.revision, notes[-1], "branched" if all(kept) else "unsaved")
        show(done)
    elif saved:  # it ended on its own before the Stop came through: shown as it ended
        show(saved)


def start_entities() -> list[str]:
    """The topic entities a question starts from, when chosen elsewhere (with a button to clear them)."""
    seeds = ss.get(K.ASK_SEEDS) or []
    if seeds:
        c1, c2 = st.columns([5, 1])
        c1.info("Starting from: " + ", ".join(V.md_text(s) for s in seeds))
        if c2.button("Clear start"):
            ss[K.ASK_SEEDS] = []
            st.rerun()
    return seeds


def question_form() -> bool:
    """The question and its Ask button; whether it was pressed."""
    with st.form("ask_form", border=False, enter_to_submit=True):
        st.text_area("Question", key=K.ASK_QUESTION, height=80, max_chars=MAX_QUESTION_CHARS,
                     placeholder="Type a question about the entities of this project (Ctrl+Enter or the button asks)")
        return st.form_submit_button("Ask", type="primary")


def ask(progress: Any, again: AskAgain, seeds: list[str | Seed], store: Any) -> None:
    """Run `again.question` (as `again` sets it up) with live progress in `progress`, and show its answer."""
    engine, model_info, notes = ui.engine_or_stop(again.settings)
    run_id = ss[K.ASK_RUN] = new_run_id()
    ui.put_in_address(run_id)
    ss.pop(K.ASK_TRACE, None)
    trace = B.live_run(progress, lambda cb: R.run_question(engine, again.question, cb, seeds=seeds or None,
                                                           hops=again.hops, tried=again.tried, reading=again.reading,
                                                           store=store, model_info=model_info, run_id=run_id),
                       max_depth=engine.config.depth, llm=engine.llm)
    ss.pop(K.ASK_RUN, None)
    show(trace)


def resume(progress: Any, run_id: str, saved: Trace, store: Any, project: str) -> None:
    """Go on with the run `run_id` (`saved`), stopped before its answer, as it was set up, with live progress in
    `progress`. A run of another project (Resume pressed under Saved runs) opens that project first, or is said to
    be made there when it cannot be opened."""
    if not V.made_on(saved, project):
        ss[K.ASK_RESUME] = run_id  # resumed on the rerun, once its project is open
        if not ui.on_its_project(saved):
            ss.pop(K.ASK_RESUME)
            st.error(ui.elsewhere(saved, "it cannot be resumed on"))
            return
    engine, model_info, _ = ui.engine_or_stop(settings_from_trace(saved, project))
    ss[K.ASK_RUN] = run_id
    trace = B.live_run(progress, lambda cb: R.resume_question(engine, saved, store, cb, model_info=model_info),
                       max_depth=engine.config.depth, label="Resuming the run…", llm=engine.llm)
    ss.pop(K.ASK_RUN, None)
    show(trace)


def examples_block(project: str) -> None:
    """An empty page: questions this graph can answer."""
    if made := projects.examples(project):
        start = ss.get(K.ASK_SEEDS) or []
        chosen = V.md_text(", ".join(start))
        st.caption("Not sure what to ask? Questions made from this project's best-connected entities "
                   "(a click asks" + (f"; each starts from the entity it names, not from {chosen}, which "
                                      "stays chosen for a question you type" if start else "") + "):")
        with st.container(horizontal=True):
            for i, ex in enumerate(made):
                st.button(V.md_text(ex.question), key=f"ask_example_{i}",
                          help=f"{ex.hops} hop(s); the graph says: {V.md_text(ex.answer)}",
                          on_click=lambda q=ex.question: ss.update({K.ASK_QUESTION: q,
                                                                    K.ASK_AGAIN: AskAgain(question=q)}))


def unfinished_block(t: Trace, project: str) -> None:
    """A run that stopped before its answer: where, and Resume or Continue step by step."""
    st.warning(f"This run stopped before its answer ({V.md_text(R.where_stopped(t))}).")
    c1, c2, _ = st.columns([1, 1, 3])
    if c1.button("Resume", type="primary", help="Go on from where it stopped, as it was set up"):
        ss[K.ASK_RESUME] = t.run_id
        st.rerun()
    if c2.button("Continue step by step"):
        engine, model_info, _ = ui.engine_or_stop(settings_from_trace(t, project))
        try:
            ss[K.EXPLORE] = R.explore_from_trace(engine, settings_from_trace(t, project), t, model_info=model_info)
        except ValueError as err:  # a graph indexed again since the run: its ids are gone
            st.error(f"Cannot continue this run step by step: {V.md_text(err)}. Ask its question again.")
        else:
            st.switch_page("pages/explore.py")


def answer_blocks(t: Trace, graph: GraphStore, store: Any, project: str) -> None:
    """The answer (a guess says so first, with its candidates), the person's choice, the local draft, how the
    question was read, and the topic entities: each way to ask again sets K.ASK_AGAIN for the next run."""
    tried = DepthPlan.from_dict(t.plan).trials if t.plan else ()
    finished = not R.is_unfinished(t)
    typed = str(ss.get(K.ASK_QUESTION) or "")
    if typed.strip() and not V.same_question(typed, t.question):  # the box holds another question, not yet asked
        st.caption(f"The answer below is to the question asked before: “{V.md_text(t.question)}”. Ask to search "
                   "the one in the box.")
    guess = finished and bool(t.candidates) and t.is_guess()
    if guess:  # a guess says so plainly and shows the candidates before the answer
        st.warning(N.guess_words(t), icon=":material/help:")
        pick.answers_block(t, graph, store)
    B.answer_block(t, guess_said=guess, on_hops=lambda n: ss.__setitem__(K.ASK_AGAIN, AskAgain(
        question=t.question, seeds=tuple(t.seeds), hops=n, tried=tried,
        settings=settings_from_trace(t, project))))
    if finished and not guess:  # "This is the answer" once there is one (resuming would answer anew)
        pick.answers_block(t, graph, store)  # the person's choice, saved apart from the search's
    B.draft_block(t, project)
    if finished:  # how the question was read; corrected, it is searched again (a new run)
        run_settings = settings_from_trace(t, project)
        reading_block(t, graph, run_settings, on_again=lambda edit: (ss.__setitem__(
            K.ASK_AGAIN, AskAgain(question=t.question, seeds=tuple(t.seeds), hops=edit.hops,
                                  tried=tried if edit.hops else (), settings=run_settings, reading=edit.reading)),
            st.rerun()))
    B.seeds_block(t, graph, on_again=lambda chosen: again_from(t, chosen))


def again_from(t: Trace, chosen: list[str]) -> None:
    """Ask the run's question again from the topic entities a person chose. A start chosen for the questions to come
    (the "Starting from" banner) becomes these, so the banner and the next question agree with the run shown."""
    ss[K.ASK_AGAIN] = AskAgain(question=t.question, seeds=tuple(chosen))
    if ss.get(K.ASK_SEEDS):
        ss[K.ASK_SEEDS] = list(chosen)
    st.rerun()


def forcer(t: Trace, project: str, store: Any) -> Callable[[dict[str, Any]], None]:
    """What "force it in" does on this run: replay it with the person's override and show the new run."""
    def force(f: dict[str, Any]) -> None:
        s = settings_from_trace(t, project)
        engine, model_info, _ = ui.engine_or_stop(s)
        try:
            with st.spinner("Replaying the run with your override…"):
                ex = F.force_in(engine, s, t, f, store, follow=True, model_info=model_info)
        except ValueError as err:
            st.error(f"Cannot force it in: {V.md_text(err)}")
            return
        show(ex.saver(engine, None).trace(ex.state))
        st.rerun()

    return force


def pictures_tabs(t: Trace, graph: GraphStore, diag: list[dict[str, Any]]) -> None:
    """The run's reasoning chains, its search replayed depth by depth, and its evidence."""
    tabs = st.tabs(["Reasoning chains", "Search replay", "Evidence"], key=K.ASK_TAB, on_change="rerun")
    if tabs[0].open:
        with tabs[0]:
            B.chains_picture(t, graph)
    if tabs[1].open:
        with tabs[1]:
            depths = sorted({int(s.depth) for s in t.steps})
            shown = st.select_slider("Replay up to depth", depths, value=depths[-1], key=K.ASK_DEPTH) \
                if len(depths) > 1 else (depths[-1] if depths else None)
            B.frontier_picture(t, graph, shown, diag)
    if tabs[2].open:
        with tabs[2]:
            B.evidence_block(t, graph)
