"""Running searches for the app, free of Streamlit: automatic runs, Stop, resume, and the step-by-step page.

Each function takes the engine the app built (tog_core.compose, from the session's RunSpec), a saved run as a
`Trace`, and `RunCallbacks` (the engine's `Callbacks` plus the runner's ticker and save note); the saving after
every step and the ticker are progress.py:

* `run_question` — one automatic run, saved to the run store at its start and after every step (a stopped,
  reloaded or failed run keeps what was done); a ticker reports the elapsed time while it runs;
* `finish_stopped` — the person pressed Stop: the saved run is answered from the chains found so far;
* `resume_question` — an unfinished saved run continues where it stopped, under the same run id;
* `Exploration` + `explore_*` — the human-in-the-loop page: one stage at a time, every state kept so
  "back to depth k" can branch (the old branch stays its own saved run, the new one names `parent_run`);
"Force X in", the "why not X?" override, is force.py (it makes an `Exploration` too).
"""
from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Callable, Iterable

from tog_core.app.progress import Saver, failed, in_progress, saver_for, saving_callbacks, wait_ended, with_ticker
from tog_core.app.replay import replay
from tog_core.app.session import Settings
from tog_core.llm.errors import NotCached
from tog_core.policy import depths
from tog_core.reading import QuestionReading
from tog_core.runs.files import RunStore, new_run_id
from tog_core.tog.recording import now_iso
from tog_core.tog.state import Callbacks, Proposal, Seed, State
from tog_core.tog.trace import Trace

log = logging.getLogger(__name__)


@dataclass(kw_only=True)
class RunCallbacks(Callbacks):
    """The engine's Callbacks (stage, step, token, answer reset, usage, state) and three of the runner's own, all
    doing nothing by default: `on_tick(elapsed seconds)` every TICK_S (progress.py) while a run is in progress (what
    it raises, Streamlit's interrupt when Stop is pressed, ends the run), `on_note(why)` once when the run cannot be
    saved, and `on_start(state)` once the topic entities are linked."""

    on_tick: Callable[[float], None] | None = None
    on_note: Callable[[str], None] | None = None
    on_start: Callable[[State], None] | None = None


def run_question(engine: Any, question: str, callbacks: RunCallbacks | None = None, *,
                 seeds: Iterable[str | Seed] | None = None, hops: int | None = None,
                 tried: Iterable[dict[str, Any]] = (),
                 reading: QuestionReading | None = None, store: RunStore | None = None,
                 model_info: dict[str, Any] | None = None, run_id: str | None = None) -> Trace:
    """One automatic run, saved once the topic entities are linked and after every step. An error inside the
    run is recorded in the saved trace (stop_reason "error") and returned, not raised; an interruption (the
    person pressed Stop, or closed the page) leaves the last saved step in the store and propagates.
    `hops`: the number of hops the person chose instead of the one the LLM-free search would try and keep (the
    search runs exactly that deep; `tried`, the earlier run's trials, stay in the trace's plan to compare:
    policy/depths.chosen). `reading`: a reading of the question made before (a person's corrections,
    QuestionReading.edit), used instead of reading the question again; the trace records it."""
    given = callbacks or RunCallbacks()
    saver = Saver(engine=engine, store=store, model_info=model_info or {}, run_id=run_id or new_run_id(),
                  on_note=given.on_note)
    last: list[State] = []
    cb = saving_callbacks(saver, last, given)
    seeds_list = list(seeds) if seeds else None

    def linked(start: State) -> None:  # saved once the topic entities are linked, before the hops are tried
        cb.on_state(start)
        if given.on_start:
            given.on_start(start)

    async def work() -> State:
        cb.on_stage(1, "linking")
        # bad input (an empty question, a number of hops it cannot take) raises before anything is saved
        start = await depths.start(engine, question, seeds_list, hops=hops, tried=tried, reading=reading,
                                   on_stage=cb.on_stage, on_linked=linked)
        return await depths.run(engine, question, state=start, callbacks=cb)

    with in_progress(saver.run_id):  # until its last save: Stop's page run waits for it (answer_stopped)
        try:
            state = asyncio.run(with_ticker(work, given.on_tick))
        except Exception as err:  # after linking: keep what was done and say what broke; before: bad input
            if not last:
                raise
            return saver.save(failed(last[0], err))
        except BaseException:  # Stop (Streamlit's interrupt): saved again, so the run's time runs up to its end
            if last:
                _saved_quietly(saver, last[0])
            raise
        return saver.save(state)


