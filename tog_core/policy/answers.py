"""The LLM-free answer: which entity of the kept chains the answer names, and the ordered list behind it.

`CheapAnswers` is the answer half of `CheapPolicy` (policy/cheap.py): the fitted ranking over every entity of every
kept chain (policy/ranking.py, `answer_model`), the rule choice it reads as one input and falls back to, and the
pool it ranks: the search's own chains and the depth trials', less any chain that takes a step a person dropped, the
few entities near the topic entities whose descriptions read best against the question (policy/retrieval.py), and the
few named where the source text behind their relationships reads best against it (policy/textunits.py; off by
default).
"""
from __future__ import annotations

import logging
from collections import Counter
from typing import Any

from tog_core.graphrag.pg_common import StoreError
from tog_core.policy import candidates, explain, naming, pathcover, ranking, retrieval, textunits
from tog_core.policy.coverage import covered
from tog_core.reading import QuestionReading
from tog_core.scoring.question import asked_in, type_matches
from tog_core.scoring.scorers import reads_question
from tog_core.tog.choice import found_chain, found_words, place_words, second_search_words
from tog_core.tog.policy import BESIDE_BEAM, AnswerChoice, SearchContext, chain_ends
from tog_core.tog.state import BeamPath, Hop, Search, State


log = logging.getLogger(__name__)


def found_why(kind: str) -> str:
    """What a candidate's `why` says of one no kept chain reaches (policy/retrieval.py, policy/textunits.py,
    policy/pathcover.py)."""
    return f"{found_words(kind)}, not on a kept chain (its chain is {found_chain(kind)})"


