"""The LLM reader and the reading mode (issue #20 item 3): one call reads the question into the same QuestionReading
the rules make (hops, the answer's type, the relation phrases in walking order), parsed tolerantly, the rule reading
its named fallback (recorded in the trace); the reading mode makes at most 3 LLM calls a question (reading, answer,
and linking only when no title matches) where the faithful run makes one per stage; the paper's run keeps the rules.
Every model here is the loopback server (LiteLLM's own code runs against 127.0.0.1)."""
from __future__ import annotations

import asyncio
import json
from dataclasses import replace

import pytest

from faultkit import QUESTION, fast_client, make_graph
from tog_core.cli.main import main
from tog_core.compose import DEPARTURES, RunSpec, build_engine, plan
from tog_core.errors import UsageError
from tog_core.policy import depths
from tog_core.prompting.reading_parsing import FALLBACK_READING_UNPARSED, parse_reading
from tog_core.reading import readers
from tog_core.reading.llm import read_with_llm
from tog_core.testing.server import Reply, last_user_message

KEY = "sk-canary-llm-reading-0123456789"
CLEAN = '{"hops": 2, "answer_type": "place", "relations": ["founded by", "born in"]}'
FENCED = ("Sure, here is how I read it:\n```json\n{'hops': 'two', 'answer_type': 'a place', "
          "'relations': 'founded by -> born in'}\n```\nThe founder is a person; the answer is where they were born.")


def is_reading(request: dict) -> bool:
    return '"answer_type"' in last_user_message(request)


def replies(reading: str | Reply):
    """A model that reads the question with `reading`, names no topic entity and answers in one line."""
    def handler(request: dict) -> str | Reply:
        text = last_user_message(request)
        if is_reading(request):
            return reading
        if "named entities this question" in text:
            return json.dumps({"entities": ["Acme"]})
        if "Answer the question" in text:
            return "Paris [1]."
        if "enough to answer" in text:
            return json.dumps({"sufficient": False, "reason": "not yet"})
        return json.dumps({"scores": [{"i": i, "score": 0.5, "reason": "toy"} for i in range(40)]})
    return handler


def read(server, question: str = QUESTION, topics: tuple[str, ...] = ("Acme",)):
    base = readers.read(question, list(topics))
    reading, usage = asyncio.run(read_with_llm(question, list(topics), fast_client(server.base_url), base))
    return base, reading, usage


# ------------------------------------------------------------------ the parser

@pytest.mark.parametrize("reply", [CLEAN, FENCED, "<think>two relations</think>" + CLEAN + " Hope this helps!"])
def test_the_reply_is_read_from_json_a_fence_single_quotes_and_prose(reply):
    got = parse_reading(reply)
    assert (got.hops, got.phrases, got.fallback) == (2, ["founded by", "born in"], None)
    assert got.answer_type == "place"


@pytest.mark.parametrize("reply,hops", [('{"hops": "3 hops"}', 3), ('{"hops": 2.0}', 2), ('{"hops": 0}', 1),
                                        ('{"hops": 40}', 10), ('{"relations": ["wife", "born in"]}', 2)])
def test_hops_are_read_as_words_or_numbers_clamped_or_counted_from_the_phrases(reply, hops):
    assert parse_reading(reply).hops == hops


def test_a_missing_field_is_named_and_nothing_readable_is_the_named_fallback():
    partial = parse_reading('{"answer_type": "person"}')
    assert partial.hops is None and partial.fallback is None and "missing hops, relations" in partial.detail
    for garbage in ("I would say it is about Acme.", "", '{"hops": true, "answer_type": "unknown"}', "[1, 2]"):
        got = parse_reading(garbage)
        assert got.fallback == FALLBACK_READING_UNPARSED and not got.read_anything, garbage


# ------------------------------------------------------------------ the reader

