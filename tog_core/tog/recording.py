"""Turning engine states into traces and back: run statistics, chains with evidence ids, the resume
snapshot (by GraphRAG ids, stable across reloads) and restore. Mixed into ToGEngine.
"""
from __future__ import annotations

import json
from datetime import datetime, UTC
from typing import Any

from tog_core.llm.circuit import failure_record
from tog_core.llm.usage import Usage, total
from tog_core.reading import QuestionReading
from tog_core.reading.readers import read as read_question
from tog_core.tog.policy import LOW_CONFIDENCE, AnswerChoice
from tog_core.tog.state import BeamPath, Hop, RelChoice, Search, SecondSearch, State
from tog_core.tog.trace import DepthPlan, Link, Trace


MAX_CANDIDATES = 10  # the answer list a trace keeps (the app shows 3, the rest one click away)


def now_iso() -> str:
    """A run's start, ISO-8601 UTC to the millisecond: the run stores order runs by it (then by id), and two runs
    started within one second must keep the order they were made in (traces saved before carry whole seconds,
    which sort before any millisecond of the same second)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def hops_of(plan: DepthPlan | None) -> dict[str, Any]:
    """The state fields of a trace's `plan`: the number of hops it searched (an engine input) and the record."""
    if plan is None:
        return {}
    return {"hops": plan.depth, "hops_firm": plan.chosen, "plan_record": plan}


def reading_of(t: Trace) -> QuestionReading | None:
    """The trace's reading of its question; None when it has none (written before readings; the engine reads the
    question again when it continues) or one for another question."""
    if not isinstance(t.reading, dict):
        return None
    try:
        r = QuestionReading.from_dict(t.reading)
    except (TypeError, ValueError):
        return None
    return r if r.question == t.question else None