class CheapAnswers:
    """The answer methods of CheapPolicy; they read its `reading`, `hop_words`, `answer_model` and `_ranked`."""

    answer_model: bool
    retrieved: int
    text_found: int
    path_found: int
    path_beam: bool
    second_search: bool
    _ranked: dict[tuple[Any, ...], list[AnswerChoice]]
    _routes: dict[tuple[Any, ...], tuple[BeamPath, str] | None]

    def reading(self, ctx: SearchContext, state: State) -> QuestionReading:  # CheapPolicy's
        raise NotImplementedError

    def hop_words(self, ctx: SearchContext, h: Hop) -> str:  # CheapPolicy's
        raise NotImplementedError

    def description_query(self, ctx: SearchContext, state: State) -> frozenset[str]:
        """The question's words read against entity descriptions (retrieval.query_words: without the topics' names, in
        the reading's language); none on a typed graph, whose descriptions are templates."""
        if ctx.graph.has_relation_labels:
            return frozenset()
        return retrieval.query_words(state.question, [x.title for x in state.seeds], self.reading(ctx, state).language)

    def choose_answer(self, ctx: SearchContext, state: State, paths: list[BeamPath]) -> AnswerChoice | None:
        """The first of rank_answers."""
        ranked = self.rank_answers(ctx, state, paths)
        return ranked[0] if ranked else None

    def rank_answers(self, ctx: SearchContext, state: State, paths: list[BeamPath]) -> list[AnswerChoice]:
        """The ordered answer list. With answer_model, the fitted model, the packaged embedder and no LLM pruning:
        every entity of every kept chain (this search's and State.other_searches'), best first by the model
        (ranking.py), the confidence its probability. Else the rule choice first, then the chains' ends."""
        if not paths and (not state.other_searches or person_stopped(state)):
            return []
        # everything _rank reads: the graph, the question, its reading and seeds, the chains, whether only ends
        # answer, the LLM, the search's depth and how many are found off the chains (by description, in the text)
        key = (id(ctx.graph), state.question, repr(state.reading), tuple(x.id for x in state.seeds), ctx.llm is None,
               state.depth, self.retrieved, self.text_found, self.path_found,
               bool(ctx.config.exact_depth or state.hops_firm), tuple(candidates.path_key(p) for p in paths),
               tuple((s.depth, tuple(candidates.path_key(p) for p in s.paths)) for s in state.other_searches),
               (dropped := person_dropped(state)), state.forced, person_stopped(state), state.second)
        if key in self._ranked:
            return self._ranked[key]
        out = self._rank(ctx, state, paths, dropped)
        if len(self._ranked) >= 16:
            self._ranked.pop(next(iter(self._ranked)))
        self._ranked[key] = out
        return out

    def _rank(self, ctx: SearchContext, state: State, paths: list[BeamPath],
              dropped: frozenset[tuple[Any, ...]] | None = None) -> list[AnswerChoice]:
        rule = self.rule_choice(ctx, state, paths)
        model = ranking.shipped_model(ctx.graph.has_relation_labels) if self.answer_model and ctx.llm is None else None
        embedder = ranking.ranking_embedder() if model is not None else None
        if model is None or embedder is None:
            return chain_ends(paths, rule)
        try:
            cands = self.answer_features(ctx, state, paths, rule, embedder, dropped=dropped)
        except StoreError as err:  # a graph store gone away mid-run (the candidates' source text unread): the chains
            log.warning("the answer candidates could not be read, the chains' ends answer: %s", err)
            return chain_ends(paths, rule)
        if not cands:
            return chain_ends(paths, rule)
        ranked = ranking.rank(cands, model)
        n = len(ranked)
        # with a second search (policy/agreement.py), the confidence also reads how sure that search is of this answer
        second = state.second.prob(ranked[0].entity) if state.second is not None and model.agree else None
        sure, low = model.confidence(ranked, second), model.low if second is None else model.agree_low
        agreed = "" if second is None or state.second is None else second_search_words(
            state.second.place(ranked[0].entity), second,
            None if state.second.first is None else ctx.graph.title(state.second.first))
        set_aside = ranking.names_set_aside([c.features for c in ranked])
        said = explain.reasons(model, [c.features for c in ranked], [ctx.graph.title(c.entity) for c in ranked])
        return [AnswerChoice(path=c.path, hop=len(c.path.hops), confidence=round(sure if i == 0 else c.prob, 3),
                             score=round(c.prob, 4), low=low, sentence=c.sentence, found=found,
                             why=_why(i, n, bool(c.features.get("is_pick")), model.rule_first,
                                      c.features.get("type_fit", 0.0))
                             + (f"; {found_why(found)}" if found else "")
                             + ("; the question names it: context, ranked after the others"
                                if set_aside and c.features.get("named") else "") + (f"; {r}" if r else "")
                             + (f"; {agreed}" if i == 0 and agreed else ""))
                for i, (c, r, found) in enumerate(zip(ranked, said, map(_found, ranked)))]

    def answer_features(self, ctx: SearchContext, state: State, paths: list[BeamPath], rule: AnswerChoice | None,
                        embedder: Any | None, *, dropped: frozenset[tuple[Any, ...]] | None = None
                        ) -> list[candidates.RankedEntity]:
        """Every entity of every kept chain, then the entities found by their descriptions and in the source text
        (retrieved_candidates), with their features (candidates.py; the model that reads them: ranking.py, fitted
        by bench/fit_ranker.py); `dropped`: person_dropped(state) when the caller has it already."""
        searches = [Search(depth=state.depth, paths=tuple(paths)), *person_allowed(ctx.graph, state, dropped)]
        topics = ctx.topic_ids(state)
        # the number of hops is known (given, or chosen by a person): only the chains' ends answer
        ends_only = bool(ctx.config.exact_depth or state.hops_firm)
        cands, _, _ = candidates.gather(searches, topics, ends_only=ends_only)
        reading = self.reading(ctx, state)
        topic_titles = [x.title for x in state.seeds]
        query = self.description_query(ctx, state)
        walk = self.path_walk(ctx, state, query) if self.path_found else None
        for c in cands:
            c.features["beam"] = 1.0
        if not person_stopped(state):  # a person who judged the chains enough is answered from them
            cands += self.retrieved_candidates(ctx, state, query, frozenset(c.entity for c in cands), ends_only,
                                               dropped, topic_titles, walk)
        asked, want = list(reading.asked), reading.want
        pick = rule.entity if rule is not None else None
        # free text: the words that name what is asked ("which place") describe the answer, not a fact its chain
        # states ("took place" covered "place"); typed graphs keep them (their model was fitted with them)
        free = reading.asked_named and not ctx.graph.has_relation_labels
        aside = asked_in(state.question, asked) if free else frozenset()
        facts = Counter({w: n for w, n in want.items() if w not in aside})
        described = self._description_scores(ctx, [c.entity for c in cands], query)
        for i, c in enumerate(cands):
            # free text only: a typed graph's descriptions are templates (its model was fitted without it)
            c.features["desc_bm25"] = described[i]
            if walk is not None:  # only with the finder on (the shipped model was fitted without it)
                c.features["path_cover"] = walk.cover(c.entity)
            fit = type_matches(asked, ctx.graph.entity(c.entity).type)
            c.features["type_fit"] = 0.0 if fit is None else 1.0 if fit else -1.0
            got = covered(facts, [self.hop_words(ctx, h) for h in c.path.hops])
            c.features["coverage"] = got.total() / max(1, facts.total())
            c.features["is_pick"] = float(c.entity == pick)
            # read by ranking.order, not by the model: what the question names is its context (free text only)
            c.features["named"] = float(not ctx.graph.has_relation_labels and naming.named_in(
                state.question, ctx.graph.title(c.entity), topic_titles))
            # free text only, as "named" (the typed model was fitted without it: fit_ranker.UNUSED)
            c.features["title_named"] = 0.0 if ctx.graph.has_relation_labels else naming.title_named(
                state.question, ctx.graph.title(c.entity), topic_titles, aside, reading.language)
        candidates.text_features(cands, question=state.question, topic_titles=topic_titles,
                                 graph=ctx.graph, embedder=embedder, facts=frozenset(facts), asked=aside,
                                 language=reading.language)
        return cands

    def retrieved_candidates(self, ctx: SearchContext, state: State, query: frozenset[str], exclude: frozenset[int],
                             ends_only: bool, dropped: frozenset[tuple[Any, ...]] | None,
                             topic_titles: list[str], walk: pathcover.Walk | None = None
                             ) -> list[candidates.RankedEntity]:
        """The entities within the search's depth of the topic entities whose descriptions read best against the
        question (policy/retrieval.py), `retrieved` of them not already candidates, then `text_found` named where the
        source text behind the neighbourhood's relationships reads best against it (policy/textunits.py), each with
        the shortest chain to it; the search-side features 0 (`beam` 0: the search did not reach it; `found_text`
        marks the second kind, for the trace, and is no model feature). None on a typed graph or when a person forced
        the answer in; an entity the question names (`naming.named_in`: ranked last anyway) and a chain through a step
        a person dropped are skipped; none when the store cannot be read."""
        if not query or state.forced or ctx.graph.has_relation_labels or not (
                self.retrieved or self.text_found or walk is not None):
            return []
        dropped = person_dropped(state) if dropped is None else dropped
        topics = ctx.topic_ids(state)
        depth = max(1, state.depth)

        def allowed(p: BeamPath) -> bool:  # what the question names is its context (ranked last): not worth a place
            return (not naming.named_in(state.question, ctx.graph.title(p.end), topic_titles)
                    and (not dropped or avoids(ctx.graph, p, dropped)))
        try:
            # the walk only when a finder will read it: no description index (a graph above retrieval.MAX_ENTITIES)
            # and no text finder, no walk
            if not self.text_found and (not self.retrieved or retrieval.index_of(ctx.graph) is None):
                return self._path_found(ctx, state, walk, exclude | topics, ends_only, allowed)
            near = retrieval.neighbourhood(ctx.graph, sorted(topics), depth)
            paths = retrieval.retrieve(ctx.graph, sorted(topics), depth, query, k=self.retrieved,
                                       exclude=exclude | topics, exact=ends_only, allowed=allowed, near=near)
        except StoreError as err:  # a store gone away reads no neighbourhood: the chains' candidates still answer
            log.warning("no candidates found by description or in the source text: %s", err)
            return []
        try:
            in_text = textunits.found_in_text(ctx.graph, near, query, k=self.text_found, exact=ends_only,
                                              exclude=exclude | topics | {p.end for p in paths}, allowed=allowed)
        except StoreError as err:  # the text units unread: the ones found by description still count
            log.warning("no candidates found in the source text: %s", err)
            in_text = []
        found = [_off_chain(p, depth, **({"found_text": 1.0} if text else {}))
                 for text, group in ((False, paths), (True, in_text)) for p in group]
        return found + self._path_found(ctx, state, walk, exclude | topics | {c.entity for c in found}, ends_only,
                                        allowed)

    def whole_path(self, ctx: SearchContext, state: State) -> tuple[BeamPath, str] | None:
        """With `path_beam`, where the paths are read whole (path_walk): the path to the depth the search expects to
        answer at that names the most of the question, which the beam keeps beside its own N at every step, and the
        reason the trace gives; None when no path names a word of it. One walk per search (cached)."""
        if not self.path_beam:
            return None
        depth = max(1, ctx.last_depth(state))
        topics = ctx.topic_ids(state)
        key = (id(ctx.graph), state.question, repr(state.reading), tuple(sorted(topics)), depth, state.forced)
        if key not in self._routes:
            walk = self.path_walk(ctx, state, self.description_query(ctx, state), depth=depth)
            route = None
            if walk is not None:
                try:
                    found = walk.found(1, exclude=frozenset(topics), exact_hops=depth)
                except StoreError as err:  # a store gone away: the beam keeps its own N
                    log.warning("no whole path for the beam: %s", err)
                    found = []
                if found:  # the share of this path (at `depth`), not the best of any length to its end (cover)
                    share = walk.best[depth][found[0].end][0]
                    route = (found[0], f"{BESIDE_BEAM}: on the path to depth {depth} that names the most of the "
                                       f"question read whole ({share:.0%} of its words)")
            if len(self._routes) >= 16:
                self._routes.pop(next(iter(self._routes)))
            self._routes[key] = route
        return self._routes[key]

    def path_walk(self, ctx: SearchContext, state: State, query: frozenset[str],
                  depth: int | None = None) -> pathcover.Walk | None:
        """Every path up to the maximum depth (or `depth`) from the topic entities, read whole (policy/pathcover.py),
        on a free-text graph, with a query, both stages scored by what reads the question (a random baseline stays
        random; an LLM's pruning is its own), and no answer forced in; else None. Read by the candidates when
        `path_found` is on, and by whole_path when `path_beam` is."""
        if not query or state.forced or ctx.graph.has_relation_labels:
            return None
        if not reads_question(ctx.relation_scorer, ctx.entity_scorer):
            return None
        try:
            return pathcover.walk(ctx.graph, sorted(ctx.topic_ids(state)), max(1, depth or ctx.config.depth), query,
                                  self.reading(ctx, state).language)
        except StoreError as err:
            log.warning("no paths read whole: %s", err)
            return None

    def _path_found(self, ctx: SearchContext, state: State, walk: pathcover.Walk | None, exclude: frozenset[int],
                    ends_only: bool, allowed: Any) -> list[candidates.RankedEntity]:
        """The `path_found` best ends at each number of hops by the walk (only the search's when the hops are known),
        not in `exclude`, each with the path that names the most of the question (`found_path`, for the trace)."""
        if walk is None:
            return []
        try:  # reads each found path's relation labels
            paths = walk.found(self.path_found, exclude=exclude, exact_hops=state.depth if ends_only else None,
                               allowed=allowed)
        except StoreError as err:  # a store gone away: the other candidates still answer
            log.warning("no candidates found by paths read whole: %s", err)
            return []
        return [_off_chain(p, max(1, state.depth), found_path=1.0) for p in paths]

    @staticmethod
    def _description_scores(ctx: SearchContext, entities: list[int], query: frozenset[str]) -> list[float]:
        """`desc_bm25` of each entity (retrieval.description_scores); all 0 without a query (a typed graph) or when
        the store cannot be read to build the index."""
        if not query:
            return [0.0] * len(entities)
        try:
            return retrieval.description_scores(ctx.graph, entities, query)
        except StoreError as err:
            log.warning("descriptions not read: %s", err)
            return [0.0] * len(entities)

    def rule_choice(self, ctx: SearchContext, state: State, paths: list[BeamPath]) -> AnswerChoice | None:
        """Any entity on a kept chain may be the answer: of the three best chains, the end (then the entity one hop
        back, and so on) whose type is what the question asks for ("which town" -> a place, "who" -> a person or
        an organisation; GraphRAG's `type` column, or a typed graph's), else the best chain's end; with an exact
        depth (the hops are known) only chain ends. Confidence adds up the chain's share of the beam (0.3), the type
        fitting (0.3) and how much of the question the chain's relations cover (0.4)."""
        if not paths:
            return None
        reading = self.reading(ctx, state)
        asked, want = list(reading.asked), reading.want
        total = sum(p.score for p in paths) or 1.0
        best = paths[:3]
        back = 1 if exact_depth(ctx, state) else max(len(p.hops) for p in best)
        # the chains' ends first, then one hop back, ...
        topics = ctx.topic_ids(state)  # a prefix ending at a topic entity answers nothing (the question names it)
        pick = next(((p, len(p.hops) - j) for j in range(back) for p in best
                     if j < len(p.hops)
                     and not BeamPath(start=p.start, hops=p.hops[:len(p.hops) - j]).answers_nothing(topics)
                     and type_matches(asked, ctx.graph.entity(p.hops[len(p.hops) - j - 1].dst).type)), None)
        first = next((q for q in paths if not q.answers_nothing(topics)), paths[0])
        p, k = pick or (first, len(first.hops))
        fit = type_matches(asked, ctx.graph.entity(p.hops[k - 1].dst).type)
        got = covered(want, [self.hop_words(ctx, h) for h in p.hops[:k]]).total() / max(1, want.total())
        conf = 0.3 * (p.score / total if total > 0 else 0) + 0.3 * (0.5 if fit is None else float(fit)) + 0.4 * got
        why = ("its type fits the question" if fit else "no entity of the asked type; the best chain's end"
               if fit is False else "the best chain's end") + f"; covers {got:.0%} of the question's words"
        return AnswerChoice(path=p, hop=k, confidence=round(conf, 3), why=why)


