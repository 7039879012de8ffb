"""Prompt templates of the ToG stages, as named constants, and builders returning chat messages.

Stages: relation scoring, entity scoring, pair scoring ("fast mode": one call for the whole
frontier), evaluation (are the chains enough?), answering, topic-entity extraction, and reading the
question (how many relations it chains, what it asks for, the relation phrases in walking order).

Kept short so small local models cope, and each says exactly which JSON to return. Every piece of
graph text is passed through :func:`clean_text` first: newlines collapsed, brackets/braces/quotes
neutralised (so an entity can't fake a ``[3]`` candidate index or close our JSON example), and
capped in length.
"""

from __future__ import annotations

import re

__all__ = [
    "SYSTEM_JSON", "SYSTEM_ANSWER", "RELATION_TEMPLATE", "ENTITY_TEMPLATE", "PAIR_TEMPLATE",
    "EVALUATE_TEMPLATE", "ANSWER_TEMPLATE", "TOPIC_TEMPLATE", "READING_TEMPLATE", "SCORES_FORMAT",
    "COMPACT_SCORES_FORMAT", "compact", "compact_scores_schema",
    "SCORES_SCHEMA", "EVALUATE_SCHEMA", "TOPIC_SCHEMA", "READING_SCHEMA",
    "CANDIDATE_CHARS", "CHAIN_CHARS", "EVIDENCE_CHARS", "QUESTION_CHARS", "NO_CHAINS",
    "clean_text", "numbered", "relation_prompt", "entity_prompt", "pair_prompt",
    "evaluate_prompt", "answer_prompt", "topic_prompt", "reading_prompt",
]

CANDIDATE_CHARS = 300  # per candidate line
CHAIN_CHARS = 500  # per reasoning chain
EVIDENCE_CHARS = 1200  # per evidence excerpt
QUESTION_CHARS = 1000
NO_CHAINS = "(none yet)"
MAX_TOPICS = 5  # topic titles named in the reading prompt

SYSTEM_JSON = ("You help answer questions by exploring a knowledge graph step by step. "
               "Follow the requested output format exactly and reply with JSON only.")
SYSTEM_ANSWER = ("You answer questions from knowledge-graph reasoning chains and source text. "
                 "Be brief and factual.")

SCORES_FORMAT = ('Reply with JSON only, one entry for every candidate, in this format:\n'
                 '{{"scores": [{{"i": <candidate number>, "score": <number from 0 to 1>, '
                 '"reason": "<few words>"}}, ...]}}\n'
                 '0 means useless, 1 means certainly useful.')

RELATION_TEMPLATE = ("Question: {question}\n\n"
                     "Reasoning chains found so far:\n{chains}\n\n"
                     'We are at the entity "{entity}". Its candidate relations are below; each is a '
                     "free-text description of a link to another entity, not a fixed predicate.\n"
                     "{candidates}\n\n"
                     "For each candidate, rate how likely following it helps answer the question.\n"
                     + SCORES_FORMAT)

ENTITY_TEMPLATE = ("Question: {question}\n\n"
                   "We followed this relation: {relation}\n"
                   'Each candidate below is an entity it leads to, written as "title — description".\n'
                   "{candidates}\n\n"
                   "For each candidate, rate how likely it helps answer the question.\n"
                   + SCORES_FORMAT)

PAIR_TEMPLATE = ("Question: {question}\n\n"
                 "Reasoning chains found so far:\n{chains}\n\n"
                 "Each candidate below is one step in the knowledge graph: "
                 "source entity — relation — target entity.\n"
                 "{candidates}\n\n"
                 "For each candidate, rate how likely taking that step helps answer the question.\n"
                 + SCORES_FORMAT)

EVALUATE_TEMPLATE = ("Question: {question}\n\n"
                     "Knowledge chains from the graph:\n{chains}\n\n"
                     "Are these chains, together with general knowledge, enough to answer the "
                     "question?\n"
                     'Reply with JSON only: {{"sufficient": <true or false>, '
                     '"reason": "<few words>"}}')

