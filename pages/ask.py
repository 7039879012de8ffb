"""Ask: one automatic ToG run with live progress and Stop, the answer stated plainly, "why not X?", pictures and
evidence. The run id is in the address (?run=…), so a reloaded page finds its run, finished or not. The blocks are
in explorer/ask_blocks.py, in the order they are drawn here."""
from __future__ import annotations

import streamlit as st

from explorer import shell
from explorer import projects
from explorer import ui
from explorer import ask_blocks as A
from explorer import blocks as B
from tog_core.app import runner as R
from tog_core.app import views as V
from tog_core.app.session import AskAgain, K
from tog_core.tog.trace import Trace

shell.ensure()  # a deep link on a fresh server runs this page without app.py

ss = st.session_state
info, graph = projects.need_project()
project, store = ss[K.PROJECT_OK], ui.store()
st.title("Ask the knowledge graph")
if (withheld := ui.key_notice()):
    st.info(withheld)
A.forget_other_project(project)  # the project was switched: its answer goes with it

if ss.pop(K.ASK_STOPPED, False) and ss.get(K.ASK_RUN):  # Stop was pressed during a run: answer from what it found
    A.answer_stopped(ss.pop(K.ASK_RUN), store, project)
if K.ASK_TRACE not in ss and (wanted := st.query_params.get("run")):  # a reloaded page: the run in the address
    if saved := ui.run_in_address(store, wanted):  # on its own project
        ss[K.ASK_TRACE] = saved
        ss.setdefault(K.ASK_QUESTION, saved.question)

seeds = A.start_entities()
asked = A.question_form()
progress = st.container()  # always here: a run's progress goes in, and what follows keeps its place
again: AskAgain | None = ss.pop(K.ASK_AGAIN, None)
resume = ss.pop(K.ASK_RESUME, None)
question = (ss.get(K.ASK_QUESTION) or "").strip()
if again:
    asked, question, seeds = True, again.question, list(again.seeds)
if asked and not question:
    st.warning("Type a question first.")
elif asked:  # "Answer at N hops" asks again as the earlier run was set up
    if (shown := ss.get(K.ASK_TRACE)) and not V.same_question(shown.question, again.question if again else question):
        ss[K.ASK_EXPECT] = ""  # "Why not X?" was asked of the other question (set, not dropped: the box empties too)
    A.ask(progress, again or AskAgain(question=question), seeds, store)
elif resume and (saved := A.load(store, resume)):
    A.resume(progress, resume, saved, store, project)

if note := getattr(store, "note", lambda: "")():  # the run store is down: runs are kept on this machine
    st.warning(note)
t: Trace | None = ss.get(K.ASK_TRACE)
if t is None:
    if not asked:  # an empty page: questions this graph can answer
        A.examples_block(project)
    st.stop()
if projects.project() is None:  # the graph went away since the page began (a store stopped during the run)
    B.answer_block(t)  # what the run found: the rest of the page needs the graph
    if not t.error:  # else the run's error says it in its own words
        st.error(projects.cannot_open())
    st.stop()
if (saved_as := ss.get(K.ASK_SAVED_AS)) and len(saved_as) == 4 and tuple(saved_as[:2]) == (t.run_id, t.revision):
    # what saving Stop's answer said, while that very trace is shown (the run resumed and saved since: said no more)
    st.info(V.md_text(saved_as[2]), icon=":material/call_split:" if saved_as[3] == "branched" else ":material/warning:")
if R.is_unfinished(t):
    A.unfinished_block(t, project)
A.answer_blocks(t, graph, store, project)
diag = B.diagnosis_block(t, graph, key=K.ASK_EXPECT, on_force=A.forcer(t, project, store))
A.pictures_tabs(t, graph, diag)
