""""This is the answer" under an answer: the run's answer candidates (the first few shown, the rest one click away),
each with its score, its chain in words and its supporting sentence, and a button that records it as the person's
answer (saved with the run, kept apart from the search's; tog_core.app.pick holds the logic).
"""
from __future__ import annotations

from typing import Any

import streamlit as st

from tog_core.app import pick as P
from tog_core.app.session import K
from tog_core.app.run_notes import is_forced
from tog_core.app.views import md_text
from tog_core.errors import UsageError
from tog_core.graphrag.store import GraphStore
from tog_core.tog.choice import AnswerCandidate
from tog_core.tog.trace import Trace

ss = st.session_state


def _record(trace: Trace, c: AnswerCandidate | None, store: Any) -> None:
    """Record `c` as the person's answer (None: clear the choice), save the run under the same id and show it (a
    button's callback: the page run that follows already reads it)."""
    changed = P.clear(trace) if c is None else P.choose(trace, c)
    try:
        store.save(changed)
    except (OSError, UsageError, ValueError) as err:  # a read-only folder, a store that is down
        ss[K.ASK_PICK_ERROR] = f"Your choice was not saved, so it is not recorded: {err}"
        return
    ss.pop(K.ASK_PICK_ERROR, None)
    ss[K.ASK_TRACE] = changed


def choice_note(trace: Trace) -> None:
    """The person's choice, said apart from the search's answer (nothing without one)."""
    if line := P.choice_line(trace):
        st.success(md_text(line) + " (your choice is kept apart from the search's answer)",
                   icon=":material/how_to_reg:")


def answers_block(trace: Trace, graph: GraphStore, store: Any) -> None:
    """The candidates with "This is the answer" buttons, and the person's choice with a way to clear it."""
    cands = P.answer_list(trace, graph)
    if not cands:
        return
    if err := ss.pop(K.ASK_PICK_ERROR, None):
        st.error(md_text(err))
    st.markdown("**Answer candidates**, the search's answer first. Is the right one here? Click "
                "“This is the answer”: it is saved with the run as your choice, apart from the search's answer.")
    if is_forced(trace):  # a person's answer: neither ranked nor given a confidence
        st.caption("You forced the first one in: it has no weight and no confidence, the search did not rank it; "
                   "the others are what this branch's search found.")
    else:
        st.caption("Each card's weight is its share of the ranking (the weights add up to at most 1: the rest is "
                   "“none of these”); the confidence above is a separate estimate of how often a first answer like "
                   "this one is right.")
    choice_note(trace)
    if P.choice_line(trace):
        st.button("Clear my choice", key=f"pick_clear_{trace.run_id}", icon=":material/undo:",
                  on_click=_record, args=(trace, None, store))
    for i, c in enumerate(cands[: P.SHOWN]):
        _candidate(trace, c, i, store)
    if len(cands) > P.SHOWN:
        with st.expander(P.more_label(cands)):  # with how many were ranked in all, when the run kept fewer
            for i, c in enumerate(cands[P.SHOWN:], start=P.SHOWN):
                _candidate(trace, c, i, store)
    elif kept := P.kept_words(cands):
        st.caption(f"{kept[:1].upper()}{kept[1:]}.")


def _candidate(trace: Trace, c: AnswerCandidate, i: int, store: Any) -> None:
    chosen = P.is_chosen(trace, c)
    # the button as wide as its words, the card's text the rest (a 4:1 column cut it to "This is th…" at 1000 px)
    with st.container(border=True, key=f"pick_card_{i}", horizontal=True, vertical_alignment="center", wrap=False):
        left, right = st.container(width="stretch"), st.container(width="content")
        the_search = i == 0 and P.is_search_answer(trace, c)
        forced = the_search and is_forced(trace)  # a person's: no weight claimed
        score = "" if c.score is None or forced else f" · weight {c.score:.2f}" if c.score >= 0.005 else \
            " · weight < 0.01"
        mark = (" · forced in by you" if forced else " · the search's answer" if the_search else "") + \
            (" · your choice" if chosen else "")
        left.markdown(f"**{i + 1}. {md_text(P.cut(c.title, P.TITLE_MAX))}**{score}{mark}")
        if c.chain:
            left.caption(md_text(P.chain_words(c)))
        if c.sentence:
            left.markdown("> " + md_text(P.cut(c.sentence, P.SENTENCE_MAX)))
        if c.why and not forced:
            left.caption("Why here: " + md_text(P.cut(c.why, P.SENTENCE_MAX)))
        right.button("Your choice" if chosen else "This is the answer", key=f"pick_{trace.run_id}_{i}",
                     disabled=chosen, type="secondary", on_click=_record, args=(trace, c, store),
                     help=f"Record {md_text(P.cut(c.title, 80))} as your answer to this question (saved with the run)")
