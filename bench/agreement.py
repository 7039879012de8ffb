"""Would another search agree? The confidence input behind policy/agreement.py, measured and fitted
(docs/experiment-log.md, fourteenth and fifteenth stops).

    python bench/agreement.py dump VARIANT [SET ...]   # the free-text sets as the app searches them, one change
    python bench/agreement.py fit VARIANT [--input=prob|same]   # bench/fit_ranker.py's tables, with that input added
    python bench/agreement.py fit erel --write   # ... and the product's agreement confidence into ranker.json
    python bench/agreement.py fit VARIANT --in-sample   # ... the confidence read off the ranking that saw each set

VARIANT is `erel` (relations scored by the packaged e5 instead of BM25, entities by BM25: the product's second
search), `embedding` (both stages by e5: on the nineteen sets byte for byte the same searches as `erel`), `w2` or `w4`
(width 2 or 4). `dump` writes the variant's candidates and features beside fit_ranker's dumps ($TOG_HOME/cache/
ranker-features-VARIANT/); run `python bench/fit_ranker.py dump` first for the product's own. `fit` ranks each
variant's candidates by a ranking model that never saw the scored set (fitted without it on the dev sets; the one fitted
on every dev set for the sets outside the fit), gives every product candidate the variant's probability for it
(`prob`, 0 when the variant does not reach it) or whether it is the variant's first answer (`same`), and prints
fit_ranker's left-out and outside tables with the confidence fitted on one input more: the top candidate's. The ranking
is the product's, so first answers and first three do not move; the AUROC columns say what the input adds. `--write`
(with `erel` and `prob` only) stores the confidence fitted on every dev set as the free-text model's `agree`.

The confidence is cross-fitted (fit_ranker's `--crossfit`): each training set's `p_top`, `margin`, … are read off a
ranking fitted without that set, as its `vp` is. Read off the ranking that saw the set (`--in-sample`, the fifteenth
stop's fit), the in-sample inputs were trusted over the out-of-fold `vp`: AUROC on the eleven sets outside the fit
0.754 against 0.780 cross-fitted (docs/experiment-log.md, seventeenth stop).
"""
from __future__ import annotations

import functools
import json
import shutil
import sys
from pathlib import Path
from typing import Any

import fit_ranker as fr  # first: makes tog_core importable
import numpy as np

from tog_core.bench.kgqa import KGQAConfig  # noqa: E402
from tog_core.policy import agreement, ranking  # noqa: E402

VARIANTS: dict[str, dict[str, Any]] = {"embedding": {"pruner": "embedding"}, "w2": {"width": 2}, "w4": {"width": 4},
                                       "erel": {"pruner": "embedding", "entity_pruner": "bm25"}}
PRODUCT = "erel"  # policy/agreement.py's second search
assert VARIANTS[PRODUCT] == {"pruner": agreement.PRUNER, "entity_pruner": agreement.FITTED_WITH}
INPUTS = {"prob": "vp", "same": "vsame"}  # --input: the candidate feature the variant gives
FAMILY = "free"  # typed graphs' default pruner is already the embedder


def variant_dir(variant: str) -> Path:
    return fr.OUT.parent / f"{fr.OUT.name}-{variant}"


def dump(variant: str, names: list[str]) -> None:
    """fit_ranker's dump of `names` (default: the free-text dev sets and the sets outside the fit), searched with the
    variant's setting."""
    cfg, out = fr.KGQAConfig, fr.OUT
    fr.KGQAConfig, fr.OUT = functools.partial(KGQAConfig, **VARIANTS[variant]), variant_dir(variant)
    try:
        for n in names or [*fr.FAMILIES[FAMILY][0], *fr.OUTSIDE[FAMILY]]:
            fr.dump(n)
    finally:
        fr.KGQAConfig, fr.OUT = cfg, out


def with_variant(variant: str, into: Path) -> list[str]:
    """The product's dumps copied into `into`, each candidate given the variant's `vp` and `vsame`; returns the sets
    whose variant dump is missing (their candidates get 0, and they are named)."""
    dev, outside = fr.FAMILIES[FAMILY][0], fr.OUTSIDE[FAMILY]
    features = tuple(f for f in ranking.FEATURES if f not in fr.UNUSED[FAMILY])
    sets = fr.load(dev, features)
    full = fr.fit(sets, False, signed=True, features=features)
    missing = []
    for n in [s for s in dev + outside if (fr.OUT / f"{s}.json").exists()]:
        model = fr.fit({m: v for m, v in sets.items() if m != n}, False, signed=True, features=features) \
            if n in sets else full
        got = variant_dir(variant) / f"{n}.json"
        if not got.exists():
            missing.append(n)
        theirs = {q["id"]: q for q in json.loads(got.read_text())} if got.exists() else {}
        qs = json.loads((fr.OUT / f"{n}.json").read_text())
        for q in qs:
            probs, first = variant_probs(model, (theirs.get(q["id"]) or {}).get("cands") or [])
            for c in q["cands"]:
                c["features"]["vp"], c["features"]["vsame"] = probs.get(c["title"], 0.0), float(c["title"] == first)
        (into / f"{n}.json").write_text(json.dumps(qs))
    return missing


