"""What the Streamlit pages call, kept free of Streamlit so every piece is unit-testable.

* `K` — every session-state key of the app, declared once;
* `Settings` — the sidebar's choices; `engine_config` turns them into an EngineConfig (an `llm` pruner
  without a model becomes bm25, and says so);
* `run_question` — one automatic run, saved to the run store after every step (a stopped or failed
  run keeps what was done);
* `Exploration` + `explore_*` — the human-in-the-loop page: one stage at a time, every state kept so
  "back to depth k" can branch (the old branch stays its own saved run, the new one names `parent_run`);
* tables the pages show (candidates, evidence, runs, comparison) and remembered recent projects.
"""
from __future__ import annotations

import asyncio
import json
import re
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterable

from tog_core.llm.factory import default_pruner, engine_options
from tog_core.runs.files import RunStore, atomic_write_text, new_run_id, tog_home
from tog_core.tog.state import Callbacks, EngineConfig, Proposal, State
from tog_core.tog.trace import Seed, Trace

PRUNERS = ("auto", "llm", "bm25", "embedding", "random")  # auto: see models.default_pruner
MODES = ("faithful", "fast")
RECENT_MAX = 8


class K:
    """Session-state keys (the only place they are spelled)."""

    PROJECT_INPUT = "project_input"  # the sidebar path field
    PROJECT_OK = "project_ok"  # resolved path of the last project that loaded
    RECENT_PICK = "recent_pick"
    MODEL = "model"
    API_BASE = "api_base"
    API_KEY = "api_key"  # typed into a password field; held in memory only
    WIDTH = "width"
    DEPTH = "depth"
    REL_PRUNER = "relation_pruner"
    ENT_PRUNER = "entity_pruner"
    T_EXPLORE = "temperature_exploration"
    T_REASON = "temperature_reasoning"
    MODE = "mode"
    ASK_QUESTION = "ask_question"
    ASK_SEEDS = "ask_seeds"  # titles handed over by "Ask from here"
    ASK_TRACE = "ask_trace"  # dict of the last run shown on the ask page
    ASK_DEPTH = "ask_replay_depth"
    EXPLORE = "exploration"  # an Exploration
    EXPLORE_QUESTION = "explore_question"
    EXPLORE_SEARCH = "explore_search"
    EXPLORE_SEEDS = "explore_seeds"
    EXPLORE_LINKED = "explore_linked_question"  # the question the seeds were last linked from
    EXPLORE_EDITOR = "explore_editor"
    EXPLORE_BACK = "explore_back_depth"
    GRAPH_QUERY = "graph_query"
    GRAPH_PICK = "graph_pick"
    GRAPH_HOPS = "graph_hops"
    RUNS_OPEN = "runs_open"
    RUNS_A = "runs_a"
    RUNS_B = "runs_b"
    # value widgets whose state must survive reruns and page switches (never buttons or data editors)
    PERSISTENT = (PROJECT_INPUT, MODEL, API_BASE, API_KEY, WIDTH, DEPTH, REL_PRUNER, ENT_PRUNER, T_EXPLORE,
                  T_REASON, MODE, ASK_QUESTION, EXPLORE_QUESTION, EXPLORE_SEARCH, EXPLORE_SEEDS, GRAPH_QUERY,
                  GRAPH_HOPS)


@dataclass(frozen=True, kw_only=True)
class Settings:
    """The sidebar. `model` "" means the default (the project's model if its key is set, else local)."""

    project: str = "demo"
    model: str = ""
    api_base: str = ""
    width: int = 3
    depth: int = 3
    relation_pruner: str = "auto"
    entity_pruner: str = "auto"
    temperature_exploration: float = 0.4
    temperature_reasoning: float = 0.0
    mode: str = "faithful"


def sidebar_defaults() -> dict[str, Any]:
    """Initial session-state values of the sidebar widgets (the widgets themselves get no default)."""
    d = Settings()
    return {K.MODEL: d.model, K.API_BASE: d.api_base, K.API_KEY: "", K.WIDTH: d.width, K.DEPTH: d.depth,
            K.REL_PRUNER: d.relation_pruner, K.ENT_PRUNER: d.entity_pruner,
            K.T_EXPLORE: d.temperature_exploration, K.T_REASON: d.temperature_reasoning, K.MODE: d.mode}