def _off_chain(p: BeamPath, depth: int, **marks: float) -> candidates.RankedEntity:
    """A candidate no kept chain reaches, with its shortest (or best-read) chain `p`: the search-side features 0
    (`beam` 0), `marks` saying how it was found (`found_text`, `found_path`: for the trace, no model features)."""
    return candidates.RankedEntity(entity=p.end, path=p, features=dict(
        share_in=0.0, share_end=0.0, path_rel=0.0, inv_rank=0.0, is_end=1.0, hop=float(len(p.hops)),
        search_depth=float(depth), share_searches=0.0, beam=0.0, **marks))


def _found(c: candidates.RankedEntity) -> str:
    """AnswerChoice.found of a ranked candidate when no kept chain reaches it (`beam` 0): "text" when found in the
    source text (its `found_text`, no model feature), else "description"; "" for a chain's."""
    return "" if c.features.get("beam", 1.0) else "text" if c.features.get("found_text") else (
        "path" if c.features.get("found_path") else "description")


# what the rule's pick says of a candidate, by its type_fit (1 fits, -1 does not, 0 the question asks no type): the
# rule takes the best chains' entity nearest their ends of the asked type, else the best chain's end
PICK_WORDS = {1: "the rule's pick: the entity nearest the best chains' ends whose type fits the question",
              -1: "the rule's pick, though its type is not the one asked for: no entity on the best chains has it, "
                  "so the rule took the best chain's end",
              0: "the rule's pick: the best chain's end (the question asks for no type this graph has)"}


