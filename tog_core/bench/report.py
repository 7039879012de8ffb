"""What `bench kgqa` reports: one question's result (`QuestionResult`), the results summed per hop level and over
all questions (`summarize`; the metrics are described in kgqa.py), and the table the CLI prints (`format_table`).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tog_core.bench.measures import confidence_metrics

METRICS = ("beam_recall", "chain_hits1", "answer_hits1", "link_hits", "max_depth_stops", "llm_calls", "llm_rounds",
           "tokens", "s_per_q", "hits3", "candidate_recall", "auroc", "wrong_flagged", "right_flagged",
           "reading_hops_right", "read_by")


@dataclass(kw_only=True)
class QuestionResult:
    id: str
    hops: int
    beam_hit: bool
    chain_hit: bool
    answer_hit: bool | None  # None: no LLM wrote the answer
    ends: list[str] = field(default_factory=list)  # end entities of the final beam, best first
    answer_entity: str | None = None  # the entity the answer names (what chain Hits@1 scores)
    stop_reason: str | None = None
    llm_calls: int = 0
    llm_rounds: int = 0
    tokens: int = 0
    cache_hits: int = 0
    wall_s: float = 0.0
    seeds: list[str] = field(default_factory=list)  # the topic entities the search started from
    link_hit: bool | None = None  # --link: a gold topic entity is among the linked ones (None: gold seeds given)
    depth_reached: int = 0
    gold_path_lost: dict[str, Any] | None = None  # questions with a relation_path: where it left the search
    candidates: list[str] = field(default_factory=list)  # the ordered answer list shown: the answer first
    hits3: bool = False  # a gold answer among the first 3 candidates
    in_candidates: bool = False  # a gold answer anywhere among the candidates: what a better ranking could reach
    confidence: float | None = None  # the answer's confidence (None: no answer)
    low_confidence: float | None = None  # the threshold below which the answer is shown as a guess
    reading_by: str = ""  # who read the question (rules, llm; "" when nothing was read)
    reading_hops: int | None = None  # the hops the reading says the question chains


def summarize(rows: list[QuestionResult]) -> dict[str, dict[str, Any]]:
    """Metrics per hop level ("1", "2", ...) and over all questions ("all")."""
    groups: dict[str, list[QuestionResult]] = {}
    for r in rows:
        groups.setdefault(str(r.hops), []).append(r)
    out = {h: _metrics(groups[h]) for h in sorted(groups, key=int)}
    out["all"] = _metrics(rows)
    return out


def _metrics(rows: list[QuestionResult]) -> dict[str, Any]:
    n = len(rows)
    if n == 0:
        return {"n": 0, **{m: None for m in METRICS}}
    answered = [r.answer_hit for r in rows if r.answer_hit is not None]
    linked = [r.link_hit for r in rows if r.link_hit is not None]
    read = [r for r in rows if r.reading_hops is not None]

    def mean(xs: list[float]) -> float:
        return round(sum(xs) / len(xs), 4)

    return {
        "n": n,
        "beam_recall": mean([float(r.beam_hit) for r in rows]),
        "chain_hits1": mean([float(r.chain_hit) for r in rows]),
        "answer_hits1": mean([float(a) for a in answered]) if answered else None,
        "link_hits": mean([float(a) for a in linked]) if linked else None,
        "max_depth_stops": mean([float(r.stop_reason == "max_depth") for r in rows]),
        "gold_path_lost": _losses(rows),
        "llm_calls": mean([r.llm_calls for r in rows]),
        "llm_rounds": mean([r.llm_rounds for r in rows]),
        "tokens": mean([r.tokens for r in rows]),
        "s_per_q": mean([r.wall_s for r in rows]),
        "hits3": mean([float(r.hits3) for r in rows]),
        "candidate_recall": mean([float(r.in_candidates) for r in rows]),
        # how often the reading's number of hops is the question's, and who read (the LLM reader's accuracy)
        "reading_hops_right": mean([float(r.reading_hops == r.hops) for r in read]) if read else None,
        "read_by": dict(sorted(Counter(r.reading_by for r in read).items())) if read else None,
        **confidence_metrics(rows),
    }


def _losses(rows: list[QuestionResult]) -> dict[str, int]:
    """How many gold relation paths left the search where: {"depth 2 relations: dropped": 5, ...}."""
    out: dict[str, int] = {}
    for r in rows:
        if r.gold_path_lost:
            key = f"depth {r.gold_path_lost['depth']} {r.gold_path_lost['stage']}: {r.gold_path_lost['why']}"
            out[key] = out.get(key, 0) + 1
    return dict(sorted(out.items()))


def format_table(result: dict[str, Any]) -> str:
    c = result["config"]
    ent = f"/{c['entity_pruner']}" if c.get("entity_pruner", c["pruner"]) != c["pruner"] else ""
    source = Path(c["questions"]).name if c.get("questions") else f"{Path(c['data_dir']).name}/{c['split']}"
    seeds = "linked from the question" if c.get("link") else "gold topic entities"
    head = (f"kgqa {source}: pruner={c['pruner']}{ent} width={c['width']} depth={c['depth']} "
            f"mode={c.get('mode', 'faithful')} model={c['model']} seeds={seeds}; {result['summary']['all']['n']} "
            f"questions in {result['wall_s']:.1f} s")
    cols = ["hops", "n", "beam recall", "chain Hits@1", "Hits@3", "cand. recall", "AUROC", "wrong flagged",
            "right flagged", "answer Hits@1", "link hits", "max-depth", "LLM calls", "rounds", "tokens", "s/q"]
    lines = [head, "  ".join(f"{x:>13}" if i > 1 else f"{x:>4}" for i, x in enumerate(cols))]

    def cell(v: Any, fmt: str) -> str:
        return f"{'-':>13}" if v is None else f"{v:>13{fmt}}"

    for level, m in result["summary"].items():
        lines.append(f"{level:>4}  {m['n']:>4}  " + "  ".join([
            cell(m["beam_recall"], ".3f"), cell(m["chain_hits1"], ".3f"), cell(m.get("hits3"), ".3f"),
            cell(m.get("candidate_recall"), ".3f"), cell(m.get("auroc"), ".3f"), cell(m.get("wrong_flagged"), ".3f"),
            cell(m.get("right_flagged"), ".3f"), cell(m["answer_hits1"], ".3f"),
            cell(m.get("link_hits"), ".3f"), cell(m.get("max_depth_stops"), ".3f"), cell(m["llm_calls"], ".1f"),
            cell(m["llm_rounds"], ".1f"), cell(m["tokens"], ".0f"),
            cell(m["s_per_q"], ".3f")]))
    whole = result["summary"]["all"]
    if set(whole.get("read_by") or {}) - {"rules"}:  # another reader was asked (the LLM's: the reading mode)
        by = ", ".join(f"{k} {v}" for k, v in whole["read_by"].items())
        lines.append(f"question reading ({by}): hops right {whole['reading_hops_right']:.3f}")
    for level, m in result["summary"].items():
        if m.get("gold_path_lost"):
            lines.append(f"gold relation path lost, {level} hops: " + "; ".join(
                f"{k} {v}" for k, v in m["gold_path_lost"].items()))
    base = result.get("baseline")
    if base:
        seeds = base["seeds"]
        which = f"seed {seeds[0]}" if len(seeds) == 1 else f"mean of seeds {seeds[0]}–{seeds[-1]}"
        lines.append(f"baseline {base['pruner']} ({which}), beam recall: " + "  ".join(
            f"{lv} {v:.3f}" for lv, v in base["beam_recall"].items()))
        if len(seeds) > 1:
            lines.append("  per seed, all: " + "  ".join(f"{p['beam_recall']['all']:.3f}" for p in base["per_seed"]))
        lines.append(f"{c['pruner']} / {base['pruner']}: " + "  ".join(
            f"{lv} {'-' if v is None else f'{v:.2f}×'}" for lv, v in base["ratio"].items()))
    return "\n".join(lines)
