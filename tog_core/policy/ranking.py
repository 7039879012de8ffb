"""Answer ranking over the whole beam: every entity on a kept chain is a candidate, scored by one model.

The LLM-free search keeps several chains, and on a GraphRAG graph it runs one search per number of hops
(policy/depths.py). The right answer is often on a chain other than the best one, or one hop short of its end. So
every entity on any kept chain of any of those searches (the question's topic entities excepted) is a candidate,
described by signals every project has:

* the search's own view: the chain's score relative to its search's best, its rank, whether the candidate ends the
  chain, how many chains and searches reach it, at which hop and in a search of how many hops;
* text, read by the packaged e5 embedder with its roles (the question as `query:`, texts as `passage:`): the
  candidate's title and first sentence of description, the chain up to it in words, its entity type, and the
  sentence of the last link's source text units that names both ends of that link (the best-matching one);
* words: how much of the question the chain's relations cover, plain word overlap (on a GraphRAG graph both without
  the noun naming what is asked: "which place" is no fact a chain states), the entity's degree, and the share of the
  question's words in the source text around where the last link's text units name the candidate
  (`passage_words`), and whether the opening phrase of its description (what it says the entity is) names what the
  question asks for ("which town": "Tarnby is a lakeside town on the island of ...", `asked_head`);
* the share of its title's words the question itself uses (`title_named`, policy/naming.py: a question names the
  way to its answer, not the answer);
* the rule-based answer choice (`is_pick`) and whether its type is the one the wording asks for (`type_fit`);
* its title and whole description read by BM25 against the question (`desc_bm25`), and whether a kept chain reaches
  it at all (`beam`): a few candidates are found by their descriptions alone (policy/retrieval.py).

A conditional logit (a softmax over one question's candidates) turns them into a probability per candidate; the
weights are fitted on the dev sets of every data set together (bench/fit_ranker.py, leave-one-data-set-out numbers
in docs/benchmarks.md) and shipped in ranker.json beside this module. The top candidate is the answer; its
probability is the confidence, and `low` (fitted the same way) the threshold below which it is called a guess.
"""
from __future__ import annotations

import json
import math
import re
import threading
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any
from collections.abc import Iterable, Sequence

import numpy as np

from tog_core.policy.passages import passage_words
from tog_core.scoring.sentences import name_pattern, sentences_naming
from tog_core.scoring.text import UNSPACED, first_sentence, tokens_in
from tog_core.tog.state import BeamPath, Search

MODEL_FILE = Path(__file__).with_name("ranker.json")

FEATURES = ("path_rel", "inv_rank", "is_end", "share_in", "share_end", "hop", "search_depth", "share_searches",
            "sim_entity", "sim_chain", "sim_sentence", "sim_type", "type_fit", "coverage", "overlap", "log_degree",
            "is_pick", "passage_words", "asked_head", "title_named", "desc_bm25", "beam", "bias")
# "bias" is 1 for every candidate: against it stands "none of these" (score 0), so a question whose candidates are all
# weak gets a low probability for each instead of the best of them taking it all
# the features whose direction is known before any data: more agreement between chains and searches, text
# similarity, type fit, question words covered or found in the source passage, the asked noun in the description's
# opening phrase never count against a candidate
# (bench/fit_ranker.py holds their weights at zero or above); the others (a chain's end, its hop, the search's depth,
# degree, how much of its title the question uses) go either way
AT_LEAST_ZERO = frozenset({"path_rel", "inv_rank", "share_in", "share_end", "share_searches", "sim_entity",
                           "sim_chain", "sim_sentence", "sim_type", "type_fit", "coverage", "overlap", "is_pick",
                           "passage_words", "asked_head", "desc_bm25", "beam"})
# read relative to the question's best candidate (what matters is a candidate against the others)
RELATIVE = frozenset({"sim_entity", "sim_chain", "sim_sentence", "sim_type", "coverage", "overlap", "log_degree"})

_WORD = re.compile(r"\w+", re.UNICODE)
_SENTENCES_PER_CANDIDATE = 6
_UNITS_PER_LINK = 4
# a GraphRAG description opens by saying what the entity is ("Tarnby is a lakeside town on the island of ..."): its
# first run of content words after the title ("lakeside town") names it; a run is cut at this many words (4 and 6
# read the dev sets alike: the next stop word ends it first; docs/experiment-log.md)
HEAD_WORDS = 4
_PHRASE_WORD = re.compile(r"\w+(?:['’-]\w+)*", re.UNICODE)  # "scrooge's", "counting-house": one word
RRF_K = 60  # reciprocal rank fusion's usual constant (Cormack et al. 2009); not tuned here


