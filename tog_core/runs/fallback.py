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
        """Save to the primary store; when it fails, to the local files (OSError when those fail too)."""
        if self._up():
            try:
                return self.primary.save(trace)
            except StoreError as err:
                self.outage.mark(err)
        return self.local.save(trace)

    def load(self, run_id: str) -> Trace:
        if self._up():
            try:
                return self.primary.load(run_id)
            except FileNotFoundError:
                pass  # perhaps saved here during an outage
            except StoreError as err:
                self.outage.mark(err)
        return self.local.load(run_id)

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
