"""The app's session: every session-state key, the sidebar's settings, and remembered projects.

* `K` — every session-state key of the app, declared once;
* `Settings` — the sidebar's choices; `run_spec` turns them into a compose.RunSpec (the one rule the CLI and
  the benchmark use too); `settings_from_trace` gives the settings a saved run was made with (to resume it);
* recent projects and the `-- --project PATH` argument (the project path typed in the sidebar is checked and
  resolved in inputs.py, as the Model field and the fields' lengths are; re-exported here).

Running a search is in runner.py, the tables the pages show in views.py; none of them imports Streamlit.
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, replace
from pathlib import Path, PurePath
from typing import Any

from tog_core.compose import DEPARTURES, MODE_NOTES, MODES, PRUNERS, RunSpec
from tog_core.app.inputs import NAMES_MAX, check_project_root, model_problem, project_roots, resolve_project_path
from tog_core.errors import UsageError
from tog_core.llm.errors import looks_secret
from tog_core.reading import QuestionReading
from tog_core.runs.files import RunStore, atomic_write_text, tog_home
from tog_core.tog.state import Seed
from tog_core.tog.trace import Trace

__all__ = ["DEPARTURES", "AskAgain", "K", "MODE_NOTES", "MODES", "NAMES_MAX", "PRUNERS", "RECENT_MAX", "Settings",
           "check_project_root", "memory_home", "parse_app_args", "project_label", "project_roots", "recent_projects",
           "remember_project", "remember_settings", "remembered_settings", "usable_settings",
           "resolve_project_path", "run_spec", "settings_dict", "settings_from_trace", "sidebar_defaults",
           "with_recent", "with_settings"]

RECENT_MAX = 8


class K:
    """Session-state keys (the only place they are spelled)."""

    PROJECT_INPUT = "project_input"  # the sidebar path field
    PROJECT_OK = "project_ok"  # resolved path of the last project that loaded
    RECENT_PICK = "recent_pick"
    RECENT = "recent_projects"  # this session's recent projects (shared through TOG_HOME only on 127.0.0.1)
    MODEL = "model"
    API_BASE = "api_base"
    API_KEY = "api_key"  # typed into a password field; held in memory only
    WIDTH = "width"
    DEPTH = "depth"
    REFUSED = "numbers_refused"  # {sidebar number's key: why the number typed there was not taken}
    REL_PRUNER = "relation_pruner"
    ENT_PRUNER = "entity_pruner"
    T_EXPLORE = "temperature_exploration"
    T_REASON = "temperature_reasoning"
    MODE = "mode"
    ASK_QUESTION = "ask_question"
    ASK_SEEDS = "ask_seeds"  # titles handed over by "Ask from here", or chosen under "Topic entities"
    ASK_SEED_EDIT = "ask_seed_edit"  # the topic-entity multiselect under an answer
    ASK_TRACE = "ask_trace"  # the Trace of the last run shown on the ask page
    ASK_RUN = "ask_run"  # run id of the run in progress (a Stop or a reload finds it)
    ASK_STOPPED = "ask_stopped"  # set by the Stop button's callback: answer the run in progress from what it found
    # (run id, revision, note, "branched" | "unsaved"): what saving Stop's answer said (a new run; or not saved),
    # shown while that trace (its id at that revision) is
    ASK_SAVED_AS = "ask_saved_as"
    ASK_AGAIN = "ask_again"  # an AskAgain: an example, topic entities chosen under an answer, "Answer at N hops"
    ASK_RESUME = "ask_resume"  # run id Saved runs asked the ask page to resume
    ASK_DEPTH = "ask_replay_depth"
    ASK_TAB = "ask_tab"
    ASK_EXPECT = "ask_expect"  # "why not X?": the expected answer(s), comma separated
    ASK_DRAFT = "ask_draft"  # {run_id: draft text} written by the small local model on request
    ASK_PICK_ERROR = "ask_pick_error"  # why a person's choice of answer ("This is the answer") was not saved
    ASK_READING = "ask_reading"  # "How the question was read": its form and fields (+ _hops / _asked, per run id)
    EXPLORE = "exploration"  # an Exploration
    EXPLORE_QUESTION = "explore_question"
    EXPLORE_SEARCH = "explore_search"
    EXPLORE_SEEDS = "explore_seeds"
    EXPLORE_LINKED = "explore_linked_question"  # the question the seeds were last linked from
    EXPLORE_EDITOR = "explore_editor"
    EXPLORE_CHOICE = "explore_choice"  # {proposal key: set of kept candidate ids} (table and picture clicks)
    EXPLORE_DRAFT = "explore_draft"  # {run id: the draft record last kept for it} (explorer/drafts.py)
    EXPLORE_DRAFT_SAID = "explore_draft_said"  # {run id: why its draft was not restored} (a finished run)
    EXPLORE_VERSION = "explore_version"  # bumped when a picture click changes the choice (fresh table)
    EXPLORE_BACK = "explore_back_depth"
    EXPLORE_EXPECT = "explore_expect"
    EXPLORE_TAB = "explore_tab"
    EXPLORE_PICK = "explore_pick"  # the frontier picture component
    GRAPH_QUERY = "graph_query"
    GRAPH_PICK = "graph_pick"
    GRAPH_HOPS = "graph_hops"
    GRAPH_CENTRE = "graph_centre"  # entity index moved to by a click on a neighbour
    GRAPH_CLICK = "graph_click"  # the neighbourhood picture component
    RUNS_OPEN = "runs_open"
    RUNS_A = "runs_a"
    RUNS_B = "runs_b"
    RUNS_ALL = "runs_all_projects"
    RUNS_SEARCH = "runs_search"
    RUNS_TAB = "runs_tab"
    WITHOUT = "without_departures"  # departures from the paper the person switched off
    PROJECT_SWITCH = "project_switch"  # a project to open before the sidebar is drawn (a run of another project)
    PROJECT_TRIED = "project_tried"  # run id whose project was already tried (opened, or said why not)
    PROJECT_KEY = "project_key"  # path|store of the last project that loaded
    STORE = "store_url"  # a PostgreSQL store URL typed in the sidebar (else TOG_STORE)
    CLIENT = "llm_client"  # this session's LLM client when its key was typed here (never process-wide)
    PROJECT_ERROR = "project_error"  # why the current project cannot be read now (a store that went down …)
    RUNS_LOADED = "runs_loaded"  # {(run id, stamp): Trace}: the runs opened on Saved runs, read once
    TRACE_DICTS = "trace_dicts"  # [(Trace, its JSON dict)]: what the pictures read, made once per trace shown
    # value widgets whose state must survive reruns and page switches (never buttons or data editors)
    PERSISTENT = (PROJECT_INPUT, MODEL, API_BASE, API_KEY, WIDTH, DEPTH, REL_PRUNER, ENT_PRUNER, T_EXPLORE, T_REASON,
                  MODE, WITHOUT, STORE, ASK_QUESTION, ASK_EXPECT, EXPLORE_QUESTION, EXPLORE_SEARCH, EXPLORE_SEEDS,
                  EXPLORE_EXPECT, GRAPH_QUERY, GRAPH_HOPS, RUNS_ALL, RUNS_SEARCH, RUNS_OPEN)


@dataclass(frozen=True, kw_only=True)
class Settings:
    """The sidebar. `model` "" means the default (the project's model if its key is set, else no LLM)."""

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
    without: tuple[str, ...] = ()  # departures from the paper switched off (names from compose.DEPARTURES)


def sidebar_defaults() -> dict[str, Any]:
    """Initial session-state values of the sidebar widgets (the widgets themselves get no default)."""
    d = Settings()
    return {K.MODEL: d.model, K.API_BASE: d.api_base, K.API_KEY: "", K.WIDTH: d.width, K.DEPTH: d.depth,
            K.REL_PRUNER: d.relation_pruner, K.ENT_PRUNER: d.entity_pruner,
            K.T_EXPLORE: d.temperature_exploration, K.T_REASON: d.temperature_reasoning, K.MODE: d.mode,
            K.WITHOUT: list(d.without)}


def run_spec(settings: Settings, *, api_key: str | None = None) -> RunSpec:
    """The sidebar as a RunSpec for tog_core.compose (the one rule for model, pruners, options and policy). UsageError
    for a Model field that holds no model name (inputs.model_problem): no client is built from it."""
    if (why := model_problem(settings.model)) is not None:
        raise UsageError(why)
    return RunSpec(model=settings.model or None, api_base=settings.api_base or None, api_key=api_key,
                   width=settings.width, depth=settings.depth, relation_pruner=settings.relation_pruner,
                   entity_pruner=settings.entity_pruner, temperature_exploration=settings.temperature_exploration,
                   temperature_reasoning=settings.temperature_reasoning, mode=settings.mode,
                   without=tuple(settings.without))


@dataclass(frozen=True, kw_only=True)
class AskAgain:
    """Ask again, on the next run of the Ask page: an example question, other topic entities, "Answer at N hops"
    (with the earlier run's trials and settings), "Search again with this reading" (a person's corrected reading)."""

    question: str
    # titles a person chose, or the earlier run's own topic entities (Seed: how each was found stays with it, so the
    # new run does not call them chosen by the person)
    seeds: tuple[str | Seed, ...] = ()
    hops: int | None = None
    tried: tuple[dict[str, Any], ...] = ()
    settings: Settings | None = None
    reading: QuestionReading | None = None  # used instead of reading the question again (QuestionReading.edit)


def settings_from_trace(trace: Trace | dict[str, Any], project: str) -> Settings:
    """The settings a saved run was made with, so it can be resumed or continued as it was set up. The model
    is named the way the sidebar names it: "none", "local", or the LiteLLM string. (A dict: a trace as JSON.)"""
    cfg = (trace.config if isinstance(trace, Trace) else trace.get("config")) or {}
    kind = cfg.get("model_kind")
    model = str(cfg.get("model") or "")
    if kind in ("none", "local"):
        model = kind
    elif model.lower() == "none":
        model = "none"
    d = Settings()

    def num(key: str, default: Any, cast: type) -> Any:
        try:
            return cast(cfg[key]) if cfg.get(key) is not None else default
        except (TypeError, ValueError):
            return default

    return Settings(project=project, model=model, api_base=str(cfg.get("api_base") or ""),
                    width=num("width", d.width, int), depth=num("depth", d.depth, int),
                    relation_pruner=str(cfg.get("relation_pruner") or d.relation_pruner),
                    entity_pruner=str(cfg.get("entity_pruner") or d.entity_pruner),
                    temperature_exploration=num("temperature_exploration", d.temperature_exploration, float),
                    temperature_reasoning=num("temperature_reasoning", d.temperature_reasoning, float),
                    mode=str(cfg.get("mode") or d.mode) if cfg.get("mode") in MODES else d.mode,
                    without=tuple(x for x in DEPARTURES if x not in cfg.get("departures", list(DEPARTURES))))


def settings_dict(s: Settings) -> dict[str, Any]:
    return asdict(s)


def with_settings(s: Settings, **kw: Any) -> Settings:
    return replace(s, **kw)


# ---------------------------------------------------------------------------------------------- projects

_RUN_FOLDER = re.compile(r"\d{8}-\d{6}")  # an older GraphRAG's indexing run (output/20240101-120000/artifacts)


def project_label(path: str | Path) -> str:
    """A project's name as people tell projects apart: its folder, or the folder above `output/` (and above an
    older GraphRAG's `output/<run>/artifacts`) — every GraphRAG project's tables are in a folder called output."""
    p = PurePath(str(path).rstrip("/\\") or str(path))
    while p.name and p.parent != p and (p.name.lower() in ("output", "artifacts") or _RUN_FOLDER.fullmatch(p.name)):
        p = p.parent
    return p.name or str(path)


def _recent_file(home: Path | None = None) -> Path:
    return (home or tog_home()) / "recent.json"


def recent_projects(home: Path | None = None) -> list[str]:
    """The recent projects kept in `home` (memory_home: TOG_HOME on one person's app, the person's own folder when
    runs are kept per person); a shared server without owners keeps each session's list in that session only."""
    try:
        data = json.loads(_recent_file(home).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return []
    return [p for p in data if isinstance(p, str)][:RECENT_MAX] if isinstance(data, list) else []


def with_recent(recent: list[str], path: str | Path) -> list[str]:
    """`recent` with `path` first, without duplicates, at most RECENT_MAX long."""
    p = str(path)
    return ([p] + [r for r in recent if r != p])[:RECENT_MAX]


def remember_project(path: str | Path, home: Path | None = None) -> list[str]:
    """Put `path` first in the recent projects kept in `home` (default TOG_HOME)."""
    recent = with_recent(recent_projects(home), path)
    if recent != recent_projects(home):
        try:
            atomic_write_text(_recent_file(home), json.dumps(recent, indent=1))
        except OSError:  # TOG_HOME cannot be written: the list lives in this session only
            pass
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


# the sidebar's choices kept across reloads, in memory_home (never the API key; an API base only without credentials
# or a query in it; never a number the sidebar refused), each checked against what its widget accepts before use
_NUMBERS = {K.WIDTH: (1, 10), K.DEPTH: (1, 6)}
NUMBER_LIMITS = _NUMBERS  # what the sidebar's width and depth accept (the labels and help name them)
_NUMBER_NAMES = {K.WIDTH: "Width", K.DEPTH: "Depth"}


def within_limits(key: str, value: Any) -> tuple[int, str]:
    """A sidebar number (K.WIDTH, K.DEPTH) kept within its limits: (the number used, "" when it was taken as typed,
    else what was refused and what is used instead, in words). Any value gives a number: outside the range (infinity
    included), the nearest limit; a fraction, its whole part within the range; a number written as text, as the
    number; anything else (a word, NaN, True), the lowest limit."""
    lo, hi = _NUMBERS[key]
    name = _NUMBER_NAMES[key]
    n = _number(value)
    if n is None:
        return lo, f"{name} must be a whole number from {lo} to {hi}: set to {lo}."
    used = hi if n > hi else lo if n < lo else int(n)
    if used == n:
        return used, ""
    whole = isinstance(n, int) or n.is_integer()  # inf is not: "inf"; 1e8 reads 100000000, not 1e+08
    shown = str(value).strip()[:20] if isinstance(value, str) else str(int(n)) if whole else str(n)
    return used, f"{name} {shown} is not taken (it goes from {lo} to {hi}): set to {used}."


def _number(value: Any) -> int | float | None:
    """A number from what a widget or a remembered file held (text read as a number); None when it is none."""
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:  # NaN is not itself
        return None
    return value


_TEMPERATURES = (K.T_EXPLORE, K.T_REASON)
_CHOICES = {K.REL_PRUNER: PRUNERS, K.ENT_PRUNER: PRUNERS, K.MODE: MODES}
REMEMBERED = (K.MODEL, K.API_BASE, *_NUMBERS, *_TEMPERATURES, *_CHOICES, K.WITHOUT)


SETTINGS_DIR = ".settings"  # in a person's runs folder: their sidebar and recent projects (a folder: never a run)


def memory_home(owner: str | None, *, single_user: bool) -> Path | None:
    """Where a session's sidebar and recent projects are remembered for the next one: the person's own folder when
    runs are kept per person (`TOG_RUN_OWNER`: TOG_HOME/runs/people/<digest>/.settings, on any address), TOG_HOME on
    one person's app (served on 127.0.0.1 without owners: whoever reaches that server shares it), else None:
    nothing is remembered, every session starts from the defaults."""
    if owner is not None:
        return RunStore().for_owner(owner).root / SETTINGS_DIR
    return tog_home() if single_user else None


def _settings_file(home: Path | None = None) -> Path:
    return (home or tog_home()) / "sidebar.json"


def _plain_base(url: str) -> bool:
    """An API base that can be written down: no user, password or query (a token) in it."""
    head = url.split("//", 1)[-1].split("/", 1)[0]
    return "@" not in head and "?" not in url and "#" not in url


def usable_settings(raw: Any) -> dict[str, Any]:
    """The remembered sidebar values a widget accepts (anything else in `raw` is dropped, so a hand-edited or old
    file can neither break the sidebar nor carry a key)."""
    out: dict[str, Any] = {}
    if not isinstance(raw, dict):
        return out
    for k in (K.MODEL, K.API_BASE):
        v = raw.get(k)
        if (isinstance(v, str) and len(v) <= 300 and v.isprintable() and not looks_secret(v)
                and (k != K.API_BASE or _plain_base(v))):
            out[k] = v
    for k, (lo, hi) in _NUMBERS.items():
        v = raw.get(k)
        if isinstance(v, int) and not isinstance(v, bool) and lo <= v <= hi:
            out[k] = v
    for k in _TEMPERATURES:
        v = raw.get(k)
        if isinstance(v, (int, float)) and not isinstance(v, bool) and 0.0 <= v <= 1.0:
            out[k] = round(float(v), 1)
    for k, allowed in _CHOICES.items():
        if raw.get(k) in allowed:
            out[k] = raw[k]
    v = raw.get(K.WITHOUT)
    if isinstance(v, list) and all(isinstance(x, str) and x in DEPARTURES for x in v):
        out[K.WITHOUT] = list(dict.fromkeys(v))
    return out


def remembered_settings(home: Path | None = None) -> dict[str, Any]:
    """The sidebar as it was left in `home` (memory_home; default TOG_HOME), {} when nothing was kept or the file is
    bad."""
    try:
        return usable_settings(json.loads(_settings_file(home).read_text(encoding="utf-8")))
    except (OSError, ValueError, RecursionError):
        return {}


def remember_settings(values: Mapping[str, Any], home: Path | None = None, *, refused: Iterable[str] = ()) -> bool:
    """Keep the sidebar's choices in `home` (memory_home; default TOG_HOME) for the next session; written only when
    they changed. `refused`: the fields whose value the sidebar did not take as typed (K.REFUSED: a width of 0 set to
    1): what was kept for them before stays, the value put in their place is never kept. False when the folder
    cannot be written (the sidebar works on; it is only not kept)."""
    refused = set(refused)
    before = remembered_settings(home)
    keep = usable_settings({k: values.get(k) for k in REMEMBERED if k not in refused})
    keep.update({k: before[k] for k in refused if k in before})
    if keep == before:
        return True
    try:
        atomic_write_text(_settings_file(home), json.dumps(keep, indent=1))
    except OSError:
        return False
    return True
