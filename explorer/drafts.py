"""Explore's ticks kept with the run (tog_core/app/pending.py): the ticks on the step still to apply come back after a
reload, with a one-line note, and so do the ticks of the branch a "Back to depth" went back from. The records are
the asking person's own when runs are kept per person (ui.owner: the page has stopped before this for a request
that names nobody), and kept where the runs are: in PostgreSQL with a store URL (any replica of a deployment reads
them), on the files under TOG_HOME without one or while it cannot be reached.

This session remembers the record it last wrote for each run (K.EXPLORE_DRAFT), so a page run writes only when the
ticks changed, and reads a run's record from its store only the first time the session meets the run (a reload, a run
opened from Saved runs).
"""
from __future__ import annotations

from typing import Any

import streamlit as st

from explorer import ui
from tog_core.app import pending as P
from tog_core.app import runner as R
from tog_core.app import views as V
from tog_core.app.session import K, Settings
from tog_core.runs.drafts import Drafts, FallbackDrafts, body, drafts_of
from tog_core.tog.trace import Trace

RESTORED = "Your unsaved ticks from before the reload were restored."


def pending_words(stage: str) -> str:
    """When a person's choice at a step counts, and that a reload keeps it (guide.step_pending says it does not, for
    a run whose folder cannot be written)."""
    if stage == "evaluate":
        return ("Your choice counts when you press Continue; until then it is kept with this run, and a reload brings "
                "it back.")
    return ("Your ticks count when you press Continue; until then they are kept with this run, and a reload brings "
            "them back.")


def _drafts() -> Drafts | FallbackDrafts:
    """Where the run's records are kept: with the runs (runs/drafts.py), in the same person's part of the same store,
    PostgreSQL's while it can be reached, else the files under TOG_HOME."""
    return drafts_of(ui.store())


def _known() -> dict[str, dict[str, Any] | None]:
    known: dict[str, dict[str, Any] | None] = st.session_state.setdefault(K.EXPLORE_DRAFT, {})
    return known


def _record(run_id: str) -> dict[str, Any] | None:
    known = _known()
    if run_id not in known:
        known[run_id] = _drafts().read(run_id)
    return known[run_id]


def reopen(engine: Any, settings: Settings, trace: Trace, *, model_info: dict[str, Any]) -> R.Exploration:
    """A saved run continued step by step (runner.explore_from_trace), with its earlier branch's ticks when a Back to
    depth left some (the page's memory only, before)."""
    ex = R.explore_from_trace(engine, settings, trace, model_info=model_info)
    ex.earlier, ex.diverged = P.earlier_of(_record(ex.run_id))
    return ex


def start_ticks(ex: R.Exploration) -> tuple[set[str], str, str]:
    """The ticks the pending step starts from, whose ("draft": the person's own from before a reload, else as
    runner.Exploration.start_ticks says), and why a draft of the run was not brought back ("" when none was left)."""
    ids, why = P.restored(ex, _record(ex.run_id))
    if ids is not None:
        return ids, "draft", ""
    return (*ex.start_ticks(), why)


def keep(ex: R.Exploration, ticks: set[str] | None) -> bool:
    """Keep the run's record as it stands now: the person's ticks on the pending step when they differ from what the
    step starts from anyway, and the earlier branch's ticks. False when it could not be written (the ticks then live
    in this page only)."""
    pending = ticks if ticks is not None and ex.proposal is not None and ticks != ex.start_ticks()[0] else None
    want = P.record_of(ex, pending)
    if ex.run_id in _known() and _known()[ex.run_id] == want:
        return True
    try:
        _drafts().write(ex.run_id, want)
    except (OSError, ValueError):
        return False
    _known()[ex.run_id] = want
    return True


def applied(ex: R.Exploration, run_id: str) -> None:
    """A step of run `run_id` was applied (Continue, Auto-finish, Stop & answer): no ticks are pending on it, whoever
    kept some (another tab's too). When the save went to a new run (someone else saved this one meanwhile), the old
    run's record goes if it is still the one this session wrote (its ticks went to the new run); one written since
    by someone else (runs kept for everyone share their drafts) is theirs, and stays."""
    if run_id != ex.run_id and _own(run_id):
        forget(run_id)
    _known().pop(ex.run_id, None)  # written again whatever this session last wrote
    keep(ex, None)


def _own(run_id: str) -> bool:
    """Whether the run's record as kept now is none, or the one this session last wrote or read."""
    now = _drafts().read(run_id)
    if now is None:
        return True
    mine = _known().get(run_id)
    return mine is not None and body(now) == body(mine)


def finished(ex: R.Exploration) -> None:
    """A finished run keeps no ticks: its record goes. Ticks kept for a step it has gone past since (elsewhere) are
    said not to be restored, until the page shows another run."""
    said: dict[str, str] = st.session_state.setdefault(K.EXPLORE_DRAFT_SAID, {})
    if ex.run_id not in said:
        said[ex.run_id] = P.restored(ex, _record(ex.run_id))[1]
    keep(ex, None)
    if said[ex.run_id]:
        st.info(V.md_text(said[ex.run_id]), icon=":material/restore:")


def forget(run_id: str) -> None:
    """The run was deleted: its record goes."""
    _drafts().forget(run_id)
    _known()[run_id] = None
