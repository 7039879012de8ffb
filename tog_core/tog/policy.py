"""The search policy: the few decisions the ToG paper leaves to the scorer and the LLM, as one object the
engine is given, made of four small extension points (each with the paper's default):

* relation scoring (`RelationScoring`): what a relation group reads like to a scorer, which part of the question
  scores it, how raw scores are shaped before the cut, and how many groups the cut keeps (`relations_kept`);
* entity scoring (`EntityScoring`): whether a candidate entity is rated by where it leads next (the engine hands
  the policy each candidate's next edges: a policy never walks the graph), and how relation, entity and next-hop
  ratings make one hop score;
* the stop judge (`StopJudge`): the depth the search expects to answer at, and whether the chains suffice when no
  LLM judges;
* the answer choice (`AnswerPicking`): which chain comes first, which entity the answer names.

`FaithfulPolicy` is the paper: the four defaults. The LLM-free search (word overlap and embeddings instead of an
LLM) needs more help; it lives in `tog_core/policy/cheap.py` as `CheapPolicy`, which overrides them. Trying
numbers of hops is not a policy decision inside the search but a loop around it (`tog_core/policy/depths.py`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol
from collections.abc import Sequence

if TYPE_CHECKING:  # the engine passes itself as the context; only for type names
    from tog_core.tog.state import BeamPath, RelChoice, State


LOW_CONFIDENCE = 0.4  # below this the composed answer and the app say the answer is a guess
GUESS_WORDS = "treat it as a guess"  # how the composed answer and the app say so (views.answer_start reads it back)


@dataclass(frozen=True, kw_only=True)
class AnswerChoice:
    """The entity the answer names: which chain, how far along it, and how sure (0..1; below LOW_CONFIDENCE the
    answer says it is unsure)."""

    path: BeamPath
    hop: int  # 1-based: the entity after this many hops of the chain
    confidence: float
    why: str
    low: float = LOW_CONFIDENCE  # the threshold in force: below it the answer is called a guess
    sentence: str = ""  # the source sentence that best supports the last link ("" when none was looked for or found)
    score: float | None = None  # its place in the answer list (the ranker's probability); None: the confidence
    found: str = ""  # tog/choice.FOUND_HOW's kind ("description", "text"): on no kept chain; "": a chain's

    @property
    def entity(self) -> int:
        """The entity after `hop` hops; hop 0 is the chain's start (a chain that never left its topic entity)."""
        return self.path.hops[self.hop - 1].dst if self.hop > 0 else self.path.start



@dataclass(frozen=True, kw_only=True)
class NextHop:
    """How far a candidate entity can take the search: its best next relation, rated against the step's best."""

    value: float  # 1 for the best of the step, 0 for a dead end
    text: str  # the best next relation as the scorer read it ("" for a dead end)


@dataclass(frozen=True, kw_only=True)
class NextEdges:
    """A candidate entity of the entity stage and the edges the search could take from it next (the engine's edge
    rule already applied): what the lookahead rates, so a policy never walks the graph itself."""

    key: tuple[str, int]  # (relation group key, entity index): the candidate
    path: BeamPath  # the chain one hop longer, ending at the candidate
    rels: Any  # np.ndarray of relationship indices
    others: Any  # np.ndarray of the entities they lead to
    outs: Any  # np.ndarray: stored outgoing from the candidate


class SearchContext(Protocol):
    """What a policy may read of the engine that calls it (never the engine's stages)."""

    graph: Any
    config: Any
    llm: Any
    relation_scorer: Any
    entity_scorer: Any
    prefilter: Any

    def topic_ids(self, state: State) -> frozenset[int]: ...
    def last_depth(self, state: State) -> int: ...


# ---------------------------------------------------------------------------------------------- extension points
# Four small protocols, one per decision the paper leaves to the LLM (and, for relations, how many the cut keeps: N);
# each has the paper's default below, and FaithfulPolicy is the four defaults together.

