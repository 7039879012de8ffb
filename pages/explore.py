"""Explore: the search one stage at a time; the person edits what is kept, can go back and branch."""
from __future__ import annotations

import pandas as pd
import streamlit as st

import ui
from tog_core.app import session as S
from tog_core.tog.linking import link_question, search_entities
from tog_core.llm.client import LLMError
from tog_core.app.session import K
from tog_core.render.viz import chains_html, frontier_html

ss = st.session_state
info, graph = ui.need_project()
st.title("Explore step by step")
ex: S.Exploration | None = ss.get(K.EXPLORE)
if ex is not None and ex.settings.project != ui.settings().project:
    ex = ss[K.EXPLORE] = None  # another project was opened

if ex is None:
    q = st.text_input("Question", key=K.EXPLORE_QUESTION,
                      placeholder="In which town was the founder of the Lanternwright Guild born?")
    found = [s.title for s in link_question(q, graph)] if q.strip() else []
    term = st.text_input("Find topic entities", key=K.EXPLORE_SEARCH, placeholder="type a name to add it")
    options = list(dict.fromkeys(ss.get(K.EXPLORE_SEEDS, []) + found +
                                 [t for _, t, _ in search_entities(graph, term, limit=10)]))
    if ss.get(K.EXPLORE_LINKED) != q:  # a new question: start from its linked entities
        ss[K.EXPLORE_LINKED], ss[K.EXPLORE_SEEDS] = q, found
    seeds = st.multiselect("Topic entities (depth 0)", options, key=K.EXPLORE_SEEDS,
                           help="Linked from the question; add or remove before the search starts.")
    if st.button("Start", type="primary", disabled=not (q.strip() and seeds)):
        engine, model_info, _ = ui.engine_or_stop()
        ss[K.EXPLORE] = S.explore_start(engine, ui.settings(), q, seeds, model_info=model_info)
        st.rerun()
    st.stop()

engine, model_info, notes = ui.engine_or_stop(ex.settings)
state = ex.state
st.markdown(f"**{S.md_text(state.question)}**")
st.caption(f"run {ex.run_id}" + (f" · branch of {ex.parent_run}" if ex.parent_run else "") +
           " · start: " + ", ".join(S.seed_titles(state.seeds)))
for n in notes:
    st.caption(n)
if not state.done:
    try:
        S.explore_propose(engine, ex)
    except LLMError as err:
        st.error(f"The model failed: {err}")
        st.stop()
    step = ex.proposal.step
    st.subheader(f"Depth {step.depth} · {step.stage}")
    if step.note:
        st.caption(step.note)
    for f in step.fallbacks:
        st.warning(f"Fallback {f['name']} ({f.get('where', '')}): {f.get('detail', '')}")
    rows = pd.DataFrame(S.candidate_rows(ex.proposal))
    edited = st.data_editor(
        rows, key=K.EXPLORE_EDITOR + f"_{len(state.steps)}_{ex.run_id}", hide_index=True, width="stretch",
        disabled=[c for c in rows.columns if c != "keep"],
        column_order=["keep", "score", "candidate", "from", "reason", "scored by"],
        column_config={"keep": st.column_config.CheckboxColumn("keep", help="pre-set to the automatic choice"),
                       "score": st.column_config.NumberColumn(format="%.3f")})
    with st.container(horizontal=True):
        if st.button("Continue", type="primary", help="Keep the ticked candidates"):
            S.explore_apply(engine, ex, S.choice_from_rows(edited.to_dict("records")), ui.store())
            st.rerun()
        if st.button("Auto-finish", help="Let the automatic policy search to the end"):
            with st.spinner("Searching to the end…"):
                S.explore_finish(engine, ex, ui.store(), auto=True)
            st.rerun()
        if st.button("Stop & answer"):
            with st.spinner("Answering…"):
                S.explore_finish(engine, ex, ui.store(), auto=False)
            st.rerun()
else:
    st.subheader("Answer")
    st.caption(f"stop reason: {state.stop_reason}")
    st.markdown(S.md_text(state.answer))
trace = ex.saver(engine, None).trace(state).to_dict()
over = S.overrides(trace)
if over:
    st.caption("Your overrides (pink ✎ in the search picture)")
    st.dataframe(pd.DataFrame(over), hide_index=True, width="stretch")
with st.container(horizontal=True, vertical_alignment="bottom"):
    back = ex.back_depths()
    if back:
        k = st.selectbox("Back to depth", back, key=K.EXPLORE_BACK, width=160)
        if st.button("Re-run from there", help="This run stays saved; a new branch starts at that depth"):
            ss[K.EXPLORE] = S.explore_back(engine, ex, k, ui.store())
            st.rerun()
    if st.button("New question"):
        ss[K.EXPLORE] = None
        st.rerun()

left, right = st.columns(2)
with left:
    st.caption("Search so far")
    ui.picture(frontier_html(trace, height="420px"), 470)
with right:
    st.caption("Reasoning chains")
    ui.picture(chains_html(trace, height="420px"), 470)