def _why(i: int, n: int, is_pick: bool, rule_first: bool, type_fit: float = 0.0) -> str:
    fit = 1 if type_fit > 0 else -1 if type_fit < 0 else 0
    if rule_first and is_pick:
        return ("the rule choice: its type and the question words its chain covers (the ranker follows it here)"
                if fit >= 0 else "the rule choice (the ranker follows it here), though its type is not the one asked "
                                 "for")
    return place_words(i + 1, n) + (f"; also {PICK_WORDS[fit]}" if is_pick else "")


def exact_depth(ctx: SearchContext, state: State) -> bool:
    """Whether the search runs to a known number of hops: given (bench, gold depth) or before the search (State.hops:
    tried by policy/depths.py, or chosen by a person)."""
    return bool(ctx.config.exact_depth) or state.hops is not None


def person_dropped(state: State) -> frozenset[tuple[Any, ...]]:
    """The steps a person dropped that the automatic policy kept (kept, in a trace written before overrides were
    recorded, differs from auto_kept the same way): ("rel", depth, source id, relation label, stored outgoing) for
    a relation group, whatever its size, and ("ent", depth, source id, relationship id, target id) for an entity."""
    out: set[tuple[Any, ...]] = set()
    for step in state.steps:
        for c in step.candidates:
            if not c.auto_kept or c.kept:
                continue
            if c.kind == "relation":
                out.add(("rel", step.depth, c.source_id, c.relation, bool(c.outgoing)))
            elif c.kind == "entity":
                out.update(("ent", step.depth, c.source_id, rid, c.target_id) for rid in c.relationship_ids)
    return frozenset(out)


