"""PgRunStore: the run store in PostgreSQL (tables tog.runs, tog.steps, tog.overrides; tog.run_drafts holds
Explore's unsaved ticks, runs/drafts.py), for a deployment shared by many people. Same methods as the JSON-file
RunStore (save, load, delete, list, problems); runs carry the project and the user/session that made them, and
`list` filters by either.

`save(trace)` is called after every step; it writes the run row, every step and every override in ONE
transaction, so a reader (or a crash) sees the state after some step, never a mix of two. Unchanged steps are
sent again but not rewritten (`IS DISTINCT FROM`); a trace that lost steps (resumed from earlier) drops the
rows past its end. The row counts the run's saves (`revision`): a save expecting another count than the row's is
refused (RunConflict, runs/revision.py), in the same statement that would write it.
"""
from __future__ import annotations

import builtins
import copy
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tog_core.graphrag.pg_common import CATALOG_SCHEMA as S
from tog_core.graphrag.pg_common import StoreError, connect, redact, scrub
from tog_core.runs.files import _RUN_ID, RunStore, RunSummary, new_run_id
from tog_core.runs.revision import RunConflict, next_revision
from tog_core.tog.trace import Trace

DDL = [
    f"CREATE SCHEMA IF NOT EXISTS {S}",
    # one row per run: the summary columns `list` shows, and the trace without its steps
    f"""CREATE TABLE IF NOT EXISTS {S}.runs (
        run_id text PRIMARY KEY, project text NOT NULL, user_id text NOT NULL DEFAULT '',
        question text NOT NULL, created_at text NOT NULL, updated_at timestamptz NOT NULL DEFAULT now(),
        answer text NOT NULL DEFAULT '', stop_reason text, llm_calls int NOT NULL DEFAULT 0, cost_usd float8,
        width int, depth int, pruner text NOT NULL DEFAULT '', model text NOT NULL DEFAULT '',
        parent_run text, n_steps int NOT NULL, trace jsonb NOT NULL)""",
    # how many times the run was saved (runs/revision.py): a save over a run saved meanwhile is refused
    f"ALTER TABLE {S}.runs ADD COLUMN IF NOT EXISTS revision int NOT NULL DEFAULT 0",
    # Saved runs of the current project, newest first (the app's list): an index scan, no sort
    f"CREATE INDEX IF NOT EXISTS runs_by_project ON {S}.runs (project, created_at DESC, run_id DESC)",
    # one person's runs across projects
    f"CREATE INDEX IF NOT EXISTS runs_by_user ON {S}.runs (user_id, created_at DESC, run_id DESC)",
    f"""CREATE TABLE IF NOT EXISTS {S}.steps (
        run_id text NOT NULL REFERENCES {S}.runs ON DELETE CASCADE, n int NOT NULL,
        depth int NOT NULL, stage text NOT NULL, step jsonb NOT NULL, PRIMARY KEY (run_id, n))""",
    # the person's edits, one row each, so "which runs overrode the automatic choice" is a plain query
    f"""CREATE TABLE IF NOT EXISTS {S}.overrides (
        run_id text NOT NULL, n int NOT NULL, k int NOT NULL, id text NOT NULL, label text NOT NULL DEFAULT '',
        auto_kept bool, kept bool, PRIMARY KEY (run_id, n, k),
        FOREIGN KEY (run_id, n) REFERENCES {S}.steps ON DELETE CASCADE)""",
    # Explore's unsaved ticks, one record per run and owner (runs/drafts.py: PgDrafts); no key to runs: a draft may
    # be of a run kept on a replica's files during an outage
    f"""CREATE TABLE IF NOT EXISTS {S}.run_drafts (
        owner text NOT NULL, run_id text NOT NULL, record jsonb NOT NULL, updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (owner, run_id))""",
]
_DDL_LOCK = 7_310_515


