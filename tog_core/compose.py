"""The one place engines are assembled. The CLI (`query`), the benchmark (`bench kgqa`) and the app all describe
what the person asked for as a `RunSpec` and call `plan` + `build_engine`, so the three front doors share one
rule for the model, the pruners, the engine options and the search policy, and one list of choices.

    spec = RunSpec(model=None, relation_pruner="auto", width=3, depth=3)
    built = build_engine(spec, graph=graph, info=info)          # or plan(spec, info) first, to show the choice
    state = asyncio.run(built.engine.run(question))

The rules:
* model: the one asked for; by default the project's configured model when its key is present, else no LLM
  (an LLM-free search whose answer is composed from the chains). The packaged 135M model (`local`) is only
  ever an explicit choice: it loops and invents facts on anything longer than a line.
* pruner `auto`: the LLM with a real provider, the packaged embedder beside the local model; with no LLM, the
  embedder on a typed graph (a `relation` column: MetaQA, PathQuestion) and BM25 on free-text relations (GraphRAG).
  `llm` without a model is an error naming the alternatives (in every front door).
* policy: FaithfulPolicy (ToG as published) when both stages are pruned by an LLM that also judges; otherwise
  CheapPolicy, which shapes cheap scores and judges by question coverage (tog/policy.py, policy/cheap.py).
* reader: with a provider's model (not the local one) outside the paper's run (CheapPolicy, some departure on) the
  LLM reads the question once (`reader="llm"`, reading/llm.py); else the wording rules read it.
* mode `reading`: that reading call, the cheap pruners `auto` stands for without an LLM, the coverage judge and one
  answer call: at most 3 LLM calls a question (with linking, only when no title matches). It needs a provider's
  model and is not the paper (`paper` is refused with it).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from tog_core.errors import UsageError
from tog_core.llm.factory import LOCAL, NONE, ModelChoice, ModelChoiceError, build_embedder, build_llm, choose_model
from tog_core.policy import agreement
from tog_core.policy.cheap import CheapPolicy
from tog_core.scoring.scorers import CHEAP, NEEDS_EMBEDDER, SCORERS, one_of
from tog_core.tog.engine import ToGEngine
from tog_core.tog.policy import FaithfulPolicy, SearchPolicy
from tog_core.tog.state import DEPARTURES, MODE_NOTES, MODES, EngineConfig

PRUNERS: tuple[str, ...] = ("auto", *SCORERS)  # what every front door offers
__all__ = ["DEPARTURES", "MODE_NOTES", "MODES", "PRUNERS", "Built", "Plan", "RunSpec", "build_engine", "default_pruner",
           "make_policy", "plan"]


@dataclass(frozen=True, kw_only=True)
class RunSpec:
    """What a person asked for, from any front door. None means "the default rule"."""

    model: str | None = None  # a LiteLLM model string, "local", "none"; None: the project's model if keyed, else none
    api_base: str | None = None
    api_key: str | None = field(default=None, repr=False)  # typed in the app; never stored or logged
    # whether the server's keys (environment, project) may go to `api_base` whatever it is: the CLI's own flag (the
    # person running it owns the environment); the app's typed base is not trusted (llm/factory.server_key_may_go)
    trust_api_base: bool = False
    width: int = 3
    depth: int = 3
    relation_pruner: str | None = None  # auto | llm | bm25 | embedding | random (None = auto)
    entity_pruner: str | None = None  # None: the relation stage's
    prefilter: str = "bm25"
    mode: str = "faithful"
    seed: int = 0
    temperature_exploration: float = 0.4
    temperature_reasoning: float = 0.0
    paper: bool = False  # every departure from the paper switched off
    without: tuple[str, ...] = ()  # departures switched off one by one (names from DEPARTURES)


@dataclass(frozen=True, kw_only=True)
class Plan:
    """A resolved RunSpec: nothing started yet, so a front door can show it before it runs."""

    choice: ModelChoice
    config: EngineConfig
    policy: str  # "faithful" | "cheap"


@dataclass(kw_only=True)
class Built:
    engine: ToGEngine
    choice: ModelChoice  # the model as resolved (a started local server has its real name and address)
    plan: Plan


def default_pruner(kind: str, *, typed: bool = False) -> str:
    """The pruner `auto` stands for with a model of this kind: the LLM with a real provider; the packaged embedder
    beside the small local model (which ranks relations near chance). With no LLM it depends on the graph: on a
    typed graph (relation types read as short templates, "a movie was directed by a person", that questions
    paraphrase: "act in" never meets "starred" by words) the embedder; on GraphRAG's free-text relations (whole
    sentences that share words with the question) BM25, which needs no model and no first-run embedding.
    Linked seeds, depth 3, chain Hits@1 bm25 / embedding: MetaQA 0.717 / 0.870, PQ-2H 0.61 / 0.71, PQ-3H 0.45 /
    0.81, PQL-2H 0.87 / 0.82, PQL-3H 0.85 / 0.71 (typed: embedding ahead on three of four sets and overall); the
    GraphRAG dev sets are even (six sets, 159 questions: 0.604 / 0.597), with bm25 ahead on Christmas Carol and its
    held-out split (README, "Quality where users are")."""
    if kind == NONE:
        return "embedding" if typed else "bm25"
    return "embedding" if kind == LOCAL else "llm"


# the reading mode: the LLM reads the question (one call), the question-coverage judge decides when to stop (no call)
READING_OPTIONS: dict[str, Any] = {"reader": "llm", "judge": "coverage"}


def _engine_options(kind: str) -> dict[str, Any]:
    """The 135M local model cannot write reasons in time nor judge sufficiency (it says "yes" after one hop): it
    scores with bare lists and the question-coverage judge decides when to stop."""
    return {"compact_scores": True, "judge": "coverage"} if kind == LOCAL else {}


def make_policy(config: EngineConfig, *, has_llm: bool) -> SearchPolicy:
    """FaithfulPolicy when an LLM prunes both stages and judges; CheapPolicy otherwise."""
    llm_all_the_way = (has_llm and config.relation_pruner == "llm" and config.entity_pruner == "llm"
                       and config.judge == "llm")
    return FaithfulPolicy() if llm_all_the_way else CheapPolicy()


def plan(spec: RunSpec, info: Any | None, *, environ: dict[str, str] | None = None, graph: Any | None = None) -> Plan:
    """Resolve the model, pruners and engine options. `graph`: the graph the engine will search (what `auto` means
    without an LLM depends on whether it has relation types). UsageError names the bad field and the choices."""
    choice = choose_model(spec.model, info, api_base=spec.api_base, api_key=spec.api_key, environ=environ,
                          trust_api_base=spec.trust_api_base)
    typed = bool(graph is not None and graph.has_relation_labels)
    reading = spec.mode == "reading"
    if reading:
        _check_reading_mode(choice)
    auto = default_pruner(NONE if reading else choice.kind, typed=typed)  # reading mode: the cheap pruners
    rel = spec.relation_pruner if spec.relation_pruner not in (None, "auto") else auto
    ent = spec.entity_pruner if spec.entity_pruner not in (None, "auto") else rel
    for what, name in (("pruner", rel), ("entity pruner", ent), ("pre-filter", spec.prefilter)):
        if name not in SCORERS:
            raise UsageError(f"unknown {what} '{name}'; choose one of: {', '.join(PRUNERS)}")
    if "llm" in (rel, ent) and choice.kind == NONE:
        raise UsageError("the llm pruner needs a model; choose a model (a LiteLLM model string, or 'local'), "
                         f"or the {one_of(CHEAP)} pruner")
    if reading and "llm" in (rel, ent):
        raise UsageError(f"the reading mode prunes without the LLM; choose the pruner {one_of(('auto', *CHEAP))}, "
                         "or the faithful mode")
    if spec.prefilter == "llm":
        raise UsageError(f"the pre-filter must be a cheap scorer ({one_of(CHEAP)}), not llm")
    if spec.mode not in MODES:
        raise UsageError(f"unknown mode '{spec.mode}'; choose one of: {', '.join(MODES)}")
    try:
        config = EngineConfig(width=spec.width, depth=spec.depth, relation_pruner=rel, entity_pruner=ent,
                              prefilter=spec.prefilter, mode=spec.mode, seed=spec.seed, model=choice.model,
                              temperature_exploration=spec.temperature_exploration,
                              temperature_reasoning=spec.temperature_reasoning,
                              **(READING_OPTIONS if reading else _engine_options(choice.kind)))
        if spec.paper:
            config = config.without(DEPARTURES)
        config = config.without(spec.without)
    except ValueError as err:
        raise UsageError(str(err)) from None
    if reading and not config.departures():
        raise UsageError("--paper runs ToG as published and the reading mode is not the paper (one reading call, "
                         "cheap pruning, no LLM judge); choose one of them")
    policy = make_policy(config, has_llm=choice.kind != NONE)
    if choice.kind not in (NONE, LOCAL) and policy.name != "faithful" and config.departures():
        config = replace(config, reader="llm")  # the paper's run (FaithfulPolicy, or --paper) keeps the rules
    return Plan(choice=choice, config=config, policy=policy.name)


def _check_reading_mode(choice: ModelChoice) -> None:
    """UsageError when the reading mode cannot run with this model: it needs a provider's (it reads the question and
    writes the answer with it; the packaged 135M model is never trusted with either: see the module's docstring)."""
    if choice.kind == NONE:
        raise UsageError("the reading mode needs a model: one call reads the question, one writes the answer; "
                         "choose a model (a LiteLLM model string), or the faithful mode")
    if choice.kind == LOCAL:
        raise UsageError("the reading mode needs a provider's model (the packaged local model invents facts on "
                         "anything longer than a line); choose a LiteLLM model string, or the faithful mode")


