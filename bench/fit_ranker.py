"""Fit the answer ranker (tog_core/policy/ranking.py) on every data set's dev questions, leave-one-data-set-out.

    python bench/fit_ranker.py dump [SET ...]     # run the app's default search on each dev set, keep the features
    python bench/fit_ranker.py fit                # LODO table (Hits@1/@3, AUROC, guesses flagged), no file written
    python bench/fit_ranker.py fit --write        # ... and write the model fitted on all sets to ranker.json
    python bench/fit_ranker.py fit --write=free   # ... writing only the free-text model; the typed one stays as shipped
    python bench/fit_ranker.py fit --without=a,b  # the LODO table without these ranking features
    python bench/fit_ranker.py fit --unsigned     # ... with no weight held at zero or above (below)
    python bench/fit_ranker.py fit --balanced     # ... the guess threshold by the best balance (the rule before)
    python bench/fit_ranker.py fit --crossfit     # ... the confidence and threshold fitted on rankings left out

`dump` runs each set as the app and the CLI do (GraphRAG and MetaQA: linked topic entities, depth 3; PathQuestion:
its gold topic entities at the question's depth, as its numbers are reported) and stores, per question, every
answer candidate with its features (CheapPolicy.answer_features) and whether it is a gold answer, under
$TOG_HOME/cache/ranker-features/. Features do not depend on the weights, so one dump serves every fit. Dev sets
and, outside the fit (OUTSIDE), the hub dev sets and the spent blind sets (dev_sets.SPENT): `dump` with no set names
dumps them too, and `fit` scores them with the model fitted on every dev set. The Christmas Carol held-out split, the
first blind set and the unread blind sets are never read here.

`fit` fits a conditional logit (a softmax over each question's candidates, L2-regularised, every data set weighted
equally) on all sets but one and scores the one left out; the guess threshold is chosen on the training sets (the
probability nearest issue #21's operating point: at least 70% of wrong answers flagged as guesses and at most 25% of
right ones, the larger shortfall the smallest) and applied to the left-out set. In the free-text
family the weights of the features whose direction is known before any data (agreement, similarity, type fit,
coverage, the source passage, the description's opening: ranking.AT_LEAST_ZERO) are held at zero or above; the typed
model was fitted without that, and without `passage_words`, `asked_head` and `title_named` (UNUSED), and is kept as
shipped (`fit --write=free`).
"""
from __future__ import annotations

import json
import sys
from dataclasses import replace
from collections.abc import Sequence
from typing import Any

import numpy as np

from dev_sets import ROOT, SPENT  # first: makes tog_core importable
import fit_dump  # noqa: E402
import fit_model  # noqa: E402
from fit_dump import SETS  # noqa: E402,F401  (SETS: bench/agreement.py reads it here)
from fit_model import fit_ranking  # noqa: E402,F401  (tests read it here)
from fit_tables import calibration, print_row, print_total  # noqa: E402,F401  (calibration: tests read it here)

from tog_core.bench.kgqa import KGQAConfig  # noqa: E402
from tog_core.bench.measures import auroc  # noqa: E402
from tog_core.home import tog_home  # noqa: E402
from tog_core.policy import ranking  # noqa: E402

OUT = tog_home() / "cache" / "ranker-features"
# one model per kind of graph: free-text relations (GraphRAG) and typed relations; the typed model keeps the rule
# choice first (rule_first), the ranking having lost to it there when left out (MetaQA 0.887 -> 0.833)
FAMILIES = {"free": (["demo", "cc", "cc2", "cc3", "dulce", "cc12", "cc12b", "fr", "zh"], False),
            "typed": (["metaqa", "pq2", "pq3", "pql2", "pql3"], True)}
# per family, the sets `fit` scores with the model fitted on all of the family's sets, never fitted on: the two hub dev
# sets and the blind sets read at earlier stops' ends (dev_sets.SPENT). Fitting on them too was measured and lost
# first answers (docs/experiment-log.md, thirteenth stop); they tell whether a change carries beyond the fit's sets
OUTSIDE: dict[str, list[str]] = {"free": ["cchub", "cc12hub", *SPENT], "typed": []}


