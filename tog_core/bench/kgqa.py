"""`python -m tog_core bench kgqa DATA_DIR` — retrieval benchmark on a KGQA split (MetaQA-style).

DATA_DIR holds entities.parquet, relationships.parquet and questions_<split>.jsonl (one JSON object a
line: `question`, `topic_entities` (exact titles), `answers` (titles), `hops`, optional `id`).
For each question the engine starts at its topic entities and searches to depth = its `hops` (or
--depth). Metrics, per hop level and overall (summed and printed by report.py):

* beam recall   — a gold answer is among the end entities of the final beam;
* chain Hits@1  — the best chain ends in a gold answer;
* answer Hits@1 — only when an LLM wrote the answer: a gold answer string occurs in it,
  case-insensitive (ToG's lenient match); `None` when no answer was written by an LLM;
* Hits@3        — a gold answer among the first 3 `candidates` (the answer, then the other chains' end entities);
* candidate recall — a gold answer anywhere among the `candidates`: the ceiling of the answer ranking (beam recall
  reads the final beam's chain ends only; the candidates also hold every entity on a kept chain of every depth trial);
* AUROC, wrong / right flagged — how well `confidence` separates right answers (chain Hits@1) from wrong ones,
  and the share of each below `low_confidence` (shown as a guess); tog_core/bench/measures.py;
* mean LLM calls / sequential rounds / tokens per question, and seconds per question.

The graph is loaded once; questions run one after another (or `--concurrency` at a time). LLM-free
pruners are deterministic (random is seeded), so the same command gives the same numbers, timings
aside.
"""
from __future__ import annotations

import asyncio
import json
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any
from collections.abc import Callable

from tog_core.bench.measures import answer_candidates, hits_at
from tog_core.bench.report import QuestionResult, summarize
from tog_core.errors import UsageError
from tog_core.policy import depths
from tog_core.reading import readers
from tog_core.tog.policy import LOW_CONFIDENCE

# how the benchmark reads each question (--reader; None: as the app and `query` do, the LLM with a provider's model
# outside the paper's run, else the rules): by the wording rules, by one LLM call, or as the data set says (its hops,
# answer type and relation path: what a perfect reading is worth)
READERS = ("rules", "llm", "gold")


def load_questions(data_dir: Path, split: str) -> list[dict[str, Any]]:
    """The questions of `questions_<split>.jsonl`; bad lines are a usage error naming the line."""
    path = Path(data_dir) / f"questions_{split}.jsonl"
    if not path.is_file():
        found = sorted(p.name for p in Path(data_dir).glob("questions_*.jsonl")) if Path(data_dir).is_dir() else []
        hint = f"found: {', '.join(found)}" if found else "no questions_*.jsonl in that folder"
        raise UsageError(f"{path} does not exist ({hint}); pass --split NAME for questions_NAME.jsonl")
    return load_questions_file(path, split)


def load_questions_file(path: Path, split: str = "q") -> list[dict[str, Any]]:
    if not path.is_file():
        raise UsageError(f"{path} does not exist; give a .jsonl file of questions")
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            q = json.loads(line)
            q["question"], q["topic_entities"], q["answers"] = str(q["question"]), list(q["topic_entities"]), \
                [str(a) for a in q["answers"]]
            q["hops"] = int(q.get("hops", 1))
        except (json.JSONDecodeError, KeyError, TypeError, ValueError) as err:
            raise UsageError(f"{path}:{n} is not a question object with question, topic_entities, answers "
                               f"({err.__class__.__name__}: {str(err)[:80]}); fix or remove that line") from None
        q.setdefault("id", f"{split}-{n}")
        out.append(q)
    return out


def select(questions: list[dict[str, Any]], limit: int | None) -> list[dict[str, Any]]:
    """The first `limit` questions taken round-robin over hop levels (file order within a level), so a
    small limit still covers every level; all of them (in file order) without a limit."""
    if limit is None or limit >= len(questions):
        return list(questions)
    levels: dict[int, list[dict[str, Any]]] = {}
    for q in questions:
        levels.setdefault(q["hops"], []).append(q)
    picked: list[dict[str, Any]] = []
    k = 0
    while len(picked) < limit:
        for h in sorted(levels):
            if k < len(levels[h]) and len(picked) < limit:
                picked.append(levels[h][k])
        k += 1
    return picked


