"""Streamlit glue shared by app.py and pages/: the current settings, engines, the run store, pictures.

LLM clients and the embedder are `st.cache_resource` (shared read-only across sessions), as is the loaded graph
(explorer/projects.py); engines come from tog_core.compose (the CLI and the benchmark build theirs the same way).
Pictures are built once per (run, steps, depth, options) in tog_core.render.cache and shown either in an
opaque-origin iframe (`picture`) or, when a click on a node must act, in the picture component (`picture_pick`,
tog_core/app/picture_component/index.html). Logic lives in tog_core.app; this file only connects it to Streamlit.
"""
from __future__ import annotations

import base64
import threading
from pathlib import Path
from typing import Any
from collections.abc import Callable, Hashable

import streamlit as st
import streamlit.components.v1 as components

from explorer import projects
from tog_core.app import views as V
from tog_core.app.session import K, Settings, run_spec
from tog_core.compose import build_engine, plan
from tog_core.errors import UsageError
from tog_core.llm.factory import WITHHELD, ModelChoice, build_embedder, build_llm, choose_model
from tog_core.render.cache import PICTURES
from tog_core.render.live import live_shell
from tog_core.runs.files import RunStore
from tog_core.tog.engine import ToGEngine
from tog_core.tog.trace import Trace

APP_DIR = Path(__file__).resolve().parents[1]  # the app's folder (app.py, pages/, demo/)
_PICK = components.declare_component("tog_picture", path=str(APP_DIR / "tog_core" / "app" / "picture_component"))


@st.cache_resource(show_spinner="Starting the model…", max_entries=4)
def _shared_client(resolved_path: str, model: str, api_base: str) -> tuple[Any, Any]:
    """A client whose key comes from the environment or the project's .env: shared by every session."""
    info, _ = projects.load_project(resolved_path)
    return build_llm(choose_model(model or None, info, api_base=api_base or None))


def _client(resolved_path: str, model: str, api_base: str, api_key: str | None) -> tuple[Any, Any]:
    """The LLM client as this session sees it (LLMClient.for_session: the provider's process-wide limit served
    round-robin by session, this session's own usage). A key typed in the sidebar stays in this session: its client
    is kept in the session's state, never in a process-wide cache whose key would hold the secret."""
    if not api_key:
        llm, choice = _shared_client(resolved_path, model, api_base)
    else:
        mine = st.session_state.get(K.CLIENT)
        wanted = (resolved_path, model, api_base, hash(api_key))
        if mine is None or mine[0] != wanted:
            info, _ = projects.load_project(resolved_path)
            built = build_llm(choose_model(model or None, info, api_base=api_base or None, api_key=api_key))
            mine = (wanted, built)
            st.session_state[K.CLIENT] = mine
        llm, choice = mine[1]
    if llm is not None and hasattr(llm, "for_session"):
        from streamlit.runtime.scriptrunner import get_script_run_ctx

        ctx = get_script_run_ctx()
        llm = llm.for_session(session=ctx.session_id if ctx else None)
    return llm, choice


@st.cache_resource(show_spinner="Loading the embedding model…", max_entries=2)
def _embedder(resolved_path: str) -> Any:
    return build_embedder(projects.load_project(resolved_path)[0])



def settings() -> Settings:
    ss = st.session_state
    d = Settings()
    return Settings(project=ss.get(K.PROJECT_OK, ""), model=ss.get(K.MODEL, d.model).strip(),
                    api_base=ss.get(K.API_BASE, d.api_base).strip(), width=ss.get(K.WIDTH, d.width),
                    depth=ss.get(K.DEPTH, d.depth), relation_pruner=ss.get(K.REL_PRUNER, d.relation_pruner),
                    entity_pruner=ss.get(K.ENT_PRUNER, d.entity_pruner),
                    temperature_exploration=ss.get(K.T_EXPLORE, d.temperature_exploration),
                    temperature_reasoning=ss.get(K.T_REASON, d.temperature_reasoning), mode=ss.get(K.MODE, d.mode),
                    without=tuple(ss.get(K.WITHOUT, ())))


def _choice(s: Settings | None = None) -> ModelChoice:
    """What the settings run on (nothing is started). A base typed here never gets the server's keys
    (llm/factory.server_key_may_go): only the key typed in this session, or none."""
    s = s or settings()
    cur = projects.project()
    return choose_model(s.model or None, cur[0] if cur else None, api_base=s.api_base or None,
                        api_key=st.session_state.get(K.API_KEY) or None)


