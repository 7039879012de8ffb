"""Explore's ticks kept with the run (tog_core/app/pending.py, explorer/drafts.py): the ticks (and the evaluate choice)
on the step not yet applied come back after a reload with a one-line note, and go once the step is applied or the run
is deleted; ticks made for a step the run no longer waits at are not brought back, and the page says so; a "Back to
depth" branch's earlier ticks survive a reload too; each person's drafts are their own when runs are kept per person;
no draft ever touches a run's file or shows in Saved runs.

The newcomer review's steps: Explore, the demo, "Which river flows through the capital of the Verdant Isles?", at
depth 1 (entities) untick "Isle of Cairnloch", tick "Brackenmere", reload."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from appkit import QUESTION, _as, _kept, _reload, _rows, app, click, runs_per_person, texts
from tog_core.app.session import K
from tog_core.runs.files import RunStore

RIVER = "Which river flows through the capital of the Verdant Isles?"
RESTORED = "Your unsaved ticks from before the reload were restored."


@pytest.fixture(autouse=True)
def home(app_home):
    return app_home


def _start(question: str = RIVER, **sidebar) -> AppTest:
    """Explore on the demo, the question started, at depth 1 (entities)."""
    at = app(**{K.MODEL: "none", **sidebar})
    at.switch_page("pages/explore.py").run()
    at.text_input(key=K.EXPLORE_QUESTION).set_value(question).run()
    at = click(click(at, "Start"), "Continue")
    assert not at.exception, at.exception
    assert "Depth 1 · entities" in texts(at)
    return at


def _tick(at: AppTest, **keep: bool) -> AppTest:
    """Tick or untick candidates by name in the step's table (the table's own edit, as the browser sends it)."""
    ed, rows = _rows(at)
    names = [str(c).split("  (via")[0] for c in rows["candidate"]]
    at.session_state[ed.key] = {"edited_rows": {names.index(n): {"keep": k} for n, k in keep.items()},
                                "added_rows": [], "deleted_rows": []}
    at.run()
    assert not at.exception, at.exception
    return at


def _infos(at: AppTest) -> list[str]:
    return [i.value.replace("\\", "") for i in at.info]


def _drafts(home: Path) -> list[Path]:
    return sorted(p for p in home.rglob(".drafts/*") if p.is_file())


def test_the_ticks_on_a_step_not_yet_applied_survive_a_reload_and_go_once_it_is_applied(home):
    at = _start()
    rid = at.session_state[K.EXPLORE].run_id
    run_file = RunStore().path(rid)
    saved_before = run_file.read_bytes()
    auto = _kept(_rows(at)[1])
    assert auto["Isle of Cairnloch"] and not auto["Brackenmere"]  # the automatic choice the review started from
    at = _tick(at, **{"Isle of Cairnloch": False, "Brackenmere": True})

    again = _reload(rid)
    kept = _kept(_rows(again)[1])
    assert (kept["Isle of Cairnloch"], kept["Brackenmere"]) == (False, True)  # the person's ticks, not the automatic
    assert "a reload brings them back" in texts(at)  # the line under the buttons says so (it said they were lost)
    assert run_file.read_bytes() == saved_before  # the ticks are not a step: the run's file is not written
    assert {k: v for k, v in kept.items() if k not in ("Isle of Cairnloch", "Brackenmere")} == {
        k: v for k, v in auto.items() if k not in ("Isle of Cairnloch", "Brackenmere")}
    assert RESTORED in _infos(again)
    again = click(again, "Continue")  # applied as restored
    assert not again.exception, again.exception
    over = [(o["label"], o["kept"]) for s in RunStore().load(rid).to_dict()["steps"] for o in s["overrides"]]
    assert sorted(over) == [("Brackenmere", True), ("Isle of Cairnloch", False)]
    assert _drafts(home) == []  # applied: nothing pending is kept
    third = _reload(rid)  # a later reload waits at the next step, with nothing restored and nothing said
    assert "Depth 1 · evaluate" in texts(third) and RESTORED not in _infos(third)
    assert RunStore().problems() == [] and [r.run_id for r in RunStore().list()] == [rid]


def test_the_evaluate_choice_survives_a_reload(home):
    at = click(_start(), "Continue")
    assert "Depth 1 · evaluate" in texts(at)
    rid = at.session_state[K.EXPLORE].run_id
    [verdict] = [r for r in at.radio if r.label == "What next?"]
    other = next(o for o in ("sufficient", "continue") if o != verdict.value)
    verdict.set_value(other)
    at.run()
    assert not at.exception, at.exception
    again = _reload(rid)
    [verdict] = [r for r in again.radio if r.label == "What next?"]
    assert verdict.value == other and RESTORED in _infos(again)


def test_ticks_on_a_step_another_tab_applied_are_not_brought_back(home):
    at = _start()
    rid = at.session_state[K.EXPLORE].run_id
    other = _reload(rid)  # the same run open in a second tab, at the same step
    at = _tick(at, **{"Isle of Cairnloch": False, "Brackenmere": True})  # ticked in the first
    other = click(other, "Continue")  # the second applies the step as it shows it
    assert "Depth 1 · evaluate" in texts(other)
    last = _reload(rid)  # the first tab reloaded: the step its ticks were for is applied
    assert "Depth 1 · evaluate" in texts(last)
    assert not any("Your unsaved ticks" in i for i in _infos(last)), _infos(last)
    assert [o for s in RunStore().load(rid).to_dict()["steps"] for o in s["overrides"]] == []
    assert _drafts(home) == []


def test_ticks_for_a_run_finished_elsewhere_since_are_said_not_to_be_restored(home):
    at = _tick(_start(), **{"Isle of Cairnloch": False, "Brackenmere": True})
    rid = at.session_state[K.EXPLORE].run_id
    elsewhere = app(**{K.MODEL: "none"})  # another tab: Saved runs, Resume on the Ask page
    elsewhere.switch_page("pages/runs.py").run()
    elsewhere.selectbox(key=K.RUNS_OPEN).set_value(rid).run()
    elsewhere = click(elsewhere, "Resume on the Ask page")
    assert not elsewhere.exception, elsewhere.exception
    assert RunStore().load(rid).answer
    last = _reload(rid)
    assert RESTORED not in _infos(last)
    assert any("(at depth 1, entities) were not restored: the run was finished elsewhere since" in i
               for i in _infos(last)), _infos(last)
    assert _drafts(home) == []


def test_a_draft_of_a_step_offered_otherwise_now_is_said_and_not_used(home):
    at = _tick(_start(), **{"Isle of Cairnloch": False, "Brackenmere": True})
    rid = at.session_state[K.EXPLORE].run_id
    [draft] = _drafts(home)
    record = json.loads(draft.read_text())
    record["pending"]["offered"] = record["pending"]["offered"][1:]  # as if the graph offered other candidates now
    draft.write_text(json.dumps(record))
    again = _reload(rid)
    kept = _kept(_rows(again)[1])
    assert kept["Isle of Cairnloch"] and not kept["Brackenmere"]  # the automatic choice
    assert RESTORED not in _infos(again)
    assert any("were not restored: this run no longer waits at that step as it was then" in i
               for i in _infos(again)), _infos(again)


def test_a_damaged_draft_is_no_draft_and_the_run_works(home):
    at = _tick(_start(), **{"Isle of Cairnloch": False, "Brackenmere": True})
    rid = at.session_state[K.EXPLORE].run_id
    [draft] = _drafts(home)
    for bad in ("{broken", "[1, 2]", json.dumps({"format": 1, "run_id": rid, "pending": {"ids": [7]}}),
                json.dumps({"format": 1, "run_id": rid, "earlier": "x"}), "\udcff"):
        draft.write_text(bad, errors="surrogateescape")
        again = _reload(rid)
        assert RESTORED not in _infos(again)
        assert _kept(_rows(again)[1])["Isle of Cairnloch"]  # the automatic choice
        assert RunStore().load(rid).run_id == rid and RunStore().problems() == []


def test_deleting_a_run_on_saved_runs_removes_its_draft(home):
    at = _tick(_start(), **{"Isle of Cairnloch": False, "Brackenmere": True})
    rid = at.session_state[K.EXPLORE].run_id
    assert len(_drafts(home)) == 1
    at.switch_page("pages/runs.py").run()
    at.selectbox(key=K.RUNS_OPEN).set_value(rid).run()
    at = click(at, "Delete this run")
    assert not at.exception, at.exception
    assert RunStore().list() == [] and _drafts(home) == []


def test_back_to_depths_earlier_ticks_survive_a_reload(home):
    """Mara Quell unticked at depth 1, on to depth 2, back to depth 1: the branch's steps start from the person's
    earlier ticks (said so), and still do after a reload of the branch (they lived in the page's memory only)."""
    at = _start(QUESTION, **{K.REL_PRUNER: "bm25", K.ENT_PRUNER: "bm25"})
    at = _tick(at, **{"Mara Quell": False})
    at = click(click(at, "Continue"), "Continue")  # entities with Mara Quell dropped, then evaluate
    assert "Depth 2 · relations" in texts(at)
    old = at.session_state[K.EXPLORE].run_id
    at = click(at, "Re-run from there")  # back to depth 1
    branch = at.session_state[K.EXPLORE].run_id
    assert branch != old and f"Ticked as you chose it on run {old} before going back" in texts(at)

    again = _reload(branch)
    assert "Depth 1 · relations" in texts(again)
    assert f"Ticked as you chose it on run {old} before going back" in texts(again)
    again = click(again, "Continue")
    assert "Depth 1 · entities" in texts(again)
    assert _kept(_rows(again)[1])["Mara Quell"] is False and "(the automatic choice differs)" in texts(again)
    again = click(again, "Continue")
    steps = RunStore().load(branch).to_dict()["steps"]
    assert [(o["label"], o["kept"]) for s in steps for o in s["overrides"]] == [("Mara Quell", False)]


# ---------------------------------------------------------------------------------------------- per person

def test_with_runs_kept_per_person_a_draft_is_kept_in_that_persons_folder_and_shown_to_nobody_else(monkeypatch, home):
    runs_per_person(monkeypatch, "ann")
    at = _tick(_start(), **{"Isle of Cairnloch": False, "Brackenmere": True})
    rid = at.session_state[K.EXPLORE].run_id
    [draft] = _drafts(home)
    assert draft.parent.parent == RunStore().for_owner("ann").root  # beside ann's runs, in her own folder
    assert not (RunStore().root / ".drafts").exists()

    again = _reload(rid)  # ann reloads: her ticks
    assert RESTORED in _infos(again)

    _as(monkeypatch, "bob")  # bob, with ann's run's address: neither her run nor her ticks
    bob = _reload(rid)
    assert RESTORED not in _infos(bob) and "is not saved here" in texts(bob)
    assert K.EXPLORE not in bob.session_state or bob.session_state[K.EXPLORE] is None
    shared = RunStore().path(rid).with_name(".drafts")  # the shared folder, as with owners off: nothing of ann's
    assert not shared.exists()


def test_a_shared_draft_is_not_read_for_a_person_once_runs_are_kept_per_person(monkeypatch, home):
    """A draft of a shared run (owners off) is never brought to a person once owners are on: each person's drafts are
    read from their own folder only (and the shared run is not theirs to open)."""
    at = _tick(_start(), **{"Isle of Cairnloch": False, "Brackenmere": True})
    rid = at.session_state[K.EXPLORE].run_id
    [draft] = _drafts(home)
    assert draft.parent == RunStore().root / ".drafts"
    ann_runs = RunStore().for_owner("ann").root
    ann_runs.mkdir(parents=True)
    RunStore().path(rid).replace(ann_runs / f"{rid}.json")  # the operator gives the run to ann, not its draft
    runs_per_person(monkeypatch, "ann")
    again = _reload(rid)
    assert RESTORED not in _infos(again) and _kept(_rows(again)[1])["Isle of Cairnloch"]


def test_when_the_runs_folder_cannot_keep_a_draft_the_page_says_the_ticks_live_in_it_only(home):
    at = _start()
    rid = at.session_state[K.EXPLORE].run_id
    (RunStore().root / ".drafts").write_text("not a folder")  # the drafts cannot be written there
    at = _tick(at, **{"Isle of Cairnloch": False, "Brackenmere": True})
    assert any("until then they live in this page only" in c.value for c in at.caption), texts(at)
    at = click(at, "Continue")  # the step is applied all the same
    assert not at.exception, at.exception
    over = [(o["label"], o["kept"]) for s in RunStore().load(rid).to_dict()["steps"] for o in s["overrides"]]
    assert sorted(over) == [("Brackenmere", True), ("Isle of Cairnloch", False)]


@pytest.mark.parametrize("button", ["Auto-finish", "Stop & answer"])
def test_finishing_the_run_here_drops_its_ticks_without_a_word(home, button):
    at = _tick(_start(), **{"Isle of Cairnloch": False, "Brackenmere": True})
    rid = at.session_state[K.EXPLORE].run_id
    assert len(_drafts(home)) == 1
    at = click(at, button)
    assert not at.exception, at.exception
    assert at.session_state[K.EXPLORE].state.done
    assert not any("Your unsaved ticks" in i for i in _infos(at)), _infos(at)
    assert _drafts(home) == []
    assert not any("Your unsaved ticks" in i for i in _infos(_reload(rid)))


# ---------------------------------------------------------------------------------------------- PostgreSQL run store

def test_with_a_postgresql_store_a_reload_on_another_replica_brings_the_ticks_back(monkeypatch, home, tmp_path,
                                                                                    demo_pg, pg_url):
    """Several replicas behind a load balancer, one store URL: the reload lands on a replica with another TOG_HOME."""
    monkeypatch.setenv("TOG_STORE", pg_url)
    at = _tick(_start(), **{"Isle of Cairnloch": False, "Brackenmere": True})
    rid = at.session_state[K.EXPLORE].run_id
    assert "a reload brings them back" in texts(at) and _drafts(home) == []  # kept in PostgreSQL, not on this disk
    monkeypatch.setenv("TOG_HOME", str(tmp_path / "replica-2"))
    again = _reload(rid)
    kept = _kept(_rows(again)[1])
    assert (kept["Isle of Cairnloch"], kept["Brackenmere"]) == (False, True) and RESTORED in _infos(again)
    again = click(again, "Continue")  # applied on the second replica: the draft goes for both
    assert not again.exception, again.exception
    monkeypatch.setenv("TOG_HOME", str(home))
    assert RESTORED not in _infos(_reload(rid)) and _drafts(tmp_path) == []


def test_while_the_postgresql_store_cannot_be_reached_the_ticks_are_kept_on_this_replica(monkeypatch, home, demo_pg,
                                                                                         pg_url):
    """The run store down (the outage the pages share, explorer/ui._outage): runs and ticks go to TOG_HOME's files,
    and a reload brings the ticks back without an error."""
    from explorer.ui import _outage
    from tog_core.graphrag.pg_common import StoreError

    monkeypatch.setenv("TOG_STORE", pg_url)
    outage = _outage(pg_url)
    outage.mark(StoreError("run store postgresql://127.0.0.1/postgres: connection refused"))
    try:
        at = _tick(_start(), **{"Isle of Cairnloch": False, "Brackenmere": True})
        rid = at.session_state[K.EXPLORE].run_id
        assert "a reload brings them back" in texts(at)
        assert [d.name for d in _drafts(home)] == [f"{rid}.json"]  # on this replica's files
        again = _reload(rid)
        assert not again.exception and RESTORED in _infos(again)
    finally:
        outage.clear()


def test_a_continue_that_branches_leaves_the_ticks_someone_made_since_on_the_old_run(home):
    """Runs kept for everyone share their drafts: this tab's Continue over a run another tab continued meanwhile goes
    on as a new run, and the ticks the other tab has made since on the old run's next step stay (they were removed)."""
    at = _start()
    rid = at.session_state[K.EXPLORE].run_id
    other = _reload(rid)  # the same run in a second tab
    at = _tick(at, **{"Isle of Cairnloch": False, "Brackenmere": True})  # ticked here
    other = click(other, "Continue")  # the other tab applies the step as it shows it, then ticks on its next one
    assert "Depth 1 · evaluate" in texts(other)
    [verdict] = [r for r in other.radio if r.label == "What next?"]
    verdict.set_value(next(o for o in ("sufficient", "continue") if o != verdict.value))
    other.run()
    assert not other.exception, other.exception
    [draft] = _drafts(home)
    theirs = json.loads(draft.read_text())
    assert theirs["run_id"] == rid and theirs != {}
    at = click(at, "Continue")  # this tab's Continue: saved as a new run, a branch of the one the other tab saved
    assert not at.exception, at.exception
    assert at.session_state[K.EXPLORE].run_id != rid
    assert (home / "runs" / ".drafts" / f"{rid}.json").exists(), "the other tab's ticks on the old run were removed"
    assert json.loads((home / "runs" / ".drafts" / f"{rid}.json").read_text()) == theirs
