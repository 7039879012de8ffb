"""Scorers: candidates in, one float in [0, 1] each out. The engine owns the beam; scorers only score.

One registry (SCORERS); an unknown name gets an error listing the registered ones. LLM scoring
failures fall back *by name* to a cheap scorer, and the fallback is reported in the result so the
engine can record it in the trace.
"""
from __future__ import annotations

from collections import OrderedDict

import hashlib
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, NamedTuple, Protocol
from collections.abc import Callable, Sequence
from itertools import chain

import numpy as np

from tog_core.llm.usage import Usage
from tog_core.prompting import prompts
from tog_core.prompting.parsing import parse_scores
from tog_core.scoring.text import read_tokens, tokens

FALLBACK_LLM_ERROR = "llm_error_used_bm25"  # the LLM call failed: scores come from BM25


@dataclass(kw_only=True)
class ScoreRequest:
    question: str
    stage: str  # "relations" | "entities" | "pairs"
    anchor: str  # relations: the frontier entity's title; entities: the relation text ("" for pairs)
    texts: list[str]  # candidate texts as presented to the scorer
    chains: list[str] = field(default_factory=list)  # reasoning chains so far, as text
    focus: str = ""  # cheap scorers: the part of the question this hop most likely answers (QuestionReading.bands)
    rest: str = ""  # cheap scorers: the question without the words the chain's relations already match ("": all of it)


@dataclass(kw_only=True)
class ScoreResult:
    values: list[float]
    reasons: list[str]
    scored_by: str
    fallback: str | None = None
    detail: str = ""
    usage: Usage = field(default_factory=Usage)


class Scorer(Protocol):
    name: str
    uses_llm: bool

    async def score(self, req: ScoreRequest) -> ScoreResult: ...


