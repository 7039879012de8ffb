""""This is the answer": the answer candidates a run offers and a person's choice among them, as plain data (no
Streamlit; explorer/pick.py draws it).

The candidates are the trace's own ordered answer list (`Trace.candidates`, tog_core/tog/choice.py). A trace written
before it existed gets the list the page showed then: the search's answer first (`answer_entity`, with the chain that
names it), then the end of every other chain in chain order (what the composed answer calls "Other candidates";
tog_core/bench/measures.answer_candidates is the same order), each entity once, the score of the link that reaches
it, and, when the graph is at hand, the source sentence that best supports that link (render/evidence.support_span).
A choice is recorded apart from the search's answer (`Trace.person_answer`) and never replaces it.
"""
from __future__ import annotations

import re
from dataclasses import asdict, replace
from datetime import UTC, datetime

from tog_core.graphrag.store import GraphStore
from tog_core.render.chains import walk
from tog_core.render.evidence import support_span
from tog_core.render.style import cut
from tog_core.tog.choice import CANDIDATES_SHOWN, AnswerCandidate, ChainLink, PersonAnswer, person_answer, \
    recorded_candidates, with_choice
from tog_core.tog.trace import Link, Trace

SHOWN = CANDIDATES_SHOWN  # candidates shown under the answer; the rest are one click away
TITLE_MAX, SENTENCE_MAX = 200, 1_000  # a title or relation text, a supporting sentence, as shown (data may be huge)
_RANKED_OF = re.compile(r"ranked \d+ of (\d+) candidates\b")  # how a ranked candidate's `why` opens (tog/choice.py)


def answer_list(trace: Trace, graph: GraphStore | None = None) -> list[AnswerCandidate]:
    """The run's answer candidates, the search's answer first: the trace's own list, else one built from its chains
    (sentences filled from `graph` when given)."""
    recorded = recorded_candidates(trace)
    if recorded:
        return recorded
    built = _from_chains(trace)
    return [_with_sentence(c, graph) for c in built] if graph is not None else built


def ranked_in_all(cands: list[AnswerCandidate]) -> int | None:
    """How many candidates the search ranked in all, as their `why` says it ("ranked 2 of 14 candidates …"); the
    trace keeps only the best few of them (tog/recording.MAX_CANDIDATES). None when no `why` says it (a trace
    written before the ranked list, a list built from the chains)."""
    counts = [int(m.group(1)) for c in cands if (m := _RANKED_OF.match(c.why or ""))]
    return max(counts) if counts else None


def kept_words(cands: list[AnswerCandidate]) -> str:
    """How the list stands to the whole ranking, when the run kept less than all of it: "the run kept the 10 best
    of the 14 ranked" (so "ranked 1 of 14" on a card and 3 cards + 7 more add up); "" when it kept them all."""
    ranked = ranked_in_all(cands)
    if ranked is None or ranked <= len(cands):
        return ""
    return f"the run kept the {len(cands)} best of the {ranked} ranked"


def more_label(cands: list[AnswerCandidate]) -> str:
    """The label of the candidates past the first SHOWN: "7 more candidate(s) · the run kept the 10 best of the 14
    ranked" ("7 more candidate(s)" when it kept every one it ranked)."""
    kept = kept_words(cands)
    return f"{len(cands) - SHOWN} more candidate(s)" + (f" · {kept}" if kept else "")


def _walked(chain: list[Link], seed_ids: set[str]) -> list[ChainLink]:
    """A chain's links in walking order (from its topic entity), whatever direction each is stored in."""
    steps = walk([asdict(link) for link in chain], seed_ids)
    out = []
    for i, link in enumerate(chain):
        (a_key, a), (_, b) = steps[i], steps[i + 1]
        forward = a_key == str(link.source_id or link.source)
        out.append(ChainLink(source=a, source_id=(link.source_id if forward else link.target_id) or "",
                             relation=link.relation, target=b,
                             target_id=(link.target_id if forward else link.source_id) or "",
                             relationship_id=link.relationship_id or ""))
    return out


