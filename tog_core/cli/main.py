"""`python -m tog_core ...` — the stable command line of DESIGN.md.

Errors: one line on stderr naming the problem and the fix; exit code 2 for bad input, 1 otherwise. Human-readable
output is made terminal-safe (cli/terminal: control and bidi characters from graph data shown as escapes).
With --json, stdout carries the JSON object and nothing else. Each sub-command lives in its own module
(inspect, query, bench, export, store, warm) and imports what it needs only when it runs.
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from tog_core.cli import bench, export, inspect, query, store, warm
from tog_core.cli.terminal import echo, safe
from tog_core.errors import UsageError
from tog_core.graphrag.project import ProjectError

SUBCOMMANDS = {"inspect": inspect, "query": query, "bench": bench, "export": export, "store": store,
               "warm": warm}
COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {name: mod.cmd for name, mod in SUBCOMMANDS.items()}


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m tog_core", description="Think-on-Graph over GraphRAG projects")
    sub = p.add_subparsers(dest="command", required=True)
    for mod in SUBCOMMANDS.values():
        mod.add_parser(sub)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return int(exit_.code or 0)
    try:
        return COMMANDS[args.command](args)
    except (ProjectError, UsageError) as err:
        echo(f"error: {safe(err, one_line=True)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 1
    except Exception as err:  # last resort: one line, no traceback, exit 1
        echo(f"error: {err.__class__.__name__}: {safe(err, one_line=True)}", file=sys.stderr)
        return 1
