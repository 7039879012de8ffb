"""The app on a PostgreSQL store (tests/pg.py clusters): a re-import under a running app is picked up on the next
rerun, and a store stopped mid-run ends in one message with the run kept under TOG_HOME and nothing left running.

Skipped, with the reason, only when PostgreSQL is not installed and TOG_REQUIRE_POSTGRES is unset."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from pg import cluster_or_skip
from appkit import QUESTION
from sessionkit import ALICE, acme, ask, texts
from tog_core.app.session import K
from tog_core.cli.main import main
from tog_core.graphrag.pg_import import import_graph
from tog_core.runs.files import RunStore
from tog_core.runs.postgres import PgRunStore

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")


@pytest.fixture()
def cluster():
    c = cluster_or_skip()
    yield c
    c.stop()


@pytest.fixture(autouse=True)
def home(app_home):
    return app_home


def session(project: Path | str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state[K.PROJECT_INPUT] = str(project)
    at.session_state[K.MODEL] = "none"
    at.run()
    assert not at.exception, at.exception
    return at


def test_a_store_reimport_is_picked_up_by_a_running_app(cluster, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TOG_STORE", cluster.url)
    proj = acme(tmp_path / "acme", "Paris")
    import_graph(cluster.url, proj)  # named "acme" after its folder
    at = session(proj)
    at = ask(at, ALICE)
    assert "### Paris" in [m.value for m in at.markdown]
    newer = acme(tmp_path / "next" / "acme", "Rome", extra=3)  # the folder the app opened keeps the old tables
    assert main(["store", "import", str(newer), "--store", cluster.url, "--name", "acme", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["replaced"]
    at = ask(at, ALICE)  # the same session, no restart: the store's new graph
    assert "### Rome" in [m.value for m in at.markdown], texts(at)
    assert "re-imported" not in texts(at) and "error" not in (at.session_state[K.ASK_TRACE].stop_reason or "")
    assert any("12 entities" in c.value for c in session(proj).sidebar.caption)  # and a new session too


def test_a_store_stopped_mid_run_keeps_the_run_locally_with_one_message(cluster, tmp_path, monkeypatch, home):
    monkeypatch.setenv("TOG_STORE", cluster.url)
    import_graph(cluster.url, ROOT / "demo")
    real, saves = PgRunStore.save, []

    def stop_then_save(self, trace):  # the server goes down after the run's first two saves
        saves.append(len(trace.steps))
        if len(saves) == 3:
            cluster._run(str(cluster.bin / "pg_ctl"), "-D", str(cluster.dir / "data"), "-m", "immediate", "-w", "stop")
        return real(self, trace)

    monkeypatch.setattr(PgRunStore, "save", stop_then_save)
    at = session(ROOT / "demo")
    at = ask(at, QUESTION)
    seen = texts(at)
    assert "Traceback" not in seen
    assert len(saves) == 3  # the store was asked once after it went down, then the run was kept locally
    notes = [w.value for w in at.warning if "cannot be reached" in w.value]
    assert len(notes) == 1 and "kept on this machine" in notes[0] and str(home / "runs") in notes[0]
    assert not [b for b in at.button if b.label == "Stop"]  # nothing left running on screen
    trace = at.session_state[K.ASK_TRACE].to_dict()
    kept = RunStore().load(trace["run_id"])  # under TOG_HOME
    assert kept.question == QUESTION and kept.stop_reason == trace["stop_reason"]
    if trace["stop_reason"] == "error":  # the graph's reads failed too: said once, in the run's own words
        assert sum(e.value.startswith("The run hit an error") for e in at.error) == 1
    at.switch_page("pages/runs.py").run()  # Saved runs: the local run, and why
    assert not at.exception, at.exception
    assert QUESTION in list(at.dataframe[0].value["question"])
    assert any("cannot be reached" in w.value for w in at.warning)