def _hash_unit(*parts: object) -> float:
    h = hashlib.blake2b("\x1f".join(map(str, parts)).encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(h, "big") / 2**64


class RandomScorer:
    """Seeded baseline: the same (seed, question, candidate) always gets the same score."""

    name = "random"
    uses_llm = False

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed

    async def score(self, req: ScoreRequest) -> ScoreResult:
        vals = [_hash_unit(self.seed, req.question, req.anchor, t, i) for i, t in enumerate(req.texts)]
        return ScoreResult(values=vals, reasons=[""] * len(vals), scored_by=self.name)


class BM25Scorer:
    """BM25 (bm25s) of the question against each candidate text, scaled so the best candidate is 1."""

    name = "bm25"
    uses_llm = False
    # A corpus this big keeps its index for the next request over the same texts: a hub's relations are scored
    # again by each stage and trial that reaches it (200,000 texts: seconds to tokenise and index, milliseconds
    # to query). Smaller ones are indexed per request, as before. At most INDEXES_KEPT indexes are held.
    INDEX_REUSE_FROM = 5_000
    INDEXES_KEPT = 2

    def __init__(self) -> None:
        self._indexes: OrderedDict[int, tuple[tuple[str, ...], Any]] = OrderedDict()

    async def score(self, req: ScoreRequest) -> ScoreResult:
        return self.score_sync(req)

    def _retriever(self, texts: list[str]) -> Any:
        import bm25s

        key = None
        if len(texts) >= self.INDEX_REUSE_FROM:
            frozen = tuple(texts)
            key = hash(frozen)
            hit = self._indexes.get(key)
            if hit is not None and hit[0] == frozen:
                self._indexes.move_to_end(key)
                return hit[1]
        if key is None:
            retriever = bm25s.BM25()
            retriever.index(_as_bm25_tokens([tokens(t) or ["_empty_"] for t in texts]), show_progress=False)
        else:  # read afresh, not remembered text by text: the index keeps what it needs
            retriever = _flat_index([read_tokens(t) or ("_empty_",) for t in texts])
            self._indexes[key] = (frozen, retriever)
            while len(self._indexes) > self.INDEXES_KEPT:
                self._indexes.popitem(last=False)
        return retriever

    def score_sync(self, req: ScoreRequest) -> ScoreResult:
        n = len(req.texts)
        if n == 0:
            return ScoreResult(values=[], reasons=[], scored_by=self.name)
        query = tokens(req.rest or req.question) + tokens(req.focus)  # this hop's part of the question counts twice
        vals = np.zeros(n)
        if query:
            vals = np.asarray(self._retriever(list(req.texts)).get_scores(query), dtype=float)
        top = float(vals.max()) if n else 0.0
        scaled = (vals / top).tolist() if top > 0 else [0.0] * n
        return ScoreResult(values=[float(v) for v in scaled], reasons=[""] * n, scored_by=self.name)


def _as_bm25_tokens(corpus: list[Sequence[str]]) -> Any:
    """bm25s wants its Tokenized(ids, vocab) form; build it directly from our own tokens (ids in order of first
    occurrence)."""
    import bm25s

    vocab: dict[str, int] = {}
    ids = [[vocab.setdefault(t, len(vocab)) for t in doc] for doc in corpus]
    return bm25s.tokenization.Tokenized(ids=ids, vocab=vocab)


class _FlatIds(NamedTuple):
    """A corpus's token ids as one array and each document's length (what _flat_bm25's index reads)."""

    flat: np.ndarray
    lens: np.ndarray


def _flat_index(corpus: list[Sequence[str]]) -> Any:
    """The BM25 index of a big corpus: _as_bm25_tokens's ids (the same vocabulary), flat, indexed by _flat_bm25."""
    import bm25s

    vocab = {t: k for k, t in enumerate(dict.fromkeys(chain.from_iterable(corpus)))}
    lens = np.fromiter(map(len, corpus), dtype=np.int64, count=len(corpus))
    flat = np.fromiter(map(vocab.__getitem__, chain.from_iterable(corpus)), dtype=np.int64, count=int(lens.sum()))
    retriever = _flat_bm25()()
    retriever.index(bm25s.tokenization.Tokenized(ids=_FlatIds(flat, lens), vocab=vocab), show_progress=False)
    return retriever


@lru_cache(maxsize=1)
def _flat_bm25() -> type:
    """bm25s.BM25 whose index is built with whole-corpus numpy operations instead of a Python loop per document
    (bm25s's override point build_index_from_ids, given _FlatIds): the same (document, token, score) entries in the
    same order, so the same matrix and scores, several times faster on a hub's 200,000 relation texts. bm25s's
    default method (Lucene), the one used here."""
    import bm25s
    from bm25s.scoring import _score_idf_lucene

    class FlatBM25(bm25s.BM25):
        def build_index_from_ids(self, unique_token_ids: Any, corpus_token_ids: Any, show_progress: bool = True,
                                 leave_progress: bool = False) -> Any:
            if self.method != "lucene" or self.idf_method != "lucene" or not isinstance(corpus_token_ids, _FlatIds):
                raise ValueError("FlatBM25 indexes _FlatIds with the Lucene method only")
            flat, lens = corpus_token_ids
            n_docs, n_vocab = len(lens), len(unique_token_ids)
            avg_doc_len = lens.mean()
            # one entry per (token, document) with its count, sorted by token then document: the matrix's column
            # order (bm25s counts each document's tokens with a Counter, then sorts the entries the same way)
            doc_of = np.repeat(np.arange(n_docs, dtype=np.int64), lens)
            pairs, tf = np.unique(flat * n_docs + doc_of, return_counts=True)
            voc_idx, doc_idx = pairs // n_docs, pairs % n_docs
            df = np.bincount(voc_idx, minlength=n_vocab)
            # idf per token as bm25s computes it (math.log of Python floats, stored as float32), once per distinct df
            distinct, which = np.unique(df, return_inverse=True)
            idf = np.array([_score_idf_lucene(int(d), N=n_docs) if d else 0.0 for d in distinct])[which]
            idf = idf.astype(self.dtype)
            # the term-frequency part with bm25s's operand types: float32 counts, a float64 length norm per document
            tf32 = tf.astype(self.dtype)
            norm = self.k1 * ((1 - self.b) + self.b * lens.astype(np.float64) / avg_doc_len)
            data = (idf[voc_idx] * (tf32 / (norm[doc_idx] + tf32))).astype(self.dtype)
            indptr = np.zeros(n_vocab + 1, dtype=np.int64)
            np.cumsum(df, out=indptr[1:])
            self.nonoccurrence_array = None
            return {"data": data, "indices": doc_idx.astype(self.int_dtype), "indptr": indptr, "num_docs": n_docs}

    return FlatBM25


class EmbeddingScorer:
    """Cosine similarity of the question (as a query) and each candidate text (as a passage)."""

    name = "embedding"
    uses_llm = False

    def __init__(self, embedder: Any) -> None:
        self.embedder = embedder

    async def score(self, req: ScoreRequest) -> ScoreResult:
        n = len(req.texts)
        if n == 0:
            return ScoreResult(values=[], reasons=[], scored_by=self.name)
        m = self.embedder.embed(list(req.texts), kind="passage")
        queries = [req.rest or req.question] + ([req.focus] if req.focus else [])
        q = self.embedder.embed(queries, kind="query")
        sims = np.clip((m @ q.T).mean(axis=1), 0.0, 1.0)  # the whole question and, if given, this hop's part
        return ScoreResult(values=[float(v) for v in sims], reasons=[""] * n, scored_by=self.name)


class HybridScorer:
    """BM25 and the embedder fused by rank (reciprocal rank fusion): each candidate scores 1 / (K + its rank) under
    each, summed, scaled so the best is 1. No weight between the two: a rank carries the same under both."""

    name = "hybrid"
    uses_llm = False
    K = 60

    def __init__(self, embedder: Any) -> None:
        self.bm25 = BM25Scorer()
        self.embedding = EmbeddingScorer(embedder)

    async def score(self, req: ScoreRequest) -> ScoreResult:
        n = len(req.texts)
        if n == 0:
            return ScoreResult(values=[], reasons=[], scored_by=self.name)
        fused = np.zeros(n)
        for res in (self.bm25.score_sync(req), await self.embedding.score(req)):
            order = np.argsort(-np.asarray(res.values, dtype=float), kind="stable")
            ranks = np.empty(n)
            ranks[order] = np.arange(1, n + 1)
            fused += 1.0 / (self.K + ranks)
        scaled = fused / fused.max()
        return ScoreResult(values=[float(v) for v in scaled], reasons=[""] * n, scored_by=self.name)


class LLMScorer:
    """One LLM call per request; tolerant parsing; on a failed call, BM25 scores under a named fallback."""

    name = "llm"
    uses_llm = True

    def __init__(self, llm: Any, *, temperature: float = 0.4, max_tokens: int = 256,
                 fallback: Any | None = None, compact: bool = False) -> None:
        self.llm = llm
        self.compact = compact  # bare score lists, no reasons: for small local models
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.fallback = fallback or BM25Scorer()

    def messages(self, req: ScoreRequest) -> list[dict]:
        if req.stage == "relations":
            return prompts.relation_prompt(req.question, req.anchor, req.texts, req.chains)
        if req.stage == "entities":
            return prompts.entity_prompt(req.question, req.anchor, req.texts)
        return prompts.pair_prompt(req.question, req.texts, req.chains)

    async def score(self, req: ScoreRequest) -> ScoreResult:
        from tog_core.llm.client import LLMError

        n = len(req.texts)
        if n == 0:
            return ScoreResult(values=[], reasons=[], scored_by=self.name)
        if self.compact:
            msgs, schema = prompts.compact(self.messages(req), n), prompts.compact_scores_schema(n)
            max_tokens = 8 * n + 16
        else:  # budget: ~40 output tokens per candidate, at least the configured max
            msgs, schema = self.messages(req), prompts.SCORES_SCHEMA
            max_tokens = max(self.max_tokens, min(4096, 40 * n + 32))
        try:
            res = await self.llm.complete(msgs, temperature=self.temperature, max_tokens=max_tokens,
                                          json_schema=schema)
        except LLMError as err:
            fb = await self.fallback.score(req)
            fb.fallback = FALLBACK_LLM_ERROR
            fb.detail = f"{err.kind}: {str(err)[:200]}"
            fb.scored_by = f"{self.fallback.name} (fallback)"
            fb.usage = Usage.failed_call()
            return fb
        parsed = parse_scores(res.text, n, candidates=list(req.texts))
        return ScoreResult(values=parsed.values, reasons=parsed.reasons, scored_by=self.name,
                           fallback=parsed.fallback, detail=parsed.detail, usage=Usage.of_result(res))


ScorerFactory = Callable[..., Any]
SCORERS: dict[str, ScorerFactory] = {
    "llm": lambda *, llm=None, embedder=None, seed=0, temperature=0.4, max_tokens=256, compact=False: _need(
        llm, "llm", "an LLM (pick a model, or 'local')") and LLMScorer(llm, temperature=temperature,
                                                                      max_tokens=max_tokens, compact=compact),
    "bm25": lambda **_: BM25Scorer(),  # every factory takes the same keyword arguments and ignores the rest
    "embedding": lambda *, embedder=None, **_: _need(embedder, "embedding", "an embedder")
    and EmbeddingScorer(embedder),
    "hybrid": lambda *, embedder=None, **_: _need(embedder, "hybrid", "an embedder") and HybridScorer(embedder),
    "random": lambda *, seed=0, **_: RandomScorer(seed),
}


# the registry's names by what they need and read, for the rules that depend on it (one list, not one per rule)
CHEAP: tuple[str, ...] = tuple(n for n in SCORERS if n != "llm")  # no LLM call: may pre-filter, may prune offline
NEEDS_EMBEDDER: tuple[str, ...] = ("embedding", "hybrid")
READS_QUESTION: tuple[str, ...] = tuple(n for n in CHEAP if n != "random")  # cheap scorers that read the question


def reads_question(*scorers: object) -> bool:
    """Whether every scorer given is a cheap one that reads the question (READS_QUESTION, by its `name`): what the
    depth trials (policy/depths.py) and the paths read whole (policy/pathcover.py) need on both stages."""
    return all(getattr(s, "name", "") in READS_QUESTION for s in scorers)


def one_of(names: tuple[str, ...]) -> str:
    """Names as a choice in a message: "bm25, embedding, hybrid or random"."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


class UnknownScorer(ValueError):
    pass


def _need(thing: Any, name: str, what: str) -> bool:
    if thing is None:
        raise UnknownScorer(f"pruner '{name}' needs {what}; with --model none use {one_of(CHEAP)}")
    return True


def make_scorer(name: str, **deps: Any) -> Any:
    try:
        factory = SCORERS[name]
    except KeyError:
        raise UnknownScorer(f"unknown pruner '{name}'; choose one of: {', '.join(SCORERS)}") from None
    return factory(**deps)
