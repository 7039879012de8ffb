"""`bench kgqa` measures what a person sees (the ordered candidates, Hits@3, the confidence and how well it tells
right from wrong), and `bench kgqa` and `query` accept and refuse the same model/pruner combinations (#22 item 12:
compose.plan is the one rule)."""
from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from benchkit import EDGES, QUESTIONS, bench_json, write_kgqa
from tog_core.bench.measures import auroc, confidence_metrics, flagged, hits_at
from tog_core.cli import main as cli
from tog_core.policy import ranking


# ------------------------------------------------------------------ the measures, by hand

def test_auroc_counts_ties_as_half_and_needs_both_classes():
    # pairs (right, wrong): 0.9>0.5, 0.9>0.1, 0.5=0.5 (half), 0.5>0.1 -> 3.5 / 4
    assert auroc([0.9, 0.5], [0.5, 0.1]) == 0.875
    assert auroc([0.3, 0.3], [0.3]) == 0.5  # all tied: no better than chance
    assert auroc([0.1], [0.2, 0.9]) == 0.0  # every wrong answer more confident than the right one
    assert auroc([0.2, 0.9], [0.1, 0.2]) == 0.875  # 0.2>0.1, 0.2=0.2 (half), 0.9>0.1, 0.9>0.2
    assert auroc([], [0.5]) is None and auroc([0.5], []) is None


def test_hits_at_k_looks_at_the_first_k_candidates_only():
    cands = ["A", "B", "C", "D"]
    assert hits_at(cands, {"C"}, 3) and not hits_at(cands, {"D"}, 3) and hits_at(cands, {"D"}, 4)
    assert hits_at(cands, {"A"}, 1) and not hits_at([], {"A"}, 3)


def test_flag_shares_count_no_answer_as_a_flagged_zero():
    row = lambda hit, conf: SimpleNamespace(chain_hit=hit, confidence=conf, low_confidence=0.4)  # noqa: E731
    rows = [row(True, 0.9), row(True, 0.2), row(False, 0.1), row(False, None), row(False, 0.5)]
    m = confidence_metrics(rows)
    assert m["right_flagged"] == 0.5  # 0.2 of the two right answers
    assert m["wrong_flagged"] == 0.6667  # 0.1 and no answer, not 0.5
    # right [0.9, 0.2] vs wrong [0.1, 0 (no answer), 0.5]: 0.9 beats all three, 0.2 beats two -> 5 / 6
    assert m["auroc"] == 0.8333
    assert flagged(0.39, 0.4) and not flagged(0.4, 0.4) and flagged(None, 0.4) and not flagged(0.1, None)
    assert confidence_metrics([row(True, 0.9)]) == {"auroc": None, "wrong_flagged": None, "right_flagged": 0.0}


# ------------------------------------------------------------------ the bench reports them

