"""Optimistic concurrency for the run stores: two sessions continuing one saved run never overwrite each other.

Every save of a run is counted: the store sets `Trace.revision` to the run's new count (1 for its first save) and
stores it with the run (the JSON file's `revision`; PostgreSQL's `tog.runs.revision` column). A trace that came from
the store, or from a session's last save, still carries the revision it had then, and a save of it expects the run
to be stored at that revision: when the stored run has moved on (someone else saved it meanwhile), the save is
refused with `RunConflict` and nothing of the stored run is touched; the caller keeps the person's work another way
(app/progress.py: Saver saves it as a new run, a branch of this one, and says so; the app and `query`, resumed or
not, save through it). A run that is not stored (new, or deleted meanwhile) is saved. A trace whose revision is None
(one that never came from a run store: a `query --no-save` run, a trace file written by hand) is saved without a
check, as before revisions were counted; a trace with revision 0 (a new run, or a run saved before) expects the run
not to be stored, or stored uncounted.
"""
from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

try:
    import fcntl
except ImportError:  # not on POSIX: saves are serialised within this process only
    fcntl = None  # type: ignore[assignment]

UNREADABLE = -1  # the stored revision of a run file that cannot be read (a hand edit): any expectation conflicts
_IN_PROCESS = threading.Lock()  # where there is no fcntl


class RunConflict(ValueError):
    """The run was saved by someone else since this session loaded or last saved it: this save was refused."""

    def __init__(self, run_id: str, stored: int, expected: int) -> None:
        self.run_id, self.stored, self.expected = run_id, stored, expected
        now = "cannot be read now" if stored == UNREADABLE else f"is at save {stored}"
        super().__init__(f"run {run_id} was saved by someone else meanwhile (it {now}; this page had save "
                         f"{expected}): open it again to see theirs")


def next_revision(stored: int | None, expected: int | None, run_id: str) -> int:
    """The revision a save writes, given the stored one (None: the run is not stored) and the expected one; raises
    RunConflict when the stored run is not at the expected revision."""
    if stored is None:
        return max(expected or 0, 0) + 1
    if expected is not None and stored != expected:
        raise RunConflict(run_id, stored, expected)
    return max(stored, 0) + 1


@contextmanager
def file_lock(lock_file: Path) -> Iterator[None]:
    """Held while a run file is compared with what a save expects and written: an exclusive `flock` on `lock_file`
    (created empty, and left there), which keeps out every other save of the run, from this process's other sessions
    (each opens the file itself) and from other processes on this machine."""
    if fcntl is None:
        with _IN_PROCESS:
            yield
        return
    lock_file.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_file, "ab") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
