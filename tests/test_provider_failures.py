"""A failing provider is said, not hidden, and a hung one costs one timeout, not one per call (issue #23 item 5).

`query` against a 401, a 500 or a closed port exits 1 with one line on stderr naming the failure (kind, model,
API base, never the key); `--allow-fallback` keeps the LLM-free answer and records the failure in the trace.
Against a provider that accepts and never answers (faultkit.SilentListener), the run's circuit opens after the
first timed-out call: the later calls fall back at once, by name ("circuit open"), and the listener sees a bounded
number of connections. Timeouts here are half a second (the CLI's are 20 s a try, 30 s a call)."""
from __future__ import annotations

import asyncio
import functools
import json

import pytest

from faultkit import SilentListener, closed_port_url, fast_client
from tog_core import compose
from tog_core.cli.main import main
from tog_core.llm import factory
from tog_core.llm.client import LLMError
from tog_core.testing.server import Reply

KEY = "sk-canary-provider-failures-0123456789"
Q = "Who founded the company that manufactures the invention of Corin Vell?"  # demo, three hops


@pytest.fixture(scope="module")
def warm_litellm(module_fake_openai):
    """LiteLLM's first call imports and builds its clients (seconds on a cold disk): made once, on a server that
    answers, so the half-second tries below time out only where the provider hangs."""
    srv = module_fake_openai(lambda _req: "ok")
    asyncio.run(fast_client(srv.base_url, use_cache=False, timeout_s=60).complete([{"role": "user", "content": "hi"}],
                                                                    temperature=0))