def person_stopped(state: State) -> bool:
    """Whether a person judged this run's chains enough: "the chains are enough: answer now" chosen against the
    automatic verdict. The answer then comes from those chains alone: not from the depth trials searched before the
    run, nor from entities found off the chains. (Stop & answer is not such a judgement: it answers from everything
    found so far, the trials included, and the page says where the answer's chain comes from.)"""
    # kept against auto_kept: also a trace written before overrides were recorded (as person_dropped reads it)
    return any(c.id == "sufficient" and c.kept and not c.auto_kept for step in state.steps
               if step.stage == "evaluate" for c in step.candidates)


def person_allowed(graph: Any, state: State, dropped: frozenset[tuple[Any, ...]] | None = None
                   ) -> tuple[Search, ...]:
    """The other searches (the depth trials) the answer is ranked over: none when a person forced the answer in or
    judged this run's chains enough (person_stopped), else without the chains that take a step the person dropped in
    this run (the answer and its candidates never come along a way the person ruled out). `dropped`:
    person_dropped(state), when the caller has it."""
    if state.forced or person_stopped(state):
        return ()
    dropped = person_dropped(state) if dropped is None else dropped
    if not dropped:
        return state.other_searches
    return tuple(Search(depth=s.depth, paths=tuple(p for p in s.paths if avoids(graph, p, dropped)))
                 for s in state.other_searches)


def avoids(graph: Any, p: BeamPath, dropped: frozenset[tuple[Any, ...]]) -> bool:
    """Whether chain `p` takes no step a person dropped (`dropped`: person_dropped)."""
    for depth, h in enumerate(p.hops, 1):
        src, rel = graph.entity(h.src).id, graph.relationship(h.ridx)
        if ("rel", depth, src, rel.label, rel.source_idx == h.src) in dropped or \
                ("ent", depth, src, rel.id, graph.entity(h.dst).id) in dropped:
            return False
    return True