class RelationScoring(Protocol):
    """Relation pruning: what a relation reads like, which part of the question scores it, how scores are shaped."""

    def relation_text(self, ctx: SearchContext, label: str, ridx: int) -> str: ...
    def relation_query(self, ctx: SearchContext, state: State, i: int) -> tuple[str, str]: ...
    def relation_evidence(self, ctx: SearchContext, groups: Sequence[RelChoice]) -> list[str]: ...
    def relation_scores(self, ctx: SearchContext, state: State, i: int, groups: Sequence[RelChoice],
                        scores: list[float], scored: list[bool]) -> list[float]: ...
    def relation_ties(self, ctx: SearchContext, state: State, i: int, groups: Sequence[RelChoice],
                      scores: Sequence[float]) -> tuple[list[float], list[str]] | None: ...
    def relations_kept(self, ctx: SearchContext) -> int: ...


class EntityScoring(Protocol):
    """Entity pruning: whether candidates are rated by where they lead (`looks_ahead`; the engine then hands
    `rate_next` each candidate's next edges), and how relation, entity and next-hop ratings make a hop score."""

    def looks_ahead(self, ctx: SearchContext, state: State) -> bool: ...
    async def rate_next(self, ctx: SearchContext, state: State,
                        options: Sequence[NextEdges]) -> dict[tuple[str, int], NextHop]: ...
    def hop_score(self, ctx: SearchContext, rel_score: float, ent_score: float, ahead: NextHop | None
                  ) -> tuple[float, str]: ...
    def entity_prior(self, ctx: SearchContext, state: State, entity: int) -> tuple[float, str]: ...
    def beam_scores(self, ctx: SearchContext, state: State, chains: Sequence[BeamPath], path_scores: Sequence[float]
                    ) -> tuple[list[float], list[str], str] | None: ...
    def whole_path(self, ctx: SearchContext, state: State) -> tuple[BeamPath, str] | None: ...


# how a whole_path reason begins: what the app counts as kept beside the beam's N (app/views.keep_words)
BESIDE_BEAM = "beside the beam"


class StopJudge(Protocol):
    """Reasoning without an LLM judge: the depth the search expects to answer at, and whether the chains suffice
    (`judge`; `ahead` holds each chain's next edges when `needs_ahead` asked for them)."""

    def planned_depth(self, ctx: SearchContext, state: State) -> int: ...
    def needs_ahead(self, ctx: SearchContext, state: State) -> bool: ...
    def judge(self, ctx: SearchContext, state: State, ahead: Sequence[NextEdges] = ()) -> dict[str, Any]: ...


class AnswerPicking(Protocol):
    """The answer: which chain comes first, and which entity of the kept chains the answer names."""

    def rank_key(self, ctx: SearchContext, state: State, p: BeamPath) -> tuple[float, ...]: ...
    def choose_answer(self, ctx: SearchContext, state: State, paths: list[BeamPath]) -> AnswerChoice | None: ...
    def rank_answers(self, ctx: SearchContext, state: State, paths: list[BeamPath]) -> list[AnswerChoice]: ...


class SearchPolicy(RelationScoring, EntityScoring, StopJudge, AnswerPicking, Protocol):
    name: str

    def params(self) -> dict[str, Any]: ...


def uses_llm(scorer: Any) -> bool:
    return bool(getattr(scorer, "uses_llm", False))


def llm_judges(ctx: Any) -> bool:
    """Whether the LLM decides when the chains suffice (the paper's evaluate stage), not the policy's `judge`."""
    return ctx.llm is not None and ctx.config.judge != "coverage"


class PaperRelations:
    """The paper's relation pruning: the scorer reads the relation as the graph names it, against the whole
    question, and its numbers are used as they are."""

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

    def relations_kept(self, ctx: SearchContext) -> int:
        """Relations kept per frontier entity: the beam width N, as the paper keeps the top N."""
        return ctx.config.width


