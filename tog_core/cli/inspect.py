"""`python -m tog_core inspect PROJECT [--json] [--store URL [--name NAME]]`: version, table counts, model
settings (key masked), problems. With --store, the counts and problems are those of the graph imported into
PostgreSQL (PROJECT names it: a project folder, or the graph's name when there is no folder here).

Imports neither litellm nor streamlit: it reads parquet and settings only, so it starts fast.
"""
from __future__ import annotations

import argparse
import json
from typing import Any

from tog_core.cli.terminal import echo, safe


def add_parser(sub: Any) -> None:
    s = sub.add_parser("inspect", help="version, table counts and problems of a GraphRAG project")
    s.add_argument("project", help="GraphRAG root, its output folder, or a folder of parquet files")
    s.add_argument("--json", action="store_true", help="print a JSON object only")
    s.add_argument("--store", default=None, metavar="URL", help="read the graph imported into this PostgreSQL store")
    s.add_argument("--name", default=None, help="the graph's name in the store (default: the project folder's name)")


def inspect_store(path: str, url: str, name: str | None = None) -> dict[str, Any]:
    """What inspect shows for a graph in a store: the catalog's record, plus the folder's settings if it is here."""
    from pathlib import Path

    from tog_core.graphrag.pg_common import connect, graph_name, redact, require_record
    from tog_core.graphrag.project import open_project

    info = open_project(path) if Path(path).expanduser().is_dir() else None
    gname = graph_name(path, info, name)
    with connect(url) as conn:
        rec = require_record(conn, gname, url)
    return {
        "project": rec.source, "root": str(info.root) if info and info.root else None,
        "output_dir": str(Path(next(iter(rec.tables.values()))).parent) if rec.tables else rec.source,
        "version": rec.version, "family": rec.family, "entity_name_column": rec.entity_name_column,
        "tables": dict(rec.tables), "counts": dict(rec.counts),
        "settings_file": str(info.settings_file) if info and info.settings_file else None,
        "chat_model": info.chat_model.public_dict() if info and info.chat_model else None,
        "embedding_model": info.embedding_model.public_dict() if info and info.embedding_model else None,
        "lancedb_entity_table": str(info.lancedb_entity_table) if info and info.lancedb_entity_table else None,
        "problems": list(rec.problems) + list(rec.audit),
        "store": {"url": redact(url), "graph": rec.name, "schema": rec.schema, "imported_at": rec.imported_at,
                  "trigram_search": rec.trigram},
    }


def inspect_project(path: str, *, store: str | None = None, name: str | None = None) -> dict[str, Any]:
    from tog_core.graphrag.graph import KnowledgeGraph
    from tog_core.graphrag.project import open_project

    if store:
        return inspect_store(path, store, name)
    info = open_project(path)
    g = KnowledgeGraph.load(info)
    return {
        "project": str(info.path),
        "root": str(info.root) if info.root else None,
        "output_dir": str(info.output_dir),
        "version": info.version,
        "family": info.family,
        "entity_name_column": info.entity_name_column,
        "tables": {k: str(v) for k, v in info.tables.items()},
        "counts": g.counts,
        "settings_file": str(info.settings_file) if info.settings_file else None,
        "chat_model": info.chat_model.public_dict() if info.chat_model else None,
        "embedding_model": info.embedding_model.public_dict() if info.embedding_model else None,
        "lancedb_entity_table": str(info.lancedb_entity_table) if info.lancedb_entity_table else None,
        "problems": list(g.problems) + g.audit(),
    }


def _print_inspect(r: dict[str, Any]) -> None:
    echo(f"project   {r['project']}")
    echo(f"version   GraphRAG {r['version']} ({r['family']} table names, "
          f"entity name column '{r['entity_name_column']}')")
    echo(f"tables    {r['output_dir']}")
    if r.get("store"):
        st = r["store"]
        echo(f"store     graph '{st['graph']}' in {st['url']} "
              f"(imported {st['imported_at'][:19]})")
    c = r["counts"]
    echo(f"counts    {c['entities']} entities (+{c['placeholder_entities']} placeholders), "
          f"{c['relationships']} relationships ({c['reversed_duplicates']} reversed duplicates), "
          f"{c['text_units']} text units")
    for kind in ("chat_model", "embedding_model"):
        m = r[kind]
        if m:
            base = f" at {m['api_base']}" if m["api_base"] else ""
            echo(f"{kind.split('_')[0]:<9} {m['model']}{base}; key {m['api_key']}"
                  + (f" (${m['api_key_env']})" if m["api_key_env"] else ""))
    if r["settings_file"] is None:
        echo("settings  none found (model chosen at query time)")
    if r["problems"]:
        echo("problems:")
        for p in r["problems"]:
            echo(f"  - {safe(p, one_line=True)}")


def cmd(args: argparse.Namespace) -> int:
    result = inspect_project(args.project, store=args.store, name=args.name)
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
    else:
        _print_inspect(result)
    return 0