# ---------------------------------------------------------------------------------------------------------- fit
def load(names: list[str], features: Sequence[str]) -> dict[str, list[tuple[np.ndarray, np.ndarray]]]:
    """The dumped sets among `names`, each question's candidates as a matrix of `features` and their gold flags. Exits
    when a dump lacks one of `features` (read as 0 it would be fitted a weight of 0 without a word)."""
    out = {}
    for n in names:
        f = OUT / f"{n}.json"
        if not f.exists():
            continue
        qs = json.loads(f.read_text())
        dumped = {k for q in qs for c in q["cands"] for k in c["features"]}
        if stale := [x for x in features if x != "bias" and dumped and x not in dumped]:
            sys.exit(f"the dump of {n} has no {', '.join(stale)} (made before the feature existed); run "
                     f"`python bench/fit_ranker.py dump {n}` again")
        out[n] = [(ranking.design([c["features"] for c in q["cands"]], features),
                   np.array([c["gold"] for c in q["cands"]], dtype=bool)) for q in qs]
        RAW[n] = [[c["features"] for c in q["cands"]] for q in qs]
    return out


# the families whose ranking holds the weights of known direction at zero or above (`fit --unsigned`: none); the
# typed model was fitted without and is kept as shipped
SIGNED = {"free"}
# the ranking features a family's model leaves out (`fit --without=a,b` tries leaving more out, LODO; what was tried
# is in docs/experiment-log.md): the typed model was fitted before `passage_words`, `asked_head`, `title_named`,
# `desc_bm25` and `beam` existed (typed graphs have no descriptions for `asked_head` or `desc_bm25` to read, and no
# candidates found by description: policy/retrieval.py) and is kept as shipped
UNUSED: dict[str, frozenset[str]] = {"free": frozenset(),
                                     "typed": frozenset({"passage_words", "asked_head", "title_named", "desc_bm25",
                                                         "beam", "path_cover"})}
TARGET_WRONG: float | None = None  # `fit --target-wrong=0.7`: threshold by the share of wrong answers flagged
CROSSFIT = False  # `fit --crossfit`: the confidence and its threshold fitted on rankings that never saw the set
BALANCED = False  # `fit --balanced`: threshold by the best balance of wrong flagged and right not flagged
# issue #21's operating point (fit_model.GOAL_WRONG, GOAL_RIGHT): at least this share of wrong answers flagged as
# guesses, at most this share of right ones
GOAL_WRONG, GOAL_RIGHT = fit_model.GOAL_WRONG, fit_model.GOAL_RIGHT
SURE = ranking.SURE_FEATURES  # `fit --sure=a,b,c` tries a subset (what was tried: docs/experiment-log.md)
RAW: dict[str, list[list[dict[str, float]]]] = {}  # per set, per question: the candidates' features as dumped


def fit(sets: dict[str, list[tuple[np.ndarray, np.ndarray]]], rule_first: bool = False, *, signed: bool,
        features: Sequence[str]) -> ranking.Model:
    """The ranking (`signed`: the weights of ranking.AT_LEAST_ZERO held at zero or above), then the confidence fitted
    on its outcome, then the threshold, all on `sets`."""
    rank = _ranking(fit_ranking(sets, signed=signed, features=features), rule_first)
    # each set's ranking outcome as the confidence reads it: by the ranking fitted on all sets, or (cross-fitted) by a
    # ranking fitted without that set, as an unseen set's will be
    inner = {n: rank for n in sets}
    if CROSSFIT and len(sets) >= 3:
        inner = {n: _ranking(fit_ranking({m: v for m, v in sets.items() if m != n}, signed=signed, features=features),
                             rule_first) for n in sets}
    sure = fit_model.fit_sureness(inner, sets, RAW, SURE)
    low = threshold({n: replace(m, sure=sure) for n, m in inner.items()}, sets)
    return replace(rank, sure=sure, low=low)


def _ranking(fitted: ranking.Model, rule_first: bool) -> ranking.Model:
    """A fitted ranking as a model to read, with no confidence yet (threshold 0.5 until one is fitted)."""
    return replace(fitted, low=0.5, rule_first=rule_first)


def threshold(models: dict[str, ranking.Model], sets: dict[str, list[tuple[np.ndarray, np.ndarray]]]) -> float:
    """The guess threshold on `sets` (each set weighing the same), by default the issue's own operating point: the
    probability whose mean shares of wrong answers flagged and right answers flagged come nearest the goals (at least
    GOAL_WRONG, at most GOAL_RIGHT), the larger of the two shortfalls the smallest; ties go to the lower threshold
    (fewer right answers called guesses). `fit --balanced`: the best mean of wrong flagged and right not flagged (the
    rule shipped before); `fit --target-wrong=x`: the lowest flagging that share of wrong answers."""
    return pick_threshold([fit_model.tops(models[n], qs, RAW[n]) for n, qs in sets.items()])


