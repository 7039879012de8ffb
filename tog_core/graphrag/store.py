"""The graph as the engine sees it: the Entity / Relationship / TextUnit records and the GraphStore protocol.

GraphStore lists exactly what the engine and its helpers (tog/, policy/, scoring/, render/, app/, bench/)
call on a graph; tests/test_protocols.py checks that list against the code, both ways, so it cannot
fall behind. KnowledgeGraph (graphrag/graph.py) is the in-memory implementation. Entities and
relationships are addressed by dense integer indices inside the process; traces use GraphRAG ids and titles.
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar, runtime_checkable
from collections.abc import Callable, Sequence

import numpy as np

__all__ = ["Entity", "Relationship", "TextUnit", "GraphStore", "once_per_graph"]
T = TypeVar("T")


def checked_indices(idxs: Sequence[int] | np.ndarray, n: int, what: str) -> np.ndarray:
    """Indices as int64, each checked to lie in 0..n-1 (IndexError naming the first one that does not)."""
    a = np.asarray(idxs, dtype=np.int64).reshape(-1)
    if a.size and (a.min() < 0 or a.max() >= n):
        bad = int(a[(a < 0) | (a >= n)][0])
        raise IndexError(f"{what} index {bad} out of range (the graph has {n})")
    return a


def once_per_graph(cache: weakref.WeakKeyDictionary[Any, T], graph: Any, make: Callable[[], T]) -> T:
    """`make()` once per graph, kept in `cache` while the graph lives (held weakly: a cache never keeps a graph
    alive); made again each time for a graph that cannot be weakly referenced. Two threads may both make it the
    first time; both results are equal, the last one is kept."""
    try:
        return cache[graph]
    except (KeyError, TypeError):
        pass
    out = make()
    try:
        cache[graph] = out
    except TypeError:
        pass
    return out


@dataclass(frozen=True, kw_only=True)
class Entity:
    idx: int
    id: str
    title: str
    type: str
    description: str
    degree: int
    placeholder: bool  # an endpoint named by relationships but absent from the entities table


@dataclass(frozen=True, kw_only=True)
class Relationship:
    idx: int
    id: str
    source_idx: int
    target_idx: int
    source: str  # entity titles
    target: str
    description: str
    label: str  # the `relation` column when the table has one, else the description
    weight: float
    text_unit_ids: tuple[str, ...]
    reverse_of: int | None  # index of the earlier relationship running the opposite way, if any


@dataclass(frozen=True, kw_only=True)
class TextUnit:
    id: str
    text: str


@runtime_checkable
class GraphStore(Protocol):
    """The read interface the engine uses; read-only, safe to share between threads."""

    @property
    def n_entities(self) -> int:
        """Entities including placeholders; valid indices are 0..n_entities-1."""
        ...

    @property
    def n_relationships(self) -> int:
        """Relationships; valid indices are 0..n_relationships-1."""
        ...

    @property
    def has_relation_labels(self) -> bool:
        """True when relationships carry a typed `relation` column (KGQA graphs), not only descriptions."""
        ...

    def find(self, key: str) -> int | None:
        """Entity index by GraphRAG id, exact title, then case-insensitive title."""
        ...

    def find_title(self, title: str) -> int | None:
        """Entity index by exact, then case-insensitive title (ids not considered)."""
        ...

    def find_relationship(self, rel_id: str) -> int | None: ...
    def all_titles(self) -> list[str]: ...
    def entity(self, idx: int) -> Entity: ...
    def entities(self, idxs: Sequence[int] | np.ndarray) -> list[Entity]: ...
    def entity_descriptions(self, idxs: Sequence[int] | np.ndarray) -> list[str]:
        """entity(i).description of several entities, in order ("" where none), without Entity records where the
        store can avoid them (a hub's 200,000 neighbours)."""
        ...

    def title(self, idx: int) -> str: ...
    def degree(self, idx: int) -> int: ...

    def degrees_of(self, idxs: Sequence[int] | np.ndarray) -> np.ndarray:
        """degree() of several entities (int64, in order): one round trip on a server store, no entity rows."""
        ...

    def neighbors(self, idx: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(relationship indices, neighbour entity indices, outgoing flags) of one entity."""
        ...

    def neighbors_many(self, idxs: Sequence[int] | np.ndarray) -> dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """neighbors() of several entities, {idx: ...}: one round trip for a whole frontier on a server store."""
        ...

    def relationship(self, ridx: int) -> Relationship: ...
    def endpoints(self, ridx: int) -> tuple[int, int]: ...

    def labels(self, ridxs: Sequence[int] | np.ndarray) -> list[str]:
        """Relation label per relationship: the `relation` column if present, else the description."""
        ...

    def descriptions(self, ridxs: Sequence[int] | np.ndarray) -> list[str]: ...
    def relationship_ids(self, ridxs: Sequence[int] | np.ndarray) -> list[str]: ...

    def evidence(self, ridx: int) -> list[TextUnit]:
        """The source text units behind one relationship."""
        ...

    def text_units_near(self, ridxs: Sequence[int] | np.ndarray, limit: int
                        ) -> tuple[dict[int, list[str]], dict[str, str]]:
        """The text unit ids of several relationships ({ridx: ids}, in each one's order), and the texts of the first
        `limit` distinct units met in `ridxs`' order ({id: text}); a unit past the limit has no text here. Two round
        trips on a server store, each unit's text sent once."""
        ...
