"""Saving a run in progress under one run id after every step (`Saver`), whatever drives it: the app's pages
(app/progress.py, app/runner.py) and the command line's `query` (cli/query.py). `saver_for` goes on with a saved run.
A save that fails is a note, never an error; a run someone else saved meanwhile is not overwritten (runs/revision.py):
this session's work is saved as a new run, a branch of it, and the note says so.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Callable

from tog_core.runs.fallback import SAVE_ERRORS
from tog_core.runs.files import RunStore, new_run_id
from tog_core.runs.revision import RunConflict
from tog_core.tog.recording import now_iso
from tog_core.tog.state import State
from tog_core.tog.trace import Trace


@dataclass(kw_only=True)
class Saver:
    """Writes the trace of a state under one run id (and its branch origin) to the run store, over the revision of
    the run it loaded or last saved (`revision`, runs/revision.py). When someone else saved the run meanwhile, the
    trace is saved as a new run instead, a branch of that one (`parent_run`; `branched_at`: the steps of the run as
    this session last saw it), and from then on under that run's id; `on_note` is told so in one sentence."""

    engine: Any
    store: RunStore | None
    run_id: str = field(default_factory=new_run_id)
    model_info: dict[str, Any] = field(default_factory=dict)
    parent_run: str | None = None
    branched_at: int | None = None
    t0: float = field(default_factory=time.perf_counter)
    wall_before: float = 0.0  # seconds spent before this process took over (a resumed run)
    t1: float | None = None  # when the run finished (its clock stops there); None: it is still going
    created_at: str = field(default_factory=lambda: now_iso())  # when the run began: kept by every save
    on_note: Callable[[str], None] | None = None  # told once when the run cannot be saved, or was saved as a new run
    unsaved: str = ""  # why this run is not saved (then it lives in memory only, and saving is not tried again)
    # the run's revision as this session loaded or last saved it (runs/revision.py: 0, a run not saved yet; None, a
    # trace that never came from the store: saved without a check)
    revision: int | None = 0
    base_steps: int = 0  # how many steps the run had then
    new_run_note: str = ""  # that someone else saved the run meanwhile, and the new run this one was saved as
    shown_where: str = "on this page"  # where the run stays when it cannot be saved (the command line: its output)
    on_saved: Callable[[Saver], None] | None = None  # after every save that went through (its run id may be new)

    @property
    def kept(self) -> bool:
        """Whether the run, as last saved, is in the store: there is one, and no save failed (a failure drops it)."""
        return self.store is not None

    def trace(self, state: State) -> Trace:
        now = self.t1 if self.t1 is not None else time.perf_counter()
        tr = self.engine.trace(state, run_id=self.run_id, wall_s=self.wall_before + now - self.t0,
                               model_info=self.model_info, created_at=self.created_at)
        tr.parent_run, tr.branched_at, tr.revision = self.parent_run, self.branched_at, self.revision
        return tr

    def save(self, state: State, *, branch: bool = True) -> Trace:
        """The trace of `state`, saved. A store that cannot keep it (a full disk; a server that is down with no
        local files behind it) does not stop the run: the run goes on in memory and `on_note` is told why.
        `branch=False` (the save of a run as it is interrupted): a run someone saved meanwhile (Stop answered it) is
        left as they saved it, and nothing is written."""
        return self.save_trace(self.trace(state), branch=branch)

    def save_trace(self, tr: Trace, *, branch: bool = True) -> Trace:
        """`save` of a trace made by `trace` (and then given more, e.g. the command line's diagnosis)."""
        if self.store is not None:
            try:
                try:
                    self.store.save(tr)  # over self.revision, which the trace carries
                except RunConflict:
                    if not branch:
                        return tr
                    self._branch(tr)
                    self.store.save(tr)
                    self.new_run_note = (f"Someone else saved this run ({tr.parent_run}) meanwhile; your choices were "
                                         f"saved as a new run {tr.run_id}.")
                    if self.on_note is not None:
                        self.on_note(self.new_run_note)
            except (*SAVE_ERRORS, RunConflict) as err:  # RunConflict: the new run's id taken too (never seen)
                self.store = None
                why = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
                where = f" ({err.filename})" if isinstance(err, OSError) and err.filename else ""
                self.unsaved = (f"This run could not be saved: {why[:300]}{where}. It stays {self.shown_where} but "
                                "will not be in Saved runs; free some space or fix the store, then ask again to keep "
                                "it.")
                if self.on_note is not None:
                    self.on_note(self.unsaved)
            else:
                self.revision, self.base_steps = tr.revision, len(tr.steps)
                if self.on_saved is not None:
                    self.on_saved(self)
        return tr

    def _branch(self, tr: Trace) -> None:
        """From now on this run is a new one, a branch of the run someone else saved meanwhile: it took over the
        steps that run had when this session last loaded or saved it, and it begins now (listed first)."""
        self.parent_run, self.branched_at = self.run_id, self.base_steps
        self.run_id, self.revision, self.created_at = new_run_id(), 0, now_iso()
        tr.run_id, tr.parent_run, tr.branched_at = self.run_id, self.parent_run, self.branched_at
        tr.revision, tr.created_at = 0, self.created_at


def saver_for(engine: Any, trace: Trace, store: RunStore | None,
              model_info: dict[str, Any] | None, on_note: Callable[[str], None] | None = None) -> Saver:
    return Saver(engine=engine, store=store, run_id=str(trace.run_id or new_run_id()),
                 model_info=model_info or {}, parent_run=trace.parent_run,
                 branched_at=trace.branched_at, wall_before=float((trace.stats or {}).get("wall_s") or 0.0),
                 on_note=on_note, created_at=trace.created_at or now_iso(), revision=trace.revision,
                 base_steps=len(trace.steps))