def pick_threshold(per: Sequence[Sequence[tuple[float, bool, bool]]]) -> float:
    """`threshold` on each set's (confidence, right at 1, right within 3) per question, under this module's settings
    (TARGET_WRONG, BALANCED, GOAL_WRONG, GOAL_RIGHT): fit_model.pick_threshold."""
    return fit_model.pick_threshold(per, target_wrong=TARGET_WRONG, balanced=BALANCED, goal_wrong=GOAL_WRONG,
                                    goal_right=GOAL_RIGHT)


def report(name: str, model: ranking.Model, qs: list[tuple[np.ndarray, np.ndarray]], rule: float) -> dict[str, Any]:
    rows = fit_model.tops(model, qs, RAW[name])
    right = [p for p, h, _ in rows if h]
    wrong = [p for p, h, _ in rows if not h]
    n = len(rows)
    return {"set": name, "n": n, "rule@1": rule, "hits1": sum(h for _, h, _ in rows) / n,
            "hits3": sum(h3 for _, _, h3 in rows) / n, "auroc": auroc(right, wrong),
            "wrong_flagged": np.mean([p < model.low for p in wrong]) if wrong else None,
            "right_flagged": np.mean([p < model.low for p in right]) if right else None, "low": model.low,
            "tops": rows}


def rule_hits(name: str) -> float:
    qs = json.loads((OUT / f"{name}.json").read_text())
    return sum(bool(q["answer_entity"]) and q["answer_entity"] in set(q["answers"]) for q in qs) / len(qs)


def main_fit(write: bool, only: str | None = None) -> None:
    """The LODO table of every family; with `write`, ranker.json from the fits on all sets (`only`: that family's
    model only, every other family's model kept as the file has it)."""
    if only is not None and only not in FAMILIES:
        sys.exit(f"unknown family '{only}'; choose from: {', '.join(FAMILIES)}")
    print(f"confidence features: {', '.join(SURE)}")
    out = {}
    undumped: list[str] = []
    for family, (names, rule_first) in FAMILIES.items():
        features = tuple(f for f in ranking.FEATURES if f not in UNUSED[family])
        sets = load(names, features)
        missing = [n for n in names if n not in sets]
        if only in (None, family):
            undumped += missing
        if len(sets) < 2:  # leave-one-out needs two sets; no model can be fitted from none
            print(f"\n{family} graphs: dumped {', '.join(sets) or 'none'} of {', '.join(names)}; skipped (run "
                  f"`python bench/fit_ranker.py dump {' '.join(missing)}` first)")
            continue
        print(f"\n{family} graphs ({'the rule choice first' if rule_first else 'ranked'}), each set left out; "
              f"ranking features: {', '.join(features)}")
        print(f"{'left out':11} {'n':>4} {'rule@1':>7} {'hits@1':>7} {'hits@3':>7} {'auroc':>6} {'low':>5} "
              f"{'wrong fl':>8} {'right fl':>8}")
        signed = family in SIGNED
        rows = []
        for held in sets:
            model = fit({n: v for n, v in sets.items() if n != held}, rule_first, signed=signed, features=features)
            rows.append(report(held, model, sets[held], rule_hits(held)))
            print_row(rows[-1])
        print_total(rows)
        full = fit(sets, rule_first, signed=signed, features=features)
        outside: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {}
        for n in OUTSIDE[family]:  # a check only: a set that is not dumped, or dumped stale, is named and left out
            try:
                outside.update(load([n], features))
            except SystemExit as stale:
                print(f"outside the fit, left out: {stale}")
        if outside:
            print(f"outside the fit, scored by the model fitted on every set above (undumped: "
                  f"{', '.join(n for n in OUTSIDE[family] if n not in outside) or 'none'})")
            rows = [report(n, full, qs, rule_hits(n)) for n, qs in outside.items()]
            for r in rows:
                print_row(r)
            print_total(rows)
        print("ranking weights:", " ".join(f"{f}={w:+.2f}" for f, w in zip(full.features, full.weights)))
        print("confidence weights:", " ".join(f"{f}={w:+.2f}" for f, w in zip(full.sure.features,
                                                                              full.sure.weights)), f"low={full.low}")
        note = (f"fitted by bench/fit_ranker.py on the dev sets {', '.join(sets)} "
                f"({sum(len(v) for v in sets.values())} questions), each set weighing the same"
                + (", the weights of known direction held at zero or above" if signed else ""))
        out[family] = ranking.Model(features=full.features, weights=full.weights, mean=full.mean, scale=full.scale,
                                    low=full.low, sure=full.sure, rule_first=rule_first, note=note).to_dict()
    if write and only is not None:  # the other families keep the shipped model, said in the output
        if only not in out:
            sys.exit(f"not written: no model for {only} graphs; dump their sets")
        shipped = json.loads(ranking.MODEL_FILE.read_text(encoding="utf-8")) if ranking.MODEL_FILE.exists() else {}
        kept = {f: shipped[f] for f in FAMILIES if f != only and f in shipped}
        out = {f: out[f] if f == only else kept[f] for f in FAMILIES if f == only or f in kept}
        print(f"writing the {only} model only; kept as shipped: {', '.join(kept) or 'none'}")
    if write and set(out) != set(FAMILIES):  # a partial file would drop a family's model from the product
        sys.exit(f"not written: no model for {', '.join(sorted(set(FAMILIES) - set(out)))} graphs; dump their sets")
    if write and undumped:  # a model fitted on fewer sets than the product's would change it silently
        sys.exit(f"not written: the sets {', '.join(undumped)} are not dumped; run "
                 f"`python bench/fit_ranker.py dump {' '.join(undumped)}` first")
    if write:
        keep_agree(out)
        ranking.MODEL_FILE.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
        where = ranking.MODEL_FILE
        print(f"wrote {where.relative_to(ROOT) if where.is_relative_to(ROOT) else where}")


