"""The stages of ToG's Algorithm 1, in the paper's order, as ToGEngine proposes them one at a time (engine.py owns the
loop: start / propose / apply / answer). For each depth:

1. relation exploration (`_groups`): the relation groups (one label, one direction) of every frontier entity, the
   edges the walk may take (`open_edges`, edges.py);
2. relation pruning (`_propose_relations`): the scorer rates each entity's groups, the beam keeps the top N (the
   policy's `relations_kept`: N in the paper);
3. entity exploration (`_propose_entities`): the entities behind the kept relations;
4. entity pruning: relation score x entity score per candidate, the beam keeps the top N paths of the frontier;
5. reasoning (`_propose_evaluate`): the judge says whether the chains suffice; if not, one depth more.

Every cut is `beam_cut`. Each behaviour the paper does not have is a named EngineConfig departure (state.py), each
decision it leaves to the LLM a policy extension point (policy.py). Fast mode (fast.py) is not the paper's.
"""
from __future__ import annotations

import asyncio
from collections import OrderedDict
from typing import Any
from collections.abc import Sequence

import numpy as np

from tog_core.llm.usage import Usage
from tog_core.scoring.scorers import ScoreRequest, ScoreResult
from tog_core.prompting import prompts
from tog_core.prompting.parsing import parse_sufficient
from tog_core.tog.edges import EdgeRules
from tog_core.tog.groups import HUB_GROUPS, best_first, relation_groups
from tog_core.tog.policy import llm_judges, uses_llm
from tog_core.tog.state import BeamPath, Hop, Proposal, RelChoice, State
from tog_core.tog.trace import Candidate, Step, shown_in_trace

FALLBACK_EVALUATE_LLM_ERROR = "evaluate_llm_error_continue"  # evaluation call failed: keep searching


def beam_cut(rank: Sequence[tuple[float, ...]], width: int | None, reach: Sequence[int] | None = None) -> set[int]:
    """The beam: the positions of the `width` best candidates by `rank` (smallest first, ties by position; all of
    them when width is None or 0). With `reach`, the entity each candidate leads to, only the best candidate of
    each entity counts (the distinct_entities departure: a second route to a kept entity would waste a slot)."""
    top: set[int] = set()
    reached: set[int] = set()
    for k in sorted(range(len(rank)), key=lambda k: (rank[k], k)):
        if width and len(top) >= width:
            break
        if reach is not None and reach[k] in reached:
            continue
        top.add(k)
        if reach is not None:
            reached.add(reach[k])
    return top


def _begins(route: BeamPath, p: BeamPath) -> bool:
    """Whether chain `p` is the beginning of `route` (maybe all of it, maybe none of its hops): the same start and
    entities in the same order (a relationship's reversed twin takes the same way)."""
    return (p.start == route.start and len(p.hops) <= len(route.hops)
            and all(a.dst == b.dst for a, b in zip(p.hops, route.hops)))


def route_next(route: BeamPath, p: BeamPath) -> Hop | None:
    """The hop `route` takes after chain `p` when `p` is its beginning, else None (nor after the whole route)."""
    return route.hops[len(p.hops)] if len(p.hops) < len(route.hops) and _begins(route, p) else None


def on_route(route: BeamPath, p: BeamPath) -> bool:
    """Whether chain `p` is the beginning of `route` (at least one hop of it)."""
    return bool(p.hops) and _begins(route, p)


