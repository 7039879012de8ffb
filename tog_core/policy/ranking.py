"""Answer ranking over the whole beam: every entity on a kept chain is a candidate (policy/candidates.py: which
entities, and the signals that describe each), scored by one model.

A conditional logit (a softmax over one question's candidates) turns the signals into a probability per candidate; the
weights are fitted on the dev sets of every data set together (bench/fit_ranker.py, leave-one-data-set-out numbers
in docs/benchmarks.md) and shipped in ranker.json beside this module. The top candidate is the answer; its
probability is the confidence, and `low` (fitted the same way) the threshold below which it is called a guess.
"""
from __future__ import annotations

import json
import math
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any
from collections.abc import Sequence

import numpy as np

from tog_core.policy.candidates import RankedEntity

MODEL_FILE = Path(__file__).with_name("ranker.json")

FEATURES = ("path_rel", "inv_rank", "is_end", "share_in", "share_end", "hop", "search_depth", "share_searches",
            "sim_entity", "sim_chain", "sim_sentence", "sim_type", "type_fit", "coverage", "overlap", "log_degree",
            "is_pick", "passage_words", "asked_head", "title_named", "desc_bm25", "beam", "path_cover", "bias")
# "bias" is 1 for every candidate: against it stands "none of these" (score 0), so a question whose candidates are all
# weak gets a low probability for each instead of the best of them taking it all
# the features whose direction is known before any data: more agreement between chains and searches, text
# similarity, type fit, question words covered or found in the source passage, the asked noun in the description's
# opening phrase never count against a candidate
# (bench/fit_ranker.py holds their weights at zero or above); the others (a chain's end, its hop, the search's depth,
# degree, how much of its title the question uses) go either way
AT_LEAST_ZERO = frozenset({"path_rel", "inv_rank", "share_in", "share_end", "share_searches", "sim_entity",
                           "sim_chain", "sim_sentence", "sim_type", "type_fit", "coverage", "overlap", "is_pick",
                           "passage_words", "asked_head", "desc_bm25", "beam", "path_cover"})
# read relative to the question's best candidate (what matters is a candidate against the others)
RELATIVE = frozenset({"sim_entity", "sim_chain", "sim_sentence", "sim_type", "coverage", "overlap", "log_degree"})


@dataclass(frozen=True, kw_only=True)
class Model:
    """Fitted weights of the conditional logit, with the standardisation they were fitted under."""

    features: tuple[str, ...]
    weights: np.ndarray
    mean: np.ndarray
    scale: np.ndarray
    low: float  # a confidence below this is called a guess
    sure: Sureness | None = None  # the confidence; None: the top candidate's probability is the confidence
    # the rule choice stays the answer (the others follow by probability): where the ranking did not beat the rule
    # on the sets left out (typed graphs: MetaQA 0.887 rule, 0.833 ranked)
    rule_first: bool = False
    note: str = ""
    # the confidence when a second search by another pruner was made (policy/agreement.py): `sure` with one input
    # more, that search's probability for the first answer (`top_vp`), and its own threshold (bench/agreement.py)
    agree: Sureness | None = None
    agree_low: float = 0.5

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Model:
        names = tuple(d["features"])
        agree = d.get("agree") or {}
        return cls(features=names, weights=np.asarray(d["weights"], float), mean=np.asarray(d["mean"], float),
                   scale=np.asarray(d["scale"], float), low=float(d["low"]),
                   sure=Sureness.from_dict(d["sure"]) if d.get("sure") else None,
                   rule_first=bool(d.get("rule_first", False)), note=str(d.get("note", "")),
                   agree=Sureness.from_dict(agree["sure"]) if agree else None, agree_low=float(agree.get("low", 0.5)))

    def to_dict(self) -> dict[str, Any]:
        return {"features": list(self.features), "weights": [round(float(x), 6) for x in self.weights],
                "mean": [round(float(x), 6) for x in self.mean], "scale": [round(float(x), 6) for x in self.scale],
                "low": round(self.low, 4), "sure": self.sure.to_dict() if self.sure else None,
                "rule_first": self.rule_first, "note": self.note,
                **({"agree": {"sure": self.agree.to_dict(), "low": round(self.agree_low, 4)}} if self.agree else {})}

    def confidence(self, ranked: Sequence[RankedEntity], second: float | None = None) -> float:
        """How sure the first of `ranked` (best first, with probabilities) is right; `second`: a second search's
        probability for it, read where the model has an `agree` confidence."""
        if not ranked:
            return 0.0
        if self.sure is None:
            return ranked[0].prob
        row = sure_row([c.prob for c in ranked], [c.features for c in ranked])
        if second is not None and self.agree is not None:
            return self.agree.probability({**row, "top_vp": second})
        return self.sure.probability(row)

    def matrix(self, rows: Sequence[dict[str, float]]) -> np.ndarray:
        return design(rows, self.features)

    def probabilities(self, rows: Sequence[dict[str, float]]) -> np.ndarray:
        """Each candidate's probability of being the answer; the rest, to 1, is "none of these"."""
        if not rows:
            return np.zeros(0)
        return with_none(((self.matrix(rows) - self.mean) / self.scale) @ self.weights)


# how sure the top candidate is right: a logistic model over the ranking's outcome and the top candidate's own
# (absolute) signals, fitted apart from the ranking (bench/fit_ranker.py)
SURE_FEATURES = ("p_top", "margin", "top_sim_chain", "top_coverage")  # chosen by LODO AUROC among six sets tried


