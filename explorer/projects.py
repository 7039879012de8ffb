"""The open project: its graph loaded and cached per version, what loading found wrong, example questions, and
the page's "open a project first".

The graph is `st.cache_resource` (shared read-only across sessions), keyed by the project's path, the store and a
fingerprint of its tables (or of the store's generation), so a re-indexed or re-imported project is loaded anew on
the next rerun of any session and the older version dropped (its store connections closed). explorer/ui.py builds
engines on it; explorer/shell.py's sidebar opens it.
"""
from __future__ import annotations

import asyncio
import os
import threading
import weakref
from pathlib import Path
from typing import Any
from collections.abc import Callable

import streamlit as st

from tog_core.app import views as V
from tog_core.app.guide import Example
from tog_core.app.session import K, check_project_root
from tog_core.graphrag.store import GraphStore
from tog_core.errors import UsageError
from tog_core.graphrag.project import ProjectError, ProjectInfo, open_project


def fingerprint(resolved_path: str, store_url: str = "") -> str:
    """What changes when the project's graph changes: the tables' sizes and modification times and their
    folders' (a re-index, a table added or removed), or the store's generation of the graph (a re-import). Part of
    the graph cache's key. Raises ProjectError when the tables cannot be found any more."""
    if store_url:
        from tog_core.graphrag.pg_common import graph_generation, graph_name

        info = _info(resolved_path) if Path(resolved_path).is_dir() else None
        return f"store:{graph_generation(store_url, graph_name(resolved_path, info))}"
    for _ in range(2):
        tables = sorted(_info(resolved_path).tables.values())
        try:
            folders = sorted({p.parent for p in tables})
            return "|".join([f"{d}:{d.stat().st_mtime_ns}" for d in folders]
                            + [f"{p.name}:{p.stat().st_size}:{p.stat().st_mtime_ns}" for p in tables])
        except OSError:  # a table went away (a re-index in progress, or another layout): look for them again
            _info.clear(resolved_path)
    raise ProjectError(f"{resolved_path}: its tables changed while being read — try again when the indexing is "
                       "finished")


@st.cache_resource(max_entries=8, show_spinner=False)
def _info(resolved_path: str) -> ProjectInfo:
    """Where a project's tables are (read once per path: settings and parquet schemas take ~10 ms, and the
    fingerprint is asked for on every rerun; cleared when the tables' folder changes)."""
    return open_project(resolved_path)


def store_url() -> str:
    """The PostgreSQL store the app reads graphs from and saves runs to: the sidebar's field when it may be used
    (typed_store_refused), else TOG_STORE."""
    typed = str(st.session_state.get(K.STORE) or "").strip()
    if typed and typed_store_refused() is None:
        return typed
    return os.environ.get("TOG_STORE", "").strip()


def typed_store_refused() -> str | None:
    """Why the store typed in the sidebar is not used (a shared app connects only to the stores its operator named:
    pg_common.typed_store_refusal), or None."""
    from explorer.shell import single_user
    from tog_core.graphrag.pg_common import typed_store_refusal

    typed = str(st.session_state.get(K.STORE) or "").strip()
    return typed_store_refusal(typed, single_user=single_user()) if typed else None


@st.cache_resource(show_spinner="Loading the knowledge graph…", max_entries=4)
def _load(resolved_path: str, url: str, fingerprint: str) -> tuple[ProjectInfo | None, GraphStore]:
    """The graph of one version of a project: `fingerprint` is part of the cache key (no leading underscore, which
    would leave it out), so a re-indexed or re-imported graph is a new entry."""
    from tog_core.graphrag.open import open_graph

    info, graph = open_graph(resolved_path, store=url or None)
    _warm_project(graph)
    return info, graph


def _warm_project(graph: GraphStore) -> None:
    """In the background, so the first questions do not wait for them: read every entity description into the answer
    ranking's index (policy/retrieval.py), then embed what the second search reads at each entity into e5's cache
    (policy/prewarm.warm_project: without it a question the project has not met waits seconds for e5; TOG_WARM=0
    leaves it out)."""
    from tog_core.llm.embed import in_background
    from tog_core.policy import prewarm, retrieval

    def build() -> None:
        try:
            retrieval.index_of(graph)
            if os.environ.get("TOG_WARM", "1").strip() != "0":  # TOG_WARM=0: no e5 warm (docs/operations.md)
                with in_background():  # a question's embedding goes first
                    asyncio.run(prewarm.warm_project(graph))
        except Exception:  # noqa: BLE001  — a question does the same work itself, and its error is the run's
            pass

    threading.Thread(target=build, name="tog-warm-project", daemon=True).start()


_LATEST: dict[tuple[str, str], str] = {}  # (path, store) -> the fingerprint last loaded, shared by every session
_LATEST_LOCK = threading.Lock()


