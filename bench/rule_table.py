"""Every question-wording rule and word list measured off, on every dev set: writes docs/rules.md and prints it.

    python bench/rule_table.py [--rules NAME ...] [--sets NAME ...] [--held-out] [--no-write]

Each rule in RULES is switched off for one run of every set (scoring/rules.py for the word lists and wording rules,
a CheapPolicy attribute for the policy switches) and compared with the run with everything on, question by question:
a cell is `net/changed`, the correct answers with the rule on minus those with it off, and how many questions got
another answer (`.` when none did). Runs as the app runs (`tog_core.bench.kgqa.run_kgqa`): the GraphRAG sets and
MetaQA from linked topic entities with a maximum depth of 3, PathQuestion from its gold topic entities at each
question's own depth (as its numbers are reported), the rule-based answer (`answer_model` off, so the rules are
measured on the search, not on the fitted ranker). MetaQA's dev split (all 300) is read per hop level.

The verdict: `remove` when a rule changes no question anywhere, or when it helps no set but the ones it was read
from (net <= 0 on every other set), unless switching it off costs MetaQA (any hop) or PathQuestion more than one
question (`keep: typed`). `--held-out` adds the Christmas Carol held-out split as a column (the lead runs it once,
at the end); the verdict never reads it. The blind sets are never read here.

Results are cached per (rule, set) under $TOG_HOME/cache/rule-table/, keyed by the source of tog_core, so a rerun of
unchanged code only prints.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dev_sets import DATA, GR, PQ, ROOT  # first: makes tog_core importable

from tog_core.bench.kgqa import KGQAConfig, run_kgqa  # noqa: E402
from tog_core.home import tog_home  # noqa: E402
from tog_core.scoring import rules  # noqa: E402

CC = ROOT / "bench/data/christmas-carol"
CC12 = ROOT / "bench/data/christmas-carol-v1.2"


@dataclass(frozen=True)
class DataSet:
    graph: Path
    questions: Path | None  # None: the graph folder's questions_dev.jsonl
    link: bool  # linked topic entities (the app's way) or the gold ones
    depth: int | None  # a maximum depth, or None: each question's own hops
    columns: tuple[str, ...]  # one column, or one per hop level (MetaQA)


SETS: dict[str, DataSet] = {
    "demo": DataSet(ROOT / "demo/output", ROOT / "demo/questions.jsonl", True, 3, ("demo",)),
    "cc": DataSet(GR / "christmas-carol-v3/output", CC / "questions_dev.jsonl", True, 3, ("cc",)),
    "cc2": DataSet(GR / "christmas-carol-v3/output", CC / "questions_dev2.jsonl", True, 3, ("cc2",)),
    "dulce": DataSet(GR / "operation-dulce-v3/output", ROOT / "bench/data/operation-dulce/questions_dev.jsonl", True,
                     3, ("dulce",)),
    "fr": DataSet(ROOT / "bench/data/fr-atelier/output", ROOT / "bench/data/fr-atelier/questions_dev.jsonl", True, 3,
                  ("fr",)),
    "zh": DataSet(ROOT / "bench/data/zh-chayuan/output", ROOT / "bench/data/zh-chayuan/questions_dev.jsonl", True, 3,
                  ("zh",)),
    "metaqa": DataSet(DATA / "kgqa/metaqa", None, True, 3, ("mqa1", "mqa2", "mqa3")),
    "pq2": DataSet(PQ / "PQ-2H", None, False, None, ("pq2",)),
    "pq3": DataSet(PQ / "PQ-3H", None, False, None, ("pq3",)),
    "pql2": DataSet(PQ / "PQL-2H", None, False, None, ("pql2",)),
    "pql3": DataSet(PQ / "PQL-3H", None, False, None, ("pql3",)),
}
# PathQuestion as the app would run it (linked topic entities, a maximum depth of 3): the hop-count rules read from it
# act only here (with gold seeds the depth is known). Not in the default table: `--sets pq2-linked ...`
LINKED = {f"{n}-linked": DataSet(PQ / d, None, True, 3, (f"{n}-linked",))
          for n, d in (("pq2", "PQ-2H"), ("pq3", "PQ-3H"), ("pql2", "PQL-2H"), ("pql3", "PQL-3H"))}
# the dev sets written after the table was first measured (not in the default table: `--sets cc3 cc12 cc12b`)
LATER = {"cc3": DataSet(GR / "christmas-carol-v3/output", CC / "questions_dev3.jsonl", True, 3, ("cc3",)),
         "cc12": DataSet(GR / "christmas-carol-v1.2/output", CC12 / "questions_dev.jsonl", True, 3, ("cc12",)),
         "cc12b": DataSet(GR / "christmas-carol-v1.2/output", CC12 / "questions_dev2.jsonl", True, 3, ("cc12b",))}
HELD_OUT = {"cc-test": DataSet(GR / "christmas-carol-v3/output", CC / "questions_test.jsonl", True, 3, ("cc-test",))}
TYPED = ("mqa1", "mqa2", "mqa3", "pq2", "pq3", "pql2", "pql3", "pq2-linked", "pq3-linked", "pql2-linked",
         "pql3-linked")
HEADS = {"demo": "demo", "cc": "CC dev", "cc2": "CC dev2", "dulce": "Dulce", "fr": "fr", "zh": "zh",
         "mqa1": "MQA-1", "mqa2": "MQA-2", "mqa3": "MQA-3", "pq2": "PQ-2H", "pq3": "PQ-3H", "pql2": "PQL-2H",
         "pql3": "PQL-3H", "cc-test": "CC held-out", "pq2-linked": "PQ-2H linked", "pq3-linked": "PQ-3H linked",
         "pql2-linked": "PQL-2H linked", "pql3-linked": "PQL-3H linked", "cc3": "CC dev3", "cc12": "CC 1.2 dev",
         "cc12b": "CC 1.2 dev2"}
MQA = ("mqa1", "mqa2", "mqa3")
PQS = ("pq2", "pq3", "pql2", "pql3")


@dataclass(frozen=True)
class Rule:
    name: str  # the name its sites ask scoring/rules.on() about, or a CheapPolicy attribute (switch=True)
    where: str
    read_from: tuple[str, ...]  # columns (see SETS) whose questions it was read from, per its comment or git log -S
    source: str  # the commit (or comment) that says so
    switch: bool = False  # a CheapPolicy attribute, not a word-list rule


RULES: tuple[Rule, ...] = (
    Rule("film_nouns_stop", "languages: generic_nouns in the stop words", MQA, "comment: a film graph's questions"),
    Rule("film_nouns_type", "question._type_words keeps generic_nouns (film); type_words MOVIE", MQA, "2db7edd"),
    Rule("fr_stop_extra", "languages: extra_stop_words (fr: a, quel, où, ... added to bm25s's list)", ("fr",),
         "60ed338"),
    Rule("bands_by_question_word", "question.question_split: far band by the question word (languages: question_words)",
         MQA, "c2c476f"),
    Rule("bands_from_phrases", "QuestionReading.bands: one hop_phrases phrase per hop", PQS, "382fef4"),
    Rule("framing_words", "languages: framing in question._relation_word (name, list, called)", ("cc",), "1a8f8a5"),
    Rule("asking_noun_is_type", "question._relation_word: the noun after which/what is no relation", MQA, "c15e7e9"),
    Rule("verb_after_asking", "languages: verb_after_asking ('what killed the ...')", ("pq2",), "5569fdc"),
    Rule("named_type", "question.asked_type: the noun after which/what names the type", ("cc",), "e7d5a3a"),
    Rule("asks_for", "languages: asks_for (who -> person, where -> place, ...)", ("cc",), "a24e831"),
    Rule("auxiliaries", "languages: auxiliaries ('what are the genres')", ("cc",), "e7d5a3a"),
    Rule("kind_words", "languages: kind_words ('what types are the films')", MQA, "78734e0"),
    Rule("type_words", "languages: type_words (merchant, town, guild, ... per GraphRAG type)", ("cc",), "e7d5a3a"),
    Rule("time_words", "languages: time_words in the type words", ("cc",), "3efd83b"),
    Rule("attribute_after_asking", "languages: copulas, hops._attribute_after_asking ('which T is X 's R')",
         ("pq2", *MQA), "2aa0abf, 78734e0"),
    Rule("do_support", "languages: do_support, hops.expected_hops ('where does X 's R <verb>')", ("pq2",), "2aa0abf"),
    Rule("title_before_name", "hops._names_the_topic ('le capitaine Jules Caradec')", ("fr", "cc"), "8b8da25"),
    Rule("recurs_hops", "languages: recurs (also/share: one hop more)", MQA, "c15e7e9"),
    Rule("relation_phrases", "readers.relation_names ('place of birth' read as one word)", ("pq2",), "9611ea2"),
    Rule("relative_wh", "question.asked_type: who/where/qui … after a content word opens a relative clause ('the "
         "dealer who …; which garment')", ("cc3", "dulce"), "2026-11-29, misranked dev answers"),
    Rule("hop_focus", "CheapPolicy.hop_focus", MQA, "06aba3b", switch=True),
    Rule("lookahead", "CheapPolicy.lookahead", MQA, "comment", switch=True),
    Rule("type_templates", "CheapPolicy.type_templates", MQA, "comment", switch=True),
    Rule("plan_hops", "CheapPolicy.plan_hops (expected_hops)", MQA, "c15e7e9", switch=True),
    Rule("type_gate", "CheapPolicy.type_gate", (*MQA, "cc"), "bec90bd", switch=True),
    Rule("neighbour_evidence", "CheapPolicy.neighbour_evidence", ("cc", "fr", "zh", "demo"), "ed252fb", switch=True),
    Rule("stop_when_nothing_ahead", "CheapPolicy.stop_when_nothing_ahead", ("cc", "fr"), "comment", switch=True),
    Rule("try_depths", "CheapPolicy.try_depths", ("cc", "cc2", "dulce"), "comment", switch=True),
)
BASE = "(all on)"


def code_key() -> str:
    """A hash of tog_core's source and language tables: cached results are reused only for the same code and words
    (change how a set is run here and delete the cache)."""
    h = hashlib.sha256()
    for p in sorted([*(ROOT / "tog_core").rglob("*.py"), *(ROOT / "tog_core").rglob("*.toml")]):
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


@contextmanager
def rule_off(rule: Rule | None) -> Iterator[None]:
    with (rules.switched_off(rule.name) if rule is not None and not rule.switch else nullcontext()):
        yield


def run_set(name: str, ds: DataSet, rule: Rule | None, loaded: dict[Path, Any], cache: Path) -> dict[str, dict]:
    """{question id: {"hit", "answer", "hops"}} for one set with `rule` off (None: everything on)."""
    f = cache / f"{BASE if rule is None else rule.name}.{name}.json"
    if f.exists():
        return json.loads(f.read_text())
    from tog_core.graphrag.open import open_graph

    if ds.graph not in loaded:
        loaded[ds.graph] = open_graph(str(ds.graph))

    def hook(engine: Any) -> None:
        engine.policy.answer_model = False  # the rule-based answer: the ranker is measured on its own
        if rule is not None and rule.switch:
            setattr(engine.policy, rule.name, False)

    cfg = KGQAConfig(data_dir=str(ds.graph), questions=str(ds.questions) if ds.questions else None, link=ds.link,
                     depth=ds.depth)
    with rule_off(rule):
        res = run_kgqa(cfg, engine_hook=hook, _loaded=loaded[ds.graph])
    out = {q["id"]: {"hit": q["chain_hit"], "answer": q["answer_entity"], "hops": q["hops"]} for q in res["questions"]}
    f.write_text(json.dumps(out, ensure_ascii=False))
    return out


def column_of(name: str, ds: DataSet, q: dict[str, Any]) -> str:
    return ds.columns[q["hops"] - 1] if len(ds.columns) > 1 else ds.columns[0]


def compare(name: str, ds: DataSet, on: dict[str, dict], off: dict[str, dict]) -> dict[str, tuple[int, int]]:
    """Per column: (correct with the rule on minus with it off, questions answered otherwise)."""
    out: dict[str, tuple[int, int]] = {c: (0, 0) for c in ds.columns}
    for qid, a in on.items():
        b = off[qid]
        col = column_of(name, ds, a)
        net, changed = out[col]
        out[col] = (net + int(a["hit"]) - int(b["hit"]), changed + int(a["answer"] != b["answer"]))
    return out


def verdict(rule: Rule, cells: dict[str, tuple[int, int]]) -> str:
    """keep / remove, and why (the held-out column is never read here)."""
    dev = {c: v for c, v in cells.items() if c != "cc-test"}
    if not any(ch for _, ch in dev.values()):
        return "remove: changes no question"
    typed_cost = [c for c in TYPED if c in dev and dev[c][0] > 1]
    others = [c for c in dev if c not in rule.read_from]
    if all(dev[c][0] <= 0 for c in others):
        if typed_cost:
            return f"keep (typed): off costs {', '.join(f'{HEADS[c]} {dev[c][0]}' for c in typed_cost)}"
        own = sum(dev[c][0] for c in rule.read_from if c in dev)
        return f"remove: helps only where read ({own:+d} there)" if own > 0 else "remove: helps no set"
    return "keep"


def table(results: dict[str, dict[str, tuple[int, int]]], columns: list[str], verdicts: dict[str, str],
          base: dict[str, tuple[int, int]]) -> str:
    head = ["rule", "read from", *[HEADS[c] for c in columns], "changed", "verdict"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines.append("| " + " | ".join(["(all on: correct / questions)", ""] + [f"{base[c][0]}/{base[c][1]}"
                                                                           for c in columns] + ["", ""]) + " |")
    for rule in RULES:
        if rule.name not in results:
            continue
        cells = results[rule.name]
        row = [f"`{rule.name}`<br>{rule.where}", ", ".join(HEADS[c] for c in rule.read_from) + f" ({rule.source})"]
        for c in columns:
            net, ch = cells.get(c, (0, 0))
            mark = "**" if c in rule.read_from and ch else ""
            row.append("." if not ch else f"{mark}{net:+d}/{ch}{mark}")
        row += [str(sum(ch for c, (_, ch) in cells.items() if c != "cc-test")), verdicts[rule.name]]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


PAGE = """# Each wording rule measured