@pytest.mark.parametrize("reply", [CLEAN, FENCED])
def test_the_llm_reading_takes_hops_type_and_phrases_and_keeps_the_rest_of_the_rules(fake_openai, reply):
    srv = fake_openai(replies(reply))
    base, reading, usage = read(srv, "Which city was the founder of Acme born in?")
    assert reading.by == "llm" and reading.fallback == ""
    assert reading.hops == 2 and reading.phrases == ("founded by", "born in") and reading.asked == ("plac",)
    assert not reading.asked_named  # the question says "city", not "place"
    for kept in ("question", "language", "topics", "spans", "near", "far", "words"):
        assert getattr(reading, kept) == getattr(base, kept), kept
    assert usage["stage"] == "reading" and usage["llm_calls"] == 1 and not usage.get("fallback")
    [request] = srv.requests
    assert "Topic entities (where the answer's chain of relations starts): 'Acme'" in last_user_message(request)


def test_a_reply_without_a_reading_falls_back_to_the_rules_by_name(fake_openai):
    base, reading, usage = read(fake_openai(replies("Happy to help! What would you like to know?")))
    assert reading == replace(base, fallback=FALLBACK_READING_UNPARSED) and reading.by == "rules"
    assert usage["fallback"] == FALLBACK_READING_UNPARSED and "Happy to help" in usage["detail"]
    assert usage["llm_calls"] == 1


def test_a_failed_reading_call_falls_back_to_the_rules_without_the_key(fake_openai):
    srv = fake_openai(lambda request: Reply(status=401, text=f"invalid api key {KEY}"))
    base, reading, usage = read(srv)
    assert reading.by == "rules" and reading.fallback.startswith("llm_reading_error: ")
    assert usage["fallback"] == "llm_reading_error" and usage["llm_calls"] == 1
    assert KEY not in json.dumps(usage) and KEY not in reading.fallback


# ------------------------------------------------------------------ where it runs: compose and policy/depths.py

def engine_for(server, **spec):
    return build_engine(RunSpec(model="openai/test-model", api_base=server.base_url, api_key=KEY,
                                trust_api_base=True, **spec), graph=make_graph()).engine


def run(engine, question: str = QUESTION, seeds=None):
    state = asyncio.run(depths.run(engine, question, seeds=seeds))
    return engine.trace(state).to_dict()


@pytest.mark.parametrize("seeds", [None, ["Acme"]])
def test_a_reading_mode_run_makes_at_most_three_calls_and_records_the_llm_reading(fake_openai, tog_home, seeds):
    srv = fake_openai(replies(CLEAN))
    eng = engine_for(srv, mode="reading")
    trace = run(eng, seeds=seeds)
    assert trace["reading"]["by"] == "llm" and trace["reading"]["phrases"] == ["founded by", "born in"]
    assert trace["config"]["mode"] == "reading" and trace["config"]["reader"] == "llm"
    assert trace["config"]["judge"] == "coverage" and trace["config"]["pruner"] == "bm25"
    assert trace["config"]["policy"] == "cheap" and trace["config"]["departures"]  # not the paper
    assert trace["stats"]["llm_calls"] == len(srv.requests) == 2  # "Acme" is named: linked without the LLM
    assert [is_reading(r) for r in srv.requests] == [True, False]  # the reading, then the answer
    assert trace["answer_by"] == "llm" and "other_fallbacks" not in trace["stats"]
    # the reading's hops (2) plan the search but do not replace the numbers of hops tried on a GraphRAG graph
    assert [t["depth"] for t in trace["plan"]["trials"]] == [1, 2, 3] and not trace["plan"]["chosen"]


def test_the_reading_mode_links_with_the_llm_only_when_no_title_matches(fake_openai, tog_home):
    srv = fake_openai(replies(CLEAN))
    trace = run(engine_for(srv, mode="reading"), "Where was the founder of the widget maker born?")
    assert [s["how"] for s in trace["seeds"]] == ["llm"]  # no title in the question: the third call
    assert trace["stats"]["llm_calls"] == len(srv.requests) == 3 and trace["reading"]["by"] == "llm"


