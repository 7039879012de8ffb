"""Find a GraphRAG project on disk, detect its output version and read its model settings.

PROJECT may be a GraphRAG root (settings.yaml/.yml/.json, optional .env), its output folder, or any
folder of parquet files. Nothing here reads the environment at import time; the API key itself is
never stored in a repr, a log line or an error message (only the *name* of the variable holding it).
"""
from __future__ import annotations

import io
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import yaml
from dotenv import dotenv_values

SETTINGS_NAMES = ("settings.yaml", "settings.yml", "settings.json")

# logical table -> file stems, newest naming first
TABLE_STEMS: dict[str, tuple[str, ...]] = {
    "entities": ("entities", "create_final_entities"),
    "relationships": ("relationships", "create_final_relationships"),
    "text_units": ("text_units", "create_final_text_units"),
    "nodes": ("create_final_nodes",),
    "communities": ("communities", "create_final_communities"),
    "community_reports": ("community_reports", "create_final_community_reports"),
    "covariates": ("covariates", "create_final_covariates"),
    "documents": ("documents", "create_final_documents"),
}
REQUIRED_TABLES = ("entities", "relationships")
LANCEDB_ENTITY_TABLES = ("entity_description", "default-entity-description")


class ProjectError(Exception):
    """A problem with a GraphRAG project, phrased for a person: what is wrong, where, and the fix."""

    exit_code = 2

    def __init__(self, problem: str, *, path: Path | str | None = None, fix: str = "") -> None:
        self.problem = problem
        self.path = Path(path) if path is not None else None
        self.fix = fix
        where = f"{self.path}: " if self.path is not None else ""
        super().__init__(f"{where}{problem}" + (f" — {fix}" if fix else ""))


class NotAProjectError(ProjectError):
    """The path is not a folder holding GraphRAG output."""


class MissingTableError(ProjectError):
    """A required parquet table is absent."""


class SchemaError(ProjectError):
    """A table lacks a required column or has one of the wrong type."""


class EmptyTableError(ProjectError):
    """A required table has no rows."""


class UnreadableTableError(ProjectError):
    """A parquet file cannot be read (truncated, zero bytes, not parquet)."""


class SettingsError(ProjectError):
    """settings.yaml/.json cannot be read or names something undefined."""


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
            "api_base": self.api_base,
            "api_version": self.api_version,
            "api_key_env": self.api_key_env,
            "api_key": "set (hidden)" if self.key_present else "missing",
            "source": self.source,
        }


@dataclass(frozen=True, kw_only=True)
class ProjectInfo:
    """Where a project's tables are and what they are."""

    path: Path  # what the person gave
    root: Path | None  # folder holding settings.*, if any
    output_dir: Path  # folder holding the parquet tables
    version: str  # e.g. "3.x", "2.x", "1.x", "0.4.x", "0.3.x"
    family: str  # "current" (entities.parquet …) | "legacy" (create_final_*)
    tables: Mapping[str, Path]
    entity_name_column: str  # "title" or "name"
    settings_file: Path | None = None
    chat_model: ModelSettings | None = None
    embedding_model: ModelSettings | None = None
    settings_error: str | None = None
    lancedb_entity_table: Path | None = None
    problems: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        base = self.root or self.output_dir
        return base.resolve().name