ANSWER_TEMPLATE = ("Question: {question}\n\n"
                   "Knowledge chains:\n{chains}\n\n"
                   "Source text:\n{evidence}\n\n"
                   "Answer the question using the chains and source text. Cite the chains you use "
                   "by number, like [1] or [2][3]. If they do not contain the answer, say so, then "
                   "give your best answer from general knowledge and mark it as such.")

TOPIC_TEMPLATE = ("Question: {question}\n\n"
                  "List the named entities this question is about (people, places, organisations, "
                  "works, events, concepts), written as they appear in the question.\n"
                  'Reply with JSON only: {{"entities": ["<name>", ...]}}')

READING_TEMPLATE = ("Question: {question}\n"
                    "Topic entities (where the answer's chain of relations starts): {topics}\n\n"
                    "Read the question as a chain of relations in a knowledge graph, walked from a topic entity "
                    "to the answer. Say how many relations it chains (hops), what kind of thing the answer is, "
                    "in one word (person, place, organization, event, year, film, ...), and the relation phrases "
                    "in the order the chain walks them, from the topic entity outward.\n"
                    'Example: for "Where was the wife of Ann Lee born?" from Ann Lee: {{"hops": 2, '
                    '"answer_type": "place", "relations": ["wife", "born in"]}}\n'
                    'Reply with JSON only: {{"hops": <number>, "answer_type": "<one word>", '
                    '"relations": ["<phrase>", ...]}}')

SCORES_SCHEMA: dict = {
    "title": "scores",
    "type": "object",
    "properties": {
        "scores": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"i": {"type": "integer"}, "score": {"type": "number"},
                               "reason": {"type": "string"}},
                "required": ["i", "score", "reason"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["scores"],
    "additionalProperties": False,
}

EVALUATE_SCHEMA: dict = {
    "title": "evaluation",
    "type": "object",
    "properties": {"sufficient": {"type": "boolean"}, "reason": {"type": "string"}},
    "required": ["sufficient", "reason"],
    "additionalProperties": False,
}

TOPIC_SCHEMA: dict = {
    "title": "topic_entities",
    "type": "object",
    "properties": {"entities": {"type": "array", "items": {"type": "string"}}},
    "required": ["entities"],
    "additionalProperties": False,
}

READING_SCHEMA: dict = {
    "title": "question_reading",
    "type": "object",
    "properties": {"hops": {"type": "integer"}, "answer_type": {"type": "string"},
                   "relations": {"type": "array", "items": {"type": "string"}}},
    "required": ["hops", "answer_type", "relations"],
    "additionalProperties": False,
}

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u2028\u2029]")
_NEUTRAL = str.maketrans({"[": "(", "]": ")", "{": "(", "}": ")", '"': "'", "\u201c": "'",
                          "\u201d": "'", "`": "'"})
_TAG = re.compile(r"<(?=[A-Za-z/!?|])")  # "<think>", "</s>", "<|im_end|>"-like openers


def clean_text(text: object, limit: int = CANDIDATE_CHARS) -> str:
    """One line of graph/user text, safe to place in a prompt: whitespace collapsed, control
    characters dropped, ``[ ] { } " `` and tag openers ``<x`` replaced by harmless look-alikes,
    capped at ``limit`` characters."""
    value = "" if text is None else str(text)
    value = _TAG.sub("‹", _CONTROL.sub(" ", value).translate(_NEUTRAL))
    value = " ".join(value.split())
    if len(value) > limit:
        value = value[: max(0, limit - 1)].rstrip() + "…"
    return value


def numbered(items: list[str], *, start: int = 0, limit: int = CANDIDATE_CHARS,
             empty: str = "(none)") -> str:
    """``[start] item`` lines, one per item, each cleaned and capped."""
    if not items:
        return empty
    return "\n".join(f"[{start + k}] {clean_text(item, limit)}" for k, item in enumerate(items))


def _bullets(items: list[str], *, limit: int = CHAIN_CHARS, empty: str = NO_CHAINS) -> str:
    """``- item`` lines: context that must not look like numbered candidates."""
    return "\n".join(f"- {clean_text(item, limit)}" for item in items) if items else empty


