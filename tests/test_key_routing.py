"""Where the server's keys may go (issue #23, item 1). A key the server holds (the environment's, or the project's
settings/.env) is sent only to the provider's own endpoint, the project's configured API base, or a base the
operator allows (TOG_ALLOWED_API_BASES). A base a user types in the app goes with that user's typed key or none:
LiteLLM must not fall back to OPENAI_API_KEY either. The CLI's --api-base is the operator's own and is trusted.
"""
from __future__ import annotations

import asyncio

import pytest

from builders import write_project
from scripted import toy_llm
from tog_core.graphrag.project import open_project
from tog_core.llm.client import NO_KEY
from tog_core.llm.factory import (
    WITHHELD,
    build_llm,
    choose_model,
    normalise_base,
    server_key_may_go,
)
from tog_core.testing.server import FakeOpenAIServer

CANARY = "sk-CANARY-server-key-5a4b3c"
KEY_VAR = "GRAPHRAG_API_KEY"  # a server variable a project may name by default (graphrag/project_env.py)
PROJECT_BASE = "https://llm.example.test/v1"


def _project(tmp_path, base: str | None = PROJECT_BASE):
    settings = ("completion_models:\n  default_completion_model:\n    model_provider: openai\n    model: toy\n"
                + (f"    api_base: {base}\n" if base else "") + f"    api_key: ${{{KEY_VAR}}}\n")
    root = write_project(tmp_path / "proj", [("Acme", "a company"), ("Bo", "a person")],
                         [("Acme", "Bo", "Acme was founded by Bo")], settings=settings)
    return open_project(root, environ={})  # the key is read when the model is chosen, from the test's environment


@pytest.mark.parametrize(("a", "b"), [
    ("http://127.0.0.1:8996/v1", "http://127.0.0.1:8996/v1/"),
    ("HTTPS://LLM.Example.test/v1", "https://llm.example.test:443/v1"),
    ("http://[::1]:80/v1", "http://[::1]/v1"),
])
def test_bases_compare_as_a_person_means_them(a, b):
    assert normalise_base(a) == normalise_base(b)


def test_different_ports_paths_and_hosts_are_different_bases():
    assert normalise_base("http://127.0.0.1:8996/v1") != normalise_base("http://127.0.0.1:8997/v1")
    assert normalise_base("https://llm.example.test/v1") != normalise_base("https://llm.example.test.evil/v1")
    assert normalise_base("https://llm.example.test/v1") != normalise_base("https://llm.example.test/v1/x")


def test_server_keys_go_only_to_the_provider_the_project_or_the_allowed_list():
    env = {"TOG_ALLOWED_API_BASES": "http://proxy.internal:4000/, https://gw.example.test/v1"}
    assert server_key_may_go(None, None, env)  # the provider's own endpoint
    assert server_key_may_go(PROJECT_BASE + "/", PROJECT_BASE, env)
    assert server_key_may_go("http://proxy.internal:4000", None, env)
    assert server_key_may_go("https://GW.example.test/v1", None, env)
    assert not server_key_may_go("http://127.0.0.1:8996/v1", PROJECT_BASE, env)
    assert not server_key_may_go("http://proxy.internal:4001", None, env)
    assert not server_key_may_go("http://127.0.0.1:8996/v1", None, {})


def test_the_projects_model_pointed_at_a_typed_base_gets_no_server_key(tmp_path):
    info = _project(tmp_path)
    env = {KEY_VAR: CANARY}
    own = choose_model(None, info, environ=env)
    assert own.kind == "litellm" and own.api_key == CANARY and own.api_base == PROJECT_BASE
    moved = choose_model(None, info, api_base="http://127.0.0.1:8996/v1", environ=env)
    assert moved.kind == "litellm" and moved.key_source == WITHHELD
    assert moved.api_key is None and moved.api_key_env is None and not moved.send_env_key
    assert "no key sent to this API base" in moved.note and f"${KEY_VAR}" in moved.note
    assert CANARY not in moved.note and CANARY not in str(moved.public_dict())
    # the same base written differently is still the project's own
    same = choose_model(None, info, api_base=PROJECT_BASE + "/", environ=env)
    assert same.api_key == CANARY and same.key_source == "project"
    # the operator may allow a base
    allowed = choose_model(None, info, api_base="http://127.0.0.1:8996/v1",
                           environ={**env, "TOG_ALLOWED_API_BASES": "http://127.0.0.1:8996/v1"})
    assert allowed.api_key == CANARY
    # a key the person typed goes where the person points
    typed = choose_model(None, info, api_base="http://127.0.0.1:8996/v1", api_key="sk-typed-by-me", environ=env)
    assert typed.api_key == "sk-typed-by-me" and typed.key_source == "typed"


def test_a_typed_model_with_a_typed_base_never_reads_the_environment(tmp_path):
    choice = choose_model("openai/gpt-4.1-mini", None, api_base="http://127.0.0.1:8996/v1", environ={})
    assert choice.key_source == WITHHELD and not choice.send_env_key
    # the provider's own endpoint: LiteLLM's usual variable is fine (the operator's provider)
    default = choose_model("openai/gpt-4.1-mini", None, environ={})
    assert default.key_source == "environment" and default.send_env_key
    # the CLI's --api-base is the operator's own
    cli = choose_model("openai/gpt-4.1-mini", None, api_base="http://127.0.0.1:8996/v1", environ={},
                       trust_api_base=True)
    assert cli.send_env_key


def test_over_real_http_the_listener_never_sees_the_server_key(tmp_path, monkeypatch):
    """Before the fix LiteLLM sent OPENAI_API_KEY (and the project's key) to any base typed in the app."""
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    monkeypatch.setenv(KEY_VAR, CANARY)
    info = _project(tmp_path)
    with FakeOpenAIServer(toy_llm) as srv:
        for model in ("openai/toy", None):  # a typed model; the project's model
            choice = choose_model(model, info, api_base=srv.base_url)
            llm, _ = build_llm(choice, cache_dir=tmp_path / "cache", max_retries=0, timeout_s=10)
            asyncio.run(llm.complete([{"role": "user", "content": f"hello {model}"}], temperature=0))
        assert srv.auth_headers == [f"Bearer {NO_KEY}"] * 2
        # with a key typed in the session, that key goes (and only that one)
        typed = choose_model(None, info, api_base=srv.base_url, api_key="sk-typed-by-me")
        llm, _ = build_llm(typed, cache_dir=tmp_path / "cache2", max_retries=0, timeout_s=10)
        asyncio.run(llm.complete([{"role": "user", "content": "typed"}], temperature=0))
        assert srv.auth_headers[-1] == "Bearer sk-typed-by-me"
    assert all(CANARY not in (h or "") for h in srv.auth_headers)


def test_a_rejected_call_to_a_typed_base_says_no_key_was_sent(tmp_path, monkeypatch):
    from tog_core.llm.client import LLMError
    from tog_core.testing.server import Reply

    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    with FakeOpenAIServer(lambda _r: Reply(status=401, text="missing key")) as srv:
        llm, _ = build_llm(choose_model("openai/toy", None, api_base=srv.base_url), cache_dir=tmp_path / "c",
                           max_retries=0, timeout_s=10)
        with pytest.raises(LLMError) as caught:
            asyncio.run(llm.complete([{"role": "user", "content": "hi"}], temperature=0))
    assert caught.value.kind == "auth"
    assert "no key was sent to this API base" in str(caught.value) and CANARY not in str(caught.value)
