"""Saved runs: this project's runs (all projects on request), search, open (pictures, exports with source text),
resume an unfinished run or continue it step by step, delete, and compare two runs as one path diff."""
from __future__ import annotations

import pandas as pd
from collections import Counter

import streamlit as st

from explorer import shell
from explorer import projects
from explorer import ui
from explorer import blocks as B
from explorer import drafts as D
from explorer import pick
from tog_core.app import runner as R
from tog_core.app import run_notes as N
from tog_core.app import views as V
from tog_core.app.compare_pick import default_pair
from tog_core.app.inputs import NAME_MAX
from tog_core.app.session import K, settings_from_trace
from tog_core.errors import UsageError
from tog_core.render.cache import trace_key
from tog_core.render.chains import compare_html, path_diff
from tog_core.render.export import export_json
from tog_core.render.export_html import export_html
from tog_core.render.export_md import export_markdown
from tog_core.tog.trace import Trace

shell.ensure()  # a deep link on a fresh server runs this page without app.py

ss = st.session_state
st.title("Saved runs")
store = ui.store()
cur = projects.project()
project = ss.get(K.PROJECT_OK) if cur else None
listed, damaged = ui.list_runs(store)
for p in damaged:
    st.warning(f"Damaged, not listed: {V.md_text(p)}")
with st.container(horizontal=True, vertical_alignment="bottom"):
    search = st.text_input("Search questions and answers", key=K.RUNS_SEARCH, width=420, max_chars=NAME_MAX)
    every = st.toggle("All projects", key=K.RUNS_ALL, disabled=project is None)
rows = V.run_rows(listed, project=None if (every or project is None) else project, search=search)
if not rows:
    st.info("No saved runs" + (" match that search." if search.strip() else
                               " for this project yet: ask a question first."))
    st.stop()
# the answer next to its question, before the wide columns: a 1000 px window shows both without scrolling
table = pd.DataFrame(rows).drop(columns=["run"])
first = [c for c in ("project", "question", "answer", "time", "stop") if c in table.columns]
st.dataframe(table, hide_index=True, width="stretch", column_order=first + [c for c in table.columns if c not in first],
             column_config={"question": st.column_config.TextColumn(width=300),
                            "answer": st.column_config.TextColumn(width="medium")})
names = {r["run"]: f"{r['time']} · {r['question']}" + ("" if r["stop"] != "unfinished" else "  (unfinished)")
         for r in rows}
# two runs of one question made within one second (a branch back to depth 1) read alike: each says its run id then
seen = Counter(names.values())
names = {rid: label + (f" · {rid}" if seen[label] > 1 else "") for rid, label in names.items()}
stamps = {r.run_id: r.stamp for r in listed}


def load(run_id: str) -> Trace | None:
    """A run's whole trace, read when the person opens it (kept for this session while it is unchanged)."""
    return ui.open_run(store, run_id, stamps.get(run_id, ""))


