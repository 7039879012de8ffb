"""A distinctive API key, given three ways (env var named in settings.yaml, the project's .env, a typed
key), is really sent to the provider and never appears in a trace, the run store, the LLM cache, an
export, `inspect`, an error text (even when the server echoes the key back), a log record or the console."""
from __future__ import annotations

import asyncio
import functools
import logging
import os
from pathlib import Path

import pytest

from builders import write_project
from faultkit import EDGES, QUESTION, Faults, Rule
from scripted import toy_llm
from tog_core.cli.main import main
from tog_core.cli.query import run_query
from tog_core.compose import RunSpec
from tog_core.tog.engine import ToGEngine
from tog_core.render.export import export_json
from tog_core.render.export_html import export_html
from tog_core.render.export_md import export_markdown
from tog_core.testing.server import FakeOpenAIServer, Reply
from tog_core.graphrag.graph import KnowledgeGraph
from tog_core.llm.client import LLMClient, LLMConfig, LLMError
from tog_core.llm import factory as models
from tog_core.llm.factory import choose_model
from tog_core.graphrag.project import open_project
from tog_core.runs.files import RunStore
from tog_core.tog.state import EngineConfig

SECRET = "sk-TESTSECRET-9f8e7d"
FRAGMENTS = (SECRET, "TESTSECRET-9f8e7d", "9f8e7d")  # not even a recognisable tail may leak
KEY_VAR = "GRAPHRAG_API_KEY"  # a server variable a project may name by default (graphrag/project_env.py)
LOGGERS = ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "litellm", "tog_core", "httpx", "openai", "aiohttp")


def settings_for(base_url: str) -> str:
    return ("completion_models:\n  default_completion_model:\n    model_provider: openai\n    model: toy\n"
            f"    api_base: {base_url}\n    api_key: ${{{KEY_VAR}}}\n")


def make_project(root: Path, base_url: str) -> Path:
    names = list(dict.fromkeys([s for s, _, _ in EDGES] + [t for _, t, _ in EDGES]))
    return write_project(root, [(n, f"{n} is an entity") for n in names], EDGES,
                         text_units={f"t{k}": f"Source: {d}." for k, (_, _, d) in enumerate(EDGES)},
                         edge_units={k: [f"t{k}"] for k in range(len(EDGES))}, settings=settings_for(base_url))


def assert_clean(text: str, where: str) -> None:
    for fragment in FRAGMENTS:
        assert fragment not in text, f"the key leaked into {where}"


def all_files_text(folder: Path) -> str:
    return "\n".join(p.read_bytes().decode("utf-8", "replace") for p in folder.rglob("*") if p.is_file())


@pytest.fixture()
def logs(caplog):
    caplog.set_level(logging.DEBUG)
    for name in LOGGERS:
        caplog.set_level(logging.DEBUG, logger=name)
    return caplog


