"""Research: run the default configuration (linked seeds, depth 3) on every dev set and dump, per question, the
final beam (paths with hops, scores, labels) so answer-ranking features can be studied offline."""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # bench/, for dev_sets
from dev_sets import DEV as SETS  # noqa: E402  (first: makes tog_core importable, LiteLLM offline)
from tog_core.bench.kgqa import KGQAConfig, load_questions_file, run_kgqa  # noqa: E402
from tog_core.graphrag.open import open_graph  # noqa: E402


def dump(name: str, out: Path, pruner: str | None, gold: bool, exact: int | None = None) -> None:
    data, qfile = SETS[name]
    if exact:
        import tempfile
        rows_ = [json.loads(x) for x in Path(qfile).read_text().splitlines() if x.strip()]
        tmp = Path(tempfile.mkdtemp()) / "q.jsonl"
        tmp.write_text("".join(json.dumps({**q, "hops": exact, "true_hops": q["hops"]}) + "\n" for q in rows_))
        qfile = tmp
    loaded = open_graph(str(data))
    loaded[1]
    captured: dict[str, tuple] = {}

    def hook(engine):
        orig = engine.run

        async def run(question, **kw):
            st = await orig(question, **kw)
            captured[question] = (engine, st)
            return st
        engine.run = run

    qs = load_questions_file(qfile)
    cfg = KGQAConfig(data_dir=str(data), questions=str(qfile), link=not gold, depth=None if (gold or exact) else 3,
                     pruner=pruner)
    t0 = time.time()
    res = run_kgqa(cfg, _loaded=loaded, engine_hook=hook)
    rows = {r["id"]: r for r in res["questions"]}
    with out.open("w") as f:
        for q in qs:
            r = rows[q["id"]]
            eng, st = captured.get(q["question"], (None, None))
            paths = []
            topics = []
            if st is not None:
                topics = sorted(eng.topic_ids(st))
                for p in eng.best_paths(st):
                    paths.append({"start": p.start, "score": p.score,
                                  "hops": [{"ridx": h.ridx, "src": h.src, "dst": h.dst, "score": h.score,
                                            "label": h.label} for h in p.hops]})
            f.write(json.dumps({"set": name, "id": q["id"], "question": q["question"], "answers": q["answers"],
                                "hops": q.get("true_hops", q["hops"]), "trial": exact,
                                "topic_entities": q["topic_entities"],
                                "seeds": sorted(eng.topic_ids(st)) if st else [], "topics": topics,
                                "answer_entity": r["answer_entity"], "chain_hit": r["chain_hit"],
                                "beam_hit": r["beam_hit"], "link_hit": r.get("link_hit"), "paths": paths,
                                "confidence": None}, ensure_ascii=False) + "\n")
    s = res["summary"]["all"]
    print(f"{name}: n={s['n']} chain_hits1={s['chain_hits1']} beam={s['beam_recall']} {time.time()-t0:.0f}s",
          flush=True)


if __name__ == "__main__":
    outdir = Path(sys.argv[1])
    outdir.mkdir(parents=True, exist_ok=True)
    gold = "--gold" in sys.argv
    exact = next((int(a[8:]) for a in sys.argv if a.startswith("--exact=")), None)
    for name in [a for a in sys.argv[2:] if not a.startswith("--")] or list(SETS):
        dump(name, outdir / f"{name}.jsonl", None, gold, exact)
