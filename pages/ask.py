"""Ask: one automatic ToG run with live progress and Stop, the answer stated plainly, "why not X?", pictures and
evidence. The run id is in the address (?run=…), so a reloaded page finds its run, finished or not."""
from __future__ import annotations

from typing import Any

import streamlit as st

from explorer import shell
from explorer import projects
from explorer import ui
from explorer import blocks as B
from explorer import pick
from explorer.reading import reading_block
from tog_core.app import runner as R
from tog_core.app import views as V
from tog_core.app.session import AskAgain, K, settings_from_trace
from tog_core.runs.files import new_run_id
from tog_core.tog.trace import DepthPlan, Trace

shell.ensure()  # a deep link on a fresh server runs this page without app.py

ss = st.session_state
info, graph = projects.need_project()
project, store = ss[K.PROJECT_OK], ui.store()
st.title("Ask the knowledge graph")
if (withheld := ui.key_notice()):
    st.info(withheld)


def load(run_id: str) -> Trace | None:
    try:
        return store.load(run_id)
    except (FileNotFoundError, ValueError):
        return None


def show(trace: Trace) -> None:
    ss[K.ASK_TRACE] = trace
    ss.pop(K.ASK_DEPTH, None)
    ui.put_in_address(trace.run_id)


def ours(trace: Trace) -> bool:
    """Whether a run was made on the project open in the sidebar (a run that names no project is taken as ours)."""
    return not trace.project or V.same_project(trace.project, project)


if (shown := ss.get(K.ASK_TRACE)) and not ours(shown):  # the project was switched: its answer goes with it
    ss.pop(K.ASK_TRACE)
    ui.put_in_address(None)


if ss.pop(K.ASK_STOPPED, False) and ss.get(K.ASK_RUN):  # Stop was pressed during a run: answer from what it found
    saved = load(ss.pop(K.ASK_RUN))
    if saved and R.is_unfinished(saved):
        engine, model_info, _ = ui.engine_or_stop(settings_from_trace(saved, project))
        show(R.finish_stopped(engine, saved, store, model_info=model_info))
if K.ASK_TRACE not in ss and (wanted := st.query_params.get("run")):  # a reloaded page: the run in the address
    if saved := ui.run_in_address(store, wanted):  # on its own project
        ss[K.ASK_TRACE] = saved
        ss.setdefault(K.ASK_QUESTION, saved.question)

seeds = ss.get(K.ASK_SEEDS) or []
if seeds:
    c1, c2 = st.columns([5, 1])
    c1.info("Starting from: " + ", ".join(seeds))
    if c2.button("Clear start"):
        ss[K.ASK_SEEDS] = []
        st.rerun()
with st.form("ask_form", border=False, enter_to_submit=True):
    st.text_area("Question", key=K.ASK_QUESTION, height=80,
                 placeholder="Type a question about the entities of this project (Ctrl+Enter or the button asks)")
    asked = st.form_submit_button("Ask", type="primary")
progress = st.container()  # always here: a run's progress goes in, and what follows keeps its place
again: AskAgain | None = ss.pop(K.ASK_AGAIN, None)
resume = ss.pop(K.ASK_RESUME, None)
question = (ss.get(K.ASK_QUESTION) or "").strip()
if again:
    asked, question, seeds = True, again.question, list(again.seeds)
if asked and not question:
    st.warning("Type a question first.")
elif asked:
    again = again or AskAgain(question=question)  # "Answer at N hops" asks again as the earlier run was set up
    engine, model_info, notes = ui.engine_or_stop(again.settings)
    run_id = ss[K.ASK_RUN] = new_run_id()
    ui.put_in_address(run_id)
    ss.pop(K.ASK_TRACE, None)
    trace = B.live_run(progress, lambda cb: R.run_question(engine, question, cb, seeds=seeds or None, hops=again.hops,
                                                           tried=again.tried, reading=again.reading, store=store,
                                                           model_info=model_info, run_id=run_id),
                       max_depth=engine.config.depth, llm=engine.llm)
    ss.pop(K.ASK_RUN, None)
    show(trace)
