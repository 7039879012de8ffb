"""PostgreSQL as run store, and the command line and the app on a PostgreSQL deployment, against a real server (a
throwaway cluster, tests/pg.py; the graph store: tests/test_postgres.py).

Skipped, with the reason, only when PostgreSQL is not installed and TOG_REQUIRE_POSTGRES is unset (CI sets it).
"""
from __future__ import annotations

import asyncio
import json
from pathlib import Path

import psycopg
import pytest

from tog_core.cli.main import main
from tog_core.graphrag.pg_common import graph_generation
from tog_core.graphrag.pg_import import import_graph
from tog_core.runs.postgres import PgRunStore, open_run_store
from tog_core.tog.engine import ToGEngine
from tog_core.tog.state import EngineConfig

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "demo"


# ------------------------------------------------------------------ run store

def saved_run(demo_pg, store, question="Who founded the Lanternwright Guild?"):
    eng = ToGEngine(demo_pg, config=EngineConfig(relation_pruner="bm25", entity_pruner="bm25"), project="demo")
    st = eng.start(question)
    sizes = []
    while not st.done:
        st = eng.apply(st, asyncio.run(eng.propose(st)))
        store.save(eng.trace(st, run_id="run-" + str(abs(hash(question)) % 10**8)))
        sizes.append(len(st.steps))
    return eng, st, sizes


def test_run_store_round_trip_after_every_step(pg_url, demo_pg):
    store = PgRunStore(pg_url, user="ann")
    eng, st, sizes = saved_run(demo_pg, store)
    tr = eng.trace(st, run_id=store.list(project="demo")[0].run_id)
    tr.steps[0].candidates[0].reason = "a reason with a NUL \x00 inside"  # jsonb cannot store U+0000
    store.save(tr)
    back = store.load(tr.run_id)
    assert sizes == sorted(sizes) and len(back.steps) == len(tr.steps) > 0
    want = tr.to_dict()
    want["steps"][0]["candidates"][0]["reason"] = "a reason with a NUL \ufffd inside"
    assert back.to_dict() == want
    resumed = eng.restore(back)
    assert resumed.depth == st.depth and len(resumed.steps) == len(st.steps)
    with pytest.raises(FileNotFoundError):
        store.load("no-such-run")
    with pytest.raises(ValueError):
        store.load("../../etc/passwd")
    assert store.problems() == []
    store.close()


def test_run_store_lists_by_project_and_user_newest_first(pg_url, demo_pg):
    ann = PgRunStore(pg_url, user="ann-list")
    bob = ann.for_user("bob-list")  # a session's view on the same pool
    eng = ToGEngine(demo_pg, config=EngineConfig(relation_pruner="bm25", entity_pruner="bm25"), project="demo")
    for i, (store, project) in enumerate([(ann, "p1"), (bob, "p1"), (ann, "p2")]):
        tr = eng.trace(eng.start("Who founded the Lanternwright Guild?"), run_id=f"list-{i}")
        tr.project, tr.created_at = project, f"2026-01-0{i + 1}T00:00:00"
        store.save(tr)
    assert [r.run_id for r in ann.list(project="p1")] == ["list-1", "list-0"]
    assert [r.run_id for r in ann.list(project="p1", user="ann-list")] == ["list-0"]
    assert [r.run_id for r in bob.list(user="ann-list")] == ["list-2", "list-0"]
    ann.delete("list-0")
    assert [r.run_id for r in ann.list(project="p1")] == ["list-1"]
    ann.close()


def test_a_per_person_view_sees_saves_and_deletes_only_its_persons_runs(pg_url, demo_pg):
    """Runs kept per person (TOG_RUN_OWNER, app/owner.py): a `for_user(..., only=True)` view lists, opens, saves over
    and deletes its person's runs only; another's run is "no saved run", and its row is left as it was."""
    base = PgRunStore(pg_url, user="")
    ann, bob = base.for_user("ann-only", only=True), base.for_user("bob-only", only=True)
    eng = ToGEngine(demo_pg, config=EngineConfig(relation_pruner="bm25", entity_pruner="bm25"), project="p-only")
    for store, rid in ((ann, "only-ann"), (bob, "only-bob")):
        store.save(eng.trace(eng.start("Who founded the Lanternwright Guild?"), run_id=rid))
    assert [r.run_id for r in ann.list()] == ["only-ann"] and [r.run_id for r in ann.list(user="bob-only")] == [
        "only-ann"]  # a per-person view lists its own whatever it is asked
    assert [r.run_id for r in bob.list(project="p-only")] == ["only-bob"]
    assert {r.run_id for r in base.list(project="p-only")} == {"only-ann", "only-bob"}  # the operator's view: all
    with pytest.raises(FileNotFoundError):
        ann.load("only-bob")
    taken = eng.trace(eng.start("Which ship did Ivo Brask captain?"), run_id="only-bob")
    with pytest.raises(FileExistsError, match="no saved run only-bob in "):
        ann.save(taken)
    ann.delete("only-bob")
    assert bob.load("only-bob").question == "Who founded the Lanternwright Guild?"
    with psycopg.connect(pg_url) as conn:  # a hand-damaged run of bob's is not named in ann's problems
        conn.execute("DELETE FROM tog.steps WHERE run_id = 'only-bob'")
        conn.execute("UPDATE tog.runs SET n_steps = 3 WHERE run_id = 'only-bob'")
    assert ann.problems() == [] and bob.problems() == ["only-bob: 0 of 3 steps stored"]
    bob.delete("only-bob")
    assert bob.list() == [] and [r.run_id for r in ann.list()] == ["only-ann"]
    cli = base.for_user("operator")  # the CLI's --resume saves ann's run: it stays ann's
    cli.save(cli.load("only-ann"))
    assert [r.run_id for r in ann.list()] == ["only-ann"] and cli.list(user="operator") == []
    base.close()


