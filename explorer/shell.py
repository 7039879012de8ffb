"""The app's frame: page config, session defaults and the sidebar (project, model, search).

app.py draws it on every run before the page. Streamlit runs a file of pages/ by itself, without app.py, on a
fresh server's first visit to a page's address (its older folder-based multipage mode); each page therefore
calls `ensure()`, which draws the frame when app.py has not.
"""
from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import streamlit as st

from explorer import projects
from explorer import ui
from explorer.hold import hold_tabs
from tog_core.app import views as V
from tog_core.app.session import (
    DEPARTURES,
    MODE_NOTES,
    MODES,
    PRUNERS,
    NUMBER_LIMITS,
    K,
    memory_home,
    parse_app_args,
    project_label,
    recent_projects,
    remember_project,
    remember_settings,
    remembered_settings,
    resolve_project_path,
    run_spec,
    sidebar_defaults,
    with_recent,
    within_limits,
)
from tog_core.app.inputs import KEY_MAX, MODEL_MAX, PATH_MAX, URL_MAX, model_problem
from tog_core.errors import UsageError
from tog_core.graphrag.project import ProjectError

_inside = threading.local()  # set while app.py runs a page: the frame is drawn
_RESTORED_BASE = "tog_restored_api_base"  # the API base a new session took from its memory, until it is checked
LOOPBACK = ("127.0.0.1", "localhost", "::1")


def single_user() -> bool:
    """One person's app: served on the loopback address only (`--server.address 127.0.0.1`) AND runs not kept per
    person (`TOG_RUN_OWNER` unset or empty) AND the request did not come through a proxy (`proxied`). Its recent
    projects and sidebar are kept in TOG_HOME across restarts, a store or an API base typed in its sidebar is used as
    typed. With TOG_RUN_OWNER set the app serves several people, on 127.0.0.1 too (behind their authenticating proxy,
    as docs/operations.md advises): a typed store or API base must be one the operator named, and each person's
    memory is their own (`memory`). A proxy on the same machine without TOG_RUN_OWNER serves several people too, and
    so does any other address: without owners each session keeps its own, and nothing one person opens is shown to
    another."""
    from tog_core.app.owner import SETTING

    if (os.environ.get(SETTING) or "").strip():  # runs kept per person (a bad value too: refused by the pages)
        return False
    return (st.get_option("server.address") or "") in LOOPBACK and not proxied()


PROXY_HEADERS = ("forwarded", "x-forwarded-for", "x-forwarded-host", "x-forwarded-proto", "x-forwarded-server",
                 "x-forwarded-port", "x-real-ip", "x-client-ip", "true-client-ip", "cf-connecting-ip", "via")


def proxied() -> bool:
    """Whether this session's request came through a proxy: it carries a header a proxy adds (Forwarded,
    X-Forwarded-*, X-Real-IP, Via, …), or its Host or Origin names anything but the loopback (a proxy keeping the
    public name, a page of another site). A browser on the server itself sends none of these."""
    headers = {k.lower(): v for k, v in ui._request_headers().items()}
    if any(k in PROXY_HEADERS or k.startswith("x-forwarded-") for k in headers):
        return True
    return any(not _loopback_name(v, k == "origin") for k in ("host", "origin") for v in headers.get(k, []))


def _loopback_name(value: str, url: bool) -> bool:
    import ipaddress
    from urllib.parse import urlsplit

    try:
        host = (urlsplit(value if url else "//" + value).hostname or "").rstrip(".").lower()
        return host == "localhost" or host.endswith(".localhost") or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def typed_base_refused() -> str | None:
    """Why the API base typed in the sidebar is not used (llm/factory.typed_base_refusal), or None. On a shared app
    (not `single_user`) the server sends requests to a typed base only when it is the project's configured one or
    listed in TOG_ALLOWED_API_BASES; checked only while the settings would call a provider's model there (with
    `none` or `local` the field is not used). Said under the field, and `ensure` stops the page before anything on
    it can build a client."""
    from tog_core.llm.factory import typed_base_refusal

    base = str(st.session_state.get(K.API_BASE) or "").strip()
    if not base or single_user() or ui.model_kind() != "litellm":
        return None
    cur = projects.project()
    chat = cur[0].chat_model if cur is not None and cur[0] is not None else None
    return typed_base_refusal(base, chat.api_base if chat is not None else None)


