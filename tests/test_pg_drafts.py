"""Explore's unsaved ticks kept in PostgreSQL when the runs are (tog_core/runs/drafts.py): a draft written through one
replica (one TOG_HOME) is read through another; each person's drafts are their own; a record over the limit or not a
record is no record; with the server down, drafts go to the replica's files without a page waiting twice, and move
back once it is up. In a throwaway cluster (tests/pg.py; skipped with the reason when PostgreSQL is not installed,
unless TOG_REQUIRE_POSTGRES is set)."""
from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tog_core.graphrag.pg_common import CATALOG_SCHEMA as S
from tog_core.graphrag.pg_common import StoreError, connect
from tog_core.runs.drafts import RECORD_MAX, Drafts, FallbackDrafts, PgDrafts, drafts_of
from tog_core.runs.fallback import FallbackRunStore, Outage
from tog_core.runs.files import RunStore, new_run_id

TICKS = {"pending": {"steps": 2, "depth": 1, "stage": "entities", "offered": ["a", "b"], "ids": ["b"]}}


@pytest.fixture()
def pg(pg_url):
    from tog_core.runs.postgres import PgRunStore

    store = PgRunStore(pg_url)
    yield store
    store.close()


def replica(pg, home: Path, user: str, *, only: bool = False) -> FallbackRunStore:
    """The run store one app replica (TOG_HOME `home`) makes for a session, as explorer/ui.store does."""
    local = RunStore(home / "runs")
    return FallbackRunStore(pg.for_user(user, only=only), local.for_owner(user) if only else local, outage=Outage())


def files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob(".drafts/*") if p.is_file())


def test_a_draft_written_through_one_replica_is_read_through_another(pg, tmp_path):
    rid = new_run_id()
    here, there = drafts_of(replica(pg, tmp_path / "a", "session-1")), drafts_of(replica(pg, tmp_path / "b", "s-2"))
    here.write(rid, TICKS)
    assert there.read(rid) == {"format": 1, "run_id": rid, **TICKS}  # the other replica, another session
    assert files(tmp_path) == []  # on no replica's disk
    there.write(rid, {**TICKS, "diverged": True})
    assert here.read(rid)["diverged"] is True
    there.forget(rid)  # the run deleted on the other replica
    assert here.read(rid) is None and there.read(rid) is None


def test_each_persons_drafts_are_their_own_in_postgresql(pg, tmp_path):
    rid = new_run_id()
    ann, bob = (drafts_of(replica(pg, tmp_path / h, who, only=True)) for h, who in (("a", "ann"), ("b", "bob")))
    shared = drafts_of(replica(pg, tmp_path / "a", "session-1"))  # the same server with runs not kept per person
    ann.write(rid, TICKS)
    assert ann.read(rid)["pending"]["ids"] == ["b"]
    assert bob.read(rid) is None and shared.read(rid) is None  # ann's run's id is no way into her ticks
    bob.write(rid, {"pending": {**TICKS["pending"], "ids": ["a"]}})
    bob.forget(rid)  # bob's own go, ann's stay
    assert bob.read(rid) is None and ann.read(rid)["pending"]["ids"] == ["b"]
    with connect(pg._secret_url) as conn:
        assert conn.execute(f"SELECT owner FROM {S}.run_drafts WHERE run_id = %s", (rid,)).fetchall() == [("ann",)]


