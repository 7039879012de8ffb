"""Which two saved runs Compare opens with: the newest two that ask the same question on the same project, since two
runs of different questions rarely share a link (a newcomer's review: Compare paired the newest two runs, whatever
they asked, and only said so). The person can still pick any two; the page says which pair it chose and why.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tog_core.runs.index import same_project


@dataclass(frozen=True, kw_only=True)
class Pair:
    """Run A (the newer) and run B; `same`: they ask the same question on the same project."""

    a: str
    b: str
    same: bool


def _one(p: str | None, q: str | None) -> bool:
    return p == q or bool(p and q and (same_project(p, q) or same_project(q, p)))


def default_pair(rows: Sequence[Mapping[str, Any]], project_of: Mapping[str, str | None]) -> Pair | None:
    """The pair Compare opens with, from `rows` (Saved runs' table rows, newest first, with "run" and "question"):
    of the questions asked at least twice on one project (`project_of`: run id → the project it was made on), the
    pair of runs whose older one is the newest; without one, the newest two runs (`same` False). None with fewer
    than two runs. A question is the same as asked, spaces and line breaks aside (runs.index.same_question)."""
    if len(rows) < 2:
        return None
    seen: dict[str, list[str]] = {}  # a question → its runs so far, newest first
    for r in rows:  # newest first: the first pair completed is the one whose older run is the newest
        run = str(r["run"])
        earlier = seen.setdefault(" ".join(str(r.get("question") or "").split()), [])
        partner = next((x for x in earlier if _one(project_of.get(x), project_of.get(run))), None)
        if partner is not None:
            return Pair(a=partner, b=run, same=True)
        earlier.append(run)
    return Pair(a=str(rows[0]["run"]), b=str(rows[1]["run"]), same=False)
