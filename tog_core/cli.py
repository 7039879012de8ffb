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
        "problems": list(g.problems) + g.audit(),
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


def _progress(enabled: bool) -> Callable[[str], None]:
    def say(text: str) -> None:
        if enabled:
            print(text, file=sys.stderr, flush=True)
    return say


def run_query(project: str, question: str, *, model: str | None = None, api_base: str | None = None,
              width: int = 3, depth: int = 3, pruner: str | None = None, entity_pruner: str | None = None,
              seeds: list[str] | None = None, mode: str = "faithful", save: bool = True,
              resume: str | None = None, say: Callable[[str], None] = lambda _t: None,
              on_token: Callable[[str], None] | None = None) -> Any:
    """One ToG run as the CLI does it; returns the Trace. Also used by benchmarks and tests."""
    import asyncio
    import time

    from .engine import ToGEngine
    from .graph import KnowledgeGraph
    from .models import ModelChoiceError, build_embedder, build_llm, choose_model, engine_options, resolve_pruners
    from .project import open_project
    from .runs import RunStore, new_run_id
    from .state import Callbacks, EngineConfig

    info = open_project(project)
    graph = KnowledgeGraph.load(info)
    choice = choose_model(model, info, api_base=api_base)
    try:
        rel_pruner, ent_pruner = resolve_pruners(pruner, entity_pruner, choice.kind)
    except ValueError as err:
        raise UsageError(str(err)) from None
    say(f"model: {choice.model}" + (f" ({choice.note})" if choice.note else ""))
    try:
        llm, choice = build_llm(choice)
    except ModelChoiceError as err:
        raise UsageError(str(err)) from None
    embedder = build_embedder(info) if "embedding" in (rel_pruner, ent_pruner) else None
    try:
        config = EngineConfig(width=width, depth=depth, relation_pruner=rel_pruner, entity_pruner=ent_pruner,
                              model=choice.model, mode=mode, **engine_options(choice.kind))
    except ValueError as err:
        raise UsageError(str(err)) from None
    engine = ToGEngine(graph, llm=llm, embedder=embedder, config=config, project=str(info.path))
    store = RunStore() if save or resume else None
    run_id = resume or new_run_id()
    t0 = time.perf_counter()
    state = None
    if resume:
        assert store is not None
        state = engine.restore(store.load(resume))

    def save_state(st: Any) -> None:
        if store is not None:
            store.save(engine.trace(st, run_id=run_id, wall_s=time.perf_counter() - t0,
                                    model_info=choice.public_dict()))

    def on_step(step: Any) -> None:
        say(f"depth {step.depth} {step.stage}: {len(step.candidates)} candidates, {step.llm_calls} LLM calls"
            + (f", fallbacks: {', '.join(f['name'] for f in step.fallbacks)}" if step.fallbacks else ""))

    cb = Callbacks(on_step=on_step, on_state=save_state, on_token=on_token or (lambda _t: None))
    try:
        seeds_arg = seeds or None
        state = asyncio.run(engine.run(question, seeds=seeds_arg, callbacks=cb, state=state))
    except ValueError as err:
        raise UsageError(str(err)) from None
    return engine.trace(state, run_id=run_id, wall_s=time.perf_counter() - t0, model_info=choice.public_dict())


def _print_trace(t: Any) -> None:
    print(t.answer.strip())
    print()
    if t.chains:
        print("Chains:")
        for k, chain in enumerate(t.chains, 1):
            parts = [chain[0].source] + [f"--[{link.relation[:80]}]--> {link.target}" for link in chain]
            print(f"  [{k}] " + " ".join(parts))
    s = t.stats
    cost = "unknown" if s.get("cost_usd") is None else f"${s['cost_usd']:.4f}"
    print(f"\nstop: {t.stop_reason}; {s['llm_calls']} LLM calls in {s['llm_rounds']} rounds, "
          f"{s['prompt_tokens']}+{s['completion_tokens']} tokens, cost {cost}, {s['wall_s']:.1f} s; run {t.run_id}")


def cmd_query(args: argparse.Namespace) -> int:
    say = _progress(not args.json and sys.stderr.isatty())
    trace = run_query(args.project, args.question, model=args.model, api_base=args.api_base, width=args.width,
                      depth=args.depth, pruner=args.pruner, entity_pruner=args.entity_pruner, seeds=args.seed,
                      mode=args.mode, save=not args.no_save, resume=args.resume, say=say)
    if args.out:
        from .runs import atomic_write_text
        from pathlib import Path

        atomic_write_text(Path(args.out), trace.to_json(indent=1))
    if args.json:
        print(trace.to_json())
    else:
        _print_trace(trace)
    return 0 if trace.stop_reason != "error" else 1


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {"inspect": cmd_inspect, "query": cmd_query}


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m tog_core", description="Think-on-Graph over GraphRAG projects")
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("inspect", help="version, table counts and problems of a GraphRAG project")
    s.add_argument("project", help="GraphRAG root, its output folder, or a folder of parquet files")
    s.add_argument("--json", action="store_true", help="print a JSON object only")
    q = sub.add_parser("query", help="answer a question with Think-on-Graph")
    q.add_argument("project", help="GraphRAG root, its output folder, or a folder of parquet files")
    q.add_argument("question")
    q.add_argument("--width", type=int, default=3, help="beam width N (default 3)")
    q.add_argument("--depth", type=int, default=3, help="maximum depth D (default 3)")
    q.add_argument("--pruner", default=None, help="auto | llm | bm25 | embedding | random (auto: llm with a provider, embedding beside the local model, bm25 without a model)")
    q.add_argument("--entity-pruner", default=None, help="scorer of the entity stage (default: same as --pruner)")
    q.add_argument("--model", default=None, help="LiteLLM model string, 'local' or 'none' (default: the project's, else local)")
    q.add_argument("--api-base", default=None, help="API base URL for the model (e.g. a LiteLLM proxy or Ollama)")
    q.add_argument("--seed", action="append", default=[], metavar="TITLE", help="topic entity (repeatable)")
    q.add_argument("--mode", default="faithful", choices=["faithful", "fast"])
    q.add_argument("--json", action="store_true", help="print the trace JSON only")
    q.add_argument("--out", default=None, help="also write the trace JSON to this file")
    q.add_argument("--no-save", action="store_true", help="don't keep the run in the run store")
    q.add_argument("--resume", default=None, metavar="RUN_ID", help="continue a saved run from its last step")
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
