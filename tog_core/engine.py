"""The step engine of Think-on-Graph. One engine serves the automatic run, the human-in-the-loop page
and the CLI/benchmark:

    engine = ToGEngine(graph, llm=..., config=EngineConfig(...))
    state = engine.start(question, seeds=None)
    while not state.done:
        proposal = await engine.propose(state)
        state = engine.apply(state, proposal, choice)     # choice None = the automatic top-N
    state = await engine.answer(state)

Stages per depth: relations → entities → evaluate. Within a stage every frontier path is scored
concurrently (the LLM client bounds the concurrency). LLM calls per question stay within the
paper's 2·N·D + D + 1: ≤ N relation calls and ≤ N entity calls per depth, one evaluation per depth
but the last (at max depth the search stops anyway), one answer, and at most one linking call.
"""
from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from datetime import datetime, timezone
from typing import Any, Callable, Iterable

import numpy as np

from . import prompts
from .linking import link_embedding, link_question, link_with_llm
from .parsing import parse_sufficient
from .pruning import ScoreRequest, ScoreResult, make_scorer, tokens
from .state import BeamPath, Callbacks, EngineConfig, Hop, Proposal, RelChoice, State
from .trace import Candidate, Link, Seed, Step, Trace

FALLBACK_EVALUATE_LLM_ERROR = "evaluate_llm_error_continue"  # evaluation call failed: keep searching
FALLBACK_ANSWER_LLM_ERROR = "answer_llm_error_composed"  # answer call failed: composed from chains
FALLBACK_LINK_LLM_ERROR = "link_llm_error_no_seeds"
CHAIN_TEXT_CHARS = 160
_WH = frozenset({"who", "whom", "what", "which", "where", "when", "why", "how", "name", "list"})


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


