"""A person's ticks on Explore's step still to apply, kept with the run so that a reload brings them back; and the
ticks of the branch a "Back to depth" went back from (runner.Exploration.earlier), kept the same way.

One small JSON record per run, `<runs folder>/.drafts/<run id>.json`, next to the run store's files: the runs folder
is the person's own (`TOG_HOME/runs/people/<digest>/`) when runs are kept per person (`TOG_RUN_OWNER`, app/owner.py),
else `TOG_HOME/runs` (with a PostgreSQL run store too: a draft stays on the disk of the replica it was made on). The
run's own file is never written here, and the run store lists no draft (it reads `*.json` of its folder only).

A record holds

* `pending`: the step it was made on — the steps taken, depth, stage, the candidate ids offered and the chains they
  were offered on (runner.beam_key) — and the ids the person ticked; a record whose step is not the run's pending
  step (the run went on elsewhere, the graph changed) brings nothing back (`restored`, which says why);
* `earlier` and `diverged`: Exploration.earlier and .diverged, while the branch has them.

It is removed once nothing is left in it: the step applied with nothing earlier to keep, the run finished, or the
run deleted. A record that cannot be read is no record (never an error). Streamlit-free: explorer/drafts.py draws.
"""
from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from tog_core.app.runner import Exploration, beam_key
from tog_core.runs.files import RunStore, atomic_write_text

log = logging.getLogger(__name__)

FORMAT = 1
DRAFTS = ".drafts"  # in the runs folder: not `*.json` of the folder itself, so never listed as a run
RECORD_MAX = 1_000_000  # bytes of a record read (width 10 and depth 6 make a few kB)

Earlier = dict[tuple[int, str], tuple[frozenset[str], frozenset[str], frozenset[Any] | None]]


class Drafts:
    """The draft records of one runs folder."""

    def __init__(self, runs_root: Path | str) -> None:
        self.root = Path(runs_root) / DRAFTS

    @classmethod
    def for_owner(cls, owner: str | None) -> Drafts:
        """The asking person's records (their own runs folder) when runs are kept per person, else the shared ones."""
        runs = RunStore()
        return cls((runs.for_owner(owner) if owner is not None else runs).root)

    def path(self, run_id: str) -> Path:
        """The record's file; ValueError for an id the run store would refuse too (no id names a path)."""
        return self.root / RunStore(self.root).path(run_id).name

    def read(self, run_id: str) -> dict[str, Any] | None:
        """The run's record, None when there is none or it cannot be read (said in the log only)."""
        try:
            p = self.path(run_id)
            if p.stat().st_size > RECORD_MAX:
                raise ValueError("too large")
            data = json.loads(p.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError, RecursionError) as err:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
            log.warning("the draft of run %s cannot be read (%s); ignored", str(run_id)[:80], err)
            return None
        if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("run_id") != run_id:
            return None
        return data

    def write(self, run_id: str, record: dict[str, Any] | None) -> None:
        """Keep `record` as the run's (None: remove it). OSError when the folder cannot be written."""
        p = self.path(run_id)
        if record is None:
            p.unlink(missing_ok=True)
        else:
            atomic_write_text(p, json.dumps({"format": FORMAT, "run_id": run_id, **record}, ensure_ascii=False))

    def forget(self, run_id: str) -> None:
        """Remove the run's record, if any (a run deleted). Never raises."""
        try:
            self.write(run_id, None)
        except (OSError, ValueError) as err:
            log.warning("the draft of run %s could not be removed (%s)", str(run_id)[:80], err)


# ---------------------------------------------------------------------------------------------- what a record holds

def _chains_out(beam: frozenset[Any] | None) -> list[Any] | None:
    return None if beam is None else sorted(([start, [list(h) for h in hops]] for start, hops in beam), key=repr)


def _chains_in(raw: Any) -> frozenset[Any] | None:
    """The chains as runner.beam_key makes them ((start, ((relationship, entity) …)) …); ValueError when `raw` holds
    anything else."""
    if raw is None:
        return None
    out = set()
    for item in _list(raw):
        start, hops = _list(item, 2)
        out.add((_atom(start), tuple((_atom(r), _atom(e)) for r, e in (_list(h, 2) for h in _list(hops)))))
    return frozenset(out)


