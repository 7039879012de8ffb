""""Why not X?": where an expected entity left the search, as a pure function of a trace dict and the graph.

    diagnosis = diagnose(trace, ["Pell Ardent"], graph)     # the trace's "diagnosis" field (DESIGN.md)
    print(diagnosis_text(diagnosis))                        # the same in words (query --expect)

For each expected title one entry:
  {"title", "entity_id", "found", "in_final_beam", "never_candidate",
   "lost": {"depth", "stage", "rank", "of", "score", "cutoff", "step", "label", "note"} | None,
   "nearest": {"entity", "entity_id", "depth", "hops", "route": [titles], "relation"} | None,
   "force": {"step", "candidate_id", "label", "from_id", "route": [[relationship_id, entity_id], ...],
             "entity_id" (the expected entity: the forced run answers it when a chain reaches it),
             "action" (when the override is a verdict, what it does)} | None,
   "did_you_mean": [titles], "ranked": {"place", "of", "why"} | None (where the answer list placed it),
   "found_by": "description" | "text" | "" (on the answer list only, found by its description or in the source
   text: tog/choice.FOUND_HOW), "answer": True (it is the answer, found that way: nothing was lost)}
* in the final beam: on a chain of the trace; nothing was lost.
* a candidate that was pruned: `lost` is the last step where it was a candidate and not kept: its rank among
  the candidates competing for the same places (the whole step for entities, the same path for relations;
  1 = best), their number, its score, and the cut-off (the lowest score kept there).
* kept once, gone later: lost where the run judged the chains not yet sufficient (the evaluate step of that
  depth; forcing "sufficient" answers there), else where every path through it was pruned.
* never a candidate: the graph is searched outwards from X for the nearest entity the run reached (topic
  entities and kept candidates; the deepest when several are as near); `lost` is where the first hop of that
  route was dropped (the relation or the entity candidate), or why it was never offered (max depth, stopped
  as sufficient, cut before scoring by the pre-filter or the degree filter).
`force` names the candidate whose override would put the route back (app/force.force_in applies it); None when the
route needs more hops than the run's maximum depth (no override within it reaches X: its note says the depth).
"""
from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable
from typing import Any

from tog_core.tog.choice import found_chain, found_of, found_words, without_place

def _found_by(d: dict[str, Any]) -> str:
    """An entry's "found_by"; a diagnosis stored before it (a trace's `diagnosis`) said `by_description`."""
    return str(d.get("found_by") or ("description" if d.get("by_description") else ""))


MAX_HOPS = 6  # how far from X the nearest reached entity is looked for
MAX_VISITS = 50_000  # graph entities visited at most per expected title


def _rank(cands: list[dict[str, Any]], c: dict[str, Any]) -> tuple[int, int, float | None]:
    """(rank of c by score among cands, 1 = best; how many; the cut-off: lowest score kept among cands)."""
    s = float(c.get("score") or 0.0)
    rank = 1 + sum(1 for o in cands if float(o.get("score") or 0.0) > s)
    kept = [float(o.get("score") or 0.0) for o in cands if o.get("kept")]
    return rank, len(cands), (min(kept) if kept else None)


def _lost(steps: list[dict[str, Any]], i: int, c: dict[str, Any], note: str = "") -> dict[str, Any]:
    step = steps[i]
    group = step.get("candidates") or []
    if step.get("stage") == "relations":  # relations compete per beam path
        group = [o for o in group if o.get("path") == c.get("path")]
    rank, of, cutoff = _rank(group, c)
    score = float(c.get("score") or 0.0)
    if cutoff is not None and not c.get("kept") and round(score, 6) == round(cutoff, 6):
        reason = str(c.get("reason") or "")
        tie = ("tied with the cut-off and not kept: " + (reason.split(";")[0] if reason.startswith("tied at")
                                                        else "ties go by the order the graph lists them in"))
        note = f"{tie}; {note}" if note else tie
    return {"depth": step.get("depth"), "stage": step.get("stage"), "rank": rank, "of": of,
            "score": round(float(c.get("score") or 0.0), 6), "cutoff": None if cutoff is None else round(cutoff, 6),
            "step": i, "label": str(c.get("label") or ""), "note": note}