def sure_row(probs: Sequence[float], features: Sequence[dict[str, float]]) -> dict[str, float]:
    """The confidence model's inputs for one question: `probs` and `features` of its candidates, best first."""
    top = features[0]
    row = {"p_top": float(probs[0]), "margin": float(probs[0] - (probs[1] if len(probs) > 1 else 0.0)),
           "log_candidates": math.log1p(len(probs))}
    for f in ("sim_chain", "sim_entity", "sim_sentence", "coverage", "type_fit", "is_pick", "share_searches",
              "path_rel", "hop", "is_end"):
        row[f"top_{f}"] = float(top.get(f, 0.0))
    return row


@dataclass(frozen=True, kw_only=True)
class Sureness:
    """Fitted logistic weights: the probability that the top candidate is right."""

    features: tuple[str, ...]
    weights: np.ndarray
    intercept: float
    mean: np.ndarray
    scale: np.ndarray

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Sureness:
        return cls(features=tuple(d["features"]), weights=np.asarray(d["weights"], float),
                   intercept=float(d["intercept"]), mean=np.asarray(d["mean"], float),
                   scale=np.asarray(d["scale"], float))

    def to_dict(self) -> dict[str, Any]:
        return {"features": list(self.features), "weights": [round(float(x), 6) for x in self.weights],
                "intercept": round(self.intercept, 6), "mean": [round(float(x), 6) for x in self.mean],
                "scale": [round(float(x), 6) for x in self.scale]}

    def probability(self, row: dict[str, float]) -> float:
        x = (np.array([float(row.get(f, 0.0)) for f in self.features]) - self.mean) / self.scale
        return float(1.0 / (1.0 + np.exp(-(x @ self.weights + self.intercept))))


def design(rows: Sequence[dict[str, float]], names: Sequence[str]) -> np.ndarray:
    """One question's feature matrix, the RELATIVE features read against the question's best candidate."""
    x = np.array([[1.0 if f == "bias" else float(r.get(f, 0.0)) for f in names] for r in rows],
                 dtype=float).reshape(len(rows), len(names))
    for j, f in enumerate(names):
        if f in RELATIVE and len(x):
            x[:, j] -= x[:, j].max()
    return x


def softmax(s: np.ndarray) -> np.ndarray:
    e = np.exp(s - s.max())
    return e / e.sum()


def with_none(s: np.ndarray) -> np.ndarray:
    """The softmax over the candidates' scores `s` and "none of these" (score 0), without the latter."""
    return softmax(np.append(s, 0.0))[:-1]


@lru_cache(maxsize=2)
def shipped_model(typed: bool = False) -> Model | None:
    """The fitted model shipped with the package for a typed graph (MetaQA, PathQuestion: relation types) or a
    free-text one (GraphRAG); None when the file is missing or unreadable (then the rule choice answers)."""
    try:
        return Model.from_dict(json.loads(MODEL_FILE.read_text(encoding="utf-8"))["typed" if typed else "free"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


_EMBEDDER: list[Any] = []  # [the embedder, or None when it cannot be had], filled on first use
_EMBEDDER_LOCK = threading.Lock()


def ranking_embedder() -> Any | None:
    """The packaged e5 (with the on-disk cache under TOG_HOME), shared by every run; None when it is not installed.
    Always e5, whatever embedder the project names: the weights were fitted on its similarities."""
    with _EMBEDDER_LOCK:
        if not _EMBEDDER:
            from tog_core.home import tog_home
            from tog_core.llm.embed import EmbeddingUnavailable, default_embedder

            try:
                _EMBEDDER.append(default_embedder(tog_home() / "cache" / "embeddings" / "answer-ranking"))
            except EmbeddingUnavailable:
                _EMBEDDER.append(None)
        return _EMBEDDER[0]


def rank(cands: list[RankedEntity], model: Model) -> list[RankedEntity]:
    """The candidates best first, each with its probability under the model (ties keep the search's order)."""
    probs = model.probabilities([c.features for c in cands])
    for c, p in zip(cands, probs):
        c.prob = float(p)
    return [cands[i] for i in order(probs, [c.features for c in cands], rule_first=model.rule_first)]


def order(probs: Sequence[float] | np.ndarray, features: Sequence[dict[str, float]], *,
          rule_first: bool = False) -> list[int]:
    """Indices best first: by probability (ties: the rule choice, then the search's rank); `rule_first` puts the rule
    choice first whatever its probability. A candidate the question names (`naming.named_in`, the feature "named") goes
    after every one it does not name, as a topic entity is left out (`names_set_aside`)."""
    aside = names_set_aside(features)
    return sorted(range(len(probs)), key=lambda i: (-(rule_first and features[i].get("is_pick", 0.0)),
                                                    aside and features[i].get("named", 0.0), -probs[i],
                                                    -features[i].get("is_pick", 0.0),
                                                    -features[i].get("inv_rank", 0.0)))


def names_set_aside(features: Sequence[dict[str, float]]) -> bool:
    """Whether the candidates the question names go last: when some are named and some are not (when all are, the
    question names every one and the ranking alone decides)."""
    named = sum(bool(f.get("named", 0.0)) for f in features)
    return 0 < named < len(features)
