"""The app under a careless operator or a shared deployment (issue 23): a re-indexed project seen without a restart,
damaged run files named while the other runs work, a full disk during a run, project paths limited to allowed
roots, recent projects kept per session, runs saved from a relative path found under their project.
(PostgreSQL: re-import and a store stopped mid-run are in test_app_store.py.)"""
from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest
from streamlit import config as st_config
from streamlit.testing.v1 import AppTest

from appkit import QUESTION, pictures
from listenerkit import counting_listener
from runkit import DAMAGED, write_damaged
from sessionkit import ALICE, acme, ask, session, texts
from tog_core.app.session import K, check_project_root
from tog_core.graphrag.errors import ProjectError
from tog_core.runs.files import RunStore

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
CORIN = "Who founded the company that manufactures the invention of Corin Vell?"


@pytest.fixture(autouse=True)
def home(app_home):
    return app_home


# ---------------------------------------------------------------------------------------------- re-index

def test_a_reindexed_project_is_seen_on_the_next_rerun_without_a_restart(tmp_path):
    proj = acme(tmp_path / "acme", "Paris")
    at = session(proj)
    assert any("9 entities" in c.value for c in at.sidebar.caption)
    at = ask(at, ALICE)
    assert "### Paris" in [m.value for m in at.markdown]
    acme(tmp_path / "acme", "Rome", extra=3)  # `graphrag index` again: the tables rewritten in place
    at = ask(at, ALICE)  # the same session, its next rerun
    assert "### Rome" in [m.value for m in at.markdown], texts(at)
    other = session(proj)  # a new session sees the new graph and its counts
    assert any("12 entities" in c.value for c in other.sidebar.caption), [c.value for c in other.sidebar.caption]


def test_a_reindexed_project_draws_the_graph_page_anew(tmp_path):
    """Pictures are cached for every session under what they depend on: the project's version is part of that key
    (explorer/projects.version), so the Graph page of a re-indexed project shows the new graph, not the old page."""
    proj = acme(tmp_path / "acme", "Paris")
    at = session(proj)
    at.switch_page("pages/graph.py").run()
    at.text_input(key=K.GRAPH_QUERY).set_value("Alice").run()
    [before] = pictures(at)
    assert "Paris" in before and "Rome" not in before
    acme(tmp_path / "acme", "Rome", extra=3)
    at.run()
    assert not at.exception, at.exception
    [after] = pictures(at)
    assert "Rome" in after and "Paris" not in after


# ---------------------------------------------------------------------------------------------- damaged runs

def test_saved_runs_lists_the_good_runs_and_names_each_damaged_file(home):
    at = session()
    at = ask(at, QUESTION)
    first = at.session_state[K.ASK_TRACE].to_dict()
    at = ask(at, CORIN)
    second = at.session_state[K.ASK_TRACE].to_dict()
    write_damaged(home / "runs", first)
    at.switch_page("pages/runs.py").run()
    assert not at.exception, at.exception
    assert sorted(at.dataframe[0].value["question"]) == sorted([QUESTION, CORIN])
    warned = [w.value.replace("\\", "") for w in at.warning]  # escaped: a file name is data
    for name, (_, why) in DAMAGED.items():
        assert any(f"2026-{name}.json" in w and why in w for w in warned), (name, warned)
    at.selectbox(key=K.RUNS_OPEN).set_value(first["run_id"]).run()  # open
    assert not at.exception, at.exception
    assert [d.label for d in at.download_button] == ["JSON trace", "Markdown report", "Standalone HTML"]
    at.session_state[K.RUNS_TAB] = "Compare two runs"  # compare
    at.run()
    assert not at.exception, at.exception
    assert "link(s) in both runs" in texts(at)
    at.session_state[K.RUNS_TAB] = "Open a run"
    at.run()
    assert at.selectbox(key=K.RUNS_OPEN).value == first["run_id"]  # still the run the person opened
    [b] = [b for b in at.button if b.label == "Delete this run"]  # delete
    b.click()
    at.run()
    assert not at.exception, at.exception
    assert [r.run_id for r in RunStore().list()] == [second["run_id"]]
    assert at.selectbox(key=K.RUNS_OPEN).value is None  # the deleted run is no longer chosen
    assert len(RunStore().problems()) == len(DAMAGED)  # nothing a person made was removed but the one deleted


# ---------------------------------------------------------------------------------------------- full disk

def test_a_full_disk_during_a_run_shows_the_answer_and_one_message(monkeypatch):
    import tog_core.runs.files as files

    def full(path, _text):
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    at = session()
    monkeypatch.setattr(files, "atomic_write_text", full)
    at = ask(at, QUESTION)
    assert "### Tarnby" in [m.value for m in at.markdown]  # the search went on to its answer
    [w] = [w.value for w in at.warning if "could not be saved" in w.value]
    assert "No space left on device" in w and "Traceback" not in texts(at)
    assert not [b for b in at.button if b.label == "Stop"]  # nothing left running on screen
    assert all(s.proto.state != "running" for s in at.get("expandable") if hasattr(s.proto, "state"))


