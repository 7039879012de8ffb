"""LLM faults: every way a provider can misbehave, injected by a real HTTP server on 127.0.0.1, through
LiteLLM, into a whole ToG run on a small graph.

Policy under test (what "honest" means here):
* a fault that a retry cures (one 429/500/503, one hang, a stream dropped before its first token) leaves
  no mark on the result: the run equals the clean run, only the client's retry counter moved;
* a fault that persists degrades the stage *by name*: scoring falls back to BM25 (`llm_error_used_bm25`),
  an unreadable reply to uniform/partial scores, a failed evaluation to "search on", a failed answer to
  the answer composed from the chains (`answer_llm_error_composed`, `answer_by == "chains"`, `error` set);
* stop_reason keeps describing the *search*: the beam still walks (BM25 fallback), so it ends
  `max_depth` (nothing judged the chains sufficient) — never "sufficient" on a verdict nobody gave.
  "error" is reserved for a run where nothing could be done at all: no topic entity could be found
  because the LLM that should find them failed (see test_link_failure_stop_reason_is_error);
* every retry loop is bounded: the request count stays within (max_retries + 1) × the paper's call bound,
  and the whole run finishes within a generous upper bound with the tiny timeouts configured here.
"""
from __future__ import annotations

import asyncio
import json
import socket
import time

import pytest

from faultkit import QUESTION, Faults, Rule, chains_of, fast_client, make_graph
from tog_core.tog.engine import (FALLBACK_ANSWER_LLM_ERROR, FALLBACK_EVALUATE_LLM_ERROR, FALLBACK_LINK_LLM_ERROR,
                                 ToGEngine)
from tog_core.testing.server import FakeOpenAIServer, Reply
from tog_core.llm.client import LLMError
from tog_core.prompting.parsing import (FALLBACK_EVALUATE_NO, FALLBACK_EXTRA, FALLBACK_PARTIAL, FALLBACK_UNIFORM)
from tog_core.scoring.scorers import FALLBACK_LLM_ERROR
from tog_core.tog.state import Callbacks, EngineConfig
from tog_core.tog.trace import Trace

WIDTH, DEPTH = 2, 3
CALL_BOUND = 2 * WIDTH * DEPTH + DEPTH + 1  # the paper's bound on LLM calls per question
RUN_BOUND_S = 30.0  # generous: the tiny timeouts below make every faulty run take a few seconds at most


def no_choices_body() -> str:
    return json.dumps({"id": "chatcmpl-x", "object": "chat.completion", "created": 0, "model": "toy",
                       "choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": 0, "total_tokens": 1}})


def run_with(rules: list[Rule], *, depth: int = DEPTH, **client_kw):
    """One whole run against a faulty server: (trace, requests sent, client usage, wall seconds)."""
    with FakeOpenAIServer(Faults(rules)) as srv:
        llm = fast_client(srv.base_url, **client_kw)
        eng = ToGEngine(make_graph(), llm=llm, config=EngineConfig(width=WIDTH, depth=depth))
        t0 = time.perf_counter()
        st = asyncio.run(eng.run(QUESTION, seeds=["Acme"]))
        wall = time.perf_counter() - t0
        trace = eng.trace(st)
        return trace, len(srv.requests), llm.usage, wall


def fallback_names(trace: Trace) -> set[str]:
    names = {f["name"] for s in trace.steps for f in s.fallbacks}
    return names | {f["name"] for f in trace.stats.get("other_fallbacks", [])}


@pytest.fixture(scope="module")
def clean():
    trace, sent, usage, _ = run_with([])
    assert trace.stop_reason == "sufficient" and trace.answer_by == "llm" and "Paris" in trace.answer
    assert not fallback_names(trace) and usage.retries == 0
    return trace


# ------------------------------------------------------------------ transient faults: a retry cures them

TRANSIENT = {
    "429_retry_after": Reply(status=429, headers={"Retry-After": "0.05"}, text="slow down"),
    "500": Reply(status=500, text="internal error"),
    "503": Reply(status=503, text="overloaded"),
    "hang_past_timeout": Reply(text="{}", delay_s=4.0),
}


@pytest.mark.parametrize("fault", list(TRANSIENT))
def test_fault_once_per_stage_is_retried_and_leaves_no_mark(fault, clean):
    # the first request of every stage (scores, evaluate, answer) fails once, then the server recovers
    # (the hang only hits the first scoring call: each hang costs a whole timeout)
    stage = "scores" if fault == "hang_past_timeout" else "*"
    kw = {"timeout_s": 1.0} if fault == "hang_past_timeout" else {}
    trace, sent, usage, wall = run_with([Rule(stage, TRANSIENT[fault], when=lambda n: n == 0)], **kw)
    assert wall < RUN_BOUND_S
    if stage == "*":
        assert usage.retries == 3  # one retry per faulty stage kind (scores, evaluate, answer)
    else:  # a loaded machine may add a spurious timeout of its own; the hang itself costs one retry
        assert usage.retries >= 1
    assert usage.failures == 0
    assert not fallback_names(trace)
    assert (trace.stop_reason, trace.answer, chains_of(trace)) == (clean.stop_reason, clean.answer, chains_of(clean))
    assert sent == trace.stats["llm_calls"] + usage.retries