@pytest.fixture()
def home(tog_home, monkeypatch):
    monkeypatch.delenv(KEY_VAR, raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    return tog_home


def check_everything(trace, home: Path, root: Path, logs, capfd, *, key_in_project: bool = True) -> None:
    """Every place a key could leak to after a run."""
    data = trace.to_dict()
    assert_clean(trace.to_json(), "the trace")
    assert_clean(export_json(data), "the JSON export")
    assert_clean(export_markdown(data), "the Markdown export")
    assert_clean(export_html(data), "the HTML export")
    assert any(home.glob("runs/*.json")), "the run store is empty"
    assert_clean(all_files_text(home), "the run store or the LLM cache")
    assert RunStore(home / "runs").load(trace.run_id).answer == trace.answer
    for args in (["inspect", str(root), "--json"], ["inspect", str(root)]):
        assert main(args) == 0
    captured = capfd.readouterr()
    assert ("set (hidden)" in captured.out) == key_in_project  # inspect saw the project's key, and hid it
    assert_clean(captured.out + captured.err, "stdout/stderr")
    assert any(r.name.startswith("LiteLLM") and r.levelno == logging.DEBUG for r in logs.records)  # really captured
    assert_clean("\n".join(f"{r.name} {r.getMessage()} {r.args!r}" for r in logs.records), "the log records")
    assert_clean(logs.text, "the formatted log")


def test_secret_from_the_env_var_named_in_settings(home, toy_server, tmp_path, monkeypatch, logs, capfd):
    srv = toy_server
    root = make_project(tmp_path / "proj", srv.base_url)
    monkeypatch.setenv(KEY_VAR, SECRET)
    trace = run_query(RunSpec(), project=str(root), question=QUESTION, seeds=["Acme"])
    assert srv.auth_headers and set(srv.auth_headers) == {f"Bearer {SECRET}"}  # the key really was used
    assert trace.answer_by == "llm" and trace.config["model"] == "openai/toy"
    assert trace.config.get("api_key_env") == KEY_VAR  # the variable's *name* may be recorded
    check_everything(trace, home, root, logs, capfd)


def test_secret_from_the_project_dotenv(home, toy_server, tmp_path, logs, capfd):
    srv = toy_server
    root = make_project(tmp_path / "proj", srv.base_url)
    (root / ".env").write_text(f"# the project's secrets\n{KEY_VAR}={SECRET}\n")
    assert KEY_VAR not in os.environ
    trace = run_query(RunSpec(), project=str(root), question=QUESTION, seeds=["Acme"])
    assert set(srv.auth_headers) == {f"Bearer {SECRET}"}
    assert trace.answer_by == "llm"
    check_everything(trace, home, root, logs, capfd)


def test_secret_typed_in(home, tmp_path, logs, capfd):
    with FakeOpenAIServer(toy_llm) as srv:
        root = make_project(tmp_path / "proj", srv.base_url)
        info = open_project(root)
        choice = choose_model("openai/toy", info, api_base=srv.base_url, api_key=SECRET)
        assert SECRET not in repr(choice) and SECRET not in str(choice.public_dict())
        cfg = LLMConfig(model=choice.model, api_base=choice.api_base, api_key=SECRET, cache_dir=home / "cache",
                        timeout_s=10, max_retries=0)
        assert SECRET not in repr(cfg) and SECRET not in str(cfg.public_dict())
        llm = LLMClient(cfg)
        assert SECRET not in repr(llm)
        eng = ToGEngine(KnowledgeGraph.load(info), llm=llm, config=EngineConfig(width=2, depth=3, model=cfg.model),
                        project=str(root))
        st = asyncio.run(eng.run(QUESTION, seeds=["Acme"]))
        trace = eng.trace(st, run_id="typed-key", model_info={**choice.public_dict(), "api_key": SECRET})
        RunStore(home / "runs").save(trace)
        assert set(srv.auth_headers) == {f"Bearer {SECRET}"}
    assert trace.answer_by == "llm" and "api_key" not in trace.config
    check_everything(trace, home, root, logs, capfd, key_in_project=False)


@pytest.mark.parametrize("status", [401, 500])
def test_secret_echoed_by_the_server_never_reaches_an_error_text(status, home, tmp_path, monkeypatch, logs, capfd):
    echo = Reply(status=status, text=f"Incorrect API key provided: {SECRET}. Authorization: Bearer {SECRET}")
    with FakeOpenAIServer(Faults([Rule("*", echo)])) as srv:
        root = make_project(tmp_path / "proj", srv.base_url)
        monkeypatch.setenv(KEY_VAR, SECRET)
        llm = LLMClient(LLMConfig(model="openai/toy", api_base=srv.base_url, api_key_env=KEY_VAR, timeout_s=5,
                                  max_retries=1, backoff_base_s=0.01, backoff_max_s=0.02))
        with pytest.raises(LLMError) as caught:
            asyncio.run(llm.complete([{"role": "user", "content": "hi"}], temperature=0))
        err = caught.value
        assert err.kind == ("auth" if status == 401 else "server") and err.status == status
        assert_clean(str(err), "the LLMError message")
        assert_clean(repr(err.args), "the LLMError args")
        assert "Incorrect API key provided" in str(err)  # the rest of the server's message survives
        # a whole run where every call fails this way (no retries: the direct call above covered them)
        monkeypatch.setattr(models, "build_llm", functools.partial(models.build_llm, max_retries=0))
        trace = run_query(RunSpec(), project=str(root), question=QUESTION, seeds=["Acme"])
        assert srv.auth_headers and set(srv.auth_headers) == {f"Bearer {SECRET}"}
    details = [f["detail"] for s in trace.steps for f in s.fallbacks] + \
              [f["detail"] for f in trace.stats.get("other_fallbacks", [])]
    assert details  # every failed call is recorded by name, with its (scrubbed) detail
    assert trace.error and trace.answer_by == "chains"
    assert_clean(trace.error, "the trace's error")
    check_everything(trace, home, root, logs, capfd)


URL_SECRETS = ("ProxyPassw0rd", "QuerySecret123")


@pytest.mark.parametrize("status", [404, 500])
def test_credentials_in_the_api_base_never_reach_a_trace_export_error_or_inspect(status, home, tmp_path, monkeypatch,
                                                                                  logs, capfd):
    """An API base holding a password (user:password@) and a key in its query string, from the project's
    settings.yaml: the trace records the base without them, and neither reaches an error, a fallback, the run store,
    an export, `inspect` or a log, whether the provider answers 404 (the hint names the base) or fails."""
    with FakeOpenAIServer(Faults([Rule("*", Reply(status=status, text="no such thing"))])) as srv:
        host = srv.base_url.split("://", 1)[1]
        base = f"http://proxyuser:{URL_SECRETS[0]}@{host}?api-key={URL_SECRETS[1]}&v=2"
        root = make_project(tmp_path / "proj", base)
        monkeypatch.setenv(KEY_VAR, SECRET)
        monkeypatch.setattr(models, "build_llm", functools.partial(models.build_llm, max_retries=0))
        trace = run_query(RunSpec(), project=str(root), question=QUESTION, seeds=["Acme"])
    assert trace.error and trace.answer_by == "chains"  # the provider really failed, and the run said so
    assert trace.config["api_base"] == f"http://{host}"  # the base is still named, without its secrets
    data = trace.to_dict()
    texts = {"the trace": trace.to_json(), "the JSON export": export_json(data),
             "the Markdown export": export_markdown(data), "the HTML export": export_html(data),
             "the run store": all_files_text(home)}
    for args in (["inspect", str(root), "--json"], ["inspect", str(root)]):
        assert main(args) == 0
    out = capfd.readouterr()
    texts["inspect"] = out.out + out.err
    assert f"http://{host}" in texts["inspect"]
    texts["the logs"] = "\n".join(f"{r.name} {r.getMessage()} {r.args!r}" for r in logs.records) + logs.text
    for where, text in texts.items():
        for secret in URL_SECRETS:
            assert secret not in text, f"the API base's {secret} leaked into {where}"


def test_an_error_quoting_a_url_loses_its_password_and_query_values():
    from tog_core.errors import public_url
    from tog_core.llm.errors import _scrub, url_secrets

    url = "https://user:PWSECRET@host.example/v1?api-key=QSECRET99&x=abcdefg"
    assert public_url(url) == "https://host.example/v1" and public_url(None) is None
    assert url_secrets(url) == ["PWSECRET", "QSECRET99", "abcdefg"]
    said = _scrub(f"could not connect to {url}; retrying http://a:b@10.0.0.1/v1", [])
    assert said == "could not connect to https://***@host.example/v1?api-key=***&x=***; retrying http://***@10.0.0.1/v1"
    assert _scrub("2+2=4 at https://host/v1 (no query)", []) == "2+2=4 at https://host/v1 (no query)"
    llm = LLMClient(LLMConfig(model="openai/x", api_base=url, timeout_s=1, max_retries=0))
    with pytest.raises(LLMError) as caught:
        llm._fail("model", f"404 from {url} for user PWSECRET", status=404)
    assert "https://host.example/v1 has no such model or path" in str(caught.value)
    assert not {"PWSECRET", "QSECRET99", "abcdefg"} & set(str(caught.value).replace(";", " ").split()) \
        and "PWSECRET" not in str(caught.value) and "QSECRET99" not in str(caught.value)
