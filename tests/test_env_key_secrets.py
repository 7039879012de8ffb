"""A key LiteLLM reads from the environment itself (no api_key_env: the provider's usual variable, OPENAI_API_KEY
for an openai/ model) is scrubbed like any other: a server that quotes it back in an error never puts it into an
LLMError, a trace's error or fallback details, a saved run, a log record or the console. Before the fix the client
scrubbed only the typed key and the api_key_env's, and key-shaped text (sk-…, bearer, api_key=), so a key of
another shape went through."""
from __future__ import annotations

import asyncio
import functools
import logging

import pytest

from builders import write_project
from faultkit import EDGES, QUESTION
from tog_core.cli.query import run_query
from tog_core.compose import RunSpec
from tog_core.llm import factory as models
from tog_core.llm.client import LLMClient, LLMConfig, LLMError
from tog_core.llm.errors import _scrub, looks_secret
from tog_core.testing.server import FakeOpenAIServer, Reply

PLAIN = "PlainKeyZZ998877qq"  # shaped like no known key
TOKEN = "TokenValueQQ55443322"  # an unrelated credential-named variable of the server, quoted back
LOGGERS = ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "litellm", "tog_core", "httpx", "openai", "aiohttp")


def _echo(status: int):
    return lambda _req: Reply(status=status, text=f'{{"error": {{"message": "Incorrect API key provided: {PLAIN}; '
                                                  f'token {TOKEN}"}}}}')


@pytest.fixture()
def env_key(tog_home, monkeypatch, caplog):
    monkeypatch.setenv("OPENAI_API_KEY", PLAIN)
    monkeypatch.setenv("SOME_SERVICE_TOKEN", TOKEN)
    caplog.set_level(logging.DEBUG)
    for name in LOGGERS:
        caplog.set_level(logging.DEBUG, logger=name)
    return tog_home


def _assert_clean(text: str, where: str) -> None:
    for secret in (PLAIN, TOKEN, "ZZ998877qq", "55443322"):
        assert secret not in text, f"an environment key leaked into {where}"


@pytest.mark.parametrize("status", [400, 401, 500])
def test_a_key_litellm_read_from_the_environment_never_reaches_an_error(status, env_key):
    with FakeOpenAIServer(_echo(status)) as srv:
        llm = LLMClient(LLMConfig(model="openai/toy", api_base=srv.base_url, max_retries=0, timeout_s=5))
        assert llm.config.api_key_env is None and llm.config.api_key is None
        with pytest.raises(LLMError) as caught:
            asyncio.run(llm.complete([{"role": "user", "content": "hi"}], temperature=0))
        assert srv.auth_headers == [f"Bearer {PLAIN}"]  # LiteLLM really sent the environment's key
    _assert_clean(str(caught.value), "the LLMError")
    _assert_clean(repr(caught.value.args), "the LLMError's args")
    assert "Incorrect API key provided: ***" in str(caught.value)  # the rest of the server's message survives