def test_bench_json_has_candidates_confidence_and_the_summary_measures(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("TOG_HOME", str(tmp_path / "home"))
    data = write_kgqa(tmp_path)
    r = bench_json(capsys, str(data), "--pruner", "bm25", "--width", "2")
    rows = {q["id"]: q for q in r["questions"]}
    for q in r["questions"]:
        if q["answer_entity"]:  # the fitted threshold of the answer ranker (no answer: the fixed one)
            assert q["low_confidence"] == ranking.shipped_model(typed=True).low  # a typed graph (relation column)
        if q["answer_entity"]:
            assert q["candidates"][0] == q["answer_entity"] and len(set(q["candidates"])) == len(q["candidates"])
            assert 0.0 <= q["confidence"] <= 1.0
        gold = next(x["answers"] for x in QUESTIONS if x["id"] == q["id"])
        assert q["hits3"] == any(c in gold for c in q["candidates"][:3])
        assert q["hits3"] >= q["chain_hit"]
        assert q["in_candidates"] == any(c in gold for c in q["candidates"]) and q["in_candidates"] >= q["hits3"]
    assert rows["q4"]["candidates"] == [] and rows["q4"]["confidence"] is None  # no seed, no answer
    s = r["summary"]["all"]
    assert s["hits3"] == round(sum(q["hits3"] for q in r["questions"]) / 5, 4)
    assert s["candidate_recall"] == round(sum(q["in_candidates"] for q in r["questions"]) / 5, 4)
    right = [q["confidence"] or 0.0 for q in r["questions"] if q["chain_hit"]]
    wrong = [q["confidence"] or 0.0 for q in r["questions"] if not q["chain_hit"]]
    assert s["auroc"] == auroc(right, wrong)
    assert s["wrong_flagged"] is not None and s["right_flagged"] is not None
    assert cli.main(["bench", "kgqa", str(data), "--pruner", "bm25", "--width", "2"]) == 0
    out = capsys.readouterr().out.splitlines()
    header = out[1].split()
    assert "Hits@3" in header and "cand." in header and "AUROC" in header and out[1].count("flagged") == 2
    assert len(out[-1].split()) == len(out[2].split())  # every row has every column


# ------------------------------------------------------------------ one rule for query and bench

def _free_text_project(root: Path) -> Path:
    """The bench's toy graph without a relation column (free-text relationships, as GraphRAG's)."""
    names = list(dict.fromkeys([s for s, *_ in EDGES] + [t for _, t, *_ in EDGES]))
    pq.write_table(pa.table({"id": [f"e{i}" for i in range(len(names))], "title": names,
                             "description": [f"{n} is an entity" for n in names]}), root / "entities.parquet")
    pq.write_table(pa.table({"id": [f"r{i}" for i in range(len(EDGES))], "source": [e[0] for e in EDGES],
                             "target": [e[1] for e in EDGES], "description": [e[3] for e in EDGES]}),
                   root / "relationships.parquet")
    (root / "questions_dev.jsonl").write_text(json.dumps(QUESTIONS[0]) + "\n")
    return root


COMBOS = [  # (arguments, the pruner both resolve to, or None: both refuse)
    (["--model", "none", "--pruner", "auto"], "bm25"),
    (["--model", "none"], "bm25"),
    (["--model", "none", "--pruner", "bm25"], "bm25"),
    (["--model", "none", "--pruner", "auto", "--entity-pruner", "random"], "bm25"),
    (["--model", "none", "--pruner", "llm"], None),
    (["--model", "none", "--entity-pruner", "llm"], None),
    (["--model", "none", "--pruner", "magic"], None),
]


Door = tuple[int, str | None, str]  # exit code, the pruner resolved (None: refused), stderr


def _front_doors(data: Path, args: list[str], capsys) -> tuple[Door, Door]:
    code_q = cli.main(["query", str(data), "who directed Film", "--seed", "Film", "--no-save", "--json", *args])
    out_q = capsys.readouterr()
    pruner_q = json.loads(out_q.out)["config"]["relation_pruner"] if code_q == 0 else None
    code_b = cli.main(["bench", "kgqa", str(data), "--json", *args])
    out_b = capsys.readouterr()
    pruner_b = json.loads(out_b.out)["config"]["pruner"] if code_b == 0 else None
    return (code_q, pruner_q, out_q.err.strip()), (code_b, pruner_b, out_b.err.strip())


@pytest.mark.parametrize(("args", "expected"), COMBOS, ids=[" ".join(a) for a, _ in COMBOS])
def test_query_and_bench_accept_and_refuse_the_same_combinations(tmp_path, capsys, monkeypatch, args, expected):
    monkeypatch.setenv("TOG_HOME", str(tmp_path / "home"))
    data = _free_text_project(tmp_path)
    (code_q, pruner_q, err_q), (code_b, pruner_b, err_b) = _front_doors(data, args, capsys)
    if expected is None:
        assert code_q == code_b == 2
        assert err_q == err_b and err_q.count("\n") == 0  # the same one-line message from compose.plan
    else:
        assert code_q == code_b == 0, (err_q, err_b)
        assert pruner_q == pruner_b == expected


def test_query_and_bench_resolve_auto_the_same_with_a_model(tmp_path, capsys, monkeypatch):
    from scripted import toy_llm
    from tog_core.testing.server import FakeOpenAIServer

    monkeypatch.setenv("TOG_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    data = _free_text_project(tmp_path)
    with FakeOpenAIServer(toy_llm) as srv:
        for extra in ([], ["--pruner", "auto"]):
            (code_q, pruner_q, _), (code_b, pruner_b, _) = _front_doors(
                data, ["--model", "openai/toy", "--api-base", srv.base_url, *extra], capsys)
            assert code_q == code_b == 0 and pruner_q == pruner_b == "llm"
