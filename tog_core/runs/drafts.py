"""Where Explore's unsaved ticks ("drafts", tog_core/app/pending.py says what a record holds) are kept: one small JSON
record per run, beside the runs and never in a run's own file or row.

* `Drafts`: the files, `<runs folder>/.drafts/<run id>.json`; the runs folder is the person's own
  (`TOG_HOME/runs/people/<digest>/`) when runs are kept per person (app/owner.py), else `TOG_HOME/runs`. The file run
  store lists no draft (it reads `*.json` of its folder only).
* `PgDrafts`: the table tog.run_drafts of a PostgreSQL run store (made with the run store's tables, runs/postgres.py),
  one row per (owner, run): the owner is the person when runs are kept per person, else '' (everyone's, as the runs
  are), so every replica of a deployment reads the same drafts and a person never reads another's.
* `FallbackDrafts`: PgDrafts with the files behind it while PostgreSQL cannot be reached, deciding as the run store
  does (runs/fallback.py: one shared `Outage`, so no page waits on a dead server more than once in its retry time).
  Each record it writes carries when (`written_at`, seconds since the epoch); what is kept on the files during an
  outage (a clearing too: a `cleared` mark) is read against PostgreSQL's by that time, the newer wins, and it moves to
  PostgreSQL once the server answers: ticks made during an outage are not lost to older ones, and ticks cleared
  during it do not come back. Replicas' clocks are taken to agree to well within the seconds between two clicks.

`drafts_of(run store)` picks the one that goes with the run store a page uses. Every kind: `read` gives None for a
record that is missing or cannot be read (said in the log only, never an error); `write` raises OSError or
ValueError when the record cannot be kept; `forget` never raises.
"""
from __future__ import annotations

import json
import logging
import time
import weakref
from pathlib import Path
from typing import Any

from tog_core.graphrag.pg_common import CATALOG_SCHEMA as S
from tog_core.graphrag.pg_common import StoreError
from tog_core.runs.fallback import FallbackRunStore, Outage
from tog_core.runs.files import RunStore, atomic_write_text
from tog_core.runs.postgres import PgRunStore, _json

log = logging.getLogger(__name__)

FORMAT = 1
DRAFTS = ".drafts"  # in the runs folder: not `*.json` of the folder itself, so never listed as a run
RECORD_MAX = 1_000_000  # bytes of a record kept or read (width 10 and depth 6 make a few kB)
KEPT_DAYS = 30  # a draft not written for this long is removed (PgDrafts.prune): its ticks were long abandoned
_PRUNED = [0.0]  # when this process last removed old drafts from PostgreSQL
WRITTEN_AT = "written_at"  # FallbackDrafts: when the record was written (seconds since the epoch)
CLEARED = "cleared"  # FallbackDrafts: a record cleared while PostgreSQL could not be reached (kept on the files)


def _unreadable(run_id: Any, why: Any) -> None:
    log.warning("the draft of run %s cannot be read (%s); ignored", str(run_id)[:80], why)


def _checked(data: Any, run_id: str) -> dict[str, Any] | None:
    """`data` as a record of run `run_id`, or None when it is not one."""
    if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("run_id") != run_id:
        return None
    return data


class Drafts:
    """The draft records of one runs folder, as files."""

    def __init__(self, runs_root: Path | str) -> None:
        self.root = Path(runs_root) / DRAFTS

    def path(self, run_id: str) -> Path:
        """The record's file; ValueError for an id the run store would refuse too (no id names a path)."""
        return self.root / RunStore(self.root).path(run_id).name

    def read(self, run_id: str) -> dict[str, Any] | None:
        """The run's record, None when there is none, it cannot be read (said in the log only), or it is the mark
        of a record cleared during an outage (FallbackDrafts)."""
        found = self.raw(run_id)
        return None if found is None or found.get(CLEARED) else found

    def raw(self, run_id: str) -> dict[str, Any] | None:
        """`read`, a clearing mark included."""
        try:
            p = self.path(run_id)
            if p.stat().st_size > RECORD_MAX:
                raise ValueError("too large")
            data = json.loads(p.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError, RecursionError) as err:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
            _unreadable(run_id, err)
            return None
        return _checked(data, run_id)

    def write(self, run_id: str, record: dict[str, Any] | None) -> None:
        """Keep `record` as the run's (None: remove it). OSError when the folder cannot be written."""
        p = self.path(run_id)
        if record is None:
            p.unlink(missing_ok=True)
        else:
            atomic_write_text(p, json.dumps({"format": FORMAT, "run_id": run_id, **record}, ensure_ascii=False))

    def forget(self, run_id: str) -> None:
        """Remove the run's record, if any (a run deleted). Never raises."""
        try:
            self.write(run_id, None)
        except (OSError, ValueError) as err:
            log.warning("the draft of run %s could not be removed (%s)", str(run_id)[:80], err)


