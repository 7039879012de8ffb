"""Where ToG Explorer keeps its files, and how it writes them: the bottom layer every other one may use.

`tog_home()` reads $TOG_HOME at call time (never at import); `atomic_write_text` writes through a temp file,
fsync and os.replace, so a reader never sees half a file; `new_run_id` names a run by its UTC start time.
"""
from __future__ import annotations

import os
import tempfile
import uuid
from datetime import datetime, UTC
from pathlib import Path

__all__ = ["tog_home", "atomic_write_text", "new_run_id"]


def tog_home() -> Path:
    """Where runs, caches and settings live: $TOG_HOME, else ~/.tog-explorer (read at call time)."""
    return Path(os.environ.get("TOG_HOME") or Path.home() / ".tog-explorer")


def new_run_id() -> str:
    return datetime.now(UTC).strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6]


def atomic_write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
