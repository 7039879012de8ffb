"""Find a GraphRAG project on disk, detect its output version and read its model settings.

PROJECT may be a GraphRAG root (settings.yaml/.yml/.json, optional .env), its output folder, or any
folder of parquet files. Nothing here reads the environment at import time; the API key itself is
never stored in a repr, a log line or an error message (only the *name* of the variable holding it).
Settings are read by graphrag/settings.py and the errors are in graphrag/errors.py; both re-exported here.

With TOG_PROJECT_ROOTS set (`project_env.project_roots`), the folder and every file found in it (the output folder,
the tables, settings.yaml, .env) must lie in those folders with links followed: a link leading out is a ProjectError
naming the file and TOG_PROJECT_ROOTS (a SettingsError for the settings, so the project opens without its model),
said the same whether or not the link's target exists. ProjectInfo.roots carries them to tables.py, which checks the
file it actually opens again.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from collections.abc import Mapping

from tog_core.graphrag.errors import (EmptyTableError, MissingTableError, NotAProjectError, ProjectError, SchemaError,
                                      SettingsError, UnreadableTableError)
from tog_core.graphrag.project_env import PROJECT_ROOTS, open_inside, project_roots, real_path, within
from tog_core.graphrag.settings import (ModelSettings, find_settings_file, model_settings, project_environment,
                                        read_dotenv, read_settings)

__all__ = ["open_project", "ProjectInfo", "ModelSettings", "ProjectError", "NotAProjectError", "MissingTableError",
           "SchemaError", "EmptyTableError", "UnreadableTableError", "SettingsError", "read_dotenv", "read_settings",
           "model_settings", "outside_roots", "table_source", "TABLE_STEMS", "REQUIRED_TABLES"]

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
    roots: tuple[Path, ...] = ()  # TOG_PROJECT_ROOTS when opened: the folders every file read must lie in

    @property
    def name(self) -> str:
        base = self.root or self.output_dir
        return base.resolve().name


def open_project(path: str | os.PathLike[str], *, environ: Mapping[str, str] | None = None) -> ProjectInfo:
    """Locate the tables and settings of the project at `path`. Raises a ProjectError subclass."""
    given = Path(path).expanduser()
    roots = project_roots(environ)
    if roots and not within(real_path(given), roots):  # before anything is looked up: no probing
        raise outside_roots(given, roots, link=False)
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
        root = real if find_settings_file(real) else None
        output_dir, problems = _find_output_dir(real, roots)
    except PermissionError as err:
        raise NotAProjectError(f"cannot read {err.filename or 'a folder'} (permission denied)", path=given,
                               fix="give your user read access to the project folders (chmod/chown)") from None
    if root is None and find_settings_file(output_dir.parent):
        root = output_dir.parent
    if root is None and output_dir != real and find_settings_file(real):
        root = real
    tables = _find_tables(output_dir, roots)
    for name in REQUIRED_TABLES:
        if name not in tables:
            raise MissingTableError(
                f"no {name} table ({TABLE_STEMS[name][0]}.parquet or {TABLE_STEMS[name][1]}.parquet)",
                path=output_dir, fix="point at a GraphRAG output folder after a finished `graphrag index` run")
    legacy = tables["entities"].name.startswith("create_final_")
    from pyarrow import parquet as pq  # local: keep import of this module light

    ent_cols = _columns(pq, tables["entities"], roots)
    if "title" in ent_cols:
        name_col = "title"
    elif "name" in ent_cols:
        name_col = "name"
    else:
        raise SchemaError("entities table has neither a 'title' nor a 'name' column", path=tables["entities"],
                          fix="this does not look like GraphRAG entities output; re-run `graphrag index`")
    version = _detect_version(pq, tables, legacy=legacy, name_col=name_col, artifacts=output_dir.name == "artifacts",
                              ent_cols=ent_cols, roots=roots)

    settings_file = find_settings_file(root) if root else None
    chat = emb = None
    settings_error = None
    if settings_file is not None:
        try:
            if roots and not (within(real_path(settings_file), roots) and within(root, roots)):
                raise outside_roots(settings_file, roots, link=True, error=SettingsError)
            # `root` as resolved above, never again: the settings and .env opened must lie in that folder (and so in
            # the roots), whatever the folder's path leads to by the time they are read
            env = project_environment(root, environ)
            raw = read_settings(settings_file, env, inside=(root,) if root is not None else ())
            chat, emb = model_settings(raw, env, source=settings_file.name)
            problems.extend(f"settings: {m.key_note}" for m in (chat, emb) if m is not None and m.key_note)
            if raw.get("completion_models") or raw.get("embedding_models"):
                version = "3.x" if not legacy else version
        except SettingsError as err:
            settings_error = str(err)
            problems.append(f"settings: {err}")

    lance = None
    if root is not None or output_dir is not None:
        for base in (output_dir / "lancedb", (root or output_dir) / "output" / "lancedb"):
            for tname in LANCEDB_ENTITY_TABLES:
                if (base / f"{tname}.lance").is_dir() and (not roots or within(real_path(base / f"{tname}.lance"),
                                                                                 roots)):
                    lance = base / f"{tname}.lance"
                    break
            if lance:
                break

    return ProjectInfo(path=given, root=root, output_dir=output_dir, version=version,
                       family="legacy" if legacy else "current", tables=tables, entity_name_column=name_col,
                       settings_file=settings_file, chat_model=chat, embedding_model=emb,
                       settings_error=settings_error, lancedb_entity_table=lance, problems=tuple(problems),
                       roots=roots)


def outside_roots(path: Path, roots: tuple[Path, ...], *, link: bool, error: type[ProjectError] = NotAProjectError
                  ) -> ProjectError:
    """The refusal of a folder or file outside TOG_PROJECT_ROOTS, naming it and the setting."""
    under = ", ".join(str(r) for r in roots)
    if not link:
        return error("is outside the folders this server opens projects from", path=path,
                     fix=f"choose a project under {under} (the operator's {PROJECT_ROOTS})")
    return error(f"leads outside the folders this server opens projects from ({PROJECT_ROOTS}: {under}), so it is "
                 f"not read", path=path, fix=f"put the file or folder itself in the project instead of a link, or "
                 f"the operator adds the folder it is in to {PROJECT_ROOTS}")


def table_source(path: Path, roots: tuple[Path, ...]) -> Any:
    """What pyarrow reads a table from: the path; with roots set, the file opened inside them (its real path
    checked on the file actually opened), else outside_roots. A file returned is the caller's to close."""
    if not roots:
        return path
    f = open_inside(path, roots)
    if f is None:
        raise outside_roots(path, roots, link=True)
    return f