def variant_probs(model: ranking.Model, cands: list[dict[str, Any]]) -> tuple[dict[str, float], str | None]:
    """A variant's candidates ranked by `model`: each title's probability, and the first answer (None: none)."""
    if not cands:
        return {}, None
    raw = [c["features"] for c in cands]
    p = ranking.with_none(((ranking.design(raw, model.features) - model.mean) / model.scale) @ model.weights)
    first = cands[ranking.order(p, raw, rule_first=False)[0]]["title"]
    return {c["title"]: float(p[i]) for i, c in enumerate(cands)}, first


def fit(variant: str, feature: str, write: bool = False, crossfit: bool = True) -> None:
    """fit_ranker's tables of the free-text family, the confidence given `top_<feature>` as one input more, fitted on
    rankings that never saw the set its inputs are read on (`crossfit`, as `vp` is made) or on the one that did."""
    into = fr.OUT.parent / f"{fr.OUT.name}-with-{variant}"
    shutil.rmtree(into, ignore_errors=True)
    into.mkdir(parents=True)
    if missing := with_variant(variant, into):
        print(f"not dumped with {variant}, read as not agreeing: {', '.join(missing)} (run `python "
              f"bench/agreement.py dump {variant} {' '.join(missing)}`)")
    plain = ranking.sure_row

    def sure_row(probs: Any, features: Any) -> dict[str, float]:
        row = plain(probs, features)
        row[f"top_{feature}"] = float(features[0].get(feature, 0.0))
        return row

    saved = fr.OUT, fr.FAMILIES, fr.SURE, ranking.sure_row, fr.CROSSFIT
    fr.OUT, fr.FAMILIES, fr.CROSSFIT = into, {FAMILY: fr.FAMILIES[FAMILY]}, crossfit
    fr.SURE, ranking.sure_row = (*ranking.SURE_FEATURES, f"top_{feature}"), sure_row
    try:
        how = "rankings that never saw the set" if crossfit else "the ranking that saw it"
        print(f"the confidence fitted on {how}")
        fr.main_fit(write=False)
        if write:
            write_agree(variant, feature)
    finally:
        fr.OUT, fr.FAMILIES, fr.SURE, ranking.sure_row, fr.CROSSFIT = saved


def write_agree(variant: str, feature: str) -> None:
    """The free-text model's `agree` confidence in ranker.json: fitted on every dev set (fit_ranker's `fit`, with the
    input added), each set's variant ranked by a ranking model that never saw it. Only over the shipped ranking: the
    ranking fitted here must be the one ranker.json holds, else nothing is written."""
    if (variant, feature) != (PRODUCT, "vp"):
        sys.exit(f"not written: the product's second search is `{PRODUCT}`, and the confidence reads its probability "
                 "(--input=prob)")
    names, rule_first = fr.FAMILIES[FAMILY]
    features = tuple(f for f in ranking.FEATURES if f not in fr.UNUSED[FAMILY])
    full = fr.fit(fr.load(names, features), rule_first, signed=FAMILY in fr.SIGNED, features=features)
    shipped = json.loads(ranking.MODEL_FILE.read_text(encoding="utf-8"))
    now = ranking.Model.from_dict(shipped[FAMILY])
    if now.features != full.features or not np.allclose(now.weights, full.weights, atol=2e-6):
        sys.exit("not written: the ranking fitted on these dumps is not the shipped one (run `python "
                 "bench/fit_ranker.py fit --write` on fresh dumps first)")
    shipped[FAMILY]["agree"] = {"sure": full.sure.to_dict(), "low": round(full.low, 4)}
    ranking.MODEL_FILE.write_text(json.dumps(shipped, indent=1) + "\n", encoding="utf-8")
    print(f"wrote the agreement confidence into {ranking.MODEL_FILE.name}: "
          + " ".join(f"{f}={w:+.2f}" for f, w in zip(full.sure.features, full.sure.weights)) + f" low={full.low}")


if __name__ == "__main__":
    args = sys.argv[1:]
    if len(args) < 2 or args[0] not in ("dump", "fit") or args[1] not in VARIANTS:
        sys.exit(__doc__)
    if args[0] == "dump":
        if unknown := [n for n in args[2:] if n not in fr.SETS]:
            sys.exit(f"unknown set(s) {', '.join(unknown)}; choose from: {', '.join(fr.SETS)}")
        dump(args[1], args[2:])
    else:
        chosen = [a.split("=", 1)[1] for a in args[2:] if a.startswith("--input=")] or ["prob"]
        if chosen[0] not in INPUTS or any(not a.startswith("--input=") and a not in ("--write", "--in-sample")
                                          for a in args[2:]):
            sys.exit(f"fit VARIANT [--input={'|'.join(INPUTS)}] [--write] [--in-sample]")
        fit(args[1], INPUTS[chosen[0]], write="--write" in args[2:], crossfit="--in-sample" not in args[2:])
