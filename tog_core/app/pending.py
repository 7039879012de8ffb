"""A person's ticks on Explore's step still to apply, kept with the run so that a reload brings them back; and the
ticks of the branch a "Back to depth" went back from (runner.Exploration.earlier), kept the same way.

One small JSON record per run, kept where the runs are (runs/drafts.py): a file `<runs folder>/.drafts/<run id>.json`
next to the run store's files (the person's own folder when runs are kept per person, app/owner.py), or, with a
PostgreSQL run store, a row of tog.run_drafts (the person's own when runs are kept per person), so a reload that lands
on another replica of a deployment brings the ticks back; while PostgreSQL cannot be reached, the files, as for the
runs. The run itself is never written here, and no run store lists a draft.

A record holds

* `pending`: the step it was made on — the steps taken, depth, stage, the candidate ids offered and the chains they
  were offered on (runner.beam_key) — and the ids the person ticked; a record whose step is not the run's pending
  step (the run went on elsewhere, the graph changed) brings nothing back (`restored`, which says why);
* `earlier` and `diverged`: Exploration.earlier and .diverged, while the branch has them.

It is removed once nothing is left in it: the step applied with nothing earlier to keep, the run finished, or the
run deleted. A record that cannot be read is no record (never an error). Streamlit-free: explorer/drafts.py draws.
"""
from __future__ import annotations

from typing import Any

from tog_core.app.runner import Exploration, beam_key

Earlier = dict[tuple[int, str], tuple[frozenset[str], frozenset[str], frozenset[Any] | None]]


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
