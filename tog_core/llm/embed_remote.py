"""Embeddings through LiteLLM: any embedding model it can reach (OpenAI, Azure, Ollama, …), the key never stored
where a trace or a log could show it."""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence

import numpy as np

from tog_core.llm._litellm import load_litellm
from tog_core.llm.embed_batches import hook_here
from tog_core.llm.embed_common import EmbeddingUnavailable, Kind, check_kind, normalise
from tog_core.llm.errors import _scrub, env_secrets, scrub_logs, url_secrets


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
            secrets = [k for k in (kwargs.get("api_key"),) if k] + url_secrets(self.api_base) + env_secrets(self.model)
            raise EmbeddingUnavailable(
                f"embedding model {self.model} failed: {type(exc).__name__}: "
                f"{_scrub(first, secrets)}"
            ) from None
        rows = sorted(
            (d if isinstance(d, dict) else d.model_dump() for d in resp.data),
            key=lambda d: d.get("index", 0),
        )
        return np.asarray([r["embedding"] for r in rows], dtype=np.float32)

    def embed(self, texts: Sequence[str], *, kind: Kind = "passage") -> np.ndarray:
        check_kind(kind)
        prefix = self.query_prefix if kind == "query" else self.passage_prefix
        # empty strings are rejected by several providers
        texts = [prefix + (str(t) if str(t).strip() else " ") for t in texts]
        if not texts:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        parts, between = [], hook_here()  # inside a run, a person's Stop is heard between two calls
        for i in range(0, len(texts), self.batch_size):
            parts.append(self._call(texts[i : i + self.batch_size]))
            if between is not None and i + self.batch_size < len(texts):
                between()
        out = normalise(np.concatenate(parts, axis=0))
        if out.shape[0] != len(texts):
            raise EmbeddingUnavailable(
                f"embedding model {self.model} returned {out.shape[0]} vectors for {len(texts)} texts"
            )
        with self._lock:
            if self._dim is None:
                self._dim = int(out.shape[1])
        return out