def typed_model_refused() -> str | None:
    """Why the model typed in the sidebar gets no request with the API base empty (llm/factory.typed_model_refusal,
    read from the model's provider prefix: LiteLLM is not imported here), or None. Only on a shared app: a provider
    whose endpoint without a base is on the server itself (ollama, llamafile, …) is reached only through an API base
    the operator lists. The project's own model, `none` and `local` are never refused."""
    from tog_core.llm.factory import typed_model_refusal

    model = str(st.session_state.get(K.MODEL) or "").strip()
    if not model or str(st.session_state.get(K.API_BASE) or "").strip() or single_user():
        return None
    cur = projects.project()
    return typed_model_refusal(model, None, cur[0].chat_model if cur is not None and cur[0] is not None else None)


def memory() -> Path | None:
    """Where this session's sidebar and recent projects are remembered for the next (session.memory_home): the
    asking person's own folder when runs are kept per person, TOG_HOME on one person's app, else None (nowhere). A
    request that names nobody when runs are kept per person, or a bad TOG_RUN_OWNER: nowhere (the pages say why)."""
    from tog_core.app.owner import run_owner

    try:
        who = run_owner(os.environ, ui._request_headers(), ui._signed_in())
    except UsageError:
        return None
    return memory_home(who, single_user=single_user())


def ensure() -> None:
    """Draw the frame unless app.py already did in this run. Every page calls it first: an API base or a model the
    sidebar refuses (typed_base_refused, typed_model_refused) stops the page here, so no search, resume or reading of
    it sends anything there; the sidebar keeps everything the person typed."""
    if not getattr(_inside, "on", False):
        draw()
    if typed_base_refused() is not None:
        st.error("The API base typed in the sidebar cannot be used on this app (the sidebar says why). Empty it, or "
                 "set the model to `none`, to go on.")
        st.stop()
    if typed_model_refused() is not None:
        st.error("The model typed in the sidebar cannot be used on this app without an API base its operator lists "
                 "(the sidebar says why). Empty the model for the project's own, or set it to `none`, to go on.")
        st.stop()


@contextmanager
def drawn() -> Iterator[None]:
    _inside.on = True
    try:
        yield
    finally:
        _inside.on = False


def _pick_recent() -> None:
    ss = st.session_state
    if ss.get(K.RECENT_PICK):
        ss[K.PROJECT_INPUT] = ss[K.RECENT_PICK]


