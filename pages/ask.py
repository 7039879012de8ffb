"""Ask: one automatic ToG run with live progress and Stop, the answer stated plainly, "why not X?", pictures and
evidence. The run id is in the address (?run=…), so a reloaded page finds its run, finished or not."""
from __future__ import annotations

import streamlit as st

from explorer import shell
from explorer import ui
from explorer import blocks as B
from tog_core.app import runner as R
from tog_core.app.session import K, settings_from_trace
from tog_core.runs.files import new_run_id

shell.ensure()  # a deep link on a fresh server runs this page without app.py

ss = st.session_state
info, graph = ui.need_project()
project, store = ss[K.PROJECT_OK], ui.store()
st.title("Ask the knowledge graph")
if (withheld := ui.key_notice()):
    st.info(withheld)


def load(run_id: str) -> dict | None:
    try:
        return store.load(run_id).to_dict()
    except (FileNotFoundError, ValueError):
        return None


def show(trace: dict) -> None:
    ss[K.ASK_TRACE] = trace
    ss.pop(K.ASK_DEPTH, None)
    st.query_params["run"] = trace["run_id"]


if ss.pop(K.ASK_STOPPED, False) and ss.get(K.ASK_RUN):  # Stop was pressed during a run: answer from what it found
    saved = load(ss.pop(K.ASK_RUN))
    if saved and R.is_unfinished(saved):
        engine, model_info, _ = ui.engine_or_stop(settings_from_trace(saved, project))
        show(R.finish_stopped(engine, saved, store, model_info=model_info).to_dict())
if K.ASK_TRACE not in ss and st.query_params.get("run"):  # a reloaded page: the run named in the address
    saved = load(st.query_params["run"])
    if saved:
        ss[K.ASK_TRACE] = saved
        ss.setdefault(K.ASK_QUESTION, saved["question"])

seeds = ss.get(K.ASK_SEEDS) or []
if seeds:
    c1, c2 = st.columns([5, 1])
    c1.info("Starting from: " + ", ".join(seeds))
    if c2.button("Clear start"):
        ss[K.ASK_SEEDS] = []
        st.rerun()
with st.form("ask_form", border=False, enter_to_submit=False):
    st.text_area("Question", key=K.ASK_QUESTION, height=80,
                 placeholder="Type a question about the entities of this project (Ctrl+Enter or the button asks)")
    asked = st.form_submit_button("Ask", type="primary")
progress = st.container()  # always here: a run's progress goes in, and what follows keeps its place
again, resume = ss.pop(K.ASK_AGAIN, None), ss.pop(K.ASK_RESUME, None)
question = (ss.get(K.ASK_QUESTION) or "").strip()
if again:
    asked, question, seeds = True, again["question"], again["seeds"]
if asked and not question:
    st.warning("Type a question first.")
elif asked:
    again = again or {}  # "Answer at N hops" asks again as the earlier run was set up
    engine, model_info, notes = ui.engine_or_stop(again.get("settings"))
    run_id = ss[K.ASK_RUN] = new_run_id()
    st.query_params["run"] = run_id
    ss.pop(K.ASK_TRACE, None)
    trace = B.live_run(progress, lambda **cb: R.run_question(engine, question, seeds=seeds or None, store=store,
                                                   model_info=model_info, run_id=run_id, hops=again.get("hops"),
                                                   tried=again.get("tried", ()), **cb),
                       max_depth=engine.config.depth, llm=engine.llm)
    ss.pop(K.ASK_RUN, None)
    show(trace.to_dict())
elif resume and (saved := load(resume)):
    engine, model_info, _ = ui.engine_or_stop(settings_from_trace(saved, project))
    ss[K.ASK_RUN] = resume
    trace = B.live_run(progress, lambda **cb: R.resume_question(engine, saved, store, model_info=model_info, **cb),
                       max_depth=engine.config.depth, label="Resuming the run…", llm=engine.llm)
    ss.pop(K.ASK_RUN, None)
    show(trace.to_dict())

if note := getattr(store, "note", lambda: "")():  # the run store is down: runs are kept on this machine
    st.warning(note)
t = ss.get(K.ASK_TRACE)
if not t:
    st.stop()
if ui.project() is None:  # the graph went away since the page began (a store stopped during the run)
    B.answer_block(t)  # what the run found: the rest of the page needs the graph
    if not t.get("error"):  # else the run's error says it in its own words
        st.error(f"Cannot read the project now: {ss.get(K.PROJECT_ERROR)}")
    st.stop()
if R.is_unfinished(t):
    where = t.get("state") or {}
    st.warning(f"This run stopped before its answer (at depth {where.get('depth')}, {where.get('stage')}).")
    c1, c2, _ = st.columns([1, 1, 3])
    if c1.button("Resume", type="primary", help="Go on from where it stopped, as it was set up"):
        ss[K.ASK_RESUME] = t["run_id"]
        st.rerun()
    if c2.button("Continue step by step"):
        engine, model_info, _ = ui.engine_or_stop(settings_from_trace(t, project))
        ss[K.EXPLORE] = R.explore_from_trace(engine, settings_from_trace(t, project), t, model_info=model_info)
        st.switch_page("pages/explore.py")
B.answer_block(t, on_hops=lambda n: ss.__setitem__(K.ASK_AGAIN, {
    "question": t["question"], "seeds": [x["title"] for x in t.get("seeds") or []], "hops": n,
    "tried": (t.get("plan") or {}).get("trials") or (), "settings": settings_from_trace(t, project)}))
B.draft_block(t, project)
B.seeds_block(t, graph, on_again=lambda chosen: (ss.__setitem__(K.ASK_AGAIN, {"question": t["question"],
                                                                               "seeds": chosen}), st.rerun()))


def force(f: dict) -> None:
    s = settings_from_trace(t, project)
    engine, model_info, _ = ui.engine_or_stop(s)
    try:
        with st.spinner("Replaying the run with your override…"):
            ex = R.force_in(engine, s, t, f, store, follow=True, model_info=model_info)
    except ValueError as err:
        st.error(f"Cannot force it in: {err}")
        return
    show(ex.saver(engine, None).trace(ex.state).to_dict())
    st.rerun()


diag = B.diagnosis_block(t, graph, key=K.ASK_EXPECT, on_force=force)
tabs = st.tabs(["Reasoning chains", "Search replay", "Evidence"], key=K.ASK_TAB, on_change="rerun")
if tabs[0].open:
    with tabs[0]:
        B.chains_picture(t, graph)
if tabs[1].open:
    with tabs[1]:
        depths = sorted({int(s["depth"]) for s in t.get("steps") or []})
        shown = st.select_slider("Replay up to depth", depths, value=depths[-1], key=K.ASK_DEPTH) \
            if len(depths) > 1 else (depths[-1] if depths else None)
        B.frontier_picture(t, graph, shown, diag)
if tabs[2].open:
    with tabs[2]:
        B.evidence_block(t, graph)