Every question-wording rule, word list and LLM-free policy switch, switched off one at a time on every dev set.
A cell is `net/changed`: correct answers (chain Hits@1, the rule-based answer) with the rule on minus with it off,
and how many questions got another answer; `.` when none did; bold where the rule was read from (per its comment or
`git log -S`). GraphRAG sets and MetaQA (300 dev questions, per hop level) from linked topic entities with a maximum
depth of 3 (the app's default); PathQuestion from its gold topic entities at each question's depth. A rule that changes
no question, or helps only the sets it was read from (net <= 0 everywhere else), is removed unless switching it off
costs MetaQA or PathQuestion more than one question. What was removed: [llm-free-policy.md](llm-free-policy.md).

The word lists are data, one file per language: [tog_core/scoring/languages/](../tog_core/scoring/languages/README.md)
(its README maps each `text.X` / `hops.X` named in older tables to its table). Each rule has one test row,
`tests/test_rule_rows.py`: an input it acts on, read with the rule on and with it off.

Command: `python bench/rule_table.py` ({n} rules; `--held-out` adds the Christmas Carol held-out split, run once by
the lead at the end; the verdict never reads it).

{table}
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rules", nargs="*", help="only these rules (default: all)")
    ap.add_argument("--sets", nargs="*",
                    help=f"only these sets (default: {', '.join(SETS)}; also {', '.join([*LATER, *LINKED])})")
    ap.add_argument("--held-out", action="store_true", help="add the Christmas Carol held-out split (run it once)")
    ap.add_argument("--no-write", action="store_true", help="print the table, leave docs/rules.md alone")
    args = ap.parse_args()
    known = {r.name for r in RULES}
    bad = [r for r in args.rules or () if r not in known]
    if bad:
        ap.error(f"unknown rule(s) {', '.join(bad)}; choose from: {', '.join(sorted(known))}")
    every = {**SETS, **LATER, **LINKED}
    bad = [n for n in args.sets or () if n not in every]
    if bad:
        ap.error(f"unknown set(s) {', '.join(bad)}; choose from: {', '.join(every)}")
    sets = {n: every[n] for n in (args.sets or SETS)}
    if args.held_out:
        sets.update(HELD_OUT)
    chosen = [r for r in RULES if not args.rules or r.name in args.rules]
    cache = tog_home() / "cache" / "rule-table" / code_key()
    cache.mkdir(parents=True, exist_ok=True)
    loaded: dict[Path, Any] = {}
    base_runs = {n: run_set(n, ds, None, loaded, cache) for n, ds in sets.items()}
    base: dict[str, tuple[int, int]] = {}
    for n, ds in sets.items():
        for q in base_runs[n].values():
            c = column_of(n, ds, q)
            right, total = base.get(c, (0, 0))
            base[c] = (right + int(q["hit"]), total + 1)
    results: dict[str, dict[str, tuple[int, int]]] = {}
    for rule in chosen:
        t = time.perf_counter()
        cells: dict[str, tuple[int, int]] = {}
        for n, ds in sets.items():
            cells.update(compare(n, ds, base_runs[n], run_set(n, ds, rule, loaded, cache)))
        results[rule.name] = cells
        print(f"{rule.name}: {time.perf_counter() - t:.0f} s", file=sys.stderr, flush=True)
    columns = [c for ds in sets.values() for c in ds.columns]
    verdicts = {r: verdict(next(x for x in RULES if x.name == r), cells) for r, cells in results.items()}
    text = table(results, columns, verdicts, base)
    print(text)
    if not args.no_write and not args.rules and not args.sets:
        page = PAGE.format(n=len(chosen), table=text)
        (ROOT / "docs" / "rules.md").write_text(page, encoding="utf-8")


if __name__ == "__main__":
    main()