def build_engine(spec: RunSpec | Plan, *, graph: Any, info: Any | None = None, llm: Any | None = None,
                 embedder: Any | None = None, project: str = "") -> Built:
    """An engine for the spec (or an already made plan). `llm` and `embedder` may be given to reuse clients (the
    app caches them); otherwise they are built here (the local model's server is started when chosen)."""
    p = spec if isinstance(spec, Plan) else plan(spec, info, graph=graph)
    choice = p.choice
    if llm is None and choice.kind != NONE:
        try:
            llm, choice = build_llm(choice)
        except ModelChoiceError as err:
            raise UsageError(str(err)) from None
    cfg = p.config
    if embedder is None and set(NEEDS_EMBEDDER) & {cfg.relation_pruner, cfg.entity_pruner, cfg.prefilter}:
        embedder = build_embedder(info)
    policy = make_policy(cfg, has_llm=llm is not None)
    engine = ToGEngine(graph, llm=llm, embedder=embedder, config=cfg, policy=policy,
                       # resolved: a run made from `demo` is found under the project's full path (the app's list)
                       project=project or (str(Path(info.path).expanduser().resolve()) if info is not None else ""))
    engine.before_answer = agreement.second_search  # where it applies (agreement.why_not): the confidence reads it
    return Built(engine=engine, choice=choice, plan=replace(p, choice=choice))
