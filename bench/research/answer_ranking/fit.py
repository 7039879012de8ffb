"""Research: conditional-logit answer ranking over candidates, leave-one-data-set-out; confidence AUROC."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

FEATS = sys.argv[2].split(",") if len(sys.argv) > 2 else [
    "path_rel", "inv_rank", "is_end", "n_in", "n_end", "k", "sim_ent", "sim_chain", "sim_sent", "sim_type",
    "type_rule", "cov", "overlap", "log_deg", "is_pick", "trial", "n_trials"]


def vec(c, n_paths):
    d = dict(c)
    d["inv_rank"] = 1.0 / (1 + c["best_rank"])
    d["n_in"] = c["n_in"] / max(1, n_paths)
    d["n_end"] = c["n_end"] / max(1, n_paths)
    d["is_end"] = float(c["is_end"])
    return np.array([float(d[f]) for f in FEATS])


def load(folder):
    data = {}
    for f in sorted(Path(folder).glob("*.json")):
        qs = json.loads(f.read_text())
        out = []
        for x in qs:
            cl = x["cands"]
            n_paths = max([c["best_rank"] for c in cl], default=0) + 1
            X = np.array([vec(c, n_paths) for c in cl]) if cl else np.zeros((0, len(FEATS)))
            # within-question centring of similarity features (what matters is the candidate vs the others)
            y = np.array([c["gold"] for c in cl], dtype=bool)
            out.append((x["q"], cl, X, y))
        data[f.stem] = out
    return data


def centre(X):
    if len(X) == 0:
        return X
    Z = X.copy()
    for j, f in enumerate(FEATS):
        if f.startswith("sim_") or f in ("log_deg", "overlap", "cov"):
            Z[:, j] = X[:, j] - X[:, j].max()
    return Z


def fit(groups, l2=1.0, iters=400, lr=0.5):
    groups = [(centre(X), y) for X, y in groups if len(X) and y.any()]
    d = groups[0][0].shape[1]
    allX = np.vstack([X for X, _ in groups])
    mu, sd = allX.mean(0), allX.std(0) + 1e-6
    w = np.zeros(d)
    for _ in range(iters):
        g = l2 * w / len(groups)
        for X, y in groups:
            Z = (X - mu) / sd
            s = Z @ w
            p = np.exp(s - s.max())
            p /= p.sum()
            tgt = y / y.sum()
            g += Z.T @ (p - tgt) / len(groups)
        w -= lr * g
    return w, mu, sd


def score(model, X):
    w, mu, sd = model
    s = ((centre(X) - mu) / sd) @ w
    p = np.exp(s - s.max())
    p /= p.sum()
    return s, p


def auroc(pos, neg):
    if not pos or not neg:
        return float("nan")
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def evaluate(model, qs, dataset_weight=None):
    h1 = h3 = 0
    confs = []
    for _q, _cl, X, y in qs:
        if len(X) == 0:
            confs.append((0.0, False, False))
            continue
        s, p = score(model, X)
        order = np.argsort(-s, kind="stable")
        hit1 = bool(y[order[0]])
        h1 += hit1
        h3 += bool(y[order[:3]].any())
        second = p[order[1]] if len(order) > 1 else 0.0
        confs.append((float(p[order[0]]), hit1, float(p[order[0]] - second)))
    n = len(qs)
    return h1 / n, h3 / n, confs


if __name__ == "__main__":
    data = load(sys.argv[1])
    names = list(data)
    print("features:", ",".join(FEATS))
    print(f"{'set':8} {'n':>4} {'base@1':>7} {'lodo@1':>7} {'lodo@3':>7} {'in@1':>6} {'auroc':>6}")
    tot = {"n": 0, "base": 0, "lodo1": 0, "lodo3": 0}
    allconf = []
    for held in names:
        train = [(X, y) for n in names if n != held for _, _, X, y in data[n]]
        model = fit(train)
        h1, h3, confs = evaluate(model, data[held])
        full = fit([(X, y) for n in names for _, _, X, y in data[n]])
        in1, _, _ = evaluate(full, data[held])
        base = np.mean([any(c["is_pick"] and c["gold"] for c in cl) for q, cl, X, y in data[held]])
        pos = [c for c, hit, _ in confs if hit]
        neg = [c for c, hit, _ in confs if not hit]
        allconf += [(c, hit, held) for c, hit, _ in confs]
        n = len(data[held])
        print(f"{held:8} {n:4d} {base:7.3f} {h1:7.3f} {h3:7.3f} {in1:6.3f} {auroc(pos, neg):6.3f}")
    full = fit([(X, y) for n in names for _, _, X, y in data[n]])
    print("weights:", " ".join(f"{f}={w:+.2f}" for f, w in zip(FEATS, full[0])))
