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


def test_cli_export_carries_the_source_text_of_every_link(tmp_path, capsys, tog_home):
    out = tmp_path / "t.json"
    assert main(["query", "demo", "Who founded the Lanternwright Guild?", "--model", "none", "--no-save",
                 "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["export", str(out), "--format", "md"]) == 0  # the trace's own project is here: read from it
    md = capsys.readouterr().out
    assert "## Source text" in md and "was founded by Mara Quell" in md
    trace = json.loads(out.read_text())
    trace["project"] = str(tmp_path / "gone")
    out.write_text(json.dumps(trace))
    assert main(["export", str(out), "--format", "md"]) == 0  # project elsewhere: exported as it is
    assert "## Source text" not in capsys.readouterr().out
    assert main(["export", str(out), "--format", "md", "--project", "demo"]) == 0
    assert "was founded by Mara Quell" in capsys.readouterr().out
    assert main(["export", str(out), "--project", str(tmp_path / "nowhere")]) == 2
    assert "--project" in capsys.readouterr().err


def test_query_says_how_many_hops_it_tried_and_kept(capsys, tog_home):
    args = ["query", "demo", "Who founded the Lanternwright Guild?", "--model", "none", "--pruner", "bm25",
            "--no-save"]
    assert main(args + ["--json"]) == 0
    plan = json.loads(capsys.readouterr().out)["plan"]
    assert plan["depth"] == 1 and [t["depth"] for t in plan["trials"]] == [1, 2, 3]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "hops: 1 (tried 1: " in out and "question word(s) matched, ends at Mara Quell" in out
    assert main(args + ["--pruner", "random", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["plan"] is None  # nothing to learn from random scores


def test_query_hops_searches_exactly_that_deep_and_refuses_what_it_cannot_do(capsys, tog_home):
    args = ["query", "demo", "Who founded the Lanternwright Guild?", "--model", "none", "--pruner", "bm25",
            "--no-save"]
    assert main(args + ["--hops", "2", "--json"]) == 0  # the search alone keeps 1 hop (above)
    t = json.loads(capsys.readouterr().out)
    assert t["plan"]["depth"] == 2 and "chosen by the person" in t["plan"]["reason"] and not t["plan"]["trials"]
    assert t["chains"] and all(len(c) == 2 for c in t["chains"])
    assert main(args + ["--hops", "2"]) == 0
    assert "hops: 2 (2 hops: chosen by the person)" in capsys.readouterr().out
    assert main(args + ["--hops", "4"]) == 2  # past --depth 3: one line naming the bound
    err = capsys.readouterr().err.strip()
    assert "number of hops must be between 1 and the maximum depth (3)" in err and "\n" not in err
    assert main(args + ["--hops", "2", "--resume", "20260101-000000-abcdef"]) == 2  # a resumed run keeps its own
    assert "--hops starts a new run" in capsys.readouterr().err


def test_query_prints_the_candidates_and_says_plainly_when_the_answer_is_a_guess(capsys, tog_home, monkeypatch):
    args = ["query", "demo", "Who founded the Lanternwright Guild?", "--model", "none", "--no-save"]
    assert main(args + ["--json"]) == 0
    trace = json.loads(capsys.readouterr().out)
    assert trace["candidates"][0]["title"] == trace["answer_entity"] == "Mara Quell"
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "Candidates, best first:\n  1. Mara Quell (score " in out and "This is a guess" not in out
    assert out.index("Most likely answer") < out.index("Candidates, best first")
    # each candidate says why it placed so: the answer against the runner-up, as the trace records it
    second = trace["candidates"][1]["title"]
    assert f"ahead of {second} on: " in trace["candidates"][0]["why"]
    assert f"     why: {trace['candidates'][0]['why'][:300]}" in out  # the CLI cuts a why at 400 characters
    assert main(args + ["--candidates", "0"]) == 0
    assert "Candidates, best first" not in capsys.readouterr().out
    # a threshold above any probability: the warning and the candidates come before the answer
    from tog_core.policy import ranking

    shipped = ranking.shipped_model()
    monkeypatch.setattr(ranking, "shipped_model", lambda typed=False: ranking.Model(
        features=shipped.features, weights=shipped.weights, mean=shipped.mean, scale=shipped.scale, low=1.0))
    assert main(args + ["--candidates", "2"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("This is a guess: confidence ") and "is below 1.00, the threshold fitted with the " \
        "answer ranker. Check" in out  # which threshold: the ranker's, a run without an LLM
    assert out.index("  1. Mara Quell") < out.index("Most likely answer") and "  3. " not in out


def test_query_says_when_the_confidence_comes_from_a_changed_search(tmp_path, monkeypatch, capsys):
    """Width 1, depth 1 without an LLM: the answer's confidence was fitted on default searches, and the CLI says so
    under the answer; at the defaults it says nothing of the kind."""
    from tog_core.cli.main import main

    monkeypatch.setenv("TOG_HOME", str(tmp_path))
    q = "Who founded the Lanternwright Guild?"
    assert main(["query", "demo", q, "--model", "none", "--width", "1", "--depth", "1", "--no-save"]) == 0
    out = capsys.readouterr().out
    assert "(The confidence: fitted on searches left as set by default, and this one was changed (width 1, depth 1)" \
        in out
    assert main(["query", "demo", q, "--model", "none", "--no-save"]) == 0
    assert "The confidence: fitted" not in capsys.readouterr().out