def keep_agree(out: dict[str, Any]) -> None:
    """The shipped agreement confidence (bench/agreement.py) kept in each family's new model whose ranking and
    confidence are what it was fitted over; else it is left out, and the output says how to fit it again."""
    shipped = json.loads(ranking.MODEL_FILE.read_text(encoding="utf-8")) if ranking.MODEL_FILE.exists() else {}
    for family, new in out.items():
        old = shipped.get(family) or {}
        if "agree" not in old or "agree" in new:
            continue
        if all(old.get(k) == new.get(k) for k in ("features", "weights", "mean", "scale", "sure")):
            new["agree"] = old["agree"]
        else:
            print(f"the {family} model's agreement confidence was fitted over another ranking: left out; fit it again "
                  "with `python bench/agreement.py fit erel --write`")


def fit_options(args: list[str]) -> tuple[bool, str | None]:
    """Apply `fit`'s options to this module's settings (SURE, SIGNED, TARGET_WRONG, BALANCED, UNUSED); returns
    (write, only that family). Exits naming an unknown option or feature, or two threshold rules at once."""
    global SURE, SIGNED, TARGET_WRONG, BALANCED, UNUSED, CROSSFIT
    flags = ("--sure=", "--unsigned", "--target-wrong=", "--balanced", "--without=", "--write", "--crossfit")
    if bad := [a for a in args if not a.startswith(flags)]:
        sys.exit(f"unknown option(s) {', '.join(bad)}\n{__doc__}")
    for a in args:
        if a.startswith("--sure="):
            SURE = tuple(a[7:].split(","))
        if a == "--unsigned":
            SIGNED = set()
        if a.startswith("--target-wrong="):
            TARGET_WRONG = float(a[15:])
        if a == "--balanced":
            BALANCED = True
        if a == "--crossfit":
            CROSSFIT = True
        if a.startswith("--without="):  # fit without these ranking features (what a feature adds, LODO)
            drop = set(a[10:].split(","))
            choices = [f for f in ranking.FEATURES if f != "bias"]  # "none of these" is scored against bias
            if unknown := drop - set(choices):
                sys.exit(f"unknown feature(s) {', '.join(sorted(unknown))}; choose from {', '.join(choices)}")
            UNUSED = {family: unused | drop for family, unused in UNUSED.items()}
    if BALANCED and TARGET_WRONG is not None:
        sys.exit("choose one threshold rule: --balanced or --target-wrong")
    families = [a[8:] for a in args if a.startswith("--write=")]
    return "--write" in args or bool(families), (families[0] if families else None)


def dump(name: str) -> None:
    """fit_dump.dump of set `name` into OUT, configured by KGQAConfig (bench/agreement.py swaps both for a variant)."""
    fit_dump.dump(name, OUT, KGQAConfig)


if __name__ == "__main__":
    args = sys.argv[1:]
    if not args or args[0] not in ("dump", "fit"):
        sys.exit(__doc__)
    if args[0] == "dump":
        for name in args[1:] or list(SETS):
            if name not in SETS:
                sys.exit(f"unknown set '{name}'; choose from: {', '.join(SETS)}")
            if not SETS[name][0].exists():
                print(f"{name}: {SETS[name][0]} is missing; skipped", flush=True)
                continue
            dump(name)
    else:
        main_fit(*fit_options(args[1:]))
