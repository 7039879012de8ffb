"""The step engine of Think-on-Graph: the paper's Algorithm 1, one stage at a time. One engine serves the automatic
run, the human-in-the-loop page and the CLI/benchmark:

    engine = ToGEngine(graph, llm=..., config=EngineConfig(...))
    state = engine.start(question, seeds=None)               # the topic entities: the beam's first frontier
    while not state.done:                                    # for each depth up to D:
        proposal = await engine.propose(state)               #   relations -> entities -> evaluate (stages.py)
        state = engine.apply(state, proposal, choice)        #   choice None = the automatic top N
    state = await engine.answer(state)                       # the answer from the kept chains

Within a stage every frontier path is scored concurrently (the LLM client bounds the concurrency). LLM calls per
question stay within the paper's 2·N·D + D + 1: ≤ N relation calls and ≤ N entity calls per depth, one evaluation
per depth but the last (at max depth the search stops anyway), one answer, and at most one linking call. The
number of hops, when it is known before the search (State.hops), is an input: deciding it is a loop around the
engine (policy/depths.py).
"""
from __future__ import annotations

import time
from collections import OrderedDict
from typing import Any
from collections.abc import Awaitable, Callable, Iterable, Sequence

from tog_core.llm.usage import Usage
from tog_core.scoring.scorers import CHEAP, make_scorer, one_of
from tog_core.prompting import prompts
from tog_core.reading import QuestionReading
from tog_core.reading.readers import read as read_question
from tog_core.tog.limits import check_question
from tog_core.tog.linking import link_embedding, link_question, link_with_llm
from tog_core.tog.choice import found_words
from tog_core.tog.policy import GUESS_WORDS, AnswerChoice, FaithfulPolicy, SearchPolicy
from tog_core.tog.recording import Recording, now_iso
from tog_core.tog.fast import FastPairs
from tog_core.tog.stages import FALLBACK_EVALUATE_LLM_ERROR, StageProposals  # noqa: F401  (re-exported fallback name)
from tog_core.tog.texts import ChainTexts
from tog_core.tog.state import BeamPath, Callbacks, EngineConfig, Proposal, State
from tog_core.tog.trace import Seed, Step

FALLBACK_ANSWER_LLM_ERROR = "answer_llm_error_composed"  # answer call failed: composed from chains
FALLBACK_LINK_LLM_ERROR = "link_llm_error_no_seeds"


