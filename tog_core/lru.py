"""A bounded, thread-safe least-recently-used map with hit and miss counts: the PostgreSQL graph store's row caches
(graphrag/postgres.py). `MISSING` is its "not cached" sentinel."""
from __future__ import annotations

import enum
import threading
from collections import OrderedDict
from collections.abc import Hashable, Iterable
from typing import Final, Generic, Literal, TypeVar


class _Missing(enum.Enum):
    """The type of the LRU's "not cached" sentinel (an enum member, so `v is MISSING` narrows the type)."""

    MISSING = enum.auto()


MISSING: Final = _Missing.MISSING
K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class LRU(Generic[K, V]):
    """A bounded, thread-safe least-recently-used map with hit/miss counts."""

    def __init__(self, maxsize: int) -> None:
        self.maxsize = max(1, int(maxsize))
        self._d: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    def get(self, key: K) -> V | Literal[_Missing.MISSING]:
        with self._lock:
            v = self._d.get(key, MISSING)
            if v is MISSING:
                self.misses += 1
            else:
                self.hits += 1
                self._d.move_to_end(key)
            return v

    def split(self, keys: Iterable[K]) -> tuple[dict[K, V], list[K]]:
        """(cached values by key, keys to fetch) — one lock round for a batch."""
        found: dict[K, V] = {}
        missing: dict[K, None] = {}  # ordered, O(1) membership
        with self._lock:
            for k in keys:
                if k in found or k in missing:
                    continue
                v = self._d.get(k, MISSING)
                if v is MISSING:
                    missing[k] = None
                else:
                    self._d.move_to_end(k)
                    found[k] = v
            self.hits += len(found)
            self.misses += len(missing)
        return found, list(missing)

    def put(self, key: K, value: V) -> None:
        with self._lock:
            self._d[key] = value
            self._d.move_to_end(key)
            while len(self._d) > self.maxsize:
                self._d.popitem(last=False)

    def put_many(self, items: Iterable[tuple[K, V]]) -> None:
        with self._lock:
            for key, value in items:
                self._d[key] = value
                self._d.move_to_end(key)
            while len(self._d) > self.maxsize:
                self._d.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._d.clear()
            self.hits = self.misses = 0