def test_a_record_over_the_limit_or_not_a_record_is_no_record(pg, pg_url):
    drafts, rid = PgDrafts(pg), new_run_id()
    with pytest.raises(ValueError, match="too large"):
        drafts.write(rid, {"pending": {"ids": ["x" * RECORD_MAX]}})
    assert drafts.read(rid) is None  # nothing was kept
    for bad in ({"format": 1, "run_id": rid, "pad": "x" * RECORD_MAX}, [1, 2], "text",
                {"format": 2, "run_id": rid, **TICKS}, {"format": 1, "run_id": "another", **TICKS}):
        with connect(pg_url) as conn:  # as a hand edit, or an older or newer app, could leave it
            conn.execute(f"""INSERT INTO {S}.run_drafts (owner, run_id, record) VALUES ('', %s, %s::jsonb)
                             ON CONFLICT (owner, run_id) DO UPDATE SET record = EXCLUDED.record""",
                         (rid, json.dumps(bad)))
        assert drafts.read(rid) is None, bad
    for bad_id in ("../x", "a b", "x" * 81, "id\n"):  # ids the run store refuses
        assert drafts.read(bad_id) is None
        with pytest.raises(ValueError):
            drafts.write(bad_id, TICKS)
    drafts.write(rid, {"pending": {"ids": ["a\x00b"]}})  # jsonb holds no U+0000: kept all the same
    assert drafts.read(rid)["pending"]["ids"] == ["a\ufffdb"]


def restart(cluster) -> None:
    """Start the stopped cluster again on its data and port (tests/pg.py)."""
    opts = f"-p {cluster.port} -c listen_addresses=127.0.0.1 -k {cluster.dir / 'sock'} -c fsync=off"
    r = cluster._run(str(cluster.bin / "pg_ctl"), "-D", str(cluster.dir / "data"), "-l",
                     str(cluster.dir / "server.log"), "-o", opts, "-w", "-t", "60", "start")
    assert r.returncode == 0, r.stderr


def test_with_the_server_down_drafts_go_to_the_files_and_back_once_it_is_up(tmp_path, caplog):
    from pg import cluster_or_skip

    from tog_core.runs.postgres import PgRunStore

    cluster = cluster_or_skip()
    try:
        pg = PgRunStore(cluster.url.replace("postgres@", "postgres:s3cret-pw@"), timeout=2.0)  # trust: not checked
        outage = Outage(retry_s=600)
        runs = FallbackRunStore(pg.for_user("session-1"), RunStore(tmp_path / "runs"), outage=outage)
        drafts = drafts_of(runs)
        kept, rid = new_run_id(), new_run_id()
        drafts.write(kept, TICKS)
        newer, cleared, stale = new_run_id(), new_run_id(), new_run_id()
        for r in (newer, cleared, stale):
            drafts.write(r, {**TICKS, "ids_before": r})
        cluster._run(str(cluster.bin / "pg_ctl"), "-D", str(cluster.dir / "data"), "-m", "fast", "-w", "stop")

        drafts.write(rid, TICKS)  # no error: on this replica's files, and the outage is said for the runs too
        assert outage.down() and "run store" in outage.why and "cannot be reached" in runs.note()
        assert "s3cret" not in outage.why and "***" in outage.why  # the URL's password is never repeated
        assert [p.name for p in files(tmp_path)] == [f"{rid}.json"]
        drafts.write(newer, {**TICKS, "during": "the outage"})  # newer ticks than PostgreSQL's, kept here
        drafts.write(cleared, None)  # ticks cleared while the server is down
        drafts.write(stale, {**TICKS, "during": "the outage"})  # ... then written again elsewhere once it is up
        t0 = time.monotonic()
        assert drafts.read(rid)["pending"] == TICKS["pending"]
        assert drafts.read(kept) is None  # in PostgreSQL: not there to be read, and no error
        drafts.forget(kept)
        assert time.monotonic() - t0 < 1.0  # the dead server was waited for once, not again
        opened_down = drafts_of(FallbackRunStore(None, RunStore(tmp_path / "runs"), outage=Outage(),
                                                 opening_error=StoreError("run store postgresql://h/db: refused")))
        assert opened_down.read(rid)["run_id"] == rid  # a replica that could not even open the store: the files

        restart(cluster)
        pg._pool.check()  # the connections the stop broke are dropped (else each fails once more, as in a deployment)
        outage.clear()
        assert drafts.read(rid)["pending"] == TICKS["pending"]  # kept here meanwhile: still found
        other = drafts_of(FallbackRunStore(pg.for_user("s-3"), RunStore(tmp_path / "c"), outage=Outage()))
        other.write(stale, {**TICKS, "during": "after it"})  # another replica, once the server is up: newer still
        assert drafts.read(kept) is None  # the forget while down is carried over, not undone by the older record
        assert drafts.read(newer) == {"format": 1, "run_id": newer, **TICKS, "during": "the outage"}  # not the older
        assert drafts.read(cleared) is None  # cleared during the outage: the older ticks do not come back
        assert drafts.read(stale)["during"] == "after it"  # what this replica kept is older than what came since
        for r in (kept, cleared):  # carried over to PostgreSQL: every replica reads the same
            assert other.read(r) is None
        assert other.read(newer)["during"] == "the outage" and other.read(stale)["during"] == "after it"
        assert files(tmp_path / "runs") == []  # each read moved or dropped what this replica kept
        assert other.read(rid)["pending"] == TICKS["pending"]
        drafts.write(rid, {**TICKS, "diverged": True})  # written again: moves to PostgreSQL
        assert files(tmp_path) == []
        other = drafts_of(FallbackRunStore(pg.for_user("s-2"), RunStore(tmp_path / "b"), outage=Outage()))
        assert other.read(rid)["diverged"] is True
        other.forget(rid)
        assert drafts.read(rid) is None

        with connect(cluster.url) as conn:  # the server up, the table gone (a hand edit): no outage, no error
            conn.execute(f"DROP TABLE {S}.run_drafts")
        assert drafts.read(rid) is None
        with pytest.raises(OSError, match="run_drafts"):  # explorer/drafts.keep: the ticks live in the page only
            drafts.write(rid, TICKS)
        drafts.forget(rid)
        assert not outage.down()
        assert "s3cret" not in caplog.text
        pg.close()
    finally:
        cluster.stop()