def _present(p: Path, roots: tuple[Path, ...], *, folder: bool = False) -> bool:
    """Whether `p` is a file (a folder), refusing, with roots set, a link that leads outside them whether or not
    its target exists."""
    if roots and (p.is_symlink() or p.exists()) and not within(real_path(p), roots):
        raise outside_roots(p, roots, link=True)
    return p.is_dir() if folder else p.is_file()


def _has_tables(folder: Path, roots: tuple[Path, ...] = ()) -> bool:
    return any(_present(folder / f"{stem}.parquet", roots) for stem in TABLE_STEMS["entities"])


def _find_output_dir(folder: Path, roots: tuple[Path, ...] = ()) -> tuple[Path, list[str]]:
    problems: list[str] = []
    if _has_tables(folder, roots):
        return folder, problems
    out = folder / "output"
    if _present(out, roots, folder=True) and _has_tables(out, roots):
        return out, problems
    # 0.3.x: output/<timestamp>/artifacts/ ; choose the newest run that has tables
    for base in (folder, out):
        if not base.is_dir():
            continue
        runs = sorted((p for p in base.iterdir() if _present(p / "artifacts", roots, folder=True)
                       and _has_tables(p / "artifacts", roots)), key=lambda p: p.name, reverse=True)
        if runs:
            if len(runs) > 1:
                problems.append(f"{len(runs)} indexing runs found; using the newest, {runs[0].name}")
            return runs[0] / "artifacts", problems
    raise NotAProjectError("no GraphRAG tables found here (entities.parquet or create_final_entities.parquet)",
                           path=folder, fix="give the project root, its output/ folder, or a folder of parquet files")


def _find_tables(folder: Path, roots: tuple[Path, ...] = ()) -> dict[str, Path]:
    found: dict[str, Path] = {}
    for name, stems in TABLE_STEMS.items():
        for stem in stems:
            p = folder / f"{stem}.parquet"
            if _present(p, roots):
                found[name] = p
                break
    return found


def _columns(pq: Any, path: Path, roots: tuple[Path, ...] = ()) -> list[str]:
    try:
        if path.stat().st_size == 0:
            raise UnreadableTableError("is an empty (zero-byte) file", path=path,
                                       fix="the indexing run was interrupted; re-run `graphrag index`")
        src = table_source(path, roots)
        try:
            return list(pq.read_schema(src).names)
        finally:
            if src is not path:
                src.close()
    except ProjectError:
        raise
    except Exception as err:  # pyarrow raises several types for broken files; re-raised typed
        raise UnreadableTableError(f"cannot read parquet ({err.__class__.__name__}: {str(err)[:120]})", path=path,
                                   fix="the file is damaged or not parquet; re-run `graphrag index` or restore it"
                                   ) from None


def _detect_version(pq: Any, tables: Mapping[str, Path], *, legacy: bool, name_col: str, artifacts: bool,
                    ent_cols: list[str], roots: tuple[Path, ...] = ()) -> str:
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
        cols = _columns(pq, tu, roots)
        if "document_ids" in cols:
            return "2.x"
    return "3.x"