def _reached(trace: dict[str, Any]) -> dict[str, int]:
    """Entity id → the shallowest depth at which the run had it in its beam (topic entities: 0)."""
    out = {str(s.get("id")): 0 for s in trace.get("seeds") or []}
    for step in trace.get("steps") or []:
        if step.get("stage") != "entities":
            continue
        for c in step.get("candidates") or []:
            t = str(c.get("target_id") or "")
            if c.get("kept") and t and t not in out:
                out[t] = int(step.get("depth") or 0)
    return out


def _route(graph: Any, target: int, reached: dict[str, int]) -> tuple[int, list[tuple[int, int]]] | None:
    """Breadth-first from the target: the nearest reached entity (deepest among equally near) and the hops
    (relationship index, entity index) that lead from it to the target."""
    by_idx = {}
    for eid, d in reached.items():
        i = graph.find(eid)
        if i is not None:
            by_idx[i] = d
    parent: dict[int, tuple[int, int] | None] = {target: None}
    frontier, hops = deque([target]), 0
    while frontier and hops < MAX_HOPS and len(parent) < MAX_VISITS:
        found = [v for v in frontier if v in by_idx and v != target]
        if found:
            best = max(found, key=lambda v: (by_idx[v], -found.index(v)))
            path, v = [], best
            while (link := parent[v]) is not None:
                rel, nxt = link
                path.append((rel, nxt))
                v = nxt
            return best, path
        nxt_frontier: deque[int] = deque()
        for v in frontier:
            ridx, others, _ = graph.neighbors(v)
            for r, o in zip(ridx.tolist(), others.tolist()):
                if o not in parent:
                    parent[o] = (r, v)
                    nxt_frontier.append(o)
        frontier, hops = nxt_frontier, hops + 1
    found = [v for v in frontier if v in by_idx and v != target]
    if found:
        return _route(graph, target, {graph.entity(v).id: by_idx[v] for v in found})
    return None


def _resolve(graph: Any, title: str) -> tuple[int | None, list[str]]:
    idx = graph.find_title(title.strip()) if title.strip() else None
    if idx is None and title.strip():
        idx = graph.find(title.strip())
    if idx is not None:
        return idx, []
    from tog_core.tog.linking import search_entities

    return None, [t for _, t, s in search_entities(graph, title, limit=5) if s >= 70][:5]


