"""Run store: one JSON trace per run, written atomically after every step; list, load, resume, branch.

Layout: <home>/runs/<run_id>.json, and a small summary of each in <home>/runs/.index/ (index.py), from which runs
are listed: a trace is parsed only when its run is opened. A crash between steps loses at most the step in flight;
a reader never sees a half-written file (temp file + fsync + os.replace). A damaged run file is listed by
`problems` (its name and why) and never stops the others from being listed.
"""
from __future__ import annotations

import builtins
import hashlib
import json
import re
import threading
from pathlib import Path

from tog_core.home import atomic_write_text, new_run_id, tog_home
from tog_core.runs.index import (
    DamagedRun,
    RunSummary,
    entry_path,
    file_stamp,
    read_entry,
    remove_entry,
    summarize,
    summarize_file,
    write_entry,
)
from tog_core.runs.revision import UNREADABLE, file_lock, next_revision
from tog_core.tog.trace import Trace

__all__ = ["RunStore", "RunSummary", "atomic_write_text", "new_run_id", "tog_home"]  # the last three from home.py

PEOPLE = "people"  # <runs>/people/<digest>/: each person's runs when they are kept apart (for_owner)
_RUN_ID = re.compile(r"[A-Za-z0-9_\-]{1,80}\Z")  # with .match: the whole id (`$` let "id\n" through)


class RunStore:
    def __init__(self, root: Path | str | None = None) -> None:
        self.root = Path(root) if root is not None else tog_home() / "runs"
        self._lock = threading.Lock()

    def for_owner(self, owner: str) -> RunStore:
        """One person's runs (app/owner.py, `TOG_RUN_OWNER`): a store under <root>/people/<digest of the owner>/, apart
        from the shared runs in <root> and from every other person's. The folder name is a digest, so no identity a
        proxy sends can name a path, and the runs' files do not show whose they are."""
        digest = hashlib.sha256(owner.encode("utf-8")).hexdigest()[:32]
        return RunStore(self.root / PEOPLE / digest)

    def path(self, run_id: str) -> Path:
        if not _RUN_ID.match(run_id):
            raise ValueError(f"invalid run id {run_id!r}")
        return self.root / f"{run_id}.json"

    def save(self, trace: Trace) -> Path:
        """Write the run's file (and its index entry); `trace.revision` becomes the run's new count of saves. Raises
        RunConflict, writing nothing, when the run is stored at another revision than the trace's (runs/revision.py:
        someone else saved it meanwhile; a trace whose revision is None is saved without a check)."""
        if not trace.run_id:
            trace.run_id = new_run_id()
        p = self.path(trace.run_id)
        with self._lock, file_lock(entry_path(p).with_suffix(".lock")):
            revision = next_revision(self._stored_revision(p), trace.revision, trace.run_id)
            d = {**trace.to_dict(), "revision": revision}
            atomic_write_text(p, json.dumps(d, ensure_ascii=False, indent=1))
            trace.revision = revision
            try:
                stamp = file_stamp(p.stat())
                found: RunSummary | DamagedRun = summarize(d, p, stamp=stamp)
            except DamagedRun as err:  # a trace the engine made is never damaged; kept apart all the same
                found = err
            write_entry(p, stamp, found)
        return p

    @staticmethod
    def _stored_revision(p: Path) -> int | None:
        """The revision of the run file as it is now (read from the file itself, never from the index: the file may
        have been saved a moment ago by another process); None when there is none, UNREADABLE when it is damaged."""
        try:
            return summarize_file(p, "").revision
        except FileNotFoundError:
            return None
        except DamagedRun:
            return UNREADABLE

    def load(self, run_id: str) -> Trace:
        p = self.path(run_id)
        try:
            trace = Trace.from_json(p.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise FileNotFoundError(f"no saved run {run_id} in {self.root}") from None
        except (ValueError, TypeError, AttributeError, KeyError) as err:  # UnicodeDecodeError, JSONDecodeError too
            raise ValueError(f"{p.name}: not a readable trace ({err.__class__.__name__}: {str(err)[:200]})") from None
        except RecursionError:
            raise ValueError(f"{p.name}: not a readable trace (nested too deeply)") from None
        if trace.revision is None:  # saved before saves were counted: a save of it expects it still uncounted
            trace.revision = 0
        return trace

    def delete(self, run_id: str) -> None:
        p = self.path(run_id)
        p.unlink(missing_ok=True)
        remove_entry(p)

    def scan(self) -> tuple[list[RunSummary], list[str]]:
        """Every listable run, newest first, and every damaged run file as "file name: why". Read from the
        index; a run file it does not describe as it is now is summarised once and the index updated."""
        good: list[RunSummary] = []
        bad: list[str] = []
        if not self.root.is_dir():
            return good, bad
        for p in sorted(self.root.glob("*.json")):
            try:
                stamp = file_stamp(p.stat())
                found = read_entry(p, stamp)
                if found is None:
                    try:
                        found = summarize_file(p, stamp)
                    except DamagedRun as err:
                        found = err
                    write_entry(p, stamp, found)
            except OSError as err:  # deleted meanwhile, or unreadable
                if p.exists():
                    bad.append(f"{p.name}: cannot be read ({err.strerror or err.__class__.__name__})")
                continue
            if isinstance(found, DamagedRun):
                bad.append(f"{p.name}: {found}")
            else:
                good.append(found)
        good.sort(key=lambda r: (r.created_at, r.run_id), reverse=True)
        return good, bad

    def list(self) -> list[RunSummary]:
        """Every readable run, newest first. Damaged files are left out (named by `problems`)."""
        return self.scan()[0]

    def problems(self) -> builtins.list[str]:  # builtins: `list` is a method here
        """Every damaged run file: "file name: why"."""
        return self.scan()[1]