def engine_config(settings: Settings, model_kind: str, model_name: str) -> tuple[EngineConfig, list[str]]:
    """EngineConfig for the settings and the resolved model; notes say what was adjusted and why."""
    notes = []
    rel, ent = (default_pruner(model_kind) if p == "auto" else p
                for p in (settings.relation_pruner, settings.entity_pruner))
    if model_kind == "none":
        if rel == "llm" or ent == "llm":
            notes.append("no LLM: the llm pruner is replaced by bm25")
        rel, ent = ("bm25" if rel == "llm" else rel), ("bm25" if ent == "llm" else ent)
    cfg = EngineConfig(width=settings.width, depth=settings.depth, relation_pruner=rel, entity_pruner=ent,
                       temperature_exploration=settings.temperature_exploration,
                       temperature_reasoning=settings.temperature_reasoning, mode=settings.mode, model=model_name,
                       **engine_options(model_kind))
    return cfg, notes


# ---------------------------------------------------------------------------------------------- saving

@dataclass(kw_only=True)
class Saver:
    """Writes the trace of a state under one run id (and its branch origin) to the run store."""

    engine: Any
    store: RunStore | None
    run_id: str = field(default_factory=new_run_id)
    model_info: dict[str, Any] = field(default_factory=dict)
    parent_run: str | None = None
    branched_at: int | None = None
    t0: float = field(default_factory=time.perf_counter)

    def trace(self, state: State) -> Trace:
        tr = self.engine.trace(state, run_id=self.run_id, wall_s=time.perf_counter() - self.t0,
                               model_info=self.model_info)
        tr.parent_run, tr.branched_at = self.parent_run, self.branched_at
        return tr

    def save(self, state: State) -> Trace:
        tr = self.trace(state)
        if self.store is not None:
            self.store.save(tr)
        return tr


def _failed(state: State, err: BaseException) -> State:
    return state.with_(stage="done", stop_reason="error", error=f"{err.__class__.__name__}: {err}"[:300])


def run_question(engine: Any, question: str, *, seeds: Iterable[str] | None = None, store: RunStore | None = None,
                 model_info: dict[str, Any] | None = None, on_stage: Callable[[int, str], None] | None = None,
                 on_token: Callable[[str], None] | None = None,
                 on_usage: Callable[[dict[str, Any]], None] | None = None,
                 on_answer_reset: Callable[[], None] | None = None) -> Trace:
    """One automatic run, saved after every step. An error inside the run is recorded in the saved trace
    (stop_reason "error") and returned, not raised; an interruption (e.g. the person pressed Stop) leaves
    the last saved step in the store and propagates."""
    saver = Saver(engine=engine, store=store, model_info=model_info or {})
    last: list[State] = []

    def on_state(st: State) -> None:
        last[:] = [st]
        saver.save(st)

    cb = Callbacks(on_stage=on_stage or (lambda *_: None), on_token=on_token or (lambda _t: None),
                   on_usage=on_usage or (lambda _u: None), on_state=on_state,
                   on_answer_reset=on_answer_reset or (lambda: None))
    seeds_list = list(seeds) if seeds else None
    try:
        state = asyncio.run(engine.run(question, seeds=seeds_list, callbacks=cb))
    except Exception as err:  # after a step: keep what was done and say what broke; before: bad input
        if not last:
            raise
        return saver.save(_failed(last[0], err))
    return saver.save(state)


# ---------------------------------------------------------------------------------------------- explore

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

    @property
    def state(self) -> State:
        return self.states[-1]

    def saver(self, engine: Any, store: RunStore | None) -> Saver:
        return Saver(engine=engine, store=store, run_id=self.run_id, model_info=self.model_info,
                     parent_run=self.parent_run, branched_at=self.branched_at)

    def back_depths(self) -> list[int]:
        """Depths the person can go back to: each depth whose start is in the history, except a start
        that is the current state itself."""
        return sorted({s.depth for s in self.states[:-1] if s.stage == "relations"})


def explore_start(engine: Any, settings: Settings, question: str, seeds: Iterable[str] | None, *,
                  model_info: dict[str, Any] | None = None) -> Exploration:
    seeds_list = list(seeds) if seeds else None
    state = asyncio.run(engine.start_async(question, seeds_list))
    return Exploration(settings=settings, run_id=new_run_id(), states=[state], model_info=model_info or {})


def explore_propose(engine: Any, ex: Exploration) -> Exploration:
    """Make sure the pending proposal is the one for the current state (no-op once the run is done)."""
    if ex.proposal is None and not ex.state.done:
        ex.proposal = asyncio.run(engine.propose(ex.state))
    return ex


def explore_apply(engine: Any, ex: Exploration, choice: set[str] | None, store: RunStore | None) -> Exploration:
    """Apply the person's choice (None = the automatic one) and save; the next proposal is not made yet."""
    assert ex.proposal is not None, "propose first"
    ex.states.append(engine.apply(ex.state, ex.proposal, choice))
    ex.proposal = None
    ex.saver(engine, store).save(ex.state)
    return ex


