"""The errors of reading a GraphRAG project, phrased for a person: what is wrong, where, and the fix.
Every one is a ProjectError (the CLI prints its one line and exits 2)."""
from __future__ import annotations

from pathlib import Path

__all__ = ["ProjectError", "NotAProjectError", "MissingTableError", "SchemaError", "EmptyTableError",
           "UnreadableTableError", "SettingsError"]


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