# ---------------------------------------------------------------------------------------------- project roots

def test_project_roots_follow_symlinks_and_refuse_dot_dot(tmp_path):
    allowed = tmp_path / "allowed"
    inside = acme(allowed / "acme", "Paris")
    (allowed / "escape").symlink_to(ROOT / "demo")
    env = {"TOG_PROJECT_ROOTS": os.pathsep.join([str(allowed), str(tmp_path / "also")])}
    check_project_root(inside, environ=env)
    check_project_root(inside / "output", environ=env)
    for bad in (ROOT / "demo", allowed / "escape", allowed / ".." / "elsewhere", tmp_path / "allowed-not",
                Path("/etc")):
        with pytest.raises(ProjectError, match="outside the folders this server opens projects from") as err:
            check_project_root(bad, environ=env)
        assert str(allowed) in str(err.value) and "TOG_PROJECT_ROOTS" in str(err.value)
    check_project_root("/etc", environ={})  # unset: anywhere


def test_the_project_field_cannot_open_or_probe_paths_outside_the_roots(tmp_path, monkeypatch):
    allowed = tmp_path / "allowed"
    inside = acme(allowed / "acme", "Paris")
    monkeypatch.setenv("TOG_PROJECT_ROOTS", str(allowed))
    msgs = []
    for path in (ROOT / "demo", tmp_path / "no-such-folder", f"{allowed}/../../.."):
        at = session(path)
        [err] = at.sidebar.error
        msgs.append(err.value.split(": is outside", 1)[-1])  # after the path (shown as typed, resolved)
        assert "outside the folders this server opens projects from" in err.value
        assert "Open a GraphRAG project" in at.info[0].value  # nothing was opened
    assert len(set(msgs)) == 1  # the same words whether the path exists or not: nothing to learn from them
    at = session(inside)
    assert not at.sidebar.error and any("9 entities" in c.value for c in at.sidebar.caption)


# ---------------------------------------------------------------------------------------------- recent projects

def test_recent_projects_are_per_session_on_a_shared_server(tmp_path, home):
    first = acme(tmp_path / "first-secret-project", "Paris")
    old = st_config.get_option("server.address")
    st_config.set_option("server.address", "0.0.0.0")
    try:
        a = session(first)
        a.session_state[K.PROJECT_INPUT] = str(ROOT / "demo")
        a = session(ROOT / "demo", **{K.RECENT: a.session_state[K.RECENT]})  # the same person, a second project
        assert [Path(p).name for p in a.session_state[K.RECENT]] == ["demo", "first-secret-project"]
        b = session()  # someone else
        assert b.session_state[K.RECENT] == [str(ROOT / "demo")]
        assert "first-secret-project" not in json.dumps([s.options for s in b.sidebar.selectbox])
        assert not (home / "recent.json").exists()  # nothing shared through TOG_HOME
    finally:
        st_config.set_option("server.address", old)
    session(first)  # on 127.0.0.1 (the default): one person's app, remembered across restarts
    assert json.loads((home / "recent.json").read_text())[0] == str(first)


# ---------------------------------------------------------------------------------------------- relative paths

def test_runs_saved_from_a_relative_project_path_are_listed_under_the_project(capsys):
    from tog_core.cli.main import main

    assert main(["query", "demo", QUESTION, "--model", "none", "--json"]) == 0  # cwd: the app's folder
    made = json.loads(capsys.readouterr().out)
    assert made["project"] == str(ROOT / "demo")  # recorded resolved
    old = RunStore().load(made["run_id"])
    old.run_id, old.project, old.question = "20200101-000000-relati", "demo", CORIN  # as older versions saved it
    RunStore().save(old)
    at = session()
    at.switch_page("pages/runs.py").run()
    assert not at.exception, at.exception
    assert sorted(at.dataframe[0].value["question"]) == sorted([QUESTION, CORIN])


# ---------------------------------------------------------------------------------------------- the sidebar kept

def test_the_sidebar_is_kept_across_a_reload_on_a_single_user_app_only(home):
    a = session(ROOT / "demo", **{K.MODEL: "none", K.WIDTH: 5, K.REL_PRUNER: "bm25", K.API_KEY: "sk-typed-0123456789"})
    a.run()  # the person's choices, drawn once
    assert not a.exception, a.exception
    def fresh() -> AppTest:  # a new browser session, nothing set by hand
        at = AppTest.from_file(APP, default_timeout=90)
        at.run()
        assert not at.exception, at.exception
        return at

    b = fresh()  # a reload: a new session on 127.0.0.1 (the default), one person's app
    assert (b.session_state[K.MODEL], b.session_state[K.WIDTH], b.session_state[K.REL_PRUNER]) == ("none", 5, "bm25")
    assert b.session_state[K.API_KEY] == "" and "sk-typed" not in (home / "sidebar.json").read_text()
    old = st_config.get_option("server.address")
    st_config.set_option("server.address", "0.0.0.0")
    try:
        c = fresh()  # a shared server: every session starts from the defaults, nothing read or written
        assert (c.session_state[K.MODEL], c.session_state[K.WIDTH]) == ("", 3)
        c.session_state[K.WIDTH] = 7
        c.run()
        assert json.loads((home / "sidebar.json").read_text())[K.WIDTH] == 5
    finally:
        st_config.set_option("server.address", old)