def explore_finish(engine: Any, ex: Exploration, store: RunStore | None, *, auto: bool,
                   on_token: Callable[[str], None] | None = None) -> Exploration:
    """Auto-finish (the automatic policy from here) or stop & answer now; saved after every step."""
    saver = ex.saver(engine, store)

    def on_state(st: State) -> None:
        ex.states.append(st)
        saver.save(st)

    state = ex.state if auto else engine.stop(ex.state)
    ex.proposal = None
    if auto:
        asyncio.run(engine.run(state.question, state=state, callbacks=Callbacks(
            on_state=on_state, on_token=on_token or (lambda _t: None))))
    else:
        on_state(asyncio.run(engine.answer(state, on_token=on_token)))
    return ex


def explore_back(engine: Any, ex: Exploration, depth: int, store: RunStore | None) -> Exploration:
    """Branch: a new run that starts again at the beginning of `depth`. The current run stays saved as it
    is (its own run id); the new one records `parent_run` and how many steps it took over."""
    idx = next((i for i, s in enumerate(ex.states) if s.stage == "relations" and s.depth == depth), None)
    if idx is None:
        raise ValueError(f"depth {depth} was never started in this run")
    ex.saver(engine, store).save(ex.state)  # the old branch, complete as it stands
    kept = ex.states[: idx + 1]
    new = Exploration(settings=ex.settings, run_id=new_run_id(), states=kept, parent_run=ex.run_id,
                      branched_at=len(kept[-1].steps), model_info=ex.model_info)
    new.saver(engine, store).save(new.state)
    return new


def candidate_rows(proposal: Proposal) -> list[dict[str, Any]]:
    """One row per candidate for the editable table, best first: keep pre-set to the automatic choice."""
    rows = []
    for c in sorted(proposal.step.candidates, key=lambda c: -float(c.score)):  # stable: ties keep their order
        what = c.label if c.kind != "entity" else f"{c.target or c.label}  (via: {c.relation or ''})"
        rows.append({"keep": bool(c.auto_kept), "score": round(float(c.score), 3), "candidate": what,
                     "from": c.source_entity, "reason": c.reason, "scored by": c.scored_by, "id": c.id})
    return rows


def choice_from_rows(rows: Iterable[dict[str, Any]]) -> set[str]:
    return {str(r["id"]) for r in rows if bool(r.get("keep"))}


def overrides(trace: dict[str, Any]) -> list[dict[str, Any]]:
    """Every override of a trace, with where it happened."""
    return [{"depth": s.get("depth"), "stage": s.get("stage"), "candidate": o.get("label", ""),
             "automatic": "keep" if o.get("auto_kept") else "drop", "person": "keep" if o.get("kept") else "drop"}
            for s in trace.get("steps") or [] for o in s.get("overrides") or []]


# ---------------------------------------------------------------------------------------------- views

def evidence(graph: Any, trace: dict[str, Any], chain: int = 0, *, per_link: int = 3) -> list[dict[str, Any]]:
    """Each link of one chain with its relationship description and source text units (id, text)."""
    chains = [c for c in trace.get("chains") or [] if c]
    if not 0 <= chain < len(chains):
        return []
    out = []
    for link in chains[chain]:
        ridx = graph.find_relationship(str(link.get("relationship_id")))
        desc = graph.relationship(ridx).description if ridx is not None else ""
        units = [(u.id, u.text) for u in graph.evidence(ridx)[:per_link]] if ridx is not None else []
        out.append({"source": link.get("source", ""), "relation": link.get("relation", ""),
                    "target": link.get("target", ""), "description": desc, "units": units,
                    "more": max(0, len(link.get("text_unit_ids") or []) - len(units))})
    return out


def progress_line(depth: int, stage: str, usage: dict[str, Any] | None) -> str:
    u = usage or {}
    cost = u.get("cost_usd")
    money = "cost unknown" if cost is None and u else f"${(cost or 0):.4f}"
    return (f"depth {depth} · {stage} · {u.get('llm_calls', 0)} LLM calls · "
            f"{u.get('prompt_tokens', 0) + u.get('completion_tokens', 0)} tokens · {money}")


def fallbacks(trace: dict[str, Any]) -> list[str]:
    """Every named fallback of a run, as one line each."""
    out = [f"depth {s.get('depth')} {s.get('stage')}: {f.get('name')} ({f.get('where', '')}) {f.get('detail', '')}"
           for s in trace.get("steps") or [] for f in s.get("fallbacks") or []]
    out += [f"{f.get('where')}: {f.get('name')} {f.get('detail', '')}"
            for f in (trace.get("stats") or {}).get("other_fallbacks") or []]
    return [line.strip() for line in out]