def test_a_whole_run_keeps_the_environments_key_out_of_the_trace_the_run_store_and_the_logs(env_key, tmp_path,
                                                                                          monkeypatch, caplog, capfd):
    names = list(dict.fromkeys([s for s, _, _ in EDGES] + [t for _, t, _ in EDGES]))
    root = write_project(tmp_path / "proj", [(n, f"{n} is an entity") for n in names], EDGES)
    monkeypatch.setattr(models, "build_llm", functools.partial(models.build_llm, max_retries=0))
    with FakeOpenAIServer(_echo(400)) as srv:
        monkeypatch.setenv("OPENAI_API_BASE", srv.base_url)  # LiteLLM's own variable: no api_base, no key given
        trace = run_query(RunSpec(model="openai/toy"), project=str(root), question=QUESTION, seeds=["Acme"])
        assert srv.auth_headers and set(srv.auth_headers) == {f"Bearer {PLAIN}"}
    assert trace.config.get("api_key_env") is None  # no variable named: LiteLLM read OPENAI_API_KEY itself
    details = [f["detail"] for s in trace.steps for f in s.fallbacks] + \
              [f["detail"] for f in trace.stats.get("other_fallbacks", [])]
    assert details and trace.error  # the failures are recorded, scrubbed
    assert any("Incorrect API key provided: ***" in d for d in details + [trace.error])
    _assert_clean(trace.error, "the trace's error")
    _assert_clean("\n".join(details), "the fallback details")
    _assert_clean(trace.to_json(), "the trace")
    runs = list((env_key / "runs").glob("*.json"))
    assert runs, "the run was not saved"
    _assert_clean("\n".join(p.read_text(encoding="utf-8") for p in runs), "the saved run")
    assert any(r.name.startswith("LiteLLM") for r in caplog.records)  # LiteLLM's records really were captured
    _assert_clean("\n".join(f"{r.name} {r.getMessage()} {r.args!r}" for r in caplog.records), "the log records")
    _assert_clean(caplog.text, "the formatted log")
    out = capfd.readouterr()
    _assert_clean(out.out + out.err, "stdout/stderr")


def test_provider_variables_and_credential_named_ones():
    from tog_core.llm.errors import env_secrets, provider_env_keys

    assert provider_env_keys("openai/gpt-4o") == ("OPENAI_API_KEY",) and provider_env_keys("gpt-4o") == (
        "OPENAI_API_KEY",)
    assert {"AZURE_API_KEY", "AZURE_OPENAI_API_KEY"} <= set(provider_env_keys("azure/dep"))
    assert provider_env_keys("anthropic/claude-3-5-haiku") == ("ANTHROPIC_API_KEY",)
    assert "GROQ_API_KEY" in provider_env_keys("groq/llama3")
    env = {"OPENAI_API_KEY": "EMPTY", "ANTHROPIC_API_KEY": "short", "HF_TOKEN": "hf-value-123456",
           "MY_DB_PASSWORD": "pw-1234567", "AZURE_AD_TOKEN": "tok", "PATH": "/usr/bin:/bin", "HOME": "/root/x/y"}
    got = env_secrets("openai/x", env)
    assert "EMPTY" in got  # the provider's own variable, however short (4+)
    assert {"hf-value-123456", "pw-1234567"} <= set(got)  # credential-named, 8+ characters
    assert not {"short", "tok", "/usr/bin:/bin", "/root/x/y"} & set(got)


@pytest.mark.parametrize("key", ["gsk_abcDEF1234567890xyz", "AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStU",
                                 "sk-ant-api03-abcdefGHIJ", "xai-abcdEFGH12345678", "hf_abcdEFGH12345678"])
def test_common_key_shapes_are_scrubbed_without_being_known(key):
    said = _scrub(f"provider said: invalid key {key} (check it)", [])
    assert key not in said and key[-8:] not in said and said.startswith("provider said: invalid key ***")
    assert looks_secret(key)


def test_an_embedder_error_loses_the_environments_key(monkeypatch):
    from types import SimpleNamespace

    from tog_core.llm import embed_remote
    from tog_core.llm.embed_common import EmbeddingUnavailable

    def embedding(**_kwargs):
        raise RuntimeError(f"Incorrect API key provided: {PLAIN}")

    monkeypatch.setenv("OPENAI_API_KEY", PLAIN)
    monkeypatch.setattr(embed_remote, "load_litellm", lambda: SimpleNamespace(embedding=embedding))
    emb = embed_remote.LiteLLMEmbedder("openai/text-embedding-3-small", api_base="http://127.0.0.1:9/v1", dim=8)
    with pytest.raises(EmbeddingUnavailable) as caught:
        emb.embed(["a text"], kind="query")
    assert "Incorrect API key provided: ***" in str(caught.value)
    _assert_clean(str(caught.value), "the embedder's error")
