"""`python -m tog_core store import PROJECT --store URL [--name NAME]` and `store list --store URL`.

import: loads a GraphRAG project (any version the loader reads) into PostgreSQL with COPY under NAME (default:
the project folder's name); a graph of that name is replaced in one transaction. list: the graphs in a store.
--store defaults to $TOG_STORE. The URL's password never appears in output or errors.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from tog_core.cli.terminal import echo, safe
from tog_core.errors import UsageError


def add_parser(sub: Any) -> None:
    s = sub.add_parser("store", help="PostgreSQL graph store: import a project, list imported graphs")
    ss = s.add_subparsers(dest="store_command", required=True)
    imp = ss.add_parser("import", help="load a GraphRAG project into the store (replaces a graph of the same name)")
    imp.add_argument("project", help="GraphRAG root, its output folder, or a folder of parquet files")
    imp.add_argument("--store", default=None, metavar="URL",
                     help="postgresql://USER@HOST:PORT/DB (default: $TOG_STORE)")
    imp.add_argument("--name", default=None, help="name of the graph in the store (default: the project folder's name)")
    imp.add_argument("--json", action="store_true", help="print a JSON object only")
    ls = ss.add_parser("list", help="graphs in the store")
    ls.add_argument("--store", default=None, metavar="URL", help="postgresql://USER@HOST:PORT/DB (default: $TOG_STORE)")
    ls.add_argument("--json", action="store_true", help="print a JSON object only")


def store_url(given: str | None) -> str:
    url = given or os.environ.get("TOG_STORE", "")
    if not url.strip():
        raise UsageError("--store: no store URL — pass --store postgresql://USER@HOST:PORT/DB or set TOG_STORE")
    return url


def _record_dict(r: Any) -> dict[str, Any]:
    return {"name": r.name, "schema": r.schema, "imported_at": r.imported_at, "source": r.source,
            "version": r.version, "entities": r.n_entities, "relationships": r.n_relationships,
            "trigram_search": r.trigram}


def cmd(args: argparse.Namespace) -> int:
    from tog_core.graphrag.pg_common import connect, list_records, redact

    url = store_url(args.store)
    if args.store_command == "list":
        with connect(url) as conn:
            graphs = [_record_dict(r) for r in list_records(conn)]
        if args.json:
            print(json.dumps({"store": redact(url), "graphs": graphs}, ensure_ascii=False))
        else:
            for g in graphs:
                echo(f"{safe(g['name'], one_line=True):<24} {g['entities']:>9} entities {g['relationships']:>10} "
                     f"relationships  GraphRAG {safe(g['version'], one_line=True)}  imported {g['imported_at'][:19]} "
                     f"from {safe(g['source'], one_line=True)}")
            if not graphs:
                echo(f"no graphs in {redact(url)}", file=sys.stderr)
        return 0
    from tog_core.graphrag.pg_import import import_graph

    res = import_graph(url, args.project, name=args.name)
    out = {**_record_dict(res.record), "store": redact(url), "replaced": res.replaced,
           "seconds": {"load": round(res.load_s, 3), "copy": round(res.copy_s, 3), "index": round(res.index_s, 3),
                       "total": round(res.total_s, 3)}}
    if args.json:
        print(json.dumps(out, ensure_ascii=False))
    else:
        echo(f"{'replaced' if res.replaced else 'imported'} graph {out['name']!r} in {out['store']}: "
             f"{out['entities']} entities, {out['relationships']} relationships "
             f"in {res.total_s:.2f} s (load {res.load_s:.2f}, COPY {res.copy_s:.2f}, indexes {res.index_s:.2f})")
    return 0