def test_run_store_lists_unfinished_runs_with_their_steps_without_reading_them(pg_url, demo_pg):
    """Saved runs says how far a run went: the list must carry the step count (it said 0 for every
    run before), where an unfinished run stopped, and whether it can be resumed; and a stamp that changes on save."""
    store = PgRunStore(pg_url, user="unfinished")
    eng = ToGEngine(demo_pg, config=EngineConfig(relation_pruner="bm25", entity_pruner="bm25"), project="p-unf")
    st = eng.start("Which ship did Ivo Brask captain?")
    st = eng.apply(st, asyncio.run(eng.propose(st)))
    store.save(eng.trace(st, run_id="unf-run"))
    [r] = store.list(project="p-unf")
    assert (r.steps, r.answer, r.resumable, r.stage) == (1, "", True, st.stage) and r.stamp
    st = eng.apply(st, asyncio.run(eng.propose(st)))
    store.save(eng.trace(st, run_id="unf-run"))
    [r2] = store.list(project="p-unf")
    assert r2.steps == 2 and r2.stamp != r.stamp
    listed, bad = store.scan()
    assert "unf-run" in {x.run_id for x in listed} and bad == []
    store.close()


def test_a_failing_save_leaves_the_previous_state(pg_url, demo_pg, monkeypatch):
    store = PgRunStore(pg_url, user="tx")
    eng = ToGEngine(demo_pg, config=EngineConfig(relation_pruner="bm25", entity_pruner="bm25"))
    st = eng.start("Which ship did Ivo Brask captain?")
    st = eng.apply(st, asyncio.run(eng.propose(st)))
    store.save(eng.trace(st, run_id="tx-run"))
    before, listed = store.load("tx-run").to_dict(), store.list(user="tx")
    st2 = eng.apply(st, asyncio.run(eng.propose(st)))

    def boom(*_a):
        raise psycopg.errors.CheckViolation("simulated failure after the run row and steps were written")

    monkeypatch.setattr(store, "_write_overrides", boom)
    with pytest.raises(psycopg.Error):
        store.save(eng.trace(st2, run_id="tx-run"))
    assert store.load("tx-run").to_dict() == before and store.list(user="tx") == listed
    monkeypatch.undo()
    store.save(eng.trace(st2, run_id="tx-run"))
    assert len(store.load("tx-run").steps) == 2
    store.save(eng.trace(st, run_id="tx-run"))  # a branch back to the first step drops the second
    assert len(store.load("tx-run").steps) == 1 and store.problems() == []
    store.close()


def test_open_run_store_picks_files_or_postgres(pg_url, tmp_path):
    from tog_core.runs.files import RunStore

    assert isinstance(open_run_store(None, root=tmp_path), RunStore)
    s = open_run_store(pg_url, user="u")
    assert isinstance(s, PgRunStore) and s.user == "u"
    s.close()
    assert graph_generation(pg_url, "never-imported") is None


def test_graph_generation_changes_on_reimport(pg_url):
    import_graph(pg_url, DEMO, name="gen")
    first = graph_generation(pg_url, "gen")
    import_graph(pg_url, DEMO, name="gen")
    assert first and graph_generation(pg_url, "gen") not in (None, first)


# ------------------------------------------------------------------ command line