def answer_start(answer: str, n: int = 80) -> str:
    """The informative start of an answer (an LLM-free answer's header line is shortened to "[No LLM]")."""
    lines = answer.strip().splitlines()
    if lines and lines[0].startswith("[No LLM]"):
        lines = ["[No LLM]"] + lines[1:]
    text = " ".join(" ".join(lines).split())
    return text if len(text) <= n else text[: n - 1] + "…"


def run_rows(store: RunStore) -> list[dict[str, Any]]:
    return [{"run": r.run_id, "question": r.question, "time": r.created_at.replace("T", " ")[:19],
             "answer": answer_start(r.answer), "calls": r.llm_calls,
             "cost $": None if r.cost_usd is None else round(r.cost_usd, 4), "width": r.width, "depth": r.depth,
             "pruner": r.pruner, "model": r.model, "stop": r.stop_reason or "unfinished", "branch of": r.parent_run or ""}
            for r in store.list()]


def compare_rows(a: dict[str, Any], b: dict[str, Any]) -> list[dict[str, Any]]:
    """Side-by-side facts of two traces; `same` marks rows that agree."""
    def facts(t: dict[str, Any]) -> dict[str, Any]:
        cfg, st = t.get("config") or {}, t.get("stats") or {}
        chains = [c for c in t.get("chains") or [] if c]
        best = " → ".join([chains[0][0].get("source", "")] + [x.get("target", "") for x in chains[0]]) if chains else ""
        return {"question": t.get("question", ""), "answer": " ".join(str(t.get("answer", "")).split())[:160],
                "stop reason": t.get("stop_reason") or "", "best chain": best,
                "overrides": sum(len(s.get("overrides") or []) for s in t.get("steps") or []),
                **{k: cfg.get(k) for k in ("model", "width", "depth", "pruner", "mode")},
                **{k: st.get(k) for k in ("llm_calls", "prompt_tokens", "completion_tokens", "cost_usd", "wall_s")}}
    fa, fb = facts(a), facts(b)
    return [{"": k, "A": str(fa[k]), "B": str(fb[k]), "same": fa[k] == fb[k]} for k in fa]


_MD_ACTIVE = re.compile(r"([\\`*_{}\[\]()#!|~$<>+\-.:])")


def md_text(text: Any) -> str:
    """Data text for st.markdown: every Markdown-active character escaped, line breaks kept, bare URLs
    broken (so nothing from data becomes a link, image, emphasis or HTML)."""
    lines = str("" if text is None else text).splitlines() or [""]
    lines = [re.sub(r"(?i)\b(www)\.", "\\1\u200b.", line.replace("://", ":\u200b//")) for line in lines]
    return "  \n".join(_MD_ACTIVE.sub(r"\\\1", line) for line in lines)


# ---------------------------------------------------------------------------------------------- projects

def resolve_project_path(path: str, *, base: Path | None = None) -> Path:
    """A typed path made absolute: as given (~ expanded, relative to the working folder), else relative to
    `base` (the app's folder) when that exists."""
    p = Path(path.strip()).expanduser()
    if not p.is_absolute() and not p.exists() and base is not None and (base / p).exists():
        p = base / p
    return p.resolve()


def _recent_file() -> Path:
    return tog_home() / "recent.json"


def recent_projects() -> list[str]:
    try:
        data = json.loads(_recent_file().read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return []
    return [p for p in data if isinstance(p, str)][:RECENT_MAX] if isinstance(data, list) else []


def remember_project(path: str | Path) -> list[str]:
    p = str(path)
    recent = [p] + [r for r in recent_projects() if r != p]
    recent = recent[:RECENT_MAX]
    if recent != recent_projects():
        atomic_write_text(_recent_file(), json.dumps(recent, indent=1))
    return recent


def parse_app_args(argv: list[str]) -> dict[str, str]:
    """`streamlit run app.py -- --project PATH`: the arguments after `--`."""
    out: dict[str, str] = {}
    it = iter(argv)
    for a in it:
        if a == "--project":
            out["project"] = next(it, "")
        elif a.startswith("--project="):
            out["project"] = a.split("=", 1)[1]
    return out


def settings_dict(s: Settings) -> dict[str, Any]:
    return asdict(s)


def with_settings(s: Settings, **kw: Any) -> Settings:
    return replace(s, **kw)


def seed_titles(seeds: Iterable[Seed | dict[str, Any]]) -> list[str]:
    return [s.title if isinstance(s, Seed) else str(s.get("title", "")) for s in seeds]