def model_note(s: Settings) -> str:
    choice = _choice(s)
    return f"{choice.model}" + (f" — {choice.note}" if choice.note else "")


def model_kind(s: Settings | None = None) -> str:
    """"none", "local" or "litellm": what the current settings run on (nothing is started)."""
    return _choice(s).kind


def key_notice(s: Settings | None = None) -> str | None:
    """Why no key goes with this session's calls, when a server key was kept from the API base typed here."""
    choice = _choice(s)
    return choice.note if choice.key_source == WITHHELD else None


def engine(s: Settings | None = None) -> tuple[ToGEngine, dict[str, Any], list[str]]:
    """An engine for the settings (cheap: graph, client and embedder are cached): engine, model info, notes."""
    s = s or settings()
    info, graph = projects.load_project(s.project)
    refused = base_refusal(s, info, resolve=True)  # LiteLLM is imported for the client anyway
    if refused:
        raise UsageError(refused)
    key = st.session_state.get(K.API_KEY) or None
    p = plan(run_spec(s, api_key=key), info, graph=graph)
    llm, choice = _client(s.project, s.model, s.api_base, key)
    cfg = p.config
    emb = _embedder(s.project) if "embedding" in (cfg.relation_pruner, cfg.entity_pruner, cfg.prefilter) else None
    eng = build_engine(p, graph=graph, info=info, llm=llm, embedder=emb).engine
    notes = [V.pruning_words(cfg.relation_pruner, cfg.entity_pruner, p.policy)]
    return eng, choice.public_dict(), notes


def base_refusal(s: Settings, info: Any, *, resolve: bool = False) -> str | None:
    """Why a shared app sends no request for these settings, or None: their API base (llm/factory.typed_base_refusal)
    or, with the base empty, a typed model whose provider's endpoint is on the server itself or its network
    (llm/factory.typed_model_refusal; `resolve`: as LiteLLM resolves it, which imports LiteLLM). The sidebar's fields
    are checked as they are typed (shell.typed_base_refused, shell.typed_model_refused); this checks the settings a
    saved run brings back when it is resumed, continued or reopened, which may have been typed before the rule or
    elsewhere."""
    from explorer.shell import single_user
    from tog_core.llm.factory import typed_base_refusal, typed_model_refusal

    if s.model.strip().lower() in ("none", "local") or single_user():
        return None
    chat = info.chat_model if info is not None else None
    if (s.api_base or "").strip():
        return typed_base_refusal(s.api_base, chat.api_base if chat is not None else None)
    return typed_model_refusal(s.model, None, chat, resolve=resolve)


def engine_or_stop(s: Settings | None = None) -> tuple[ToGEngine, dict[str, Any], list[str]]:
    """`engine`, or a readable error on the page (and the page stops) when the model cannot be used."""
    from tog_core.errors import UsageError
    from tog_core.llm.client import LLMError
    from tog_core.llm.factory import ModelChoiceError

    try:
        return engine(s)
    except (ModelChoiceError, LLMError, UsageError, ValueError) as err:
        st.error(f"The model cannot be used: {V.md_text(err)}")
        st.stop()
        raise  # unreachable: st.stop raises


def local_client(project_path: str) -> Any:
    """The packaged small local model's client (started on first use), for the opt-in draft."""
    return _client(project_path, "local", "", None)[0]


def store() -> Any:
    """The run store: PostgreSQL when a store URL is set (one shared pool, this session's user id) with the files
    under TOG_HOME behind it while it cannot be reached (FallbackRunStore), else the files. With `TOG_RUN_OWNER`
    (app/owner.py), the asking person's runs only, in both; a request that names nobody stops the page, saying why."""
    who = owner()
    url = projects.store_url()
    local = RunStore().for_owner(who) if who is not None else RunStore()
    if not url:
        return local
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    from tog_core.graphrag.pg_common import StoreError
    from tog_core.runs.fallback import FallbackRunStore

    ctx = get_script_run_ctx()
    outage = _outage(url)
    if outage.down():  # failed a moment ago: not asked again before its retry time
        return FallbackRunStore(None, local, outage=outage)
    try:
        pg = _pg_runs(url)
    except StoreError as err:  # not even reachable to open: the files, and the reason
        return FallbackRunStore(None, local, outage=outage, opening_error=err)
    view = pg.for_user(who, only=True) if who is not None else pg.for_user(ctx.session_id if ctx else "")
    return FallbackRunStore(view, local, outage=outage)


