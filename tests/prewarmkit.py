"""A fake embedder for the warm's tests (tests/test_prewarm.py, tests/test_cli_warm.py)."""
from __future__ import annotations

import hashlib

import numpy as np


class Recorder:
    """An embedder that remembers every (kind, text) it was given and which of them it had not seen before."""

    name = "recorder"
    dim = 16

    def __init__(self) -> None:
        self.seen: set[tuple[str, str]] = set()
        self.new: list[tuple[str, str]] = []

    def embed(self, texts, *, kind="passage"):
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            if (kind, t) not in self.seen:
                self.seen.add((kind, t))
                self.new.append((kind, t))
            seed = int.from_bytes(hashlib.sha256(f"{kind}\0{t}".encode()).digest()[:4], "little")
            v = np.random.default_rng(seed).normal(size=self.dim)
            out[i] = v / np.linalg.norm(v)
        return out
