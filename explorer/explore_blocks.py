"""The Explore page's own blocks (pages/explore.py reads as the order they are drawn in): the exploration this
session holds or the address names, the start form, the run's header, the stage's candidates with Continue,
Auto-finish and Stop & answer, the overrides and the ways back, "force it in", and the pictures' tabs. Each button
acts in its callback or reruns the page, as before the move. Blocks shared with other pages are in
explorer/blocks.py; the logic is in tog_core.app.runner.
"""
from __future__ import annotations

from typing import Any
from collections.abc import Callable

import pandas as pd
import streamlit as st

from explorer import blocks as B
from explorer import drafts as D
from explorer import ui
from tog_core.app import force as F
from tog_core.app import runner as R
from tog_core.app import views as V
from tog_core.app.guide import step_help, step_pending
from tog_core.app.inputs import MAX_QUESTION_CHARS, NAME_MAX
from tog_core.app.session import K, settings_from_trace
from tog_core.graphrag.store import GraphStore
from tog_core.llm.errors import LLMError
from tog_core.render.chains import chains_html
from tog_core.render.frontier import frontier_html
from tog_core.tog.engine import ToGEngine
from tog_core.tog.limits import question_too_long
from tog_core.tog.linking import link_question, search_entities
from tog_core.tog.trace import Trace

ss = st.session_state


def current() -> R.Exploration | None:
    """The exploration of this session on the project open now, else the run named in the address, continued."""
    ex: R.Exploration | None = ss.get(K.EXPLORE)
    if ex is not None and ex.settings.project != ui.settings().project:
        ex = ss[K.EXPLORE] = None  # another project was opened
        ui.put_in_address(None)
    if ex is None and (wanted := st.query_params.get("run")):  # a reloaded page: the run in the address, continued
        if saved := ui.run_in_address(ui.store(), wanted):
            s0 = settings_from_trace(saved, ss[K.PROJECT_OK])
            engine0, model_info0, _ = ui.engine_or_stop(s0)
            try:
                ex = ss[K.EXPLORE] = D.reopen(engine0, s0, saved, model_info=model_info0)
            except (ValueError, KeyError) as err:  # a run of another version of the graph
                st.error(V.md_text(f"Cannot continue this run here: {err}"))
    return ex


def start_block(graph: GraphStore) -> None:
    """The question and its topic entities (linked from it, or found by name), and Start."""
    q = st.text_input("Question", key=K.EXPLORE_QUESTION, max_chars=MAX_QUESTION_CHARS,
                      placeholder="Type a question about the entities of this project")
    if too_long := question_too_long(q):  # checked before any linking: a long text pinned a core on every rerun
        st.error(f"Question: {V.md_text(too_long)}.")
    found = [s.title for s in link_question(q, graph)] if q.strip() and not too_long else []
    term = st.text_input("Find topic entities", key=K.EXPLORE_SEARCH, max_chars=NAME_MAX,
                         placeholder="type a name: the matches join the list below, pick them there")
    options = list(dict.fromkeys(ss.get(K.EXPLORE_SEEDS, []) + found +
                                 [t for _, t, _ in search_entities(graph, term, limit=10)]))
    if ss.get(K.EXPLORE_LINKED) != q:  # a new question: start from its linked entities
        ss[K.EXPLORE_LINKED], ss[K.EXPLORE_SEEDS] = q, found
    seeds = st.multiselect("Topic entities (depth 0)", options, key=K.EXPLORE_SEEDS,
                           help="Linked from the question; add or remove before the search starts.")
    if q.strip() and not found and not too_long:
        st.caption("No entity name was found in the question: pick the topic entities above.")
    if st.button("Start", type="primary", disabled=not (q.strip() and seeds) or bool(too_long)):
        engine, model_info, _ = ui.engine_or_stop()
        try:
            with st.spinner("Finding how many hops to search (one quick search per number of hops)…"):
                ex = ss[K.EXPLORE] = R.explore_start(engine, ui.settings(), q, seeds, model_info=model_info)
                ex.saver(engine, ui.store()).save(ex.state)  # saved before its first Continue
        except (LLMError, ValueError, OSError) as err:  # a scorer or store failing while the hops are tried
            st.error(f"Could not start the search: {V.md_text(err)}. Your question and topic entities are kept; "
                     "try again or change the pruner in the sidebar.")
            st.stop()
        st.rerun()