class PaperEntities:
    """The paper's entity pruning: no lookahead; a hop's score is relation score x entity score."""

    def relation_ties(self, ctx: SearchContext, state: State, i: int, groups: Sequence[RelChoice],
                      scores: Sequence[float]) -> tuple[list[float], list[str]] | None:
        """How relations tied at the cut-off are ordered: (a second key per group, higher first, and a reason per
        group, "" where it decided nothing), or None: their order in the graph."""
        return None

    def looks_ahead(self, ctx: SearchContext, state: State) -> bool:
        return False

    async def rate_next(self, ctx: SearchContext, state: State,
                        options: Sequence[NextEdges]) -> dict[tuple[str, int], NextHop]:
        return {}

    def hop_score(self, ctx: SearchContext, rel_score: float, ent_score: float, ahead: NextHop | None
                  ) -> tuple[float, str]:
        return rel_score * ent_score, ""

    def entity_prior(self, ctx: SearchContext, state: State, entity: int) -> tuple[float, str]:
        """A factor on a candidate entity's hop score from what the entity is, before any scorer: none here."""
        return 1.0, ""

    def beam_scores(self, ctx: SearchContext, state: State, chains: Sequence[BeamPath], path_scores: Sequence[float]
                    ) -> tuple[list[float], list[str], str] | None:
        """What the entity beam is cut on, given each candidate chain and its path score: (scores, a reason per
        candidate, who scored them), or None for the path scores themselves (the paper's top N)."""
        return None

    def whole_path(self, ctx: SearchContext, state: State) -> tuple[BeamPath, str] | None:
        """A path from the topic entities to the depth the search expects to answer at that the beam keeps at every
        step beside its own N (a relation and a chain each cut would drop), with the reason the trace gives; None:
        the paper's beam, only its top N."""
        return None


class PaperJudge:
    """The paper's reasoning step is the LLM's; without one the search runs to the maximum depth."""

    def planned_depth(self, ctx: SearchContext, state: State) -> int:
        """The depth the search expects to answer at: the maximum (the LLM judge decides when to stop)."""
        return ctx.config.depth

    def needs_ahead(self, ctx: SearchContext, state: State) -> bool:
        return False

    def judge(self, ctx: SearchContext, state: State, ahead: Sequence[NextEdges] = ()) -> dict[str, Any]:
        return {"sufficient": False, "by": "none",
                "reason": "no LLM to judge the chains; searching to the maximum depth"}


class PaperAnswer:
    """The paper's answer: the best-scoring chain, read at its end."""

    def rank_key(self, ctx: SearchContext, state: State, p: BeamPath) -> tuple[float, ...]:
        return (-p.score,)

    def choose_answer(self, ctx: SearchContext, state: State, paths: list[BeamPath]) -> AnswerChoice | None:
        """The end of the best chain; confidence: its share of the beam's score."""
        return answer_at_end(paths)

    def rank_answers(self, ctx: SearchContext, state: State, paths: list[BeamPath]) -> list[AnswerChoice]:
        """The ordered answer list: the choice (the best chain's end) first, then the other chains' ends in chain
        order, each once, scored by its chain's share."""
        return chain_ends(paths, answer_at_end(paths))


class FaithfulPolicy(PaperRelations, PaperEntities, PaperJudge, PaperAnswer):
    """Think-on-Graph as published: the four extension points at their paper defaults."""

    name = "faithful"

    def params(self) -> dict[str, Any]:
        return {}


def chain_ends(paths: list[BeamPath], first: AnswerChoice | None = None) -> list[AnswerChoice]:
    """`first` (the chosen answer), then the end of every chain in order, each entity once; a chain end's score is
    its chain's share of the beam."""
    total = sum(p.score for p in paths) or 1.0
    out = [first] if first is not None else []
    seen = {first.entity} if first is not None else set()
    for p in paths:
        if p.hops and p.end not in seen:
            seen.add(p.end)
            out.append(AnswerChoice(path=p, hop=len(p.hops), confidence=round(p.score / total, 3) if total > 0 else 0.0,
                                    why="a chain's end"))
    return out


def answer_at_end(paths: list[BeamPath], *, bonus: float = 0.0,
                  why: str = "the best chain's end") -> AnswerChoice | None:
    if not paths:
        return None
    total = sum(p.score for p in paths) or 1.0
    share = paths[0].score / total if total > 0 else 1.0 / len(paths)
    return AnswerChoice(path=paths[0], hop=len(paths[0].hops), confidence=round(min(1.0, share + bonus), 3), why=why)
