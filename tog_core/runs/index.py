"""The run list's index: one small summary per saved run, so listing runs never parses whole traces.

Layout: <runs>/.index/<file name>, one JSON object per run file: the size and modification time of the run file it
describes, and either the summary the Saved runs table shows or why the run file is damaged. `RunStore.save`
writes it (atomically) right after the run file; a run file without an up-to-date entry (written by an older
version, edited by hand, or a crash between the two writes) is summarised once by `summarize_file` and its entry
written then. `summarize_file` reads only the top-level fields of a file `save` wrote (indent 1: a top-level key
starts a line with exactly one space, and JSON strings never hold a raw newline) and counts the steps without
parsing them; any other layout is parsed whole, once. `same_project`: whether a run belongs to a project (the
list's filter, and what the app and the CLI check before a run is resumed).
"""
from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, fields
from pathlib import Path, PurePath
from typing import Any

from tog_core.home import atomic_write_text

INDEX_DIR = ".index"
INDEX_VERSION = 1


def same_question(a: str, b: str) -> bool:
    """Whether two questions are the same as asked (spaces and line breaks aside): a run continues its own."""
    return " ".join(a.split()) == " ".join(b.split())


def same_project(recorded: str, current: str) -> bool:
    """Whether a run recorded under `recorded` belongs to the project at `current` (a resolved path). Runs saved
    before paths were resolved may name the project relative to wherever they were made (`demo`, `data/demo`):
    such a name matches the path it ends."""
    if recorded == current:
        return True
    rec = PurePath(recorded)
    if not recorded or rec.is_absolute():
        return False
    parts = tuple(p for p in rec.parts if p != ".")
    cur = PurePath(current).parts
    return bool(parts) and ".." not in parts and len(parts) < len(cur) and cur[-len(parts):] == parts


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
    steps: int = 0  # steps taken (0: stopped, left or branched before the first step; listed all the same)
    stage: str = ""  # where an unfinished run stopped ("relations", "entities", "evaluate", "answer")
    resumable: bool = False  # unfinished, not failed, and carrying the state a resume needs
    stamp: str = ""  # changes whenever the run is saved again (file size and time; the row's update time)
    revision: int = 0  # how many times the run was saved (Trace.revision; 0: saved before saves were counted)


class DamagedRun(ValueError):
    """A run file that cannot be listed: the message says which field is wrong."""


def _kind(v: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "true/false", type(None): "null"}.get(
        type(v), "a number" if isinstance(v, (int, float)) else type(v).__name__)


def _obj(d: dict[str, Any], key: str) -> dict[str, Any]:
    v = d.get(key)
    if v is None:
        return {}
    if not isinstance(v, dict):
        raise DamagedRun(f"'{key}' is {_kind(v)}, not an object")
    return v


def _num(d: dict[str, Any], key: str, where: str, *, whole: bool) -> Any:
    v = d.get(key)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or (whole and v != int(v)):
        raise DamagedRun(f"'{where}{key}' is {_kind(v)} ({str(v)[:40]!r}), not a {'whole ' if whole else ''}number")
    return int(v) if whole else float(v)


def _text(d: dict[str, Any], key: str) -> str:
    v = d.get(key)
    if v is not None and not isinstance(v, (str, int, float)):
        raise DamagedRun(f"'{key}' is {_kind(v)}, not text")
    return "" if v is None else str(v)


def summarize(d: Any, path: Path, *, n_steps: int | None = None, stamp: str = "") -> RunSummary:
    """The summary of a trace dict (its steps counted here unless `n_steps` is given). Raises DamagedRun naming
    the field that is not what a trace holds there."""
    if not isinstance(d, dict):
        raise DamagedRun(f"the file holds {_kind(d)}, not a trace object")
    if "question" not in d:
        raise DamagedRun("no 'question' field: not a trace")
    cfg, stats, state = _obj(d, "config"), _obj(d, "stats"), _obj(d, "state")
    if n_steps is None:
        steps = d.get("steps")
        if steps is not None and not isinstance(steps, list):
            raise DamagedRun(f"'steps' is {_kind(steps)}, not a list")
        n_steps = len(steps or [])
    answer, stop = _text(d, "answer"), d.get("stop_reason")
    if stop is not None and not isinstance(stop, str):
        raise DamagedRun(f"'stop_reason' is {_kind(stop)}, not text")
    parent = d.get("parent_run")
    rev = d.get("revision")  # as Trace.from_dict reads it: anything but a count is "not counted"
    revision = rev if isinstance(rev, int) and not isinstance(rev, bool) and rev >= 0 else 0
    return RunSummary(
        run_id=_text(d, "run_id") or path.stem, question=_text(d, "question"), created_at=_text(d, "created_at"),
        project=_text(d, "project"), answer=answer, stop_reason=stop,
        llm_calls=_num(stats, "llm_calls", "stats.", whole=True) or 0, cost_usd=_num(stats, "cost_usd", "stats.",
                                                                                      whole=False),
        width=_num(cfg, "width", "config.", whole=True), depth=_num(cfg, "depth", "config.", whole=True),
        pruner=_text(cfg, "pruner"), model=_text(cfg, "model"), finished=bool(answer),
        parent_run=None if parent is None else str(parent), path=path, steps=n_steps,
        stage=_text(state, "stage"), resumable=not answer and stop != "error" and bool(state), stamp=stamp,
        revision=revision)


