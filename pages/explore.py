"""Explore: the search one stage at a time. The person keeps or drops candidates in the table or by clicking them
in the picture, can go back and branch, and can ask "why not X?" and force it in. The run is saved from its start
and named in the address (?run=…&project=…), so a reloaded page goes on where it was. Each click runs the page
once: the buttons act in their callbacks, before the page is drawn. The blocks are in explorer/explore_blocks.py,
in the order they are drawn here."""
from __future__ import annotations

import streamlit as st

from explorer import shell
from explorer import projects
from explorer import ui
from explorer import blocks as B
from explorer import drafts as D
from explorer import explore_blocks as E
from tog_core.app.session import K

shell.ensure()  # a deep link on a fresh server runs this page without app.py

info, graph = projects.need_project()
st.title("Explore step by step")
ui.owner()  # runs kept per person (TOG_RUN_OWNER): nobody searches before the page knows whose run it saves
if (withheld := ui.key_notice()):
    st.info(withheld)
ex = E.current()  # this session's, or the run in the address (a reloaded page), continued
if ex is None:
    E.start_block(graph)
    st.stop()

engine, model_info, notes = ui.engine_or_stop(ex.settings)
ui.put_in_address(ex.run_id)
state = ex.state
E.run_header(ex, notes)
# Everything between the run's header and the pictures is one container: the stage's note, warnings, overrides and
# diagnosis vary in number, and would otherwise move the tabs, so that the browser built the picture component
# (and its vis-network page) anew on most clicks instead of drawing the next picture into it.
with st.container():
    choice: set[str] = set()
    if ex.unsaved:
        st.warning(ex.unsaved)
    if not state.done:
        choice = E.stage_block(engine, ex)
    else:
        D.finished(ex)  # a finished run keeps no ticks (those kept for a step it went past elsewhere: said)
    trace = ex.saver(engine, None).trace(state)
    d = ui.as_dict(trace)  # the pictures read the trace JSON (the stable format), made once for the blocks too
    if state.done:
        B.answer_block(trace)
    E.overrides_and_back(engine, ex, trace)
    diag = B.diagnosis_block(trace, graph, key=K.EXPLORE_EXPECT, on_force=E.forcer(engine, ex, trace, model_info),
                             force_help=B.FORCE_WAITS,
                             pending=(ex.proposal.step, choice) if not state.done and ex.proposal else None)
E.pictures_tabs(ex, graph, d, diag, choice)
