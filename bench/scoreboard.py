"""Issue #21's goals in one table: every data set in the configuration users run, next to the gold-seed ceiling.

    python bench/scoreboard.py [--sets cc cc2 cc3 dulce cc12 cc12b cc12hub cchub demo fr zh metaqa pq2 pq3 pql2 pql3]
                               [--json]
    python bench/scoreboard.py --unseen        # adds the held-out and the twelve blind sets: only at the end of a stop

Per set, two runs of `bench kgqa` (no LLM, the app's default pruner):
* **default**: as the app and the CLI run a question (topic entities linked from its text, a maximum depth of 3);
  PathQuestion, whose numbers are reported from its gold topic entities, runs from them;
* **gold**: the data set's topic entities, searched to the question's own number of hops (the search's ceiling when
  linking and the depth choice are right).
Columns: chain Hits@1 (per hop level for MetaQA, whose goal is per hop), Hits@3, candidate recall (a gold answer
anywhere among the candidates: what a better answer ranking could reach), AUROC of the confidence, the shares of
wrong and right answers shown as a guess, seconds a question with the cache warm, and the gold run's beam recall and
Hits@1. `goals` lists each goal of the issue that applies to the set, `ok` or `MISSED` with the number.

Held-out and blind sets are never in the default list: they are read once, after the last change, and nothing is
tuned on them (`--unseen` prints a reminder). The blind sets read at the ends of earlier stops (blind2 to blind8,
`dev_sets.SPENT`) are spent: `bench/fit_ranker.py fit` scores the answer ranker on them outside its fit, and they
are still reported here beside the unseen ones, with the same goals. Commands for one set: `python -m tog_core bench
kgqa GRAPH --questions FILE --link --depth 3` (default) and `... --questions FILE` (gold).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from dev_sets import DEV, GR, GRAPHRAG_DEV, ROOT, SPENT  # first: makes tog_core importable, LiteLLM offline

from tog_core.bench.kgqa import KGQAConfig, run_kgqa  # noqa: E402
from tog_core.graphrag.open import open_graph  # noqa: E402

UNSEEN: dict[str, tuple[Path, Path]] = {
    "heldout": (GR / "christmas-carol-v3/output", ROOT / "bench/data/christmas-carol/questions_test.jsonl"),
    "blind": (GR / "christmas-carol-v1.2/output", ROOT / "bench/data/christmas-carol-v1.2/questions_blind.jsonl"),
    # the second to twelfth blind sets, read at the ends of earlier stops: spent, kept outside the answer ranker's fit
    # and reported beside the unseen ones (bench/dev_sets.py SPENT)
    **SPENT,
}
# the real GraphRAG outputs (not written for this project)
REAL_GRAPHRAG = ("cc", "cc2", "cc3", "dulce", "cc12", "cc12b", "cc12hub", "cchub", "heldout", "blind", "blind2",
                 "blind3", "dulce-blind", "blind4", "blind5", "blind6", "blind7", "blind8", "blind9", "blind10",
                 "blind11", "blind12")
GOLD_SEEDED = ("pq2", "pq3", "pql2", "pql3")  # reported from their gold topic entities


def goals(name: str, d: dict[str, Any]) -> list[tuple[str, float | None, float, bool]]:
    """(goal, value, bound, higher is better) for every goal of issue #21 that applies to the set."""
    out: list[tuple[str, float | None, float, bool]] = []
    if name in UNSEEN:
        out += [("Hits@1", d["hits1"], 0.5, True), ("Hits@3", d["hits3"], 0.65, True),
                ("AUROC", d["auroc"], 0.8, True), ("wrong flagged", d["wrong_flagged"], 0.7, True),
                ("right flagged", d["right_flagged"], 0.25, False)]
    if name in REAL_GRAPHRAG:
        out.append(("gold beam recall", d["gold_recall"], 0.75, True))
    if name == "metaqa":
        out.append(("Hits@1", d["hits1"], 0.85, True))
        out += [(f"{h}-hop Hits@1", v, 0.75, True) for h, v in d["per_hop"].items()]
    if name in ("pq2", "pql2"):
        out.append(("Hits@1", d["hits1"], 0.9, True))
    if name in ("pq3", "pql3"):
        out.append(("Hits@1", d["hits1"], 0.7, True))
    if name in ("fr", "zh"):
        out.append(("Hits@1", d["hits1"], 0.75, True))
    out.append(("s/q", d["s_per_q"], 0.5, False))
    return out