class Recording:
    """Trace building of ToGEngine (see engine.py)."""

    graph: Any
    config: Any
    policy: Any
    answer_choice: Any
    answer_candidates: Any
    project: str

    def stats(self, state: State, *, wall_s: float | None = None) -> dict[str, Any]:
        """Run totals: the steps' usage and the calls outside stages (linking, the answer), added in one place."""
        parts = [Usage.of(s) for s in state.steps] + [Usage.of(u) for u in state.extra_usage]
        used = total(parts)
        wall = wall_s if wall_s is not None else sum(s.wall_s for s in state.steps) + sum(
            u.get("wall_s", 0.0) for u in state.extra_usage)
        return {"llm_calls": used.llm_calls, "llm_rounds": sum(1 for u in parts if u.llm_calls > 0),
                "prompt_tokens": used.prompt_tokens, "completion_tokens": used.completion_tokens,
                "cost_usd": None if used.cost_usd is None else round(used.cost_usd, 6), "cache_hits": used.cache_hits,
                "wall_s": round(wall, 3)}

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
                                  relationship_id=rel.id, text_unit_ids=list(rel.text_unit_ids),
                                  score=round(h.score, 6), stored_forward=rel.source_idx == h.src))
            out.append(links)
        return out

    def trace(self, state: State, *, run_id: str = "", created_at: str = "", wall_s: float | None = None,
              model_info: dict[str, Any] | None = None) -> Trace:
        config = self.config.public_dict()
        config["policy"] = self.policy.name
        config["policy_params"] = self.policy.params()
        if model_info:
            config.update({k: v for k, v in model_info.items() if "key" not in k or k == "api_key_env"})
        fallbacks = [u for u in state.extra_usage if u.get("fallback")]
        stats = self.stats(state, wall_s=wall_s)
        if fallbacks:
            stats["other_fallbacks"] = [{"name": u["fallback"], "detail": u.get("detail", ""), "where": u["stage"]}
                                        for u in fallbacks]
        failure = failure_record(getattr(self, "llm", None))
        if failure:  # the provider failed (named in one line); the calls after it fell back by name
            stats["llm_failure"] = failure
        ranked = self.answer_candidates(state) if state.paths else []
        choice = ranked[0] if ranked else None
        # a person forced the answer in: no confidence is claimed for it, and its candidate says whose it is
        forced = choice is not None and state.forced
        records = [self.candidate_record(c) for c in ranked[:MAX_CANDIDATES]]
        if forced:
            records[0]["why"] = "forced in by you"
        picked = self.graph.entity(choice.entity) if choice else None
        return Trace(answer_entity=picked.title if picked else None, answer_entity_id=picked.id if picked else None,
                     confidence=choice.confidence if choice and not forced else None,
                     low_confidence=choice.low if choice else LOW_CONFIDENCE, candidates=records,
                     question=state.question, project=self.project, config=config, seeds=list(state.seeds),
                     steps=list(state.steps), chains=self.chains(state), answer=state.answer,
                     answer_by=state.answer_by, stop_reason=state.stop_reason, stats=stats, run_id=run_id,
                     created_at=created_at or now_iso(), error=state.error, state=self.snapshot(state),
                     plan=state.plan_record.to_dict() if state.plan_record else None,
                     reading=state.reading.to_dict() if state.reading else None,
                     second_search=self.second_record(state.second, choice.entity if choice else None))

    def second_record(self, second: SecondSearch | None, answer: int | None) -> dict[str, Any] | None:
        """The trace's `second_search`: the other pruner's first answer, and its probability for this answer."""
        if second is None:
            return None
        first = self.graph.entity(second.first) if second.first is not None else None
        return {"pruner": second.pruner, "answer": first.title if first else None,
                "answer_entity_id": first.id if first else None,
                "probability": round(second.prob(answer), 4) if answer is not None else None,
                "place": second.place(answer) if answer is not None else None, "wall_s": round(second.wall_s, 3)}

    def candidate_record(self, c: AnswerChoice) -> dict[str, Any]:
        """One entry of the trace's `candidates`: the entity, its score, its chain by titles and ids, the sentence."""
        g = self.graph
        ent = g.entity(c.entity)
        chain = []
        for h in c.path.hops[:c.hop]:
            s, d, rel = g.entity(h.src), g.entity(h.dst), g.relationship(h.ridx)
            chain.append({"source": s.title, "source_id": s.id, "relation": h.label, "target": d.title,
                          "target_id": d.id, "relationship_id": rel.id, "stored_forward": rel.source_idx == h.src})
        score = c.confidence if c.score is None else c.score
        out = {"title": ent.title, "entity_id": ent.id, "score": round(float(score), 4), "chain": chain,
               "sentence": c.sentence, "why": c.why}
        if c.found:  # found off the kept chains (by description, in the text): its chain is the shortest to it
            out["found"] = c.found
        return out

    def snapshot(self, state: State) -> dict[str, Any]:
        """What resume needs, by GraphRAG ids (stable across reloads of the same project)."""
        g = self.graph

        def hop(h: Hop) -> list[Any]:
            return [g.relationship(h.ridx).id, g.entity(h.src).id, g.entity(h.dst).id, h.score, h.label]

        def path(p: BeamPath) -> dict[str, Any]:
            return {"start": g.entity(p.start).id, "hops": [hop(h) for h in p.hops], "score": p.score}

        return {
            "depth": state.depth, "stage": state.stage,
            "paths": [path(p) for p in state.paths],
            "other_searches": [{"depth": o.depth, "paths": [path(p) for p in o.paths]} for o in state.other_searches],
            "relations": [{"path": rc.path, "key": rc.key, "score": rc.score, "label": rc.label, "text": rc.text,
                           "edges": [[g.relationship(r).id, g.entity(o).id] for r, o in zip(rc.ridxs, rc.others)]}
                          for rc in state.relations],
            "extra_usage": list(state.extra_usage),
            **({"second_search": {"pruner": state.second.pruner, "wall_s": state.second.wall_s,
                                  "probs": [[g.entity(e).id, p] for e, p in state.second.probs]}}
               if state.second is not None else {}),
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

        def path(p: dict[str, Any]) -> BeamPath:
            return BeamPath(start=ent(p["start"]), score=p["score"],
                            hops=tuple(Hop(ridx=rel(h[0]), src=ent(h[1]), dst=ent(h[2]), score=h[3], label=h[4])
                                       for h in p["hops"]))

        paths = tuple(path(p) for p in snap["paths"])
        others = tuple(Search(depth=int(o["depth"]), paths=tuple(path(p) for p in o["paths"]))
                       for o in snap.get("other_searches") or ())
        rels = tuple(RelChoice(path=r["path"], key=r["key"], score=r["score"], label=r["label"], text=r["text"],
                               ridxs=tuple(rel(e[0]) for e in r["edges"]), others=tuple(ent(e[1]) for e in r["edges"]))
                     for r in snap["relations"])
        usage = tuple(snap.get("extra_usage", ()))
        # a run that goes on (unfinished) under today's policy says so; one reopened only to be read does not
        if not t.answer and (changed := self.policy_change(t.config if isinstance(t.config, dict) else {})):
            usage += ({"fallback": "policy_changed", "stage": "resume", "detail": changed},)
        return State(question=t.question, seeds=tuple(t.seeds), paths=paths, depth=snap["depth"], stage=snap["stage"],
                     relations=rels, steps=tuple(t.steps), stop_reason=t.stop_reason, answer=t.answer,
                     answer_by=t.answer_by, extra_usage=usage, error=t.error,
                     other_searches=others, second=self._second_of(snap.get("second_search")),
                     reading=reading_of(t) or read_question(t.question, [x.title for x in t.seeds], graph=g),
                     **hops_of(DepthPlan.from_dict(t.plan) if t.plan else None))

    def _second_of(self, saved: Any) -> SecondSearch | None:
        """The snapshot's second search; None when it has none or it does not read (an entity not in this project
        drops that entry: its probability reads as 0)."""
        if not isinstance(saved, dict) or not isinstance(saved.get("probs"), list):
            return None
        try:
            probs = tuple((i, float(p)) for eid, p in saved["probs"] if (i := self.graph.find(str(eid))) is not None)
            return SecondSearch(pruner=str(saved.get("pruner", "")), probs=probs, wall_s=float(saved.get("wall_s", 0)))
        except (TypeError, ValueError):
            return None

    def policy_change(self, config: dict[str, Any]) -> str:
        """How the search policy a saved run recorded differs from this engine's, in words ("" when it does not, or
        the run recorded none): a run resumed after an upgrade goes on under today's policy, and says so."""
        name, before = config.get("policy"), config.get("policy_params")
        if name and name != self.policy.name:
            return f"the run was started under the {name} policy; it goes on under the {self.policy.name} policy"
        if not isinstance(before, dict):
            return ""
        now = json.loads(json.dumps(self.policy.params(), default=str))  # as the trace stores it (tuples: lists)
        diff = [f"{k} {before[k]!r} -> {now[k]!r}" if k in before else f"{k} (not recorded) -> {now[k]!r}"
                for k in sorted(now) if k not in before or before[k] != now[k]]
        diff += [f"{k} {before[k]!r} (no longer a setting)" for k in sorted(set(before) - set(now))]
        return ("the run was started with other search policy settings; it goes on with today's: " + "; ".join(diff)
                if diff else "")