def test_an_unreadable_reading_is_a_named_fallback_in_the_trace(fake_openai, tog_home):
    srv = fake_openai(replies("no idea"))
    trace = run(engine_for(srv, mode="reading"), seeds=["Acme"])
    assert trace["reading"]["by"] == "rules" and trace["reading"]["fallback"] == FALLBACK_READING_UNPARSED
    [fell] = trace["stats"]["other_fallbacks"]
    assert fell["name"] == FALLBACK_READING_UNPARSED and fell["where"] == "reading"


def test_a_failed_reading_is_recorded_and_the_key_is_nowhere_in_the_trace(fake_openai, tog_home):
    def handler(request: dict) -> str | Reply:
        return Reply(status=401, text=f"invalid api key {KEY}") if is_reading(request) else replies(CLEAN)(request)

    trace = run(engine_for(fake_openai(handler), mode="reading"), seeds=["Acme"])
    assert trace["reading"]["by"] == "rules" and trace["reading"]["fallback"].startswith("llm_reading_error")
    # the key was refused: the reading falls back, and the answer after it (the run's circuit is open)
    assert [f["name"] for f in trace["stats"]["other_fallbacks"]] == ["llm_reading_error", "answer_llm_error_composed"]
    assert KEY not in json.dumps(trace) and KEY[:12] not in json.dumps(trace)


@pytest.mark.parametrize("spec", [{}, {"paper": True, "relation_pruner": "bm25"}])
def test_the_faithful_and_the_paper_run_keep_the_rule_reading_and_make_no_reading_call(fake_openai, tog_home, spec):
    srv = fake_openai(replies(CLEAN))
    trace = run(engine_for(srv, **spec), seeds=["Acme"])
    assert trace["reading"]["by"] == "rules" and trace["config"]["reader"] == "rules"
    assert srv.requests and not any(is_reading(r) for r in srv.requests)


def test_a_cheap_run_with_a_providers_model_reads_the_question_once_even_when_linked_apart(fake_openai, tog_home):
    srv = fake_openai(replies(CLEAN))
    eng = engine_for(srv, relation_pruner="bm25")  # not the reading mode: the LLM still judges and answers
    assert eng.config.reader == "llm" and eng.config.mode == "faithful"
    linked = asyncio.run(eng.start_async(QUESTION))  # the app links (and saves) before it runs
    state = asyncio.run(depths.run(eng, QUESTION, state=linked))
    assert state.reading is not None and state.reading.by == "llm"
    assert sum(map(is_reading, srv.requests)) == 1
    again = asyncio.run(depths.run(eng, QUESTION, state=replace(state, steps=(), stage="relations")))
    assert again.reading == state.reading  # asked once per question (not again from the reply cache either)
    assert [u["stage"] for u in again.extra_usage].count("reading") == 1 and sum(map(is_reading, srv.requests)) == 1


def test_compose_refuses_a_reading_mode_it_cannot_run_and_resolves_the_cheap_pruners(fake_openai):
    base = dict(mode="reading", api_base="http://127.0.0.1:9/v1", api_key=KEY, trust_api_base=True)
    for spec, says in [(RunSpec(mode="reading", model="none"), "needs a model"),
                       (RunSpec(mode="reading", model="local"), "provider"),
                       (RunSpec(model="openai/x", paper=True, **base), "--paper"),
                       (RunSpec(model="openai/x", without=tuple(DEPARTURES), **base), "--paper"),
                       (RunSpec(model="openai/x", relation_pruner="llm", **base), "prunes without the LLM")]:
        with pytest.raises(UsageError, match=says):
            plan(spec, None, graph=make_graph())
    got = plan(RunSpec(model="openai/x", **base), None, graph=make_graph())
    assert (got.policy, got.config.relation_pruner, got.config.judge, got.config.reader) == ("cheap", "bm25",
                                                                                               "coverage", "llm")