class PgDrafts:
    """The draft records of a PostgreSQL run store (its connection pool), of the person a `for_user(..., only=True)`
    view is for, else everyone's (owner ''). `read` and `write` raise StoreError when the server cannot be reached
    (FallbackDrafts then turns to the files); any other failure of the database is a record that cannot be read, or
    an OSError on writing."""

    def __init__(self, runs: PgRunStore) -> None:
        self.runs = runs
        self.owner = runs.user if runs.only else ""

    def _sql(self, sql: str, args: tuple[Any, ...]) -> Any:
        """The statement's first row (None when it returns none); StoreError when the server cannot be reached,
        OSError (its words scrubbed of the URL's password) on any other error of the database."""
        import psycopg

        try:
            with self.runs._conn() as conn:
                cur = conn.execute(sql, args)
                return cur.fetchone() if cur.description else None
        except psycopg.Error as err:
            raise OSError(str(self.runs._error(err))) from None

    def read(self, run_id: str) -> dict[str, Any] | None:
        """The run's record, None when there is none or it cannot be read (too large, not a record, an id the run
        store refuses: said in the log only)."""
        try:
            rid = PgRunStore._check_id(run_id)
            row = self._sql(f"SELECT octet_length(record::text), CASE WHEN octet_length(record::text) <= %s "
                            f"THEN record::text END FROM {S}.run_drafts WHERE owner = %s AND run_id = %s",
                            (RECORD_MAX, self.owner, rid))
            if row is not None and row[1] is None:
                raise ValueError(f"too large: {row[0]} bytes")
            data = None if row is None else json.loads(row[1])
        except (OSError, ValueError, RecursionError) as err:
            _unreadable(run_id, err)
            return None
        return _checked(data, run_id)

    def write(self, run_id: str, record: dict[str, Any] | None) -> None:
        """Keep `record` as the run's (None: remove it). ValueError for a record over RECORD_MAX or an id the run
        store refuses."""
        rid = PgRunStore._check_id(run_id)
        if record is None:
            self._sql(f"DELETE FROM {S}.run_drafts WHERE owner = %s AND run_id = %s", (self.owner, rid))
            return
        text = _json({"format": FORMAT, "run_id": rid, **record})  # jsonb holds no U+0000 (runs/postgres.py)
        if (size := len(text.encode("utf-8"))) > RECORD_MAX:
            raise ValueError(f"the draft of run {rid} is too large to keep ({size} bytes)")
        self._sql(f"""INSERT INTO {S}.run_drafts (owner, run_id, record) VALUES (%s, %s, %s::jsonb)
                      ON CONFLICT (owner, run_id) DO UPDATE SET record = EXCLUDED.record, updated_at = now()""",
                  (self.owner, rid, text))
        self.prune()

    def prune(self, *, now: float | None = None) -> None:
        """Remove every person's records not written for KEPT_DAYS (a run left with ticks and never opened again, or
        deleted while the server was down), at most once an hour per process. Never raises."""
        now = time.time() if now is None else now
        if now - _PRUNED[0] < 3600:
            return
        _PRUNED[0] = now
        try:
            self._sql(f"DELETE FROM {S}.run_drafts WHERE updated_at < now() - make_interval(days => %s)",
                      (KEPT_DAYS,))
        except (OSError, StoreError) as err:
            log.warning("old drafts could not be removed (%s)", err)


