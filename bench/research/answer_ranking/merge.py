"""Merge trial dumps (exact 1..3 hops) into one row per question: paths tagged with their trial, ranks per trial."""
import json
import sys
from pathlib import Path
base = Path(sys.argv[1])
out = Path(sys.argv[2])
out.mkdir(exist_ok=True)
for f in sorted((base / "linked").glob("*.jsonl")):
    app = {json.loads(line)["id"]: json.loads(line) for line in f.read_text().splitlines()}
    rows = []
    trials = {}
    for k in (1, 2, 3):
        g = base / f"trial{k}" / f.name
        if not g.exists():
            break
        trials[k] = {json.loads(line)["id"]: json.loads(line) for line in g.read_text().splitlines()}
    if len(trials) < 3:
        continue
    for qid, q in app.items():
        paths = []
        for k in (1, 2, 3):
            t = trials[k][qid]
            for r, p in enumerate(t["paths"]):
                paths.append({**p, "trial": k, "trial_rank": r})
        rows.append({**q, "paths": paths, "app_paths": q["paths"]})
    (out / f.name).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    hit = sum(any(p["hops"] and 1 for p in r["paths"]) for r in rows)
    print(f.stem, len(rows))