def _light(data: bytes) -> tuple[dict[str, Any], int] | None:
    """The top-level fields of a file `save` wrote, with its steps left out but counted; None for any other
    layout. The steps are only checked to be UTF-8 (each step object starts a line with exactly two spaces)."""
    if not data.startswith(b"{\n "):
        return None
    key = data.find(b'\n "steps": [')
    if key < 0:
        return None
    nxt = data.find(b'\n "', key + 1)
    end = nxt if nxt >= 0 else data.rfind(b"\n}")
    if end < 0:
        return None
    region = data[key:end]
    region.decode("utf-8")  # a bad byte in a step is a damaged file too
    n = 0 if region.startswith(b'\n "steps": []') else region.count(b"\n  {")
    head = json.loads(data[:key].rstrip().rstrip(b",") + b"\n}")
    tail = json.loads(b"{" + data[nxt + 1:]) if nxt >= 0 else {}
    if not isinstance(head, dict) or not isinstance(tail, dict):
        return None
    return {**head, **tail}, n


def summarize_file(path: Path, stamp: str) -> RunSummary:
    """A run file's summary, reading as little as its layout allows. Raises DamagedRun (with why) or OSError."""
    data = path.read_bytes()
    try:
        light = _light(data)
        if light is not None:
            return summarize(light[0], path, n_steps=light[1], stamp=stamp)
        return summarize(json.loads(data), path, stamp=stamp)
    except UnicodeDecodeError as err:
        raise DamagedRun(f"not UTF-8 text (byte {err.start})") from None
    except json.JSONDecodeError as err:
        raise DamagedRun(f"not valid JSON (line {err.lineno}, column {err.colno}: {err.msg})") from None
    except RecursionError:
        raise DamagedRun("nested too deeply to be a trace") from None


def file_stamp(st: os.stat_result) -> str:
    return f"{st.st_size}:{st.st_mtime_ns}"


def entry_path(run_file: Path) -> Path:
    return run_file.parent / INDEX_DIR / run_file.name


_NONE = type(None)
_TYPES: dict[str, Any] = {
    "run_id": str, "question": str, "created_at": str, "project": str, "answer": str, "stop_reason": (str, _NONE),
    "llm_calls": int, "cost_usd": (int, float, _NONE), "width": (int, _NONE), "depth": (int, _NONE), "pruner": str,
    "model": str, "finished": bool, "parent_run": (str, _NONE), "steps": int, "stage": str, "resumable": bool,
    "stamp": str, "revision": int}
assert set(_TYPES) == {f.name for f in fields(RunSummary)} - {"path"}


def read_entry(run_file: Path, stamp: str) -> RunSummary | DamagedRun | None:
    """The index's entry for a run file when it describes the file as it is now; else None (to be rebuilt)."""
    try:
        e = json.loads(entry_path(run_file).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):  # absent, or unreadable: rebuilt from the run file
        return None
    if not isinstance(e, dict) or e.get("v") != INDEX_VERSION or e.get("stamp") != stamp:
        return None
    if isinstance(e.get("damaged"), str):
        return DamagedRun(e["damaged"])
    s = e.get("summary")
    if not isinstance(s, dict) or set(s) != set(_TYPES) or not all(isinstance(s[k], t) for k, t in _TYPES.items()):
        return None  # not written by this version: rebuilt from the run file
    return RunSummary(**s, path=run_file)


def write_entry(run_file: Path, stamp: str, found: RunSummary | DamagedRun) -> None:
    """Record a run file's summary (or why it is damaged). The index is a cache: a failed write only means the
    file is summarised again next time."""
    if isinstance(found, DamagedRun):
        e: dict[str, Any] = {"v": INDEX_VERSION, "stamp": stamp, "damaged": str(found)}
    else:
        s = asdict(found)
        s.pop("path")
        e = {"v": INDEX_VERSION, "stamp": stamp, "summary": s}
    try:
        atomic_write_text(entry_path(run_file), json.dumps(e, ensure_ascii=False))
    except OSError:
        pass  # read-only or full disk: the list still works, from the run files


def remove_entry(run_file: Path) -> None:
    entry_path(run_file).unlink(missing_ok=True)
