""""Force X in", the "why not X?" override, free of Streamlit: the run is replayed (replay.py) to the step where the
expected entity was lost, the candidate is kept by a person's override, and every link of the diagnosed route from
there to the entity is kept too (tog/diagnosis.py's `force`), each recorded as the person's override. On Ask the
search then goes on to the end and answers the entity, the search's other candidates after it; on Explore it waits
for the person once the entity is in the beam.
"""
from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

from tog_core.app.replay import replay
from tog_core.app.runner import Exploration
from tog_core.app.session import Settings
from tog_core.runs.files import RunStore, new_run_id
from tog_core.tog.state import FORCED_ANSWER, Proposal, RelChoice, State
from tog_core.tog.trace import Trace

NOT_IN_GRAPH = "forced_entity_not_in_graph"  # the named note of a press whose entity this graph does not hold


def _route_choice(prop: Proposal, route: list[list[str]], at: dict[str, Any], graph: Any) -> set[str]:
    """The candidate that follows the route from where it stands (`at`: {"node", "pos"}; the caller advances it when
    an entity of the route is taken). Evaluate: "continue" while the route is not finished. Relations: a group of the
    node holding the route's relationship, else (that one not offered: cut by the hub pre-filter, as GraphRAG's
    reversed twin of a relationship often is) one leading from the node to the route's entity all the same; entities:
    the route's entity reached from the node. Of several, the one the search keeps anyway, else the best scored."""
    if at["pos"] >= len(route):
        return set()
    if prop.step.stage == "evaluate":
        return {"continue"} & {c.id for c in prop.step.candidates}
    rel_id, ent_id = route[at["pos"]]
    here = [c for c in prop.step.candidates if c.source_id == at["node"]]
    if prop.step.stage == "entities":
        ways = [c for c in here if c.target_id == ent_id]
    else:
        groups = {rc.key: rc for rc in prop.payload if isinstance(rc, RelChoice)}
        ridx, ent = graph.find_relationship(rel_id), graph.find(ent_id)
        ways = [c for c in here if rel_id in (c.relationship_ids or [])
                or (c.id in groups and ridx is not None and ridx in groups[c.id].ridxs)]
        ways = ways or [c for c in here if c.id in groups and ent is not None and ent in groups[c.id].others]
    return {max(ways, key=lambda c: (c.auto_kept, c.score)).id} if ways else set()


def _answer_at(engine: Any, state: State, target_id: str, idx: int | None, missed: str = "") -> State:
    """The state to answer from after forcing an entity in (`target_id`, at `idx` in the graph, None when the graph
    does not hold it): the chains that reach it cut at it (so it is the answer, recorded as a named fallback naming its
    id), the run's other chains kept after them, so the answer list holds the search's other candidates after the
    person's (engine.answer_candidates); when no chain reaches it, the state as it is with the reason recorded:
    `missed`, where the way to it stopped before it was kept, else that it was pruned after it was kept."""
    if idx is None:  # said, not swapped silently for the search's own answer
        note = {"stage": "answer", "fallback": NOT_IN_GRAPH, "wall_s": 0.0,
                "detail": f"the entity forced in ({target_id or 'none named'}) is not in this graph: the answer is the "
                          "search's own"}
        return state.with_(extra_usage=state.extra_usage + (note,))
    name = engine.graph.title(idx)
    cut = [replace(p, hops=p.hops[: next(k for k, h in enumerate(p.hops) if h.dst == idx) + 1])
           for p in state.paths if idx in {h.dst for h in p.hops}]
    cut = list({tuple((h.ridx, h.dst) for h in p.hops): p for p in cut}.values())  # the same prefix once
    if cut:
        others = tuple(p for p in state.paths if idx not in {h.dst for h in p.hops})
        note = {"stage": "answer", "fallback": FORCED_ANSWER, "wall_s": 0.0, "entity_id": engine.graph.entity(idx).id,
                "detail": f"you forced {name} in: the answer is read from the chain(s) that reach it"}
        # the person's entity answers; the depth trials' pool stays aside (policy/answers.person_allowed: their chains
        # did not take the person's choices), in the state for a replay
        return state.with_(stage="answer", paths=tuple(cut) + others, hops_firm=True,
                           extra_usage=state.extra_usage + (note,))
    detail = (f"{name} could not be forced in: {missed}, so it was not kept and the answer is the search's own"
              if missed else f"{name} was forced in, but no kept chain reaches it (pruned later in the search)")
    note = {"stage": "answer", "fallback": "forced_entity_not_reached", "wall_s": 0.0, "detail": detail}
    return state.with_(extra_usage=state.extra_usage + (note,))


