"""The fits behind `python bench/fit_ranker.py fit`, as functions of the dumped sets (no setting of their own): the
ranking (a conditional logit), the confidence (a logistic model over the ranking's outcome) and the guess threshold.
A set is its questions, each a matrix of its candidates' features and their gold flags; `raws`, the same candidates'
features as dumped (what the ranking's order and the confidence read by name)."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tog_core.policy import ranking

Questions = list[tuple[np.ndarray, np.ndarray]]  # per question: its candidates' feature matrix and gold flags
Raw = list[list[dict[str, float]]]  # per question: its candidates' features as dumped
# issue #21's operating point: at least this share of wrong answers flagged as guesses, at most this share of right
GOAL_WRONG, GOAL_RIGHT = 0.70, 0.25


def fit_ranking(sets: dict[str, Questions], l2: float = 1.0, iters: int = 600,
                lr: float = 0.5, *, signed: bool, features: Sequence[str]) -> ranking.Model:
    """Conditional logit on `features` (the columns of each question's matrix) by gradient descent; each data set
    weighs the same, whatever its size. `signed`: the weights of the features whose direction is known before any
    data (ranking.AT_LEAST_ZERO) are held at zero or above (projected after each step)."""
    # a question whose candidates hold no gold answer teaches "none of these" (a zero row, score 0)
    groups = [(X, y, 1.0 / len(qs)) for qs in sets.values() for X, y in qs if len(X)]
    allx = np.vstack([X for X, _, _ in groups])
    mu, sd = allx.mean(0), allx.std(0) + 1e-6
    bias = list(features).index("bias")
    mu[bias], sd[bias] = 0.0, 1.0
    zs = []
    for X, y, wt in groups:
        tgt = np.append(y / y.sum(), 0.0) if y.any() else np.append(np.zeros(len(y)), 1.0)
        zs.append((np.vstack([(X - mu) / sd, np.zeros(X.shape[1])]), tgt, wt))
    total = sum(w for _, _, w in zs)
    w = np.zeros(allx.shape[1])
    floor = np.array([0.0 if signed and f in ranking.AT_LEAST_ZERO else -np.inf for f in features])
    for _ in range(iters):
        g = l2 * w / len(zs)
        for Z, tgt, wt in zs:
            p = ranking.softmax(Z @ w)
            g += wt * (Z.T @ (p - tgt)) / total
        w = np.maximum(w - lr * g, floor)  # a feature whose direction is known never counts against a candidate
    return ranking.Model(features=tuple(features), weights=w, mean=mu, scale=sd, low=0.0)


def sure_rows(model: ranking.Model, qs: Questions, raws: Raw) -> list[tuple[dict[str, float], bool]]:
    """Per question with candidates (`raws`: their features as dumped): the confidence model's inputs and whether the
    top candidate is right."""
    out = []
    for (X, y), raw in zip(qs, raws):
        if not len(X):
            continue
        p = ranking.with_none(((X - model.mean) / model.scale) @ model.weights)
        order = ranking.order(p, raw, rule_first=model.rule_first)
        out.append((ranking.sure_row([p[i] for i in order], [raw[i] for i in order]), bool(y[order[0]])))
    return out


def fit_sureness(models: dict[str, ranking.Model], sets: dict[str, Questions], raws: dict[str, Raw],
                 names: tuple[str, ...], l2: float = 1.0, iters: int = 800, lr: float = 0.5) -> ranking.Sureness:
    """Logistic regression of "the top candidate is right" on `names` (the confidence's features), each data set
    weighing the same, each set's questions ranked by its model in `models`."""
    rows, ys, ws = [], [], []
    for n, qs in sets.items():
        got = sure_rows(models[n], qs, raws[n])
        for r, hit in got:
            rows.append([r[f] for f in names])
            ys.append(float(hit))
            ws.append(1.0 / len(got))
    X, y, wt = np.array(rows), np.array(ys), np.array(ws)
    mu, sd = X.mean(0), X.std(0) + 1e-6
    Z = (X - mu) / sd
    w, b = np.zeros(len(names)), 0.0
    for _ in range(iters):
        p = 1 / (1 + np.exp(-(Z @ w + b)))
        g = wt * (p - y) / wt.sum()
        w -= lr * (Z.T @ g + l2 * w / len(y))
        b -= lr * g.sum()
    return ranking.Sureness(features=names, weights=w, intercept=float(b), mean=mu, scale=sd)


def tops(model: ranking.Model, qs: Questions, raws: Raw) -> list[tuple[float, bool, bool]]:
    """Per question (`raws`: its candidates' features as dumped): (the confidence, right at 1, right within 3); no
    candidate: (0, False, False)."""
    out = []
    for (X, y), raw in zip(qs, raws):
        if not len(X):
            out.append((0.0, False, False))
            continue
        p = ranking.with_none(((X - model.mean) / model.scale) @ model.weights)
        order = ranking.order(p, raw, rule_first=model.rule_first)
        conf = float(p[order[0]]) if model.sure is None else model.sure.probability(
            ranking.sure_row([p[i] for i in order], [raw[i] for i in order]))
        out.append((conf, bool(y[order[0]]), bool(y[order[:3]].any())))
    return out


def pick_threshold(per: Sequence[Sequence[tuple[float, bool, bool]]], *, target_wrong: float | None = None,
                   balanced: bool = False, goal_wrong: float = GOAL_WRONG, goal_right: float = GOAL_RIGHT) -> float:
    """The guess threshold on each set's (confidence, right at 1, right within 3) per question, each set weighing the
    same: by default the probability whose mean shares of wrong answers flagged and right answers flagged come nearest
    the goals (at least `goal_wrong`, at most `goal_right`), the larger of the two shortfalls the smallest; ties go to
    the lower threshold (fewer right answers called guesses). `balanced`: the best mean of wrong flagged and right not
    flagged (the rule shipped before); `target_wrong`: the lowest flagging that share of wrong answers. A share is the
    mean over the sets that have such answers (a set with no wrong answer says nothing about flagging them); 0.5 when
    no set has both."""
    grid = [round(float(t), 2) for t in np.arange(0.05, 0.96, 0.01)]
    wrongs = [[p for p, h, _ in rows if not h] for rows in per]
    rights = [[p for p, h, _ in rows if h] for rows in per]
    wrongs, rights = [w for w in wrongs if w], [r for r in rights if r]
    if not wrongs or not rights:
        return 0.5

    def shares(t: float) -> tuple[float, float]:
        """The mean over the sets of the share of wrong answers flagged, and of right ones."""
        return (float(np.mean([np.mean([p < t for p in w]) for w in wrongs])),
                float(np.mean([np.mean([p < t for p in r]) for r in rights])))

    at = {t: shares(t) for t in grid}
    if target_wrong is not None:
        return next((t for t in grid if at[t][0] >= target_wrong), grid[-1])
    if balanced:
        return max(grid, key=lambda t: ((at[t][0] + 1.0 - at[t][1]) / 2, -t))
    return min(grid, key=lambda t: (max(goal_wrong - at[t][0], at[t][1] - goal_right), t))
