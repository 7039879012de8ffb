""""How the question was read" under an answer: who read it, the language, the topic entities as the question names
them, what it asks for, the relation phrases in walking order, the number of hops and what a person changed; the
number of hops and what is asked for can be corrected and the question searched again with that reading (a new
run; this one stays in Saved runs). tog_core.app.reading_view holds the logic. Also "How many hops", the table of
what each number of hops found before the run (the Ask and Explore pages; explorer/blocks.py hands it on).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from explorer import ui
from tog_core.app import reading_view as RV
from tog_core.app.inputs import NAME_MAX
from tog_core.app.session import K, Settings
from tog_core.app.views import md_text, plan_rows
from tog_core.graphrag.store import GraphStore
from tog_core.policy.depths import check_hops
from tog_core.tog.trace import Trace


def _said(view: RV.ReadingView) -> str:
    """The reading as a Markdown list, every piece of data escaped."""
    def many(items: tuple[str, ...], sep: str) -> str:
        return sep.join(md_text(x) for x in items)

    who = md_text(view.by) + (f" · then corrected by a person: {many(view.edited, ', ')}" if view.edited else "")
    asked = md_text(view.asked)
    if view.asked_how:
        asked += f" ({view.asked_how})"
        asked += f" · this graph's types that fit: {many(view.fits, ', ')}" if view.fits else \
            " · no entity type of this graph fits it"
    ran = view.searched if view.searched and view.searched != view.hops else None
    hops = f"{view.hops}" + (f" (the search ran {ran})" if ran else "")
    return "\n".join([
        f"- **Read by:** {who}",
        f"- **Language:** {md_text(view.language)}",
        f"- **Topic entities, as the question names them:** {many(view.topics, '; ') or 'none'}",
        f"- **Asks for:** {asked}",
        f"- **Relation phrases, walking from the topic:** {many(view.phrases, ' → ') or 'none named'}",
        f"- **Number of hops:** {hops}"])


def reading_block(t: Trace, graph: GraphStore, settings: Settings, *,
                  on_again: Callable[[RV.ReadingEdit], None]) -> None:
    """The run's reading, and the form that searches again with it corrected: `on_again(edit)` is called with a
    valid correction (checked against the run's settings: an LLM judging decides the number of hops itself)."""
    types = RV.graph_types(graph)
    view = RV.reading_view(t, types)
    # the search may run another number of hops than the wording reads (its trials chose): both are said here
    ran = f" (the search ran {view.searched})" if view and view.searched and view.searched != view.hops else ""
    label = "How the question was read" + (f": {view.hops} hop{'s' if view.hops > 1 else ''}{ran}, {view.by_short}"
                                           + (", corrected" if view.edited else "") if view else "")
    with st.expander(label, icon=":material/menu_book:", expanded=bool(view and view.edited)):
        if view is None:
            st.info(RV.NO_READING)
            return
        if view.fallback:
            st.warning("The reader asked for could not read this question, so the rules read it: "
                       + md_text(view.fallback))
        st.markdown(_said(view))
        with st.form(f"{K.ASK_READING}_{t.run_id}", border=False):
            left, right = st.columns([1, 3])
            hops = left.number_input("Number of hops", value=max(1, min(view.hops, settings.depth)), step=1,
                                     key=f"{K.ASK_READING}_hops_{t.run_id}",
                                     help=f"How many relations the question chains: 1 to {settings.depth} (this "
                                          "run's maximum depth). The search then runs exactly that deep.")
            asked = right.text_input("What the question asks for", value=view.asked_text, placeholder="not said",
                                     max_chars=NAME_MAX,
                                     key=f"{K.ASK_READING}_asked_{t.run_id}",
                                     help="A noun (person, town, company) or one of this graph's entity types: "
                                          + ", ".join(md_text(x) for x in types[:RV.TYPES_SHOWN])
                                          + ". Empty: the question does not say.")
            go = st.form_submit_button("Search again with this reading", type="primary")
        if types:
            st.caption("This graph's entity types: " + md_text(", ".join(types[:RV.TYPES_SHOWN])))
        if go:
            try:
                edit = RV.edit_reading(t, hops=hops, asked_text=asked, max_depth=settings.depth, types=types)
                if edit.hops is not None:
                    engine, _, _ = ui.engine_or_stop(settings)
                    try:
                        check_hops(engine, edit.hops)
                    except ValueError as err:
                        raise ValueError(f"The number of hops cannot be chosen for this run: {err}. Correct what "
                                         "the question asks for only, or ask without an LLM.") from None
            except ValueError as err:
                st.error(md_text(str(err)))  # it may quote what was typed
                return
            on_again(edit)


def hops_block(plan: dict[str, Any] | None, *, note: str, when: str = "",
               on_choose: Callable[[int], None] | None = None, trace: Trace | None = None,
               searched: int | None = None) -> None:
    """What each number of hops found when the LLM-free search on a GraphRAG graph tried them before it ran
    (views.plan_rows; RV.hops_table leaves out an empty column); nothing when it tried none. With `on_choose`, a
    button per other number of hops runs the search again exactly that deep. `searched`: how deep the run went
    when its answer sits part-way along a longer chain (the label then gives both numbers)."""
    rows = plan_rows(trace, plan)  # with the run's answer: its row is the kept one
    if not rows:
        return
    kept = md_text(next((r["hops"] for r in rows if r["kept"]), "?"))  # the trace's plan: as its characters
    # the answer part-way along a longer chain: both numbers in the label, not only the one the answer sits at
    label = (f"How many hops: the answer is {kept} along its chain, the search went {searched} deep" if searched
             else f"How many hops: {kept}")
    with st.expander(f"{label} (tried 1 to {len(rows)}{when})", icon=":material/stairs:"):
        shown, more = RV.hops_table(rows)  # an empty "not counted" column left out, a full one explained
        st.dataframe(shown, hide_index=True, width="stretch")
        st.caption(note + (f" {more}" if more else ""))
        others = [r["hops"] for r in rows if not r["kept"]]
        if on_choose and others:
            for col, n in zip(st.columns(len(others) + 1), others):
                col.button(f"Answer at {n} hop{'s' if n > 1 else ''}", key=f"hops_{n}", on_click=on_choose, args=(n,),
                           help="Search again from the same topic entities, exactly this deep (a new run; this one "
                                "stays in Saved runs)")
