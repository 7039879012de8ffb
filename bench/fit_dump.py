"""`python bench/fit_ranker.py dump`: the sets the answer ranker is fitted on (and scored outside its fit), each run as
the app runs it, every answer candidate kept with its features (bench/fit_ranker.py's docstring says which and how)."""
from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dev_sets import DATA, DEV, GR, PQ, ROOT, SPENT  # first: makes tog_core importable

from tog_core.bench.kgqa import KGQAConfig, run_kgqa  # noqa: E402
from tog_core.policy import ranking  # noqa: E402

# name: (project or data folder, questions file (None: the folder's questions_dev.jsonl), linked, depth, limit)
SETS: dict[str, tuple[Path, Path | None, bool, int | None, int | None]] = {
    "demo": (ROOT / "demo/output", ROOT / "demo/questions.jsonl", True, 3, None),
    "cc": (GR / "christmas-carol-v3/output", ROOT / "bench/data/christmas-carol/questions_dev.jsonl", True, 3, None),
    "cc2": (GR / "christmas-carol-v3/output", ROOT / "bench/data/christmas-carol/questions_dev2.jsonl", True, 3, None),
    "cc3": (GR / "christmas-carol-v3/output", ROOT / "bench/data/christmas-carol/questions_dev3.jsonl", True, 3, None),
    "dulce": (GR / "operation-dulce-v3/output", ROOT / "bench/data/operation-dulce/questions_dev.jsonl", True, 3, None),
    "cc12": (GR / "christmas-carol-v1.2/output", ROOT / "bench/data/christmas-carol-v1.2/questions_dev.jsonl", True, 3,
             None),
    "cc12b": (GR / "christmas-carol-v1.2/output", ROOT / "bench/data/christmas-carol-v1.2/questions_dev2.jsonl", True,
              3, None),
    "fr": (ROOT / "bench/data/fr-atelier/output", ROOT / "bench/data/fr-atelier/questions_dev.jsonl", True, 3, None),
    "zh": (ROOT / "bench/data/zh-chayuan/output", ROOT / "bench/data/zh-chayuan/questions_dev.jsonl", True, 3, None),
    "metaqa": (DATA / "kgqa/metaqa", None, True, 3, None),
    "pq2": (PQ / "PQ-2H", None, False, None, None),
    "pq3": (PQ / "PQ-3H", None, False, None, None),
    "pql2": (PQ / "PQL-2H", None, False, None, None),
    "pql3": (PQ / "PQL-3H", None, False, None, None),
    # outside every fit (OUTSIDE): the hub dev sets and the spent blind sets, run as the app runs them
    **{n: (*DEV[n], True, 3, None) for n in ("cchub", "cc12hub")},
    **{n: (*SPENT[n], True, 3, None) for n in SPENT},
}


def dump(name: str, out: Path, config: Callable[..., KGQAConfig] = KGQAConfig) -> None:
    """Run set `name` as the app does (`config`: how a run is configured, KGQAConfig or a variant's) and write, per
    question, every answer candidate with its features and whether it is a gold answer to `out`/NAME.json."""
    data, qfile, link, depth, limit = SETS[name]
    captured: list[tuple[Any, Any]] = []

    def hook(engine: Any) -> None:
        engine.policy.answer_model = False  # the rule choice answers (its pick is a feature, and fit's `rule@1`)
        orig = engine.run

        async def run(question: str, **kw: Any) -> Any:
            st = await orig(question, **kw)
            captured.append((engine, st))
            return st
        engine.run = run

    cfg = config(data_dir=str(data), questions=str(qfile) if qfile else None, link=link, depth=depth,
                 limit=limit)
    t0 = time.time()
    res = run_kgqa(cfg, engine_hook=hook)
    by_q = {st.question: (eng, st) for eng, st in captured}
    emb = ranking.ranking_embedder()
    rows = []
    for r, q in zip(res["questions"], _questions(cfg)):
        eng, st = by_q.get(q["question"], (None, None))
        cands: list[dict[str, Any]] = []
        if st is not None:
            paths = eng.best_paths(st)
            rule = eng.policy.rule_choice(eng, st, paths)
            for c in eng.policy.answer_features(eng, st, paths, rule, emb):
                cands.append({"title": eng.graph.title(c.entity), "features": c.features})
        gold = set(q["answers"])
        rows.append({"id": q["id"], "hops": q["hops"], "question": q["question"], "answers": q["answers"],
                     "cands": [{**c, "gold": c["title"] in gold} for c in cands],
                     "answer_entity": r["answer_entity"]})
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}.json").write_text(json.dumps(rows, ensure_ascii=False))
    s = res["summary"]["all"]
    print(f"{name}: {len(rows)} questions, chain Hits@1 {s['chain_hits1']}, "
          f"{sum(len(x['cands']) for x in rows)} candidates, {time.time() - t0:.0f} s", flush=True)


def _questions(cfg: KGQAConfig) -> list[dict[str, Any]]:
    from tog_core.bench.kgqa import load_questions, load_questions_file, select
    qs = load_questions_file(Path(cfg.questions)) if cfg.questions else load_questions(Path(cfg.data_dir), cfg.split)
    return select(qs, cfg.limit)