def _no_nul(obj: Any) -> Any:
    """jsonb cannot hold U+0000: replaced by U+FFFD (only walked when the JSON text has one)."""
    if isinstance(obj, str):
        return obj.replace("\x00", "\ufffd")
    if isinstance(obj, dict):
        return {_no_nul(k): _no_nul(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_no_nul(v) for v in obj]
    return obj


def _json(obj: Any) -> str:
    text = json.dumps(obj, ensure_ascii=False)
    return json.dumps(_no_nul(obj), ensure_ascii=False) if "\\u0000" in text else text


class PgRunStore:
    """Runs in PostgreSQL. `user` is recorded on every run this store saves (a login or a session id)."""

    def __init__(self, url: str, *, user: str = "", pool_size: int = 4, timeout: float = 10.0) -> None:
        import psycopg
        from psycopg_pool import ConnectionPool

        self.url = redact(url)
        self._secret_url = url
        self.user = user
        self.only = False  # for_user(..., only=True): this user's runs only
        self._timeout = timeout  # seconds to wait for a pooled connection (a server that went away: StoreError)
        try:
            with connect(url) as conn, conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_DDL_LOCK,))
                for ddl in DDL:
                    conn.execute(ddl)
        except (psycopg.OperationalError, psycopg.InterfaceError) as err:
            raise self._error(err) from None
        self._pool = ConnectionPool(url, min_size=1, max_size=max(1, pool_size), open=True, name="tog:runs",
                                    kwargs={"autocommit": True, "connect_timeout": 10, "client_encoding": "UTF8",
                                            "application_name": "tog-explorer"})

    def for_user(self, user: str, *, only: bool = False) -> PgRunStore:
        """The same store (same connection pool) recording another user/session: one pool per process, one
        view per session. Close only the store the views were made from. `only`: the view lists, opens, saves over
        and deletes that user's runs only (runs kept per person: app/owner.py); another's run is "no saved run"."""
        view = copy.copy(self)
        view.user, view.only = user, only
        return view

    def close(self) -> None:
        self._pool.close()

    def __enter__(self) -> PgRunStore:
        return self

    def __exit__(self, *_exc: Any) -> None:
        self.close()

    @staticmethod
    def _check_id(run_id: str) -> str:
        if not isinstance(run_id, str) or not _RUN_ID.match(run_id):
            raise ValueError(f"invalid run id {run_id!r}")
        return run_id

    def _error(self, err: Exception) -> StoreError:
        words = scrub((str(err).strip().splitlines() or [err.__class__.__name__])[0], self._secret_url)
        return StoreError(f"run store {self.url}: {words[:300]}")

    @contextmanager
    def _conn(self) -> Iterator[Any]:
        """A pooled connection; a server that is down or went away is a StoreError (after at most `timeout` s)."""
        import psycopg

        try:
            with self._pool.connection(timeout=self._timeout) as conn:
                yield conn
        except (psycopg.OperationalError, psycopg.InterfaceError) as err:
            raise self._error(err) from None

    # ------------------------------------------------------------ writing
    def save(self, trace: Trace) -> str:
        """Write the whole trace in one transaction; returns the run id (a new one if the trace had none) and sets
        `trace.revision` to the run's new count of saves. Raises RunConflict, writing nothing, when the run is stored
        at another revision than the trace's (runs/revision.py; None: saved without a check)."""
        if not trace.run_id:
            trace.run_id = new_run_id()
        rid = self._check_id(trace.run_id)
        want = trace.revision
        d = trace.to_dict()
        d.pop("revision", None)  # the row's revision column holds it
        steps = d.pop("steps")
        cfg, stats = d.get("config") or {}, d.get("stats") or {}
        run = (rid, str(d.get("project", "")), self.user, str(d.get("question", "")), str(d.get("created_at", "")),
               str(d.get("answer", "")), d.get("stop_reason"), int(stats.get("llm_calls") or 0), stats.get("cost_usd"),
               cfg.get("width"), cfg.get("depth"), str(cfg.get("pruner", "")), str(cfg.get("model", "")),
               d.get("parent_run"), len(steps), _json(d), next_revision(None, want, rid))
        with self._conn() as conn, conn.transaction():
            revision = self._write_run(conn, run, want)
            if revision is None:  # nothing of the stored run is touched
                row = conn.execute(f"SELECT user_id, revision FROM {S}.runs WHERE run_id = %s", (rid,)).fetchone()
                if row is not None and want is not None and not (self.only and row[0] != self.user):
                    raise RunConflict(rid, row[1], want)
                raise FileExistsError(f"no saved run {rid} in {self.url}; ask again to save a new run")
            self._write_steps(conn, rid, steps)
            self._write_overrides(conn, rid, steps)
        trace.revision = revision
        return rid

    def _write_run(self, conn: Any, run: tuple[Any, ...], want: int | None) -> int | None:
        """Insert or update the run's row; its new revision, or None when the row is left as it is: `only` and the
        row is another user's, or it is not at the revision `want` (someone saved it meanwhile; the row is locked by
        the update, so of two saves expecting one revision only the first goes through). A row keeps the user who
        first saved it: the CLI's --resume, or a deployment sharing the store without per-person runs, saves a
        person's run without taking it out of their list."""
        where = ([f"{S}.runs.user_id = EXCLUDED.user_id"] if self.only else []) + (
            [f"{S}.runs.revision = %s"] if want is not None else [])
        row = conn.execute(f"""INSERT INTO {S}.runs (run_id, project, user_id, question, created_at, answer,
                stop_reason, llm_calls, cost_usd, width, depth, pruner, model, parent_run, n_steps, trace, revision)
            VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s::jsonb, %s)
            ON CONFLICT (run_id) DO UPDATE SET project = EXCLUDED.project,
                question = EXCLUDED.question, created_at = EXCLUDED.created_at, updated_at = now(),
                answer = EXCLUDED.answer, stop_reason = EXCLUDED.stop_reason, llm_calls = EXCLUDED.llm_calls,
                cost_usd = EXCLUDED.cost_usd, width = EXCLUDED.width, depth = EXCLUDED.depth,
                pruner = EXCLUDED.pruner, model = EXCLUDED.model, parent_run = EXCLUDED.parent_run,
                n_steps = EXCLUDED.n_steps, trace = EXCLUDED.trace, revision = GREATEST({S}.runs.revision, 0) + 1"""
                           + (" WHERE " + " AND ".join(where) if where else "") + " RETURNING revision",
                           (*run, *([want] if want is not None else []))).fetchone()
        return None if row is None else int(row[0])

    def _write_steps(self, conn: Any, rid: str, steps: list[dict[str, Any]]) -> None:
        conn.execute(f"DELETE FROM {S}.steps WHERE run_id = %s AND n >= %s", (rid, len(steps)))
        if steps:
            conn.cursor().executemany(
                f"""INSERT INTO {S}.steps (run_id, n, depth, stage, step) VALUES (%s, %s, %s, %s, %s::jsonb)
                    ON CONFLICT (run_id, n) DO UPDATE SET depth = EXCLUDED.depth, stage = EXCLUDED.stage,
                        step = EXCLUDED.step WHERE {S}.steps.step IS DISTINCT FROM EXCLUDED.step""",
                [(rid, n, int(s.get("depth", 0)), str(s.get("stage", "")), _json(s)) for n, s in enumerate(steps)])

    def _write_overrides(self, conn: Any, rid: str, steps: list[dict[str, Any]]) -> None:
        conn.execute(f"DELETE FROM {S}.overrides WHERE run_id = %s", (rid,))
        rows = [(rid, n, k, str(o.get("id", "")), str(o.get("label", "")), o.get("auto_kept"), o.get("kept"))
                for n, s in enumerate(steps) for k, o in enumerate(s.get("overrides") or [])]
        if rows:
            conn.cursor().executemany(f"INSERT INTO {S}.overrides (run_id, n, k, id, label, auto_kept, kept) "
                                      "VALUES (%s, %s, %s, %s, %s, %s, %s)", [_no_nul(r) for r in rows])

    def delete(self, run_id: str) -> None:
        mine, args = self._mine(self._check_id(run_id))
        with self._conn() as conn:
            conn.execute(f"DELETE FROM {S}.runs WHERE run_id = %s" + mine, args)

    def _mine(self, rid: str, column: str = "user_id") -> tuple[str, tuple[str, ...]]:
        """The SQL condition (and its arguments, after the run id) that keeps a `for_user(..., only=True)` view to its
        user's runs."""
        return (f" AND {column} = %s", (rid, self.user)) if self.only else ("", (rid,))

    # ------------------------------------------------------------ reading
    def load(self, run_id: str) -> Trace:
        rid = self._check_id(run_id)
        mine, args = self._mine(rid, "r.user_id")
        with self._conn() as conn:
            row = conn.execute(f"""SELECT r.trace, r.revision, COALESCE((SELECT jsonb_agg(s.step ORDER BY s.n)
                                   FROM {S}.steps s WHERE s.run_id = r.run_id), '[]'::jsonb) FROM {S}.runs r
                                   WHERE r.run_id = %s""" + mine,
                               args).fetchone()
        if row is None:
            raise FileNotFoundError(f"no saved run {rid} in {self.url}")
        d, revision, steps = row
        try:
            return Trace.from_dict({**d, "steps": steps, "revision": revision})
        except (ValueError, TypeError, KeyError) as err:
            raise ValueError(f"run {rid} in {self.url}: not a readable trace ({err})") from None

    def list(self, project: str | None = None, user: str | None = None) -> list[RunSummary]:
        """Runs newest first, of one project and/or one user when given (a `for_user(..., only=True)` view: its
        user's, whatever `user` says). `path` is the run id (not a file)."""
        where, args = [], []
        if self.only:
            user = self.user
        if project is not None:
            where.append("project = %s")
            args.append(project)
        if user is not None:
            where.append("user_id = %s")
            args.append(user)
        # the summary columns, and from the trace (kept without its steps) only where an unfinished run stopped
        sql = (f"SELECT run_id, question, created_at, project, answer, stop_reason, llm_calls, cost_usd, width, "
               f"depth, pruner, model, parent_run, n_steps, COALESCE(trace->'state'->>'stage', ''), "
               f"COALESCE(jsonb_typeof(trace->'state') = 'object' AND trace->'state' <> '{{}}'::jsonb, false), "
               f"updated_at::text, revision FROM {S}.runs" + (" WHERE " + " AND ".join(where) if where else "")
               + " ORDER BY created_at DESC, run_id DESC")
        with self._conn() as conn:
            rows = conn.execute(sql, args).fetchall()
        return [RunSummary(run_id=r[0], question=r[1], created_at=r[2], project=r[3], answer=r[4], stop_reason=r[5],
                           llm_calls=r[6], cost_usd=r[7], width=r[8], depth=r[9], pruner=r[10], model=r[11],
                           finished=bool(r[4]), parent_run=r[12], path=Path(r[0]), steps=r[13], stage=r[14],
                           resumable=not r[4] and r[5] != "error" and bool(r[15]), stamp=r[16], revision=r[17])
                for r in rows]

    def scan(self) -> tuple[builtins.list[RunSummary], builtins.list[str]]:  # builtins: `list` is a method here
        """`list()` and `problems()` together (as RunStore.scan)."""
        return self.list(), self.problems()

    def problems(self) -> builtins.list[str]:
        """Runs whose stored steps do not match the count their row records (only hand edits can do that)."""
        mine = " WHERE r.user_id = %s" if self.only else ""
        with self._conn() as conn:
            rows = conn.execute(f"""SELECT r.run_id, r.n_steps, count(s.n) FROM {S}.runs r
                                    LEFT JOIN {S}.steps s USING (run_id){mine} GROUP BY r.run_id, r.n_steps
                                    HAVING count(s.n) <> r.n_steps ORDER BY r.run_id""",
                                (self.user,) if self.only else ()).fetchall()
        return [f"{rid}: {have} of {want} steps stored" for rid, want, have in rows]


def open_run_store(store: str | None = None, *, user: str = "",
                   root: Path | str | None = None) -> RunStore | PgRunStore:
    """The run store of a deployment: PostgreSQL when a store URL is given, else the JSON files under TOG_HOME."""
    return PgRunStore(store, user=user) if store else RunStore(root)
