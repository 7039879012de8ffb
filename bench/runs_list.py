"""Saved runs: time to list N large runs, before (every trace parsed, as RunStore.list and .problems did) and after
(the index under runs/.index; old runs without an entry summarised once from their top-level fields).

    python bench/runs_list.py [--runs 3] [--mb 120] [--dir DIR]

The large runs are made synthetically: one real LLM-free run of the demo question, its first step inflated with
copies of its candidates until the file reaches --mb megabytes (a hub's 200,000 candidates make about 120 MB),
saved by RunStore.save as the app saves them. Prints one table: what was timed, seconds.
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tog_core.compose import RunSpec, build_engine  # noqa: E402
from tog_core.graphrag.graph import KnowledgeGraph  # noqa: E402
from tog_core.graphrag.project import open_project  # noqa: E402
from tog_core.runs.files import RunStore  # noqa: E402
from tog_core.runs.index import INDEX_DIR  # noqa: E402

QUESTION = "In which town was the founder of the Lanternwright Guild born?"


def make_runs(store: RunStore, n: int, mb: float) -> None:
    info = open_project(ROOT / "demo")
    engine = build_engine(RunSpec(model="none"), graph=KnowledgeGraph.load(info), info=info).engine
    import asyncio

    state = asyncio.run(engine.run(QUESTION))
    tr = engine.trace(state)
    base = [c for c in tr.steps[0].candidates]
    one = len(json.dumps(base[0].__dict__, indent=1)) + 8
    copies = int(mb * 1e6 / one)
    tr.steps[0].candidates = [type(base[0])(**{**base[0].__dict__, "id": f"c{k}", "label": f"{base[0].label} {k}"})
                              for k in range(copies)]
    for i in range(n):
        tr.run_id = f"20260101-00000{i}-big{i:03d}"
        store.save(tr)


def old_listing(root: Path) -> int:
    """What RunStore.list() and .problems() did before the index: each parsed every trace."""
    n = 0
    for _ in ("list", "problems"):
        for p in root.glob("*.json"):
            d = json.loads(p.read_text(encoding="utf-8"))
            n += isinstance(d, dict) and "question" in d
    return n


def timed(f) -> tuple[float, object]:
    t0 = time.perf_counter()
    out = f()
    return time.perf_counter() - t0, out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--mb", type=float, default=120.0)
    ap.add_argument("--dir", type=Path, default=None, help="where to write the runs (default: a temp folder)")
    a = ap.parse_args()
    where = a.dir or Path(tempfile.mkdtemp(prefix="tog-runs-bench-"))
    store = RunStore(where / "runs")
    try:
        t_make, _ = timed(lambda: make_runs(store, a.runs, a.mb))
        sizes = [p.stat().st_size / 1e6 for p in store.root.glob("*.json")]
        rows = [(f"made {a.runs} runs of {min(sizes):.0f}-{max(sizes):.0f} MB (not part of listing)", t_make)]
        rows.append(("before: list + problems, every trace parsed (each page run)", timed(
            lambda: old_listing(store.root))[0]))
        shutil.rmtree(store.root / INDEX_DIR)  # as runs saved before the index existed
        rows.append(("after: first listing of old runs (top-level fields read, index written)", timed(store.scan)[0]))
        rows.append(("after: listing from the index (each page run)", timed(store.scan)[0]))
        rid = store.list()[0].run_id
        rows.append(("opening one run (when the person chooses it)", timed(lambda: store.load(rid))[0]))
        w = max(len(r[0]) for r in rows)
        print(f"{'what':<{w}}  seconds")
        for what, s in rows:
            print(f"{what:<{w}}  {s:7.3f}")
    finally:
        if a.dir is None:
            shutil.rmtree(where, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
