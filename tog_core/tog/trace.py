"""The trace: everything a run did, enough to redraw every picture and to resume (DESIGN.md, stable).

Plain kw-only dataclasses with `to_dict`/`from_dict`. Extra keys beyond the stable schema are allowed
(readers ignore what they don't know); the stable ones are never renamed.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from tog_core.llm.usage import Usage

TRACE_VERSION = 1
STOP_REASONS = ("sufficient", "max_depth", "no_candidates", "user", "error")


@dataclass(kw_only=True)
class Candidate:
    id: str  # stable within a step: "rel:<entity id>:<label>:<direction>" or "ent:<path>:<entity id>"
    label: str  # what a person reads: the relation text, or the entity title
    score: float
    reason: str = ""
    kept: bool = False  # what was finally kept (after any override)
    auto_kept: bool = False  # what the automatic policy would keep
    kind: str = "relation"  # "relation" | "entity"
    source_entity: str = ""  # title of the frontier entity the candidate hangs off
    source_id: str = ""
    target: str | None = None  # entity candidates: the entity reached
    target_id: str | None = None
    relation: str | None = None  # entity candidates: the relation label followed
    relationship_ids: list[str] = field(default_factory=list)
    outgoing: bool = True  # edge direction as stored (source → target) seen from source_entity
    path: int = -1  # index of the beam path this candidate extends
    scored_by: str = ""  # which scorer gave the score ("llm", "bm25", ... or "prefilter:bm25")

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Candidate:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in known})


@dataclass(kw_only=True)
class Step:
    depth: int
    stage: str  # "relations" | "entities" | "evaluate"
    candidates: list[Candidate] = field(default_factory=list)
    overrides: list[dict[str, Any]] = field(default_factory=list)  # {"id","label","auto_kept","kept"}
    llm_calls: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = 0.0  # None when LiteLLM does not know the model's price
    fallbacks: list[dict[str, Any]] = field(default_factory=list)  # {"name","detail","where"}
    started_at: str = ""
    wall_s: float = 0.0
    note: str = ""  # e.g. "412 candidates from 3 entities, 30 scored by llm after bm25 pre-filter"
    verdict: dict[str, Any] | None = None  # evaluate: {"sufficient": bool, "reason": str, "by": str}
    # candidates offered but not kept in the trace (a hub's thousands of relations): per frontier path, how many and
    # the best score among them; `candidates` holds each path's top `shown` by score and every kept one. Absent in
    # traces written before (and when nothing was left out): then `candidates` is every candidate.
    not_shown: list[dict[str, Any]] = field(default_factory=list)  # {"path","source_id","source_entity","count",
    #                                                                  "best_score","shown"}

    @property
    def n_candidates(self) -> int:
        """How many candidates the stage offered: those in the trace and those left out of it."""
        return len(self.candidates) + sum(int(x.get("count") or 0) for x in self.not_shown)

    def add_usage(self, u: Usage) -> None:
        total = Usage.of(self) + u
        self.llm_calls, self.cache_hits = total.llm_calls, total.cache_hits
        self.prompt_tokens, self.completion_tokens, self.cost_usd = total.prompt_tokens, total.completion_tokens, \
            total.cost_usd

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Step:
        known = {f.name for f in fields(cls)}
        data = {k: v for k, v in d.items() if k in known}
        data["candidates"] = [Candidate.from_dict(c) for c in d.get("candidates", [])]
        return cls(**data)


def outcome_change(overrides: list[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any]]:
    """An evaluate step's overrides read as the one decision they are: (the override of the outcome the policy
    chose, the override of the one the person chose); {} for either when it is missing."""
    return (next((o for o in overrides if o.get("auto_kept")), {}), next((o for o in overrides if o.get("kept")), {}))


def shown_in_trace(order: list[int], paths: list[int], always: set[int], top_k: int) -> set[int]:
    """Which candidates a step records: per beam path the first `top_k` of `order` (best first) that are on it, and
    every one in `always` (the kept ones, and those the main scorer scored: with the hub pre-filter off, as in the
    paper, that is all of them). The rest, only ever scored by the pre-filter, are counted in `Step.not_shown`
    (recomputable: the same graph, question and scorer give them again), so a 200,000-edge hub costs a trace K
    candidates, not 200,000."""
    per_path: dict[int, int] = {}
    shown = set(always)
    for k in order:
        n = per_path.get(paths[k], 0)
        if n < top_k:
            shown.add(k)
            per_path[paths[k]] = n + 1
    return shown


@dataclass(kw_only=True)
class Link:
    source: str
    source_id: str
    relation: str
    target: str
    target_id: str
    relationship_id: str
    text_unit_ids: list[str] = field(default_factory=list)
    score: float = 1.0  # score of this hop when it was kept
    # source/target follow the walk; whether the graph stores the relationship that way (None: not recorded,
    # a trace written before)
    stored_forward: bool | None = None


@dataclass(kw_only=True)
class Seed:
    id: str
    title: str
    how: str  # fuzzy | embedding | llm | user | exact
    score: float = 1.0


@dataclass(frozen=True, kw_only=True)
class DepthPlan:
    """How many hops a search takes, settled before it starts, and why: the LLM-free search on a free-text graph
    tries every number of hops up to the maximum and keeps one (policy/depths.py: settle). `trials`: per
    number of hops tried, the question words its best chain's relations matched ("matched"), where that chain ended
    ("end"), and the asked noun's words its relations matched where that end does not say it is one ("set_aside",
    not counted; absent in traces written before it).
    `chosen`: a person set the number of hops (policy/depths.py: chosen); the search then goes exactly that deep."""

    depth: int
    reason: str
    trials: tuple[dict[str, Any], ...] = ()
    chosen: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"depth": self.depth, "reason": self.reason, "trials": [dict(t) for t in self.trials],
                "chosen": self.chosen}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> DepthPlan:
        return cls(depth=int(d["depth"]), reason=str(d.get("reason", "")),
                   trials=tuple(dict(t) for t in d.get("trials") or ()), chosen=bool(d.get("chosen", False)))


@dataclass(kw_only=True)
class Trace:
    question: str
    project: str
    config: dict[str, Any]
    seeds: list[Seed] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    chains: list[list[Link]] = field(default_factory=list)  # the current beam: one chain per path
    answer: str = ""
    answer_by: str = ""  # "llm" | "chains" (composed without an LLM, marked as such)
    answer_entity: str | None = None  # the entity the answer names (title), chosen over every entity of the chains
    answer_entity_id: str | None = None
    confidence: float | None = None  # 0..1; below low_confidence the answer says it is a guess
    low_confidence: float | None = None  # the threshold in force
    stop_reason: str | None = None
    stats: dict[str, Any] = field(default_factory=dict)
    version: int = TRACE_VERSION
    run_id: str = ""
    created_at: str = ""
    parent_run: str | None = None  # a branch records where it came from
    branched_at: int | None = None  # number of steps taken over from the parent
    # how many times the run store has saved this run (set by the store on every save; 0: a run saved before saves
    # were counted, or a session's run not saved yet; None: never saved): a save of this trace expects the run stored
    # at this revision, and is refused when someone else saved it meanwhile (runs/revision.py)
    revision: int | None = None
    error: str | None = None
    state: dict[str, Any] = field(default_factory=dict)  # what the engine needs to resume
    diagnosis: list[dict[str, Any]] | None = None  # `query --expect TITLE`: where each expected entity was lost
    plan: dict[str, Any] | None = None  # DepthPlan.to_dict(): the number of hops settled before the search, and why
    # the ordered answer list, the answer first: {"title", "entity_id", "score" (0..1), "chain" (links from a topic
    # entity to it: {"source", "source_id", "relation", "target", "target_id", "relationship_id"}), "sentence" (the
    # source sentence that best supports its last link, "" when none)}; [] in traces written before it
    candidates: list[dict[str, Any]] = field(default_factory=list)
    # a person's choice of answer ("This is the answer"), kept apart from the search's own: {"entity_id", "title",
    # "at" (ISO-8601 UTC)}; never counted as the search's answer
    person_answer: dict[str, Any] | None = None
    # how the question was read (QuestionReading.to_dict(): language, topics, spans, asked, asked_named, phrases,
    # near, far, hops, words, by, fallback, edited); None in traces written before it
    reading: dict[str, Any] | None = None
    # the question searched again by another pruner, read by the confidence (policy/agreement.py): {"pruner", "answer"
    # (its first answer's title, None when it found none), "answer_entity_id", "probability" (its probability for
    # this trace's answer; 0 when it does not reach it), "place" (where this answer is in its list; None: absent),
    # "wall_s"}; None when none was made (an LLM, a typed graph, another pruner) or in traces written before it
    second_search: dict[str, Any] | None = None

    def is_guess(self) -> bool:
        """Whether the answer is a guess: its confidence below the threshold in force (both known)."""
        conf, low = self.confidence, self.low_confidence
        return conf is not None and low is not None and float(conf) < float(low)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def to_json(self, **kw: Any) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, **kw)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Trace:
        if not isinstance(d, dict) or "question" not in d:
            raise ValueError("not a ToG trace: expected a JSON object with a 'question' field")
        if int(d.get("version", 1)) > TRACE_VERSION:
            raise ValueError(f"trace version {d.get('version')} is newer than this tool reads ({TRACE_VERSION})")
        known = {f.name for f in fields(cls)}
        data = {k: v for k, v in d.items() if k in known}
        data["seeds"] = [Seed(**{k: v for k, v in s.items() if k in {f.name for f in fields(Seed)}})
                         for s in d.get("seeds", [])]
        data["steps"] = [Step.from_dict(s) for s in d.get("steps", [])]
        link_fields = {f.name for f in fields(Link)}
        data["chains"] = [[Link(**{k: v for k, v in link.items() if k in link_fields}) for link in chain]
                          for chain in d.get("chains", [])]
        # the ordered answer list as the app reads it: entries that are not objects (a hand-edited file) are dropped
        # here, as the exports and the picture skip them (render/chains.answer_own_chain)
        cands = d.get("candidates")
        data["candidates"] = [c for c in cands if isinstance(c, dict)] if isinstance(cands, list) else []
        rev = d.get("revision")  # a count of saves: anything else (a hand edit) reads as never counted
        data["revision"] = rev if isinstance(rev, int) and not isinstance(rev, bool) and rev >= 0 else None
        return cls(**data)

    @classmethod
    def from_json(cls, text: str) -> Trace:
        return cls.from_dict(json.loads(text))