class ToGEngine(StageProposals, FastPairs, ChainTexts, Recording):
    """Think-on-Graph over a GraphStore. Every side effect is a constructor argument; `policy` is the search
    policy (tog/policy.py): FaithfulPolicy (the paper) unless another is given, e.g. policy/cheap.CheapPolicy
    for LLM-free pruning. Front doors build engines through tog_core.compose.build_engine, which picks it."""

    def __init__(self, graph: Any, *, llm: Any | None = None, embedder: Any | None = None,
                 config: EngineConfig | None = None, policy: SearchPolicy | None = None,
                 relation_scorer: Any | None = None, entity_scorer: Any | None = None, prefilter: Any | None = None,
                 clock: Callable[[], float] = time.perf_counter, project: str = "") -> None:
        self.graph = graph
        self.llm = llm
        self.embedder = embedder
        self.config = config or EngineConfig()
        self.policy: SearchPolicy = policy if policy is not None else FaithfulPolicy()
        self.clock = clock
        # what runs on a stopped search before its answer is written (compose.build_engine sets the LLM-free
        # policy's second search, policy/agreement.py); None: nothing
        self.before_answer: Callable[[ToGEngine, State], Awaitable[State]] | None = None
        self.project = project
        cfg = self.config
        deps = dict(llm=llm, embedder=embedder, seed=cfg.seed, temperature=cfg.temperature_exploration,
                    max_tokens=cfg.max_tokens, compact=cfg.compact_scores)
        self.relation_scorer = relation_scorer or make_scorer(cfg.relation_pruner, **deps)
        self.entity_scorer = entity_scorer or make_scorer(cfg.entity_pruner, **deps)
        self.prefilter = prefilter or make_scorer(cfg.prefilter, **deps)
        if getattr(self.prefilter, "uses_llm", False):
            raise ValueError(f"the pre-filter must be a cheap scorer ({one_of(CHEAP)}), not llm")

    @property
    def _first_stage(self) -> str:
        """Faithful ToG scores relations, then entities; fast mode scores (relation, entity) pairs at once."""
        return "entities" if self.config.mode == "fast" else "relations"

    # ------------------------------------------------------------------ Algorithm 1
    async def run(self, question: str, *, seeds: Iterable[Seed | str] | None = None,
                  callbacks: Callbacks | None = None, state: State | None = None,
                  policy: Callable[[Proposal], set[str] | None] | None = None) -> State:
        """Algorithm 1 from the topic entities to the answer (or from `state`, a resumed or prepared one): per depth
        relation exploration and pruning, entity exploration and pruning, reasoning; then the answer."""
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
        state = await self.answer(state, on_token=cb.on_token, on_reset=cb.on_answer_reset)
        cb.on_state(state)
        cb.on_usage(self.stats(state, wall_s=self.clock() - t0))
        return state

    # ------------------------------------------------------------------ start / link
    def start(self, question: str, seeds: Iterable[Seed | str] | None = None, *,
              reading: QuestionReading | None = None) -> State:
        """A fresh state. Seeds: given (titles, ids or Seed objects) or linked from the question. `reading`: how the
        question was read (State.reading); else the rule reader reads it once, with the seeds' titles."""
        question = question.strip()
        if not question:
            raise ValueError("the question is empty")
        check_question(question)
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
        if reading is None or reading.question != question:
            reading = read_question(question, [s.title for s in found], graph=self.graph)
        return State(question=question, seeds=tuple(found), paths=tuple(paths), stage=stage,
                     stop_reason=None if paths else "no_candidates", reading=reading)

    async def start_async(self, question: str, seeds: Iterable[Seed | str] | None = None, *,
                          hops: int | None = None, hops_firm: bool = False,
                          reading: QuestionReading | None = None) -> State:
        """Like start, but when no title matches the question, ask the LLM for the topic entities. `hops`: the
        number of hops to search, when it is known before the search (State.hops; `hops_firm`: a person chose it,
        the search does not stop sooner). Deciding it is the runner's around the engine (policy/depths.py).
        `reading`: how the question was read, when a reader other than the rules read it (see start)."""
        if hops is not None and not 1 <= hops <= self.config.depth:
            raise ValueError(f"the number of hops must be between 1 and the maximum depth ({self.config.depth})")
        state = await self._linked(question, seeds, reading)
        return state.with_(hops=hops, hops_firm=hops_firm) if hops is not None else state

    async def _linked(self, question: str, seeds: Iterable[Seed | str] | None,
                      reading: QuestionReading | None = None) -> State:
        state = self.start(question, seeds, reading=reading)
        if state.paths or seeds is not None:
            return state
        if self.embedder is not None:
            found = link_embedding(question, self.graph, self.embedder)
            if found:
                return self.start(question, found, reading=reading)
        if self.llm is None:
            return state
        from tog_core.llm.client import LLMError

        t0 = self.clock()
        try:
            found, usage = await link_with_llm(question, self.graph, self.llm,
                                               temperature=self.config.temperature_reasoning)
        except LLMError as err:
            usage = {**Usage.failed_call().to_dict(), "fallback": FALLBACK_LINK_LLM_ERROR, "detail": str(err)[:200]}
            found = []
        usage = {**usage, "stage": "link", "wall_s": self.clock() - t0}
        st = self.start(question, found, reading=reading) if found else state
        st = st.with_(extra_usage=st.extra_usage + (usage,))
        if not found and usage.get("fallback") == FALLBACK_LINK_LLM_ERROR:  # nothing could be done: say so
            st = st.with_(stop_reason="error", error=usage["detail"])
        return st

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
        started, t0 = now_iso(), self.clock()
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
    def best_paths(self, state: State) -> list[BeamPath]:
        """Chains with hops, best first, in the policy's order (the order the answer and the trace use). A chain that
        came back to its start or ends at another topic entity (BeamPath.answers_nothing) goes after every chain
        that did not."""
        topics = self.topic_ids(state)
        last = self.config.dead_chains_last  # departure: the paper ranks by score alone
        return sorted([p for p in state.paths if p.hops],
                      key=lambda p: (last and p.answers_nothing(topics), *self.policy.rank_key(self, state, p)))

    def evidence_texts(self, state: State, *, per_link: int = 1, limit: int = 6,
                       paths: Sequence[BeamPath] | None = None) -> list[str]:
        """The passages behind the links of `paths` (default: the best chains), `per_link` per link, `limit` in all."""
        out: list[str] = []
        seen: set[str] = set()
        for p in self.best_paths(state) if paths is None else paths:
            for h in p.hops:
                for tu in self.graph.evidence(h.ridx)[:per_link]:
                    if tu.id not in seen:
                        seen.add(tu.id)
                        out.append(tu.text)
        return out[:limit]

    def answer_choice(self, state: State) -> AnswerChoice | None:
        """The entity the answer names, chosen by the policy over every entity of the kept chains (a person's forced
        entity when there is one)."""
        if state.forced_entity is not None:
            ranked = self.answer_candidates(state)
            return ranked[0] if ranked else None
        return self.policy.choose_answer(self, state, self.best_paths(state))

    def answer_candidates(self, state: State) -> list[AnswerChoice]:
        """The ordered answer list, the answer first (the policy's rank_answers); a person's forced entity first, the
        search's other candidates after it in the policy's order."""
        ranked = self.policy.rank_answers(self, state, self.best_paths(state))
        mine = self._forced_end(state)
        if mine is None:
            return ranked
        first = [c for c in ranked if c.entity == mine][:1] or [
            c for c in self.policy.rank_answers(self, state, self._paths_to(state, mine)) if c.entity == mine][:1]
        return first + [c for c in ranked if c.entity != mine] if first else ranked

    def _forced_end(self, state: State) -> int | None:
        eid = state.forced_entity
        return self.graph.find(eid) if eid is not None else None

    def _paths_to(self, state: State, entity: int) -> list[BeamPath]:
        """The kept chains that end at `entity` (a forced answer's: cut at it)."""
        return [p for p in self.best_paths(state) if p.hops and p.hops[-1].dst == entity]

    def compose_answer(self, state: State) -> str:
        """The LLM-free answer: the chosen entity, its chain, the other candidates, marked as not written by a
        language model."""
        best = self.best_paths(state)
        head = "[No LLM] This answer is composed from the reasoning chains; no language model wrote it."
        choice = self.answer_choice(state)
        if choice is None:  # nothing to compose from: say so, not "composed from the chains"
            if not state.seeds:
                return ("[No LLM] No answer: no entity of this project was found in the question. Name one as the "
                        "graph writes it (the Graph browser page finds titles), or choose the topic entities yourself.")
            seeds = ", ".join(s.title for s in state.seeds)
            if state.stop_reason == "user":  # a person stopped it before any chain: not that none exists
                return (f"[No LLM] No answer: the search was stopped before it found a reasoning chain from the "
                        f"topic entities ({seeds}). Ask again to let it search.")
            return f"[No LLM] No answer: no reasoning chain was found from the topic entities ({seeds})."
        top = self.graph.title(choice.entity)
        others = [self.graph.title(c.entity) for c in self.answer_candidates(state)]
        ends = [t for t in OrderedDict((t, None) for t in others) if t != top][:5]
        unsure = f" — low confidence, {GUESS_WORDS}" if choice.confidence < choice.low else ""
        lines = [head, f"Answer you forced in: {top} (no confidence is claimed for an answer a person chose)"
                 if state.forced else f"Most likely answer: {top} (confidence {choice.confidence:.2f}{unsure}; "
                                      f"{choice.why})"]
        if ends:
            lines.append("Other candidates: " + ", ".join(ends))
        if all(p.hops[:choice.hop] != choice.path.hops[:choice.hop] for p in best):
            how = (f"the shortest to it: {found_words(choice.found)}, not by the search" if choice.found
                   else "from another number of hops tried")
            lines.append(f"The answer's chain ({how}): {self.path_text(choice.path)}")
        lines.append("Chains:")
        lines += [f"[{k + 1}] {self.path_text(p)} (score {p.score:.2f})" for k, p in enumerate(best)]
        return "\n".join(lines)

    async def answer(self, state: State, on_token: Callable[[str], None] | None = None,
                     on_reset: Callable[[], None] | None = None) -> State:
        """Write the answer (streamed through on_token). If the LLM fails after some tokens were shown,
        on_reset tells the UI to clear them before the answer composed from the chains arrives."""
        if state.stage == "done":
            return state
        if not state.done:
            state = self.stop(state)
        if self.before_answer is not None:
            state = await self.before_answer(self, state)
        emit = on_token or (lambda _t: None)
        if self.llm is None or not state.paths or not any(p.hops for p in state.paths):
            text = self.compose_answer(state)
            emit(text)
            return state.with_(stage="done", answer=text, answer_by="chains")
        from tog_core.llm.client import LLMError

        t0 = self.clock()
        mine = self._forced_end(state)  # a person's forced answer: the LLM reads the chains that end at it
        chains = (self._paths_to(state, mine) if mine is not None else []) or self.best_paths(state)
        evidence = self.evidence_texts(state, paths=chains)  # the passages of the chains the LLM is given, no others
        msgs = prompts.answer_prompt(state.question, self._chain_texts(chains), evidence)
        shown: list[str] = []

        def tee(piece: str) -> None:
            shown.append(piece)
            emit(piece)

        try:
            res = await self.llm.stream(msgs, temperature=self.config.temperature_reasoning,
                                        max_tokens=self.config.answer_max_tokens, on_token=tee)
        except LLMError as err:
            if shown and on_reset is not None:
                on_reset()
            text = self.compose_answer(state)
            emit(text)
            usage = {"stage": "answer", **Usage.failed_call().to_dict(), "fallback": FALLBACK_ANSWER_LLM_ERROR,
                     "detail": f"{err.kind}: {str(err)[:200]}", "wall_s": self.clock() - t0}
            return state.with_(stage="done", answer=text, answer_by="chains", error=str(err)[:300],
                               extra_usage=state.extra_usage + (usage,))
        usage = {"stage": "answer", **Usage.of_result(res).to_dict(), "wall_s": self.clock() - t0}
        return state.with_(stage="done", answer=res.text, answer_by="llm", extra_usage=state.extra_usage + (usage,))

    # ------------------------------------------------------------------ trace
