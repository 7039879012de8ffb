"""What finding candidates by their descriptions and in the source text costs on a large graph
(tog_core/policy/retrieval.py, tog_core/policy/textunits.py).

    python bench/retrieval_scale.py [--sizes 10000 100000 200000] [--hub 3000] [--json]

A synthetic graph per size: N entities, each with a 40-word description drawn from a 20,000-word vocabulary
(Zipf-like), 3 relationships an entity on average, and one hub with `--hub` relationships. Printed per size: the time
and the growth in peak memory (RSS) to build the description index (`retrieval.index_of`), and the time of one
retrieval from the hub at depth 1, 2 and 3 (the walk capped at MAX_REACHED entities), the question sharing five words
with the descriptions; then the candidates found in the source text from the same walk (N/10 text units of 300 words
from the same vocabulary, each relationship citing one) at depth 1, 2 and 3, and depth 3 once more with the units'
words read before (`text 3 warm`). Each size runs in a fresh subprocess so its peak memory is its own.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, resource, sys, time
import numpy as np, pyarrow as pa
sys.path.insert(0, sys.argv[3])
from tog_core.graphrag.graph import KnowledgeGraph
from tog_core.policy import retrieval, textunits

n, hub = int(sys.argv[1]), int(sys.argv[2])
rng = np.random.default_rng(0)
vocab = [f"w{i}" for i in range(20_000)]
p = 1.0 / np.arange(1, len(vocab) + 1); p /= p.sum()
words = rng.choice(len(vocab), size=(n, 40), p=p)
titles = [f"E{i}" for i in range(n)]
descs = [" ".join(vocab[j] for j in row) for row in words]
m = 3 * n
src = rng.integers(0, n, m); dst = rng.integers(0, n, m)
src[:hub] = 0  # entity 0 is the hub
ent = pa.table({"id": [f"id{i}" for i in range(n)], "title": titles, "description": descs})
nu = max(1, n // 10)
cite = rng.integers(0, nu, m)
rel = pa.table({"id": [f"r{k}" for k in range(m)], "source": [titles[i] for i in src],
                "target": [titles[i] for i in dst], "description": ["is linked to"] * m,
                "text_unit_ids": pa.array([[f"u{c}"] for c in cite], pa.list_(pa.string()))})
uw = rng.choice(len(vocab), size=(nu, 300), p=p)
units = pa.table({"id": [f"u{i}" for i in range(nu)],
                  "text": [" ".join(vocab[j] for j in row) + f" E{i} E{i + 1}" for i, row in enumerate(uw)]})
g = KnowledgeGraph.from_tables(ent, rel, units)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t = time.perf_counter(); retrieval.index_of(g); build = time.perf_counter() - t
grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
query = frozenset(["w50", "w400", "w1200", "w3000", "w9000"])
out = {"entities": n, "hub": hub, "index_s": round(build, 3), "index_mb": round(grown, 1)}
for d in (1, 2, 3):
    t = time.perf_counter()
    retrieval.retrieve(g, [0], d, query)
    out[f"depth{d}_s"] = round(time.perf_counter() - t, 4)
for d, key in ((1, "text1_s"), (2, "text2_s"), (3, "text3_s"), (3, "text3_warm_s")):
    t = time.perf_counter()
    textunits.found_in_text(g, retrieval.neighbourhood(g, [0], d), query, k=5)
    out[key] = round(time.perf_counter() - t, 4)
print(json.dumps(out))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 200_000])
    ap.add_argument("--hub", type=int, default=3_000)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    rows = []
    for n in a.sizes:
        res = subprocess.run([sys.executable, "-c", CHILD, str(n), str(a.hub), str(ROOT)], capture_output=True,
                             text=True, check=True)
        rows.append(json.loads(res.stdout.strip().splitlines()[-1]))
    if a.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"{'entities':>9} {'index s':>8} {'index MB':>9} {'depth 1 s':>10} {'depth 2 s':>10} {'depth 3 s':>10} "
          f"{'text 1 s':>9} {'text 2 s':>9} {'text 3 s':>9} {'text 3 warm':>11}")
    for r in rows:
        print(f"{r['entities']:>9} {r['index_s']:>8} {r['index_mb']:>9} {r['depth1_s']:>10} {r['depth2_s']:>10} "
              f"{r['depth3_s']:>10} {r['text1_s']:>9} {r['text2_s']:>9} {r['text3_s']:>9} {r['text3_warm_s']:>11}")


if __name__ == "__main__":
    main()
