"""`python -m tog_core bench kgqa DATA_DIR [...]`: the retrieval benchmark (library side in tog_core/bench)."""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from tog_core.cli.terminal import echo
from tog_core.errors import UsageError


def add_parser(sub: Any) -> None:
    from tog_core.bench.kgqa import READERS
    from tog_core.compose import DEPARTURES, MODE_NOTES, MODES

    b = sub.add_parser("bench", help="benchmarks that print tables")
    bsub = b.add_subparsers(dest="bench", required=True)
    k = bsub.add_parser("kgqa", help="retrieval benchmark on a KGQA split (e.g. MetaQA)")
    k.add_argument("data_dir", help="folder with entities.parquet, relationships.parquet, questions_<split>.jsonl")
    k.add_argument("--split", default="dev", help="reads questions_<split>.jsonl (default dev)")
    k.add_argument("--pruner", default=None,
                   help="auto | bm25 | embedding | random | llm (default auto, the same rule as `query`: llm with a "
                        "provider, the packaged embedder beside the local model; with no LLM the embedder on a typed "
                        "graph, bm25 on free-text relations)")
    k.add_argument("--entity-pruner", default=None, help="scorer of the entity stage (default: same as --pruner)")
    k.add_argument("--prefilter", default="bm25", help="cheap scorer that cuts hubs down (default bm25)")
    k.add_argument("--width", type=int, default=3, help="beam width N (default 3)")
    k.add_argument("--depth", type=int, default=None, help="search depth (default: each question's hops)")
    k.add_argument("--limit", type=int, default=None, help="first K questions, round-robin over hop levels")
    k.add_argument("--model", default=None, help="LiteLLM model string, 'local' or 'none' (default: none unless "
                   "an llm pruner is asked for; then the project's model when its key is set, as `query`)")
    k.add_argument("--api-base", default=None, help="API base URL for the model")
    k.add_argument("--seed", type=int, default=0, help="seed of the random pruner (default 0)")
    k.add_argument("--concurrency", type=int, default=None, help="questions in flight (default 1, 4 with an LLM)")
    k.add_argument("--mode", default="faithful", choices=list(MODES), help="engine mode (default faithful): " +
                   "; ".join(f"{name}: {note}" for name, note in MODE_NOTES.items()))
    k.add_argument("--questions", default=None,
                   help="a questions .jsonl file instead of DATA_DIR/questions_<split>.jsonl")
    k.add_argument("--baseline", default=None, help="also run this pruner (e.g. random) on the same questions "
                   "and print our beam recall over its")
    k.add_argument("--baseline-seeds", type=int, default=1, help="seeds of the baseline run, from --seed on; "
                   "its recall is their mean (default 1)")
    k.add_argument("--link", action="store_true", help="link topic entities from the question text as the app does "
                   "(instead of the given topic_entities); with --depth D the engine's own stop rule decides")
    k.add_argument("--store", default=None, metavar="URL", help="read the graph from this PostgreSQL store")
    k.add_argument("--name", default=None, help="the graph's name in the store (default: the folder's name)")
    k.add_argument("--paper", action="store_true", help="ToG as published: every departure from the paper off")
    k.add_argument("--without", action="append", default=[], choices=list(DEPARTURES), metavar="DEPARTURE",
                   help=f"switch one departure from the paper off (repeatable): {', '.join(DEPARTURES)}")
    k.add_argument("--reader", default=None, choices=list(READERS),
                   help="how each question is read: rules (the wording), llm (one call; needs --model) or gold (the "
                        "data set's own hops, answer type and relation path: the ceiling of a perfect reading; the "
                        "search runs exactly the question's hops). Default: as the app does (llm with a provider's "
                        "model outside the paper's run, else rules)")
    k.add_argument("--json", action="store_true", help="print only a JSON object")


def cmd(args: argparse.Namespace) -> int:
    if args.limit is not None and args.limit < 1:
        raise UsageError(f"--limit must be at least 1 (got {args.limit})")
    if args.concurrency is not None and args.concurrency < 1:
        raise UsageError(f"--concurrency must be at least 1 (got {args.concurrency})")
    if args.width < 1:
        raise UsageError(f"--width must be at least 1 (got {args.width})")
    if args.baseline_seeds < 1:
        raise UsageError(f"--baseline-seeds must be at least 1 (got {args.baseline_seeds})")
    from tog_core.bench.kgqa import KGQAConfig, run_kgqa
    from tog_core.bench.report import format_table

    cfg = KGQAConfig(data_dir=args.data_dir, split=args.split, pruner=args.pruner,
                     entity_pruner=args.entity_pruner, width=args.width,
                     depth=args.depth, limit=args.limit, model=args.model, api_base=args.api_base,
                     prefilter=args.prefilter, seed=args.seed, concurrency=args.concurrency, mode=args.mode,
                     questions=args.questions, baseline=args.baseline, baseline_seeds=args.baseline_seeds,
                     paper=args.paper, without=tuple(args.without), link=args.link, store=args.store,
                     name=args.name, reader=args.reader)
    say = (lambda t: echo(t, file=sys.stderr, flush=True)) if not args.json and sys.stderr.isatty() else \
        (lambda _t: None)
    result = run_kgqa(cfg, say=say)
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
    else:
        echo(format_table(result))
    return 0