def test_fault_stream_dropped_before_the_first_token_is_retried(clean):
    trace, sent, usage, _ = run_with([Rule("answer", Reply(text="never seen", break_stream_after=0),
                                           when=lambda n: n == 0)])
    assert usage.retries == 1 and not fallback_names(trace)
    assert trace.answer == clean.answer and trace.answer_by == "llm"


# ------------------------------------------------------------------ persistent faults: named fallbacks

def _no_choices() -> Reply:
    return Reply(raw_body=no_choices_body())


PERSISTENT = {
    # name: (rule stage, reply, expected fallback names, answer_by); the answer-only fault leaves the
    # search untouched, so that run still ends "sufficient"
    "hang_past_timeout": ("*", Reply(text="{}", delay_s=3.0),
                          {FALLBACK_LLM_ERROR, FALLBACK_EVALUATE_LLM_ERROR, FALLBACK_ANSWER_LLM_ERROR}, "chains"),
    "429_retry_after_capped": ("*", Reply(status=429, headers={"Retry-After": "3600"}, text="quota"),
                               {FALLBACK_LLM_ERROR, FALLBACK_EVALUATE_LLM_ERROR, FALLBACK_ANSWER_LLM_ERROR}, "chains"),
    "500": ("*", Reply(status=500, text="boom"),
            {FALLBACK_LLM_ERROR, FALLBACK_EVALUATE_LLM_ERROR, FALLBACK_ANSWER_LLM_ERROR}, "chains"),
    "503": ("*", Reply(status=503, text="unavailable"),
            {FALLBACK_LLM_ERROR, FALLBACK_EVALUATE_LLM_ERROR, FALLBACK_ANSWER_LLM_ERROR}, "chains"),
    "invalid_json_body": ("*", Reply(raw_body="{not json at all"),
                          {FALLBACK_LLM_ERROR, FALLBACK_EVALUATE_LLM_ERROR, FALLBACK_ANSWER_LLM_ERROR}, "chains"),
    "empty_choices": ("*", _no_choices(),
                      {FALLBACK_LLM_ERROR, FALLBACK_EVALUATE_LLM_ERROR, FALLBACK_ANSWER_LLM_ERROR}, "chains"),
    "refusal": ("*", Reply(text="I'm sorry, but I can't help with that request."),
                {FALLBACK_UNIFORM, FALLBACK_EVALUATE_NO}, "llm"),
    "prose_instead_of_scores": ("scores", Reply(text="The first relation looks the most relevant to the "
                                                      "question; the others matter less."),
                                {FALLBACK_UNIFORM}, "llm"),
    "scores_for_wrong_count": ("scores", Reply(text=json.dumps({"scores": [
        {"i": 0, "score": 0.9, "reason": "first"}, {"i": 7, "score": 0.5, "reason": "no such candidate"}]})),
        {FALLBACK_PARTIAL, FALLBACK_EXTRA}, "llm"),
    "stream_breaks_midway": ("answer", Reply(text="The answer is Paris because Alice was born there [1].",
                                             break_stream_after=3), {FALLBACK_ANSWER_LLM_ERROR}, "chains"),
}


@pytest.mark.parametrize("fault", list(PERSISTENT))
def test_fault_persistent_degrades_by_name_and_stays_bounded(fault, clean):
    stage, reply, expected, answer_by = PERSISTENT[fault]
    kw = {"timeout_s": 0.25} if fault == "hang_past_timeout" else {"retry_after_max_s": 0.1}
    depth = 2 if stage == "*" else DEPTH  # keeps the all-calls-fail runs short; the walk is the same
    trace, sent, usage, wall = run_with([Rule(stage, reply)], depth=depth, **kw)

    assert wall < RUN_BOUND_S
    assert sent <= 2 * CALL_BOUND  # max_retries=1: never more than two attempts per call
    assert usage.retries <= trace.stats["llm_calls"]
    assert expected <= fallback_names(trace), fallback_names(trace)
    assert trace.answer_by == answer_by and trace.answer.strip()
    # stop_reason describes the search honestly: "sufficient" only on a verdict the LLM really gave
    evaluations = [s for s in trace.steps if s.stage == "evaluate"]
    judged = evaluations[-1].verdict if evaluations else {}
    if trace.stop_reason == "sufficient":
        assert judged["by"] == "llm" and judged["sufficient"] and not evaluations[-1].fallbacks
    else:
        assert trace.stop_reason == "max_depth" and len(evaluations) == depth
    if stage == "*":
        assert trace.stop_reason == "max_depth"
    if stage == "answer":  # the search itself was healthy
        assert trace.stop_reason == "sufficient"
    assert trace.chains and all(chain for chain in trace.chains)  # the beam still walked the graph

    # every degraded stage carries its fallback: each stage that called the faulty LLM names one
    faulty_stages = {"relations", "entities", "evaluate"} if stage == "*" else (
        {"relations", "entities"} if stage == "scores" else set())
    for step in trace.steps:
        if step.stage in faulty_stages and step.llm_calls > 0:
            assert step.fallbacks, f"{step.stage}@{step.depth} degraded without a named fallback"
            assert all(f["name"] and f["where"] for f in step.fallbacks)
    if answer_by == "chains":
        other = {f["name"]: f for f in trace.stats["other_fallbacks"]}
        assert other[FALLBACK_ANSWER_LLM_ERROR]["where"] == "answer"
        assert trace.error and trace.answer.startswith("[No LLM]")
    # the degraded trace is still a valid, round-tripping trace
    assert Trace.from_json(trace.to_json()).to_dict() == trace.to_dict()