def answer_match(text: str, answers: list[str]) -> bool:
    """ToG's lenient match: a gold answer string occurs in the answer, case-insensitive."""
    low = text.lower()
    return any(a.lower() in low for a in answers if a.strip())


async def run_question(engine: Any, q: dict[str, Any], *, link: bool = False, reader: str = "rules",
                       clock: Callable[[], float] = time.perf_counter) -> QuestionResult:
    """One question: from its gold topic entities, or (link=True) from the entities linked from its text as the
    app and the CLI do. `reader`: how the question is read (`READERS`): "gold" reads it as the data set does (its
    hops, answer type and relation path over the rule reading; readers.gold) and searches exactly its hops."""
    graph = engine.graph
    gold = set(q["answers"])
    seeds = [t for t in q["topic_entities"] if graph.find_title(t) is not None]
    t0 = clock()
    if not seeds and not link:
        return QuestionResult(id=q["id"], hops=q["hops"], beam_hit=False, chain_hit=False, answer_hit=None,
                              stop_reason="no_seed", low_confidence=LOW_CONFIDENCE)
    if reader == "gold":
        start = await engine.start_async(q["question"], None if link else seeds)
        start = start.with_(reading=readers.gold(q, start.reading))
        if start.paths and not start.done:
            start = depths.chosen(start, min(start.reading.hops, engine.config.depth), by="the data set")
        state = await depths.run(engine, q["question"], state=start)
    else:
        state = await depths.run(engine, q["question"], seeds=None if link else seeds)
    linked = [s.title for s in state.seeds]
    wall = clock() - t0
    stats = engine.stats(state, wall_s=wall)
    ends = [graph.title(p.end) for p in state.paths if p.hops]
    ranked = engine.answer_candidates(state)  # the ordered answer list; the first is the entity the answer names
    choice = ranked[0] if ranked else None
    best_end = graph.title(choice.entity) if choice else None
    candidates = answer_candidates(engine, state, [graph.title(c.entity) for c in ranked])
    return QuestionResult(
        id=q["id"], hops=q["hops"], beam_hit=bool(gold & set(ends)), chain_hit=best_end in gold,
        answer_hit=answer_match(state.answer, q["answers"]) if state.answer_by == "llm" else None,
        ends=ends, answer_entity=best_end, stop_reason=state.stop_reason, llm_calls=stats["llm_calls"],
        llm_rounds=stats["llm_rounds"],
        tokens=stats["prompt_tokens"] + stats["completion_tokens"], cache_hits=stats["cache_hits"],
        wall_s=round(wall, 4), seeds=linked, link_hit=bool(set(linked) & set(q["topic_entities"])) if link else None,
        depth_reached=state.depth,
        gold_path_lost=gold_path_loss(graph, list(state.steps), q["relation_path"]) if q.get("relation_path") else None,
        candidates=candidates, hits3=hits_at(candidates, gold, 3),
        in_candidates=hits_at(candidates, gold, len(candidates)), confidence=choice.confidence if choice else None,
        low_confidence=choice.low if choice else LOW_CONFIDENCE,
        reading_by=state.reading.by if state.reading else "",
        reading_hops=state.reading.hops if state.reading else None)


def gold_path_loss(graph: Any, steps: list[Any], relation_path: list[str]) -> dict[str, Any] | None:
    """Where the gold relation path left the search: the first depth and stage at which no kept candidate followed
    that depth's gold relation (by label; MetaQA's " (inverse)" suffix ignored), with why: "never a candidate",
    "dropped" (a candidate, not kept) or "not reached" (the search stopped before that stage). None when every gold
    relation was kept at its depth."""
    for depth, rel in enumerate(relation_path, 1):
        rel = rel.removesuffix(" (inverse)")
        for stage in ("relations", "entities"):
            step = next((st for st in steps if st.depth == depth and st.stage == stage), None)
            if step is None and stage == "relations" and any(st.depth == depth for st in steps):
                continue  # fast mode scores (relation, entity) pairs in the entities stage only
            if step is None:
                return {"depth": depth, "stage": stage, "why": "not reached"}
            def labels(c: Any) -> set[str]:
                if c.kind == "relation":
                    return {c.relation or ""}
                idx = [graph.find_relationship(r) for r in c.relationship_ids]
                return set(graph.labels([i for i in idx if i is not None]))
            on_gold = [c for c in step.candidates if rel in labels(c)]
            if not on_gold:
                return {"depth": depth, "stage": stage, "why": "never a candidate"}
            if not any(c.kept for c in on_gold):
                return {"depth": depth, "stage": stage, "why": "dropped"}
    return None