def open_project(path: str | os.PathLike[str], *, environ: Mapping[str, str] | None = None) -> ProjectInfo:
    """Locate the tables and settings of the project at `path`. Raises a ProjectError subclass."""
    given = Path(path).expanduser()
    if given.is_symlink() and not given.exists():
        raise NotAProjectError("is a broken link or a symlink loop", path=given,
                               fix="remove the symlink loop or give the real folder")
    if not given.exists():
        raise NotAProjectError("no such file or folder", path=given,
                               fix="give the GraphRAG project root, its output folder or a folder of parquet files")
    try:
        real = given.resolve(strict=True)
    except (OSError, RuntimeError) as err:  # symlink loops
        raise NotAProjectError(f"cannot resolve the path ({err.__class__.__name__})", path=given,
                               fix="remove the symlink loop or give the real folder") from None
    if not real.is_dir():
        raise NotAProjectError("is a file, not a folder", path=given,
                               fix="give the folder that holds settings.yaml or the parquet tables")

    try:
        root = real if _settings_file(real) else None
        output_dir, problems = _find_output_dir(real)
    except PermissionError as err:
        raise NotAProjectError(f"cannot read {err.filename or 'a folder'} (permission denied)", path=given,
                               fix="give your user read access to the project folders (chmod/chown)") from None
    if root is None and _settings_file(output_dir.parent):
        root = output_dir.parent
    if root is None and output_dir != real and _settings_file(real):
        root = real
    tables = _find_tables(output_dir)
    for name in REQUIRED_TABLES:
        if name not in tables:
            raise MissingTableError(
                f"no {name} table ({TABLE_STEMS[name][0]}.parquet or {TABLE_STEMS[name][1]}.parquet)",
                path=output_dir, fix="point at a GraphRAG output folder after a finished `graphrag index` run")
    legacy = tables["entities"].name.startswith("create_final_")
    from pyarrow import parquet as pq  # local: keep import of this module light

    ent_cols = _columns(pq, tables["entities"])
    if "title" in ent_cols:
        name_col = "title"
    elif "name" in ent_cols:
        name_col = "name"
    else:
        raise SchemaError("entities table has neither a 'title' nor a 'name' column", path=tables["entities"],
                          fix="this does not look like GraphRAG entities output; re-run `graphrag index`")
    version = _detect_version(pq, tables, legacy=legacy, name_col=name_col, artifacts=output_dir.name == "artifacts",
                              ent_cols=ent_cols)

    settings_file = _settings_file(root) if root else None
    chat = emb = None
    settings_error = None
    if settings_file is not None:
        try:
            env = _environment(root, environ)
            raw = read_settings(settings_file, env)
            chat, emb = model_settings(raw, env, source=settings_file.name)
            if raw.get("completion_models") or raw.get("embedding_models"):
                version = "3.x" if not legacy else version
        except SettingsError as err:
            settings_error = str(err)
            problems.append(f"settings: {err}")

    lance = None
    if root is not None or output_dir is not None:
        for base in (output_dir / "lancedb", (root or output_dir) / "output" / "lancedb"):
            for tname in LANCEDB_ENTITY_TABLES:
                if (base / f"{tname}.lance").is_dir():
                    lance = base / f"{tname}.lance"
                    break
            if lance:
                break

    return ProjectInfo(path=given, root=root, output_dir=output_dir, version=version,
                       family="legacy" if legacy else "current", tables=tables, entity_name_column=name_col,
                       settings_file=settings_file, chat_model=chat, embedding_model=emb,
                       settings_error=settings_error, lancedb_entity_table=lance, problems=tuple(problems))


def _settings_file(folder: Path | None) -> Path | None:
    if folder is None:
        return None
    for name in SETTINGS_NAMES:
        if (folder / name).is_file():
            return folder / name
    return None


def _has_tables(folder: Path) -> bool:
    return any((folder / f"{stem}.parquet").is_file() for stem in TABLE_STEMS["entities"])


def _find_output_dir(folder: Path) -> tuple[Path, list[str]]:
    problems: list[str] = []
    if _has_tables(folder):
        return folder, problems
    out = folder / "output"
    if out.is_dir() and _has_tables(out):
        return out, problems
    # 0.3.x: output/<timestamp>/artifacts/ ; choose the newest run that has tables
    for base in (folder, out):
        if not base.is_dir():
            continue
        runs = sorted((p for p in base.iterdir() if (p / "artifacts").is_dir() and _has_tables(p / "artifacts")),
                      key=lambda p: p.name, reverse=True)
        if runs:
            if len(runs) > 1:
                problems.append(f"{len(runs)} indexing runs found; using the newest, {runs[0].name}")
            return runs[0] / "artifacts", problems
    raise NotAProjectError("no GraphRAG tables found here (entities.parquet or create_final_entities.parquet)",
                           path=folder, fix="give the project root, its output/ folder, or a folder of parquet files")


def _find_tables(folder: Path) -> dict[str, Path]:
    found: dict[str, Path] = {}
    for name, stems in TABLE_STEMS.items():
        for stem in stems:
            p = folder / f"{stem}.parquet"
            if p.is_file():
                found[name] = p
                break
    return found


def _columns(pq: Any, path: Path) -> list[str]:
    try:
        if path.stat().st_size == 0:
            raise UnreadableTableError("is an empty (zero-byte) file", path=path,
                                       fix="the indexing run was interrupted; re-run `graphrag index`")
        return list(pq.read_schema(path).names)
    except UnreadableTableError:
        raise
    except Exception as err:  # pyarrow raises several types for broken files; re-raised typed
        raise UnreadableTableError(f"cannot read parquet ({err.__class__.__name__}: {str(err)[:120]})", path=path,
                                   fix="the file is damaged or not parquet; re-run `graphrag index` or restore it"
                                   ) from None


def _detect_version(pq: Any, tables: Mapping[str, Path], *, legacy: bool, name_col: str, artifacts: bool,
                    ent_cols: list[str]) -> str:
    if legacy:
        if artifacts:
            return "0.3.x"
        if name_col == "name":
            return "0.4.x"
        return "1.x"
    if "x" in ent_cols and "y" in ent_cols:
        return "2.x"
    tu = tables.get("text_units")
    if tu is not None:
        cols = _columns(pq, tu)
        if "document_ids" in cols:
            return "2.x"
    return "3.x"


# ---------------------------------------------------------------- settings

_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def _environment(root: Path | None, environ: Mapping[str, str] | None) -> dict[str, str]:
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
