"""A GraphRAG project's model settings: settings.yaml/.yml/.json of any GraphRAG version (0.x–3.x), with
`${VAR}` references resolved from the process environment over the project's .env (GraphRAG's order: the
real environment wins), mapped to LiteLLM terms. Nothing is read at import; os.environ is never written;
a key's value never appears in a repr, a log line or an error message (only the variable's name).
"""
from __future__ import annotations

import io
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from dotenv import dotenv_values

from tog_core.errors import public_url
from tog_core.graphrag.errors import SettingsError

__all__ = ["ModelSettings", "SETTINGS_NAMES", "find_settings_file", "project_environment", "read_dotenv",
           "read_settings", "model_settings"]

SETTINGS_NAMES = ("settings.yaml", "settings.yml", "settings.json")
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass(frozen=True, kw_only=True)
class ModelSettings:
    """One model from the project's settings, mapped to LiteLLM terms. The key value is never shown."""

    kind: str  # "chat" | "embedding"
    litellm_model: str
    api_base: str | None = None
    api_version: str | None = None
    api_key_env: str | None = None  # name of the variable holding the key
    api_key: str | None = field(default=None, repr=False, compare=False)
    source: str = ""  # where in the settings it was found

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
    """The settings file of a GraphRAG root, if it has one."""
    if folder is None:
        return None
    for name in SETTINGS_NAMES:
        if (folder / name).is_file():
            return folder / name
    return None


def project_environment(root: Path | None, environ: Mapping[str, str] | None) -> dict[str, str]:
    """The process environment over `<root>/.env` (GraphRAG's order: real env wins)."""
    env: dict[str, str] = {}
    if root is not None and (root / ".env").is_file():
        env.update(read_dotenv(root / ".env"))
    env.update(os.environ if environ is None else environ)
    return env


def read_dotenv(path: Path) -> dict[str, str]:
    """The variables of a project's .env, read as GraphRAG reads it (python-dotenv: `export`, quotes,
    inline comments, ${VAR} expansion), without touching os.environ. A name without a value is skipped."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as err:
        raise SettingsError(f"cannot read ({err.strerror})", path=path, fix="check the file's permissions") from None
    return {k: v for k, v in dotenv_values(stream=io.StringIO(text)).items() if k and v is not None}


def read_settings(path: Path, env: Mapping[str, str]) -> dict[str, Any]:
    """Parse settings.yaml/.json. `${VAR}` references stay as they are; model_settings resolves them."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise SettingsError("is not UTF-8 text", path=path, fix="save the settings file as UTF-8") from None
    except OSError as err:
        raise SettingsError(f"cannot read ({err.strerror})", path=path, fix="check the file's permissions") from None
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


def _subst(value: Any, env: Mapping[str, str], where: str, *, required: bool) -> str | None:
    """Resolve ${VAR}; an undefined variable raises SettingsError when required, else gives None."""
    if value is None:
        return None
    text = str(value)
    missing = [m for m in _VAR.findall(text) if m not in env]
    if missing:
        if required:
            raise SettingsError(f"{where} uses ${{{missing[0]}}}, which is not defined",
                                fix=f"set {missing[0]} in the environment or in the project's .env file")
        return None
    return _VAR.sub(lambda m: env[m.group(1)], text) or None


def model_settings(raw: Mapping[str, Any], env: Mapping[str, str], *, source: str = "settings"
                   ) -> tuple[ModelSettings | None, ModelSettings | None]:
    """Map the chat and embedding models of any GraphRAG settings version to LiteLLM terms."""
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


def _first_model(section: Any, kind: str, env: Mapping[str, str], where: str) -> ModelSettings | None:
    if not isinstance(section, dict) or not section:
        return None
    key, value = next(iter(section.items()))
    if not isinstance(value, dict):
        raise SettingsError(f"{where}.{key} is not a mapping", fix="give model_provider, model and api_key under it")
    return _one_model(value, kind, env, f"{where}.{key}")



_KNOWN_TYPES = {"openai_chat", "azure_openai_chat", "openai_embedding", "azure_openai_embedding", "chat",
                "embedding", "litellm", "static_response"}


def _one_model(cfg: Mapping[str, Any], kind: str, env: Mapping[str, str], where: str) -> ModelSettings:
    def get(key: str, required: bool = True) -> str | None:
        return _subst(cfg.get(key), env, f"{where}.{key}", required=required)

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
    key_raw = cfg.get("api_key")
    key_env = None
    if isinstance(key_raw, str):
        names = _VAR.findall(key_raw)
        key_env = names[0] if names else None
    api_key = _subst(key_raw, env, f"{where}.api_key", required=False)
    if key_env is None and not api_key:
        default_env = "AZURE_API_KEY" if provider == "azure" else f"{provider.upper()}_API_KEY"
        key_env = default_env
        api_key = env.get(default_env) or None
    return ModelSettings(kind=kind, litellm_model=litellm_model, api_base=get("api_base"),
                         api_version=get("api_version"), api_key_env=key_env, api_key=api_key, source=where)