def _saved_quietly(saver: Saver, state: State) -> None:
    """The last state of an interrupted run, saved again with its time: never as a new run (a run saved meanwhile,
    answered by Stop, stays as it was saved)."""
    try:
        saver.save(state, branch=False)
    except Exception:  # noqa: BLE001 - the interruption goes on whatever the save does; the last step is saved
        log.warning("the run %s could not be saved again when it was stopped", saver.run_id, exc_info=True)


def is_unfinished(trace: Trace) -> bool:
    """A saved run that stopped before its answer (Stop, a crash, a closed page) and can be resumed."""
    return not trace.answer and trace.stop_reason != "error" and bool(trace.state)


def where_stopped(trace: Trace) -> str:
    """Where an unfinished run stopped, in words: "at depth 2, entities"."""
    state = trace.state or {}
    return f"at depth {state.get('depth')}, {state.get('stage')}"


STOP_WAIT_S = 30.0  # how long the page run after Stop waits for the stopped run to end (it takes 0.5-3.1 s)


def wait_stopped(run_id: str, timeout: float = STOP_WAIT_S) -> bool:
    """Wait until the run Stop was pressed on has ended in its own thread and saved its last state with its time
    (progress.in_progress): Streamlit runs the page again at once, while the stopped run still ends."""
    return wait_ended(run_id, timeout)


def finish_stopped(engine: Any, trace: Trace, store: RunStore | None, *,
                   model_info: dict[str, Any] | None = None, on_note: Callable[[str], None] | None = None,
                   on_saved: Callable[[bool], None] | None = None) -> Trace:
    """The person pressed Stop: answer from the chains found so far (no LLM call; the person asked to stop)
    and save under the same run id with stop reason "user". `trace`: the run as saved once it ended
    (`wait_stopped`); its time goes on from the saved one. When someone else saved the run meanwhile, the answer is
    saved as a new run, a branch of it, and `on_note` is told so in one sentence; `on_saved`, whether the answer is in
    the store."""
    state = engine.stop(engine.restore(trace))
    text = engine.compose_answer(state)
    done = state.with_(stage="done", answer=text, answer_by="chains")
    saver = saver_for(engine, trace, store, model_info, on_note)
    out = saver.save(done)
    if on_saved is not None:
        on_saved(saver.kept)
    return out


def resume_question(engine: Any, trace: Trace, store: RunStore | None, callbacks: RunCallbacks | None = None, *,
                    model_info: dict[str, Any] | None = None) -> Trace:
    """Continue an unfinished saved run where it stopped (same run id), saved after every step."""
    given = callbacks or RunCallbacks()
    saver = saver_for(engine, trace, store, model_info, given.on_note)
    state0 = engine.restore(trace)
    last: list[State] = [state0]
    cb = saving_callbacks(saver, last, given)

    async def work() -> State:
        return await depths.run(engine, state0.question, state=state0, callbacks=cb)

    with in_progress(saver.run_id):  # the id the page knows (the saved run's), as in run_question
        try:
            state = asyncio.run(with_ticker(work, given.on_tick))
        except Exception as err:
            return saver.save(failed(last[0], err))
        except BaseException:  # Stop, as in run_question
            _saved_quietly(saver, last[0])
            raise
        return saver.save(state)


# ---------------------------------------------------------------------------------------------- explore

def step_ticks(step: Any) -> tuple[frozenset[str], frozenset[str]]:
    """A recorded step's candidates: the ids it offered, and those kept."""
    return frozenset(c.id for c in step.candidates), frozenset(c.id for c in step.candidates if c.kept)


def beam_key(state: State) -> frozenset[Any]:
    """The chains a step is offered on, as hops (start, (relationship, entity) …): two steps with the same candidate
    ids (an evaluate step's are always "sufficient" and "continue") are the same step only on the same chains."""
    return frozenset((p.start, tuple((h.ridx, h.dst) for h in p.hops)) for p in state.paths)