def test_without_a_store_url_drafts_stay_files(tmp_path):
    runs = RunStore(tmp_path / "runs")
    drafts = drafts_of(runs)
    assert isinstance(drafts, Drafts) and not isinstance(drafts, FallbackDrafts)
    drafts.write("r1", TICKS)
    assert [p.relative_to(tmp_path).as_posix() for p in files(tmp_path)] == ["runs/.drafts/r1.json"]
    assert drafts.read("r1")["pending"] == TICKS["pending"] and runs.list() == []


def test_drafts_of_a_postgresql_store_alone_share_one_outage_and_keep_a_persons_files_apart(pg, tmp_path, monkeypatch):
    """Not the app's way in (it passes a FallbackRunStore), but drafts_of takes a PgRunStore too: every call for one
    pool shares one outage (a dead server is waited on once), and a view of one person's runs falls back to that
    person's own folder under TOG_HOME, not the shared one."""
    monkeypatch.setenv("TOG_HOME", str(tmp_path))
    one, two = drafts_of(pg.for_user("ann", only=True)), drafts_of(pg.for_user("bob"))
    assert one.outage is two.outage
    assert one.local.root == RunStore().for_owner("ann").root / ".drafts"
    assert two.local.root == RunStore().root / ".drafts"


def test_drafts_not_written_for_a_month_are_removed_at_most_once_an_hour(pg, pg_url):
    from tog_core.runs import drafts as D

    mine = PgDrafts(pg)
    old, fresh = new_run_id(), new_run_id()
    mine.write(old, TICKS)
    mine.write(fresh, TICKS)
    with connect(pg_url) as conn:
        conn.execute(f"UPDATE {S}.run_drafts SET updated_at = now() - interval '31 days' WHERE run_id = %s", (old,))
    D._PRUNED[0] = time.time()  # pruned a moment ago: not again within the hour
    mine.prune()
    assert mine.read(old) is not None
    mine.prune(now=time.time() + 3601)
    assert mine.read(old) is None and mine.read(fresh) is not None
