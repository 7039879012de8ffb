"""A run in progress, whatever drives it (runner.py: automatic runs, resume, the step-by-step page, "force in"):
saved under one run id after every step (`Saver`; `saver_for` goes on with a saved run; `saving_callbacks` saves at
every state the engine reports; a save that fails is a note, never an error; a run someone else saved meanwhile is
not overwritten: this session's work is saved as a new run, a branch of it, and the note says so), recorded as failed
when it breaks (`failed`), and timed while it works (`with_ticker`: the elapsed time every TICK_S; what the tick
raises, Streamlit's interrupt when Stop is pressed, ends the run). A run says it is going on in this process
(`in_progress`) until its last save is written: Streamlit starts the page's next run at once when Stop is pressed
(fast reruns), while the stopped run still ends in its own thread, and that page run answers the stopped run only
once it has ended (`wait_ended`), so what the page shows is what is saved, and its time is the run's own.
"""
from __future__ import annotations

import asyncio
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any
from collections.abc import Callable, Iterator

from tog_core.llm import embed
from tog_core.runs.fallback import SAVE_ERRORS
from tog_core.runs.files import RunStore, new_run_id
from tog_core.runs.revision import RunConflict
from tog_core.tog.recording import now_iso
from tog_core.tog.state import Callbacks, State
from tog_core.tog.trace import Trace

TICK_S = 0.5  # how often the elapsed time is reported while a run is in progress


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


_RUNNING: dict[str, threading.Event] = {}  # run id → set when the run that holds it has ended (this process)
_RUNNING_LOCK = threading.Lock()


@contextmanager
def in_progress(run_id: str) -> Iterator[None]:
    """The run `run_id` is going on in this thread until the block ends, its last save included (`wait_ended`)."""
    ended = threading.Event()
    with _RUNNING_LOCK:
        _RUNNING[run_id] = ended
    try:
        yield
    finally:
        ended.set()
        with _RUNNING_LOCK:
            if _RUNNING.get(run_id) is ended:
                del _RUNNING[run_id]


def wait_ended(run_id: str, timeout: float) -> bool:
    """Wait until the run `run_id`, when it is going on in this process, has ended and saved what it did; False when
    it has not after `timeout` seconds."""
    with _RUNNING_LOCK:
        ended = _RUNNING.get(run_id)
    return ended is None or ended.wait(timeout)


def failed(state: State, err: BaseException) -> State:
    return state.with_(stage="done", stop_reason="error", error=f"{err.__class__.__name__}: {err}"[:300])


async def with_ticker(work: Callable[[], Any], on_tick: Callable[[float], None] | None) -> Any:
    """Await `work()` while `on_tick(elapsed)` runs every TICK_S, also while the local embedder blocks the event loop
    (embed.between_batches). Whatever on_tick raises (Streamlit's interrupt when the person presses Stop) ends the
    work and is raised here, never lost in the ticker."""
    if on_tick is None:
        return await work()
    main, t0 = asyncio.current_task(), time.perf_counter()
    raised: list[BaseException] = []
    last = [t0]  # when the tick was last given, by the ticker or between the embedder's batches

    def give() -> None:
        last[0] = time.perf_counter()
        on_tick(last[0] - t0)

    async def tick() -> None:
        try:
            while True:
                await asyncio.sleep(TICK_S)
                give()
        except asyncio.CancelledError:
            raise
        except BaseException as err:  # noqa: BLE001 - handed to the main task, re-raised there
            raised.append(err)
            if main is not None:
                main.cancel()

    def between() -> None:  # the event loop is blocked while e5 encodes: the tick is given from inside
        if time.perf_counter() - last[0] >= TICK_S:
            give()

    ticker = asyncio.create_task(tick())
    try:
        with embed.between_batches(between):
            return await work()
    except asyncio.CancelledError:
        if raised:
            raise raised[0] from None
        raise
    finally:
        ticker.cancel()


def saving_callbacks(saver: Saver, last: list[State], given: Callbacks) -> Callbacks:
    """`given` with a state hook that saves the trace after every step (`last` holds the latest state) before it
    passes the state on."""

    def on_state(st: State) -> None:
        last[:] = [st]
        saver.save(st)
        given.on_state(st)

    return replace(given, on_state=on_state)


def saver_for(engine: Any, trace: Trace, store: RunStore | None,
              model_info: dict[str, Any] | None, on_note: Callable[[str], None] | None = None) -> Saver:
    return Saver(engine=engine, store=store, run_id=str(trace.run_id or new_run_id()),
                 model_info=model_info or {}, parent_run=trace.parent_run,
                 branched_at=trace.branched_at, wall_before=float((trace.stats or {}).get("wall_s") or 0.0),
                 on_note=on_note, created_at=trace.created_at or now_iso(), revision=trace.revision,
                 base_steps=len(trace.steps))
