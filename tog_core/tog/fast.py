"""Fast mode (not in the paper): one scoring call per depth over (relation, entity) pairs of the whole frontier,
instead of the relation stage and the entity stage. Mixed into ToGEngine beside the paper's stages (stages.py),
whose relation groups, pre-filter, path score and beam cut it uses.
"""
from __future__ import annotations

from typing import Any

from tog_core.scoring.scorers import ScoreRequest
from tog_core.tog.stages import beam_cut
from tog_core.tog.state import Hop, Proposal, RelChoice, State
from tog_core.tog.trace import Candidate, Step


class FastPairs:
    """The pair stage of ToGEngine (config.mode == "fast")."""

    graph: Any
    config: Any
    entity_scorer: Any
    _groups: Any
    _prefiltered: Any
    _path_score: Any
    _reach: Any
    _account: Any
    entity_text: Any
    _chain_texts: Any
    _hop_label: Any

    async def _propose_pairs(self, state: State) -> Proposal:
        """Fast mode: one scoring call per depth over (relation, entity) pairs of the whole frontier.

        Each path's pairs are cut to `max_candidates` relation groups and `entities_per_relation`
        targets, then to `pairs_per_path` by the cheap pre-filter, so one prompt stays small."""
        cfg = self.config
        items: list[tuple[int, RelChoice, int, int]] = []  # path, relation group, target, relationship
        notes = []
        nbrs = self.graph.neighbors_many(sorted({p.end for p in state.paths}))
        for i, p in enumerate(state.paths):
            groups = self._groups(state, i, nbrs)
            if not groups:
                notes.append(f"{self.graph.title(p.end)}: dead end")
                continue
            pairs = []
            for g in groups:
                seen: dict[int, int] = {}
                for r, o in zip(g.ridxs, g.others):
                    seen.setdefault(o, r)
                pairs += [(g, o, r) for o, r in list(seen.items())[: cfg.entities_per_relation]]
            texts = [f"{g.text} — {self.entity_text(o)}" for g, o, _ in pairs]
            keep, pre = await self._prefiltered(ScoreRequest(question=state.question, stage="pairs", anchor="",
                                                             texts=texts), cfg.pairs_per_path)
            notes.append(f"{self.graph.title(p.end)}: {len(pairs)} pairs" + (f", {len(keep)} kept by {pre.scored_by}"
                                                                           if pre else ""))
            items += [(i, pairs[k][0], pairs[k][1], pairs[k][2]) for k in keep]
        step = Step(depth=state.depth, stage="entities", note="fast mode; " + "; ".join(notes))
        if not items:
            return Proposal(step=step, payload=())
        texts = [f"{self.graph.title(state.paths[i].end)} — {g.text} — {self.entity_text(o)}" for i, g, o, _ in items]
        res = await self.entity_scorer.score(ScoreRequest(question=state.question, stage="pairs", anchor="",
                                                          texts=texts, chains=self._chain_texts(state.paths)))
        self._account(step, res, where="frontier")
        top = beam_cut([(-self._path_score(state.paths[i], res.values[k]),) for k, (i, *_) in enumerate(items)],
                       cfg.width, self._reach([item[2] for item in items]))
        payload = []
        for k, (i, g, o, r) in enumerate(items):
            p = state.paths[i]
            score = float(res.values[k])
            src_e, dst_e, rel = self.graph.entity(p.end), self.graph.entity(o), self.graph.relationship(r)
            step.candidates.append(Candidate(
                id=f"e|p{i}|{g.key}|{dst_e.id}", label=dst_e.title, score=round(self._path_score(p, score), 6),
                reason=res.reasons[k] if k < len(res.reasons) else "", kept=k in top, auto_kept=k in top,
                kind="entity", source_entity=src_e.title, source_id=src_e.id, target=dst_e.title,
                target_id=dst_e.id, relation=g.text, relationship_ids=[rel.id], outgoing=rel.source_idx == p.end,
                path=i, scored_by=res.scored_by))
            payload.append((i, Hop(ridx=r, src=p.end, dst=o, score=score, label=self._hop_label(r, g.text)),
                            self._path_score(p, score)))
        return Proposal(step=step, payload=tuple(payload))