def run_header(ex: R.Exploration, notes: list[str]) -> None:
    """The question, the run (and the run it branched from), its start and settings; the hops before the first
    step."""
    state = ex.state
    st.markdown(f"**{V.md_text(state.question)}**")
    st.caption(V.md_text(f"run {ex.run_id}" + (f" · branch of {ex.parent_run}" if ex.parent_run else "")) +
               f" · width {ex.settings.width}, depth {ex.settings.depth}"
               + " · start: " + V.md_text(", ".join(V.seed_titles(state.seeds))) + "".join(f" · {n}" for n in notes))
    if ex.forced:  # what the press of "Force X in" kept, and what to do next
        st.info(V.md_text(ex.forced), icon=":material/call_split:")
    now = ui.settings()
    if not state.done and (now.width, now.depth) != (ex.settings.width, ex.settings.depth):
        st.info(f"The sidebar now says width {now.width}, depth {now.depth}; this run keeps width "
                f"{ex.settings.width}, depth {ex.settings.depth}, set when it started. The sidebar's apply to the "
                "next question (New question below).", icon=":material/tune:")
    if not state.done:  # once answered, the answer block shows the hops with the answer's own number marked
        B.hops_block(state.plan_record.to_dict() if state.plan_record else None, when=" before the first step",
                     note="At this depth the automatic choice is to answer; choose “Search one level deeper” to go on "
                          "(then the usual rules decide, up to the maximum depth).")


def stage_block(engine: ToGEngine, ex: R.Exploration) -> set[str]:
    """The stage's proposal: its candidates, ticked as the automatic choice, and Continue, Auto-finish and Stop &
    answer. Returns the ids the person keeps."""
    try:
        R.explore_propose(engine, ex)
    except LLMError as err:
        st.error(f"The model failed: {V.md_text(err)}")
        st.stop()
    step, pkey = ex.proposal.step, ex.proposal_key()
    held = ss.get(K.EXPLORE_CHOICE) or {}
    if held.get("key") != pkey:  # a new proposal: the automatic choice, the person's ticks before going back, or
        ids, whose, stale = D.start_ticks(ex)  # their unsaved ticks from before a reload (kept with the run)
        held = ss[K.EXPLORE_CHOICE] = {"key": pkey, "ids": ids, "version": 0, "whose": whose, "stale": stale}
    st.subheader(V.md_text(f"Depth {step.depth} · {step.stage}"))
    if (kept_says := V.keep_words(step, ex.proposal.auto_choice(), width=engine.config.width,
                                  relations_kept=engine.policy.relations_kept(engine))):
        st.caption(kept_says)  # why 6 relations are ticked at width 3 (the policy's numbers, read here)
    if held.get("whose") == "draft":
        st.info(D.RESTORED, icon=":material/restore:")
    elif held.get("stale"):
        st.info(V.md_text(held["stale"]), icon=":material/restore:")
    if held.get("whose") == "earlier":
        st.info(f"Ticked as you chose it on run {V.md_text(ex.parent_run)} before going back"
                + (" (the automatic choice differs)" if held["ids"] != ex.proposal.auto_choice() else "")
                + ": change the ticks, or press Continue to keep them.", icon=":material/undo:")
    elif held.get("whose") == "changed":
        st.info(f"A choice above this step differs from run {V.md_text(ex.parent_run)}, so it starts from the "
                "automatic choice, "
                "not from your ticks there (they were made on other chains).", icon=":material/undo:")
    if step.note:
        st.caption(V.md_text(step.note))
    for f in step.fallbacks:
        st.warning(V.md_text(f"Fallback {f['name']} ({f.get('where', '')}): {f.get('detail', '')}"))
    editor = f"{K.EXPLORE_EDITOR}_{pkey}_{held['version']}"
    if step.stage == "evaluate":  # two outcomes, one of which is taken: a single choice, not two ticks
        labels = {c.id: c.label for c in step.candidates}
        picked = next((i for i in labels if i in held["ids"]), next(iter(labels)))
        choice = {st.radio("What next?", list(labels), index=list(labels).index(picked), format_func=labels.get,
                           key=editor, captions=[V.md_text(c.reason) if c.auto_kept else "" for c in step.candidates],
                           help="Pre-set to the automatic choice; the other one is recorded as your override")}
    else:
        rows = pd.DataFrame(V.candidate_rows(ex.proposal, held["ids"]))
        edited = st.data_editor(
            rows, key=editor, hide_index=True, width="stretch",
            disabled=[c for c in rows.columns if c != "keep"],
            column_order=["keep", "score", "candidate", "from", "reason", "scored by"],
            column_config={"keep": st.column_config.CheckboxColumn("keep", help="pre-set to the automatic choice"),
                           "score": st.column_config.NumberColumn(
                               format="%.3f", help="What the beam is cut on, best first. Entities without an LLM: "
                               "the path score fused by rank with the whole chain read by the embedder (the reason "
                               "gives both ranks); relations: the scorer's score")})
        choice = V.choice_from_rows(edited.to_dict("records"))
    help_title, help_words = step_help(step.stage)  # an evaluate step has no table: its own words
    with st.expander(help_title, icon=":material/help:"):
        st.markdown(help_words)
    held["ids"] = choice
    kept_here = D.keep(ex, choice)  # a reload brings the ticks back until the step is applied

    def go_on() -> None:  # before the page runs: the last edit counts, and the page runs once
        if ex.proposal is None or ex.proposal_key() != pkey:
            return  # a second click on a stale page
        if ex.proposal.step.stage == "evaluate":
            kept = {str(ss.get(editor) or next(iter(held["ids"])))}
        else:
            kept = V.edited_choice(V.candidate_rows(ex.proposal, held["ids"]), ss.get(editor))
        run_id = ex.run_id
        R.explore_apply(engine, ex, kept, ui.store())
        D.applied(ex, run_id)

    with st.container(horizontal=True):
        st.button("Continue", type="primary", help="Keep the ticked candidates", on_click=go_on)
        if st.button("Auto-finish", help="Let the automatic policy search to the end"):
            run_id = ex.run_id
            with st.spinner("Searching to the end…"):
                R.explore_finish(engine, ex, ui.store(), auto=True)
            D.applied(ex, run_id)  # finished: no ticks are pending
            st.rerun()
        if st.button("Stop & answer"):
            run_id = ex.run_id
            with st.spinner("Answering…"):
                R.explore_finish(engine, ex, ui.store(), auto=False)
            D.applied(ex, run_id)
            st.rerun()
    st.caption(D.pending_words(step.stage) if kept_here else step_pending(step.stage))  # else: this page only
    return choice