elif resume and (saved := load(resume)):
    engine, model_info, _ = ui.engine_or_stop(settings_from_trace(saved, project))
    ss[K.ASK_RUN] = resume
    trace = B.live_run(progress, lambda cb: R.resume_question(engine, saved, store, cb, model_info=model_info),
                       max_depth=engine.config.depth, label="Resuming the run…", llm=engine.llm)
    ss.pop(K.ASK_RUN, None)
    show(trace)

if note := getattr(store, "note", lambda: "")():  # the run store is down: runs are kept on this machine
    st.warning(note)
t: Trace | None = ss.get(K.ASK_TRACE)
if t is None:
    if not asked and (made := projects.examples(project)):  # an empty page: questions this graph can answer
        st.caption("Not sure what to ask? Questions made from this project's best-connected entities "
                   "(a click asks):")
        with st.container(horizontal=True):
            for i, ex in enumerate(made):
                st.button(ex.question, key=f"ask_example_{i}", help=f"{ex.hops} hop(s); the graph says: {ex.answer}",
                          on_click=lambda q=ex.question: ss.update({K.ASK_QUESTION: q,
                                                                    K.ASK_AGAIN: AskAgain(question=q)}))
    st.stop()
if projects.project() is None:  # the graph went away since the page began (a store stopped during the run)
    B.answer_block(t)  # what the run found: the rest of the page needs the graph
    if not t.error:  # else the run's error says it in its own words
        st.error(projects.cannot_open())
    st.stop()
if R.is_unfinished(t):
    st.warning(f"This run stopped before its answer ({R.where_stopped(t)}).")
    c1, c2, _ = st.columns([1, 1, 3])
    if c1.button("Resume", type="primary", help="Go on from where it stopped, as it was set up"):
        ss[K.ASK_RESUME] = t.run_id
        st.rerun()
    if c2.button("Continue step by step"):
        engine, model_info, _ = ui.engine_or_stop(settings_from_trace(t, project))
        ss[K.EXPLORE] = R.explore_from_trace(engine, settings_from_trace(t, project), t, model_info=model_info)
        st.switch_page("pages/explore.py")
tried = DepthPlan.from_dict(t.plan).trials if t.plan else ()
finished = not R.is_unfinished(t)
guess = finished and bool(t.candidates) and t.is_guess()
if guess:  # a guess says so plainly and shows the candidates before the answer
    st.warning(V.guess_words(t), icon=":material/help:")
    pick.answers_block(t, graph, store)
B.answer_block(t, guess_said=guess, on_hops=lambda n: ss.__setitem__(K.ASK_AGAIN, AskAgain(
    question=t.question, seeds=tuple(x.title for x in t.seeds), hops=n, tried=tried,
    settings=settings_from_trace(t, project))))
if finished and not guess:  # "This is the answer" once there is one (resuming would answer anew)
    pick.answers_block(t, graph, store)  # the person's choice, saved apart from the search's
B.draft_block(t, project)
if finished:  # how the question was read; corrected, it is searched again (a new run)
    run_settings = settings_from_trace(t, project)
    reading_block(t, graph, run_settings, on_again=lambda edit: (ss.__setitem__(
        K.ASK_AGAIN, AskAgain(question=t.question, seeds=tuple(x.title for x in t.seeds), hops=edit.hops,
                              tried=tried if edit.hops else (), settings=run_settings, reading=edit.reading)),
        st.rerun()))
B.seeds_block(t, graph, on_again=lambda chosen: (ss.__setitem__(K.ASK_AGAIN, AskAgain(question=t.question,
                                                                                       seeds=tuple(chosen))),
                                                  st.rerun()))


def force(f: dict[str, Any]) -> None:
    s = settings_from_trace(t, project)
    engine, model_info, _ = ui.engine_or_stop(s)
    try:
        with st.spinner("Replaying the run with your override…"):
            ex = R.force_in(engine, s, t, f, store, follow=True, model_info=model_info)
    except ValueError as err:
        st.error(f"Cannot force it in: {err}")
        return
    show(ex.saver(engine, None).trace(ex.state))
    st.rerun()


diag = B.diagnosis_block(t, graph, key=K.ASK_EXPECT, on_force=force)
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
