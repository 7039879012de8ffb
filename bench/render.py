"""Picture build time and size: frontier and chains pictures of synthetic traces with 50 / 300 / 1,000 nodes.

    python bench/render.py [--sizes 50 300 1000] [--repeat 3] [--json]

"seconds" is the best of --repeat builds of the HTML string (tog_core.render.viz, pyvis 0.3.2 generate_html, our
post-processing); the pyvis import happens before the clock starts. "KB" is the page size; about
680 KB of every page is the inlined vis-network library and stylesheet. Browser layout time is not measured.
Frontier traces: one seed, three depths, beam width 3, the rest pruned candidates. Chains traces: a wide
beam whose chains reach the requested number of distinct entities.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tog_core.tog.trace import Candidate, Link, Seed, Step, Trace  # noqa: E402
from tog_core.render.viz import chains_html, frontier_html, picture_json  # noqa: E402

DEPTH = 3


def frontier_trace(n: int, width: int = 3) -> Trace:
    """1 seed + (n - 1) entities over DEPTH depths; `width` kept per depth, the others pruned."""
    per_depth = [(n - 1) // DEPTH + (1 if d < (n - 1) % DEPTH else 0) for d in range(DEPTH)]
    frontier = ["E0"]
    steps, nxt, chains = [], 1, [[] for _ in range(width)]
    for d, count in enumerate(per_depth, start=1):
        cands = []
        for j in range(count):
            src = frontier[j % len(frontier)]
            eid = f"E{nxt}"
            nxt += 1
            kept = j < width
            cands.append(Candidate(id=f"ent:{d}:{eid}", label=f"Entity {eid}", kind="entity",
                                   score=round(1 - j / max(count, 1), 3), reason="synthetic candidate",
                                   kept=kept, auto_kept=kept, source_entity=f"Entity {src}", source_id=src,
                                   target=f"Entity {eid}", target_id=eid, relation=f"{src} is related to {eid}",
                                   relationship_ids=[f"R{eid}"], path=j % width))
        new = [c.target_id for c in cands if c.kept]
        for p, c in enumerate([c for c in cands if c.kept]):
            chains[p].append(Link(source=c.source_entity, source_id=c.source_id, relation=c.relation or "",
                                  target=c.target or "", target_id=c.target_id or "",
                                  relationship_id=c.relationship_ids[0], text_unit_ids=["T1"], score=c.score))
        steps.append(Step(depth=d, stage="entities", candidates=cands, llm_calls=1))
        frontier = new or frontier
    return Trace(question="synthetic", project="bench", config={"width": width, "depth": DEPTH},
                 seeds=[Seed(id="E0", title="Entity E0", how="user")], steps=steps, chains=chains)


def chains_trace(n: int) -> Trace:
    """A wide beam: (n - 1) // DEPTH chains of DEPTH hops from one seed, all entities distinct."""
    chains = []
    k = 1
    for _ in range(max((n - 1) // DEPTH, 1)):
        chain, prev = [], "E0"
        for _ in range(DEPTH):
            eid = f"E{k}"
            k += 1
            chain.append(Link(source=f"Entity {prev}", source_id=prev, relation=f"{prev} is related to {eid}",
                              target=f"Entity {eid}", target_id=eid, relationship_id=f"R{eid}", text_unit_ids=["T1"]))
            prev = eid
        chains.append(chain)
    return Trace(question="synthetic", project="bench", config={}, seeds=[Seed(id="E0", title="Entity E0", how="user")],
                 chains=chains)


def measure(build, repeat: int) -> tuple[float, str]:
    best, page = float("inf"), ""
    for _ in range(repeat):
        t0 = time.perf_counter()
        page = build()
        best = min(best, time.perf_counter() - t0)
    return best, page


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[50, 300, 1000])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", action="store_true", help="print a JSON list only")
    args = ap.parse_args(argv)
    import pyvis.network  # noqa: F401  import cost is not part of a build

    rows = []
    for n in args.sizes:
        ft = frontier_trace(n).to_dict()
        ct = chains_trace(n).to_dict()
        for picture, build in (("frontier", lambda ft=ft, n=n: frontier_html(ft, max_nodes=n)),
                               ("chains", lambda ct=ct: chains_html(ct))):
            secs, page = measure(build, args.repeat)
            data = picture_json(page)
            rows.append({"picture": picture, "nodes": len(data["nodes"]), "edges": len(data["edges"]),
                         "seconds": round(secs, 4), "html_kb": round(len(page.encode()) / 1024, 1)})
    if args.json:
        print(json.dumps(rows))
        return 0
    print(f"{'picture':<9} {'nodes':>6} {'edges':>6} {'seconds':>8} {'HTML KB':>8}")
    for r in rows:
        print(f"{r['picture']:<9} {r['nodes']:>6} {r['edges']:>6} {r['seconds']:>8.3f} {r['html_kb']:>8.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