def _list(raw: Any, n: int | None = None) -> list[Any]:
    if not isinstance(raw, list) or (n is not None and len(raw) != n):
        raise ValueError("not a list of the expected length")
    return raw


def _atom(x: Any) -> int | str:
    if isinstance(x, bool) or not isinstance(x, (int, str)):
        raise ValueError("not an id")
    return x


def _ids(raw: Any) -> frozenset[str]:
    if not all(isinstance(x, str) for x in _list(raw)):
        raise ValueError("not a list of ids")
    return frozenset(raw)


def step_mark(ex: Exploration) -> dict[str, Any] | None:
    """The pending step as a record names it (None when no step is pending)."""
    if ex.proposal is None or ex.state.done:
        return None
    step = ex.proposal.step
    return {"steps": len(ex.state.steps), "depth": step.depth, "stage": step.stage,
            "offered": sorted(c.id for c in step.candidates), "chains": _chains_out(beam_key(ex.state))}


def record_of(ex: Exploration, ticks: set[str] | None) -> dict[str, Any] | None:
    """What to keep for the run: the ticks on its pending step (None: nothing pending, the step starts as it would
    anyway) and its earlier branch's ticks; None when there is nothing to keep (a finished run keeps nothing)."""
    if ex.state.done:
        return None
    out: dict[str, Any] = {}
    mark = step_mark(ex)
    if ticks is not None and mark is not None:
        out["pending"] = {**mark, "ids": sorted(ticks)}
    if ex.earlier:
        out["earlier"] = [{"depth": d, "stage": s, "offered": sorted(offered), "kept": sorted(kept),
                           "chains": _chains_out(beam)}
                          for (d, s), (offered, kept, beam) in sorted(ex.earlier.items())]
        out["diverged"] = ex.diverged
    return out or None


def restored(ex: Exploration, record: dict[str, Any] | None) -> tuple[set[str] | None, str]:
    """The ticks a record brings back to the pending step, and "" ; or (None, why) when it holds ticks of another
    step (the run moved on, or its step offers other candidates now); (None, "") when it holds none."""
    pending = (record or {}).get("pending")
    if pending is None:
        return None, ""
    mark = step_mark(ex)
    try:
        if not isinstance(pending, dict) or mark is None:
            raise ValueError("no step pending")
        ids = _ids(pending.get("ids"))
        same = (pending.get("steps"), pending.get("depth"), pending.get("stage")) == (
            mark["steps"], mark["depth"], mark["stage"]) and _ids(pending.get("offered")) == frozenset(
            mark["offered"]) and _chains_in(pending.get("chains")) == beam_key(ex.state)
    except ValueError:
        same, ids = False, frozenset()
    if not same or not ids <= frozenset(mark["offered"] if mark else ()):
        where = (f"depth {pending.get('depth')}, {pending.get('stage')}" if isinstance(pending, dict)
                 and isinstance(pending.get("depth"), int) and isinstance(pending.get("stage"), str) else "a step")
        why = ("the run was finished elsewhere since" if mark is None else
               "this run no longer waits at that step as it was then (it went on elsewhere, or the graph changed), "
               "so the step starts as it would without them")
        return None, f"Your unsaved ticks from before the reload (at {where[:60]}) were not restored: {why}."
    return set(ids), ""


def earlier_of(record: dict[str, Any] | None) -> tuple[Earlier, bool]:
    """Exploration.earlier and .diverged as a record keeps them; ({}, False) when it keeps none or they cannot be
    read."""
    raw = (record or {}).get("earlier")
    if raw is None:
        return {}, False
    try:
        out: Earlier = {}
        for e in _list(raw):
            if not isinstance(e, dict) or isinstance(e.get("depth"), bool) or not isinstance(e.get("depth"), int) \
                    or not isinstance(e.get("stage"), str):
                raise ValueError("not a step")
            out[(e["depth"], e["stage"])] = (_ids(e.get("offered")), _ids(e.get("kept")), _chains_in(e.get("chains")))
    except ValueError:
        return {}, False
    return out, (record or {}).get("diverged") is True
