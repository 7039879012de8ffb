"""Load + index speed and peak memory: our KnowledgeGraph vs a networkx MultiDiGraph, same tables, same run.

    python bench/graph_load.py [--sizes 10000 100000 1000000] [--json]

Each measurement runs in a fresh subprocess so peak RSS is its own. "load+index" covers reading the
parquet tables and building the index: for us KnowledgeGraph.load (CSR, lookups, evidence index);
for networkx, pandas.read_parquet of the same files and nx.from_pandas_edgelist(MultiDiGraph) plus
node attributes. Module imports (pyarrow, pandas, networkx) happen before the clock starts, in both.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]


def make_tables(m: int, out: Path, seed: int = 0) -> Path:
    """A synthetic GraphRAG 3.x output with m relationships, m/5 entities and m/50 text units."""
    out.mkdir(parents=True, exist_ok=True)
    if (out / "relationships.parquet").exists():
        return out
    rng = np.random.default_rng(seed)
    n = max(10, m // 5)
    t = max(1, m // 50)
    idx = np.arange(n)
    titles = pa.array(np.char.add("ENTITY ", idx.astype(str)).astype(object), pa.string())
    ids = pa.array(np.char.add("e-", idx.astype(str)).astype(object), pa.string())
    pq.write_table(pa.table({"id": ids, "title": titles,
                             "type": pa.array(np.full(n, "THING", dtype=object), pa.string()),
                             "description": pa.array(
                                 np.char.add("A synthetic entity number ", idx.astype(str)).astype(object))}),
                   out / "entities.parquet")
    # power-law-ish degrees: a few hubs, many leaves
    s = np.minimum((rng.pareto(1.2, m) * 3).astype(np.int64), n - 1)
    d = rng.integers(0, n, m)
    tu_ids = np.char.add("t-", np.arange(t).astype(str)).astype(object)
    pick = rng.integers(0, t, m)
    offsets = np.arange(m + 1, dtype=np.int32)
    tlist = pa.ListArray.from_arrays(pa.array(offsets), pa.array(tu_ids[pick], pa.string()))
    src_t = pa.array(np.char.add("ENTITY ", s.astype(str)).astype(object), pa.string())
    dst_t = pa.array(np.char.add("ENTITY ", d.astype(str)).astype(object), pa.string())
    desc = pa.array(np.char.add(np.char.add(np.char.add("ENTITY ", s.astype(str)), " is linked to ENTITY "),
                                d.astype(str)).astype(object), pa.string())
    pq.write_table(pa.table({"id": pa.array(np.char.add("r-", np.arange(m).astype(str)).astype(object)),
                             "source": src_t, "target": dst_t, "description": desc,
                             "weight": rng.random(m), "text_unit_ids": tlist}), out / "relationships.parquet")
    pq.write_table(pa.table({"id": pa.array(tu_ids, pa.string()),
                             "text": pa.array(
                                 np.char.add("Some source text ", np.arange(t).astype(str)).astype(object))}),
                   out / "text_units.parquet")
    return out


CHILD = r"""
import json, resource, sys, time, gc
import psutil
which, path = sys.argv[1], sys.argv[2]
import pandas as pd  # pyarrow imports pandas on its first parquet read: keep imports out of both timings
if which == "tog":
    from tog_core.graphrag.graph import KnowledgeGraph
else:
    import networkx as nx
gc.collect()
rss0 = psutil.Process().memory_info().rss
t0 = time.perf_counter()
if which == "tog":
    g = KnowledgeGraph.load(path)
    n, m = g.n_entities, g.n_relationships
else:
    ent = pd.read_parquet(path + "/entities.parquet")
    rel = pd.read_parquet(path + "/relationships.parquet")
    G = nx.from_pandas_edgelist(rel, "source", "target", edge_attr=["id", "description", "weight", "text_unit_ids"],
                                create_using=nx.MultiDiGraph)
    G.add_nodes_from((t, {"id": i, "type": ty, "description": d})
                     for t, i, ty, d in zip(ent["title"], ent["id"], ent["type"], ent["description"]))
    n, m = G.number_of_nodes(), G.number_of_edges()
dt = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"seconds": dt, "peak_rss_mb": peak / 2**20, "added_peak_mb": (peak - rss0) / 2**20,
                  "nodes": n, "edges": m}))
"""


def measure(which: str, path: Path) -> dict:
    proc = subprocess.run([sys.executable, "-c", CHILD, which, str(path)], capture_output=True, text=True, cwd=ROOT)
    if proc.returncode != 0:
        raise SystemExit(f"{which} failed on {path}: {proc.stderr.strip()[-500:]}")
    return json.loads(proc.stdout)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    ap.add_argument("--data", type=Path, default=Path(tempfile.gettempdir()) / "tog-bench-graphs")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rows = []
    for m in args.sizes:
        path = make_tables(m, args.data / f"m{m}")
        ours, nx_ = measure("tog", path), measure("networkx", path)
        rows.append({"relationships": m, "entities": ours["nodes"], "tog_s": ours["seconds"],
                     "tog_peak_mb": ours["added_peak_mb"], "networkx_s": nx_["seconds"],
                     "networkx_peak_mb": nx_["added_peak_mb"], "speedup": nx_["seconds"] / ours["seconds"]})
    if args.json:
        print(json.dumps(rows))
        return 0
    print("| relationships | entities | ToG load+index s | ToG added peak MB | networkx s | networkx added peak MB "
          "| speed-up |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['relationships']:,} | {r['entities']:,} | {r['tog_s']:.2f} | {r['tog_peak_mb']:.0f} | "
              f"{r['networkx_s']:.2f} | {r['networkx_peak_mb']:.0f} | {r['speedup']:.1f}× |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