@dataclass(kw_only=True)
class RankedEntity:
    """An entity on a kept chain: the chain up to it (the best such chain) and its features."""

    entity: int
    path: BeamPath  # the chain ending at the candidate
    features: dict[str, float] = field(default_factory=dict)
    sentence: str = ""  # the source sentence that best supports the last link ("" when none names both ends)
    prob: float = 0.0


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


def chain_text(graph: Any, path: BeamPath) -> str:
    """A chain as the embedder reads it (a passage): "SOURCE relation TARGET" per hop, joined by " ; "."""
    return " ; ".join(f"{graph.title(h.src)} {h.label[:200]} {graph.title(h.dst)}" for h in path.hops)


def ranks(values: Sequence[float]) -> np.ndarray:
    """Each value's rank, 1 = the highest; equal values share the best rank among them (1, 1, 3): the order a graph
    happens to list its candidates in decides nothing."""
    v = np.asarray(values, dtype=float)
    return 1.0 + (v[None, :] > v[:, None]).sum(axis=1) if len(v) else np.zeros(0)


def fused_ranks(*scores: Sequence[float], k: int = RRF_K) -> np.ndarray:
    """Reciprocal rank fusion of lists of scores, each ranked by `ranks` (1 = best, equal values share a rank)."""
    return rank_fusion(*(ranks(values) for values in scores), k=k)


def rank_fusion(*rankings: np.ndarray, k: int = RRF_K) -> np.ndarray:
    """Reciprocal rank fusion: each item's 1 / (k + its rank) under every ranking, summed and scaled so the best item
    is 1. No weight between the rankings: a rank counts the same in each."""
    total = sum((1.0 / (k + np.asarray(r, dtype=float)) for r in rankings), np.zeros(len(rankings[0])))
    return total / total.max() if len(total) else total


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)}


def asked_head(asked: frozenset[str], title: str, description: str, language: str) -> bool:
    """Whether the noun naming what the question asks for (`asked`: its stems, read in `language`) is in the opening
    phrase of the description, which says what the entity is: past the entity's name (the title as the text writes
    it, `name_pattern`, after stop words only; else the leading words of the title, "Scrooge" for EBENEZER SCROOGE) and
    the stop words after it ("is a"), the first run of content words, up to the next stop word (at most HEAD_WORDS
    words). "Tarnby is a lakeside town on the island of Thornholm" is a town, not an island; "Ashwater River is a
    river" is a river. Finer than the graph's few entity types. A name followed by a comma or a bracket ("Tarnby,
    founded in 1602, is a town") opens with that aside instead. Not read in a script written without spaces (a
    clause there is one "word"): False."""
    if not asked:
        return False
    first = first_sentence(description, limit=300)
    if UNSPACED.search(first):
        return False
    pattern = name_pattern(title)
    named = pattern.search(first) if pattern else None
    if named and not any(tokens_in(w, language) for w in _PHRASE_WORD.findall(first[:named.start()])):
        first = first[named.end():]  # the name, after stop words only ("The Caradec company is ...")
    words = _PHRASE_WORD.findall(first.lower())
    stems = [tokens_in(w, language) for w in words]
    own = set(tokens_in(title, language))
    at = 0
    while at < len(words) and stems[at] and set(stems[at]) <= own:  # the name, when the text shortens it
        at += 1
    while at < len(words) and not stems[at]:  # the stop words before the phrase ("is a")
        at += 1
    head: set[str] = set()
    for st in stems[at:at + HEAD_WORDS]:
        if not st:
            break
        head |= set(st)
    return bool(asked & head)


def path_key(p: BeamPath) -> tuple[Any, ...]:
    """A chain's identity: its start and every (relation, entity) step."""
    return (p.start, tuple((h.ridx, h.dst) for h in p.hops))


