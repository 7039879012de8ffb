"""The search policy: the few decisions the ToG paper leaves to the scorer and the LLM, as one object the
engine is given.

The engine (engine.py, stages.py) owns the loop, the beam and the call budget; a policy only answers
these questions for it:

* what a relation group reads like to a scorer (`relation_text`);
* which part of the question a relation scorer should read for one path (`relation_query`);
* how many hops to search, settled before the search starts or not at all (`plan`, `planned_depth`);
* how raw relation scores are adjusted before the cut (`relation_scores`);
* how a candidate entity is rated by where it leads next (`rate_next`), and how relation, entity and
  next-hop ratings make one hop score (`hop_score`);
* whether the chains suffice when no LLM judges (`judge`), and which chain the answer is read from
  (`rank_key`).

`FaithfulPolicy` is the paper: a scorer's numbers are used as they are, relation x entity makes a hop's
score, the LLM judges sufficiency (with no LLM the search runs to the maximum depth), and the best chain
is the best-scoring one. The LLM-free search (word overlap and embeddings instead of an LLM) needs more
help; it lives in `tog_core/policy/cheap.py` as `CheapPolicy`, a second object behind the same protocol.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol
from collections.abc import Sequence

if TYPE_CHECKING:  # the engine passes itself as the context; only for type names
    from tog_core.tog.state import BeamPath, RelChoice, State


@dataclass(frozen=True, kw_only=True)
class AnswerChoice:
    """The entity the answer names: which chain, how far along it, and how sure (0..1; below LOW_CONFIDENCE the
    answer says it is unsure)."""

    path: BeamPath
    hop: int  # 1-based: the entity after this many hops of the chain
    confidence: float
    why: str

    @property
    def entity(self) -> int:
        return self.path.hops[self.hop - 1].dst


LOW_CONFIDENCE = 0.4  # below this the composed answer and the app say the answer is a guess


@dataclass(frozen=True, kw_only=True)
class NextHop:
    """How far a candidate entity can take the search: its best next relation, rated against the step's best."""

    value: float  # 1 for the best of the step, 0 for a dead end
    text: str  # the best next relation as the scorer read it ("" for a dead end)


class SearchContext(Protocol):
    """What a policy may read of the engine that calls it."""

    graph: Any
    config: Any
    llm: Any
    relation_scorer: Any
    entity_scorer: Any
    prefilter: Any

    def open_edges(self, p: BeamPath, rels: Any, others: Any, outs: Any, last_depth: int | None = None,
                   topics: frozenset[int] = frozenset()) -> Any: ...
    def topic_ids(self, state: State) -> frozenset[int]: ...
    async def trial(self, state: State, depth: int) -> tuple[State, list[BeamPath]]: ...


class SearchPolicy(Protocol):
    name: str

    def params(self) -> dict[str, Any]: ...
    def plans(self, ctx: SearchContext, state: State) -> bool: ...
    async def plan(self, ctx: SearchContext, state: State) -> State: ...
    def planned_depth(self, ctx: SearchContext, state: State) -> int: ...
    def relation_text(self, ctx: SearchContext, label: str, ridx: int) -> str: ...
    def relation_query(self, ctx: SearchContext, state: State, i: int) -> tuple[str, str]: ...
    def relation_evidence(self, ctx: SearchContext, groups: Sequence[RelChoice]) -> list[str]: ...
    def relation_scores(self, ctx: SearchContext, state: State, i: int, groups: Sequence[RelChoice],
                        scores: list[float], scored: list[bool]) -> list[float]: ...
    async def rate_next(self, ctx: SearchContext, state: State,
                        targets: list[tuple[RelChoice, list[tuple[int, int]]]]) -> dict[tuple[str, int], NextHop]: ...
    def hop_score(self, ctx: SearchContext, rel_score: float, ent_score: float, ahead: NextHop | None
                  ) -> tuple[float, str]: ...
    def judge(self, ctx: SearchContext, state: State) -> dict[str, Any]: ...
    def rank_key(self, ctx: SearchContext, state: State, p: BeamPath) -> tuple[float, ...]: ...
    def choose_answer(self, ctx: SearchContext, state: State, paths: list[BeamPath]) -> AnswerChoice | None: ...


def uses_llm(scorer: Any) -> bool:
    return bool(getattr(scorer, "uses_llm", False))


def llm_judges(ctx: Any) -> bool:
    """Whether the LLM decides when the chains suffice (the paper's evaluate stage), not the policy's `judge`."""
    return ctx.llm is not None and ctx.config.judge != "coverage"


class FaithfulPolicy:
    """Think-on-Graph as published: nothing added between the scorers and the beam."""

    name = "faithful"

    def params(self) -> dict[str, Any]:
        return {}

    def plans(self, ctx: SearchContext, state: State) -> bool:
        return False  # nothing is settled before the search: the LLM judges when to stop

    async def plan(self, ctx: SearchContext, state: State) -> State:
        return state

    def planned_depth(self, ctx: SearchContext, state: State) -> int:
        """The depth the search expects to answer at: the maximum (the LLM judge decides when to stop)."""
        return ctx.config.depth

    def relation_text(self, ctx: SearchContext, label: str, ridx: int) -> str:
        """The relation as the graph names it: the `relation` column of a typed graph (as ToG shows Freebase
        relation names), else GraphRAG's free-text description."""
        return label.replace("_", " ") if ctx.graph.has_relation_labels else label

    def relation_query(self, ctx: SearchContext, state: State, i: int) -> tuple[str, str]:
        return "", ""  # (focus, rest): the scorer reads the whole question

    def relation_evidence(self, ctx: SearchContext, groups: Sequence[RelChoice]) -> list[str]:
        return [""] * len(groups)  # the scorer reads the relation as the paper shows it

    def relation_scores(self, ctx: SearchContext, state: State, i: int, groups: Sequence[RelChoice],
                        scores: list[float], scored: list[bool]) -> list[float]:
        return scores

    async def rate_next(self, ctx: SearchContext, state: State,
                        targets: list[tuple[RelChoice, list[tuple[int, int]]]]) -> dict[tuple[str, int], NextHop]:
        return {}

    def hop_score(self, ctx: SearchContext, rel_score: float, ent_score: float, ahead: NextHop | None
                  ) -> tuple[float, str]:
        return rel_score * ent_score, ""

    def judge(self, ctx: SearchContext, state: State) -> dict[str, Any]:
        return {"sufficient": False, "by": "none",
                "reason": "no LLM to judge the chains; searching to the maximum depth"}

    def rank_key(self, ctx: SearchContext, state: State, p: BeamPath) -> tuple[float, ...]:
        return (-p.score,)

    def choose_answer(self, ctx: SearchContext, state: State, paths: list[BeamPath]) -> AnswerChoice | None:
        """The end of the best chain; confidence: its share of the beam's score."""
        return answer_at_end(paths)


def answer_at_end(paths: list[BeamPath], *, bonus: float = 0.0,
                  why: str = "the best chain's end") -> AnswerChoice | None:
    if not paths:
        return None
    total = sum(p.score for p in paths) or 1.0
    share = paths[0].score / total if total > 0 else 1.0 / len(paths)
    return AnswerChoice(path=paths[0], hop=len(paths[0].hops), confidence=round(min(1.0, share + bonus), 3), why=why)
