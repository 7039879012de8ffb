"""The embedders' on-disk cache: one SQLite file per embedder, so a second run over the same texts embeds nothing."""

from __future__ import annotations

import contextlib
import hashlib
import re
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from tog_core.llm.embed_batches import BETWEEN_BATCH, foreground, hook_here
from tog_core.llm.embed_common import Embedder, Kind, check_kind
from tog_core.llm.embed_local import LocalEmbedder


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
        check_kind(kind)
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
        hook, items = hook_here() if isinstance(self.inner, LocalEmbedder) else None, list(missing.items())
        step = BETWEEN_BATCH if hook is not None else max(1, len(items))
        try:
            with foreground() if hook is not None else contextlib.nullcontext():
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
