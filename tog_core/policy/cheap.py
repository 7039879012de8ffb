"""The LLM-free search policy: what word overlap (BM25) and embeddings need around them to walk a graph well.

A cheap scorer reads one candidate against the question and nothing else: it has no memory of the chain,
cannot tell which part of a three-hop question the current hop is about, and cannot judge whether the
chains already answer it. `CheapPolicy` adds exactly those pieces, each switchable and each tuned
constant with the measurement it came from. The engine is given this object instead of `FaithfulPolicy`
(tog/policy.py) whenever a pruner is not the LLM or there is no LLM to judge; the rules that concern cheap
scores leave LLM scores alone, so mixed settings (embedding relations, LLM entities) stay sound.

Measurements: `python -m tog_core bench kgqa ../shared/data/kgqa/metaqa --pruner embedding` (MetaQA dev,
300 questions, width 3, depth = hops, gold topic entities), beam recall before -> after each rule; see the
README's table "How the LLM-free search got there".
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Sequence

from tog_core.policy.answers import CheapAnswers
from tog_core.policy.coverage import covered, rest_of_question
from tog_core.policy.fusion import ChainFusion
from tog_core.policy.judge import EVIDENCE_CHARS, CheapJudge
from tog_core.policy.lookahead import rate_next_hops
from tog_core.policy.pathcover import PATH_FOUND
from tog_core.reading import QuestionReading
from tog_core.reading.readers import entity_types, read as read_question
from tog_core.scoring.text import first_sentence, without_words
from tog_core.scoring.question import type_matches
from tog_core.tog.policy import AnswerChoice, NextEdges, NextHop, SearchContext, uses_llm
from tog_core.tog.state import BeamPath, Hop, RelChoice, State


EVIDENCE_KEPT_FROM = 5_000  # relation groups from which one entity's evidence is kept for the next search


@dataclass(kw_only=True)
class CheapPolicy(CheapJudge, ChainFusion, CheapAnswers):
    """Question structure, lookahead, a coverage judge and score shaping for cheap scorers (the judge in
    policy/judge.py, the e5 chain fusion in policy/fusion.py, the answer in policy/answers.py)."""

    name = "cheap"
    # words near the topic focus the first hops, words by the question word the last (0.827 -> 0.860)
    hop_focus: bool = True
    # before the last hop, rate entities by the best relation they offer next (0.900 -> 0.917; 0.3/0.8: no change)
    lookahead: bool = True
    lookahead_weight: float = 0.5
    # the least a cheap-scored relation gets: a 0 ("no word in common") wiped out whole paths (bm25 0.767 -> 0.813)
    floor: float = 0.05
    # how much the entity text may move a hop score; the relation carries the rest (0.5 and 0: same recall on
    # MetaQA, where entity texts are titles; kept at 0.5 for GraphRAG entities, whose descriptions say more)
    entity_weight: float = 0.5
    # typed graphs: a relation reads as "a movie was directed by a person", scored on meaning (0.727 -> 0.777)
    type_templates: bool = True
    # with a maximum depth (not the question's known one), plan as many hops as the question names relations
    # (scoring/hops.expected_hops): the last planned hop gets the far band, no whale filter and no lookahead, may not
    # end at the start, and the search stops there unless the question is covered sooner (README: linked seeds)
    plan_hops: bool = True
    # the judge searches one hop more while no chain ends in what the question asks for, when the graph has that
    # type ("were in which languages" after "share actors": the films are not languages). Linked seeds, depth 3,
    # bm25, chain Hits@1: MetaQA 0.64 -> 0.69, Christmas Carol 0.30 -> 0.33, the other dev sets unchanged
    type_gate: bool = True
    # GraphRAG graphs: a relation is scored together with the first sentence of the description of the entity it
    # leads to (ToG-2's grounding, without an LLM): "the wife of X" meets "Rosalie ... is Emile's wife" when the edge
    # itself only says "married in 1862". Linked seeds, depth 3, chain Hits@1 bm25 / embedding: Christmas Carol
    # 0.375 / 0.25 -> 0.375 / 0.325, French 0.67 / 0.71 -> 0.79 / 0.79, Chinese 0.75 / 0.71 -> 0.79 / 0.71, demo
    # 0.88 / 0.82 -> 0.88 / 0.88; gold seeds, beam recall: CC 0.70 / 0.80 -> 0.75 / 0.825, French 0.67 -> 0.96 bm25
    # (400 characters of the description instead of its first sentence: CC 0.275 / 0.325)
    neighbour_evidence: bool = True
    # GraphRAG graphs: stop before the planned depth when no relation one hop further (read with its neighbour
    # evidence) contains any question word the chains have not matched: the words left are wording ("once", "for
    # his drunkenness"), not a relation. Linked seeds, depth 3, chain Hits@1 bm25 / embedding: Christmas Carol
    # 0.375 / 0.325 -> 0.40 / 0.375, French 0.79 / 0.79 -> 0.83 / 0.79, demo and Chinese unchanged. Not on typed
    # graphs, whose relation texts are short templates that rarely repeat the question's words ("stars" for
    # "appears", "spouse" for "wife"): there it stopped too soon (PQ-2H 0.71 -> 0.31, MetaQA 0.873 -> 0.847)
    stop_when_nothing_ahead: bool = True
    # GraphRAG graphs, a maximum depth (not a known one), cheap scorers on both stages: the number of hops is not read
    # from the wording but tried: one exact-depth search per number of hops up to the maximum (each with the question
    # split into that many parts), keeping the fewest hops whose best chain's relations match the most question words
    # (`plan`); the search then runs to exactly that depth. The wording-based plan was right for 11 of 40 Christmas
    # Carol dev questions and 2 of 24 Operation Dulce ones. Linked seeds, depth 3, chain Hits@1 bm25 / embedding:
    # Christmas Carol 0.50 / 0.40 -> 0.55 / 0.425, its blind dev2 0.17 / 0.20 -> 0.47 / 0.50, Operation Dulce
    # 0.21 / 0.29 -> 0.375 / 0.46, demo 0.88 / 0.88 -> 0.94 / 1.00, French 0.83 / 0.79 -> 0.75 / 0.75, Chinese
    # 0.79 / 0.71 -> 0.71 / 0.71. Not on typed graphs, whose templates rarely repeat the question's words (tried, bm25:
    # MetaQA 0.717 -> 0.617, PQ-2H 0.61 -> 0.35, PQL-3H 0.85 -> 0.88)
    try_depths: bool = True
    # the answer is ranked over every entity of every kept chain, this search's and the depth trials' (ranking.py: a
    # conditional logit over path, text, type and agreement signals, fitted on every data set's dev questions with
    # bench/fit_ranker.py); its probability is the confidence. Off, or without the packaged embedder or the fitted
    # weights: the rule choice (rule_choice) answers. Leave-one-data-set-out numbers: docs/benchmarks.md
    answer_model: bool = True
    # GraphRAG graphs, cheap entity scorers: at the last hop a candidate whose type (the graph's `type` column) is not
    # what the question asks for ("where" -> a place) keeps `type_prior_factor` of its hop score, so the beam holds
    # the entities that can answer. Linked seeds, depth 3, chain Hits@1 over the seven GraphRAG dev sets 120 -> 125 of
    # 189 (factor 0: 119, 0.3: 123, 0.7: 123; docs/experiment-log.md); on typed graphs no gain (MetaQA 0.883 -> 0.880)
    type_prior: bool = True
    type_prior_factor: float = 0.5
    # GraphRAG graphs, cheap scorers, the packaged e5 installed: the whole chain so far plus the candidate is read by
    # e5 against the question (query: / passage:). The entity beam is cut on the rank fusion of that similarity and
    # the path score (k = 60, no weight between them): over the seven GraphRAG dev sets, linked, depth 3, gold-seed
    # beam recall 162 -> 167 of 189 (no set lower). Relations tied with the cut-off (BM25 found no word of the
    # question in any of them) are ordered by it instead of by their place in the graph: Hits@1 left out 118 -> 122;
    # equal scores share a rank (121, the graph's order deciding nothing; docs/experiment-log.md, "The whole chain
    # read by e5")
    chain_fusion: bool = True
    # ... and (when on) the entity beam's fusion takes a third ranking (no weight either): each chain end's title and
    # whole description read by BM25 against the question, without the topics' names (retrieval.description_scores).
    # Off: left out over the nine GraphRAG dev sets, the ranker refitted, Hits@1 / Hits@3 of 249 170 / 209 -> 172 /
    # 215, mean AUROC 0.804 -> 0.818, but blind8, read by the rule written before, fell (8 + 13 against 9 + 14), and
    # the nine older unseen sets with it (115 / 158 against 117 / 160; docs/experiment-log.md, twelfth stop)
    beam_descriptions: bool = False
    # GraphRAG graphs, cheap scorers on both stages: the relation stage keeps relation_width x N relations per frontier
    # entity (the paper: N), and the entity beam still keeps N chains, cut on the e5 chain fusion above. BM25 scores a
    # relation by the words it shares with the question, and the relation a question paraphrases often shares none
    # ("apprenticed" for "his employer"): with N its place among the floor-scored ties was a coin toss. Over the nine
    # GraphRAG dev sets (249 questions), gold-seed beam recall 214 -> 221 (x3: 219), linked Hits@1 / Hits@3 145 / 201
    # -> 147 / 205 before the answer ranker was refitted (docs/experiment-log.md, "Where the 1.2 graph loses its
    # answers"). Typed graphs keep N: there MetaQA was unchanged and PathQuestion-Large 2-hop lost one question (0.900
    # -> 0.893) for two more on each 3-hop set. With the LLM on either stage N (an LLM entity stage would read twice the
    # candidates; not measured); 3N was measured with ties read at N only
    relation_width: int = 2
    # GraphRAG graphs, with the answer model: beside the chains' entities, the `retrieved` entities within the search's
    # depth whose title and description read best against the question (BM25; policy/retrieval.py) are candidates too,
    # with the shortest chain to them. Left out over the nine GraphRAG dev sets, Hits@1 / Hits@3 of 249 161 / 206 ->
    # 170 / 209, mean AUROC 0.821 -> 0.804 (docs/experiment-log.md, "Candidates found by their descriptions")
    retrieved: int = 5
    # ... and then (when above 0) the `text_found` entities named where the source text units behind the
    # neighbourhood's relationships read best against the question (policy/textunits.py). Off: left out over the nine
    # GraphRAG dev sets, with 5 and the ranker refitted, Hits@1 / Hits@3 170 / 209 -> 174 / 210, mean AUROC 0.804 ->
    # 0.790, and the seven unseen sets rose (95 / 133 against 93 / 128), but the new blind set fell (13 + 16 against
    # 14 + 16), which the rule written before the reading made a drop (docs/experiment-log.md, tenth stop); read again
    # on blind7 at the eleventh stop, 9 + 15 against 10 + 16: dropped again. The shipped ranker was fitted without them
    text_found: int = 0
    # ... and then the `path_found` best ends at each number of hops of every path up to the maximum depth read whole
    # (policy/pathcover.py), and every candidate's `path_cover` (0: neither). The ranker refitted with them, left out
    # over the nine GraphRAG dev sets first answers / first three 170 / 209 -> 172 / 214; on the twelve sets outside
    # the fit 148 / 200 -> 158 / 217 of 336 (docs/experiment-log.md, eighteenth stop)
    path_found: int = PATH_FOUND
    # ... and (path_beam, off) the beam keeps, beside its own N at every step, the path to the depth it expects to
    # answer at that names the most of the question read whole: a relation and a chain it would cut. Gold-seed beam
    # recall over the dev and spent sets 324 -> 341 of 460, the ranker refitted first answers outside the fit 166 ->
    # 173 of 366, but blind12, read once by the rule written before, fell (11 + 15 -> 10 + 14): off, an option
    # (docs/experiment-log.md, nineteenth stop)
    path_beam: bool = False
    # GraphRAG graphs, BM25 on both stages, with the answer model: before the answer, the question is searched again
    # with e5 scoring its relations, and the confidence reads that search's probability for the first answer
    # (policy/agreement.py). Mean AUROC: nine dev sets left out 0.804 -> 0.819, eleven outside the fit 0.725 -> 0.754
    second_search: bool = True
    _ranked: dict[tuple[Any, ...], list[AnswerChoice]] = field(default_factory=dict, repr=False)
    _routes: dict[tuple[Any, ...], Any] = field(default_factory=dict, repr=False)  # whole_path's, per search
    _memo: dict[tuple[Any, ...], Any] = field(default_factory=dict, repr=False)  # per graph: texts, names, types
    # the last hub's relation evidence: (graph, the groups' target entities, their evidence), or ()
    _evidence: tuple[Any, ...] = field(default=(), repr=False)

    def planned_depth(self, ctx: SearchContext, state: State) -> int:
        """The maximum depth; with plan_hops and a depth that is only a maximum, as many hops as the question names
        relations (never more than the maximum). The engine asks only when no number of hops was given (State.hops:
        policy/depths.py tries them)."""
        cfg = ctx.config
        if not self.plan_hops or cfg.exact_depth:
            return cfg.depth
        return min(cfg.depth, self.reading(ctx, state).hops)

    def params(self) -> dict[str, Any]:
        return {"plan_hops": self.plan_hops, "type_gate": self.type_gate, "hop_focus": self.hop_focus,
                "lookahead": self.lookahead, "lookahead_weight": self.lookahead_weight, "floor": self.floor,
                "entity_weight": self.entity_weight, "type_templates": self.type_templates,
                "neighbour_evidence": self.neighbour_evidence, "stop_when_nothing_ahead": self.stop_when_nothing_ahead,
                "try_depths": self.try_depths, "answer_model": self.answer_model, "type_prior": self.type_prior,
                "type_prior_factor": self.type_prior_factor, "chain_fusion": self.chain_fusion,
                "relation_width": self.relation_width, "retrieved": self.retrieved, "path_found": self.path_found,
                # only when on: a run saved before the option existed resumes without a "policy changed" note
                **({"text_found": self.text_found} if self.text_found else {}),
                **({"beam_descriptions": True} if self.beam_descriptions else {}),
                **({"second_search": False} if not self.second_search else {}),
                **({"path_beam": True} if self.path_beam else {})}

    # ------------------------------------------------------------------ relation texts
    def relation_text(self, ctx: SearchContext, label: str, ridx: int) -> str:
        """A typed graph's relation as a template: an example description with both endpoints replaced by their
        types, the same text for every edge of the type (scored on meaning, embedded once). GraphRAG's free-text
        descriptions are read as they are."""
        g = ctx.graph
        if not g.has_relation_labels or not self.type_templates:
            return label.replace("_", " ") if g.has_relation_labels else label
        desc = g.descriptions([ridx])[0]
        if not desc:
            return label.replace("_", " ")
        for e in sorted((g.entity(i) for i in g.endpoints(ridx)), key=lambda e: -len(e.title)):
            kind = f"a {(e.type or 'thing').lower().replace('_', ' ')}"
            for name in dict.fromkeys((e.title, e.title.replace("_", " "))) if e.title else ():
                desc = desc.replace(name, kind)  # PathQuestion's titles write spaces as "_", its descriptions don't
        return desc

    def type_text(self, ctx: SearchContext, label: str, ridx: int) -> str:
        """relation_text, remembered on a typed graph per (relation, endpoint types), so it never depends on which
        edge of the type was read first."""
        g = ctx.graph
        if not g.has_relation_labels:
            return self.relation_text(ctx, label, ridx)
        src, dst = g.endpoints(ridx)
        key = (id(g), label, g.entity(src).type, g.entity(dst).type)
        if key not in self._memo:
            self._memo[key] = self.relation_text(ctx, label, ridx)
        return self._memo[key]

    def hop_words(self, ctx: SearchContext, h: Hop) -> str:
        """What a hop says, for matching question words: its type's template on a typed graph (not the edge's
        description, whose entity names would match by accident), else its label."""
        if ctx.graph.has_relation_labels:
            return self.type_text(ctx, ctx.graph.labels([h.ridx])[0], h.ridx)
        return h.label

    # ------------------------------------------------------------------ question coverage
    def coverage(self, ctx: SearchContext, state: State, p: BeamPath) -> Counter[str]:
        """The question words the path's relations match (coverage.py)."""
        return covered(self.reading(ctx, state).want,
                       [self.hop_words(ctx, h) for h in p.hops])

    def trial_coverage(self, ctx: SearchContext, state: State, p: BeamPath) -> tuple[Counter[str], list[str]]:
        """`coverage` as the number of hops is tried (`plan`): (the words counted, words set aside: none). Setting the
        asked noun aside unless the chain's end is one helped only the sets it was read from (docs/rules.md)."""
        return self.coverage(ctx, state, p), []

    def _bands(self, ctx: SearchContext, state: State, depth: int) -> list[str]:
        return self.reading(ctx, state).bands(depth) if self.hop_focus else []

    def relation_query(self, ctx: SearchContext, state: State, i: int) -> tuple[str, str]:
        """(focus, rest): this hop's part of the question less what the path already matched, and the question
        without the path's own topic's name and the matched words (other topics' names stay)."""
        if not self.hop_focus:
            return "", ""
        bands = self._bands(ctx, state, ctx.last_depth(state))
        focus = bands[state.depth - 1] if len(bands) >= state.depth else ""
        p = state.paths[i]
        got = self.coverage(ctx, state, p)
        # the path's own topic says nothing about which relation to take (every one of its edges names it); another
        # topic of the question does: "which friend learned the trade at Fezziwig's alongside Scrooge"
        rest = rest_of_question(state.question, [ctx.graph.title(p.start)], got)
        return (without_words(focus, got) if focus and p.hops else focus), rest

    def relation_evidence(self, ctx: SearchContext, groups: Sequence[RelChoice]) -> list[str]:
        """What a cheap scorer reads beside each GraphRAG relation: the first sentence of the description of the
        entity it leads to (what that entity is), read for all groups in one call. Nothing on a typed graph, whose
        relation types are read as templates, nor for an LLM scorer."""
        if not self.neighbour_evidence or ctx.graph.has_relation_labels or uses_llm(ctx.relation_scorer):
            return [""] * len(groups)
        targets = tuple(g.others[0] for g in groups)  # a group has an edge
        big = len(targets) >= EVIDENCE_KEPT_FROM
        if big and self._evidence and self._evidence[0] is ctx.graph and self._evidence[1] == targets:
            return list(self._evidence[2])
        descriptions = ctx.graph.entity_descriptions(targets)
        first = {d: first_sentence(d, limit=EVIDENCE_CHARS) for d in set(descriptions)}  # many neighbours share one
        out = [first[d] for d in descriptions]
        if big:  # a hub's evidence, kept for the next search that scores it (policy/depths.py tries several)
            self._evidence = (ctx.graph, targets, tuple(out))
        return out

    # ------------------------------------------------------------------ scores
    def relation_scores(self, ctx: SearchContext, state: State, i: int, groups: Sequence[RelChoice],
                        scores: list[float], scored: list[bool]) -> list[float]:
        """A floor under cheap scores (0 means "no word in common", not "impossible"). LLM scores are left as they
        are. A relation the path already took is not damped: "X's son's son" asks for it again (damping it at 0.5
        cost PathQuestion-3H beam recall 0.94 -> 0.66 with the embedder, and gave MetaQA +0.007)."""
        if uses_llm(ctx.relation_scorer):
            return scores
        out = [self.floor + (1 - self.floor) * v if ok else v for v, ok in zip(scores, scored)]
        return out

    def __post_init__(self) -> None:
        if self.relation_width < 1:
            raise ValueError(f"relation_width must be at least 1 (got {self.relation_width})")

    def relations_kept(self, ctx: SearchContext) -> int:
        """relation_width x the beam width on a GraphRAG graph with cheap scorers on both stages; else the beam width
        (the paper's N): with the LLM on either stage, and on a typed graph."""
        width = ctx.config.width
        wide = (width and not ctx.graph.has_relation_labels and not uses_llm(ctx.relation_scorer)
                and not uses_llm(ctx.entity_scorer))
        return width * self.relation_width if wide else width

    def hop_score(self, ctx: SearchContext, rel_score: float, ent_score: float, ahead: NextHop | None
                  ) -> tuple[float, str]:
        if uses_llm(ctx.entity_scorer):
            score = rel_score * ent_score
        else:
            score = rel_score * (1 - self.entity_weight + self.entity_weight * ent_score)
        if ahead is None:
            return score, ""
        score *= 1 - self.lookahead_weight + self.lookahead_weight * ahead.value
        why = f"next: {ahead.text[:80]} ({ahead.value:.2f})" if ahead.text else "next: dead end"
        return score, why

    def entity_prior(self, ctx: SearchContext, state: State, entity: int) -> tuple[float, str]:
        """type_prior: at the last hop of a GraphRAG search with a cheap entity scorer, a candidate of another type
        than the question asks for (when the graph has that type) keeps type_prior_factor of its score."""
        if (not self.type_prior or ctx.graph.has_relation_labels or uses_llm(ctx.entity_scorer)
                or state.depth < ctx.last_depth(state)):
            return 1.0, ""
        asked = list(self.reading(ctx, state).asked)
        kind = ctx.graph.entity(entity).type
        if type_matches(asked, kind) is not False or not self._graph_has_type(ctx, asked):
            return 1.0, ""
        return self.type_prior_factor, f"type {kind}, not what the question asks for (x{self.type_prior_factor:g})"

    def looks_ahead(self, ctx: SearchContext, state: State) -> bool:
        """Before the last hop, with cheap scorers on both stages."""
        return (self.lookahead and state.depth < ctx.last_depth(state) and not uses_llm(ctx.relation_scorer)
                and not uses_llm(ctx.entity_scorer))

    async def rate_next(self, ctx: SearchContext, state: State,
                        options: Sequence[NextEdges]) -> dict[tuple[str, int], NextHop]:
        """Each candidate entity rated by the best relation it offers next (lookahead.py), read from the next edges
        the engine hands over. {} when that does not apply."""
        if not options or not self.looks_ahead(ctx, state):
            return {}
        bands = self._bands(ctx, state, ctx.last_depth(state))
        scorer = ctx.relation_scorer if ctx.graph.has_relation_labels else ctx.prefilter
        ratings = await rate_next_hops(
            ctx.graph, scorer, question=state.question, focus=bands[state.depth] if len(bands) > state.depth else "",
            options=options, text_of=self.type_text, ctx=ctx, floor=self.floor, per_entity=ctx.config.max_candidates)
        return {o.key: r for o, r in zip(options, ratings)}

    # ------------------------------------------------------------------ the question's reading
    def reading(self, ctx: SearchContext, state: State) -> QuestionReading:
        """How the question was read (State.reading: made once by ToGEngine.start, restored with a saved run); a
        State built by hand without one is read by the rule reader, once."""
        if state.reading is not None:
            return state.reading
        key = ("reading", id(ctx.graph), state.question, tuple(x.title for x in state.seeds))
        if key not in self._memo:
            self._memo[key] = read_question(state.question, [x.title for x in state.seeds], graph=ctx.graph)
        return self._memo[key]

    def _graph_has_type(self, ctx: SearchContext, asked: list[str]) -> bool:
        """Whether some entity type of the graph (readers.entity_types, read once per graph) is what the question asks
        for, so a question about "languages" on a graph without a language type does not search on."""
        return any(type_matches(asked, t) for t in entity_types(ctx.graph))

    def rank_key(self, ctx: SearchContext, state: State, p: BeamPath) -> tuple[float, ...]:
        """Best score first; without an LLM, ties go to the chain that covers more of the question."""
        cov = self.coverage(ctx, state, p).total() if ctx.llm is None else 0
        return (-p.score, -cov)
