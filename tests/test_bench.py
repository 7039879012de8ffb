"""`bench kgqa` on a hand-made KGQA folder whose metrics can be checked by eye, and on MetaQA when present."""
from __future__ import annotations

import os

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from benchkit import QUESTIONS, bench_json, write_kgqa
from builders import METAQA
from tog_core.cli import main as cli
from tog_core.bench.kgqa import answer_match, select
from tog_core.bench.report import QuestionResult, summarize


def test_metrics_match_the_hand_count(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("TOG_HOME", str(tmp_path / "home"))
    data = write_kgqa(tmp_path)
    r = bench_json(capsys, str(data), "--pruner", "bm25", "--width", "1")
    s = r["summary"]
    assert s["1"]["n"] == 4 and s["2"]["n"] == 1 and s["all"]["n"] == 5
    assert s["1"]["beam_recall"] == 0.5 and s["1"]["chain_hits1"] == 0.5
    assert s["2"]["beam_recall"] == 1.0 and s["2"]["chain_hits1"] == 1.0
    assert s["all"]["beam_recall"] == 0.6 and s["all"]["chain_hits1"] == 0.6
    assert s["all"]["answer_hits1"] is None  # no LLM wrote an answer
    assert s["all"]["llm_calls"] == 0 and s["all"]["tokens"] == 0
    rows = {q["id"]: q for q in r["questions"]}
    assert rows["q1"]["ends"] == ["Dana"] and rows["q5"]["ends"] == ["Other Film"]
    # the entity the answer names is what chain Hits@1 scored: q3's is not a gold answer, q4 had no run
    assert rows["q1"]["answer_entity"] == "Dana" and rows["q3"]["answer_entity"] == "Dana"
    assert rows["q4"]["stop_reason"] == "no_seed" and rows["q4"]["answer_entity"] is None
    assert r["config"]["pruner"] == "bm25" and r["config"]["model"] == "none"


def test_without_a_pruner_the_bench_runs_what_the_app_runs(tmp_path, capsys, monkeypatch):
    """No --pruner and no model: the app's `auto`, which on this typed graph (a relation column) is the embedder."""
    monkeypatch.setenv("TOG_HOME", str(tmp_path / "home"))
    r = bench_json(capsys, str(write_kgqa(tmp_path)), "--limit", "2")
    assert r["config"]["pruner"] == "embedding" and r["config"]["model"] == "none"


def test_same_command_same_numbers(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("TOG_HOME", str(tmp_path / "home"))
    data = write_kgqa(tmp_path)
    for pruner in ("bm25", "random"):
        a, b = (bench_json(capsys, str(data), "--pruner", pruner) for _ in range(2))
        strip = lambda r: [{k: v for k, v in q.items() if k != "wall_s"} for q in r["questions"]]  # noqa: E731
        assert strip(a) == strip(b)
        assert {k: {m: v for m, v in d.items() if m != "s_per_q"} for k, d in a["summary"].items()} == \
            {k: {m: v for m, v in d.items() if m != "s_per_q"} for k, d in b["summary"].items()}


def test_table_output_and_depth_override(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("TOG_HOME", str(tmp_path / "home"))
    data = write_kgqa(tmp_path)
    assert cli.main(["bench", "kgqa", str(data), "--pruner", "bm25", "--width", "1", "--depth", "1"]) == 0
    out = capsys.readouterr().out
    assert "beam recall" in out and out.strip().splitlines()[-1].split()[0] == "all"
    # at depth 1 the 2-hop question stops at Dana: 2 of 5 hits
    r = bench_json(capsys, str(data), "--pruner", "bm25", "--width", "1", "--depth", "1")
    assert r["summary"]["all"]["beam_recall"] == 0.4


def test_baseline_runs_the_same_questions_and_reports_the_ratio(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("TOG_HOME", str(tmp_path / "home"))
    data = write_kgqa(tmp_path)
    r = bench_json(capsys, str(data), "--pruner", "bm25", "--width", "1", "--baseline", "random",
                   "--baseline-seeds", "3", "--seed", "4")
    base = r["baseline"]
    assert base["pruner"] == "random" and base["seeds"] == [4, 5, 6] and len(base["per_seed"]) == 3
    # each seed is a real random run: the same as running it alone
    alone = bench_json(capsys, str(data), "--pruner", "random", "--width", "1", "--seed", "5")
    assert base["per_seed"][1]["beam_recall"]["all"] == alone["summary"]["all"]["beam_recall"]
    mean = sum(p["beam_recall"]["all"] for p in base["per_seed"]) / 3
    assert base["beam_recall"]["all"] == round(mean, 4)
    assert base["ratio"]["all"] == round(r["summary"]["all"]["beam_recall"] / base["beam_recall"]["all"], 3)
    assert cli.main(["bench", "kgqa", str(data), "--pruner", "bm25", "--baseline", "random"]) == 0
    out = capsys.readouterr().out
    assert "baseline random (seed 0)" in out and "bm25 / random: " in out
    assert cli.main(["bench", "kgqa", str(data), "--baseline", "coin"]) == 2
    assert "unknown --baseline pruner 'coin'" in capsys.readouterr().err


def test_bad_input_exits_2_with_one_line(tmp_path, capsys):
    data = write_kgqa(tmp_path)
    assert cli.main(["bench", "kgqa", str(data), "--split", "test"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "questions_test.jsonl" in err and "questions_dev.jsonl" in err
    assert cli.main(["bench", "kgqa", str(data), "--pruner", "magic"]) == 2
    assert "choose one of" in capsys.readouterr().err
    (tmp_path / "questions_bad.jsonl").write_text('{"question": "q"}\n')
    assert cli.main(["bench", "kgqa", str(data), "--split", "bad"]) == 2
    assert "questions_bad.jsonl:1" in capsys.readouterr().err


def test_answer_hits_counts_only_llm_answers(tmp_path, capsys, monkeypatch):
    from scripted import toy_llm
    from tog_core.testing.server import FakeOpenAIServer

    monkeypatch.setenv("TOG_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    data = write_kgqa(tmp_path, QUESTIONS[:1])
    with FakeOpenAIServer(toy_llm) as srv:
        r = bench_json(capsys, str(data), "--model", "openai/toy", "--api-base", srv.base_url)
    s = r["summary"]["all"]
    assert r["config"]["pruner"] == "llm"
    assert s["answer_hits1"] == 1.0 and s["beam_recall"] == 1.0  # toy LLM answers "The answer is Dana [1]."
    assert s["llm_calls"] >= 2 and s["tokens"] > 0


def test_helpers_by_hand():
    assert answer_match("It was DANA, I think", ["Dana"]) and not answer_match("Sam", ["Dana", ""])
    qs = [{"hops": h, "id": f"{h}-{k}"} for h in (1, 2, 3) for k in range(3)]
    assert [q["id"] for q in select(qs, 4)] == ["1-0", "2-0", "3-0", "1-1"]
    assert select(qs, None) == qs
    rows = [QuestionResult(id="a", hops=1, beam_hit=True, chain_hit=False, answer_hit=None, llm_calls=2),
            QuestionResult(id="b", hops=2, beam_hit=False, chain_hit=False, answer_hit=True, llm_calls=4)]
    s = summarize(rows)
    assert s["all"]["beam_recall"] == 0.5 and s["all"]["answer_hits1"] == 1.0 and s["all"]["llm_calls"] == 3
    assert list(s) == ["1", "2", "all"]


@pytest.mark.skipif(not (METAQA / "questions_dev.jsonl").is_file(),
                    reason="MetaQA is not present at ../shared/data/kgqa/metaqa")
def test_metaqa_limit_10_bm25(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("TOG_HOME", str(tmp_path / "home"))
    r = bench_json(capsys, str(METAQA), "--limit", "10", "--pruner", "bm25")
    assert r["summary"]["all"]["n"] == 10 and {q["hops"] for q in r["questions"]} == {1, 2, 3}
    assert 0.0 <= r["summary"]["all"]["beam_recall"] <= 1.0


def test_link_mode_starts_from_the_question_text_and_counts_link_hits(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("TOG_HOME", str(tmp_path / "home"))
    data = write_kgqa(tmp_path)
    r = bench_json(capsys, str(data), "--pruner", "bm25", "--width", "1", "--link", "--depth", "2")
    rows = {q["id"]: q for q in r["questions"]}
    assert rows["q1"]["seeds"] == ["Film"] and rows["q1"]["link_hit"] is True
    assert rows["q4"]["seeds"] == [] and rows["q4"]["link_hit"] is False  # "Ghost" is in no title: nothing to start
    assert rows["q4"]["stop_reason"] == "no_candidates"
    assert r["summary"]["1"]["link_hits"] == 0.75 and r["summary"]["2"]["link_hits"] == 1.0
    assert r["config"]["link"] is True and r["config"]["depth"] == 2
    gold = bench_json(capsys, str(data), "--pruner", "bm25", "--width", "1")
    assert gold["summary"]["all"]["link_hits"] is None  # gold seeds: nothing was linked


def test_gold_path_diagnostic_names_the_depth_and_stage_where_the_gold_relation_left(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("TOG_HOME", str(tmp_path / "home"))
    questions = [
        # the search follows directed_by twice: nothing lost
        {**QUESTIONS[4], "relation_path": ["directed_by", "directed_by (inverse)"]},
        # "who directed Film" with width 1 keeps directed_by; a gold path through the actor is dropped at depth 1
        {"id": "q6", "question": "who directed Film", "topic_entities": ["Film"], "answers": ["Sam"], "hops": 1,
         "relation_path": ["starred_actors"]},
        # no edge of that relation at all
        {"id": "q7", "question": "who directed Film", "topic_entities": ["Film"], "answers": ["Sam"], "hops": 1,
         "relation_path": ["edited_by"]},
    ]
    data = write_kgqa(tmp_path, questions)
    r = bench_json(capsys, str(data), "--pruner", "bm25", "--width", "1")
    rows = {q["id"]: q for q in r["questions"]}
    assert rows["q5"]["gold_path_lost"] is None
    assert rows["q6"]["gold_path_lost"] == {"depth": 1, "stage": "relations", "why": "dropped"}
    assert rows["q7"]["gold_path_lost"] == {"depth": 1, "stage": "relations", "why": "never a candidate"}
    assert r["summary"]["1"]["gold_path_lost"] == {"depth 1 relations: dropped": 1,
                                                   "depth 1 relations: never a candidate": 1}
    # the two-hop gold path of q5 when the search is told to stop at depth 1
    short = bench_json(capsys, str(data), "--pruner", "bm25", "--width", "1", "--depth", "1")
    assert {q["id"]: q for q in short["questions"]}["q5"]["gold_path_lost"] == \
        {"depth": 2, "stage": "relations", "why": "not reached"}


def test_the_gold_reader_searches_the_data_sets_own_hops(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("TOG_HOME", str(tmp_path / "home"))
    # the wording names one relation; the data set says two (the director, then what else the director made)
    qs = [{"id": "g1", "question": "who directed Film", "topic_entities": ["Film"], "answers": ["Other Film"],
           "hops": 2, "relation_path": ["directed_by", "directed_by (inverse)"]},
          {"id": "g2", "question": "which year was Film released", "topic_entities": ["Film"], "answers": ["1999"],
           "hops": 1}]
    data = write_kgqa(tmp_path, qs)
    rules = bench_json(capsys, str(data), "--pruner", "bm25", "--depth", "3")
    gold = bench_json(capsys, str(data), "--pruner", "bm25", "--depth", "3", "--reader", "gold")
    assert rules["config"]["reader"] == "rules" and gold["config"]["reader"] == "gold"
    by_id = {q["id"]: q for q in gold["questions"]}
    assert by_id["g1"]["depth_reached"] == 2 and by_id["g2"]["depth_reached"] == 1
    assert {q["id"]: q["depth_reached"] for q in rules["questions"]}["g1"] == 1
    assert by_id["g1"]["answer_entity"] == "Other Film" and gold["summary"]["all"]["chain_hits1"] == 1.0
    assert cli.main(["bench", "kgqa", str(data), "--reader", "psychic"]) == 2