def _messages(system: str, user: str) -> list[dict]:
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def relation_prompt(question: str, entity_title: str, candidates: list[str],
                    chains_so_far: list[str]) -> list[dict]:
    """Score the numbered candidate relations of one frontier entity (answer by index)."""
    user = RELATION_TEMPLATE.format(
        question=clean_text(question, QUESTION_CHARS),
        chains=_bullets(chains_so_far),
        entity=clean_text(entity_title, CANDIDATE_CHARS),
        candidates=numbered(candidates))
    return _messages(SYSTEM_JSON, user)


def entity_prompt(question: str, relation_text: str, candidates: list[str]) -> list[dict]:
    """Score the candidate entities reached through one relation ("title — description" each)."""
    user = ENTITY_TEMPLATE.format(question=clean_text(question, QUESTION_CHARS),
                                  relation=clean_text(relation_text, CANDIDATE_CHARS),
                                  candidates=numbered(candidates))
    return _messages(SYSTEM_JSON, user)


def pair_prompt(question: str, pairs: list[str], chains_so_far: list[str]) -> list[dict]:
    """Fast mode: score (relation, entity) steps of the whole frontier in one call."""
    user = PAIR_TEMPLATE.format(
        question=clean_text(question, QUESTION_CHARS),
        chains=_bullets(chains_so_far),
        candidates=numbered(pairs))
    return _messages(SYSTEM_JSON, user)


def evaluate_prompt(question: str, chains: list[str]) -> list[dict]:
    """Ask whether the chains so far suffice to answer (yes/no with a short reason)."""
    user = EVALUATE_TEMPLATE.format(
        question=clean_text(question, QUESTION_CHARS),
        chains=numbered(chains, start=1, limit=CHAIN_CHARS, empty=NO_CHAINS))
    return _messages(SYSTEM_JSON, user)


def answer_prompt(question: str, chains: list[str], evidence: list[str]) -> list[dict]:
    """Final answer in prose, citing chains as [1], [2]..."""
    user = ANSWER_TEMPLATE.format(
        question=clean_text(question, QUESTION_CHARS),
        chains=numbered(chains, start=1, limit=CHAIN_CHARS, empty="(no chains were found)"),
        evidence=_bullets(evidence, limit=EVIDENCE_CHARS, empty="(none)"))
    return _messages(SYSTEM_ANSWER, user)


COMPACT_SCORES_FORMAT = ('Reply with JSON only: {{"scores": [<score of [0]>, <score of [1]>, ...]}} with exactly '
                         '{n} numbers from 0 to 1, in candidate order. 0 means useless, 1 means certainly useful.')


def compact_scores_schema(n: int) -> dict:
    """Scores as a bare list of n numbers: ~4 output tokens per candidate, for small local models."""
    return {"title": "scores", "type": "object", "additionalProperties": False, "required": ["scores"],
            "properties": {"scores": {"type": "array", "items": {"type": "number"}, "minItems": n, "maxItems": n}}}


def compact(messages: list[dict], n: int) -> list[dict]:
    """The same scoring prompt asking for bare scores (no reasons): far fewer tokens to generate."""
    long_format = SCORES_FORMAT.format()
    out = [dict(m) for m in messages]
    last = out[-1]
    if long_format not in last["content"]:
        raise ValueError("not a scoring prompt: the scores format is missing")
    last["content"] = last["content"].replace(long_format, COMPACT_SCORES_FORMAT.format(n=n))
    return out


def topic_prompt(question: str) -> list[dict]:
    """Extract the topic entity names of a question."""
    return _messages(SYSTEM_JSON, TOPIC_TEMPLATE.format(question=clean_text(question, QUESTION_CHARS)))


def reading_prompt(question: str, topics: list[str]) -> list[dict]:
    """Read the question once: its number of hops, the answer's type, the relation phrases in walking order."""
    names = ", ".join(f"'{clean_text(t, CANDIDATE_CHARS)}'" for t in topics[:MAX_TOPICS]) or "(none found)"
    return _messages(SYSTEM_JSON, READING_TEMPLATE.format(question=clean_text(question, QUESTION_CHARS),
                                                          topics=names))
