"""`query`'s arguments and summary line (a reviewer's findings): `--no-save` says "not saved" instead of a run id no
store holds; `--candidates` outside 0..10 is a usage error; `--resume RUN_ID` with a question other than the run's
own is a usage error (the run continues its own question), and `--resume RUN_ID` alone works."""
from __future__ import annotations

import json

import pytest

from tog_core.cli.main import main

Q = "Who founded the Lanternwright Guild?"
BASE = ["query", "demo", Q, "--model", "none"]


def summary(out: str) -> str:
    [line] = [x for x in out.splitlines() if x.startswith("stop: ")]
    return line


def test_no_save_says_not_saved_instead_of_a_run_id(capsys, tog_home):
    assert main(BASE + ["--no-save"]) == 0
    line = summary(capsys.readouterr().out)
    assert line.endswith("; not saved") and "run " not in line
    assert not (tog_home / "runs").exists() or not list((tog_home / "runs").glob("*.json"))
    assert main(BASE) == 0  # saved: the summary names the run, and the run is there
    line = summary(capsys.readouterr().out)
    run_id = line.rsplit("; run ", 1)[1]
    assert (tog_home / "runs" / f"{run_id}.json").exists()


@pytest.mark.parametrize("n", ["-1", "11"])
def test_candidates_outside_0_to_10_is_a_usage_error_naming_the_range(n, capsys, tog_home):
    assert main(BASE + ["--no-save", "--candidates", n]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == f"error: --candidates {n}: give a number from 0 (none) to 10 (the answer candidates a " \
                           "trace keeps)\n"


def test_candidates_at_the_ends_of_the_range_are_accepted(capsys, tog_home):
    assert main(BASE + ["--no-save", "--candidates", "0"]) == 0
    assert "Candidates, best first:" not in capsys.readouterr().out
    assert main(BASE + ["--no-save", "--candidates", "10"]) == 0
    assert "  1. Mara Quell" in capsys.readouterr().out


def test_resume_with_another_question_is_refused_and_without_one_continues_the_runs_own(capsys, tog_home):
    assert main(BASE + ["--depth", "1", "--json"]) == 0
    run_id = json.loads(capsys.readouterr().out)["run_id"]
    assert main(["query", "demo", "Who is Corin Vell?", "--model", "none", "--resume", run_id]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert f"--resume {run_id} continues the run's own question ('{Q}')" in captured.err
    assert "drop the question argument" in captured.err
    assert main(["query", "demo", "--model", "none", "--resume", run_id, "--json"]) == 0  # no question: resumed
    assert json.loads(capsys.readouterr().out)["question"] == Q
    assert main(["query", "demo", f"  {Q} ", "--model", "none", "--resume", run_id, "--json"]) == 0  # the same one
    assert json.loads(capsys.readouterr().out)["question"] == Q


def test_a_new_run_still_needs_a_question(capsys, tog_home):
    assert main(["query", "demo", "--model", "none", "--no-save"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: query needs a question") and "--resume" in err and err.count("\n") == 1