@pytest.fixture()
def cli_timeouts(monkeypatch, tog_home, warm_litellm):
    """`cli_timeouts(s)`: the CLI's client with `s`-second tries; the key in the provider's usual variable."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)

    def set_to(seconds: float) -> None:
        monkeypatch.setattr(compose, "build_llm", functools.partial(factory.build_llm, timeout_s=seconds,
                                                                    stream_timeout_s=seconds))
    return set_to


def query(api_base: str, *extra: str) -> list[str]:
    return ["query", "demo", Q, "--model", "openai/test-model", "--api-base", api_base, "--no-save", *extra]


def fallbacks_of(trace: dict) -> list[dict]:
    return [f for s in trace["steps"] for f in s["fallbacks"]] + list(trace["stats"].get("other_fallbacks") or [])


def one_error_line(capsys) -> str:
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert KEY not in captured.err and KEY[:12] not in captured.err
    return lines[0]


@pytest.mark.parametrize("status, words", [(401, "auth (HTTP 401)"), (500, "server error (HTTP 500)"),
                                           (404, "no such model or path (HTTP 404)")])
def test_query_against_a_failing_server_exits_1_naming_the_failure(status, words, fake_openai, cli_timeouts, capsys):
    cli_timeouts(10)  # failing fast, not hanging: room for a loaded machine
    srv = fake_openai(lambda _req: Reply(status=status, text="no"))
    assert main(query(srv.base_url)) == 1
    line = one_error_line(capsys)
    assert line.startswith("error: LLM provider failed: ") and words in line
    assert "openai/test-model" in line and srv.base_url in line and "--allow-fallback" in line
    # the first failed call opened the run's circuit: no call after it reached the server
    assert len(srv.requests) == 1 if status != 500 else len(srv.requests) <= 4  # a 500 is retried within the call
    assert main(query(srv.base_url, "--allow-fallback", "--json")) == 0
    trace = json.loads(capsys.readouterr().out)
    assert trace["answer"].startswith("[No LLM]") and trace["config"]["allow_fallback"] is True
    failure = trace["stats"]["llm_failure"]
    assert failure["kind"] == {401: "auth", 500: "server", 404: "model"}[status] and failure["status"] == status
    named = fallbacks_of(trace)
    assert named and all(f["name"] for f in named)
    assert sum("circuit open" in f["detail"] for f in named) == len(named) - 1  # all but the first call's


def test_query_against_a_closed_port_exits_1_saying_it_cannot_connect(cli_timeouts, capsys):
    cli_timeouts(10)
    url = closed_port_url()
    assert main(query(url)) == 1
    line = one_error_line(capsys)
    assert "cannot connect" in line and url in line and "openai/test-model" in line


def test_a_hung_provider_costs_one_timeout_and_every_later_call_falls_back_by_name(cli_timeouts, capsys):
    cli_timeouts(0.5)
    with SilentListener() as hung:
        assert main(query(hung.base_url, "--allow-fallback", "--json")) == 0
        trace = json.loads(capsys.readouterr().out)
        connections = hung.connections
        assert main(query(hung.base_url)) == 1  # without --allow-fallback: one line, exit 1
        assert "timeout" in one_error_line(capsys)
    assert trace["stats"]["llm_failure"]["kind"] == "timeout"
    named = fallbacks_of(trace)
    opened = [f for f in named if "circuit open: provider timed out" in f["detail"]]
    # the run's first call timed out (its try and one retry within the call's deadline); every call after it,
    # the answer's included, fell back at once: two connections at most, instead of two for each of the calls
    assert connections <= 2 and len(opened) == len(named) - 1 >= 3
    assert trace["stats"]["llm_failure"]["refused_calls"] == len(opened)
    assert any(f["where"] == "answer" for f in opened)


def test_the_circuit_is_per_client_view_and_opens_only_on_the_providers_failures(warm_litellm):
    async def calls(client, n):
        out = []
        for _ in range(n):
            try:
                await client.complete([{"role": "user", "content": "hi"}], temperature=0)
                out.append("ok")
            except LLMError as err:
                out.append(("open " if getattr(err, "circuit_open", False) else "") + err.kind)
        return out

    with SilentListener() as hung:
        client = fast_client(hung.base_url, timeout_s=0.3, max_retries=0, use_cache=False)
        assert asyncio.run(calls(client, 3)) == ["timeout", "open timeout", "open timeout"]
        assert hung.connections == 1
        view = client.for_session(session="another run")  # a new run starts closed
        assert asyncio.run(calls(view, 1)) == ["timeout"] and hung.connections == 2
        assert client.circuit.first_failure.kind == "timeout" and client.circuit.refused == 2


def test_a_model_no_provider_is_named_for_is_refused_before_any_call(tmp_path, capsys, monkeypatch):
    """"nonsense-model" (no provider/ prefix LiteLLM knows): the CLI stops with a usage error naming the model and
    the fix, before any request; a model string LiteLLM resolves passes the same check."""
    from tog_core.llm.factory import ModelChoiceError, check_provider

    monkeypatch.setenv("TOG_HOME", str(tmp_path / "home"))
    assert main(["query", "demo", "Who founded the Lanternwright Guild?", "--model", "nonsense-model",
                 "--no-save"]) == 2
    err = capsys.readouterr().err
    assert "the model 'nonsense-model'" in err and "openai/gpt-4o-mini" in err and "Traceback" not in err
    check_provider("openai/toy", "http://127.0.0.1:9/v1")
    check_provider("gpt-4o-mini")
    with pytest.raises(ModelChoiceError, match="provider/model"):
        check_provider("mistral-large")


def test_allow_fallback_says_the_provider_failed_and_counts_no_failed_call_as_made(fake_openai, cli_timeouts, capsys):
    """A 401 with --allow-fallback: a warning on stderr and at the top of the text output (the trace's recorded
    failure, and that the fallback scorers pruned the search: --model none may do better); the summary counts the
    one failed call and the calls the open circuit refused, none as answered. --json keeps stdout JSON only."""
    cli_timeouts(10)
    srv = fake_openai(lambda _req: Reply(status=401, text="no"))
    assert main(query(srv.base_url, "--allow-fallback")) == 0
    captured = capsys.readouterr()
    [warning] = captured.err.splitlines()
    assert warning.startswith("warning: LLM provider failed: auth (HTTP 401) — model openai/test-model at "
                              f"{srv.base_url}: the key was rejected or is missing; check the API key")
    assert warning.endswith("; answered without the LLM (--allow-fallback) by the fallback scorers (BM25 in the "
                            "LLM's place); the LLM-free search may do better: fix the provider, or run with "
                            "--model none")
    assert KEY not in captured.err + captured.out
    assert captured.out.splitlines()[0] == warning
    [stop] = [x for x in captured.out.splitlines() if x.startswith("stop: ")]
    assert "; 0 LLM calls answered, 1 failed, " in stop and " not made (circuit open), " in stop
    assert " LLM calls in " not in stop and stop.endswith("; not saved")
    assert main(query(srv.base_url, "--allow-fallback", "--json")) == 0
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [warning]
    trace = json.loads(captured.out)
    refused = trace["stats"]["llm_failure"]["refused_calls"]
    assert trace["stats"]["llm_calls"] == 1 + refused and f"1 failed, {refused} not made" in stop
