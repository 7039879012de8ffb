"""Relation groups (stage 1 of Algorithm 1, stages.py): a frontier entity's open edges grouped by label and
direction, built in one pass over plain lists, and a hub's groups kept for the next search that reaches it. Also
`best_first`, the order a stage ranks a hub's candidates in. A hub (bench/hub.py: 200,000 edges, each its own
group) is why these are not loops over numpy scalars."""
from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np

from tog_core.tog.state import RelChoice


def relation_groups(ctx: Any, i: int, rels: np.ndarray, others: np.ndarray, outs: np.ndarray) -> list[RelChoice]:
    """The groups of path i's open edges (`rels`, `others`, `outs`, already filtered): one per (label, direction),
    in order of first appearance, each with its edges in order; texts written by the policy of `ctx` (the engine)."""
    group_of: dict[tuple[str, bool], int] = {}
    which = [group_of.setdefault(k, len(group_of)) for k in zip(ctx.graph.labels(rels), outs.astype(bool).tolist())]
    rl, ol = rels.tolist(), others.tolist()
    if len(group_of) == len(rl):  # every edge its own group (free-text relations: the usual case)
        members: Any = ((k,) for k in range(len(rl)))
    else:
        order = np.argsort(np.asarray(which), kind="stable").tolist()
        ends = np.cumsum(np.bincount(which)).tolist()
        members = (order[a:b] for a, b in zip([0, *ends[:-1]], ends))
    text = ctx.policy.relation_text
    out = []
    for (lab, outgoing), poss in zip(group_of, members):
        ridxs = tuple([rl[q] for q in poss])
        out.append(RelChoice(path=i, key=f"p{i}|{'>' if outgoing else '<'}|{lab[:80]}|{ridxs[0]}", ridxs=ridxs,
                             others=tuple([ol[q] for q in poss]), score=0.0, label=lab,
                             text=text(ctx, lab, ridxs[0])))
    return out


def best_first(values: Sequence[float]) -> list[int]:
    """Positions by value, highest first, ties by position (a hub's 200,000 scores: one numpy sort)."""
    return np.argsort(-np.asarray(values, dtype=float), kind="stable").tolist()


class HubGroups:
    """The relation groups of the last hub (a frontier entity with at least KEPT_FROM open edges), kept for the next
    search that reaches it with the same edges open: policy/depths.py runs up to four searches per question from
    the same topic (building 200,000 groups takes about a second). One entry, keyed by the path's position, the
    entity and which of its edges are open, for one graph and one policy (which writes the relation texts); it is
    held only while both live."""

    KEPT_FROM = 5_000

    def __init__(self) -> None:
        self._entry: tuple[Any, ...] = ()  # (graph ref, policy ref, key, groups)

    def get(self, graph: Any, policy: Any, key: tuple[Any, ...]) -> list[RelChoice] | None:
        entry = self._entry
        if entry and entry[0]() is graph and entry[1]() is policy and entry[2] == key:
            return list(entry[3])
        return None

    def put(self, graph: Any, policy: Any, key: tuple[Any, ...], groups: list[RelChoice]) -> None:
        try:
            refs = (weakref.ref(graph, self._forget), weakref.ref(policy, self._forget))
        except TypeError:  # a store that cannot be weakly referenced is not remembered
            return
        self._entry = (*refs, key, tuple(groups))

    def _forget(self, ref: weakref.ref) -> None:
        if self._entry and ref in self._entry[:2]:
            self._entry = ()


HUB_GROUPS = HubGroups()