def _evict(resolved_path: str, url: str, fp: str) -> None:
    """Drop the cached graph of an older version of a project, closing a store's connections (its schema is gone
    after a re-import; a session still holding it gets the store's "re-imported … open it again")."""
    with _LATEST_LOCK:
        old = _LATEST.get((resolved_path, url))
        _LATEST[(resolved_path, url)] = fp
    if old is None or old == fp:
        return
    stale = _OPEN.pop((resolved_path, url, old), None)
    _load.clear(resolved_path, url, old)
    _info.clear(resolved_path)
    _problems.clear(resolved_path, old, None)
    graph = stale() if stale is not None else None
    if graph is not None and hasattr(graph, "close"):
        graph.close()


_OPEN: dict[tuple[str, str, str], Callable[[], Any]] = {}  # weak references to the graphs _load made


def load_project(resolved_path: str) -> tuple[ProjectInfo | None, GraphStore]:
    """The graph, cached per (path, store, content fingerprint): a re-indexed or re-imported project is loaded
    anew on the next rerun of any session, and the older version dropped. Raises ProjectError or UsageError
    (shown in plain words by the caller), also for a path outside TOG_PROJECT_ROOTS."""
    check_project_root(resolved_path)
    url = store_url()
    try:
        fp = fingerprint(resolved_path, url)
        _evict(resolved_path, url, fp)
        info, graph = _load(resolved_path, url, fp)
    except OSError as err:  # a name too long, a folder the server may not read: said as the project's problem
        raise ProjectError(f"cannot be read ({err.strerror or err})", path=resolved_path,
                           fix="check the path, and that the server may read the folder") from err
    if (resolved_path, url, fp) not in _OPEN:
        try:
            _OPEN[(resolved_path, url, fp)] = weakref.ref(graph)
        except TypeError:  # a graph class without weak references: nothing to close later
            _OPEN[(resolved_path, url, fp)] = lambda: None
    return info, graph


def problems(resolved_path: str) -> list[str]:
    """What loading found wrong (placeholders, duplicates, bad settings …), in plain words."""
    _, graph = load_project(resolved_path)
    return _problems(resolved_path, _LATEST.get((resolved_path, store_url()), ""), graph)


@st.cache_data(max_entries=8, show_spinner=False)
def _problems(resolved_path: str, fp: str, _graph: Any) -> list[str]:  # problems, audit(): not in GraphStore
    return list(_graph.problems) + _graph.audit()


def project() -> tuple[ProjectInfo | None, GraphStore] | None:
    """The current project (the last one that loaded), or None; why it cannot be read now is kept in the session
    (K.PROJECT_ERROR) for the sidebar and `need_project` to say."""
    ss = st.session_state
    path = ss.get(K.PROJECT_OK)
    if not path:
        return None
    try:
        cur = load_project(path)
    except (ProjectError, UsageError) as err:  # moved, deleted, or a store that cannot be read
        ss[K.PROJECT_ERROR] = str(err)
        return None
    ss.pop(K.PROJECT_ERROR, None)
    return cur


def version(resolved_path: str) -> tuple[str, str, str]:
    """What names the version of a project the app reads now: its path, the store it is read from and the
    fingerprint last loaded. Pictures drawn from the graph are cached under it (render/cache.PICTURES is shared by
    every session), so a project re-indexed in place, or the same path read from another store, is drawn anew."""
    url = store_url()
    return resolved_path, url, _LATEST.get((resolved_path, url), "")


def examples(resolved_path: str) -> list[Example]:
    """Example questions made from the current project's graph (tog_core.app.guide), computed once per version."""
    _, graph = load_project(resolved_path)
    return _examples(resolved_path, _LATEST.get((resolved_path, store_url()), ""), graph)


@st.cache_data(max_entries=8, show_spinner=False)
def _examples(resolved_path: str, fp: str, _graph: GraphStore) -> list[Example]:
    from tog_core.app.guide import example_questions

    return example_questions(_graph)


def cannot_open() -> str:
    """Why the project cannot be used, said the same way in the sidebar and on the page."""
    return f"Cannot open this project: {V.md_text(in_app_words(str(st.session_state.get(K.PROJECT_ERROR))))}"


def in_app_words(message: str) -> str:
    """A store's error as the app says it: the command line's flag (`--store …`) named as the sidebar's field."""
    return message.replace("--store ", "the PostgreSQL store ", 1).replace("--store: ", "the PostgreSQL store: ", 1)


def need_project() -> tuple[ProjectInfo | None, GraphStore]:
    cur = project()
    if cur is None:
        why = st.session_state.get(K.PROJECT_ERROR)
        if why:
            st.error(cannot_open())
        else:
            st.info("Open a GraphRAG project in the sidebar to start.")
        st.stop()
    return cur