def _expected(engine: Any, force: dict[str, Any], route: list[list[str]]) -> tuple[str, int | None, str]:
    """The entity a press forces in: (its id, its index in the graph or None, its title): the force's `entity_id`,
    else (not given, or not in this graph) the route's last entity, else `from_id` when there is no route. When none
    is in the graph: the first id given, None, and "the expected entity" (never the text of the candidate pressed)."""
    ids = [str(i) for i in (force.get("entity_id"), route[-1][1] if route else force.get("from_id")) if i]
    for i in ids:
        if (idx := engine.graph.find(i)) is not None:
            return i, idx, engine.graph.title(idx)
    return (ids[0] if ids else ""), None, "the expected entity"


def _checked(trace: Trace, force: dict[str, Any]) -> tuple[int, str, list[list[str]]]:
    """The force's step, candidate and route, checked before anything is replayed (ValueError naming the field): the
    step one of the run's (or, on a run still waiting, the step it waits at), the route a list of
    [relationship id, entity id] pairs."""
    n = len(trace.steps)
    last = n - 1 if trace.answer else n  # a finished run has no step after its last
    raw = force.get("step")
    step = raw if isinstance(raw, int) and not isinstance(raw, bool) else -1
    if not 0 <= step <= last:
        raise ValueError(f"`step` must be a whole number from 0 to {last} (the run has {n} step(s)), not {raw!r}")
    cand = force.get("candidate_id")
    if not isinstance(cand, str) or not cand:
        raise ValueError(f"`candidate_id` must name a candidate of step {step + 1}, not {cand!r}")
    route = force.get("route") or []
    if not isinstance(route, (list, tuple)):
        raise ValueError(f"`route` must be a list of [relationship id, entity id] pairs, not {route!r}")
    for k, hop in enumerate(route):
        if not (isinstance(hop, (list, tuple)) and len(hop) == 2 and all(isinstance(x, str) and x for x in hop)):
            raise ValueError(f"`route` link {k + 1} must be a pair [relationship id, entity id], not {hop!r}")
    return step, cand, [list(hop) for hop in route]


def _mark_forced(state: State, ids: set[str], name: str) -> None:
    """The overrides of the step just applied that forcing `name` in made: each says so (`"forced"`: the entity's
    title), so the trace records the press as the person's one override, link by link."""
    if state.steps:
        for o in state.steps[-1].overrides:
            if o.get("id") in ids:
                o["forced"] = name