def test_cli_store_import_then_inspect(pg_url, demo_mem, capsys):
    assert main(["store", "import", str(DEMO), "--store", pg_url, "--name", "cli-demo", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["name"] == "cli-demo" and out["relationships"] == demo_mem.n_relationships and not out["replaced"]
    assert main(["store", "import", str(DEMO), "--store", pg_url, "--name", "cli-demo", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["replaced"]
    assert main(["inspect", "cli-demo", "--store", pg_url, "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["counts"] == demo_mem.counts and r["problems"] == list(demo_mem.problems)
    assert r["store"]["graph"] == "cli-demo"
    assert r["chat_model"] is None  # no folder here: the graph only
    assert main(["inspect", str(DEMO), "--store", pg_url, "--name", "cli-demo", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["settings_file"]
    assert main(["store", "list", "--store", pg_url, "--json"]) == 0
    assert "cli-demo" in {g["name"] for g in json.loads(capsys.readouterr().out)["graphs"]}


def test_cli_store_errors_are_one_line_without_the_password(pg_url, capsys, monkeypatch):
    monkeypatch.delenv("TOG_STORE", raising=False)
    port = pg_url.rsplit(":", 1)[1].split("/")[0]
    assert main(["inspect", "nothing-here", "--store", pg_url]) == 2
    err = capsys.readouterr().err
    assert "store import" in err and err.count("\n") == 1
    bad = f"postgresql://postgres:s3cret-pw@127.0.0.1:{int(port) + 1 if int(port) < 65535 else 1}/postgres"
    assert main(["store", "import", str(DEMO), "--store", bad]) == 2
    err = capsys.readouterr().err
    assert "cannot connect" in err and "s3cret-pw" not in err and "***" in err and err.count("\n") == 1
    assert main(["store", "import", str(DEMO)]) == 2
    assert "TOG_STORE" in capsys.readouterr().err
    assert main(["store", "import", str(DEMO), "--store", "host=127.0.0.1 password=s3cret-pw nonsense"]) == 2
    assert "s3cret-pw" not in capsys.readouterr().err


def test_cli_query_and_bench_from_the_store_match_memory_and_save_the_run(pg_url, capsys, tmp_path, monkeypatch):
    """The issue's must-show: `store import demo`, then `query demo "<q>" --model none --pruner bm25 --store URL
    --json` gives the in-memory chains for every demo question, and the run is saved in the database."""
    monkeypatch.setenv("TOG_HOME", str(tmp_path / "home"))
    assert main(["store", "import", str(DEMO), "--store", pg_url, "--json"]) == 0
    name = json.loads(capsys.readouterr().out)["name"]
    questions = [json.loads(line)["question"] for line in (DEMO / "questions.jsonl").read_text().splitlines()]
    runs = PgRunStore(pg_url)
    for q in questions:
        args = ["query", str(DEMO), q, "--model", "none", "--pruner", "bm25", "--json"]
        assert main(args + ["--no-save"]) == 0
        mem = json.loads(capsys.readouterr().out)
        assert main(args + ["--store", pg_url]) == 0
        pg = json.loads(capsys.readouterr().out)
        ids = lambda t: [[(x["source_id"], x["relationship_id"], x["target_id"]) for x in c] for c in t["chains"]]  # noqa: E731
        assert ids(pg) == ids(mem) and pg["answer_entity"] == mem["answer_entity"], q
        saved = runs.load(pg["run_id"])
        assert saved.question == q and len(saved.steps) == len(pg["steps"]) and saved.project == name
    runs.close()
    assert main(["bench", "kgqa", str(DEMO / "output"), "--questions", str(DEMO / "questions.jsonl"), "--pruner",
                 "bm25", "--store", pg_url, "--name", name, "--json"]) == 0
    from_store = json.loads(capsys.readouterr().out)["summary"]["all"]
    assert main(["bench", "kgqa", str(DEMO / "output"), "--questions", str(DEMO / "questions.jsonl"), "--pruner",
                 "bm25", "--json"]) == 0
    assert from_store["chain_hits1"] == json.loads(capsys.readouterr().out)["summary"]["all"]["chain_hits1"]


def test_the_app_reads_the_graph_from_the_store_and_keeps_its_runs_there(pg_url, tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from tog_core.app.session import K

    monkeypatch.setenv("TOG_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("TOG_STORE", pg_url)
    monkeypatch.chdir(ROOT)
    import_graph(pg_url, DEMO)  # under the folder's name, as `store import demo` does
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=90)
    at.run()
    assert not at.exception, at.exception
    assert "(store)" not in " ".join(c.value for c in at.sidebar.caption)  # the folder is here: its settings too
    at.text_area(key=K.ASK_QUESTION).set_value("Who founded the Lanternwright Guild?")
    [ask] = [b for b in at.button if b.label == "Ask"]
    ask.click()
    at.run()
    assert not at.exception, at.exception
    with PgRunStore(pg_url) as runs:
        mine = [r for r in runs.list() if r.question == "Who founded the Lanternwright Guild?"]
    assert mine and mine[0].answer  # the run went to PostgreSQL, not to the files under TOG_HOME
    assert not list((tmp_path / "home").glob("runs/*.json"))
    monkeypatch.setenv("TOG_STORE", pg_url.replace("postgresql://", "postgresql://nobody:wrong@"))
    bad = AppTest.from_file(str(ROOT / "app.py"), default_timeout=90)
    bad.run()
    assert not bad.exception, bad.exception  # a store that cannot be read: a message, not a traceback
    assert any("Cannot open this project" in e.value for e in bad.sidebar.error)
    assert "wrong" not in " ".join(e.value for e in bad.sidebar.error)  # the URL's password is never shown