@dataclass(kw_only=True)
class KGQAConfig:
    data_dir: str
    split: str = "dev"
    pruner: str | None = None  # None: auto, resolved by compose.plan as for `query` and the app
    entity_pruner: str | None = None  # None: same as pruner
    width: int = 3
    depth: int | None = None  # None: each question's hops
    limit: int | None = None
    model: str | None = None  # None: LLM-free unless an llm pruner is asked for
    api_base: str | None = None
    prefilter: str = "bm25"
    seed: int = 0
    concurrency: int | None = None  # None: 1 without an LLM, 4 with one
    mode: str = "faithful"  # or "fast": one pair-scoring call per depth
    questions: str | None = None  # a questions .jsonl elsewhere (demo/questions.jsonl); None: questions_<split>.jsonl
    baseline: str | None = None  # a second pruner run on the same questions in the same run (e.g. random)
    baseline_seeds: int = 1  # the baseline runs with seeds seed, seed+1, …: its recall is the mean over them
    paper: bool = False  # every departure from the paper switched off
    without: tuple[str, ...] = ()  # departures switched off one by one
    link: bool = False  # topic entities linked from the question text (as the app does) instead of the given ones
    store: str | None = None  # read the graph from this PostgreSQL store (`store import` first)
    reader: str | None = None  # how each question is read: rules | llm | gold (READERS); None: as the app does
    name: str | None = None  # the graph's name in the store