def _never(trace: dict[str, Any], graph: Any, idx: int, entry: dict[str, Any]) -> None:
    """X was never a candidate: the nearest reached entity, and where the route from it was cut."""
    steps = trace.get("steps") or []
    reached = _reached(trace)
    found = _route(graph, idx, reached)
    if found is None:
        entry["lost"] = {"depth": None, "stage": "unreachable", "rank": None, "of": None, "score": None,
                         "cutoff": None, "step": None, "label": "",
                         "note": f"not within {MAX_HOPS} hops of anything the search reached"}
        return
    near, path = found
    near_e = graph.entity(near)
    dn = reached[near_e.id]
    route_titles = [near_e.title] + [graph.title(e) for _, e in path]
    rel0, ent0 = path[0]
    rel0_id = graph.relationship(rel0).id
    ent0_id = graph.entity(ent0).id
    entry["nearest"] = {"entity": near_e.title, "entity_id": near_e.id, "depth": dn, "hops": len(path),
                        "route": route_titles, "relation": graph.relationship(rel0).description or
                        graph.relationship(rel0).label}
    route = [[graph.relationship(r).id, graph.entity(e).id] for r, e in path]
    max_depth = int((trace.get("config") or {}).get("depth") or 0)
    need = dn + len(path)
    too_deep = bool(max_depth and need > max_depth)  # no override within this run's depth reaches it
    far = f"; reaching it needs depth {need}" + (
        f" (this run: {max_depth}; search again with a maximum depth of {need} or more)" if too_deep else "")
    for i in range(len(steps) - 1, -1, -1):  # the entity of the first hop offered and pruned
        s = steps[i]
        if s.get("stage") == "entities" and int(s.get("depth") or 0) == dn + 1:
            for c in s.get("candidates") or []:
                if str(c.get("target_id")) == ent0_id and str(c.get("source_id")) == near_e.id and not c.get("kept"):
                    entry["lost"] = _lost(steps, i, c, f"{route_titles[1]} was pruned{far}")
                    entry["force"] = None if too_deep else {
                        "step": i, "candidate_id": c["id"], "label": route_titles[1], "route": route[1:],
                        "from_id": ent0_id, "entity_id": graph.entity(idx).id}
                    return
    for i in range(len(steps) - 1, -1, -1):  # the relation of the first hop offered and pruned
        s = steps[i]
        if s.get("stage") == "relations" and int(s.get("depth") or 0) == dn + 1:
            for c in s.get("candidates") or []:
                if rel0_id in (c.get("relationship_ids") or []) and not c.get("kept"):
                    entry["lost"] = _lost(steps, i, c, f"the relation towards {route_titles[1]} was pruned{far}")
                    entry["force"] = None if too_deep else {
                        "step": i, "candidate_id": c["id"], "label": c.get("label", ""), "route": route,
                        "from_id": near_e.id, "entity_id": graph.entity(idx).id}
                    return
    base = {"rank": None, "of": None, "score": None, "cutoff": None, "label": ""}
    for i in range(len(steps) - 1, -1, -1):  # offered, but ranked below the candidates the trace kept (a hub)
        s = steps[i]
        hidden = [x for x in s.get("not_shown") or [] if str(x.get("source_id")) == near_e.id]
        if s.get("stage") == "relations" and int(s.get("depth") or 0) == dn + 1 and hidden:
            x = hidden[0]
            group = [c for c in s.get("candidates") or [] if c.get("path") == x.get("path")]
            _, of, cutoff = _rank(group, {"score": 0.0})
            n = int(x.get("shown") or len(group)) + int(x.get("count") or 0)
            entry["lost"] = {**base, "depth": dn + 1, "stage": "relations", "step": i, "of": n,
                             "cutoff": cutoff,
                             "score": x.get("best_score"),
                             "note": f"the relation towards {route_titles[1]} ranked below the "
                                     f"{int(x.get('shown') or len(group))} best of {n} relations of {near_e.title} "
                                     f"the trace keeps (its score at most {x.get('best_score')}){far}"}
            return
    depths_run = [int(s.get("depth") or 0) for s in steps]
    if max_depth and dn + 1 > max_depth:
        entry["lost"] = {**base, "depth": dn + 1, "stage": "max_depth", "step": None,
                         "note": f"{near_e.title} was reached at the last depth ({max_depth}){far}"}
        return
    evals = [i for i, s in enumerate(steps) if s.get("stage") == "evaluate" and int(s.get("depth") or 0) == dn
             and any(c.get("id") == "sufficient" and c.get("kept") for c in s.get("candidates") or [])]
    if evals:
        i = evals[0]
        entry["lost"] = {**base, "depth": steps[i].get("depth"), "stage": "evaluate", "step": i,
                         "note": "the chains were judged sufficient, so the search stopped before reaching it" + far}
        if not too_deep and any(c.get("id") == "continue" for c in steps[i].get("candidates") or []):
            entry["force"] = {"step": i, "candidate_id": "continue", "label": "search one level deeper",
                              "route": route, "from_id": near_e.id, "entity_id": graph.entity(idx).id}
        return
    limit = (trace.get("config") or {}).get("max_candidates", "K")
    if dn + 1 in depths_run:
        entry["lost"] = {**base, "depth": dn + 1, "stage": "relations", "step": None,
                         "note": f"the relation towards {route_titles[1]} was cut before scoring (hub pre-filter, "
                                 f"degree filter or the {limit}-candidate limit){far}"}
        return
    if not trace.get("stop_reason") and not trace.get("answer"):  # still going (Explore waits for the person)
        entry["lost"] = {**base, "depth": dn + 1, "stage": "not reached yet", "step": None,
                         "note": f"the search has not gone past depth {dn} yet: continue it, and it may still reach "
                                 f"{route_titles[-1]}{far}"}
        return
    entry["lost"] = {**base, "depth": dn + 1, "stage": trace.get("stop_reason") or "stopped", "step": None,
                     "note": f"the search ended ({trace.get('stop_reason') or 'unfinished'}) before depth "
                             f"{dn + 1}{far}"}


