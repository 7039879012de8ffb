"""PostgreSQL graph store vs the in-memory graph, same synthetic tables, same run: import time and the latency
of one relation stage.

    python bench/pg_store.py [--sizes 10000 100000 1000000] [--stages 300] [--store URL] [--json]

Tables: bench/graph_load.make_tables (GraphRAG 3.x layout; m relationships, m/5 entities, power-law sources,
so a few hubs). Without --store a throwaway cluster is started (tests/pg.py) and removed at the end.

One relation stage, as the engine does it for a frontier of 3 entities: the neighbours of the frontier, the
labels and descriptions of every candidate relationship, and the evidence (source text) of the first 3
relationships of each entity. In memory: KnowledgeGraph calls. In PostgreSQL: neighbors_many + labels +
descriptions + evidence_many = 3 round trips, measured "cold" (the store's LRU caches cleared before each
stage, so every row comes from the server) and "warm" (the same stage again, served by the caches).
Two frontier samplings: "walk" takes endpoints of random relationships, i.e. entities sampled by degree as a
walk reaches them, so hubs appear as often as a search meets them (the synthetic tables have one giant hub with
~29% of all edges, so most walk frontiers hold it); "uniform" takes entities uniformly (a typical entity).
Import = reading and indexing the parquet tables + COPY + index builds + ANALYZE, one transaction.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from graph_load import make_tables  # noqa: E402  (bench/ is the script's folder)

from tog_core.graphrag.graph import KnowledgeGraph  # noqa: E402
from tog_core.graphrag.pg_common import connect  # noqa: E402
from tog_core.graphrag.pg_import import import_graph  # noqa: E402
from tog_core.graphrag.postgres import PgGraphStore  # noqa: E402

WIDTH = 3


def stage_memory(g: KnowledgeGraph, frontier: list[int]) -> int:
    rels, kept = [], []
    for e in frontier:
        r, _o, _d = g.neighbors(e)
        rels.append(r)
        kept.extend(r[:WIDTH].tolist())
    allr = np.concatenate(rels)
    g.labels(allr)
    g.descriptions(allr)
    for r in kept:
        g.evidence(r)
    return len(allr)


def stage_pg(s: PgGraphStore, frontier: list[int]) -> int:
    nb = s.neighbors_many(frontier)
    allr = np.concatenate([nb[e][0] for e in frontier])
    s.labels(allr)
    s.descriptions(allr)
    s.evidence_many([r for e in frontier for r in nb[e][0][:WIDTH].tolist()])
    return len(allr)


def pct(xs: list[float], q: float) -> float:
    return float(np.percentile(np.array(xs) * 1000, q))


def measure(url: str, m: int, data: Path, stages: int) -> list[dict]:
    path = make_tables(m, data / f"m{m}")
    t0 = time.perf_counter()
    g = KnowledgeGraph.load(path)
    load_s = time.perf_counter() - t0
    res = import_graph(url, path, name=f"bench-{m}")
    with connect(url) as conn:
        size = conn.execute("SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c JOIN pg_namespace n "
                            "ON n.oid = c.relnamespace WHERE n.nspname = %s AND c.relkind = 'r'",
                            (res.record.schema,)).fetchone()[0]
    out = {"relationships": m, "entities": g.n_entities, "memory_load_s": load_s, "import_s": res.total_s,
           "import_copy_s": res.copy_s, "import_index_s": res.index_s, "db_mb": size / 2**20}
    rng = np.random.default_rng(1)
    rels = rng.integers(0, g.n_relationships, size=(stages, WIDTH))
    walk = [[g.endpoints(int(r))[int(rng.integers(0, 2))] for r in row] for row in rels]
    uniform = rng.integers(0, g.n_entities, size=(stages, WIDTH)).tolist()
    return [{**out, "sampling": name, **stage_times(url, m, g, f)}
            for name, f in (("uniform", uniform), ("walk", walk))]


def stage_times(url: str, m: int, g: KnowledgeGraph, frontiers: list[list[int]]) -> dict:
    mem, cold, warm, rows = [], [], [], []
    with PgGraphStore(url, f"bench-{m}") as s:
        for f in frontiers[:5]:  # connections opened, statements prepared
            stage_pg(s, f)
        for f in frontiers:
            t = time.perf_counter()
            rows.append(stage_memory(g, f))
            mem.append(time.perf_counter() - t)
            s.clear_cache()
            t = time.perf_counter()
            n = stage_pg(s, f)
            cold.append(time.perf_counter() - t)
            t = time.perf_counter()
            stage_pg(s, f)
            warm.append(time.perf_counter() - t)
            assert n == rows[-1]
    return {"candidates_p50": float(np.median(rows)), "candidates_max": int(max(rows)),
            "memory_p50_ms": pct(mem, 50), "memory_p95_ms": pct(mem, 95),
            "pg_cold_p50_ms": pct(cold, 50), "pg_cold_p95_ms": pct(cold, 95),
            "pg_warm_p50_ms": pct(warm, 50), "pg_warm_p95_ms": pct(warm, 95), "stages": len(frontiers)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    ap.add_argument("--stages", type=int, default=200, help="relation stages timed per size and sampling")
    ap.add_argument("--store", default=None, metavar="URL", help="a PostgreSQL to use (default: a throwaway cluster)")
    ap.add_argument("--data", type=Path, default=Path(tempfile.gettempdir()) / "tog-bench-graphs")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    cluster = None
    if args.store is None:
        from pg import start_cluster

        cluster = start_cluster()
    url = args.store or cluster.url
    try:
        rows = []
        for m in args.sizes:
            rows.extend(measure(url, m, args.data, args.stages))
            print(f"done {m:,}", file=sys.stderr, flush=True)
    finally:
        if cluster is not None:
            cluster.stop()
    if args.json:
        print(json.dumps(rows))
        return 0
    print("| relationships | entities | memory load s | PG import s (COPY + indexes) | PG size MB | frontier | "
          "candidates/stage p50 (max) | stage memory p50 / p95 ms | stage PG cold p50 / p95 ms | "
          "stage PG warm p50 / p95 ms |")
    print("|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['relationships']:,} | {r['entities']:,} | {r['memory_load_s']:.2f} | {r['import_s']:.1f} "
              f"({r['import_copy_s']:.1f} + {r['import_index_s']:.1f}) | {r['db_mb']:.0f} | {r['sampling']} | "
              f"{r['candidates_p50']:.0f} ({r['candidates_max']:,}) | {r['memory_p50_ms']:.2f} / "
              f"{r['memory_p95_ms']:.2f} | {r['pg_cold_p50_ms']:.2f} / {r['pg_cold_p95_ms']:.2f} | "
              f"{r['pg_warm_p50_ms']:.2f} / {r['pg_warm_p95_ms']:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