def draw() -> None:
    st.set_page_config(page_title="ToG Explorer", layout="wide")
    ss = st.session_state
    # Widget ids include the running script's hash, which differs on the very first run of a session, so
    # widget values would reset on the second run; re-assigning each value as session state keeps it.
    for _k in K.PERSISTENT:
        if _k in ss:
            ss[_k] = ss[_k]
    if K.PROJECT_INPUT not in ss:  # a new session: the project named in the address (a shared run), else --project
        ss[K.PROJECT_INPUT] = (st.query_params.get("project") or parse_app_args(sys.argv[1:]).get("project")
                               or str(ui.APP_DIR / "demo"))
    if (switch := ss.pop(K.PROJECT_SWITCH, None)):  # a page opens a run of another project: open that project
        ss[K.PROJECT_INPUT] = switch
    home = memory()
    if K.MODEL not in ss:  # a new session (a reload): the sidebar as this person left it (theirs, or the server's)
        kept = remembered_settings(home) if home else {}
        for _k, _v in {**sidebar_defaults(), **kept}.items():
            ss.setdefault(_k, _v)
        if kept.get(K.API_BASE) and ss.get(K.API_BASE) == kept[K.API_BASE]:
            ss[_RESTORED_BASE] = kept[K.API_BASE]  # checked once the project is open (its configured base counts)
    for _k, _v in sidebar_defaults().items():
        ss.setdefault(_k, _v)
    if K.RECENT not in ss:
        ss[K.RECENT] = recent_projects(home) if home else []


    with st.sidebar:
        st.subheader("Project")
        st.text_input("GraphRAG project folder", key=K.PROJECT_INPUT, max_chars=PATH_MAX,
                      help="A GraphRAG root (with settings.yaml), its output folder, or a folder of parquet files")
        st.text_input("PostgreSQL store (optional)", key=K.STORE, type="password", max_chars=URL_MAX,
                      placeholder="TOG_STORE" if os.environ.get("TOG_STORE") else "in memory",
                      help="postgresql://… : read the graph imported with `python -m tog_core store import` "
                           "and keep runs there. Empty: TOG_STORE if set, else the project in memory."
                           + ("" if single_user() else " This app is shared: only the server's TOG_STORE or a store "
                              "its operator listed in TOG_ALLOWED_STORES can be used."))
        if refused := projects.typed_store_refused():
            st.warning(f"The store typed here is not used: {V.md_text(refused)}. "
                       + ("Using the server's TOG_STORE." if os.environ.get("TOG_STORE") else
                          "The project is read from its folder."))
        failed = None
        try:  # a NUL, an over-long path, ~ on a shared server, a path that cannot be resolved: said, not raised
            wanted = str(resolve_project_path(ss[K.PROJECT_INPUT], base=ui.APP_DIR))
        except ProjectError as err:
            wanted, failed = None, str(err)
        if wanted is not None and f"{wanted}|{projects.store_url()}" != ss.get(K.PROJECT_KEY):
            try:
                projects.load_project(wanted)
                if ss.get(K.PROJECT_OK) not in (None, wanted):  # another project: what was typed for this one goes
                    for k in (K.EXPLORE_SEEDS, K.EXPLORE_LINKED, K.ASK_SEEDS):
                        ss.pop(k, None)
                    ss[K.ASK_EXPECT] = ss[K.EXPLORE_EXPECT] = ""  # set, not dropped: the boxes on screen empty too
                ss[K.PROJECT_OK], ss[K.PROJECT_KEY] = wanted, f"{wanted}|{projects.store_url()}"
                ss[K.RECENT] = with_recent(ss[K.RECENT], wanted)
                if home:
                    remember_project(wanted, home)
            except (ProjectError, UsageError) as err:  # UsageError: a store that cannot be read (StoreError)
                failed = str(err)
        cur = projects.project()
        # one message: the page says the same (projects.need_project) when the project open before cannot be read either
        if cur is None and ss.get(K.PROJECT_ERROR):
            st.error(projects.cannot_open())
        elif failed is not None:
            st.error(f"Cannot open this project: {V.md_text(projects.in_app_words(failed))}")
            if cur is not None:
                st.caption("Still using the previous project.")
        if cur is not None:
            info, graph = cur
            c = graph.counts
            where = (f"**{V.md_text(project_label(ss[K.PROJECT_OK]))}** · GraphRAG {info.version}" if info
                     else f"**{V.md_text(getattr(graph, 'name', ''))}** (store)")
            st.caption(f"{where} · {c['entities']} entities · "
                       f"{c['relationships']} relationships · {c['text_units']} text units")
            found = projects.problems(ss[K.PROJECT_OK])
            if found:
                with st.expander(f"{len(found)} note(s) on how this project was read"):
                    st.caption("What the loader found and worked around (the project files are not changed); "
                               "nothing to do unless a note names a fix.")
                    for p in found:
                        st.text(p)
        recent = [r for r in ss[K.RECENT] if r != ss.get(K.PROJECT_OK)]
        if recent:
            st.selectbox("Recent projects", recent, index=None, key=K.RECENT_PICK, on_change=_pick_recent,
                         placeholder="Switch to a recent project")

        if (was := ss.pop(_RESTORED_BASE, None)) is not None and ss.get(K.API_BASE) == was and typed_base_refused():
            ss[K.API_BASE] = ""  # a remembered base refused now (an allow-list changed) is not brought back
        st.subheader("Model")
        st.text_input("Model (LiteLLM string, `local` or `none`)", key=K.MODEL, placeholder="default: the project's",
                      max_chars=MODEL_MAX,
                      help="e.g. openai/gpt-4.1-mini, ollama/llama3.1. Empty: the project's model when its key is "
                           "set, else no LLM (the answer is composed from the chains). `local`: the packaged 135M "
                           "model, a demo that often repeats itself or invents facts.")
        if (bad_model := model_problem(ss[K.MODEL])) is not None:  # no client is built from it (session.run_spec)
            st.error(V.md_text(bad_model))
        st.text_input("API base", key=K.API_BASE, placeholder="provider default", max_chars=URL_MAX)
        st.text_input("API key", key=K.API_KEY, type="password", placeholder="from the environment",
                      max_chars=KEY_MAX, help="Kept in this browser session's memory only; never saved.")
        if (bad_base := typed_base_refused()) is not None:  # no request goes there: ensure() stops the page
            st.error(f"The API base typed here is not used: {V.md_text(bad_base)}.")
        elif bad_model is None and (bad_model := typed_model_refused()) is not None:  # nor for this: ensure() stops
            st.error(f"The model typed here is not used: {V.md_text(bad_model)}.")
        elif bad_model is None:
            st.caption(V.md_text(ui.model_note(ui.settings())))
        ui.warm_litellm()  # with a provider: LiteLLM's slow import starts now, not at the first question

        st.subheader("Search")
        a, b = st.columns(2)
        # no min/max on the widgets: the browser would refuse a number outside silently; checked here, and said
        (wlo, whi), (dlo, dhi) = NUMBER_LIMITS[K.WIDTH], NUMBER_LIMITS[K.DEPTH]
        outside = " A number outside the range is set to the nearest limit, and a note below says so."
        a.number_input(f"Width N ({wlo}–{whi})", step=1, key=K.WIDTH, on_change=_keep_within, args=(K.WIDTH,),
                       help=f"From {wlo} to {whi}: how many paths the search keeps at each step (the beam). Wider "
                            "finds more, slower." + outside)
        b.number_input(f"Depth D ({dlo}–{dhi})", step=1, key=K.DEPTH, on_change=_keep_within, args=(K.DEPTH,),
                       help=f"From {dlo} to {dhi}: the most hops a chain may take from the topic entities: 2 for “the "
                            "mentor of the founder of X”. Without an LLM the search tries each number up to this and "
                            "keeps one." + outside)
        for why in (ss.get(K.REFUSED) or {}).values():
            st.warning(why, icon=":material/block:")
        a.selectbox("Relation pruner", PRUNERS, key=K.REL_PRUNER,
                    help="What scores the relations leaving the frontier, to keep the best N (2N of a GraphRAG "
                         "project's relations without the LLM). auto: the LLM with a provider; without one, the "
                         "packaged embedder on a graph with relation types and BM25 on GraphRAG's free-text "
                         "relations. hybrid: BM25 and the embedder fused by rank")
        b.selectbox("Entity pruner", PRUNERS, key=K.ENT_PRUNER,
                    help="What scores the entities those relations reach, to keep the best N paths (same choices; "
                         "auto as for relations)")
        with st.expander("More"):
            if ui.model_kind() != "none":  # temperatures mean something only to a language model
                st.slider("Temperature (exploring)", 0.0, 1.0, step=0.1, key=K.T_EXPLORE,
                          help="The LLM's randomness while it scores relations and entities")
                st.slider("Temperature (reasoning)", 0.0, 1.0, step=0.1, key=K.T_REASON,
                          help="The LLM's randomness when it judges whether the chains answer and writes the answer")
            st.radio("Mode", MODES, key=K.MODE, horizontal=True,
                     help="; ".join(f"{name}: {note}" for name, note in MODE_NOTES.items()))
            st.multiselect("Departures from the paper to switch off", list(DEPARTURES), key=K.WITHOUT,
                           format_func=departure_words,
                           help="This app changes a few things from the Think-on-Graph paper; each one switched off "
                                "here does what the paper does instead.")
        # said now, not only after the next Ask
        if bad_model is None and bad_base is None and (why := settings_problem()) is not None:
            st.warning(f"These settings cannot run a search: {V.md_text(why)}")
        if home:  # kept for this person's next session (never the API key, nor a value the sidebar refused)
            remember_settings(ss, home, refused=[*(ss.get(K.REFUSED) or ()), *([K.API_BASE] if bad_base else [])])
        hold_tabs()  # a tab switch keeps the page where the person is (explorer/hold.py)


def _keep_within(key: str) -> None:
    """A width or depth typed outside its range: set to the nearest limit, and kept to be said under the fields."""
    ss = st.session_state
    value, why = within_limits(key, ss.get(key))
    ss[key] = value
    refused = ss.setdefault(K.REFUSED, {})
    if why:
        refused[key] = why
    else:
        refused.pop(key, None)


def settings_problem() -> str | None:
    """Why the sidebar's settings cannot run (a pruner or mode that needs a model it does not have, …), planned as
    a question would be but with no engine built; None when they can, or when no project is open."""
    from tog_core.compose import plan
    from tog_core.llm.factory import ModelChoiceError

    cur = projects.project()
    if cur is None:
        return None
    s = ui.settings()
    try:
        plan(run_spec(s, api_key=st.session_state.get(K.API_KEY) or None), cur[0], graph=cur[1])
    except (ModelChoiceError, UsageError, ValueError) as err:
        return str(err)
    return None


def departure_words(name: str) -> str:
    """A departure as a person reads it: what it does (its description), not its code name."""
    text = DEPARTURES[name][1] if name in DEPARTURES else name
    return text[:1].upper() + text[1:]
