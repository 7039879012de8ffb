"""Saved runs: list, open (pictures again), compare two side by side, download exports."""
from __future__ import annotations

import pandas as pd
import streamlit as st

import ui
from tog_core.app import session as S
from tog_core.render.export import export_html, export_json, export_markdown
from tog_core.app.session import K
from tog_core.render.viz import chains_html, frontier_html

ss = st.session_state
st.title("Saved runs")
store = ui.store()
rows = S.run_rows(store)
for p in store.problems():
    st.warning(f"Skipped an unreadable run file: {p}")
if not rows:
    st.info("No saved runs yet: ask a question first.")
    st.stop()
st.dataframe(pd.DataFrame(rows).drop(columns=["run"]), hide_index=True, width="stretch")
names = {r["run"]: f"{r['time']} · {r['question'][:70]}" for r in rows}


def load(run_id: str) -> dict | None:
    try:
        return store.load(run_id).to_dict()
    except (FileNotFoundError, ValueError) as err:
        st.error(f"Cannot open this run: {err}")
        return None


tab_open, tab_compare = st.tabs(["Open a run", "Compare two runs"])
with tab_open:
    rid = st.selectbox("Run", list(names), format_func=names.get, key=K.RUNS_OPEN)
    t = load(rid) if rid else None
    if t:
        st.markdown(f"**{S.md_text(t['question'])}**")
        st.caption(f"stop reason: {t.get('stop_reason') or 'unfinished'} · model {t['config'].get('model')}"
                   + (f" · branch of {t['parent_run']}" if t.get("parent_run") else ""))
        st.markdown(S.md_text(t.get("answer") or "(no answer yet)"))
        base = f"tog-{t['run_id']}"
        with st.container(horizontal=True):
            st.download_button("JSON trace", export_json(t), f"{base}.json", "application/json")
            st.download_button("Markdown report", export_markdown(t), f"{base}.md", "text/markdown")
            st.download_button("Standalone HTML", export_html(t), f"{base}.html", "text/html")
        over = S.overrides(t)
        if over:
            st.caption("Overrides")
            st.dataframe(pd.DataFrame(over), hide_index=True, width="stretch")
        c1, c2 = st.columns(2)
        with c1:
            ui.picture(chains_html(t, height="380px"), 430)
        with c2:
            ui.picture(frontier_html(t, height="380px"), 430)

with tab_compare:
    ids = list(names)
    c1, c2 = st.columns(2)
    a = c1.selectbox("Run A", ids, format_func=names.get, key=K.RUNS_A)
    b = c2.selectbox("Run B", ids, index=min(1, len(ids) - 1), format_func=names.get, key=K.RUNS_B)
    ta, tb = (load(a) if a else None), (load(b) if b else None)
    if ta and tb:
        st.dataframe(pd.DataFrame(S.compare_rows(ta, tb)), hide_index=True, width="stretch")
        with c1:
            ui.picture(chains_html(ta, height="320px"), 370)
        with c2:
            ui.picture(chains_html(tb, height="320px"), 370)
