"""A run store with the files under TOG_HOME behind it: while the primary store (PostgreSQL) cannot be reached,
runs are saved, listed and opened from the local files, and the outage is said once, in plain words.

One `Outage` is shared by every session of a process (ui.py caches it per store URL): after a failure the primary
store is not asked again for `retry_s` seconds, so no page waits on a server that is down more than once in that
time. A disk that is full is not an outage of the primary store: `save` raises the OSError (app/progress.py: Saver
keeps the run in memory and says so).
"""
from __future__ import annotations

import builtins
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tog_core.graphrag.pg_common import StoreError
from tog_core.runs.files import RunStore
from tog_core.runs.index import RunSummary
from tog_core.runs.revision import RunConflict
from tog_core.tog.trace import Trace

SAVE_ERRORS = (OSError, StoreError)  # what a run store raises when it cannot keep a run (disk, server)


@dataclass(kw_only=True)
class Outage:
    """When the primary store last failed, and why (shared by the sessions of a process)."""

    retry_s: float = 30.0
    clock: Callable[[], float] = time.monotonic
    until: float = 0.0
    why: str = ""
    lock: threading.Lock = field(default_factory=threading.Lock)
    # runs saved to the local files while the primary store was down, by run id: (the revision the primary store
    # held when the run moved here, which it must still hold when the run goes back; None: not checked; the revision
    # last written here). Kept per process: see FallbackRunStore.save
    moved: dict[str, tuple[int | None, int]] = field(default_factory=dict)

    def down(self) -> bool:
        return self.clock() < self.until

    def mark(self, err: BaseException) -> None:
        with self.lock:
            self.until, self.why = self.clock() + self.retry_s, str(err)

    def clear(self) -> None:
        with self.lock:
            self.until, self.why = 0.0, ""


class FallbackRunStore:
    """`primary` (None: it could not even be opened) with `local` behind it. Same methods as RunStore."""

    def __init__(self, primary: Any, local: RunStore | None = None, *, outage: Outage | None = None,
                 opening_error: BaseException | None = None) -> None:
        self.primary = primary
        self.local = local if local is not None else RunStore()
        self.outage = outage if outage is not None else Outage()
        if opening_error is not None:
            self.outage.mark(opening_error)

    def _up(self) -> bool:
        return self.primary is not None and not self.outage.down()

    def note(self) -> str:
        """What the page should say while the primary store is down ("" when it is up)."""
        if self._up():
            return ""
        return (f"The run store cannot be reached ({self.outage.why[:300]}): runs are kept on this machine "
                f"({self.local.root}) until it is back.")

    def save(self, trace: Trace) -> Any:
        """Save to the primary store; when it fails, to the local files (OSError when those fail too). Either refuses
        a run someone else saved meanwhile (RunConflict, runs/revision.py), in its own count of saves: a trace saved or
        loaded here carries minus the local copy's revision (`trace.revision` < 0), one of the primary store its own.
        A run saved here goes back to the primary store over the revision it held there when the run moved here (this
        process remembers it: `Outage.moved`; else only where the primary store does not hold the run), and its local
        copy is then removed; a session of the primary store's revision does not save over a run another moved here."""
        want, rid = trace.revision, trace.run_id
        here = want is not None and want < 0  # goes on from the copy kept here
        moved = self.outage.moved.get(rid) if rid else None
        from_moved = here and moved is not None and moved[1] == -(want or 0)  # from the revision last written here
        if self._up():
            trace.revision = (moved[0] if from_moved and moved is not None else 0) if here else want
            try:
                out = self.primary.save(trace)
            except StoreError as err:
                self.outage.mark(err)
                trace.revision = want
            except BaseException:  # refused (RunConflict, another person's run): the trace as it was given
                trace.revision = want
                raise
            else:
                if here:
                    self._back(trace.run_id)
                return out
        if want is not None and not here and moved is not None:  # moved here by another session: not saved over
            raise RunConflict(rid, moved[1], want)
        trace.revision = -want if here and want is not None else (None if want is None else 0)
        try:
            out = self.local.save(trace)
        except BaseException:
            trace.revision = want
            raise
        with self.outage.lock:  # the revision the primary store must hold when it goes back, and the one written here
            base = (moved[0] if from_moved and moved is not None else 0) if here else want
            self.outage.moved[trace.run_id] = (base, int(trace.revision or 0))
        trace.revision = -int(trace.revision or 0)
        return out

    def _back(self, run_id: str) -> None:
        """A run moved here is in the primary store again: it is no longer remembered here, nor kept here."""
        with self.outage.lock:
            self.outage.moved.pop(run_id, None)
        try:
            self.local.delete(run_id)
        except OSError:
            pass  # left behind: a later save of another session is checked against it, refused, and kept apart

    def load(self, run_id: str) -> Trace:
        if self._up():
            try:
                return self.primary.load(run_id)
            except FileNotFoundError:
                pass  # perhaps saved here during an outage
            except StoreError as err:
                self.outage.mark(err)
        trace = self.local.load(run_id)
        trace.revision = -int(trace.revision or 0)  # the copy here's revision, told apart from the primary store's
        return trace

    def delete(self, run_id: str) -> None:
        if self._up():
            try:
                self.primary.delete(run_id)
            except StoreError as err:
                self.outage.mark(err)
                raise
        self.local.delete(run_id)

    def scan(self) -> tuple[list[RunSummary], list[str]]:
        """The primary store's runs with those kept here during an outage (each run once), newest first; only the
        local ones while the primary store is down."""
        good, bad = self.local.scan()
        if self._up():
            try:
                theirs, their_bad = self.primary.scan()
            except StoreError as err:
                self.outage.mark(err)
            else:
                have = {r.run_id for r in theirs}
                good = sorted(theirs + [r for r in good if r.run_id not in have],
                              key=lambda r: (r.created_at, r.run_id), reverse=True)
                bad = their_bad + bad
        return good, bad

    def list(self) -> list[RunSummary]:
        return self.scan()[0]

    def problems(self) -> builtins.list[str]:  # builtins: `list` is a method here
        return self.scan()[1]