class ToGEngine:
    """Think-on-Graph over a GraphStore. Every side effect is a constructor argument."""

    def __init__(self, graph: Any, *, llm: Any | None = None, embedder: Any | None = None,
                 config: EngineConfig | None = None, relation_scorer: Any | None = None,
                 entity_scorer: Any | None = None, prefilter: Any | None = None,
                 clock: Callable[[], float] = time.perf_counter, project: str = "") -> None:
        self.graph = graph
        self.llm = llm
        self.embedder = embedder
        self.config = config or EngineConfig()
        self.clock = clock
        self.project = project
        cfg = self.config
        deps = dict(llm=llm, embedder=embedder, seed=cfg.seed, temperature=cfg.temperature_exploration,
                    max_tokens=cfg.max_tokens)
        self.relation_scorer = relation_scorer or make_scorer(cfg.relation_pruner, **deps)
        self.entity_scorer = entity_scorer or make_scorer(cfg.entity_pruner, **deps)
        self.prefilter = prefilter or make_scorer(cfg.prefilter, **deps)
        if getattr(self.prefilter, "uses_llm", False):
            raise ValueError("the pre-filter must be a cheap scorer (bm25, embedding or random), not llm")

    @property
    def _first_stage(self) -> str:
        """Faithful ToG scores relations, then entities; fast mode scores (relation, entity) pairs at once."""
        return "entities" if self.config.mode == "fast" else "relations"

    # ------------------------------------------------------------------ start / link
    def start(self, question: str, seeds: Iterable[Seed | str] | None = None) -> State:
        """A fresh state. Seeds: given (titles, ids or Seed objects) or linked from the question."""
        question = question.strip()
        if not question:
            raise ValueError("the question is empty")
        if seeds is None:
            found = link_question(question, self.graph)
        else:
            found = [self._seed(s) for s in seeds]
        found = list(OrderedDict((s.id, s) for s in found).values())
        paths = []
        for s in found:
            idx = self.graph.find(s.id)
            if idx is not None:
                paths.append(BeamPath(start=idx))
        stage = (self._first_stage if paths else "answer")
        return State(question=question, seeds=tuple(found), paths=tuple(paths), stage=stage,
                     stop_reason=None if paths else "no_candidates")

    async def start_async(self, question: str, seeds: Iterable[Seed | str] | None = None) -> State:
        """Like start, but when no title matches the question, ask the LLM for the topic entities."""
        state = self.start(question, seeds)
        if state.paths or seeds is not None:
            return state
        if self.embedder is not None:
            found = link_embedding(question, self.graph, self.embedder)
            if found:
                return self.start(question, found)
        if self.llm is None:
            return state
        from .llm import LLMError

        t0 = self.clock()
        try:
            found, usage = await link_with_llm(question, self.graph, self.llm,
                                               temperature=self.config.temperature_reasoning)
        except LLMError as err:
            usage = {"llm_calls": 1, "fallback": FALLBACK_LINK_LLM_ERROR, "detail": str(err)[:200]}
            found = []
        usage = {**usage, "stage": "link", "wall_s": self.clock() - t0}
        st = self.start(question, found) if found else state
        return st.with_(extra_usage=st.extra_usage + (usage,))

    def _seed(self, s: Seed | str) -> Seed:
        if isinstance(s, Seed):
            return s
        idx = self.graph.find(s)
        if idx is None:
            raise ValueError(f"seed '{s}' is not an entity title or id of this project")
        e = self.graph.entity(idx)
        return Seed(id=e.id, title=e.title, how="user")

    # ------------------------------------------------------------------ propose
    async def propose(self, state: State) -> Proposal:
        if state.done:
            raise ValueError("the search has finished; call answer()")
        started, t0 = _now(), self.clock()
        if state.stage == "relations":
            prop = await self._propose_relations(state)
        elif state.stage == "entities" and self.config.mode == "fast":
            prop = await self._propose_pairs(state)
        elif state.stage == "entities":
            prop = await self._propose_entities(state)
        elif state.stage == "evaluate":
            prop = await self._propose_evaluate(state)
        else:
            raise ValueError(f"unknown stage {state.stage!r}")
        prop.step.started_at = started
        prop.step.wall_s = round(self.clock() - t0, 4)
        return prop

    def _chain_texts(self, paths: Iterable[BeamPath]) -> list[str]:
        return [self.path_text(p) for p in paths if p.hops]

    def path_text(self, p: BeamPath) -> str:
        parts = [self.graph.title(p.start)]
        for h in p.hops:
            arrow = "→" if self.graph.endpoints(h.ridx)[0] == h.src else "←"
            parts.append(f"—[{prompts.clean_text(h.label, CHAIN_TEXT_CHARS)}]{arrow} {self.graph.title(h.dst)}")
        return " ".join(parts)

    def _relation_text(self, label: str, ridx: int) -> str:
        """What a scorer reads for a relation group: the free-text description (GraphRAG), or, when the
        table has a `relation` column, an example description of the group."""
        if self.graph.has_relation_labels:
            return self.graph.descriptions([ridx])[0] or label.replace("_", " ")
        return label

    def _groups(self, state: State, i: int) -> list[RelChoice]:
        p = state.paths[i]
        rels, others, outs = self.graph.neighbors(p.end)
        if len(rels) == 0:
            return []
        on_path = np.fromiter(p.entities, dtype=np.int64)
        keep = ~np.isin(others, on_path)  # never walk back along the path (covers reversed duplicates)
        if self.config.degree_filter and state.paths:
            limit = self.config.degree_factor * max(self.graph.degree(x.start) for x in state.paths)
            keep &= np.asarray([self.graph.degree(int(o)) <= limit for o in others], dtype=bool) if len(others) else keep
        rels, others, outs = rels[keep], others[keep], outs[keep]
        labels = self.graph.labels(rels)
        groups: "OrderedDict[tuple[str, bool], list[int]]" = OrderedDict()
        for pos, (lab, out) in enumerate(zip(labels, outs)):
            groups.setdefault((lab, bool(out)), []).append(pos)
        out_groups = []
        for (lab, out), poss in groups.items():
            ridxs = tuple(int(rels[q]) for q in poss)
            key = f"p{i}|{'>' if out else '<'}|{lab[:80]}|{ridxs[0]}"
            out_groups.append(RelChoice(path=i, key=key, ridxs=ridxs, others=tuple(int(others[q]) for q in poss),
                                        score=0.0, label=lab, text=self._relation_text(lab, ridxs[0])))
        return out_groups

    async def _prefiltered(self, req: ScoreRequest, limit: int) -> tuple[list[int], ScoreResult | None]:
        """Indices of the texts the main scorer should see: all, or the top `limit` by the pre-filter."""
        if len(req.texts) <= limit:
            return list(range(len(req.texts))), None
        pre = await self.prefilter.score(req)
        order = sorted(range(len(req.texts)), key=lambda k: (-pre.values[k], k))[:limit]
        return sorted(order), pre

    async def _propose_relations(self, state: State) -> Proposal:
        cfg = self.config
        chains = self._chain_texts(state.paths)

        async def one(i: int) -> tuple[list[RelChoice], ScoreResult | None, list[float], list[str], list[str], str]:
            groups = self._groups(state, i)
            title = self.graph.title(state.paths[i].end)
            if not groups:
                return [], None, [], [], [], f"{title}: dead end"
            req = ScoreRequest(question=state.question, stage="relations", anchor=title,
                               texts=[g.text for g in groups], chains=chains)
            chosen, pre = await self._prefiltered(req, cfg.max_candidates)
            sub = ScoreRequest(question=req.question, stage="relations", anchor=title,
                               texts=[req.texts[k] for k in chosen], chains=chains)
            res = await self.relation_scorer.score(sub)
            # groups the pre-filter dropped keep score 0 and say who dropped them
            scores = [0.0] * len(groups)
            reasons = [""] * len(groups)
            by = [f"prefilter:{pre.scored_by}" if pre else res.scored_by] * len(groups)
            for pos, k in enumerate(chosen):
                scores[k] = res.values[pos]
                reasons[k] = res.reasons[pos] if pos < len(res.reasons) else ""
                by[k] = res.scored_by
            note = (f"{title}: {len(groups)} relations, {len(chosen)} scored by {res.scored_by}"
                    + (f" after {pre.scored_by} pre-filter" if pre else ""))
            return groups, res, scores, reasons, by, note

        results = await asyncio.gather(*(one(i) for i in range(len(state.paths))))
        step = Step(depth=state.depth, stage="relations", note="; ".join(r[-1] for r in results))
        payload: list[RelChoice] = []
        for i, (groups, res, scores, reasons, by, _) in enumerate(results):
            if not groups:
                continue
            src_e = self.graph.entity(state.paths[i].end)
            self._account(step, res, where=src_e.title)
            order = sorted(range(len(groups)), key=lambda k: (-scores[k], k))
            top = set(order[: cfg.width]) if cfg.width else set(order)
            for k, g in enumerate(groups):
                step.candidates.append(Candidate(
                    id=g.key, label=g.text, score=round(float(scores[k]), 6), reason=reasons[k],
                    auto_kept=k in top, kept=k in top, kind="relation", source_entity=src_e.title,
                    source_id=src_e.id, relation=g.label,
                    relationship_ids=[self.graph.relationship(r).id for r in g.ridxs[:20]],
                    outgoing=g.key.split("|")[1] == ">", path=i, scored_by=by[k]))
                payload.append(RelChoice(path=g.path, key=g.key, ridxs=g.ridxs, others=g.others,
                                         score=float(scores[k]), label=g.label, text=g.text))
        return Proposal(step=step, payload=tuple(payload))

    @staticmethod
    def _account(step: Step, res: ScoreResult | None, *, where: str) -> None:
        if res is None:
            return
        step.llm_calls += res.llm_calls
        step.cache_hits += res.cache_hits
        step.prompt_tokens += res.prompt_tokens
        step.completion_tokens += res.completion_tokens
        if step.cost_usd is not None:
            step.cost_usd = None if res.cost_usd is None else step.cost_usd + res.cost_usd
        if res.fallback:
            step.fallbacks.append({"name": res.fallback, "detail": res.detail[:300], "where": where})

    def _entity_text(self, idx: int) -> str:
        e = self.graph.entity(idx)
        return f"{e.title} — {e.description}" if e.description else e.title

    async def _propose_entities(self, state: State) -> Proposal:
        cfg = self.config
        by_path: "OrderedDict[int, list[tuple[RelChoice, int, int]]]" = OrderedDict()  # rc, target, ridx
        notes = []
        for rc in state.relations:
            p = state.paths[rc.path]
            seen: dict[int, int] = {}
            for r, o in zip(rc.ridxs, rc.others):
                if o not in p.entities and o not in seen:
                    seen[o] = r
            targets = list(seen.items())
            if len(targets) > cfg.entities_per_relation:
                req = ScoreRequest(question=state.question, stage="entities", anchor=rc.text,
                                   texts=[f"{rc.text} {self.graph.title(o)}" for o, _ in targets])
                keep_idx, pre = await self._prefiltered(req, cfg.entities_per_relation)
                notes.append(f"{rc.label[:40]}: {len(targets)} entities, {len(keep_idx)} kept by {pre.scored_by}")
                targets = [targets[k] for k in keep_idx]
            for o, r in targets:
                by_path.setdefault(rc.path, []).append((rc, o, r))

        chains = self._chain_texts(state.paths)
        llm_scorer = getattr(self.entity_scorer, "uses_llm", False)

        async def one(i: int, items: list[tuple[RelChoice, int, int]]) -> ScoreResult:
            rels = {rc.key for rc, _, _ in items}
            if llm_scorer and len(rels) == 1:
                req = ScoreRequest(question=state.question, stage="entities", anchor=items[0][0].text,
                                   texts=[self._entity_text(o) for _, o, _ in items], chains=chains)
            elif llm_scorer:
                src = self.graph.title(state.paths[i].end)
                req = ScoreRequest(question=state.question, stage="pairs", anchor="", chains=chains,
                                   texts=[f"{src} — {rc.text} — {self._entity_text(o)}" for rc, o, _ in items])
            else:
                req = ScoreRequest(question=state.question, stage="entities", anchor="",
                                   texts=[f"{rc.text} — {self._entity_text(o)}" for rc, o, _ in items])
            return await self.entity_scorer.score(req)

        keys = list(by_path)
        results = await asyncio.gather(*(one(i, by_path[i]) for i in keys))
        step = Step(depth=state.depth, stage="entities", note="; ".join(notes))
        rows: list[tuple[float, float, int, RelChoice, int, int, str, str]] = []
        for i, res in zip(keys, results):
            self._account(step, res, where=self.graph.title(state.paths[i].end))
            # entity scores are relative within their relation group: the group's best entity carries the
            # full relation score (all-zero groups count as uniform), so a relation's rank survives a scorer
            # that rates every entity low
            best: dict[str, float] = {}
            for pos, (rc, _, _) in enumerate(by_path[i]):
                best[rc.key] = max(best.get(rc.key, 0.0), res.values[pos])
            for pos, (rc, o, r) in enumerate(by_path[i]):
                es = res.values[pos] / best[rc.key] if best[rc.key] > 0 else 1.0
                combined = rc.score * es if llm_scorer else rc.score * (0.5 + 0.5 * es)
                # a path's score is the product of its hop scores: the beam ranks whole paths
                rows.append((combined * state.paths[i].score, combined, i, rc, o, r, res.reasons[pos] if pos < len(res.reasons) else "",
                             res.scored_by))
        order = sorted(range(len(rows)), key=lambda k: (-rows[k][0], -rows[k][1], k))
        top: set[int] = set()
        reached: set[int] = set()
        for k in order:  # the beam keeps distinct entities: a second route to a kept entity is a waste of width
            if cfg.width and len(top) >= cfg.width:
                break
            if rows[k][4] not in reached:
                top.add(k)
                reached.add(rows[k][4])
        payload = []
        for k, (path_score, combined, i, rc, o, r, reason, by) in enumerate(rows):
            p = state.paths[i]
            src_e, dst_e = self.graph.entity(p.end), self.graph.entity(o)
            rel = self.graph.relationship(r)
            step.candidates.append(Candidate(
                id=f"e|p{i}|{rc.key}|{dst_e.id}", label=dst_e.title, score=round(float(path_score), 6), reason=reason,
                kept=k in top, auto_kept=k in top, kind="entity", source_entity=src_e.title, source_id=src_e.id,
                target=dst_e.title, target_id=dst_e.id, relation=rc.text, relationship_ids=[rel.id],
                outgoing=rel.source_idx == p.end, path=i, scored_by=by))
            payload.append((i, Hop(ridx=r, src=p.end, dst=o, score=float(combined), label=rc.text), float(path_score)))
        return Proposal(step=step, payload=tuple(payload))

    async def _propose_pairs(self, state: State) -> Proposal:
        """Fast mode: one scoring call per depth over (relation, entity) pairs of the whole frontier.

        Each path's pairs are cut to `max_candidates` relation groups and `entities_per_relation`
        targets, then to `pairs_per_path` by the cheap pre-filter, so one prompt stays small."""
        cfg = self.config
        items: list[tuple[int, RelChoice, int, int]] = []  # path, relation group, target, relationship
        notes = []
        for i, p in enumerate(state.paths):
            groups = self._groups(state, i)
            if not groups:
                notes.append(f"{self.graph.title(p.end)}: dead end")
                continue
            pairs = []
            for g in groups:
                seen: dict[int, int] = {}
                for r, o in zip(g.ridxs, g.others):
                    seen.setdefault(o, r)
                pairs += [(g, o, r) for o, r in list(seen.items())[: cfg.entities_per_relation]]
            texts = [f"{g.text} — {self._entity_text(o)}" for g, o, _ in pairs]
            keep, pre = await self._prefiltered(ScoreRequest(question=state.question, stage="pairs", anchor="",
                                                             texts=texts), cfg.pairs_per_path)
            notes.append(f"{self.graph.title(p.end)}: {len(pairs)} pairs" + (f", {len(keep)} kept by {pre.scored_by}"
                                                                           if pre else ""))
            items += [(i, pairs[k][0], pairs[k][1], pairs[k][2]) for k in keep]
        step = Step(depth=state.depth, stage="entities", note="fast mode; " + "; ".join(notes))
        if not items:
            return Proposal(step=step, payload=())
        texts = [f"{self.graph.title(state.paths[i].end)} — {g.text} — {self._entity_text(o)}" for i, g, o, _ in items]
        res = await self.entity_scorer.score(ScoreRequest(question=state.question, stage="pairs", anchor="",
                                                          texts=texts, chains=self._chain_texts(state.paths)))
        self._account(step, res, where="frontier")
        rows = sorted(range(len(items)), key=lambda k: (-res.values[k] * state.paths[items[k][0]].score, k))
        top: set[int] = set()
        reached: set[int] = set()
        for k in rows:
            if cfg.width and len(top) >= cfg.width:
                break
            if items[k][2] not in reached:
                top.add(k)
                reached.add(items[k][2])
        payload = []
        for k, (i, g, o, r) in enumerate(items):
            p = state.paths[i]
            score = float(res.values[k])
            src_e, dst_e, rel = self.graph.entity(p.end), self.graph.entity(o), self.graph.relationship(r)
            step.candidates.append(Candidate(
                id=f"e|p{i}|{g.key}|{dst_e.id}", label=dst_e.title, score=round(score * p.score, 6),
                reason=res.reasons[k] if k < len(res.reasons) else "", kept=k in top, auto_kept=k in top,
                kind="entity", source_entity=src_e.title, source_id=src_e.id, target=dst_e.title,
                target_id=dst_e.id, relation=g.text, relationship_ids=[rel.id], outgoing=rel.source_idx == p.end,
                path=i, scored_by=res.scored_by))
            payload.append((i, Hop(ridx=r, src=p.end, dst=o, score=score, label=g.text), score * p.score))
        return Proposal(step=step, payload=tuple(payload))

    async def _propose_evaluate(self, state: State) -> Proposal:
        cfg = self.config
        step = Step(depth=state.depth, stage="evaluate")
        if state.depth >= cfg.depth:
            verdict = {"sufficient": False, "reason": f"maximum depth {cfg.depth} reached", "by": "depth"}
        elif self.llm is None:
            verdict = self._coverage_verdict(state)
        else:
            from .llm import LLMError

            try:
                res = await self.llm.complete(prompts.evaluate_prompt(state.question, self._chain_texts(state.paths)),
                                              temperature=cfg.temperature_reasoning, max_tokens=cfg.max_tokens,
                                              json_schema=prompts.EVALUATE_SCHEMA)
                v = parse_sufficient(res.text)
                verdict = {"sufficient": v.sufficient, "reason": v.reason, "by": "llm"}
                self._account(step, ScoreResult(values=[], reasons=[], scored_by="llm", fallback=v.fallback,
                                                detail=v.detail, llm_calls=0 if res.cached else 1,
                                                cache_hits=1 if res.cached else 0,
                                                prompt_tokens=0 if res.cached else res.prompt_tokens,
                                                completion_tokens=0 if res.cached else res.completion_tokens,
                                                cost_usd=0.0 if res.cached else res.cost_usd), where="evaluate")
            except LLMError as err:
                verdict = {"sufficient": False, "reason": "evaluation failed; searching on", "by": "fallback"}
                step.llm_calls += 1
                step.fallbacks.append({"name": FALLBACK_EVALUATE_LLM_ERROR, "detail": f"{err.kind}: {str(err)[:200]}",
                                       "where": "evaluate"})
        step.verdict = verdict
        suff = bool(verdict["sufficient"])
        step.candidates = [
            Candidate(id="sufficient", label="The chains are enough: answer now", score=1.0 if suff else 0.0,
                      reason=verdict["reason"], kept=suff, auto_kept=suff, kind="verdict"),
            Candidate(id="continue", label="Search one level deeper", score=0.0 if suff else 1.0,
                      reason=verdict["reason"], kept=not suff, auto_kept=not suff, kind="verdict"),
        ]
        return Proposal(step=step, payload=(True, False))

    def _question_words(self, state: State) -> set[str]:
        seed_words = {w for s in state.seeds for w in tokens(s.title)}
        return {w for w in tokens(state.question) if w not in seed_words and w not in _WH}

    def _coverage(self, state: State, p: BeamPath) -> set[str]:
        want = self._question_words(state)
        got: set[str] = set()
        for h in p.hops:
            got |= want & set(tokens(h.label))
        return got

    def _coverage_verdict(self, state: State) -> dict[str, Any]:
        """LLM-free sufficiency: stop once one chain's relations mention every content word of the
        question (beyond the topic entities); otherwise search on to the maximum depth."""
        want = self._question_words(state)
        best = max((self._coverage(state, p) for p in state.paths if p.hops), key=len, default=set())
        if want and best == want:
            return {"sufficient": True, "by": "coverage",
                    "reason": f"a chain covers every question word ({', '.join(sorted(want))})"}
        missing = ", ".join(sorted(want - best)) or "no content words"
        return {"sufficient": False, "by": "coverage", "reason": f"no LLM; not yet covered: {missing}"}

    # ------------------------------------------------------------------ apply
    def apply(self, state: State, proposal: Proposal, choice: set[str] | None = None) -> State:
        """Keep the chosen candidates (None = the automatic choice); record every override."""
        step = proposal.step
        if step.stage != state.stage or step.depth != state.depth:
            raise ValueError(f"proposal is for {step.stage}@{step.depth}, state is at {state.stage}@{state.depth}")
        auto = proposal.auto_choice()
        chosen = auto if choice is None else set(choice)
        ids = {c.id for c in step.candidates}
        unknown = chosen - ids
        if unknown:
            raise ValueError(f"unknown candidate ids: {sorted(unknown)[:3]}")
        if step.stage == "evaluate":  # exactly one of the two verdicts
            chosen = {"sufficient"} if "sufficient" in chosen else {"continue"}
        new_step = Step.from_dict(step.to_dict())
        for c in new_step.candidates:
            c.kept = c.id in chosen
            if c.kept != c.auto_kept:
                new_step.overrides.append({"id": c.id, "label": c.label, "auto_kept": c.auto_kept, "kept": c.kept})
        steps = state.steps + (new_step,)
        kept = [pl for c, pl in zip(new_step.candidates, proposal.payload) if c.kept]

        if step.stage == "relations":
            if not kept:
                reason = "user" if step.candidates else "no_candidates"
                return state.with_(steps=steps, stage="answer", stop_reason=reason, relations=())
            return state.with_(steps=steps, stage="entities", relations=tuple(kept))
        if step.stage == "entities":
            if not kept:
                reason = "user" if step.candidates else "no_candidates"
                return state.with_(steps=steps, stage="answer", stop_reason=reason, relations=())
            paths = tuple(sorted((BeamPath(start=state.paths[i].start, hops=state.paths[i].hops + (hop,),
                                           score=score) for i, hop, score in kept), key=lambda p: -p.score))
            return state.with_(steps=steps, stage="evaluate", paths=paths, relations=())
        # evaluate
        if kept and kept[0] is True:
            return state.with_(steps=steps, stage="answer", stop_reason="sufficient")
        if state.depth >= self.config.depth:
            return state.with_(steps=steps, stage="answer", stop_reason="max_depth")
        return state.with_(steps=steps, stage=self._first_stage, depth=state.depth + 1)

    def stop(self, state: State) -> State:
        """The person stops the search: answer from what was found."""
        return state.with_(stage="answer", stop_reason="user", relations=())

    # ------------------------------------------------------------------ answer
    def _best_paths(self, state: State) -> list[BeamPath]:
        """Chains with hops, best first: by score, then (without an LLM) by question words covered."""
        cov = (lambda p: len(self._coverage(state, p))) if self.llm is None else (lambda p: 0)
        return sorted([p for p in state.paths if p.hops], key=lambda p: (-p.score, -cov(p)))

    def evidence_texts(self, state: State, *, per_link: int = 1, limit: int = 6) -> list[str]:
        out: list[str] = []
        seen: set[str] = set()
        for p in self._best_paths(state):
            for h in p.hops:
                for tu in self.graph.evidence(h.ridx)[:per_link]:
                    if tu.id not in seen:
                        seen.add(tu.id)
                        out.append(tu.text)
        return out[:limit]

    def compose_answer(self, state: State) -> str:
        """The LLM-free answer: the chains themselves, marked as not written by a language model."""
        best = self._best_paths(state)
        head = "[No LLM] This answer is composed from the reasoning chains; no language model wrote it."
        if not best:
            seeds = ", ".join(s.title for s in state.seeds) or "none"
            return f"{head}\nNo reasoning chain was found (topic entities: {seeds})."
        ends = list(OrderedDict((self.graph.title(p.end), None) for p in best))
        lines = [head, f"Most likely answer: {ends[0]}"]
        if len(ends) > 1:
            lines.append("Other candidates: " + ", ".join(ends[1:]))
        lines.append("Chains:")
        lines += [f"[{k + 1}] {self.path_text(p)} (score {p.score:.2f})" for k, p in enumerate(best)]
        return "\n".join(lines)

    async def answer(self, state: State, on_token: Callable[[str], None] | None = None) -> State:
        if state.stage == "done":
            return state
        if not state.done:
            state = self.stop(state)
        emit = on_token or (lambda _t: None)
        if self.llm is None or not state.paths or not any(p.hops for p in state.paths):
            text = self.compose_answer(state)
            emit(text)
            return state.with_(stage="done", answer=text, answer_by="chains")
        from .llm import LLMError

        t0 = self.clock()
        msgs = prompts.answer_prompt(state.question, self._chain_texts(self._best_paths(state)),
                                     self.evidence_texts(state))
        try:
            res = await self.llm.stream(msgs, temperature=self.config.temperature_reasoning,
                                        max_tokens=self.config.answer_max_tokens, on_token=emit)
        except LLMError as err:
            text = self.compose_answer(state)
            emit(text)
            usage = {"stage": "answer", "llm_calls": 1, "fallback": FALLBACK_ANSWER_LLM_ERROR,
                     "detail": f"{err.kind}: {str(err)[:200]}", "wall_s": self.clock() - t0}
            return state.with_(stage="done", answer=text, answer_by="chains", error=str(err)[:300],
                               extra_usage=state.extra_usage + (usage,))
        usage = {"stage": "answer", "llm_calls": 0 if res.cached else 1, "cache_hits": 1 if res.cached else 0,
                 "prompt_tokens": 0 if res.cached else res.prompt_tokens,
                 "completion_tokens": 0 if res.cached else res.completion_tokens,
                 "cost_usd": 0.0 if res.cached else res.cost_usd, "wall_s": self.clock() - t0}
        return state.with_(stage="done", answer=res.text, answer_by="llm", extra_usage=state.extra_usage + (usage,))

    # ------------------------------------------------------------------ whole run
    async def run(self, question: str, *, seeds: Iterable[Seed | str] | None = None,
                  callbacks: Callbacks | None = None, state: State | None = None,
                  policy: Callable[[Proposal], set[str] | None] | None = None) -> State:
        """The automatic loop (or a resumed one when `state` is given)."""
        cb = callbacks or Callbacks()
        t0 = self.clock()
        if state is None:
            state = await self.start_async(question, seeds)
        while not state.done:
            cb.on_stage(state.depth, state.stage)
            proposal = await self.propose(state)
            state = self.apply(state, proposal, policy(proposal) if policy else None)
            cb.on_step(state.steps[-1])
            cb.on_state(state)
            cb.on_usage(self.stats(state))
        cb.on_stage(state.depth, "answer")
        state = await self.answer(state, on_token=cb.on_token)
        cb.on_state(state)
        cb.on_usage(self.stats(state, wall_s=self.clock() - t0))
        return state

    # ------------------------------------------------------------------ trace
    def stats(self, state: State, *, wall_s: float | None = None) -> dict[str, Any]:
        calls = sum(s.llm_calls for s in state.steps)
        rounds = sum(1 for s in state.steps if s.llm_calls > 0)
        hits = sum(s.cache_hits for s in state.steps)
        pt = sum(s.prompt_tokens for s in state.steps)
        ct = sum(s.completion_tokens for s in state.steps)
        costs = [s.cost_usd for s in state.steps]
        cost: float | None = None if any(c is None for c in costs) else sum(costs)
        for u in state.extra_usage:
            calls += u.get("llm_calls", 0)
            rounds += 1 if u.get("llm_calls", 0) else 0
            hits += u.get("cache_hits", 0)
            pt += u.get("prompt_tokens", 0)
            ct += u.get("completion_tokens", 0)
            if "cost_usd" in u:
                cost = None if (cost is None or u["cost_usd"] is None) else cost + u["cost_usd"]
        wall = wall_s if wall_s is not None else sum(s.wall_s for s in state.steps) + sum(
            u.get("wall_s", 0.0) for u in state.extra_usage)
        return {"llm_calls": calls, "llm_rounds": rounds, "prompt_tokens": pt, "completion_tokens": ct,
                "cost_usd": None if cost is None else round(cost, 6), "cache_hits": hits, "wall_s": round(wall, 3)}

    def chains(self, state: State) -> list[list[Link]]:
        out = []
        for p in sorted(state.paths, key=lambda p: -p.score):
            if not p.hops:
                continue
            links = []
            for h in p.hops:
                rel = self.graph.relationship(h.ridx)
                s, d = self.graph.entity(h.src), self.graph.entity(h.dst)
                links.append(Link(source=s.title, source_id=s.id, relation=h.label, target=d.title, target_id=d.id,
                                  relationship_id=rel.id, text_unit_ids=list(rel.text_unit_ids), score=round(h.score, 6)))
            out.append(links)
        return out

    def trace(self, state: State, *, run_id: str = "", created_at: str = "", wall_s: float | None = None,
              model_info: dict[str, Any] | None = None) -> Trace:
        config = self.config.public_dict()
        if model_info:
            config.update({k: v for k, v in model_info.items() if "key" not in k or k == "api_key_env"})
        fallbacks = [u for u in state.extra_usage if u.get("fallback")]
        stats = self.stats(state, wall_s=wall_s)
        if fallbacks:
            stats["other_fallbacks"] = [{"name": u["fallback"], "detail": u.get("detail", ""), "where": u["stage"]}
                                        for u in fallbacks]
        return Trace(question=state.question, project=self.project, config=config, seeds=list(state.seeds),
                     steps=list(state.steps), chains=self.chains(state), answer=state.answer,
                     answer_by=state.answer_by, stop_reason=state.stop_reason, stats=stats, run_id=run_id,
                     created_at=created_at or _now(), error=state.error, state=self.snapshot(state))

    def snapshot(self, state: State) -> dict[str, Any]:
        """What resume needs, by GraphRAG ids (stable across reloads of the same project)."""
        g = self.graph

        def hop(h: Hop) -> list[Any]:
            return [g.relationship(h.ridx).id, g.entity(h.src).id, g.entity(h.dst).id, h.score, h.label]

        return {
            "depth": state.depth, "stage": state.stage,
            "paths": [{"start": g.entity(p.start).id, "hops": [hop(h) for h in p.hops], "score": p.score}
                      for p in state.paths],
            "relations": [{"path": rc.path, "key": rc.key, "score": rc.score, "label": rc.label, "text": rc.text,
                           "edges": [[g.relationship(r).id, g.entity(o).id] for r, o in zip(rc.ridxs, rc.others)]}
                          for rc in state.relations],
            "extra_usage": list(state.extra_usage),
        }

    def restore(self, trace: Trace | dict[str, Any]) -> State:
        """Rebuild the state a saved trace was in, so the run can continue from there."""
        t = trace if isinstance(trace, Trace) else Trace.from_dict(trace)
        snap = t.state
        if not snap:
            raise ValueError("this trace has no resume state (it was written by an older version)")
        g = self.graph

        def ent(eid: str) -> int:
            i = g.find(eid)
            if i is None:
                raise ValueError(f"entity id {eid} of the trace is not in this project")
            return i

        def rel(rid: str) -> int:
            r = g.find_relationship(rid)
            if r is None:
                raise ValueError(f"relationship id {rid} of the trace is not in this project")
            return r

        paths = tuple(BeamPath(start=ent(p["start"]), score=p["score"],
                               hops=tuple(Hop(ridx=rel(h[0]), src=ent(h[1]), dst=ent(h[2]), score=h[3], label=h[4])
                                          for h in p["hops"])) for p in snap["paths"])
        rels = tuple(RelChoice(path=r["path"], key=r["key"], score=r["score"], label=r["label"], text=r["text"],
                               ridxs=tuple(rel(e[0]) for e in r["edges"]), others=tuple(ent(e[1]) for e in r["edges"]))
                     for r in snap["relations"])
        return State(question=t.question, seeds=tuple(t.seeds), paths=paths, depth=snap["depth"], stage=snap["stage"],
                     relations=rels, steps=tuple(t.steps), stop_reason=t.stop_reason, answer=t.answer,
                     answer_by=t.answer_by, extra_usage=tuple(snap.get("extra_usage", ())), error=t.error)
