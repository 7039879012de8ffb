"""Linking alone: how often the topic entities linked from a question's text hold a gold topic entity, per dev set.

    python bench/linking.py [--linker named|exact] [SET ...]     # default: the GraphRAG dev sets, the app's linker

For each question, `linking.link_question` (the app's and the CLI's linker: `link_named` on a free-text graph,
`link_exact` on a typed one) or, with `--linker`, the one named, on every graph alike; no search runs. Columns:
questions, a gold topic among the seeds, the first seed a gold topic, seeds a question. Dev sets only.
"""
from __future__ import annotations

import json
import sys
from typing import Any

from dev_sets import DEV, GRAPHRAG_DEV  # first: makes tog_core importable

from tog_core.graphrag.open import open_graph  # noqa: E402
from tog_core.tog import linking  # noqa: E402

LINKERS = {"app": None, "named": linking.link_named, "exact": linking.link_exact}


def link_set(graph: Any, questions: list[dict[str, Any]], linker: str = "app") -> dict[str, Any]:
    """Counts over `questions` (each with `question` and `topic_entities`) on `graph`."""
    spans = LINKERS[linker]
    n = hit = first = seeds = 0
    for q in questions:
        found = linking.link_question(q["question"], graph) if spans is None else (
            spans(q["question"], graph) or linking.link_fuzzy(q["question"], graph))
        titles = [s.title for s in found]
        gold = set(q["topic_entities"])
        n += 1
        hit += bool(gold & set(titles))
        first += bool(titles) and titles[0] in gold
        seeds += len(titles)
    return {"n": n, "linked": hit, "first": first, "seeds_per_q": seeds / max(1, n)}


def main(args: list[str]) -> None:
    linker = "app"
    if "--linker" in args:
        k = args.index("--linker")
        linker = args[k + 1] if k + 1 < len(args) else ""
        del args[k:k + 2]
        if linker not in LINKERS:
            sys.exit(f"unknown linker '{linker}'; choose from: {', '.join(LINKERS)}")
    names = args or list(GRAPHRAG_DEV)
    if unknown := [a for a in names if a not in DEV]:
        sys.exit(f"unknown set(s) {', '.join(unknown)}; choose from: {', '.join(DEV)}")
    total = {"n": 0, "linked": 0, "first": 0, "seeds": 0.0}
    print(f"linker: {linker}\n{'set':8} {'n':>4} {'linked':>7} {'first':>6} {'seeds/q':>8}")
    for name in names:
        data, qfile = DEV[name]
        if not data.exists() or not qfile.exists():
            print(f"{name:8} missing ({data if not data.exists() else qfile}); skipped")
            continue
        graph = open_graph(str(data))[1]
        questions = [json.loads(line) for line in qfile.read_text(encoding="utf-8").splitlines() if line.strip()]
        r = link_set(graph, questions, linker)
        print(f"{name:8} {r['n']:4d} {r['linked']:7d} {r['first']:6d} {r['seeds_per_q']:8.2f}", flush=True)
        for k in ("n", "linked", "first"):
            total[k] += r[k]
        total["seeds"] += r["seeds_per_q"] * r["n"]
    if total["n"]:
        print(f"{'all':8} {total['n']:4d} {total['linked']:7d} {total['first']:6d} "
              f"{total['seeds'] / total['n']:8.2f}")


if __name__ == "__main__":
    main(sys.argv[1:])