def test_the_cli_runs_the_reading_mode(fake_openai, capsys, tog_home, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    srv = fake_openai(replies('{"hops": 3, "answer_type": "person", "relations": ["invention", "manufactured by", '
                              '"founded by"]}'))
    assert main(["query", "demo", "Who founded the company that manufactures the invention of Corin Vell?",
                 "--model", "openai/test-model", "--api-base", srv.base_url, "--mode", "reading", "--no-save",
                 "--json"]) == 0
    trace = json.loads(capsys.readouterr().out)
    assert trace["reading"]["by"] == "llm" and trace["reading"]["hops"] == 3 and trace["config"]["mode"] == "reading"
    assert trace["stats"]["llm_calls"] == len(srv.requests) == 2


def test_the_benchmark_runs_the_reading_mode_and_scores_the_readings_hops(fake_openai, tog_home, monkeypatch):
    from tog_core.bench.kgqa import KGQAConfig, run_kgqa
    from tog_core.bench.report import format_table

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    srv = fake_openai(replies('{"hops": 1, "answer_type": "person", "relations": ["founded by"]}'))
    result = run_kgqa(KGQAConfig(data_dir="demo/output", questions="demo/questions.jsonl", model="openai/test-model",
                                 api_base=srv.base_url, mode="reading", link=True, depth=3, limit=6))
    whole = result["summary"]["all"]
    assert whole["read_by"] == {"llm": 6} and whole["llm_calls"] <= 3
    one_hop = [q for q in result["questions"] if q["hops"] == 1]
    assert whole["reading_hops_right"] == round(len(one_hop) / 6, 4)  # the reader said 1 hop every time
    assert f"question reading (llm 6): hops right {len(one_hop) / 6:.3f}" in format_table(result)


def test_the_benchmark_reader_flag_chooses_who_reads(fake_openai, tog_home, monkeypatch):
    """--reader llm / rules / gold with a provider's model and a cheap pruner: the LLM reads every question, none, or
    the data set does; --reader llm without a model is refused by name."""
    from tog_core.bench.kgqa import KGQAConfig, run_kgqa

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    srv = fake_openai(replies('{"hops": 1, "answer_type": "person", "relations": ["founded by"]}'))
    base = dict(data_dir="demo/output", questions="demo/questions.jsonl", model="openai/test-model",
                api_base=srv.base_url, pruner="bm25", link=True, depth=3, limit=4)
    by_llm = run_kgqa(KGQAConfig(**base, reader="llm"))
    assert by_llm["config"]["reader"] == "llm" and by_llm["summary"]["all"]["read_by"] == {"llm": 4}
    asked = len(srv.requests)
    by_rules = run_kgqa(KGQAConfig(**base, reader="rules"))
    assert by_rules["summary"]["all"]["read_by"] == {"rules": 4}
    gold = run_kgqa(KGQAConfig(**base, reader="gold"))
    assert gold["summary"]["all"]["read_by"] == {"gold": 4}
    assert not [r for r in srv.requests[asked:] if is_reading(r)]  # neither asked the LLM to read
    with pytest.raises(UsageError, match="--reader llm needs"):
        run_kgqa(KGQAConfig(data_dir="demo/output", questions="demo/questions.jsonl", reader="llm", limit=1))


def test_a_persons_corrected_reading_is_not_read_again_by_the_llm(fake_openai, tog_home):
    srv = fake_openai(replies(CLEAN))
    eng = engine_for(srv, relation_pruner="bm25")
    mine = readers.read(QUESTION, ["Acme"]).edit(asked=["person"])
    state = asyncio.run(depths.start(eng, QUESTION, ["Acme"], reading=mine))
    assert state.reading == mine and not any(map(is_reading, srv.requests))
    done = asyncio.run(depths.run(eng, QUESTION, state=state))
    assert done.reading == mine and not any(map(is_reading, srv.requests))