class FallbackDrafts:
    """`primary` (None: the run store could not be opened) with the files of `local` behind it while it cannot be
    reached. What is written during an outage is kept on the files, stamped with when (a clearing as a `cleared`
    mark); a read takes the newer of the two places' records and, the primary answering, moves a newer one kept here
    to it. Removing a record removes it from both (during an outage: a mark here, carried over later)."""

    def __init__(self, primary: PgDrafts | None, local: Drafts, *, outage: Outage) -> None:
        self.primary, self.local, self.outage = primary, local, outage

    def _primary(self) -> PgDrafts | None:
        """The primary, unless it failed within the outage's retry time (then it is not asked)."""
        return None if self.outage.down() else self.primary

    def read(self, run_id: str) -> dict[str, Any] | None:
        here = self.local.raw(run_id)
        if (pg := self._primary()) is not None:
            try:
                there = pg.read(run_id)
            except StoreError as err:
                self.outage.mark(err)
            else:
                if here is None or (there is not None and _when(there) >= _when(here)):
                    if here is not None:  # an outage's record, older than one written since: no longer wanted
                        self.local.forget(run_id)
                    return _shown(there)
                self._carry(pg, run_id, here)
        return _shown(here)

    def _carry(self, pg: PgDrafts, run_id: str, here: dict[str, Any]) -> None:
        """The record kept here during an outage, newer than the primary's, written to the primary (a clearing: the
        primary's removed), then no longer kept here. A failure leaves it here for the next read."""
        try:
            pg.write(run_id, None if here.get(CLEARED) else body(here))
        except StoreError as err:
            self.outage.mark(err)
        except (OSError, ValueError) as err:
            log.warning("the draft of run %s kept during an outage could not be moved (%s)", str(run_id)[:80], err)
        else:
            self.local.forget(run_id)

    def write(self, run_id: str, record: dict[str, Any] | None) -> None:
        stamped = None if record is None else {**record, WRITTEN_AT: time.time()}
        if (pg := self._primary()) is not None:
            try:
                pg.write(run_id, stamped)
            except StoreError as err:
                self.outage.mark(err)
            else:
                self.local.forget(run_id)  # one kept here during an outage is superseded
                return
        self.local.write(run_id, stamped if stamped is not None else {CLEARED: True, WRITTEN_AT: time.time()})

    def forget(self, run_id: str) -> None:
        """Remove the run's record from both places (while the primary cannot be reached, a clearing mark is kept
        here, so its record is not read back later). Never raises."""
        if (pg := self._primary()) is not None:
            try:
                pg.write(run_id, None)
            except StoreError as err:
                self.outage.mark(err)
            except (OSError, ValueError) as err:
                log.warning("the draft of run %s could not be removed (%s)", str(run_id)[:80], err)
            else:
                self.local.forget(run_id)
                return
        try:
            self.local.write(run_id, {CLEARED: True, WRITTEN_AT: time.time()})
        except (OSError, ValueError) as err:
            log.warning("the draft of run %s could not be marked removed (%s)", str(run_id)[:80], err)


def body(record: dict[str, Any]) -> dict[str, Any]:
    """A record without what every record carries (its format, its run's id): what was given to `write`."""
    return {k: v for k, v in record.items() if k not in ("format", "run_id")}


def _when(record: dict[str, Any]) -> float:
    """When a record was written (0: before records said so, or said nothing readable)."""
    v = record.get(WRITTEN_AT)
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else 0.0


def _shown(record: dict[str, Any] | None) -> dict[str, Any] | None:
    """A record as a page reads it: None for a clearing mark, else without its time."""
    if record is None or record.get(CLEARED):
        return None
    return {k: v for k, v in record.items() if k != WRITTEN_AT}


def drafts_of(runs: Any) -> Drafts | FallbackDrafts:
    """The drafts that go with a run store: a FallbackRunStore's in its PostgreSQL store (the same person's, the same
    pool and outage) with its local folder behind; a PgRunStore's alone there, with TOG_HOME's files behind; else the
    files of the store's folder (a PgRunStore's: the person's own under TOG_HOME when the view is theirs only)."""
    if isinstance(runs, FallbackRunStore):
        primary = runs.primary if isinstance(runs.primary, PgRunStore) else None
        return FallbackDrafts(PgDrafts(primary) if primary is not None else None, Drafts(runs.local.root),
                              outage=runs.outage)
    if isinstance(runs, PgRunStore):  # not the app's (it passes a FallbackRunStore): one outage per pool, so a dead
        # server is waited on once in its retry time, and the person's own folder when the view is theirs only
        outage = _OUTAGES.setdefault(runs._pool, Outage())
        local = RunStore().for_owner(runs.user) if runs.only else RunStore()
        return FallbackDrafts(PgDrafts(runs), Drafts(local.root), outage=outage)
    return Drafts(runs.root)


_OUTAGES: weakref.WeakKeyDictionary[Any, Outage] = weakref.WeakKeyDictionary()
