"""A 200k-edge hub: time, peak RSS and run-file size per question (issue #23 item 6).

    python bench/hub.py [--edges 200000] [--dir /tmp/tog-hub] [--json]

Builds (once, in --dir) a GraphRAG 3.x project with one hub, "Harbour Exchange", joined by `--edges` free-text
relationships to as many small entities (every description different, so every edge is its own relation group),
plus a few facts around it that the questions ask about. Each question runs as `python -m tog_core query PROJECT
QUESTION --model none` in a fresh subprocess (its own peak RSS, read from wait4), saving its run under a fresh
TOG_HOME; the run file is the one the run store wrote. Columns: wall time, CPU time (user + system, steadier on a
shared machine), peak RSS, run-file size. The LLM-free path is the one a person gets without a key, and the one
where every candidate is scored by BM25 (with an LLM only the top K reach the model: the rest is the same).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
HUB = "Harbour Exchange"
FACTS = [  # (source, target, description): the few edges the questions are about
    ("Mara Quell", HUB, "Mara Quell founded the Harbour Exchange in the old customs house."),
    (HUB, "Port Anselm", "The Harbour Exchange is located in Port Anselm."),
    ("Port Anselm", "Lower Vale", "Port Anselm is the chief town of the Lower Vale."),
    ("Ivo Brask", HUB, "Ivo Brask trades grain at the Harbour Exchange."),
]
QUESTIONS = [
    "Who founded the Harbour Exchange?",
    "In which town is the Harbour Exchange located?",
    "Which region is the town of the Harbour Exchange in?",
    "Where does Ivo Brask trade grain?",
]
WORDS = ("grain timber wool salt copper amber cloth spice tin hides wine oil rope tar pitch iron glass silk "
         "pepper dye").split()


def build(edges: int, out: Path) -> Path:
    """The project (entities + relationships parquet, settings.yaml) with one hub of `edges` edges; reused."""
    output = out / "output"
    if (output / "relationships.parquet").exists() and (out / f".edges-{edges}").exists():
        return out
    output.mkdir(parents=True, exist_ok=True)
    named = sorted({x for s, t, _ in FACTS for x in (s, t)})
    leaves = [f"Trader {i}" for i in range(edges)]
    titles = named + leaves
    descriptions = [f"{t}, a place or person of the Lower Vale." for t in named] + [
        f"A merchant house dealing in {WORDS[i % len(WORDS)]} and {WORDS[(i * 7 + 3) % len(WORDS)]}."
        for i in range(edges)]
    pq.write_table(pa.table({"id": [f"e{i}" for i in range(len(titles))], "title": titles,
                             "type": ["ORGANIZATION"] * len(titles), "description": descriptions}),
                   output / "entities.parquet")
    rel = list(FACTS) + [(leaf, HUB, f"{leaf} deals in {WORDS[i % len(WORDS)]} through the Harbour Exchange "
                                     f"(ledger {i}, berth {i % 97}).") for i, leaf in enumerate(leaves)]
    pq.write_table(pa.table({"id": [f"r{i}" for i in range(len(rel))], "source": [s for s, _, _ in rel],
                             "target": [t for _, t, _ in rel], "description": [d for _, _, d in rel],
                             "weight": [1.0] * len(rel),
                             "text_unit_ids": pa.array([[] for _ in rel], pa.list_(pa.string()))}),
                   output / "relationships.parquet")
    (out / f".edges-{edges}").write_text("")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--edges", type=int, default=200_000)
    ap.add_argument("--dir", default=str(Path(tempfile.gettempdir()) / "tog-hub"))
    ap.add_argument("--json", action="store_true")
    ap.add_argument("extra", nargs="*", help="more query arguments after --, e.g. -- --pruner bm25")
    args = ap.parse_args()
    project = build(args.edges, Path(args.dir) / f"hub-{args.edges}")
    rows = []
    for q in QUESTIONS:
        rows.append(_measured(project, q, args.extra))
        if not args.json:
            r = rows[-1]
            print(f"{r['wall_s']:7.1f} s  {r['cpu_s']:7.1f} s CPU  {r['peak_rss_mb']:8.1f} MB  "
                  f"{r['run_file_kb']:9.1f} KB  exit {r['exit']}  {r['question']}  -> {r['answer'] or r['error']}",
                  flush=True)
    if args.json:
        print(json.dumps({"edges": args.edges, "questions": rows}, indent=1))


def _measured(project: Path, question: str, extra: list[str]) -> dict:
    """`one`, with the child's own rusage (os.wait4 needs the pid before Popen reaps it)."""
    home = Path(tempfile.mkdtemp(prefix="tog-hub-home-"))
    env = {**os.environ, "TOG_HOME": str(home), "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "tog_core", "query", str(project), question, "--model", "none", *extra]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        pid = os.posix_spawn(sys.executable, cmd, dict(env), file_actions=[
            (os.POSIX_SPAWN_DUP2, out.fileno(), 1), (os.POSIX_SPAWN_DUP2, err.fileno(), 2)])
        _, status, usage = os.wait4(pid, 0)
        wall = time.perf_counter() - t0
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(), err.read().decode()
    runs = sorted(home.rglob("*.json"), key=lambda p: p.stat().st_size)
    answer = next((line for line in stdout.splitlines() if line.startswith("Most likely answer")), "")
    code = os.waitstatus_to_exitcode(status)
    return {"question": question, "exit": code, "wall_s": round(wall, 2),
            "cpu_s": round(usage.ru_utime + usage.ru_stime, 2), "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
            "run_file_kb": round(runs[-1].stat().st_size / 1024, 1) if runs else 0.0,
            "answer": answer[:80], "error": stderr.strip().splitlines()[-1:] if code else []}


if __name__ == "__main__":
    main()