def overrides_and_back(engine: ToGEngine, ex: R.Exploration, trace: Trace) -> None:
    """The person's overrides so far, "Back to depth" with "Re-run from there", and "New question"."""
    over = V.overrides(trace)
    if over:
        st.caption("Your overrides (pink ✎ in the search picture)")
        st.dataframe(pd.DataFrame(over), hide_index=True, width="stretch")
    with st.container(horizontal=True, vertical_alignment="bottom"):
        back = ex.back_depths()
        if back:
            k = st.selectbox("Back to depth", back, key=K.EXPLORE_BACK, width=160)
            if st.button("Re-run from there", help="This run stays saved; a new branch starts at that depth. Your "
                         "choices before it are kept, and each step from it starts from your ticks while it offers "
                         "the same candidates as before"):
                ss[K.EXPLORE] = R.explore_back(engine, ex, k, ui.store())
                st.rerun()
        elif ex.no_history:
            st.caption(f"This run continues from where it was saved; it cannot go back to an earlier depth: "
                       f"{V.md_text(ex.no_history)}.")
        st.button("New question", on_click=lambda: (ss.update({K.EXPLORE: None, K.EXPLORE_EXPECT: ""}),
                                                    ui.put_in_address(None)))


def forcer(engine: ToGEngine, ex: R.Exploration, trace: Trace,
           model_info: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
    """What "force it in" does here: a new exploration with the person's override, on the next run of the page."""
    def force(f: dict[str, Any]) -> None:
        try:
            ss[K.EXPLORE] = F.force_in(engine, ex.settings, trace, f, ui.store(), follow=False, model_info=model_info)
        except ValueError as err:
            st.error(f"Cannot force it in: {V.md_text(err)}")
            return
        st.rerun()

    return force


def pictures_tabs(ex: R.Exploration, graph: GraphStore, d: dict[str, Any], diag: list[dict[str, Any]],
                  choice: set[str]) -> None:
    """The search picture (a click on a proposed candidate keeps or drops it) and the reasoning chains."""
    state = ex.state

    def pick(value: dict[str, Any]) -> None:  # a click on a proposed candidate in the picture keeps or drops it
        held = ss.get(K.EXPLORE_CHOICE) or {}
        if ex.proposal is None or held.get("key") != ex.proposal_key():
            return
        ref = str(value.get("ref"))
        if ref in {c.id for c in ex.proposal.step.candidates}:
            held["ids"] = held["ids"] ^ {ref}
            held["version"] += 1

    tabs = st.tabs(["Search", "Reasoning chains"], key=K.EXPLORE_TAB, on_change="rerun")
    if tabs[0].open:
        with tabs[0]:
            if ex.proposal is not None and ex.proposal.step.stage != "evaluate":  # only while the picture holds
                # the choice: a finished search has nothing to click, and the evaluate stage's choice is the radio
                st.caption("Click a ☐/☑ candidate in the picture to keep or drop it.")
            pending = {"step": ex.proposal.step.to_dict(), "choice": sorted(choice)} if ex.proposal else None
            key = ("explore-data", ex.run_id, len(state.steps), frozenset(choice), B.marks_key(diag))
            page = ui.cached(key, lambda: frontier_html(d, height="600px", pending=pending, marks=diag,
                                                        types=B.types_of(graph, d, diag, [
                                                            str(c.target_id) for c in ex.proposal.step.candidates
                                                            if c.target_id] if ex.proposal else []),
                                                        clickable=True, for_live=True))
            ui.picture_pick(page, 600, key=K.EXPLORE_PICK, on_pick=pick, live=True)
    if tabs[1].open:
        with tabs[1]:
            page = ui.cached(("explore-chains", ex.run_id, len(state.steps), state.stage),
                             lambda: chains_html(d, height="460px", types=B.types_of(graph, d)))
            ui.picture(page, 460)