@dataclass(kw_only=True)
class Exploration:
    """A human-in-the-loop run: every state so far (states[0] = the start) and the pending proposal."""

    settings: Settings
    run_id: str
    states: list[State]
    proposal: Proposal | None = None
    parent_run: str | None = None
    branched_at: int | None = None
    model_info: dict[str, Any] = field(default_factory=dict)
    # what the page says about saving this run: why a save failed (a full disk …), or that someone else saved the run
    # meanwhile and this one was saved as a new run (progress.Saver: `run_id` is then that run's)
    unsaved: str = ""
    revision: int | None = 0  # the run's revision as this session loaded or last saved it (progress.Saver)
    base_steps: int = 0  # the steps the run had then
    no_history: str = ""  # why a reopened run cannot go back to an earlier depth ("" when it can, or is new)
    # what a press of "Force X in" did and what to press next (force.force_in), for the page until the next step
    forced: str = ""
    # the person's ticks on the branch this one went back from (explore_back), by (depth, stage): the candidates that
    # step offered, those kept, and the chains it was offered on (beam_key); a step offered exactly so again, on the
    # same chains, starts from them (start_ticks) until the branch differs from the old one (`diverged`)
    earlier: dict[tuple[int, str], tuple[frozenset[str], frozenset[str], frozenset[Any] | None]] = field(
        default_factory=dict)
    diverged: bool = False  # a step of this branch was offered or chosen otherwise than on the old one: no more ticks
    # the run's clock: seconds from its start (a person's thinking included), continued from a saved run's
    started: float = field(default_factory=time.perf_counter)
    wall_before: float = 0.0
    stopped: float | None = None  # when the run finished: its clock stops there (a page drawn later adds nothing)
    created_at: str = field(default_factory=lambda: now_iso())  # when the run began, kept by each save

    @property
    def state(self) -> State:
        return self.states[-1]

    def saver(self, engine: Any, store: RunStore | None) -> Saver:
        return Saver(engine=engine, store=store, run_id=self.run_id, model_info=self.model_info,
                     parent_run=self.parent_run, branched_at=self.branched_at, on_note=self._note,
                     t0=self.started, wall_before=self.wall_before, t1=self.stopped, created_at=self.created_at,
                     revision=self.revision, base_steps=self.base_steps, on_saved=self._saved)

    def _saved(self, saver: Saver) -> None:
        """A save went through: the revision to save over next, and the run it went to (a new one, a branch, when
        someone else saved this one meanwhile)."""
        self.run_id, self.parent_run, self.branched_at = saver.run_id, saver.parent_run, saver.branched_at
        self.revision, self.base_steps, self.created_at = saver.revision, saver.base_steps, saver.created_at

    def stop_clock(self) -> None:
        """A finished run's clock stops at its last step."""
        if self.state.done and self.stopped is None:
            self.stopped = time.perf_counter()

    def _note(self, why: str) -> None:
        self.unsaved = why

    def back_depths(self) -> list[int]:
        """Depths the person can go back to: each depth whose start is in the history, except a start
        that is the current state itself."""
        return sorted({s.depth for s in self.states[:-1] if s.stage in ("relations", "entities")
                       and (not s.steps or s.steps[-1].stage == "evaluate")})

    def start_ticks(self) -> tuple[set[str], str]:
        """The ticks the pending proposal starts from, and whose: ("earlier") the person's ticks on the branch this
        one went back from, when the step is offered exactly as it was there, on the same chains, and no step before
        it on this branch was offered or chosen otherwise; else the automatic choice ("auto", or "changed" when that
        branch had this step but a choice above it differs: an evaluate step offers the same two verdicts whatever the
        chains, so its earlier verdict would judge chains the person never saw)."""
        assert self.proposal is not None, "propose first"
        step = self.proposal.step
        before = self.earlier.get((step.depth, step.stage))
        offered = frozenset(c.id for c in step.candidates)
        if before is not None and not self.diverged and (before[0], before[2]) == (offered, beam_key(self.state)):
            return set(before[1]), "earlier"
        return set(self.proposal.auto_choice()), "auto" if before is None else "changed"

    def note_divergence(self, beam: frozenset[Any]) -> None:
        """After a step is applied: when it was offered or chosen otherwise than on the old branch, the branch has
        diverged, and no later step starts from the old ticks."""
        step = self.state.steps[-1]
        before = self.earlier.get((step.depth, step.stage))
        if before is not None and before != (*step_ticks(step), beam):
            self.diverged = True

    def proposal_key(self) -> str:
        """Names the pending proposal (run, steps taken): the page keeps the person's choice under it."""
        return f"{self.run_id}:{len(self.state.steps)}"


def explore_start(engine: Any, settings: Settings, question: str, seeds: Iterable[str] | None, *,
                  model_info: dict[str, Any] | None = None) -> Exploration:
    seeds_list = list(seeds) if seeds else None
    state = asyncio.run(depths.start(engine, question, seeds_list))
    return Exploration(settings=settings, run_id=new_run_id(), states=[state], model_info=model_info or {})