def owner() -> str | None:
    """Whose runs the pages show and save (app/owner.py), None when runs are everyone's. A bad `TOG_RUN_OWNER`, or a
    request that names nobody, is said on the page, which stops: no run is listed or saved for a person unknown."""
    import os

    from tog_core.app.owner import OwnerUnknown, owner_setting, run_owner
    from tog_core.errors import UsageError

    try:
        return run_owner(os.environ, _request_headers(), _signed_in())
    except UsageError as err:
        st.error(V.md_text(err))
        if isinstance(err, OwnerUnknown) and owner_setting(os.environ) == ("st.user", ""):
            st.button("Sign in", key="tog_sign_in", on_click=_sign_in, icon=":material/login:")
            if why := st.session_state.pop("tog_sign_in_error", ""):
                st.error(V.md_text(why))
        st.stop()
        raise  # unreachable: st.stop raises


def _sign_in() -> None:
    try:
        st.login()
    except Exception as err:  # noqa: BLE001 - no [auth] in secrets.toml: said under the button
        st.session_state["tog_sign_in_error"] = (f"Signing in is not set up on this server ({err.__class__.__name__}: "
                                                 f"{str(err)[:200]}); the operator sets [auth] in "
                                                 ".streamlit/secrets.toml.")


def _request_headers() -> dict[str, list[str]]:
    """Every header of the request with every value it was sent with (a proxy appending its header to one the
    client sent makes two: app/owner.py refuses that)."""
    try:
        h = st.context.headers
        return {k: list(h.get_all(k)) for k in h.keys()}
    except Exception:  # noqa: BLE001 - no request (a bare script run, AppTest): no headers
        return {}


def _signed_in() -> Any:
    try:
        return st.user
    except Exception:  # noqa: BLE001 - Streamlit without its sign-in
        return None


PG_TIMEOUT_S = 5.0  # wait for a pooled connection to the run store before saving the run locally instead


@st.cache_resource(max_entries=2)
def _pg_runs(url: str) -> Any:
    from tog_core.runs.postgres import PgRunStore

    return PgRunStore(url, timeout=PG_TIMEOUT_S)


@st.cache_resource(max_entries=2)
def _outage(url: str) -> Any:
    """When the run store at `url` last failed: shared by every session, so a server that is down is waited
    for once, not by every page run of every session."""
    from tog_core.runs.fallback import Outage

    return Outage()


def list_runs(runs: Any) -> tuple[list[Any], list[str]]:
    """The saved runs (newest first) and the damaged ones ("file: why"), from the store's index."""
    note = getattr(runs, "note", lambda: "")()
    listed, damaged = runs.scan()
    note = note or getattr(runs, "note", lambda: "")()
    if note:
        st.warning(note)
    return listed, damaged


def as_dict(trace: Trace) -> dict[str, Any]:
    """A trace as its JSON dict (what the pictures, the exports and the diagnosis read: the stable trace format),
    made once per trace object shown in this session (the last four kept), so a rerun does not copy it. Pages and
    blocks read the Trace's attributes (tests/test_architecture.py checks it)."""
    kept: list[tuple[Trace, dict[str, Any]]] = st.session_state.setdefault(K.TRACE_DICTS, [])
    for t, d in kept:
        if t is trace:
            return d
    d = trace.to_dict()
    kept.append((trace, d))
    del kept[:-4]
    return d


def open_run(runs: Any, run_id: str, stamp: str) -> Trace | None:
    """A saved run's whole trace, read when the person opens it; kept for this session (two at most) while its
    stamp is unchanged, so clicks on an open run do not read it again. None (with the reason shown) when it
    cannot be read."""
    kept = st.session_state.setdefault(K.RUNS_LOADED, {})
    key = (run_id, stamp)
    if key not in kept:
        try:
            t = runs.load(run_id)
        except (FileNotFoundError, ValueError, UsageError) as err:
            st.error(f"Cannot open this run: {V.md_text(err)}")
            return None
        while len(kept) >= 2:
            kept.pop(next(iter(kept)))
        kept[key] = t
    return kept[key]


def cached(key: Hashable, build: Callable[[], str]) -> str:
    """A picture page built once per key (run, steps, depth, options) and reused (tog_core.render.cache)."""
    return PICTURES.get_or_build(key, build)


def picture(page: str, height: int) -> None:
    """A standalone picture page in an iframe. A data: URL gives it an opaque origin, so its scripts can
    never reach the app (srcdoc would be same-origin)."""
    url = "data:text/html;base64," + base64.b64encode(page.encode("utf-8")).decode("ascii")
    st.iframe(url, height=height)