def _from_chains(trace: Trace) -> list[AnswerCandidate]:
    seed_ids = {s.id for s in trace.seeds}
    chains = [c for c in trace.chains if c]
    walked = [_walked(c, seed_ids) for c in chains]

    def at(k: int, j: int) -> AnswerCandidate:  # the entity reached by hop j of chain k
        hop = walked[k][j]
        return AnswerCandidate(title=hop.target, entity_id=hop.target_id, chain=tuple(walked[k][: j + 1]),
                               score=min(1.0, max(0.0, float(chains[k][j].score))))

    out: list[AnswerCandidate] = []
    if trace.answer_entity:
        def names(hop: ChainLink) -> bool:
            return (hop.target_id == trace.answer_entity_id) if trace.answer_entity_id else \
                hop.target == trace.answer_entity

        ends = [(k, len(w) - 1) for k, w in enumerate(walked) if w and names(w[-1])]
        inside = [(k, j) for k, w in enumerate(walked) for j, hop in enumerate(w) if names(hop)]
        found = ends or inside
        out.append(at(*found[0]) if found else AnswerCandidate(title=trace.answer_entity,
                                                               entity_id=trace.answer_entity_id or ""))
    out += [at(k, len(w) - 1) for k, w in enumerate(walked) if w]
    seen: set[str] = set()
    unique = []
    for c in out:
        key = c.entity_id or c.title
        if key not in seen:
            seen.add(key)
            unique.append(c)
    return unique


def _with_sentence(c: AnswerCandidate, graph: GraphStore) -> AnswerCandidate:
    """The candidate with the source sentence that best supports its last link, when it has none yet."""
    if c.sentence or not c.chain:
        return c
    last = c.chain[-1]
    ridx = graph.find_relationship(last.relationship_id) if last.relationship_id else None
    if ridx is None:
        return c
    desc = graph.relationship(ridx).description or last.relation
    for unit in graph.evidence(ridx)[:3]:
        span = support_span(unit.text, relation=desc, source=last.source, target=last.target)
        if span:
            return replace(c, sentence=" ".join(unit.text[span[0]:span[1]].split()))
    return c


def chain_words(c: AnswerCandidate) -> str:
    """The candidate's chain in words: "A —relation→ B —relation→ C" (a break where the links do not join)."""
    parts: list[str] = []
    for i, hop in enumerate(c.chain):
        joined = i > 0 and c.chain[i - 1].target == hop.source
        if not joined:
            parts.append(("; " if parts else "") + cut(hop.source, TITLE_MAX))
        parts.append(f" —{cut(hop.relation, TITLE_MAX)}→ {cut(hop.target, TITLE_MAX)}")
    return "".join(parts)


def choose(trace: Trace, c: AnswerCandidate, *, at: str | None = None) -> Trace:
    """The trace with `c` recorded as the person's answer (replacing any earlier choice)."""
    when = at or datetime.now(UTC).isoformat(timespec="seconds")
    return with_choice(trace, PersonAnswer(entity_id=c.entity_id, title=c.title, at=when))


def clear(trace: Trace) -> Trace:
    """The trace without a person's choice."""
    return with_choice(trace, None)


def is_search_answer(trace: Trace, c: AnswerCandidate) -> bool:
    """Whether `c` is the entity the search answered (its `answer_entity`)."""
    if trace.answer_entity_id and c.entity_id:
        return c.entity_id == trace.answer_entity_id
    return bool(trace.answer_entity) and c.title == trace.answer_entity


def is_chosen(trace: Trace, c: AnswerCandidate) -> bool:
    mine = person_answer(trace)
    if mine is None:
        return False
    return mine.entity_id == c.entity_id if mine.entity_id and c.entity_id else mine.title == c.title


def choice_line(trace: Trace) -> str:
    """What the page says of a person's choice: "You chose X; the search answered Y" ("" without a choice)."""
    mine = person_answer(trace)
    if mine is None:
        return ""
    search = trace.answer_entity or "nothing"
    same = (mine.entity_id == trace.answer_entity_id) if mine.entity_id and trace.answer_entity_id else \
        mine.title == trace.answer_entity
    return (f"You chose {cut(mine.title, TITLE_MAX)}; the search answered {cut(search, TITLE_MAX)}"
            + (" too" if same else "") + ".")