def force_in(engine: Any, settings: Settings, trace: Trace, force: dict[str, Any], store: RunStore | None,
             *, follow: bool = True, model_info: dict[str, Any] | None = None) -> Exploration:
    """A new branch of `trace` (saved after every step): replayed to step `force["step"]`, where
    `force["candidate_id"]` is kept besides what the run kept there (an override, recorded as such). The search then
    keeps, at every later stage, the candidate that continues `force["route"]` (hops [relationship id, entity id]
    from `force["from_id"]`) until the expected entity is kept: each of those choices is the person's override too,
    marked `"forced"` with the entity's title. With `follow` (Ask) the search goes on automatically to the end and
    answers the expected entity; without (Explore) it waits for the person at the stage after the entity was kept.
    A link of the route the stage does not offer (its relationship cut by the hub pre-filter, say) is followed by
    another relation of the same entity leading to the route's next entity when one is offered. When the route
    cannot be followed, Explore waits there and Ask goes on on its own (answering its own answer; the trace's note
    says where the way stopped, never that the entity was forced in): `Exploration.forced` says what was forced and
    what to do next. A malformed `force` (a step the run does not have, a route link that is not
    a pair) raises ValueError naming the field, before anything is replayed."""
    step_index, cand, route = _checked(trace, force)
    states = replay(engine, trace, step_index)
    ex = Exploration(settings=settings, run_id=new_run_id(), states=states, parent_run=trace.run_id or None,
                     branched_at=step_index, model_info=model_info or {})
    saver = ex.saver(engine, store)
    at: dict[str, Any] = {"node": str(force.get("from_id") or ""), "pos": 0}
    recorded = trace.steps[step_index].candidates if step_index < len(trace.steps) else []
    target, tidx, name = _expected(engine, force, route)
    kept_links: list[str] = []
    first, stalled = True, ""
    while not ex.state.done and (first or follow or at["pos"] < len(route)):
        prop = asyncio.run(engine.propose(ex.state))
        offered = {c.id for c in prop.step.candidates}
        forced_ids: set[str] = set()
        if first:
            if cand not in offered:
                raise ValueError(f"“{force.get('label') or cand}” is not a candidate of step {step_index + 1} any more")
            kept = {str(c.id) for c in recorded if c.kept} & offered
            choice = (kept or prop.auto_choice()) | {cand}
            forced_ids = {cand}
            if prop.step.stage == "evaluate":
                choice = {cand}
        else:
            choice = prop.auto_choice()
        # once the way has stopped, nothing more is forced: the search goes on on its own (Ask)
        extra = _route_choice(prop, route, at, engine.graph) if route and not stalled else set()
        if prop.step.stage == "evaluate" and route and at["pos"] >= len(route) and "sufficient" in offered:
            extra = {"sufficient"}  # the route reached the expected entity: answer there
        if route and at["pos"] < len(route) and not extra and not first and not stalled:
            stalled = _stall_words(prop, route, at, engine)
            if not follow:
                break  # Explore: the person takes it from here, told where the route stopped
        if prop.step.stage == "evaluate" and extra:
            choice = extra
        else:
            choice |= extra
        forced_ids |= extra
        if prop.step.stage == "entities" and extra:
            at["node"], at["pos"] = route[at["pos"]][1], at["pos"] + 1
        ex.states.append(engine.apply(ex.state, prop, choice))
        _mark_forced(ex.state, forced_ids, name)
        kept_links += [f"“{_short(c.label)}” (depth {prop.step.depth}, {prop.step.stage})"
                       for c in prop.step.candidates if c.id in forced_ids and c.id in choice and not c.auto_kept]
        saver.save(ex.state)
        first = False
    reached = tidx is not None and any(tidx in {h.dst for h in p.hops} for p in ex.state.paths)
    ended = not follow and ex.state.stage == "answer"  # Explore: the forced step ended the search (its last depth)
    # why X is not in the beam when the way to it was not followed to the end: said, never "X was forced in"
    missed = stalled or ("" if at["pos"] >= len(route) else
                         f"the search ended at depth {ex.state.depth} before the way reached {name}")
    if follow or ended:
        ex.states.append(asyncio.run(engine.answer(_answer_at(engine, ex.state, target, tidx, missed))))
        saver.save(ex.state)
        ex.stop_clock()
    ex.forced = _forced_words(name, kept_links, stalled, reached=reached, ended=ended, answered=follow,
                              missed=missed)
    if tidx is None:  # said plainly; the answer (if written) is the search's own, with NOT_IN_GRAPH in the trace
        ex.forced = (f"The entity to force in ({target or 'no id given'}) is not in this project's graph, so it cannot "
                     f"be forced in" + ("; the answer is the search's own. " if follow or ended else ". ") + ex.forced)
    return ex


def _short(label: str, most: int = 80) -> str:
    """A candidate's label for a sentence: a GraphRAG relation's whole description cut to its first words."""
    return label if len(label) <= most else label[: most - 1].rstrip() + "…"


def _stall_words(prop: Proposal, route: list[list[str]], at: dict[str, Any], engine: Any) -> str:
    """Where the route to the forced entity stopped, in words: the link the stage no longer offers."""
    ent = engine.graph.find(route[at["pos"]][1])
    where = engine.graph.title(ent) if ent is not None else route[at["pos"]][1]
    return f"at depth {prop.step.depth} ({prop.step.stage}) the way on towards {where} is not offered"


def _forced_words(name: str, links: list[str], stalled: str, *, reached: bool, ended: bool = False,
                  answered: bool = False, missed: str = "") -> str:
    """What a press of "Force X in" did, for the page: the links it kept, whether X is in the beam, what next
    (`answered`: Ask went on to the answer; `missed`: where the way to X stopped before X was kept)."""
    kept = f"kept {'; '.join(links)}" if links else "kept what the run had kept there"
    if answered and not reached:
        return (f"Forcing {name} in {kept}; then " + (missed or "no kept chain reached it (pruned later)")
                + f", so {name} is not in the beam: the search went on without it and the answer is its own.")
    if stalled:
        return (f"Forcing {name} in {kept}; then {stalled}, so the search waits here: tick the candidate that leads "
                f"to {name} (ask “Why not …?” again to see it), or press Auto-finish.")
    if ended:
        return (f"Forcing {name} in {kept}; that ended the search, so it answers from there"
                + (f" with {name}, your answer." if reached else "."))
    if reached:
        return f"Forcing {name} in {kept}: {name} is in the beam now. Your overrides are listed below."
    return f"Forcing {name} in {kept}."
