"""A GraphRAG project's model settings: settings.yaml/.yml/.json of any GraphRAG version (0.x–3.x), mapped to
LiteLLM terms, with `${VAR}` references resolved as `graphrag/project_env.py` allows: a key from the project's .env
or an allowed server variable (GraphRAG's order: the real environment wins), anything else (model, api_base, …)
from the project's .env only. The settings file and the .env are read only from the project's own folder: a link
that leads out of it is refused (SettingsError naming the file and the fix). Nothing is read at import; os.environ
is never written; a key's value never appears in a repr, a log line or an error message (only the variable's name).
"""
from __future__ import annotations

import io
import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from dotenv import dotenv_values
from dotenv.variables import parse_variables

from tog_core.errors import public_url
from tog_core.graphrag.errors import SettingsError
from tog_core.graphrag.project_env import NEVER_READ, ProjectEnv, never_read, open_inside, provider_key_vars

__all__ = ["ModelSettings", "ProjectEnv", "SETTINGS_NAMES", "find_settings_file", "project_environment",
           "read_dotenv", "read_settings", "model_settings"]

SETTINGS_NAMES = ("settings.yaml", "settings.yml", "settings.json")
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass(frozen=True, kw_only=True)
class ModelSettings:
    """One model from the project's settings, mapped to LiteLLM terms. The key value is never shown."""

    kind: str  # "chat" | "embedding"
    litellm_model: str
    api_base: str | None = None
    api_version: str | None = None
    api_key_env: str | None = None  # name of the variable holding the key (only one the project may read)
    provider: str = ""  # the settings' model_provider (whose usual key variable the project may read)
    api_key: str | None = field(default=None, repr=False, compare=False)
    source: str = ""  # where in the settings it was found
    key_note: str = ""  # why the settings' ${VAR} gives no key (a variable the project may not read), and the fix

    @property
    def key_present(self) -> bool:
        return bool(self.api_key)

    def public_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "model": self.litellm_model,
            "api_base": public_url(self.api_base),
            "api_version": self.api_version,
            "api_key_env": self.api_key_env,
            "api_key": "set (hidden)" if self.key_present else "missing",
            "source": self.source,
        }


def find_settings_file(folder: Path | None) -> Path | None:
    """The settings file of a GraphRAG root, if it has one (a link counts, wherever it leads: reading it says
    whether it may be followed, without telling whether its target exists)."""
    if folder is None:
        return None
    for name in SETTINGS_NAMES:
        if (folder / name).is_file() or (folder / name).is_symlink():
            return folder / name
    return None


def project_environment(root: Path | None, environ: Mapping[str, str] | None) -> ProjectEnv:
    """What the settings of the project at `root` may read: its `.env` (only from its own folder: a link leading
    out is a SettingsError), and the process environment (`environ`, default os.environ) as far as
    `project_env.server_may_supply` allows, for a key only. `root` is the folder as it was resolved when the
    project was opened (and checked against TOG_PROJECT_ROOTS): it is not resolved again here, so a folder swapped for
    a link since does not move where the .env may be read from."""
    own: dict[str, str] = {}
    if root is not None:
        dotenv = root / ".env"
        if dotenv.is_symlink() or dotenv.is_file():
            own = read_dotenv(dotenv, inside=(root,))
    return ProjectEnv(own=own, server=dict(os.environ if environ is None else environ))


def _read_text(path: Path, inside: Sequence[Path], errors: str = "strict") -> str:
    """A project file's text (invalid UTF-8 decoded as `errors` says). With `inside` (the project's folder,
    resolved), only a file that lies there, links followed: anything else is a SettingsError naming the file and
    the fix, said the same whether or not the link's target exists."""
    try:
        if not inside:
            return path.read_text(encoding="utf-8", errors=errors)
        f = open_inside(path, inside)
        if f is None:
            raise SettingsError(f"is a link to a file outside the project folder {inside[0]}, which the server does "
                                f"not follow (a project's settings and .env are read from its own folder only)",
                                path=path, fix="put the file itself in the project folder instead of a link")
        with f:
            return f.read().decode("utf-8", errors=errors)
    except OSError as err:
        raise SettingsError(f"cannot read ({err.strerror})", path=path, fix="check the file's permissions") from None