def explore_from_trace(engine: Any, settings: Settings, trace: Trace, *,
                       model_info: dict[str, Any] | None = None) -> Exploration:
    """A saved run continued step by step (same run id, saved over the revision it was loaded at: when someone else
    saves it meanwhile, this session's next save makes a new run of it, a branch, and `unsaved` says so). Its history
    is rebuilt by replaying its steps, so "Back to depth" can branch from it: without an LLM the scores cost nothing
    to recompute; with one, only from the response cache (`replay(cached_only=True)`: the provider is never called
    here; a call that failed then fails again). When a reply is not cached, or the project no longer offers a
    recorded choice, the history starts at the saved state and `Exploration.no_history` says why."""
    restored = engine.restore(trace)
    states, why = [restored], ""
    if trace.steps:
        try:
            states = [*replay(engine, trace, len(trace.steps), restored=restored, cached_only=True)[:-1], restored]
        except NotCached as err:
            why = f"a reply of its LLM is not in the response cache ({err.reason}), and replaying it would call the LLM"
        except (ValueError, KeyError) as err:
            why = f"it cannot be replayed here ({err})"
        if why:
            log.info("run %s reopened at its saved state: %s", trace.run_id, why)
    ex = Exploration(settings=settings, run_id=str(trace.run_id or new_run_id()),
                     states=states, parent_run=trace.parent_run,
                     branched_at=trace.branched_at, model_info=model_info or {},
                     wall_before=float((trace.stats or {}).get("wall_s") or 0.0), no_history=why,
                     created_at=trace.created_at or now_iso(), revision=trace.revision, base_steps=len(trace.steps))
    if ex.state.done:  # a finished run reopened: its time is the saved one
        ex.stopped = ex.started
    return ex


def explore_propose(engine: Any, ex: Exploration) -> Exploration:
    """Make sure the pending proposal is the one for the current state (no-op once the run is done)."""
    if ex.proposal is None and not ex.state.done:
        ex.proposal = asyncio.run(engine.propose(ex.state))
    return ex


def explore_apply(engine: Any, ex: Exploration, choice: set[str] | None, store: RunStore | None) -> Exploration:
    """Apply the person's choice (None = the automatic one) and save; the next proposal is not made yet. A step
    that ends the search (the judge says the chains answer, the maximum depth, nothing left to keep) is followed by
    the answer, saved too: the run is finished, not a run to resume."""
    assert ex.proposal is not None, "propose first"
    saver = ex.saver(engine, store)
    beam = beam_key(ex.state)
    ex.states.append(engine.apply(ex.state, ex.proposal, choice))
    ex.proposal, ex.forced = None, ""  # what a "Force X in" said was about the step before this one
    ex.note_divergence(beam)
    saver.save(ex.state)
    if ex.state.stage == "answer":
        ex.states.append(asyncio.run(engine.answer(ex.state)))
        saver.save(ex.state)
    ex.stop_clock()
    return ex


def explore_finish(engine: Any, ex: Exploration, store: RunStore | None, *, auto: bool,
                   on_token: Callable[[str], None] | None = None) -> Exploration:
    """Auto-finish (the automatic policy from here) or stop & answer now; saved after every step."""
    saver = ex.saver(engine, store)

    def on_state(st: State) -> None:
        ex.states.append(st)
        saver.save(st)

    state = ex.state if auto else engine.stop(ex.state)
    ex.proposal, ex.forced = None, ""
    if auto:
        asyncio.run(depths.run(engine, state.question, state=state, callbacks=Callbacks(
            on_state=on_state, on_token=on_token or (lambda _t: None))))
    else:
        on_state(asyncio.run(engine.answer(state, on_token=on_token)))
    ex.stop_clock()
    return ex


def explore_back(engine: Any, ex: Exploration, depth: int, store: RunStore | None) -> Exploration:
    """Branch: a new run that starts again at the beginning of `depth`. The current run stays saved as it
    is (its own run id); the new one records `parent_run` and how many steps it took over. What the person chose
    before `depth` is kept (those steps are taken over); each step from there starts from their earlier ticks while
    it is offered as before (`start_ticks`)."""
    idx = next((i for i, s in enumerate(ex.states) if s.depth == depth and s.stage in ("relations", "entities")
                and (not s.steps or s.steps[-1].stage == "evaluate")), None)
    if idx is None or idx == len(ex.states) - 1:
        raise ValueError(f"depth {depth} was never started in this run")
    old = ex.saver(engine, store)
    old.save(ex.state)  # the old branch, complete as it stands (a new run when someone else saved it meanwhile)
    kept = ex.states[: idx + 1]
    # the person's ticks from that depth on stay with the branch: each step offered as before, on the same chains,
    # starts from them (the chains of step i: the state it was proposed from, i steps in)
    beams = {len(s.steps): beam_key(s) for s in ex.states if s.stage in ("relations", "entities", "evaluate")}
    earlier = {(s.depth, s.stage): (*step_ticks(s), beams.get(i))
               for i, s in enumerate(ex.state.steps) if i >= len(kept[-1].steps)}
    new = Exploration(settings=ex.settings, run_id=new_run_id(), states=kept, parent_run=ex.run_id,
                      branched_at=len(kept[-1].steps), model_info=ex.model_info, earlier=earlier,
                      unsaved=old.new_run_note)
    new.saver(engine, store).save(new.state)
    return new
