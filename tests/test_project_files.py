"""What a project folder may make the server read (graphrag/project_env.py, settings.py, project.py, tables.py).

- The server's key variable of a provider is read for a project only for the providers GraphRAG supports (openai,
  azure) or a name the operator lists in TOG_PROJECT_ENV_VARS. Before the fix the variable's name was made from the
  project's own `model_provider` text, so `model_provider: github` with the project's own api_base received the
  server's GITHUB_API_KEY (any of LiteLLM's ~180 providers: CLOUDFLARE_API_KEY, DATABRICKS_API_KEY, …).
- A project's `.env` or settings file that is a link leading out of the project folder is not read (before: the
  server's own env file was read through it, and `${PGPASSWORD}` resolved from it); a name like PG*, TOG_*,
  *SECRET* is never resolved, even when the project's .env defines it.
- With TOG_PROJECT_ROOTS set, every file read (output folder, tables, settings, .env) must lie in those folders
  with links followed (before: only the project folder itself was checked).
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from builders import write_project
from faultkit import EDGES, QUESTION
from tog_core.app.inputs import check_project_root, project_roots
from tog_core.cli.query import run_query
from tog_core.compose import RunSpec
from tog_core.graphrag.errors import ProjectError
from tog_core.graphrag.project import open_project
from tog_core.graphrag.project_env import server_may_supply
from tog_core.graphrag.tables import read_tables
from tog_core.llm.factory import choose_model

CANARY = "ghp_SERVER_CANARY_0123456789"
PG_CANARY = "pg-CANARY-secret-42"


def _project(root: Path, settings: str, dotenv: str | None = None) -> Path:
    names = list(dict.fromkeys([s for s, _, _ in EDGES] + [t for _, t, _ in EDGES]))
    write_project(root, [(n, f"{n} is an entity") for n in names], EDGES, settings=settings)
    if dotenv is not None:
        (root / ".env").write_text(dotenv)
    return root


def _settings(provider: str, base: str, api_key: str | None = None) -> str:
    return (f"completion_models:\n  m:\n    model_provider: {provider}\n    model: toy\n    api_base: {base}\n"
            + (f"    api_key: {api_key}\n" if api_key else ""))


@pytest.fixture()
def clean_env(monkeypatch):
    for name in ("TOG_PROJECT_ENV_VARS", "TOG_PROJECT_ROOTS", "GRAPHRAG_API_KEY", "OPENAI_API_KEY",
                 "AZURE_API_KEY", "AZURE_OPENAI_API_KEY", "TOG_ALLOWED_API_BASES"):
        monkeypatch.delenv(name, raising=False)
    for name in ("GITHUB_API_KEY", "CLOUDFLARE_API_KEY", "DATABRICKS_API_KEY", "WANDB_API_KEY"):
        monkeypatch.setenv(name, CANARY)


# ------------------------------------------------------------------------------------- 1. a provider's usual key

@pytest.mark.parametrize("provider", ["github", "cloudflare", "databricks", "wandb"])
@pytest.mark.parametrize("api_key", [None, "${PROVIDER_VAR}"])
def test_a_project_cannot_name_a_provider_to_read_its_key(provider, api_key, clean_env, tmp_path):
    var = f"{provider.upper()}_API_KEY"
    key = api_key.replace("PROVIDER_VAR", var) if api_key else None
    root = _project(tmp_path / "p", _settings(provider, "http://127.0.0.1:9/v1", key))
    info = open_project(root)
    cm = info.chat_model
    assert cm is not None and cm.api_key is None and cm.api_key_env is None
    assert not server_may_supply(var, os.environ, provider=provider)
    said = [p for p in info.problems if var in p]
    assert said and f"TOG_PROJECT_ENV_VARS=GRAPHRAG_API_KEY,{var}" in said[0] and ".env" in said[0]
    assert CANARY not in " ".join(info.problems)
    assert choose_model(None, info).kind == "none"  # the app's default: no key, no LLM


def test_the_servers_provider_key_does_not_reach_the_projects_api_base(clean_env, tog_home, toy_server, tmp_path):
    root = _project(tmp_path / "p", _settings("github", toy_server.base_url))
    run_query(RunSpec(), project=str(root), question=QUESTION, seeds=["Acme"])
    assert not any(CANARY in (h or "") for h in toy_server.auth_headers)


def test_openai_azure_graphrag_api_key_and_the_operators_list_still_work(clean_env, monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-1234567")
    monkeypatch.setenv("AZURE_API_KEY", "azure-key-1234567")
    monkeypatch.setenv("GRAPHRAG_API_KEY", "sk-graphrag-1234567")
    cases = {"openai": (None, "sk-openai-1234567"), "azure": (None, "azure-key-1234567"),
             "github": ("${GRAPHRAG_API_KEY}", "sk-graphrag-1234567")}
    for provider, (api_key, expected) in cases.items():
        cm = open_project(_project(tmp_path / provider, _settings(provider, "http://127.0.0.1:9/v1", api_key))
                          ).chat_model
        assert cm is not None and cm.api_key == expected, provider
    # the project's own .env may still give the provider's key (not the server's)
    cm = open_project(_project(tmp_path / "own", _settings("github", "http://127.0.0.1:9/v1"),
                               "GITHUB_API_KEY=ghp-own-0123456\n")).chat_model
    assert cm is not None and cm.api_key == "ghp-own-0123456"
    monkeypatch.setenv("TOG_PROJECT_ENV_VARS", "GRAPHRAG_API_KEY,GITHUB_API_KEY")  # the operator allows it
    cm = open_project(_project(tmp_path / "gh", _settings("github", "http://127.0.0.1:9/v1"))).chat_model
    assert cm is not None and cm.api_key == CANARY and cm.api_key_env == "GITHUB_API_KEY"


# ------------------------------------------------------------------------ 2. links out of the project, PG* names

def _ops_env(tmp_path: Path) -> Path:
    ops = tmp_path / "ops"
    ops.mkdir()
    (ops / "tog.env").write_text(f"PGPASSWORD={PG_CANARY}\nMY_KEY={PG_CANARY}\n")
    return ops / "tog.env"


@pytest.mark.parametrize("var", ["PGPASSWORD", "MY_KEY"])
def test_a_dotenv_linked_out_of_the_project_is_not_read(var, clean_env, tog_home, toy_server, tmp_path):
    root = _project(tmp_path / "p", _settings("openai", toy_server.base_url, f"${{{var}}}"))
    (root / ".env").symlink_to(_ops_env(tmp_path))
    info = open_project(root)
    assert info.chat_model is None
    said = info.settings_error or ""
    assert str(root / ".env") in said and "outside the project folder" in said and "instead of a link" in said
    assert PG_CANARY not in said and "ops" not in said  # neither the value nor where the link leads
    run_query(RunSpec(), project=str(root), question=QUESTION, seeds=["Acme"])
    assert not any(PG_CANARY in (h or "") for h in toy_server.auth_headers)


def test_a_settings_file_linked_out_is_refused_whether_or_not_its_target_exists(clean_env, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "settings.yaml").write_text(_settings("openai", "http://127.0.0.1:9/v1"))
    said = []
    for name, target in (("a", elsewhere / "settings.yaml"), ("b", elsewhere / "missing.yaml")):
        root = _project(tmp_path / name, "")
        (root / "settings.yaml").unlink()
        (root / "settings.yaml").symlink_to(target)
        info = open_project(root)
        assert info.chat_model is None and "outside the project folder" in (info.settings_error or "")
        said.append((info.settings_error or "").replace(str(root), "ROOT"))
    assert said[0] == said[1]  # no probing of the server's files


def test_links_inside_the_project_folder_still_work(clean_env, tmp_path):
    root = _project(tmp_path / "p", _settings("openai", "http://127.0.0.1:9/v1", "${MY_KEY}"))
    (root / "env").mkdir()
    (root / "env" / "local.env").write_text("MY_KEY=sk-local-0123456\n")
    (root / ".env").symlink_to(root / "env" / "local.env")
    (root / "conf").mkdir()
    (root / "settings.yaml").rename(root / "conf" / "settings.yaml")
    (root / "settings.yaml").symlink_to(Path("conf") / "settings.yaml")
    cm = open_project(root).chat_model
    assert cm is not None and cm.api_key == "sk-local-0123456"


def test_a_server_like_name_is_not_read_from_the_projects_own_dotenv(clean_env, tmp_path):
    root = _project(tmp_path / "p", _settings("openai", "http://127.0.0.1:9/v1", "${PGPASSWORD}"),
                    f"PGPASSWORD={PG_CANARY}\n")
    info = open_project(root)
    cm = info.chat_model
    assert cm is not None and cm.api_key is None and cm.api_key_env is None
    assert any("${PGPASSWORD}" in p and "nor from the project's .env" in p for p in info.problems)
    assert choose_model(None, info).kind == "none"


# -------------------------------------------------------------------------------------- 3. TOG_PROJECT_ROOTS

@pytest.fixture()
def roots(tmp_path, monkeypatch):
    allowed = tmp_path / "roots"
    allowed.mkdir()
    monkeypatch.setenv("TOG_PROJECT_ROOTS", str(allowed))
    return allowed


def test_an_output_folder_linked_out_of_the_roots_is_refused(clean_env, roots, tmp_path):
    outside = _project(tmp_path / "outside", "")
    root = roots / "p"
    root.mkdir()
    (root / "output").symlink_to(outside / "output")
    check_project_root(root)  # the folder itself is inside
    with pytest.raises(ProjectError) as err:
        open_project(root)
    assert str(root / "output") in str(err.value) and "TOG_PROJECT_ROOTS" in str(err.value)
    assert str(outside) not in str(err.value)


@pytest.mark.parametrize("name", ["entities.parquet", "relationships.parquet"])
def test_a_table_linked_out_of_the_roots_is_refused(name, clean_env, roots, tmp_path):
    outside = _project(tmp_path / "outside", "")
    root = _project(roots / "p", "")
    (root / "output" / name).unlink()
    (root / "output" / name).symlink_to(outside / "output" / name)
    with pytest.raises(ProjectError) as err:
        open_project(root)
    assert str(root / "output" / name) in str(err.value) and "TOG_PROJECT_ROOTS" in str(err.value)


def test_a_table_swapped_for_a_link_after_opening_is_not_read(clean_env, roots, tmp_path):
    outside = _project(tmp_path / "outside", "")
    root = _project(roots / "p", "")
    info = open_project(root)
    assert info.roots == tuple(project_roots())
    read_tables(info)  # inside: read
    (root / "output" / "relationships.parquet").unlink()
    (root / "output" / "relationships.parquet").symlink_to(outside / "output" / "relationships.parquet")
    with pytest.raises(ProjectError, match="TOG_PROJECT_ROOTS"):
        read_tables(info)


def test_settings_and_dotenv_are_checked_against_the_roots(clean_env, roots, tmp_path, monkeypatch):
    shared = tmp_path / "shared"  # a folder outside the roots
    shared.mkdir()
    (shared / "settings.yaml").write_text(_settings("openai", "http://127.0.0.1:9/v1"))
    root = _project(roots / "p", "")
    (root / "settings.yaml").unlink()
    (root / "settings.yaml").symlink_to(shared / "settings.yaml")
    info = open_project(root)
    assert info.chat_model is None and "TOG_PROJECT_ROOTS" in (info.settings_error or "")
    # a project given by its output folder whose root (holding settings.yaml) is outside the roots
    monkeypatch.setenv("TOG_PROJECT_ROOTS", str(roots / "q" / "output"))
    q = _project(roots / "q", _settings("openai", "http://127.0.0.1:9/v1"))
    info = open_project(q / "output")
    assert info.chat_model is None and "TOG_PROJECT_ROOTS" in (info.settings_error or "")


def test_links_inside_the_roots_are_followed_and_the_folder_outside_is_refused(clean_env, roots, tmp_path):
    data = _project(roots / "data", "")
    root = roots / "p"
    root.mkdir()
    (root / "output").symlink_to(data / "output")  # another folder inside the roots: fine
    assert open_project(root).tables["entities"] == root / "output" / "entities.parquet"
    with pytest.raises(ProjectError, match="outside the folders this server opens projects from"):
        open_project(_project(tmp_path / "outside", ""))


def test_the_projects_own_model_asked_by_name_does_not_send_the_servers_provider_key(clean_env, toy_server, tmp_path,
                                                                                     monkeypatch):
    """Typing the project's own model (github/toy) with the API base left empty used to leave the key to LiteLLM,
    which read the server's GITHUB_API_KEY and sent it to the project's api_base (found after the fix above)."""
    root = _project(tmp_path / "p", _settings("github", toy_server.base_url))
    info = open_project(root)
    choice = choose_model("github/toy", info)
    assert choice.key_source == "withheld" and choice.api_key is None and choice.api_key_env is None
    monkeypatch.setenv("TOG_ALLOWED_API_BASES", toy_server.base_url)  # the operator allows that base: as before
    assert choose_model("github/toy", open_project(root)).key_source == "environment"
    assert choose_model("github/toy", info, trust_api_base=True).key_source == "environment"  # the CLI's own


def test_a_project_folder_swapped_for_a_link_after_the_roots_check_does_not_move_its_dotenv(clean_env, roots,
                                                                                            tmp_path, monkeypatch):
    """A project author who can write inside the roots swaps the project folder for a link between open_project's
    check and the .env read (simulated: the swap is made inside that read, and undone after it, as a winning racer
    does). Before, the folder was resolved again at read time, so another folder's .env was read and its key sent to
    the author's api_base."""
    from tog_core.graphrag import project as P

    victim = tmp_path / "elsewhere"
    victim.mkdir()
    (victim / ".env").write_text(f"VICTIM_KEY={CANARY}\n")
    proj = _project(roots / "proj", _settings("openai", "http://attacker.example/v1", "${VICTIM_KEY}"), "X=1\n")
    real = P.project_environment

    def racing(root, environ):
        os.rename(proj, proj.with_name("proj.real"))
        os.symlink(victim, proj)
        try:
            return real(root, environ)
        finally:
            os.unlink(proj)
            os.rename(proj.with_name("proj.real"), proj)

    monkeypatch.setattr(P, "project_environment", racing)
    info = open_project(proj, environ={**os.environ, "TOG_PROJECT_ROOTS": str(roots)})
    assert info.chat_model is None or info.chat_model.api_key != CANARY
    assert info.settings_error and ".env" in info.settings_error and "outside the project folder" in info.settings_error
