"""open_graph: the one call the front doors (CLI, bench, app) make to get a project's graph.

Without a store URL: the project folder, loaded into the in-memory KnowledgeGraph. With one: the graph
imported into PostgreSQL under `name` (default: pg_common.graph_name — the project folder's name when PROJECT
is a folder here, else PROJECT itself), with the folder's ProjectInfo when it exists locally (model settings,
embeddings), else None: a deployment can serve a graph that lives only in the database.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from tog_core.graphrag.graph import KnowledgeGraph
from tog_core.graphrag.pg_common import graph_name
from tog_core.graphrag.store import GraphStore
from tog_core.graphrag.project import ProjectInfo, open_project


def open_graph(project: str, *, store: str | None = None, name: str | None = None,
               **store_options: Any) -> tuple[ProjectInfo | None, GraphStore]:
    """(ProjectInfo or None, the graph). Raises ProjectError for a bad folder, StoreError for a bad URL or a
    graph that was never imported (the message says the `store import` command to run)."""
    if not store:
        info = open_project(project)
        return info, KnowledgeGraph.load(info)
    from tog_core.graphrag.postgres import PgGraphStore

    local = open_project(project) if Path(str(project)).expanduser().is_dir() else None
    return local, PgGraphStore(store, graph_name(project, local, name), info=local, **store_options)