def picture_pick(page: str, height: int, *, key: str, on_pick: Callable[[dict[str, Any]], None],
                 live: bool = False) -> None:
    """A picture whose node clicks act: `on_pick({"ref", "label"})` runs (as a widget callback) when a node
    carrying a `ref` is clicked. Where the component cannot run, the picture is simply not shown: every
    action it offers is also on the page as a table or a button. `live`: `page` is a picture's data
    (render.page.build_page(..., for_live=True)), drawn into one page kept loaded in the component
    (render.live.live_shell), so a new picture does not parse vis-network again."""
    def changed() -> None:
        value = st.session_state.get(key)
        if isinstance(value, dict) and value.get("ref") is not None:
            on_pick(value)

    if live:
        _PICK(shell=live_shell(), data=page, height=height, title="picture", key=key, default=None,
              on_change=changed)
    else:
        _PICK(page=page, height=height, title="picture", key=key, default=None, on_change=changed)


def run_in_address(runs: Any, run_id: str) -> Trace | None:
    """The saved run named in the address (a reload, a shared link), on its own project: a run of another project
    opens that project (once: the sidebar opens it on the rerun, TOG_PROJECT_ROOTS applying) or, when it cannot
    be opened, the page says so and stops — the run is never shown against the project open here. None when no
    such run is saved."""
    try:
        saved: Trace = runs.load(run_id)
    except (FileNotFoundError, ValueError, UsageError) as err:
        what = "is not saved here (deleted, or saved elsewhere)" if isinstance(err, FileNotFoundError) else \
            f"cannot be read ({err})"
        st.warning(V.md_text(f"The run named in the address, “{str(run_id)[:80]}”, {what}. Ask a question, or open a "
                             "run under Saved runs."))
        st.query_params.pop("run", None)
        return None
    if not on_its_project(saved):
        st.error(elsewhere(saved, "it is not shown against"))
        st.stop()
    put_in_address(run_id)
    return saved


def on_its_project(trace: Trace) -> bool:
    """Whether the project open here is the one `trace` was made on (a run that names none is taken as made here).
    When it is not, that project is opened first, as the address does: once per run, the sidebar opening it on the
    rerun this starts (TOG_PROJECT_ROOTS applying). False when it was tried and could not be opened: the caller
    says so with `elsewhere` and offers nothing that needs the run's own graph."""
    ss = st.session_state
    if V.made_on(trace, str(ss.get(K.PROJECT_OK) or "")):
        if ss.get(K.PROJECT_TRIED) == trace.run_id:  # opened: a later visit to this run may switch again
            ss.pop(K.PROJECT_TRIED)
        return True
    if ss.get(K.PROJECT_TRIED) != trace.run_id:
        ss[K.PROJECT_TRIED], ss[K.PROJECT_SWITCH] = trace.run_id, trace.project
        st.rerun()
    return False


def elsewhere(trace: Trace, what_not: str) -> str:
    """The plain words for a run whose project cannot be opened here: which project it was made on and why it is not
    used with the one open here (`what_not`, e.g. "it cannot be resumed or continued on")."""
    from tog_core.app.session import project_label

    here = str(st.session_state.get(K.PROJECT_OK) or "")
    return (f"This run was made on the project {V.md_text(project_label(trace.project))}, which cannot be opened "
            f"here (the sidebar says why); {what_not} {V.md_text(project_label(here)) if here else 'another project'}. "
            f"Its project's folder: {V.md_text(trace.project)}")


def put_in_address(run_id: str | None) -> None:
    """The run and its project in the address (None: neither), so a reload or a shared link opens it again."""
    if run_id is None:
        for q in ("run", "project"):
            st.query_params.pop(q, None)
        return
    st.query_params["run"] = run_id
    st.query_params["project"] = str(st.session_state.get(K.PROJECT_OK) or "")


WARM_THREAD = "tog-warm-litellm"
WARMED: list[threading.Thread] = []  # the warming threads started in this process (one per server)


def warm_litellm() -> threading.Thread | None:
    """Import LiteLLM in a background thread, once per server, when a provider is configured: the import takes
    ~5 s, which the first question would otherwise wait for. Nothing is started without a provider."""
    if model_kind() != "litellm":
        return None
    return _warm()


@st.cache_resource(show_spinner=False)
def _warm() -> threading.Thread:
    from tog_core.llm._litellm import load_litellm

    def load() -> None:
        try:
            load_litellm()
        except Exception:  # noqa: BLE001  — the first real call imports it again and says what is wrong
            pass

    thread = threading.Thread(target=load, name=WARM_THREAD, daemon=True)
    thread.start()
    WARMED.append(thread)
    return thread