class StageProposals(EdgeRules):
    """The stages of ToG's Algorithm 1 as ToGEngine proposes them (see engine.py), in the paper's order."""

    # graph, config and the policy: declared on EdgeRules
    llm: Any
    relation_scorer: Any
    entity_scorer: Any
    prefilter: Any
    _chain_texts: Any  # texts.py
    _hop_label: Any
    entity_text: Any

    # ------------------------------------------------------------------ 1. relation exploration
    def _groups(self, state: State, i: int, nbrs: dict[int, Any] | None = None) -> list[RelChoice]:
        p = state.paths[i]
        rels, others, outs = (nbrs or {}).get(p.end) or self.graph.neighbors(p.end)
        if len(rels) == 0:
            return []
        planned = self.last_depth(state)
        keep = self.open_edges(p, rels, others, outs, planned, self.topic_ids(state))
        on_the_way = state.depth < planned and len(others)
        needed = on_the_way and (self.config.degree_filter or self.config.dead_end_filter)
        degree = self.graph.degrees_of(others) if needed else None  # one light round trip on a server store
        if self.config.degree_filter and on_the_way:
            # whales: on the way (not at the last hop, where a hub may well be the answer) skip neighbours far
            # more connected than the topic entities, e.g. a year or a genre shared by thousands of films
            limit = self.config.degree_factor * self.graph.degrees_of([x.start for x in state.paths]).max()
            small = np.asarray(degree) <= limit
            if (keep & small).any():  # where every way on is a whale, the path goes through one rather than end
                keep &= small
        if (self.config.dead_end_filter and on_the_way and not self.graph.has_relation_labels
                and (self.config.exact_depth or state.hops is not None)):
            # dead ends on the way to a known depth: on a GraphRAG graph a neighbour whose every edge joins it to this
            # entity can only be left back to it (a reversed duplicate is the same edge), so its chain cannot
            # reach the depth; it would hold a beam slot and end short ("Monday is the day the tailor was fined"
            # beside "the Lord Mayor fined the tailor" for "where does the official who fined the tailor live").
            # Chain Hits@1, bm25 / embedding, gold seeds at depth = hops: Christmas Carol 0.675 / 0.725 -> 0.700 /
            # 0.700, dev2 0.833 / 0.767 -> 0.833 / 0.800; linked, depth 3: Christmas Carol 0.600 / 0.475 -> 0.575 /
            # 0.525, dev2 0.500 / 0.533 -> 0.500 / 0.567; the other sets unchanged (each loss is one question whose
            # beam reordered). Not on a typed graph, where X -children-> Y, Y -parents-> X is a round trip a question
            # may ask for
            _, back, n_back = np.unique(others, return_inverse=True, return_counts=True)
            onward = np.asarray(degree) > n_back[back]
            if (keep & onward).any():  # where every way ends short, the longest of them still says the most
                keep &= onward
        remembered = int(keep.sum()) >= HUB_GROUPS.KEPT_FROM
        key = (i, int(p.end), keep.tobytes()) if remembered else None
        if key is not None and (hit := HUB_GROUPS.get(self.graph, self.policy, key)) is not None:
            return hit
        out_groups = relation_groups(self, i, rels[keep], others[keep], outs[keep])
        if key is not None:
            HUB_GROUPS.put(self.graph, self.policy, key, out_groups)
        return out_groups

    # ------------------------------------------------------------------ 2. relation pruning
    async def _propose_relations(self, state: State) -> Proposal:
        cfg = self.config
        chains = self._chain_texts(state.paths)
        limit = cfg.max_candidates if cfg.hub_prefilter else None
        nbrs = self.graph.neighbors_many(sorted({p.end for p in state.paths}))  # one round trip for the frontier

        async def one(i: int) -> tuple[list[RelChoice], ScoreResult | None, list[float], list[str], list[str], str]:
            groups = self._groups(state, i, nbrs)
            title = self.graph.title(state.paths[i].end)
            if not groups:
                return [], None, [], [], [], f"{title}: dead end"
            foc, rest = self.policy.relation_query(self, state, i)
            evidence = self.policy.relation_evidence(self, groups)
            req = ScoreRequest(question=state.question, stage="relations", anchor=title,
                               texts=[f"{g.text} {ev}" if ev else g.text for g, ev in zip(groups, evidence)],
                               chains=chains, focus=foc, rest=rest)
            chosen, pre = await self._prefiltered(req, limit)
            sub = ScoreRequest(question=req.question, stage="relations", anchor=title,
                               texts=[req.texts[k] for k in chosen], chains=chains, focus=foc, rest=rest)
            res = await self.relation_scorer.score(sub)
            # groups the pre-filter dropped keep score 0 and say who dropped them
            scores = [0.0] * len(groups)
            reasons = [""] * len(groups)
            by = [f"prefilter:{pre.scored_by}" if pre else res.scored_by] * len(groups)
            for pos, k in enumerate(chosen):
                scores[k] = res.values[pos]
                reasons[k] = res.reasons[pos] if pos < len(res.reasons) else ""
                by[k] = res.scored_by
            for k, ev in enumerate(evidence):
                if ev and not reasons[k]:
                    reasons[k] = f"read with: {ev}"  # what the scorer saw beside the relation
            note = (f"{title}: {len(groups)} relations, {len(chosen)} scored by {res.scored_by}"
                    + (f" after {pre.scored_by} pre-filter" if pre else ""))
            return groups, res, scores, reasons, by, note

        results = await asyncio.gather(*(one(i) for i in range(len(state.paths))))
        route = self.policy.whole_path(self, state)  # kept beside the top N (the policy's; the paper: none)
        step = Step(depth=state.depth, stage="relations", note="; ".join(r[-1] for r in results))
        payload: list[RelChoice] = []
        for i, (groups, res, scores, reasons, by, _) in enumerate(results):
            if not groups or res is None:  # a dead end (no relation group, so nothing was scored)
                continue
            src_e = self.graph.entity(state.paths[i].end)
            self._account(step, res, where=src_e.title)
            scores = self.policy.relation_scores(self, state, i, groups, scores,
                                                 [b == res.scored_by for b in by])
            ties = self.policy.relation_ties(self, state, i, groups, scores)
            if ties:  # relations tied at the cut-off, ordered by what the policy reads beside the scores
                for k, why in enumerate(ties[1]):
                    if why:
                        reasons[k] = f"{why}; {reasons[k]}" if reasons[k] else why
            top = beam_cut([(-v, -t) for v, t in zip(scores, ties[0])] if ties else [(-v,) for v in scores],
                           self.policy.relations_kept(self))  # relation pruning: the top N per entity (policy's)
            nxt = route_next(route[0], state.paths[i]) if route else None
            way = None
            if nxt is not None:  # the group of its relationship, else (a reversed twin) of the entity it reaches
                way = next((k for k, g in enumerate(groups) if nxt.ridx in g.ridxs), None)
                if way is None:
                    way = next((k for k, g in enumerate(groups) if nxt.dst in g.others), None)
            if way is not None and route and way not in top:
                top.add(way)
                reasons[way] = f"{route[1]}; {reasons[way]}" if reasons[way] else route[1]
            order = best_first(scores)
            scored = {k for k, b in enumerate(by) if b == res.scored_by}  # by the main scorer: all without pre-filter
            shown = shown_in_trace(order, [i] * len(groups), top | scored, cfg.max_candidates)  # a hub: top K
            if len(shown) < len(groups):
                step.not_shown.append({"path": i, "source_id": src_e.id, "source_entity": src_e.title,
                                       "count": len(groups) - len(shown), "shown": len(shown),
                                       "best_score": round(float(scores[next(k for k in order if k not in shown)]), 6)})
            for k, g in enumerate(groups):
                if k not in shown:
                    continue
                step.candidates.append(Candidate(
                    id=g.key, label=g.text, score=round(float(scores[k]), 6), reason=reasons[k],
                    auto_kept=k in top, kept=k in top, kind="relation", source_entity=src_e.title,
                    source_id=src_e.id, relation=g.label,
                    relationship_ids=self.graph.relationship_ids(g.ridxs[:20]),
                    outgoing=g.outgoing, path=i, scored_by=by[k]))
                payload.append(RelChoice(path=g.path, key=g.key, ridxs=g.ridxs, others=g.others,
                                         score=float(scores[k]), label=g.label, text=g.text))
        return Proposal(step=step, payload=tuple(payload))

    async def _prefiltered(self, req: ScoreRequest, limit: int | None) -> tuple[list[int], ScoreResult | None]:
        """Indices of the texts the main scorer should see: all (limit None), or the top `limit` by the pre-filter."""
        if limit is None or len(req.texts) <= limit:
            return list(range(len(req.texts))), None
        pre = await self.prefilter.score(req)
        order = best_first(pre.values)[:limit]
        return sorted(order), pre

    # ------------------------------------------------------------------ 3-4. entity exploration and pruning
    async def _propose_entities(self, state: State) -> Proposal:
        cfg = self.config
        # one scoring call per frontier path (all its kept relations together), or, as the original ToG
        # code does, one per kept relation (config.entity_batch == "relation")
        by_call: OrderedDict[tuple[int, str], list[tuple[RelChoice, int, int]]] = OrderedDict()  # rc, target, ridx
        notes = []
        all_targets: list[tuple[RelChoice, list[tuple[int, int]]]] = []
        for rc in state.relations:
            p = state.paths[rc.path]
            seen: dict[int, int] = {}
            for r, o in zip(rc.ridxs, rc.others):
                if o not in seen:  # open_edges already closed the walks the rule forbids
                    seen[o] = r
            all_targets.append((rc, list(seen.items())))
        looks = self.policy.looks_ahead(self, state) and any(ts for _, ts in all_targets)
        ahead = await self.policy.rate_next(self, state, self._next_edges(state, all_targets)) if looks else {}
        if ahead:
            notes.append(f"lookahead: {len(ahead)} entities rated by their best next relation")
        for rc, targets in all_targets:
            if len(targets) > cfg.entities_per_relation:
                req = ScoreRequest(question=state.question, stage="entities", anchor=rc.text,
                                   texts=[f"{rc.text} {self.graph.title(o)}" for o, _ in targets])
                # entities that lead somewhere the question goes come first, the pre-filter breaks ties (departure
                # lookahead_order)
                if ahead and cfg.lookahead_order:
                    pre = await self.prefilter.score(req)
                    keep_idx = sorted(sorted(range(len(targets)), key=lambda k: (
                        -ahead[(rc.key, targets[k][0])].value, -pre.values[k], k))[: cfg.entities_per_relation])
                    how = f"lookahead and {pre.scored_by}"
                else:
                    keep_idx, pre = await self._prefiltered(req, cfg.entities_per_relation)
                    how = pre.scored_by if pre is not None else "no pre-filter"
                notes.append(f"{rc.label[:40]}: {len(targets)} entities, {len(keep_idx)} kept by {how}")
                targets = [targets[k] for k in keep_idx]
            call = (rc.path, rc.key if cfg.entity_batch == "relation" else "")
            for o, r in targets:
                by_call.setdefault(call, []).append((rc, o, r))

        chains = self._chain_texts(state.paths)
        llm_scorer = uses_llm(self.entity_scorer)

        async def one(i: int, items: list[tuple[RelChoice, int, int]]) -> ScoreResult:
            rels = {rc.key for rc, _, _ in items}
            if llm_scorer and len(rels) == 1:
                req = ScoreRequest(question=state.question, stage="entities", anchor=items[0][0].text,
                                   texts=[self.entity_text(o) for _, o, _ in items], chains=chains)
            elif llm_scorer:
                src = self.graph.title(state.paths[i].end)
                req = ScoreRequest(question=state.question, stage="pairs", anchor="", chains=chains,
                                   texts=[f"{src} — {rc.text} — {self.entity_text(o)}" for rc, o, _ in items])
            else:
                req = ScoreRequest(question=state.question, stage="entities", anchor="",
                                   texts=[f"{rc.text} — {self.entity_text(o)}" for rc, o, _ in items])
            return await self.entity_scorer.score(req)

        keys = list(by_call)
        results = await asyncio.gather(*(one(i, by_call[(i, rk)]) for i, rk in keys))
        step = Step(depth=state.depth, stage="entities", note="; ".join(notes))
        rows: list[tuple[float, float, int, RelChoice, int, int, str, str]] = []
        for (i, rk), res in zip(keys, results):
            self._account(step, res, where=self.graph.title(state.paths[i].end))
            items = by_call[(i, rk)]
            # entity scores are relative within their relation group: the group's best entity carries the
            # full relation score (all-zero groups count as uniform), so a relation's rank survives a scorer
            # that rates every entity low
            best: dict[str, float] = {}
            for pos, (rc, _, _) in enumerate(items):
                best[rc.key] = max(best.get(rc.key, 0.0), res.values[pos])
            for pos, (rc, o, r) in enumerate(items):
                es = res.values[pos]
                if cfg.normalise_entities:
                    es = es / best[rc.key] if best[rc.key] > 0 else 1.0
                combined, why = self.policy.hop_score(self, rc.score, es, ahead.get((rc.key, o)) if ahead else None)
                prior, kind = self.policy.entity_prior(self, state, o)
                if prior != 1.0:
                    combined *= prior
                    why = f"{why}; {kind}" if why else kind
                reason = res.reasons[pos] if pos < len(res.reasons) else ""
                reason = f"{why}; {reason}" if why and reason else (why or reason)
                rows.append((self._path_score(state.paths[i], combined), combined, i, rc, o, r, reason,
                             res.scored_by))
        # entity pruning: the top N paths of the whole frontier, by path score or by what the policy cuts on
        hops = [Hop(ridx=r, src=state.paths[i].end, dst=o, score=float(combined), label=self._hop_label(r, rc.text))
                for _, combined, i, rc, o, r, _, _ in rows]
        grown = [BeamPath(start=state.paths[row[2]].start, hops=state.paths[row[2]].hops + (h,), score=row[0])
                 for row, h in zip(rows, hops)]
        cut = self.policy.beam_scores(self, state, grown, [row[0] for row in rows]) if len(rows) > 1 else None
        shown_scores = cut[0] if cut else [row[0] for row in rows]
        top = beam_cut([(-v, -row[0], -row[1]) for v, row in zip(shown_scores, rows)], cfg.width,
                       self._reach([row[4] for row in rows]))
        route = self.policy.whole_path(self, state)  # kept beside the top N (the policy's; the paper: none)
        beside = next((k for k, g in enumerate(grown) if route and on_route(route[0], g)), None)
        if beside is not None and beside not in top:
            top.add(beside)
        else:
            beside = None
        payload = []
        for k, (path_score, _, i, rc, o, r, reason, by) in enumerate(rows):
            if cut:  # the trace shows what the beam was cut on; the chain keeps its path score
                reason = f"{cut[1][k]}; {reason}" if reason else cut[1][k]
                by = f"{by}+{cut[2]}"
            if k == beside and route:
                reason = f"{route[1]}; {reason}" if reason else route[1]
            p = state.paths[i]
            src_e, dst_e = self.graph.entity(p.end), self.graph.entity(o)
            rel = self.graph.relationship(r)
            step.candidates.append(Candidate(
                id=f"e|p{i}|{rc.key}|{dst_e.id}", label=dst_e.title, score=round(float(shown_scores[k]), 6),
                reason=reason,
                kept=k in top, auto_kept=k in top, kind="entity", source_entity=src_e.title, source_id=src_e.id,
                target=dst_e.title, target_id=dst_e.id, relation=rc.text, relationship_ids=[rel.id],
                outgoing=rel.source_idx == p.end, path=i, scored_by=by))
            payload.append((i, hops[k], float(path_score)))
        return Proposal(step=step, payload=tuple(payload))

    def _path_score(self, p: BeamPath, hop: float) -> float:
        """A path's score: the product of its hop scores (the beam ranks whole paths), or with cumulative_score
        off, as in the paper, the last hop's score alone."""
        return hop * p.score if self.config.cumulative_score else hop

    def _reach(self, targets: list[int]) -> list[int] | None:
        """The entities the candidates reach, for a beam that keeps distinct ones (None: the paper's plain top N)."""
        return targets if self.config.distinct_entities else None

    # ------------------------------------------------------------------ 5. reasoning
    async def _propose_evaluate(self, state: State) -> Proposal:
        cfg = self.config
        step = Step(depth=state.depth, stage="evaluate")
        if state.depth >= cfg.depth and not cfg.evaluate_last_depth:
            verdict = {"sufficient": False, "reason": f"maximum depth {cfg.depth} reached", "by": "depth"}
        elif not llm_judges(self):
            ahead = self._ahead(state) if self.policy.needs_ahead(self, state) else []
            verdict = self._hops_verdict(state) or self.policy.judge(self, state, ahead)
        else:
            from tog_core.llm.client import LLMError

            try:
                res = await self.llm.complete(prompts.evaluate_prompt(state.question, self._chain_texts(state.paths)),
                                              temperature=cfg.temperature_reasoning, max_tokens=cfg.max_tokens,
                                              json_schema=prompts.EVALUATE_SCHEMA)
                v = parse_sufficient(res.text)
                verdict = {"sufficient": v.sufficient, "reason": v.reason, "by": "llm"}
                self._account(step, ScoreResult(values=[], reasons=[], scored_by="llm", fallback=v.fallback,
                                                detail=v.detail, usage=Usage.of_result(res)), where="evaluate")
            except LLMError as err:
                verdict = {"sufficient": False, "reason": "evaluation failed; searching on", "by": "fallback"}
                step.add_usage(Usage.failed_call())
                step.fallbacks.append({"name": FALLBACK_EVALUATE_LLM_ERROR, "detail": f"{err.kind}: {str(err)[:200]}",
                                       "where": "evaluate"})
        step.verdict = verdict
        suff = bool(verdict["sufficient"])
        step.candidates = [
            Candidate(id="sufficient", label="The chains are enough: answer now", score=1.0 if suff else 0.0,
                      reason=str(verdict["reason"]), kept=suff, auto_kept=suff, kind="verdict"),
            Candidate(id="continue", label="Search one level deeper", score=0.0 if suff else 1.0,
                      reason=str(verdict["reason"]), kept=not suff, auto_kept=not suff, kind="verdict"),
        ]
        return Proposal(step=step, payload=(True, False))

    @staticmethod
    def _hops_verdict(state: State) -> dict[str, Any] | None:
        """With the number of hops given before the search (an engine input): sufficient there, and, when a person
        chose it, not before; None where the judge decides."""
        if state.hops is None:
            return None
        n = f"{state.hops} hop{'s' if state.hops > 1 else ''}"
        if state.depth == state.hops:
            return {"sufficient": True, "by": "plan", "reason": f"the number of hops settled before the search: {n}"}
        if state.hops_firm and state.depth < state.hops:
            return {"sufficient": False, "by": "plan", "reason": f"not yet as deep as chosen ({n})"}
        return None

    # ------------------------------------------------------------------ shared by the stages
    @staticmethod
    def _account(step: Step, res: ScoreResult | None, *, where: str) -> None:
        if res is None:
            return
        step.add_usage(res.usage)
        if res.fallback:
            step.fallbacks.append({"name": res.fallback, "detail": res.detail[:300], "where": where})