# ---------------------------------------------------------------------------------------------- a typed store

def test_a_shared_app_connects_only_to_the_stores_its_operator_named(monkeypatch):
    """On a shared server a store typed in the sidebar would connect as the server (libpq adds its PGPASSWORD,
    ~/.pgpass or socket to any host): one the operator did not name is not connected to, and the page says why; one
    listed in TOG_ALLOWED_STORES is. On 127.0.0.1 (one person's app) any typed store is used."""
    with counting_listener() as (port, calls):
        _typed_stores_refused_then_allowed(monkeypatch, port, calls)


def _typed_stores_refused_then_allowed(monkeypatch, port: int, calls: list[bool]) -> None:
    typed = f"postgresql://postgres@127.0.0.1:{port}/anything"
    monkeypatch.delenv("TOG_STORE", raising=False)
    old = st_config.get_option("server.address")
    st_config.set_option("server.address", "0.0.0.0")
    try:
        at = session(ROOT / "demo", **{K.STORE: typed})
        at.run()
        assert not at.exception, at.exception
        [warned] = [w.value for w in at.sidebar.warning if "store typed here is not used" in w.value]
        assert "TOG\\_ALLOWED\\_STORES" in warned and "read from its folder" in warned
        assert not calls and not at.sidebar.error  # never connected; the demo read from its folder
        assert any("312 entities" in c.value for c in at.sidebar.caption)
        monkeypatch.setenv("TOG_ALLOWED_STORES", f"postgresql://someone@127.0.0.1:{port}/anything")
        at = session(ROOT / "demo", **{K.STORE: typed})
        at.run()
        assert calls and not [w for w in at.sidebar.warning if "store typed here" in w.value]
        assert "cannot connect" in " ".join(e.value for e in at.sidebar.error)  # not a PostgreSQL server
    finally:
        st_config.set_option("server.address", old)


def test_which_typed_stores_a_shared_app_refuses():
    from tog_core.graphrag.pg_common import typed_store_refusal as refusal

    env = {"TOG_STORE": "postgresql://tog@db.internal:5432/tog", "TOG_ALLOWED_STORES": "postgresql://x@other:6000/g"}
    assert refusal("postgresql://postgres@attacker:5432/x", single_user=True, environ=env) is None  # one person's
    for fine in ("postgresql://bob:pw@DB.internal/tog", "postgresql://a@other:6000/g", "host=db.internal dbname=tog",
                 "postgresql://a@db.internal/tog?sslmode=require"):
        assert refusal(fine, single_user=False, environ=env) is None, fine
    for url, why in [("postgresql://postgres@attacker:5432/x", "only the server's TOG_STORE or a store listed"),
                     ("postgresql://a@db.internal:5433/tog", "only the server's TOG_STORE"),  # another port
                     ("host=/var/run/postgresql dbname=tog", "no single network host"),
                     ("dbname=tog", "no single network host"),  # libpq would take PGHOST or the socket
                     ("postgresql://a@db.internal/tog?passfile=/etc/shadow", "sets passfile"),
                     ("postgresql://a@db.internal/tog?sslkey=/srv/key&service=x", "sets service, sslkey"),
                     ("not a url ://", "not a PostgreSQL URL")]:
        assert why in (refusal(url, single_user=False, environ=env) or ""), url


def test_settings_that_cannot_run_are_said_in_the_sidebar_before_any_question():
    """A reviewer chose Mode "reading" with no model and learnt it only after clicking Ask."""
    at = session(ROOT / "demo", **{K.MODEL: "none"})
    at.run()
    assert not [w for w in at.sidebar.warning if "cannot run a search" in w.value]
    at.session_state[K.MODE] = "reading"
    at.run()
    assert not at.exception, at.exception
    [w] = [w.value for w in at.sidebar.warning if "cannot run a search" in w.value]
    assert "model" in w.replace("\\", "")  # the planner's own reason, naming what is missing
    at.session_state[K.MODE], at.session_state[K.REL_PRUNER] = "faithful", "llm"
    at.run()
    [w] = [w.value for w in at.sidebar.warning if "cannot run a search" in w.value]
    assert "llm pruner needs a model" in w.replace("\\", "")
