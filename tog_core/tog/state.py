"""Engine configuration and the immutable search state (one new State per `apply`).

Kept apart from engine.py so the UI, run store and CLI can build, save and restore states without
touching the search logic.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any
from collections.abc import Callable, Iterable

from tog_core.reading import QuestionReading
from tog_core.scoring.scorers import CHEAP, one_of
from tog_core.tog.trace import DepthPlan, Seed, Step

STAGES = ("relations", "entities", "evaluate")
# The engine's modes, what each does (the CLI's --mode, the benchmark and the app's sidebar offer this list)
MODE_NOTES: dict[str, str] = {
    "faithful": "relations, then entities, each scored by the pruner (the paper's schedule)",
    "fast": "one call per depth scores the (relation, entity) pairs of the whole frontier",
    "reading": "one LLM call reads the question, the cheap scorers prune guided by that reading, the question-"
               "coverage judge decides when to stop, one LLM call answers: at most 3 LLM calls a question",
}
MODES = tuple(MODE_NOTES)
JUDGES = ("llm", "coverage")
READERS = ("rules", "llm")  # who reads the question when the search starts (tog_core/reading)
# Where this engine departs from ToG as published, by EngineConfig field: (what the paper does, what we do and why).
# Each is on by default (the README's numbers are measured with them) and can be switched off one by one
# (`query --paper` switches all of them off).
DEPARTURES: dict[str, tuple[str, str]] = {
    "degree_filter": ("every neighbour is a candidate",
                      "on the way, skip neighbours with > degree_factor x the topic's degree (a genre shared by "
                      "thousands of films); never at the last hop, nor where every way on is such a hub"),
    "hub_prefilter": ("every relation of a frontier entity goes to the scorer",
                      "at most max_candidates relation groups per entity, chosen by the cheap pre-filter, so a hub "
                      "never becomes thousands of LLM candidates"),
    "normalise_entities": ("hop score = relation score x entity score",
                           "entity scores are divided by the best entity of their relation group, so a relation's "
                           "rank survives a scorer that rates every entity low"),
    "dead_end_filter": ("every neighbour is a candidate",
                        "on a GraphRAG graph, on the way to a known number of hops, skip neighbours whose every edge "
                        "leads back (their chain cannot reach that depth), unless every neighbour is one"),
    "cumulative_score": ("the beam keeps the best entities of the current hop",
                         "the beam ranks whole paths by the product of their hop scores"),
    "evaluate_last_depth": ("the LLM judges sufficiency at every depth",
                            "no judge call at the maximum depth, where the search stops anyway (saves a call)"),
    "topic_ends": ("any neighbour may end a chain",
                   "the last hop never ends at another of the question's topic entities: the question names them, "
                   "it does not ask for them"),
    "typed_facts_once": ("every edge of the frontier entity is a candidate",
                         "on a typed graph a fact stated from both ends (X spouse-> Y, Y spouse-> X) is offered "
                         "once, from the side that states it"),
    "distinct_entities": ("the beam keeps the top N candidates",
                          "the beam keeps the top N candidates that reach distinct entities (a second route to a "
                          "kept entity would waste a slot)"),
    "lookahead_order": ("entities are cut by the scorer alone",
                        "when the policy rates entities by their best next relation, a big relation group's "
                        "entities are cut to entities_per_relation by that rating first, the pre-filter second"),
    "dead_chains_last": ("chains are ranked by score",
                         "a chain that answers nothing (back at its start, or at another topic entity) is ranked "
                         "after every chain that does"),
}


@dataclass(frozen=True, kw_only=True)
class EngineConfig:
    """Search settings. Defaults follow the ToG paper (N=3, D=3, T=0.4 exploring, T=0 reasoning)."""

    width: int = 3  # beam width N: relations kept per frontier entity (the policy may keep more: relations_kept), and
    # paths kept per depth
    depth: int = 3  # maximum depth D
    relation_pruner: str = "llm"  # scorer of the relation stage (llm | bm25 | embedding | random)
    entity_pruner: str = "llm"  # scorer of the entity stage
    prefilter: str = "bm25"  # cheap scorer that cuts hubs down before the main scorer sees them
    max_candidates: int = 30  # K: at most this many relation groups per frontier entity are scored
    entities_per_relation: int = 5  # entities retained per relation before the beam cut
    entity_batch: str = "entity"  # entity stage: one call per frontier entity, or "relation" (original ToG's)
    pairs_per_path: int = 10  # fast mode: (relation, entity) pairs per frontier path in the one prompt
    temperature_exploration: float = 0.4
    temperature_reasoning: float = 0.0
    max_tokens: int = 256
    answer_max_tokens: int = 512
    mode: str = "faithful"  # faithful: relations then entities; fast: one pair-scoring call per depth; reading: the
    # relations-then-entities schedule with cheap pruners and the coverage judge, the question read once by the LLM
    exact_depth: bool = False  # depth is the question's known number of hops, not a maximum the policy plans within
    # -- departures from the paper (DEPARTURES below says what each changes); on by default, each switchable
    degree_filter: bool = True  # on the way (not the last hop) skip neighbours far more connected than the seeds
    degree_factor: float = 30.0  # "far": more than factor× the largest seed degree
    dead_end_filter: bool = True  # on the way to a known depth skip GraphRAG neighbours whose only edges lead back
    hub_prefilter: bool = True  # cut a frontier entity's relation groups to max_candidates with the cheap pre-filter
    normalise_entities: bool = True  # entity scores relative to the best entity of their relation group
    cumulative_score: bool = True  # a path's score is the product of all its hop scores (paper: the last hop's)
    evaluate_last_depth: bool = False  # ask the judge at the maximum depth too (the search stops there anyway)
    topic_ends: bool = True  # the last hop never ends at another topic entity of the question
    typed_facts_once: bool = True  # a typed fact stated from both ends is offered once
    distinct_entities: bool = True  # the beam keeps candidates that reach distinct entities
    lookahead_order: bool = True  # a relation group's entities are cut by the policy's lookahead rating first
    dead_chains_last: bool = True  # chains that answer nothing rank after every chain that does
    seed: int = 0  # for the random pruner
    judge: str = "llm"  # sufficiency: "llm", or "coverage" (a chain mentions every question word; no call)
    compact_scores: bool = False  # LLM scoring asks for bare score lists (no reasons): for small local models
    # who reads the question when the search starts: the wording rules, or one LLM call (reading/llm.py; the rules
    # are its named fallback). compose sets "llm" for a provider's model outside the paper's run
    reader: str = "rules"
    model: str = "none"  # recorded in the trace; the LLM object itself is a constructor argument

    def __post_init__(self) -> None:
        if self.width is not None and self.width < 1:
            raise ValueError(f"width must be at least 1 (got {self.width})")
        if not 1 <= self.depth <= 10:
            raise ValueError(f"depth must be between 1 and 10 (got {self.depth})")
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)} (got {self.mode!r})")
        if self.judge not in JUDGES:
            raise ValueError(f"judge must be 'llm' or 'coverage' (got {self.judge!r})")
        if self.reader not in READERS:
            raise ValueError(f"reader must be one of {', '.join(READERS)} (got {self.reader!r})")
        if self.mode == "reading" and ("llm" in (self.relation_pruner, self.entity_pruner) or self.judge != "coverage"
                                       or self.reader != "llm"):
            raise ValueError("the reading mode reads the question with the LLM (reader='llm'), prunes with a cheap "
                             f"scorer ({one_of(CHEAP)}, not llm) and judges by coverage (judge='coverage')")
        if self.entity_batch not in ("entity", "relation"):
            raise ValueError(f"entity_batch must be 'entity' or 'relation' (got {self.entity_batch!r})")
        if self.max_candidates < 1 or self.entities_per_relation < 1:
            raise ValueError("max_candidates and entities_per_relation must be at least 1")

    def departures(self) -> list[str]:
        """Names of the departures from the paper in effect (evaluate_last_depth departs when it is off)."""
        return [name for name in DEPARTURES if getattr(self, name) != (name == "evaluate_last_depth")]

    @classmethod
    def paper(cls, **kw: Any) -> EngineConfig:
        """ToG as published: every departure switched off."""
        return cls(**{**{name: name == "evaluate_last_depth" for name in DEPARTURES}, **kw})

    def without(self, names: Iterable[str]) -> EngineConfig:
        """This config with the named departures switched off (ValueError naming the choices for an unknown one)."""
        off: dict[str, Any] = {}
        for name in names:
            if name not in DEPARTURES:
                raise ValueError(f"unknown departure '{name}'; choose from: {', '.join(DEPARTURES)}")
            off[name] = name == "evaluate_last_depth"
        return replace(self, **off)

    def public_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["pruner"] = self.relation_pruner if self.relation_pruner == self.entity_pruner else \
            f"{self.relation_pruner}/{self.entity_pruner}"
        d["departures"] = self.departures()
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> EngineConfig:
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in d.items() if k in known})


@dataclass(frozen=True, kw_only=True)
class Hop:
    ridx: int
    src: int  # entity we came from
    dst: int  # entity reached
    score: float
    label: str


@dataclass(frozen=True, kw_only=True)
class BeamPath:
    start: int
    hops: tuple[Hop, ...] = ()
    score: float = 1.0

    @property
    def end(self) -> int:
        return self.hops[-1].dst if self.hops else self.start

    @property
    def entities(self) -> frozenset[int]:
        return frozenset([self.start, *(h.dst for h in self.hops)])

    @property
    def back_home(self) -> bool:
        """Whether the chain came back to its start, which then answers nothing (a question names its topic, it
        does not ask for it) -- unless its last hop is a self-loop: the graph itself states that the entity is its
        own relative by that relation (PathQuestion's "Cold_War --recording--> Cold_War"), so "the recording of
        Cold_War's recording" is Cold_War."""
        return bool(self.hops) and self.end == self.start and self.hops[-1].src != self.hops[-1].dst

    def answers_nothing(self, topics: frozenset[int] = frozenset()) -> bool:
        """Whether the chain's end cannot be the answer: it came back to its start (back_home), or it ends at
        another of the question's topic entities (`topics`, entity indices), which the question names."""
        return self.back_home or (bool(self.hops) and self.end != self.start and self.end in topics)


@dataclass(frozen=True, kw_only=True)
class Search:
    """The chains of one search of a question, best first, and how many hops it searched."""

    depth: int
    paths: tuple[BeamPath, ...]


@dataclass(frozen=True, kw_only=True)
class SecondSearch:
    """The same question searched again with another pruner (policy/agreement.py): each entity its answer list holds,
    best first, with the answer ranker's probability for it. The confidence reads how sure it is of the first answer."""

    pruner: str
    probs: tuple[tuple[int, float], ...]  # (entity, probability), best first
    wall_s: float = 0.0

    def prob(self, entity: int) -> float:
        """Its probability for `entity`; 0 when it does not reach it."""
        return next((p for e, p in self.probs if e == entity), 0.0)

    @property
    def first(self) -> int | None:
        """Its first answer; None when it found none."""
        return self.probs[0][0] if self.probs else None

    def place(self, entity: int) -> int | None:
        """Where `entity` is in its answer list (1: first); None when it does not reach it."""
        return next((k for k, (e, _) in enumerate(self.probs, 1) if e == entity), None)


@dataclass(frozen=True, kw_only=True)
class RelChoice:
    """A kept relation group of one beam path: the edges sharing one label and direction."""

    path: int
    key: str
    ridxs: tuple[int, ...]
    others: tuple[int, ...]
    score: float
    label: str
    text: str

    @property
    def outgoing(self) -> bool:
        """Edge direction as stored, seen from the path's end (encoded in the key: p<i>|>|label|ridx)."""
        return self.key.split("|")[1] == ">"


@dataclass(frozen=True, kw_only=True)
class State:
    question: str
    seeds: tuple[Seed, ...]
    paths: tuple[BeamPath, ...]
    depth: int = 1
    stage: str = "relations"  # relations | entities | evaluate | answer | done
    relations: tuple[RelChoice, ...] = ()
    steps: tuple[Step, ...] = ()
    stop_reason: str | None = None
    answer: str = ""
    answer_by: str = ""
    extra_usage: tuple[dict[str, Any], ...] = ()  # linking and answer calls (not part of a stage step)
    error: str | None = None
    # -- engine input: the number of hops to search, when it is known before the search (None: config.depth is a
    # maximum and the judge decides). The search plans for it (the last hop's rules apply at that depth) and stops
    # there; before it the judge may stop sooner unless `hops_firm` (a person chose the number). Past it only when
    # a person searches on, with the maximum as the limit.
    hops: int | None = None
    hops_firm: bool = False
    # what the runner around the engine settled before the search (policy/depths.py: the numbers of hops it tried),
    # written to the trace's `plan` as it is; the engine never reads it
    plan_record: DepthPlan | None = None
    # -- engine input: other searches of the same question (the runner's depth trials, policy/depths.py), whose chains
    # the answer choice may also take its answer from; the search itself never walks them
    other_searches: tuple[Search, ...] = ()
    # -- engine input: how the question was read (tog_core/reading: topics, asked type, relation phrases, hops,
    # words), made once per question when the search starts; the LLM-free policy reads it instead of the wording
    reading: QuestionReading | None = None
    # -- engine input: the question searched again by another pruner before the answer (policy/agreement.py), read by
    # the answer's confidence; None until then, or where none is made
    second: SecondSearch | None = None

    @property
    def done(self) -> bool:
        return self.stage in ("answer", "done")

    @property
    def forced(self) -> bool:
        """Whether a person forced the answer in ("force it in", app/runner.py records FORCED_ANSWER): that entity
        answers, read from the chains cut at it alone, and no confidence is claimed for it."""
        return any(u.get("fallback") == FORCED_ANSWER for u in self.extra_usage)

    @property
    def forced_entity(self) -> str | None:
        """The GraphRAG id of the entity a person forced in as the answer: the answer list puts it first, the search's
        other candidates after it. None when nobody forced one, or in a state saved before the id was recorded (its
        chains are then those cut at the entity alone)."""
        return next((str(u["entity_id"]) for u in reversed(self.extra_usage)
                     if u.get("fallback") == FORCED_ANSWER and u.get("entity_id")), None)

    def with_(self, **kw: Any) -> State:
        return replace(self, **kw)


FORCED_ANSWER = "forced_answer"  # the named fallback of a person's forced answer


@dataclass(frozen=True, kw_only=True)
class Proposal:
    """Candidates of the next stage, each with score, reason and the automatic choice."""

    step: Step
    payload: tuple[Any, ...]  # per candidate: RelChoice | (path index, Hop) | bool (evaluate)

    def auto_choice(self) -> set[str]:
        return {c.id for c in self.step.candidates if c.auto_kept}


def _noop(*_: Any, **__: Any) -> None:
    return None


@dataclass(kw_only=True)
class Callbacks:
    """The only bridge to a UI. Every hook defaults to doing nothing."""

    on_stage: Callable[[int, str], None] = _noop  # a stage starts: (depth, stage)
    on_step: Callable[[Step], None] = _noop  # a stage finished and was applied
    on_token: Callable[[str], None] = _noop  # a piece of the streamed answer
    on_answer_reset: Callable[[], None] = _noop  # the streamed answer broke: clear what was shown
    on_usage: Callable[[dict[str, Any]], None] = _noop  # running totals after each stage
    on_state: Callable[[State], None] = _noop  # after every apply and after the answer (run store saves here)

    extra: dict[str, Any] = field(default_factory=dict)
