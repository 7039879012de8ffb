"""The search picture's items, read from a trace: its entities (by GraphRAG id, else title) with their depth, whether
kept, the topic entity's "how", the best score, the entity reached from and a person's overrides; the edges the entity
stages proposed; a pending proposal's candidates; diagnosis marks ("why not X?"); which candidates a person overrode
in a step; and the entity types of everything a trace mentions, read from the graph. frontier.py lays them out and
draws them.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Any
from collections.abc import Iterable

from tog_core.render.style import num, plain


def steps_upto(trace: dict[str, Any], depth: int | None) -> list[dict[str, Any]]:
    """The trace's steps at `depth` or shallower (all of them when None)."""
    steps = trace.get("steps") or []
    return [s for s in steps if depth is None or int(s.get("depth", 0) or 0) <= depth]


def overridden_ids(step: dict[str, Any]) -> set[str]:
    """Ids of the candidates a person overrode in one step: the step's recorded `overrides`; when none are
    recorded but the step carries automatic choices (some `auto_kept` true), candidates whose `kept`
    differs from `auto_kept`."""
    recorded = {str(o.get("id")) for o in step.get("overrides") or [] if isinstance(o, dict)}
    if recorded:
        return recorded
    cands = step.get("candidates") or []
    if not any(c.get("auto_kept") for c in cands):
        return set()
    return {str(c.get("id")) for c in cands if bool(c.get("kept")) != bool(c.get("auto_kept"))}


def trace_entity_types(graph: Any, trace: dict[str, Any], extra_ids: Iterable[str] = ()) -> dict[str, str]:
    """Entity id → type for every entity a trace mentions (seeds, step candidates, chains, the answer candidates'
    chains), read from the graph."""
    ids = {str(s.get("id")) for s in trace.get("seeds") or []} | set(map(str, extra_ids))
    for s in trace.get("steps") or []:
        for c in s.get("candidates") or []:
            ids.update(str(x) for x in (c.get("source_id"), c.get("target_id")) if x)
    chains = [c for c in trace.get("chains") or [] if isinstance(c, list)]
    chains += [c.get("chain") or [] for c in trace.get("candidates") or [] if isinstance(c, dict)]
    for chain in chains:
        for link in chain:
            if isinstance(link, dict):
                ids.update(str(x) for x in (link.get("source_id"), link.get("target_id")) if x)
    out = {}
    for i in ids:
        idx = graph.find(i)
        if idx is not None:
            out[i] = graph.entity(idx).type or ""
    return out


class Entities:
    """Entities of the picture by key (GraphRAG id, else title), in first-seen order."""

    def __init__(self) -> None:
        self.by: dict[str, dict[str, Any]] = {}

    def get(self, key: str, title: str) -> dict[str, Any]:
        if key not in self.by:
            self.by[key] = {"title": title, "depth": None, "kept": False, "seed": None, "best": float("-inf"),
                            "overridden": False, "parent": None, "pending": None, "ref": None, "mark": None,
                            "rel_over": []}
        return self.by[key]