def met(value: float | None, bound: float, higher: bool) -> bool:
    return value is not None and (value >= bound if higher else value <= bound)


def score(name: str, graph_dir: Path, qfile: Path) -> dict[str, Any]:
    loaded = open_graph(str(graph_dir))
    try:
        base = {"data_dir": str(graph_dir), "questions": str(qfile)}
        default = run_kgqa(KGQAConfig(**base) if name in GOLD_SEEDED else
                           KGQAConfig(**base, link=True, depth=3), _loaded=loaded)["summary"]
        gold = run_kgqa(KGQAConfig(**base), _loaded=loaded)["summary"]["all"]
    finally:
        getattr(loaded[1], "close", lambda: None)()
    a = default["all"]
    row = {"n": a["n"], "hits1": a["chain_hits1"], "hits3": a["hits3"], "candidate_recall": a["candidate_recall"],
           "auroc": a["auroc"], "wrong_flagged": a["wrong_flagged"], "right_flagged": a["right_flagged"],
           "s_per_q": a["s_per_q"], "gold_recall": gold["beam_recall"], "gold_hits1": gold["chain_hits1"],
           "per_hop": {k: v["chain_hits1"] for k, v in default.items() if k != "all"}}
    row["goals"] = [{"goal": g, "value": v, "bound": b, "at_least": hi, "met": met(v, b, hi)}
                    for g, v, b, hi in goals(name, row)]
    return row


def fmt(v: Any) -> str:
    return "-" if v is None else f"{v:.3f}" if isinstance(v, float) else str(v)


def main(argv: list[str] | None = None) -> int:
    sets = {n: DEV[n] for n in (*GRAPHRAG_DEV, "metaqa", *GOLD_SEEDED)}
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", nargs="+", default=list(sets), choices=[*sets, *UNSEEN])
    ap.add_argument("--unseen", action="store_true", help="add the held-out and the blind sets (end of a stop only)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    names = list(dict.fromkeys([*args.sets, *(UNSEEN if args.unseen else ())]))
    where = {**sets, **UNSEEN}
    missing = [n for n in names if not where[n][0].exists() or not where[n][1].exists()]
    if missing:
        print(f"no graph or questions for {', '.join(missing)} (../shared/data missing?); "
              f"run with --sets of the others", file=sys.stderr)
        return 2
    if any(n in UNSEEN and n not in SPENT for n in names):
        print("held-out / blind sets: read once after the last change; tune nothing on what follows", file=sys.stderr)
    table = {n: score(n, *where[n]) for n in names}
    if args.json:
        print(json.dumps(table))
        return 0
    cols = ["n", "hits1", "hits3", "candidate_recall", "auroc", "wrong_flagged", "right_flagged", "s_per_q",
            "gold_recall", "gold_hits1"]
    heads = ["n", "Hits@1", "Hits@3", "cand.rec", "AUROC", "wrong fl", "right fl", "s/q", "gold rec", "gold H@1"]
    print("default: linked, depth 3 (PathQuestion: gold topic entities); gold: gold topic entities, depth = hops")
    w = max([8, *map(len, table)])  # the set column fits the longest name (dulce-blind)
    print(f"{'set':{w}s}" + "".join(f"{h:>9s}" for h in heads) + "  goals")
    for n, r in table.items():
        missed = [f"{g['goal']} {fmt(g['value'])} (goal {'≥' if g['at_least'] else '≤'} {g['bound']})"
                  for g in r["goals"] if not g["met"]]
        verdict = "ok" if not missed else "MISSED " + "; ".join(missed)
        print(f"{n:{w}s}" + "".join(f"{fmt(r[c]):>9s}" for c in cols) + f"  {verdict}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
