"""The tables `bench/fit_ranker.py fit` prints: a row per data set, the totals under them and the calibration line
(the confidence read as a probability, band by band)."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


def _fmt(x: float | None) -> str:
    return "  -  " if x is None else f"{x:.3f}"


def print_row(r: dict[str, Any]) -> None:
    print(f"{r['set']:11} {r['n']:4d} {r['rule@1']:7.3f} {r['hits1']:7.3f} {r['hits3']:7.3f} {_fmt(r['auroc']):>6} "
          f"{r['low']:5.2f} {_fmt(r['wrong_flagged']):>8} {_fmt(r['right_flagged']):>8}", flush=True)


def print_total(rows: Sequence[dict[str, Any]]) -> None:
    """First answers and first three right, as counts of all the rows' questions; the means over the sets of AUROC
    and of the shares flagged, the demo project left out: it has a single wrong answer, so its AUROC is one
    comparison (1.0 or 0.0) and its share of wrong answers flagged 0 or 1."""
    def mean(key: str) -> str:
        xs = [r[key] for r in rows if r[key] is not None and r["set"] != "demo"]
        return _fmt(float(np.mean(xs)) if xs else None)
    n = sum(r["n"] for r in rows)
    h1, h3 = (sum(round(r[k] * r["n"]) for r in rows) for k in ("hits1", "hits3"))
    print(f"{'all':11} {n:4d} first answers {h1}, first three {h3}; means over the sets besides the demo: AUROC "
          f"{mean('auroc')}, wrong flagged {mean('wrong_flagged')}, right flagged {mean('right_flagged')}", flush=True)
    print(f"{'':11} calibration, every question: {calibration([t for r in rows for t in r['tops']])}", flush=True)


CALIBRATION_BANDS = (0.0, 0.4, 0.6, 0.8, 1.0)


def calibration(tops_rows: Sequence[tuple[float, bool, bool]]) -> str:
    """Per band of confidence, the questions in it, their mean confidence and the share of them answered right: a
    confidence a person can read as a probability has the two near each other. A question with no candidate (no
    answer, no confidence shown) counts at 0, in the lowest band."""
    conf = np.array([c for c, _, _ in tops_rows], float)
    hit = np.array([h for _, h, _ in tops_rows], bool)
    parts = []
    for lo, hi in zip(CALIBRATION_BANDS, CALIBRATION_BANDS[1:]):
        inside = (conf >= lo) & ((conf < hi) if hi < 1.0 else (conf <= hi))
        if inside.any():
            parts.append(f"[{lo:.1f}, {hi:.1f}{')' if hi < 1.0 else ']'} {int(inside.sum())} "
                         f"mean {conf[inside].mean():.2f} right {hit[inside].mean():.2f}")
    return "; ".join(parts) or "no question"
