"""A project folder cannot read the server's secrets (graphrag/project_env.py). Its settings.yaml's `${VAR}` in an
api_key resolves from the project's own .env, or from a server variable the operator allows (TOG_PROJECT_ENV_VARS,
default GRAPHRAG_API_KEY; the provider's usual key variable), never one named like TOG_*, PG*, AWS_*, *SECRET*,
*PASSWORD*; `${VAR}` in model or api_base never from the server's environment at all. Before the fix any variable
was resolved: `api_key: ${TOG_STORE}` sent the server's PostgreSQL URL, password and all, as the bearer key to the
project's api_base, and `model: ${AWS_SECRET_ACCESS_KEY}` wrote the value into the trace and `inspect`."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from builders import write_project
from faultkit import EDGES, QUESTION
from tog_core.cli.main import main
from tog_core.cli.query import run_query
from tog_core.compose import RunSpec
from tog_core.graphrag.project import open_project, read_dotenv
from tog_core.graphrag.project_env import ProjectEnv, server_may_supply
from tog_core.graphrag.settings import model_settings
from tog_core.llm.factory import choose_model
from tog_core.render.export import export_json

PG_URL = "postgresql://tog:PgPassw0rdXYZ@db.internal:5432/tog"
AWS = "AwsSecretQQ112233zz"
SECRETS = ("PgPassw0rdXYZ", "db.internal", AWS)


def _project(root: Path, model: str, *, api_base: str, api_key: str | None) -> Path:
    names = list(dict.fromkeys([s for s, _, _ in EDGES] + [t for _, t, _ in EDGES]))
    settings = (f"completion_models:\n  m:\n    model_provider: openai\n    model: {model}\n    api_base: {api_base}\n"
                + (f"    api_key: {api_key}\n" if api_key is not None else ""))
    return write_project(root, [(n, f"{n} is an entity") for n in names], EDGES, settings=settings)


def _clean(text: str, where: str) -> None:
    for secret in SECRETS:
        assert secret not in text, f"a server secret leaked into {where}"


@pytest.fixture()
def server_secrets(monkeypatch):
    monkeypatch.setenv("TOG_STORE", PG_URL)
    monkeypatch.setenv("PGPASSWORD", "PgPassw0rdXYZ")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", AWS)
    monkeypatch.setenv("MY_SERVICE_PASSWORD", "PgPassw0rdXYZ")
    monkeypatch.setenv("SOME_DB_URL", PG_URL)  # named like nothing in particular, and not allowed
    monkeypatch.delenv("TOG_PROJECT_ENV_VARS", raising=False)
    monkeypatch.delenv("GRAPHRAG_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


@pytest.mark.parametrize("var", ["TOG_STORE", "PGPASSWORD", "AWS_SECRET_ACCESS_KEY", "MY_SERVICE_PASSWORD",
                                 "SOME_DB_URL"])
def test_an_api_key_naming_a_server_variable_sends_nothing(var, server_secrets, tog_home, toy_server, tmp_path,
                                                           capfd):
    srv = toy_server
    root = _project(tmp_path / "evil", "toy", api_base=srv.base_url, api_key=f"${{{var}}}")
    trace = run_query(RunSpec(), project=str(root), question=QUESTION, seeds=["Acme"])
    assert not any(secret in (h or "") for h in srv.auth_headers for secret in SECRETS), \
        "the server's secret was sent as the key to the project's api_base"
    _clean(trace.to_json(), "the trace")
    info = open_project(root)
    assert info.chat_model is not None and not info.chat_model.key_present and info.chat_model.api_key_env is None
    said = [p for p in info.problems if f"${{{var}}}" in p]
    assert said and "settings.yaml: completion_models.m.api_key" in said[0] and ".env" in said[0]
    assert choose_model(None, info).kind == "none"  # the app's default: no key, so no LLM
    typed = choose_model("openai/toy", info)  # the project's model asked for by name: still not that variable
    assert typed.api_key is None and typed.api_key_env is None
    assert main(["inspect", str(root)]) == 0
    out = capfd.readouterr()
    assert f"${{{var}}}" in out.out
    _clean(out.out + out.err, "inspect")


def test_a_denied_name_stays_denied_even_when_the_operator_lists_it(server_secrets, monkeypatch, tmp_path):
    monkeypatch.setenv("TOG_PROJECT_ENV_VARS", "TOG_STORE, SOME_DB_URL")
    assert not server_may_supply("TOG_STORE", {"TOG_PROJECT_ENV_VARS": "TOG_STORE"})
    root = _project(tmp_path / "p", "toy", api_base="http://127.0.0.1:9/v1", api_key="${TOG_STORE}")
    cm = open_project(root).chat_model
    assert cm is not None and not cm.key_present and "never read" in cm.key_note
    listed = _project(tmp_path / "q", "toy", api_base="http://127.0.0.1:9/v1", api_key="${SOME_DB_URL}")
    assert open_project(listed).chat_model.api_key == PG_URL  # the operator's own choice, not a denied name


def test_graphrag_api_key_the_allowed_list_and_the_providers_own_variable():
    settings = {"completion_models": {"m": {"model_provider": "openai", "model": "toy", "api_key": "${K}"}}}

    def key(var: str, server: dict[str, str], own: dict[str, str] | None = None) -> str | None:
        raw = json.loads(json.dumps(settings).replace("${K}", f"${{{var}}}"))
        chat, _ = model_settings(raw, ProjectEnv(own=own or {}, server=server))
        return chat.api_key

    assert key("GRAPHRAG_API_KEY", {"GRAPHRAG_API_KEY": "sk-graphrag-1"}) == "sk-graphrag-1"  # the default
    assert key("OPENAI_API_KEY", {"OPENAI_API_KEY": "sk-openai-1"}) == "sk-openai-1"  # the provider's usual one
    assert key("ANTHROPIC_API_KEY", {"ANTHROPIC_API_KEY": "sk-ant-1"}) is None  # another provider's
    assert key("MY_KEY", {"MY_KEY": "sk-mine"}) is None
    assert key("MY_KEY", {"MY_KEY": "sk-mine", "TOG_PROJECT_ENV_VARS": "OTHER,MY_KEY"}) == "sk-mine"
    assert key("GRAPHRAG_API_KEY", {"GRAPHRAG_API_KEY": "sk-g", "TOG_PROJECT_ENV_VARS": ""}) is None  # none listed
    # the project's own .env may define any other name; an allowed server variable wins over it (GraphRAG's order)
    assert key("MY_KEY", {"MY_KEY": "server"}, {"MY_KEY": "own"}) == "own"
    # a name like the server's own is not read from the project's .env either (it may be the server's env file)
    assert key("TOG_ANYTHING", {"TOG_ANYTHING": "server"}, {"TOG_ANYTHING": "own"}) is None
    assert key("PGPASSWORD", {}, {"PGPASSWORD": "pg-from-dotenv"}) is None
    assert key("GRAPHRAG_API_KEY", {"GRAPHRAG_API_KEY": "server"}, {"GRAPHRAG_API_KEY": "own"}) == "server"
    # no api_key at all: the provider's usual variable, unless it is named like the server's own
    none = {"completion_models": {"m": {"model_provider": "openai", "model": "toy"}}}
    assert model_settings(none, ProjectEnv(server={"OPENAI_API_KEY": "sk-o"}))[0].api_key == "sk-o"
    tog = {"completion_models": {"m": {"model_provider": "tog_store", "model": "toy"}}}
    chat, _ = model_settings(tog, ProjectEnv(server={"TOG_STORE_API_KEY": "x" * 12}))
    assert chat.api_key is None and chat.api_key_env is None


@pytest.mark.parametrize(("field", "value"), [("model", "${AWS_SECRET_ACCESS_KEY}"),
                                              ("api_base", "http://127.0.0.1:9/v1/${TOG_STORE}"),
                                              ("api_base", "${SOME_DB_URL}")])
def test_model_and_api_base_never_read_the_servers_environment(field, value, server_secrets, tog_home, tmp_path,
                                                               capfd):
    model, base = ("toy", value) if field == "api_base" else (value, "http://127.0.0.1:9/v1")
    root = _project(tmp_path / "p", model, api_base=base, api_key="${GRAPHRAG_API_KEY}")
    info = open_project(root)
    assert info.chat_model is None  # the settings name an unresolved placeholder: said, and no model from them
    var = value.split("${", 1)[1].rstrip("}")
    said = info.settings_error or ""
    assert f"completion_models.m.{field}" in said and f"${{{var}}}" in said and "settings.yaml" in said
    assert "not defined in the project's .env" in said and "never read from the server's environment" in said
    if var == "SOME_DB_URL":
        assert f"define {var} in the project's .env" in said
    else:  # a name like the server's own: not even from the project's .env, so defining it there is no fix
        assert f"define {var}" not in said and "never read for a project, even from its .env" in said
    trace = run_query(RunSpec(), project=str(root), question=QUESTION, seeds=["Acme"])
    _clean(trace.to_json() + export_json(trace.to_dict()), "the trace")
    for args in (["inspect", str(root)], ["inspect", str(root), "--json"]):
        assert main(args) == 0
    out = capfd.readouterr()
    assert f"completion_models.m.{field}" in out.out
    _clean(out.out + out.err, "inspect")
    # the project's own .env may define it, unless it is named like the server's own settings and secrets
    (root / ".env").write_text(f"{var}=toy-from-dotenv\n")
    info = open_project(root)
    cm = info.chat_model
    if var == "SOME_DB_URL":
        assert cm is not None and "toy-from-dotenv" in (cm.api_base or "")
    else:
        assert cm is None and "never read for a project" in (info.settings_error or "")
        assert "toy-from-dotenv" not in (info.settings_error or "")


def test_dotenv_expansion_never_reads_the_servers_environment(server_secrets, tmp_path):
    env_file = tmp_path / ".env"
    env_file.write_text("A=one\nB=${A}-two\nLEAK=${TOG_STORE}\nDEFAULTED=${AWS_SECRET_ACCESS_KEY:-none}\n")
    assert read_dotenv(env_file) == {"A": "one", "B": "one-two", "LEAK": "", "DEFAULTED": "none"}