tabs = st.tabs(["Open a run", "Compare two runs"], key=K.RUNS_TAB, on_change="rerun")
if tabs[0].open:
    with tabs[0]:
        if ss.get("_runs_on", project) != project:  # the sidebar switched project: the run open on the other goes
            ss.pop(K.RUNS_OPEN, None)
        ss["_runs_on"] = project
        rid = st.selectbox("Run", list(names), format_func=names.get, key=K.RUNS_OPEN, index=None,
                           placeholder="Choose a run to open")
        tr = load(rid) if rid else None
        if tr is not None:
            ss.pop("_runs_on")  # its project, opened on the rerun, is not a switch by the person
            if not (here := ui.on_its_project(tr)):  # a run of another project opens that project (once)
                st.error(ui.elsewhere(tr, "it cannot be resumed or continued, its pictures are not drawn and its "
                                          "exports have no source text on"))
            ss["_runs_on"] = project
            d = ui.as_dict(tr)  # the exports read the trace JSON (the stable format)
            graph = projects.project()[1] if cur and here else None
            st.markdown(f"**{V.md_text(tr.question)}**")
            # the trace's words (a model typed by whoever ran it, a hand-edited file): shown as their characters
            st.caption(V.md_text(f"{N.stop_words(tr.stop_reason).capitalize()} · model {N.model_name(tr)}"
                                 + (f" · branch of {tr.parent_run}" if tr.parent_run else "")))
            with st.container(horizontal=True):
                if R.is_unfinished(tr) and cur and here:
                    if st.button("Resume on the Ask page", type="primary", icon=":material/play_arrow:"):
                        ss[K.ASK_RESUME], ss[K.ASK_QUESTION] = tr.run_id, tr.question
                        st.switch_page("pages/ask.py")
                    if st.button("Continue step by step", icon=":material/footprint:"):
                        s = settings_from_trace(tr, ss[K.PROJECT_OK])
                        engine, model_info, _ = ui.engine_or_stop(s)
                        try:
                            ss[K.EXPLORE] = D.reopen(engine, s, tr, model_info=model_info)
                        except ValueError as err:  # a graph indexed again since the run: its ids are gone
                            st.error(f"Cannot continue this run step by step: {V.md_text(err)}. Ask its question "
                                     "again on the Ask page.")
                        else:
                            st.switch_page("pages/explore.py")
                full = V.with_evidence(d, graph) if graph is not None else d
                base = f"tog-{tr.run_id}"
                st.download_button("JSON trace", export_json(full), f"{base}.json", "application/json")
                st.download_button("Markdown report", export_markdown(full), f"{base}.md", "text/markdown")
                st.download_button("Standalone HTML", export_html(full), f"{base}.html", "text/html")
                with st.popover("Delete", icon=":material/delete:"):
                    st.caption("The run's file is removed; branches made from it stay.")
                    if st.button("Delete this run", type="primary"):
                        try:
                            store.delete(tr.run_id)
                            D.forget(tr.run_id)  # the ticks kept with it on Explore go too
                        except (OSError, UsageError) as err:  # a read-only folder, a store that is down
                            st.error(f"Cannot delete this run: {V.md_text(err)}")
                        else:
                            st.rerun()
            B.answer_block(tr)
            pick.choice_note(tr)  # a person's choice of answer, said apart from the search's
            over = V.overrides(tr)
            if over:
                st.caption("Overrides")
                st.dataframe(pd.DataFrame(over), hide_index=True, width="stretch")
            if graph is not None:
                B.chains_picture(tr, graph, 420)
                B.frontier_picture(tr, graph, None, [], 520)
if tabs[1].open:
    with tabs[1]:
        ids = list(names)
        pair = default_pair(rows, {r.run_id: r.project for r in listed})
        if pair is not None and ss.get(K.RUNS_A) not in ids:  # opened afresh: the newest two runs of one question
            ss[K.RUNS_A], ss[K.RUNS_B], ss["_runs_a_seen"] = pair.a, pair.b, pair.a
        c1, c2 = st.columns(2)
        a = c1.selectbox("Run A", ids, format_func=names.get, key=K.RUNS_A)
        if ss.get("_runs_a_seen") != a:  # a new run A: compare it with its parent or the same question's last run
            ss["_runs_a_seen"], ss[K.RUNS_B] = a, V.compare_default(rows, a)
        b = c2.selectbox("Run B", ids, format_func=names.get, key=K.RUNS_B)
        if pair is not None and not pair.same and (a, b) == (pair.a, pair.b):  # only of the pair chosen for them
            st.info("No two of these runs ask the same question, so the newest two are compared, and the chains of "
                    "different questions rarely meet. Ask a question again (with another width, pruner or model) "
                    "to see here what that changed.")
        if pair is not None and pair.same and (a, b) == (pair.a, pair.b):
            row = {r["run"]: r for r in rows}
            st.caption(f"Compared: the newest two runs that ask the same question on one project, "
                       f"“{V.md_text(row[a]['question'])}”: {V.md_text(row[a]['time'])} (A) and "
                       f"{V.md_text(row[b]['time'])} (B). "
                       "Pick any two runs above.")
        ra, rb = load(a), load(b)
        if ra is not None and rb is not None:
            ta, tb = ui.as_dict(ra), ui.as_dict(rb)  # the picture reads the trace JSON
            if ra.question.strip() != rb.question.strip() and a != b:
                st.info("Run B asks another question, so their chains rarely meet; pick a run of the same question "
                        "as Run B to see what a setting or an override changed.")
            diff = path_diff(ta, tb)
            st.caption(f"{len(diff['shared'])} link(s) in both runs · {len(diff['only_a'])} only in A · "
                       f"{len(diff['only_b'])} only in B")
            graph = projects.project()[1] if cur else None
            if graph is not None and not (V.made_on(ra, str(project)) and V.made_on(rb, str(project))):
                st.caption("The colours are the open project's entity types: a run of another project is drawn "
                           "without its types.")
            both = {"chains": ta["chains"] + tb["chains"]}
            drawn_with = projects.version(project) if graph is not None else None  # its entity types colour it
            page = ui.cached(("compare", trace_key(ta), trace_key(tb), drawn_with),
                             lambda: compare_html(ta, tb, types=B.types_of(graph, both) if graph is not None else None))
            ui.picture(page, 520)
            st.dataframe(pd.DataFrame(V.compare_rows(ra, rb)), hide_index=True, width="stretch")
