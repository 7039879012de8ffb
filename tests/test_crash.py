"""Crash-safe runs: `python -m tog_core query` killed with SIGKILL mid-run leaves a valid run file with
every finished step; `--resume RUN_ID` finishes it exactly like an uninterrupted run, without asking the
LLM again for finished steps; a reader polling the run file never sees half-written JSON."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from builders import write_project
from faultkit import EDGES, QUESTION, Faults, stage_of
from tog_core.cli.main import main
from tog_core.cli.query import run_query
from tog_core.compose import RunSpec
from tog_core.testing.server import FakeOpenAIServer
from tog_core.tog.trace import Trace

ROOT = Path(__file__).resolve().parents[1]
ARGS = ["--model", "openai/toy", "--seed", "Acme", "--width", "2", "--depth", "3"]
LATENCY_S = 0.3  # per request: the search takes a few seconds, so the kill lands mid-run


def make_project(root: Path) -> Path:
    names = list(dict.fromkeys([s for s, _, _ in EDGES] + [t for _, t, _ in EDGES]))
    return write_project(root, [(n, f"{n} is an entity") for n in names], EDGES,
                         text_units={f"t{k}": f"Source: {d}." for k, (_, _, d) in enumerate(EDGES)},
                         edge_units={k: [f"t{k}"] for k in range(len(EDGES))})


def env_for(home: Path) -> dict[str, str]:
    return {**os.environ, "TOG_HOME": str(home), "OPENAI_API_KEY": "sk-test-not-a-real-key",
            "LITELLM_LOCAL_MODEL_COST_MAP": "True"}


def prompt_key(request: dict) -> str:
    return json.dumps(request.get("messages"), sort_keys=True)


def outcome(trace: Trace | dict) -> tuple:
    d = trace if isinstance(trace, dict) else trace.to_dict()
    chains = [[(link["source"], link["relation"], link["target"]) for link in chain] for chain in d["chains"]]
    return chains, d["answer"], d["stop_reason"]


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    """The same query run start to end (in-process, no latency): what the resumed run must equal."""
    tmp = tmp_path_factory.mktemp("whole")
    project = make_project(tmp / "proj")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TOG_HOME", str(tmp / "home"))
        mp.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
        with FakeOpenAIServer(Faults()) as srv:
            trace = run_query(RunSpec(model="openai/toy", api_base=srv.base_url, trust_api_base=True, width=2,
                                      depth=3), project=str(project), question=QUESTION, seeds=["Acme"])
    assert trace.stop_reason == "sufficient" and len(trace.steps) >= 4 and "Paris" in trace.answer
    return trace


def test_crash_kill_9_then_resume_equals_an_uninterrupted_run(tmp_path, uninterrupted):
    project = make_project(tmp_path / "proj")
    home = tmp_path / "home"
    runs = home / "runs"
    faults = Faults()
    with FakeOpenAIServer(faults, latency_s=LATENCY_S) as srv:
        cmd = [sys.executable, "-m", "tog_core", "query", str(project), QUESTION, *ARGS, "--api-base", srv.base_url,
               "--json"]
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env_for(home), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        saved, reads, deadline = None, 0, time.monotonic() + 90
        try:
            while time.monotonic() < deadline and proc.poll() is None:
                for path in runs.glob("*.json"):
                    data = json.loads(path.read_text(encoding="utf-8"))  # never half-written (another process)
                    reads += 1
                    if len(data["steps"]) >= 2:
                        saved = path
                if saved is not None:
                    os.kill(proc.pid, signal.SIGKILL)
                    break
                time.sleep(0.02)
        finally:
            if proc.poll() is None and saved is None:
                proc.kill()
            proc.wait(timeout=30)
            proc.stdout.close()
            proc.stderr.close()
        assert saved is not None, "the run store never held two steps"
        assert proc.returncode == -signal.SIGKILL

        # the file left behind: valid JSON, every finished step whole, not finished
        data = json.loads(saved.read_text(encoding="utf-8"))
        crashed = Trace.from_dict(data)
        assert 2 <= len(crashed.steps) < len(uninterrupted.steps) and not crashed.answer
        for step, whole in zip(crashed.steps, uninterrupted.steps):
            assert (step.depth, step.stage) == (whole.depth, whole.stage)
            assert [c.id for c in step.candidates] == [c.id for c in whole.candidates]
            assert [c.kept for c in step.candidates] == [c.kept for c in whole.candidates]
        before = srv.requests
        sent_before = {prompt_key(r) for r in before}
        in_flight_stage = crashed.state["stage"]

        # resume through the CLI
        resume = subprocess.run([sys.executable, "-m", "tog_core", "query", str(project), QUESTION, *ARGS,
                                 "--api-base", srv.base_url, "--resume", crashed.run_id, "--json"],
                                cwd=ROOT, env=env_for(home), capture_output=True, text=True, timeout=120)
        assert resume.returncode == 0, resume.stderr
        after = srv.requests[len(before):]

    resumed = json.loads(resume.stdout)
    assert resumed["run_id"] == crashed.run_id
    assert outcome(resumed) == outcome(uninterrupted)
    assert [(s["depth"], s["stage"]) for s in resumed["steps"]] == [(s.depth, s.stage) for s in uninterrupted.steps]
    assert outcome(json.loads(saved.read_text(encoding="utf-8"))) == outcome(uninterrupted)  # the store too
    # no repeated calls for finished steps: a prompt sent again can only be one the killed process was
    # still waiting for (the stage in flight), never one of a finished step
    repeated = [r for r in after if prompt_key(r) in sent_before]
    expected_kind = {"relations": "scores", "entities": "scores", "evaluate": "evaluate"}[in_flight_stage]
    assert all(stage_of(r) == expected_kind for r in repeated), [stage_of(r) for r in repeated]
    assert len(repeated) <= 2  # at most the width's worth of calls were in flight
    assert len(before) + len(after) - len(repeated) == uninterrupted.stats["llm_calls"]


def test_crash_resume_of_unknown_run_is_a_clear_error(tmp_path, tog_home, capsys):
    project = make_project(tmp_path / "proj")
    code = main(["query", str(project), QUESTION, "--model", "none", "--resume", "no-such-run"])
    err = capsys.readouterr().err
    assert code != 0 and "no-such-run" in err and err.count("\n") == 1 and "Traceback" not in err


def test_crash_concurrent_reader_never_sees_invalid_json(tmp_path, tog_home, monkeypatch):
    project = make_project(tmp_path / "proj")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    runs = tog_home / "runs"
    stop = threading.Event()
    seen = {"reads": 0, "bad": [], "steps": set()}

    def reader() -> None:
        while not stop.is_set():
            for path in runs.glob("*.json"):
                try:
                    text = path.read_text(encoding="utf-8")
                except FileNotFoundError:
                    continue
                try:
                    seen["steps"].add(len(json.loads(text)["steps"]))
                    seen["reads"] += 1
                except (json.JSONDecodeError, KeyError) as err:
                    seen["bad"].append(repr(err))

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    try:
        with FakeOpenAIServer(Faults(), latency_s=0.05) as srv:
            trace = run_query(RunSpec(model="openai/toy", api_base=srv.base_url, trust_api_base=True, width=2,
                                      depth=3), project=str(project), question=QUESTION, seeds=["Acme"])
    finally:
        stop.set()
        thread.join(timeout=10)
    assert not seen["bad"], seen["bad"][:3]
    assert seen["reads"] > 10 and len(seen["steps"]) >= 3  # it really watched the file grow step by step
    assert json.loads((runs / f"{trace.run_id}.json").read_text())["answer"] == trace.answer
