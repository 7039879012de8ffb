"""`query --resume` over a run someone else continued meanwhile (runs/revision.py): the command line's saves expect
the run's own count of saves, so the other person's run is left as they saved it and this one goes on as a new run,
a branch of it, said in one line; a resume nobody else touched goes on under its own id."""
from __future__ import annotations

import os

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from tog_core.cli.main import main
from tog_core.cli.query import run_query
from tog_core.compose import RunSpec
from tog_core.runs.files import RunStore
from tog_core.tog.state import Callbacks

QUESTION = "Who founded the Lanternwright Guild?"
DEMO = "demo"


class Stop(Exception):
    pass


@pytest.fixture
def stopped(tog_home) -> str:
    """A demo run saved after its second step and stopped there (as a process killed mid-run leaves it)."""
    seen = []

    def after(_state):
        seen.append(1)
        if len(seen) == 2:
            raise Stop

    with pytest.raises(Stop):
        run_query(RunSpec(model="none", relation_pruner="bm25", width=2), Callbacks(on_state=after), project=DEMO,
                  question=QUESTION, hops=2)
    [run] = RunStore().list()
    assert not RunStore().load(run.run_id).answer
    return run.run_id


def test_a_resume_nobody_else_touched_goes_on_under_its_own_id(stopped, capsys):
    assert main(["query", DEMO, "--model", "none", "--pruner", "bm25", "--resume", stopped]) == 0
    assert [r.run_id for r in RunStore().list()] == [stopped]
    assert RunStore().load(stopped).answer and "someone else" not in capsys.readouterr().err


def test_a_run_saved_by_someone_else_meanwhile_is_left_as_they_saved_it_and_this_one_branches(stopped, capsys,
                                                                                           monkeypatch):
    load = RunStore.load

    def meanwhile(self, run_id):  # this resume reads the run, then someone else saves it before this one does
        mine = load(self, run_id)
        theirs = load(self, run_id)
        theirs.answer = "their answer"
        self.save(theirs)
        return mine

    monkeypatch.setattr(RunStore, "load", meanwhile)
    assert main(["query", DEMO, "--model", "none", "--pruner", "bm25", "--resume", stopped]) == 0
    monkeypatch.setattr(RunStore, "load", load)
    err = capsys.readouterr().err
    assert load(RunStore(), stopped).answer == "their answer"  # theirs, as they saved it
    [branch] = [r for r in RunStore().list() if r.run_id != stopped]
    mine = load(RunStore(), branch.run_id)
    assert mine.parent_run == stopped and mine.answer and mine.answer != "their answer"
    assert mine.branched_at == len(load(RunStore(), stopped).steps)  # the steps it took over, as the app records
    assert f"warning: Someone else saved this run ({stopped}) meanwhile" in err and f"new run {branch.run_id}" in err


def test_a_resumed_branch_keeps_where_it_came_from_and_when_it_began(stopped, capsys):
    run = RunStore().load(stopped)
    run.parent_run, run.branched_at, run.created_at = "20250101-000000-aaaaaa", 1, "2025-01-01T00:00:00.000Z"
    RunStore().save(run)
    assert main(["query", DEMO, "--model", "none", "--pruner", "bm25", "--resume", stopped]) == 0
    done = RunStore().load(stopped)
    assert done.answer and (done.parent_run, done.branched_at) == ("20250101-000000-aaaaaa", 1)
    assert done.created_at == "2025-01-01T00:00:00.000Z"


def test_a_run_the_store_cannot_keep_is_answered_and_said_once(tog_home, capsys, monkeypatch):
    def full(self, trace):
        raise OSError(28, "No space left on device", str(self.root))

    monkeypatch.setattr(RunStore, "save", full)
    assert main(["query", DEMO, QUESTION, "--model", "none", "--pruner", "bm25"]) == 0
    out, err = capsys.readouterr()
    assert err.count("This run could not be saved: No space left on device") == 1
    assert "in this command's output" in err and "Mara Quell" in out
    # the last line does not give an id to resume that no store holds
    last = out.strip().splitlines()[-1]
    assert last.endswith("not saved") and "; run " not in last, last


def test_a_resume_with_no_save_reads_the_run_and_writes_nothing(stopped, capsys):
    before = RunStore().load(stopped)
    assert main(["query", DEMO, "--model", "none", "--pruner", "bm25", "--resume", stopped, "--no-save"]) == 0
    out = capsys.readouterr().out
    assert out.strip().splitlines()[-1].endswith("not saved") and "Mara Quell" in out  # answered, from the saved run
    assert [r.run_id for r in RunStore().list()] == [stopped]  # no branch either
    after = RunStore().load(stopped)
    assert not after.answer and after.revision == before.revision and len(after.steps) == len(before.steps)


def test_a_saved_run_names_its_id_on_the_last_line(tog_home, capsys):
    assert main(["query", DEMO, QUESTION, "--model", "none", "--pruner", "bm25"]) == 0
    [run] = RunStore().list()
    assert capsys.readouterr().out.strip().splitlines()[-1].endswith(f"run {run.run_id}")