def diagnose(trace: dict[str, Any], expected: Iterable[str], graph: Any) -> list[dict[str, Any]]:
    """One entry per expected title (see the module docstring). Pure: reads the trace and the graph only."""
    steps = trace.get("steps") or []
    chain_ids = [{str(x) for link in chain for x in (link.get("source_id"), link.get("target_id"))}
                 for chain in trace.get("chains") or [] if chain]
    seed_ids = {str(s.get("id")) for s in trace.get("seeds") or []}
    out = []
    for title in [t for t in expected if str(t).strip()]:
        idx, similar = _resolve(graph, str(title))
        entry: dict[str, Any] = {"title": str(title).strip(), "entity_id": None, "found": idx is not None,
                                 "in_final_beam": False, "never_candidate": True, "lost": None, "nearest": None,
                                 "force": None, "did_you_mean": similar}
        out.append(entry)
        entry["ranked"] = _ranked(trace, entry["title"], idx, graph)
        if idx is None:
            continue
        e = graph.entity(idx)
        entry.update(title=e.title, entity_id=e.id)
        # on the answer list only, found off the kept chains (by its description or in the source text): no step of
        # the search had it
        entry["found_by"] = next((found_of(c) for c in trace.get("candidates") or [] if isinstance(c, dict)
                                  and str(c.get("entity_id")) == e.id and found_of(c)), "")
        entry["by_description"] = entry["found_by"] == "description"  # the key before found_by, kept for readers
        if entry["found_by"] and trace.get("answer_entity") == e.title:
            entry["never_candidate"], entry["answer"] = False, True  # the answer itself: nothing was lost
            continue
        occ = [(i, c) for i, s in enumerate(steps) if s.get("stage") == "entities"
               for c in s.get("candidates") or [] if str(c.get("target_id")) == e.id]
        entry["never_candidate"] = not occ and e.id not in seed_ids
        on_chain = [k for k, ids in enumerate(chain_ids) if e.id in ids]
        if on_chain:
            entry["in_final_beam"] = True
            entry["chain"] = on_chain[0] + 1
            continue
        kept = [(i, c) for i, c in occ if c.get("kept")]
        if kept or e.id in seed_ids:
            d = int(steps[kept[-1][0]].get("depth") or 0) if kept else 0
            ev = next((i for i, s in enumerate(steps) if s.get("stage") == "evaluate" and int(s.get("depth") or 0) == d
                       and any(c.get("id") == "continue" and c.get("kept") for c in s.get("candidates") or [])), None)
            if ev is not None:
                entry["lost"] = {"depth": d, "stage": "evaluate", "rank": None, "of": None, "score": None,
                                 "cutoff": None, "step": ev, "label": "",
                                 "note": f"in the beam at depth {d}, but the chains were judged not yet sufficient; "
                                         "its paths were pruned deeper"}
                entry["force"] = {"step": ev, "candidate_id": "sufficient", "label": e.title, "route": [],
                                  "from_id": e.id, "entity_id": e.id, "action": f"answer at depth {d}"}
                continue
            ext = [(i, c) for i, s in enumerate(steps) if s.get("stage") == "entities"
                   and int(s.get("depth") or 0) == d + 1 for c in s.get("candidates") or []
                   if str(c.get("source_id")) == e.id]
            if ext:
                i, c = min(ext, key=lambda ic: -float(ic[1].get("score") or 0))
                entry["lost"] = _lost(steps, i, c, f"in the beam at depth {d}; every path through it was pruned "
                                                   f"at depth {d + 1}")
            continue
        if occ:
            i, c = occ[-1]
            entry["lost"] = _lost(steps, i, c)
            entry["force"] = {"step": i, "candidate_id": c["id"], "label": e.title, "route": [], "from_id": e.id,
                              "entity_id": e.id}
            continue
        _never(trace, graph, idx, entry)
    return out


