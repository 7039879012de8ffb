"""`python -m tog_core ...` — the stable command line of DESIGN.md.

Errors: one line on stderr naming the problem and the fix; exit code 2 for bad input, 1 otherwise.
With --json, stdout carries the JSON object and nothing else.
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Callable, Sequence

from .project import ProjectError


class UsageError(Exception):
    """Bad input on the command line (exit 2)."""


def inspect_project(path: str) -> dict[str, Any]:
    from .graph import KnowledgeGraph
    from .project import open_project

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
        "problems": list(g.problems),
    }


def _print_inspect(r: dict[str, Any]) -> None:
    print(f"project   {r['project']}")
    print(f"version   GraphRAG {r['version']} ({r['family']} table names, entity name column '{r['entity_name_column']}')")
    print(f"tables    {r['output_dir']}")
    c = r["counts"]
    print(f"counts    {c['entities']} entities (+{c['placeholder_entities']} placeholders), "
          f"{c['relationships']} relationships ({c['reversed_duplicates']} reversed duplicates), "
          f"{c['text_units']} text units")
    for kind in ("chat_model", "embedding_model"):
        m = r[kind]
        if m:
            base = f" at {m['api_base']}" if m["api_base"] else ""
            print(f"{kind.split('_')[0]:<9} {m['model']}{base}; key {m['api_key']}"
                  + (f" (${m['api_key_env']})" if m["api_key_env"] else ""))
    if r["settings_file"] is None:
        print("settings  none found (model chosen at query time)")
    if r["problems"]:
        print("problems:")
        for p in r["problems"]:
            print(f"  - {p}")


def cmd_inspect(args: argparse.Namespace) -> int:
    result = inspect_project(args.project)
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
    else:
        _print_inspect(result)
    return 0


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {"inspect": cmd_inspect}


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m tog_core", description="Think-on-Graph over GraphRAG projects")
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("inspect", help="version, table counts and problems of a GraphRAG project")
    s.add_argument("project", help="GraphRAG root, its output folder, or a folder of parquet files")
    s.add_argument("--json", action="store_true", help="print a JSON object only")
    for register in EXTRA_PARSERS:
        register(sub)
    return p


# other modules add their sub-commands here (query, bench, export) without this file importing them eagerly
EXTRA_PARSERS: list[Callable[[Any], None]] = []


def main(argv: Sequence[str] | None = None) -> int:
    from . import cli_commands  # noqa: F401  registers query/bench/export when present

    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return int(exit_.code or 0)
    try:
        return COMMANDS[args.command](args)
    except (ProjectError, UsageError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 1
    except Exception as err:  # last resort: one line, no traceback, exit 1
        print(f"error: {err.__class__.__name__}: {err}", file=sys.stderr)
        return 1
