"""How many hops? What the LLM-free search loses by choosing the number of hops itself, per GraphRAG dev set.

    python bench/hop_study.py [--pruners bm25 embedding] [--sets cc cc2 dulce demo fr zh] [--json]

Every question is run from its linked topic entities (as the app does) five ways: as the app runs it (a maximum
depth of 3, the engine choosing the number of hops: `CheapPolicy.try_depths`), at exactly 1, 2 and 3 hops for
every question, and at exactly the question's own number of hops. Chain Hits@1 of each, and of the best of the
three exact depths per question (an oracle that knows which depth is right): the gap between "app" and "own
hops" is what a better hop count could gain; the gap between "own hops" and "best of 1-3" is what a wrong gold
depth or a shortcut in the graph gives away. Dev sets only: the held-out Christmas Carol split is never run here.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from dev_sets import DEV, GRAPHRAG_DEV  # first: makes tog_core importable, LiteLLM offline

from tog_core.bench.kgqa import KGQAConfig, load_questions_file, run_kgqa  # noqa: E402
from tog_core.graphrag.open import open_graph  # noqa: E402

SETS = {n: DEV[n] for n in GRAPHRAG_DEV}  # name -> (graph, dev questions)
MAX_DEPTH = 3


def exactly(k: int) -> str:
    return f"{k} hop{'s' if k > 1 else ''}"


def hits(cfg: KGQAConfig, loaded: tuple) -> dict[str, bool]:
    return {q["id"]: q["chain_hit"] for q in run_kgqa(cfg, _loaded=loaded)["questions"]}


def study(name: str, pruner: str) -> dict[str, float | int]:
    graph_dir, qfile = SETS[name]
    loaded = open_graph(str(graph_dir))
    questions = load_questions_file(qfile)
    base = {"data_dir": str(graph_dir), "pruner": pruner, "link": True}
    runs = {"app": hits(KGQAConfig(**base, questions=str(qfile), depth=MAX_DEPTH), loaded),
            "own hops": hits(KGQAConfig(**base, questions=str(qfile)), loaded)}
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(1, MAX_DEPTH + 1):  # the questions with their hops set to k: each runs at exactly k hops
            f = Path(tmp) / f"k{k}.jsonl"
            f.write_text("".join(json.dumps({**q, "hops": k}) + "\n" for q in questions))
            runs[exactly(k)] = hits(KGQAConfig(**base, questions=str(f)), loaded)
    ids = [q["id"] for q in questions]
    runs["best of 1-3"] = {i: any(runs[exactly(k)][i] for k in range(1, MAX_DEPTH + 1)) for i in ids}
    getattr(loaded[1], "close", lambda: None)()
    return {"n": len(ids), **{k: round(sum(v[i] for i in ids) / len(ids), 3) for k, v in runs.items()}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pruners", nargs="+", default=["bm25", "embedding"])
    ap.add_argument("--sets", nargs="+", default=list(SETS), choices=list(SETS))
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    missing = [n for n in args.sets if not SETS[n][0].exists()]
    if missing:
        print(f"no graph for {', '.join(missing)} (../shared/data missing?); run with --sets of the others",
              file=sys.stderr)
        return 2
    table = {p: {n: study(n, p) for n in args.sets} for p in args.pruners}
    if args.json:
        print(json.dumps(table))
        return 0
    cols = ["n", "app", *(exactly(k) for k in range(1, MAX_DEPTH + 1)), "own hops", "best of 1-3"]
    for p, rows in table.items():
        print(f"pruner {p}: linked seeds, chain Hits@1")
        print(f"{'set':8s}" + "".join(f"{c:>13s}" for c in cols))
        for n, r in rows.items():
            print(f"{n:8s}" + "".join(f"{r[c]:>13}" for c in cols))
        total = sum(r["n"] for r in rows.values())
        print(f"{'all':8s}{total:>13}" + "".join(
            f"{round(sum(r[c] * r['n'] for r in rows.values()) / total, 3):>13}" for c in cols[1:]))
        print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
