"""Should a reader's number of hops be the search's (State.hops), or only the reading's (the planned depth)?

    python bench/reading_hops.py [--sets cc cc2 dulce demo fr zh metaqa pq3 pql3 …] [--limit N] [--json]

The reading mode's LLM reader says how many hops a question chains. Given as State.hops (not firm) the search runs
that deep and stops there, and on a GraphRAG graph the LLM-free search no longer tries each number of hops
(policy/depths.py: settle). Whether that pays depends on how often the reader is right, which needs a real model to
measure; this script measures everything else, LLM-free, from the linked topic entities at a maximum depth of 3
(the default configuration):

* "as now": the number of hops as the search settles it today (tried on GraphRAG graphs; the reading's on typed
  ones), from the rule reading;
* "k hops": State.hops = k for every question (k = 1, 2, 3), the rest of the rule reading unchanged;
* "right k": State.hops = the question's own hops (a reader that is always right);
* "right, read": the question's own hops in the reading only (State.hops unset: the planned depth on a typed
  graph; on a GraphRAG graph the hops are still tried, so this is "as now" there);
* "rules' k": State.hops = the rule reader's hops (a reader as right as the wording rules, whose accuracy is shown).

"break-even" is the hop accuracy p a reader needs for p x right + (1 - p) x wrong (wrong: the mean over the other
two numbers of hops) to match "as now". Chain Hits@1 throughout.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

import dev_sets  # noqa: F401  (the repository on sys.path, LiteLLM kept offline)

from dataclasses import replace  # noqa: E402

from tog_core.bench.kgqa import load_questions_file, select  # noqa: E402
from tog_core.compose import RunSpec, build_engine  # noqa: E402
from tog_core.graphrag.open import open_graph  # noqa: E402
from tog_core.policy import depths  # noqa: E402

SETS = {n: dev_sets.DEV[n] for n in (*dev_sets.GRAPHRAG_DEV, "metaqa", "pq3", "pql3")}
DEPTH = 3


async def one(engine: Any, q: dict[str, Any]) -> dict[str, Any]:
    """Chain Hits@1 of one question as now and at State.hops = 1..DEPTH, from one linking."""
    linked = await engine.start_async(q["question"])
    gold = set(q["answers"])

    async def hit(state: Any) -> bool:
        done = await depths.run(engine, q["question"], state=state)
        ranked = engine.answer_candidates(done)
        return bool(ranked) and engine.graph.title(ranked[0].entity) in gold

    out = {"own": int(q["hops"]), "rules": linked.reading.hops if linked.reading else 1, "now": await hit(linked)}
    if linked.reading is not None:
        out["read"] = await hit(linked.with_(reading=replace(linked.reading, hops=out["own"])))
    for k in range(1, DEPTH + 1):
        out[k] = await hit(linked.with_(hops=k)) if linked.paths else False
    return out


def study(name: str, limit: int | None) -> dict[str, Any]:
    graph_dir, qfile = SETS[name]
    info, graph = open_graph(str(graph_dir))
    engine = build_engine(RunSpec(model="none", depth=DEPTH), graph=graph, info=info).engine
    questions = select([q for q in load_questions_file(qfile) if 1 <= int(q.get("hops", 1)) <= DEPTH], limit)
    rows = [asyncio.run(one(engine, q)) for q in questions]
    n = len(rows)

    def mean(xs: list[bool]) -> float:
        return round(sum(xs) / max(1, len(xs)), 3)

    right = mean([r[r["own"]] for r in rows])
    wrong = mean([sum(r[k] for k in range(1, DEPTH + 1) if k != r["own"]) / (DEPTH - 1) for r in rows])
    now = mean([r["now"] for r in rows])
    even = (now - wrong) / (right - wrong) if right > wrong else None
    return {"set": name, "n": n, "now": now, **{f"{k} hops": mean([r[k] for r in rows]) for k in range(1, DEPTH + 1)},
            "right k": right, "right, read": mean([r.get("read", False) for r in rows]),
            "rules' k": mean([r[min(DEPTH, r["rules"])] for r in rows]),
            "rules right": mean([min(DEPTH, r["rules"]) == r["own"] for r in rows]), "wrong k": wrong,
            "break-even": None if even is None else round(even, 2)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", nargs="+", default=["cc", "cc2", "dulce", "demo", "fr", "zh"], choices=list(SETS))
    ap.add_argument("--limit", type=int, default=None, help="N questions of each set, round-robin over hop levels")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    rows = []
    for name in args.sets:
        rows.append(study(name, args.limit))
        if not args.json:
            print(f"{name} done", file=sys.stderr)
    if args.json:
        print(json.dumps(rows))
        return 0
    cols = ["n", "now", "1 hops", "2 hops", "3 hops", "right k", "right, read", "rules' k", "rules right",
            "break-even"]
    print(f"{'set':<7}" + "".join(f"{c:>12}" for c in cols))
    for r in rows:
        print(f"{r['set']:<7}" + "".join(f"{'-' if r[c] is None else r[c]:>12}" for c in cols))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
