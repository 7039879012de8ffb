"""`query --expect TITLE`: the trace's diagnosis and the words the CLI prints (issue #13's must-show)."""
from __future__ import annotations

import json

from tog_core.cli.main import main

Q = "Who founded the company that manufactures the invention of Corin Vell?"


def test_expect_adds_a_diagnosis_to_the_trace_and_says_it_in_words(capsys, tog_home):
    args = ["query", "demo", Q, "--model", "none", "--pruner", "random", "--width", "1", "--depth", "3",
            "--expect", "Pell Ardent", "--no-save"]
    assert main(args + ["--json"]) == 0
    trace = json.loads(capsys.readouterr().out)
    [d] = trace["diagnosis"]
    assert d["title"] == "Pell Ardent" and d["in_final_beam"] is False
    assert d["lost"]["depth"] == 1 and d["lost"]["stage"] == "relations" and d["lost"]["rank"] > 1
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "Pell Ardent: never a candidate" in out and "Lost at depth 1 (relations)" in out
    assert main(["query", "demo", Q, "--model", "none", "--no-save", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["diagnosis"] is None  # nothing expected, nothing diagnosed