def collect(trace: dict[str, Any], steps: list[dict[str, Any]]) -> tuple[Entities, dict, dict, list[str]]:
    """The picture's entities (the topic entities at depth 0) and edges from `steps`, the relation stages' kept and
    pruned counts per (source entity, depth), and the entities kept by the last entity stage that kept any."""
    ents = Entities()
    for s in trace.get("seeds") or []:
        e = ents.get(str(s.get("id") or s.get("title")), s.get("title", ""))
        e.update(depth=0, kept=True, seed=s.get("how", ""))
    rel_summary: dict[tuple[str, int], list[int]] = defaultdict(lambda: [0, 0])
    edges: dict[tuple[str, str, str], dict[str, Any]] = {}
    rel_kept_by_person: set[tuple[str, str]] = set()
    last_kept: list[str] = []
    for step in steps:
        d = int(step.get("depth", 0) or 0)
        if step.get("stage") == "relations":
            over_rel = overridden_ids(step)
            for c in step.get("candidates") or []:
                src = str(c.get("source_id") or c.get("source_entity"))
                rel_summary[(src, d)][0 if c.get("kept") else 1] += 1
                if str(c.get("id")) in over_rel:  # a person kept or dropped this relation: drawn on its source
                    e = ents.get(src, c.get("source_entity", ""))
                    e["overridden"] = True
                    e["rel_over"].append(("✎ relation kept by a person: " if c.get("kept") else
                                          "✎ relation dropped by a person: ") + plain(c.get("label"), 200))
                    if c.get("kept"):
                        rel_kept_by_person.add((src, str(c.get("label") or "")))
            continue
        if step.get("stage") != "entities":
            continue
        kept_here, over_ids = [], overridden_ids(step)
        for c in step.get("candidates") or []:
            src = str(c.get("source_id") or c.get("source_entity"))
            dst = str(c.get("target_id") or c.get("target") or c.get("label"))
            ents.get(src, c.get("source_entity", ""))["kept"] = True  # only kept entities are expanded
            e = ents.get(dst, c.get("target") or c.get("label", ""))
            kept, over = bool(c.get("kept")), str(c.get("id")) in over_ids
            via_person = (src, str(c.get("relation") or "")) in rel_kept_by_person
            if e["depth"] is None or (kept and not e["kept"]):
                e["depth"], e["parent"] = d, src
            e["kept"] = e["kept"] or kept
            e["overridden"] = e["overridden"] or over
            try:
                e["best"] = max(e["best"], float(c.get("score", 0) or 0))
            except (TypeError, ValueError):
                pass
            if kept:
                kept_here.append(dst)
            key = (src, dst, str(c.get("relation") or ""))
            old = edges.get(key)
            if old is None or (kept and not old["kept"]):
                edges[key] = {"kept": kept, "over": over or via_person, "depth": d, "cand": c, "pending": None,
                              "rel_person": via_person}
        last_kept = kept_here or last_kept
    return ents, rel_summary, edges, last_kept


def add_pending(ents: Entities, edges: dict, pending: dict[str, Any]) -> list[dict[str, Any]]:
    """Add a proposal's candidates (entity stage) to the picture; return its relation candidates."""
    step, choice = pending.get("step") or {}, set(pending.get("choice") or ())
    d = int(step.get("depth", 0) or 0)
    rels = []
    for c in step.get("candidates") or []:
        cid, on = str(c.get("id")), str(c.get("id")) in choice
        src = str(c.get("source_id") or c.get("source_entity"))
        if c.get("kind") == "entity" or c.get("target_id"):
            dst = str(c.get("target_id") or c.get("target") or c.get("label"))
            e = ents.get(dst, c.get("target") or c.get("label", ""))
            if e["depth"] is None or not e["kept"]:
                e.update(depth=d, parent=src, pending=on, ref=cid)
                e["best"] = max(e["best"], float(c.get("score", 0) or 0))
            edges[(src, dst, str(c.get("relation") or ""))] = {"kept": False, "over": False, "depth": d, "cand": c,
                                                               "pending": on}
        elif step.get("stage") == "relations":
            rels.append({"id": cid, "src": src, "label": c.get("label", ""), "on": on, "depth": d,
                         "score": c.get("score"), "reason": c.get("reason", ""), "auto": bool(c.get("auto_kept"))})
    return rels


def add_marks(ents: Entities, marks: Iterable[dict[str, Any]], edges: dict, ghost_col: int) -> list[str]:
    """Diagnosis marks: the expected entity starred in place, or a ghost after the last column."""
    notes = []
    for m in marks:
        key = str(m.get("entity_id") or m.get("title"))
        lost = m.get("lost") or {}
        why = ("in the final beam" if m.get("in_final_beam") else
               "the answer, found by its description" if m.get("answer") else
               f"lost at depth {lost.get('depth')} ({lost.get('stage')}): rank {lost.get('rank')}, score "
               f"{num(lost.get('score'))}, cut-off {num(lost.get('cutoff'))}" if lost.get("rank") else
               ("never a candidate" if m.get("never_candidate") else str(lost.get("stage") or "")))
        if key in ents.by:
            ents.by[key]["mark"] = why
            continue
        if not m.get("entity_id"):
            continue
        e = ents.get(key, m.get("title", ""))
        e.update(depth=ghost_col, mark=why, ghost=True)
        near = m.get("nearest") or {}
        nkey = str(near.get("entity_id") or "")
        if nkey in ents.by:
            e["parent"] = nkey
            edges[(nkey, key, "ghost")] = {"kept": False, "over": False, "depth": ghost_col, "ghost": True,
                                           "cand": {"relation": f"{near.get('hops', '?')} hop(s) away"},
                                           "pending": None}
        notes.append(m.get("title", ""))
    return notes