def read_dotenv(path: Path, *, inside: Sequence[Path] = ()) -> dict[str, str]:
    """The variables of a project's .env, read as GraphRAG reads it (python-dotenv: `export`, quotes,
    inline comments, ${VAR} and ${VAR:-default} expansion), without touching os.environ. A name without a value is
    skipped. Expansion sees only the file's earlier lines: never the server's environment (python-dotenv's own
    would read it, and hand a server secret to the project). `inside`: the folders the file must lie in (links
    followed), as `_read_text`."""
    text = _read_text(path, inside, errors="replace")
    values: dict[str, str] = {}
    for k, v in dotenv_values(stream=io.StringIO(text), interpolate=False).items():
        if k and v is not None:
            values[k] = "".join(atom.resolve(values) for atom in parse_variables(v))
    return values


def read_settings(path: Path, env: Mapping[str, str] | ProjectEnv | None = None, *, inside: Sequence[Path] = ()
                  ) -> dict[str, Any]:
    """Parse settings.yaml/.json. `${VAR}` references stay as they are; model_settings resolves them. `inside`: the
    folders the file must lie in (links followed), as `_read_text`."""
    try:
        text = _read_text(path, inside)
    except UnicodeDecodeError:
        raise SettingsError("is not UTF-8 text", path=path, fix="save the settings file as UTF-8") from None
    try:
        data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (yaml.YAMLError, json.JSONDecodeError) as err:
        mark = getattr(err, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise SettingsError(f"is not valid {'JSON' if path.suffix == '.json' else 'YAML'}{where}", path=path,
                            fix="fix the syntax (indentation, colons, quotes)") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise SettingsError("top level is not a mapping", path=path, fix="settings must be key: value pairs")
    return data


def _subst(value: Any, env: ProjectEnv, where: str) -> str | None:
    """Resolve ${VAR} in a value that is not a key (model, api_base, …) from the project's .env only: the server's
    environment is never read for it, so it can never carry a server secret into a request, a trace or `inspect`.
    An undefined variable raises SettingsError naming the file, the field and the fix."""
    if value is None:
        return None
    text = str(value)
    names = _VAR.findall(text)
    missing = [m for m in names if m not in env.own]
    if missing:
        name = missing[0]
        fix = (f"write the value itself in place of ${{{name}}} (a name like {NEVER_READ} is never read for a "
               f"project, even from its .env)" if never_read(name) else
               f"define {name} in the project's .env file (beside the settings file), or write the value itself in "
               f"place of ${{{name}}}")
        raise SettingsError(f"{where} holds the placeholder ${{{name}}}, which is not defined in the project's .env "
                            f"(a project's {where.rsplit('.', 1)[-1]} is never read from the server's environment)",
                            fix=fix)
    denied = [m for m in names if never_read(m)]
    if denied:  # defined in the project's .env, which may be (a copy of) the server's own env file
        name = denied[0]
        raise SettingsError(f"{where} holds the placeholder ${{{name}}}: a name like {NEVER_READ} is never read for "
                            f"a project, neither from the server's environment nor from the project's .env",
                            fix=f"name the variable otherwise in the settings and the project's .env, or write the "
                                f"value itself in place of ${{{name}}}")
    return _VAR.sub(lambda m: env.own[m.group(1)], text) or None


def model_settings(raw: Mapping[str, Any], env: Mapping[str, str] | ProjectEnv, *, source: str = "settings"
                   ) -> tuple[ModelSettings | None, ModelSettings | None]:
    """Map the chat and embedding models of any GraphRAG settings version to LiteLLM terms. `env`: what the
    project may read (`project_environment`); a plain mapping is taken as the project's own .env."""
    if not isinstance(env, ProjectEnv):
        env = ProjectEnv(own=dict(env))
    chat = emb = None
    if isinstance(raw.get("completion_models"), dict) or isinstance(raw.get("embedding_models"), dict):  # 3.x
        chat = _first_model(raw.get("completion_models"), "chat", env, f"{source}: completion_models")
        emb = _first_model(raw.get("embedding_models"), "embedding", env, f"{source}: embedding_models")
    elif isinstance(raw.get("models"), dict):  # 2.x
        models = raw["models"]
        chat_key = next((k for k, v in models.items() if isinstance(v, dict) and "embedding" not in
                         str(v.get("type", "")) and "embedding" not in k), None)
        emb_key = next((k for k, v in models.items() if isinstance(v, dict) and (
            "embedding" in str(v.get("type", "")) or "embedding" in k)), None)
        if chat_key:
            chat = _one_model(models[chat_key], "chat", env, f"{source}: models.{chat_key}")
        if emb_key:
            emb = _one_model(models[emb_key], "embedding", env, f"{source}: models.{emb_key}")
    else:  # 0.x–1.x
        if isinstance(raw.get("llm"), dict):
            chat = _one_model(raw["llm"], "chat", env, f"{source}: llm")
        e = raw.get("embeddings")
        if isinstance(e, dict) and isinstance(e.get("llm"), dict):
            emb = _one_model(e["llm"], "embedding", env, f"{source}: embeddings.llm")
    return chat, emb


def _first_model(section: Any, kind: str, env: ProjectEnv, where: str) -> ModelSettings | None:
    if not isinstance(section, dict) or not section:
        return None
    key, value = next(iter(section.items()))
    if not isinstance(value, dict):
        raise SettingsError(f"{where}.{key} is not a mapping", fix="give model_provider, model and api_key under it")
    return _one_model(value, kind, env, f"{where}.{key}")


_KNOWN_TYPES = {"openai_chat", "azure_openai_chat", "openai_embedding", "azure_openai_embedding", "chat",
                "embedding", "litellm", "static_response"}


def _one_model(cfg: Mapping[str, Any], kind: str, env: ProjectEnv, where: str) -> ModelSettings:
    def get(key: str) -> str | None:
        return _subst(cfg.get(key), env, f"{where}.{key}")

    model = get("model")
    if not model:
        raise SettingsError(f"{where} has no model", fix="add `model: <name>` to it")
    provider = get("model_provider")
    mtype = str(cfg.get("type") or "").strip()
    deployment = get("azure_deployment_name") or get("deployment_name")
    if mtype and mtype not in _KNOWN_TYPES:
        raise SettingsError(f"{where}.type '{mtype}' is not a model type this tool knows",
                            fix="use model_provider/model (LiteLLM) or pass --model explicitly")
    if not provider:
        provider = "azure" if mtype.startswith("azure") else "openai"
    if provider == "azure":
        litellm_model = f"azure/{deployment or model}"
    elif "/" in model and provider in ("litellm", ""):
        litellm_model = model
    else:
        litellm_model = f"{provider}/{model}"
    key_env, api_key, note = _key(cfg.get("api_key"), env, provider, f"{where}.api_key")
    return ModelSettings(kind=kind, litellm_model=litellm_model, api_base=get("api_base"),
                         api_version=get("api_version"), api_key_env=key_env, api_key=api_key, source=where,
                         provider=provider, key_note=note)


def _key(raw: Any, env: ProjectEnv, provider: str, where: str) -> tuple[str | None, str | None, str]:
    """(the key's variable, its value, why there is none): `${VAR}` from the project's .env or a server variable
    the project may read (`project_env`); a literal key as written; no api_key: the provider's usual variable.
    A variable the project may not read is never named as the key's variable (whatever reads the environment later
    would read it): the note says so instead."""
    text = raw if isinstance(raw, str) else None
    names = _VAR.findall(text) if text else []
    if names:
        refused = [n for n in names if not env.key_readable(n, provider=provider)]
        if refused:
            return None, None, env.refusal(refused[0], where, provider=provider)
        values = {n: env.key(n, provider=provider) for n in names}
        if any(v is None for v in values.values()):
            return names[0], None, ""
        return names[0], _VAR.sub(lambda m: values[m.group(1)] or "", text or "") or None, ""
    if raw is not None and str(raw):
        return None, str(raw), ""
    usual = provider_key_vars(provider)
    readable = [n for n in usual if env.key_readable(n, provider=provider)]
    for name in readable:
        value = env.key(name, provider=provider)
        if value:
            return name, value, ""
    if not readable and usual and not never_read(usual[0]):  # another provider's variable: the operator's to allow
        return None, None, env.provider_refusal(usual[0], provider, where.rsplit(".", 1)[0])
    return (readable[0] if readable else None), None, ""
