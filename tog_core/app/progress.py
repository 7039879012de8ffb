"""A run in progress, whatever drives it (runner.py: automatic runs, resume, the step-by-step page, "force in"):
saved under one run id after every step (`Saver`, runs/saving.py, which `query` uses too; `saving_callbacks` saves at
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
from dataclasses import replace
from typing import Any
from collections.abc import Callable, Iterator

from tog_core.llm import embed
from tog_core.runs.saving import Saver, saver_for  # noqa: F401 - saver_for: the pages' and runner's, from here
from tog_core.tog.state import Callbacks, State

TICK_S = 0.5  # how often the elapsed time is reported while a run is in progress


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
    work and is raised here, never lost in the ticker. The whole run counts as the embedder's foreground: the
    project's background warm (policy/prewarm.py) waits until it ends, so the two never share the cores."""
    if on_tick is None:
        with embed.foreground():
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
        with embed.between_batches(between), embed.foreground():
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
