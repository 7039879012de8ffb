"""What every embedder shares: the `Embedder` protocol, the two kinds of text, the error that names the fix, and
the rows' unit L2 norm (so cosine similarity is a dot product)."""

from __future__ import annotations

from typing import Literal, Protocol, runtime_checkable

import numpy as np

Kind = Literal["query", "passage"]


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


def normalise(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a, dtype=np.float32)
    if a.ndim == 1:
        a = a.reshape(1, -1)
    norms = np.linalg.norm(a, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (a / norms).astype(np.float32, copy=False)


def check_kind(kind: str) -> None:
    if kind not in ("query", "passage"):
        raise ValueError(f"kind must be 'query' or 'passage', not {kind!r}")