def run_kgqa(cfg: KGQAConfig, *, say: Callable[[str], None] = lambda _t: None,
             engine_hook: Callable[[Any], None] | None = None, _loaded: tuple[Any, Any] | None = None
             ) -> dict[str, Any]:
    """The whole benchmark; returns {"config", "summary", "questions"} and, with `cfg.baseline`,
    "baseline" (the same questions with the baseline pruner, and our recall over its recall).
    `engine_hook(engine)` lets an experiment adjust each engine after it is built (bench scripts use it;
    the CLI does not)."""
    from tog_core.compose import RunSpec, build_engine, plan
    from tog_core.graphrag.open import open_graph
    from tog_core.scoring.scorers import SCORERS

    if cfg.reader is not None and cfg.reader not in READERS:
        raise UsageError(f"unknown --reader '{cfg.reader}'; choose one of: {', '.join(READERS)}")
    if cfg.baseline and cfg.baseline not in SCORERS:
        raise UsageError(f"unknown --baseline pruner '{cfg.baseline}'; choose one of: {', '.join(SCORERS)}")
    data_dir = Path(cfg.data_dir)
    questions = select(load_questions_file(Path(cfg.questions)) if cfg.questions else
                       load_questions(data_dir, cfg.split), cfg.limit)
    t_load = time.perf_counter()
    info, graph = _loaded or (None, None)
    if graph is None:
        info, graph = open_graph(str(data_dir), store=cfg.store, name=cfg.name)
        say(f"graph loaded in {time.perf_counter() - t_load:.1f} s; {len(questions)} questions")
    # one rule with `query` and the app: compose.plan resolves the model and what "auto" means. The only bench
    # default: with no --model and no llm pruner asked for, no LLM (not the project's configured one), so the same
    # command gives the same numbers on every machine
    asks_llm = cfg.model is not None or "llm" in (cfg.pruner, cfg.entity_pruner)
    spec = RunSpec(model=cfg.model if asks_llm else "none", api_base=cfg.api_base, trust_api_base=True,
                   width=cfg.width,
                   depth=cfg.depth or 1, relation_pruner=cfg.pruner, entity_pruner=cfg.entity_pruner,
                   prefilter=cfg.prefilter, mode=cfg.mode, seed=cfg.seed, paper=cfg.paper, without=tuple(cfg.without))
    planned = plan(spec, info, graph=graph)
    if cfg.reader == "llm" and planned.config.reader != "llm":
        raise UsageError("--reader llm needs a provider's model outside the paper's run (give --model, and a cheap "
                         "--pruner or --mode reading); the paper's LLM reads no question apart")
    if cfg.reader in ("rules", "gold"):  # the LLM reads no question: the rules do (gold: under the data set's)
        try:
            planned = replace(planned, config=replace(planned.config, reader="rules"))
        except ValueError as err:  # the reading mode is the LLM's reading
            raise UsageError(f"--reader {cfg.reader} with --mode {cfg.mode}: {err}") from None
    first = build_engine(planned, graph=graph, info=info)
    llm, embedder, choice = first.engine.llm, first.engine.embedder, first.choice
    pruner, ent_pruner = first.plan.config.relation_pruner, first.plan.config.entity_pruner
    engines: dict[int, Any] = {}

    def engine_for(depth: int) -> Any:
        if depth not in engines:
            try:
                config = replace(first.plan.config, depth=depth, exact_depth=cfg.depth is None)
            except ValueError as err:
                raise UsageError(str(err)) from None
            engines[depth] = build_engine(replace(first.plan, config=config), graph=graph, info=info, llm=llm,
                                          embedder=embedder).engine
            if engine_hook:
                engine_hook(engines[depth])
        return engines[depth]

    conc = cfg.concurrency or (1 if llm is None else 4)

    async def main() -> list[QuestionResult]:
        sem = asyncio.Semaphore(conc)
        done = 0

        async def one(q: dict[str, Any]) -> QuestionResult:
            nonlocal done
            async with sem:
                r = await run_question(engine_for(cfg.depth or q["hops"]), q, link=cfg.link,
                                       reader=cfg.reader or "rules")
            done += 1
            if done % 25 == 0 or done == len(questions):
                say(f"{done}/{len(questions)} questions")
            return r

        return list(await asyncio.gather(*(one(q) for q in questions)))

    t0 = time.perf_counter()
    try:
        rows = asyncio.run(main())
        total = time.perf_counter() - t0
        summary = summarize(rows)
        baseline = _baseline(cfg, summary, say=say, loaded=(info, graph)) if cfg.baseline else None
    finally:
        if _loaded is None:  # the graph this call opened (a PostgreSQL store holds connections)
            getattr(graph, "close", lambda: None)()
    config = {"data_dir": str(data_dir), "split": cfg.split, "pruner": pruner, "entity_pruner": ent_pruner,
              "prefilter": cfg.prefilter,
              "width": cfg.width, "depth": cfg.depth or "hops", "limit": cfg.limit, "model": choice.model,
              "seed": cfg.seed, "concurrency": conc, "mode": cfg.mode, "questions": cfg.questions,
              "policy": first.plan.policy, "departures": first.plan.config.departures(), "link": cfg.link,
              "reader": cfg.reader or first.plan.config.reader}
    result = {"config": config, "summary": summary, "wall_s": round(total, 2),
              "questions": [asdict(r) for r in rows]}
    if baseline is not None:
        result["baseline"] = baseline
    return result


def _baseline(cfg: KGQAConfig, ours: dict[str, Any], *, say: Callable[[str], None], loaded: tuple[Any, Any]
              ) -> dict[str, Any]:
    """The baseline pruner on the same questions and graph, once per seed; recall is the mean over seeds."""
    seeds = [cfg.seed + k for k in range(max(1, cfg.baseline_seeds))]
    per_seed: list[dict[str, Any]] = []
    for seed in seeds:
        say(f"baseline {cfg.baseline}, seed {seed}")
        base_cfg = replace(cfg, pruner=cfg.baseline, entity_pruner=None, seed=seed, baseline=None)
        r = run_kgqa(base_cfg, say=say, _loaded=loaded)
        per_seed.append({"seed": seed, "beam_recall": {k: m["beam_recall"] for k, m in r["summary"].items()}})
    levels = list(ours)
    mean = {lv: round(sum(p["beam_recall"][lv] or 0.0 for p in per_seed) / len(per_seed), 4) for lv in levels}
    ratio = {lv: (round(ours[lv]["beam_recall"] / mean[lv], 3) if mean[lv] else None) for lv in levels}
    return {"pruner": cfg.baseline, "seeds": seeds, "beam_recall": mean, "ratio": ratio, "per_seed": per_seed}