def gather(searches: Iterable[Search], topics: frozenset[int], *, ends_only: bool = False
           ) -> tuple[list[RankedEntity], int, int]:
    """Every entity on a chain of any search (topics and each chain's start excepted; `ends_only`: only the chains'
    ends), once, with the search-side features; the chain kept for a candidate is its best-ranked one. Returns
    (candidates, chains, searches)."""
    seen: set[tuple[Any, ...]] = set()
    cands: dict[int, RankedEntity] = {}
    best_key: dict[int, tuple[float, float]] = {}
    holders: dict[int, set[int]] = {}
    n_chains = n_searches = 0
    for s_i, search in enumerate(searches):
        paths = [p for p in search.paths if p.hops]
        if not paths:
            continue
        top = max(p.score for p in paths) or 1.0
        fresh = False
        for rank, p in enumerate(paths):
            if path_key(p) in seen:  # the same chain found by two searches counts once (the main run repeats a trial)
                continue
            seen.add(path_key(p))
            fresh = True
            n_chains += 1
            rel = p.score / top if top > 0 else 0.0
            for k, h in enumerate(p.hops, 1):
                e = h.dst
                if ends_only and k < len(p.hops):
                    continue
                # a topic entity answers nothing (the question names it), unless the graph states the start is its
                # own relative by a self-loop (PathQuestion's "Cold_War --recording--> Cold_War": BeamPath.back_home)
                if (e in topics or e == p.start) and not (e == p.start and h.src == h.dst):
                    continue
                end = k == len(p.hops)
                c = cands.get(e)
                if c is None:
                    c = cands[e] = RankedEntity(entity=e,
                                                   path=BeamPath(start=p.start, hops=p.hops[:k], score=p.score))
                    c.features.update(share_in=0.0, share_end=0.0)
                    best_key[e] = (math.inf, 0.0)
                    holders[e] = set()
                c.features["share_in"] += 1
                c.features["share_end"] += float(end)
                holders[e].add(s_i)
                if (rank, -rel) < best_key[e]:
                    best_key[e] = (rank, -rel)
                    c.path = BeamPath(start=p.start, hops=p.hops[:k], score=p.score)
                    c.features.update(path_rel=rel, inv_rank=1.0 / (1 + rank), is_end=float(end), hop=float(k),
                                      search_depth=float(search.depth))
        n_searches += fresh
    out = list(cands.values())
    for c in out:
        c.features["share_in"] /= max(1, n_chains)
        c.features["share_end"] /= max(1, n_chains)
        c.features["share_searches"] = len(holders[c.entity]) / max(1, n_searches)
    return out, n_chains, n_searches


def text_features(cands: list[RankedEntity], *, question: str, topic_titles: Sequence[str], graph: Any,
                  embedder: Any | None, facts: frozenset[str] = frozenset(), asked: frozenset[str] = frozenset(),
                  language: str = "en") -> None:
    """Fill the text features (and each candidate's supporting sentence) in place. Without an embedder the
    similarities are 0 for every candidate (they then do not move the ranking). `facts`: the reading's content words
    (stems) that `passage_words` looks for; `asked`: the stems (read in the question's `language`) of the words naming
    what it asks for, left out of the words a chain's text overlaps and looked for in the description's opening phrase
    (`asked_head`)."""
    if not cands:
        return
    qwords = _words(question) - _words(" ".join(topic_titles))
    if asked:
        qwords = {w for w in qwords if not asked & set(tokens_in(w, language))}
    ent_texts, chain_texts, type_texts, sents, counts = [], [], [], [], []
    for c in cands:
        ent = graph.entity(c.entity)
        ent_texts.append(f"{ent.title}: {first_sentence(ent.description or '', limit=300)}")
        chain = chain_text(graph, c.path)
        chain_texts.append(chain)
        type_texts.append((ent.type or "thing").lower().replace("_", " "))
        last = c.path.hops[-1]
        units = graph.evidence(last.ridx)[:_UNITS_PER_LINK]
        found: list[str] = []
        for tu in units:
            found += sentences_naming(tu.text or "", graph.title(last.src), ent.title)
            if len(found) >= _SENTENCES_PER_CANDIDATE:
                break
        found = list(dict.fromkeys(found))[:_SENTENCES_PER_CANDIDATE]
        c.sentence = found[0] if found else ""
        sents.append(found or [last.label[:400]])
        counts.append(len(found))
        c.features["overlap"] = len(qwords & _words(chain)) / max(1, len(qwords))
        c.features["passage_words"] = passage_words(units, ent.title, facts)
        c.features["log_degree"] = math.log1p(graph.degree(c.entity))
        c.features["asked_head"] = float(asked_head(asked, ent.title, ent.description or "", language))
    if embedder is None:
        for c in cands:
            c.features.update(sim_entity=0.0, sim_chain=0.0, sim_sentence=0.0, sim_type=0.0)
        return
    flat = [s for group in sents for s in group]
    q = embedder.embed([question], kind="query")[0]
    vecs = embedder.embed(ent_texts + chain_texts + type_texts + flat, kind="passage") @ q
    n = len(cands)
    i = 3 * n
    for j, c in enumerate(cands):
        k = len(sents[j])
        block = vecs[i:i + k]
        c.features.update(sim_entity=float(vecs[j]), sim_chain=float(vecs[n + j]), sim_type=float(vecs[2 * n + j]),
                          sim_sentence=float(block.max()))
        if counts[j]:
            c.sentence = sents[j][int(np.argmax(block))]
        i += k


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