def test_fault_stream_break_keeps_the_reason_in_the_trace():
    trace, *_ = run_with([Rule("answer", Reply(text="one two three four five six seven", break_stream_after=3))])
    detail = next(f["detail"] for f in trace.stats["other_fallbacks"] if f["name"] == FALLBACK_ANSWER_LLM_ERROR)
    assert "stream broke after" in detail and "dropped in the middle of the reply" in detail


# ------------------------------------------------------------------ a provider that is down entirely

def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_fault_provider_down_gives_one_clear_error_fast():
    llm = fast_client(f"http://127.0.0.1:{closed_port()}/v1", timeout_s=5, max_retries=3)
    t0 = time.perf_counter()
    with pytest.raises(LLMError) as caught:
        asyncio.run(llm.complete([{"role": "user", "content": "hi"}], temperature=0))
    assert time.perf_counter() - t0 < 10
    err = caught.value
    assert err.kind == "connection" and err.attempts == 1  # refused is not retried
    assert "could not connect" in str(err) and "127.0.0.1" in str(err)
    assert llm.usage.failures == 1 and llm.usage.retries == 0


def test_fault_provider_down_whole_run_falls_back_everywhere():
    llm = fast_client(f"http://127.0.0.1:{closed_port()}/v1", timeout_s=5, max_retries=3)
    eng = ToGEngine(make_graph(), llm=llm, config=EngineConfig(width=WIDTH, depth=DEPTH))
    t0 = time.perf_counter()
    st = asyncio.run(eng.run(QUESTION, seeds=["Acme"]))
    assert time.perf_counter() - t0 < RUN_BOUND_S
    tr = eng.trace(st)
    assert tr.stop_reason == "max_depth" and tr.answer_by == "chains" and "could not connect" in tr.error
    assert {FALLBACK_LLM_ERROR, FALLBACK_EVALUATE_LLM_ERROR, FALLBACK_ANSWER_LLM_ERROR} <= fallback_names(tr)
    assert llm.usage.retries == 0 and llm.usage.calls == 0


def test_fault_provider_down_link_fallback_is_named():
    llm = fast_client(f"http://127.0.0.1:{closed_port()}/v1")
    eng = ToGEngine(make_graph(), llm=llm, config=EngineConfig(width=WIDTH, depth=DEPTH))
    st = asyncio.run(eng.run("Where was the founder of that company born?"))  # no title in the question
    tr = eng.trace(st)
    assert [f["name"] for f in tr.stats["other_fallbacks"]] == [FALLBACK_LINK_LLM_ERROR]
    assert "could not connect" in tr.stats["other_fallbacks"][0]["detail"]
    assert not tr.steps and tr.stop_reason in ("no_candidates", "error")


def test_fault_link_failure_stop_reason_is_error():
    llm = fast_client(f"http://127.0.0.1:{closed_port()}/v1")
    eng = ToGEngine(make_graph(), llm=llm, config=EngineConfig(width=WIDTH, depth=DEPTH))
    st = asyncio.run(eng.run("Where was the founder of that company born?"))
    assert st.stop_reason == "error" and st.error and "could not connect" in st.error


def test_fault_missing_key_is_one_auth_error_not_retried_server_errors(monkeypatch):
    """No key anywhere: the OpenAI SDK refuses before any request and LiteLLM calls that a 500."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with FakeOpenAIServer(Faults()) as srv:
        llm = fast_client(srv.base_url, api_key=None, max_retries=3, backoff_base_s=1.0)
        t0 = time.perf_counter()
        with pytest.raises(LLMError) as caught:
            asyncio.run(llm.complete([{"role": "user", "content": "hi"}], temperature=0))
        assert time.perf_counter() - t0 < 10 and not srv.requests
    assert caught.value.kind == "auth" and caught.value.attempts == 1 and llm.usage.retries == 0
    assert "OPENAI_API_KEY" in str(caught.value)



def test_fault_stream_break_tells_the_ui_to_clear_the_partial_answer():
    shown: list[str] = []
    cb = Callbacks(on_token=shown.append, on_answer_reset=shown.clear)
    rules = [Rule("answer", Reply(text="one two three four five six seven", break_stream_after=3))]
    with FakeOpenAIServer(Faults(rules)) as srv:
        eng = ToGEngine(make_graph(), llm=fast_client(srv.base_url), config=EngineConfig(width=WIDTH, depth=DEPTH))
        st = asyncio.run(eng.run(QUESTION, seeds=["Acme"], callbacks=cb))
    assert st.answer_by == "chains" and "".join(shown) == st.answer  # no leftover partial tokens