def _ranked(trace: dict[str, Any], title: str, idx: int | None, graph: Any) -> dict[str, Any] | None:
    """Where the ordered answer list placed the entity, and why (its `why`): {"place", "of", "why"}; None when it is
    not on the list (or is the answer)."""
    cands = [c for c in trace.get("candidates") or [] if isinstance(c, dict)]
    key = graph.entity(idx).id if idx is not None else None
    at = next((k for k, c in enumerate(cands)
               if (key is not None and str(c.get("entity_id")) == str(key)) or c.get("title") == title), None)
    if not at:  # not on the list, or first (the answer)
        return None
    why = str(cands[at].get("why") or "")
    # the trace keeps the first few of the ranked candidates: the whole ranking's count is in the `why` it wrote
    ranked = re.match(r"ranked \d+ of (\d+) candidates", why)
    return {"place": at + 1, "of": int(ranked.group(1)) if ranked else len(cands), "why": without_place(why)}


def _num(x: Any) -> str:
    return "–" if x is None else f"{float(x):.3f}"


def diagnosis_text(diagnosis: list[dict[str, Any]]) -> str:
    """The diagnosis in words, one paragraph per expected entity (what `query --expect` prints)."""
    out = []
    for d in diagnosis:
        t = d["title"]
        if not d.get("found"):
            alt = ", ".join(d.get("did_you_mean") or [])
            out.append(f"{t}: not an entity of this project" + (f" (did you mean: {alt})" if alt else "") + ".")
            continue
        r = d.get("ranked")
        placed = (f" The answer list places it {r['place']} of {r['of']}" + (f": {r['why']}" if r.get("why") else "")
                  + ".") if r else ""
        if d.get("in_final_beam"):
            out.append(f"{t}: in the final beam (chain {d.get('chain', 1)}).{placed}")
            continue
        if d.get("answer"):
            out.append(f"{t}: the answer, {found_words(_found_by(d))}: no chain the search kept reaches it, "
                       f"and its chain is {found_chain(_found_by(d))}.")
            continue
        # "never a candidate" of the search: the answer list may still hold it (found off the kept chains)
        never = (f"never a candidate of the search (the answer list holds it, {found_words(_found_by(d))})."
                 if _found_by(d) else "never a candidate.")
        words = [f"{t}: " + (never if d.get("never_candidate") else "was a candidate but is not in the final beam.")]
        n = d.get("nearest")
        if n:
            words.append(f"Nearest point reached: {n['entity']} (depth {n['depth']}), {n['hops']} hop(s) away: "
                         + " → ".join(n["route"]) + ".")
        lost = d.get("lost")
        if lost:
            if lost.get("rank") is not None:
                words.append(f"Lost at depth {lost['depth']} ({lost['stage']}): “{lost['label']}” ranked "
                             f"{lost['rank']} of {lost['of']}, score {_num(lost['score'])}, cut-off "
                             f"{_num(lost['cutoff'])}.")
            elif lost.get("stage") == "not reached yet":
                words.append(f"Not reached yet: depth {lost.get('depth')} is still to come.")
            else:
                words.append(f"Lost at depth {lost.get('depth')} ({lost.get('stage')}).")
            if lost.get("note"):
                words.append(lost["note"][0].upper() + lost["note"][1:] + ".")
        f = d.get("force")
        if f:
            # the step by its number in the run and, where the diagnosis has them, its depth and stage (the page
            # shows steps by depth and stage, not by number)
            at = f"step {f['step'] + 1}" + (f": depth {lost['depth']}, {lost['stage']}"
                                            if lost and lost.get("step") == f["step"] else "")
            if f.get("action"):
                words.append(f"Override to try: {f['action']} with “{f['label']}” ({at}).")
            else:
                words.append(f"Override to try: keep “{f['label']}” ({at}).")
        out.append(" ".join(words) + placed)
    return "\n".join(out)
