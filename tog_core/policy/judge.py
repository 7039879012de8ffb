"""The stop judge of CheapPolicy (policy/cheap.py): sufficient once a chain's relations match every question word, once
the planned depth is reached, or (GraphRAG) once nothing one hop further matches a word still unmatched; then, while no
chain ends in the type the question asks for, one hop more."""
from __future__ import annotations

from typing import Any
from collections.abc import Callable, Sequence

from tog_core.policy.answers import exact_depth
from tog_core.policy.coverage import covered
from tog_core.policy.coverage import verdict as coverage_verdict
from tog_core.reading import QuestionReading
from tog_core.scoring.question import type_matches
from tog_core.scoring.text import first_sentence, tokens, words_as_written
from tog_core.tog.policy import NextEdges, SearchContext
from tog_core.tog.state import Hop, State

EVIDENCE_CHARS = 300  # the most of a neighbour's first sentence read beside a relation


class CheapJudge:
    """The judge methods of CheapPolicy; they read its switches, `reading`, `hop_words` and `_graph_has_type`."""

    stop_when_nothing_ahead: bool
    type_gate: bool
    reading: Callable[[SearchContext, State], QuestionReading]  # CheapPolicy's
    hop_words: Callable[[SearchContext, Hop], str]  # CheapPolicy's
    _graph_has_type: Callable[[SearchContext, list[str]], bool]  # CheapPolicy's

    def needs_ahead(self, ctx: SearchContext, state: State) -> bool:
        """Whether the judge reads the edges one hop further (stop_when_nothing_ahead, GraphRAG, no known depth)."""
        return self.stop_when_nothing_ahead and not ctx.graph.has_relation_labels and not exact_depth(ctx, state)

    def judge(self, ctx: SearchContext, state: State, ahead: Sequence[NextEdges] = ()) -> dict[str, Any]:
        """Sufficient once a chain's relations match every question word (coverage.verdict; a chain back at its
        start answers nothing: the question names its topic), once the planned depth is reached, or (GraphRAG)
        once nothing one hop further (`ahead`, the chains' next edges) matches a question word still unmatched;
        then, while no chain ends in the type the question asks for, one hop more."""
        topics = ctx.topic_ids(state)  # a chain ending at a topic (or back home) answers nothing: not sufficient
        reading = self.reading(ctx, state)
        v = coverage_verdict(reading.want,
                             [[self.hop_words(ctx, h) for h in p.hops] for p in state.paths
                              if p.hops and not p.answers_nothing(topics)], words_as_written(reading.question))
        planned = ctx.last_depth(state)
        if not v["sufficient"] and (planned >= ctx.config.depth or state.depth < planned):
            if not self.needs_ahead(ctx, state):
                return v
            left = self._nothing_ahead(ctx, state, ahead)
            if left is None:
                return v
            v = {"sufficient": True, "by": "ahead",
                 "reason": f"no relation one hop further matches what the question still asks ({left})"}
        elif not v["sufficient"]:
            v = {"sufficient": True, "by": "plan",
                 "reason": f"the question names {planned} relation{'s' if planned > 1 else ''}; {v['reason']}"}
        asked = list(reading.asked)
        ends = [ctx.graph.entity(p.end).type for p in state.paths if p.hops and not p.answers_nothing(topics)]
        if (self.type_gate and asked and self._graph_has_type(ctx, asked)
                and not any(type_matches(asked, t) for t in ends)):
            return {"sufficient": False, "by": "type",
                    "reason": f"no chain ends in what the question asks for ({' '.join(asked)}): one hop more"}
        return v

    def _nothing_ahead(self, ctx: SearchContext, state: State, ahead: Sequence[NextEdges]) -> str | None:
        """The question words no chain has matched yet, when none of them occurs in any relation the chains could
        take next (`ahead`, read with its neighbour evidence); None when something ahead still matches."""
        want = self.reading(ctx, state).want
        missing: set[str] = set()
        words: set[str] = set()
        for nxt in ahead:
            missing |= set(want - covered(want, [self.hop_words(ctx, h) for h in nxt.path.hops]))
            # free-text relations (the judge asks only on GraphRAG graphs), each with its neighbour's first sentence
            for text, e in zip(ctx.graph.descriptions(nxt.rels[:2000]), ctx.graph.entities(nxt.others[:2000])):
                words.update(tokens(f"{text} {_what_it_is(e)}"))
                if missing & words:
                    return None
        return ", ".join(sorted(missing)) if missing and not missing & words else None


def _what_it_is(e: Any) -> str:
    """The neighbour evidence of a GraphRAG relation: the first sentence of its target entity's description."""
    return first_sentence(e.description, limit=EVIDENCE_CHARS)
