"""Run store: one JSON trace per run, written atomically after every step; list, load, resume, branch.

Layout: <home>/runs/<run_id>.json. A crash between steps loses at most the step in flight; a reader
never sees a half-written file (temp file + fsync + os.replace).
"""
from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tog_core.home import atomic_write_text, new_run_id, tog_home
from tog_core.tog.trace import Trace

__all__ = ["RunStore", "RunSummary", "atomic_write_text", "new_run_id", "tog_home"]  # the last three from home.py

_RUN_ID = re.compile(r"[A-Za-z0-9_\-]{1,80}\Z")  # with .match: the whole id (`$` let "id\n" through)


@dataclass(frozen=True, kw_only=True)
class RunSummary:
    run_id: str
    question: str
    created_at: str
    project: str
    answer: str
    stop_reason: str | None
    llm_calls: int
    cost_usd: float | None
    width: int | None
    depth: int | None
    pruner: str
    model: str
    finished: bool
    parent_run: str | None
    path: Path
    steps: int = 0  # steps taken; 0 with no answer = abandoned before the search began (not worth listing)
    stage: str = ""  # where an unfinished run stopped ("relations", "entities", "evaluate", "answer")
    resumable: bool = False  # unfinished, not failed, and carrying the state a resume needs


class RunStore:
    def __init__(self, root: Path | str | None = None) -> None:
        self.root = Path(root) if root is not None else tog_home() / "runs"
        self._lock = threading.Lock()

    def path(self, run_id: str) -> Path:
        if not _RUN_ID.match(run_id):
            raise ValueError(f"invalid run id {run_id!r}")
        return self.root / f"{run_id}.json"

    def save(self, trace: Trace) -> Path:
        if not trace.run_id:
            trace.run_id = new_run_id()
        p = self.path(trace.run_id)
        with self._lock:
            atomic_write_text(p, trace.to_json(indent=1))
        return p

    def load(self, run_id: str) -> Trace:
        p = self.path(run_id)
        try:
            return Trace.from_json(p.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise FileNotFoundError(f"no saved run {run_id} in {self.root}") from None
        except (json.JSONDecodeError, ValueError, TypeError) as err:
            raise ValueError(f"{p}: not a readable trace ({err})") from None

    def delete(self, run_id: str) -> None:
        self.path(run_id).unlink(missing_ok=True)

    def list(self) -> list[RunSummary]:
        """Every readable run, newest first. Unreadable files are skipped (reported by `problems`)."""
        out = []
        if not self.root.is_dir():
            return out
        for p in self.root.glob("*.json"):
            try:
                d = json.loads(p.read_text(encoding="utf-8"))
            except (OSError, json.JSONDecodeError):
                continue
            if not isinstance(d, dict) or "question" not in d:
                continue
            cfg: dict[str, Any] = d.get("config") or {}
            stats: dict[str, Any] = d.get("stats") or {}
            out.append(RunSummary(
                run_id=d.get("run_id") or p.stem, question=str(d.get("question", "")),
                created_at=str(d.get("created_at", "")), project=str(d.get("project", "")),
                answer=str(d.get("answer", "")), stop_reason=d.get("stop_reason"),
                llm_calls=int(stats.get("llm_calls") or 0), cost_usd=stats.get("cost_usd"),
                width=cfg.get("width"), depth=cfg.get("depth"), pruner=str(cfg.get("pruner", "")),
                model=str(cfg.get("model", "")), finished=bool(d.get("answer")), parent_run=d.get("parent_run"),
                path=p, steps=len(d.get("steps") or []), stage=str((d.get("state") or {}).get("stage") or ""),
                resumable=not d.get("answer") and d.get("stop_reason") != "error" and bool(d.get("state"))))
        out.sort(key=lambda r: (r.created_at, r.run_id), reverse=True)
        return out

    def problems(self) -> list[str]:
        bad = []
        if self.root.is_dir():
            for p in self.root.glob("*.json"):
                try:
                    d = json.loads(p.read_text(encoding="utf-8"))
                    if not isinstance(d, dict) or "question" not in d:
                        bad.append(f"{p.name}: not a trace")
                except (OSError, json.JSONDecodeError) as err:
                    bad.append(f"{p.name}: unreadable ({err.__class__.__name__})")
        return bad
