"""The rule reader: a QuestionReading from the wording alone (scoring/question.py, scoring/hops.py), and the gold
reader: a data set's own hops, answer type and relation path over it (`bench kgqa --reader gold`).

Every wording rule is measured in docs/rules.md; `scoring/rules.py` switches them off one at a time.
"""
from __future__ import annotations

import re
import weakref
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from tog_core.graphrag.store import once_per_graph
from tog_core.prompting.reading_parsing import MAX_HOPS
from tog_core.reading import QuestionReading
from tog_core.scoring import rules
from tog_core.scoring.hops import expected_hops
from tog_core.scoring.text import language_of, tokens, tokens_in
from tog_core.scoring.question import asked_type, hop_phrases, question_split

_WORD = re.compile(r"[^\W_]+")  # a word; "_" separates words, as in a type label PLACE_OF_BIRTH
# per graph, read once and dropped with the graph: its relation names of several words, its entity types
_PHRASES: weakref.WeakKeyDictionary[Any, tuple[str, ...]] = weakref.WeakKeyDictionary()
_TYPES: weakref.WeakKeyDictionary[Any, tuple[str, ...]] = weakref.WeakKeyDictionary()


def question_words(question: str, topics: Sequence[str]) -> Counter[str]:
    """Content words of the question beyond the topic entities' names, with multiplicity: "the director
    of X also directed which films" names "direct" twice, so it takes two hops that mention it."""
    lang = language_of(question)
    # a title read alone may be taken for another language ("Lucien Roussel": English); read as the question is too
    topic_words = {w for t in topics for w in (*tokens(t), *tokens_in(t, lang))}
    return Counter(w for w in tokens(question) if w not in topic_words)


def topic_spans(question: str, topics: Sequence[str]) -> tuple[tuple[int, int], ...]:
    """Where each topic is named in the question (first occurrence, any case); (-1, -1) when it is not."""
    low = question.lower()
    out = []
    for t in topics:
        at = low.find(t.lower()) if t else -1
        out.append((at, at + len(t)) if at >= 0 else (-1, -1))
    return tuple(out)


def relation_names(graph: Any) -> tuple[str, ...]:
    """A typed graph's relation names of several words ("place of birth", "cause of death"), longest first, read
    once per graph from at most 50,000 relationships: the wording reads each as one relation (expected_hops).
    The wording was right for 129 / 124 of 150 PQ-2H / PQ-3H dev questions, 141 / 141 with them; measured in
    docs/rules.md (relation_phrases). () on a GraphRAG graph, whose relation texts are sentences."""
    if graph is None or not graph.has_relation_labels or not rules.on("relation_phrases"):
        return ()
    return once_per_graph(_PHRASES, graph, lambda: _relation_names(graph))


def _relation_names(graph: Any) -> tuple[str, ...]:
    step = max(1, -(-graph.n_relationships // 50_000))  # at most 50,000 read
    names = {" ".join(lab.replace("_", " ").split()) for lab in graph.labels(range(0, graph.n_relationships, step))}
    # content words at both ends ("place of birth"; not "directed by", whose "by" keeps the verb apart from the
    # name that follows it)
    keep = [n for n in names if 1 < len(n.split()) <= 4 and tokens(n.split()[0]) and tokens(n.split()[-1])]
    return tuple(sorted(keep, key=lambda n: (-len(n), n)))


def entity_types(graph: Any) -> tuple[str, ...]:
    """The graph's entity types, most frequent first, read once per graph from about 50,000 entities (every k-th):
    what a question's asked type can be checked against (CheapPolicy's type gate, the app's "how the question was
    read")."""
    return once_per_graph(_TYPES, graph, lambda: _entity_types(graph))


def _entity_types(graph: Any) -> tuple[str, ...]:
    step = max(1, graph.n_entities // 50_000)
    counts = Counter(t for t in (graph.entity(i).type for i in range(0, graph.n_entities, step)) if t)
    return tuple(t for t, _ in counts.most_common())


def read(question: str, topics: Sequence[str], *, graph: Any = None) -> QuestionReading:
    """The rule reader: the question's language, topic spans, asked type, relation phrases in walking order, the
    near / far split, the number of relations named and the content words, each by the wording rules. `graph`
    (optional) lends a typed graph's relation names of several words to the hop count."""
    titles = [t for t in topics if t]
    asked, named = asked_type(question)
    near, far = question_split(question, titles)
    return QuestionReading(
        question=question, language=language_of(question), topics=tuple(titles),
        spans=topic_spans(question, titles), asked=tuple(asked), asked_named=named,
        phrases=tuple(hop_phrases(question, titles)), near=near, far=far,
        # a rambling question names many "relations"; no search goes deeper than the engine's largest depth
        hops=min(MAX_HOPS, expected_hops(question, titles, relation_names(graph))),
        words=dict(question_words(question, titles)), by="rules")


def gold(record: dict[str, Any], base: QuestionReading) -> QuestionReading:
    """A data set's own reading of one question over the rule reading `base`: `hops`, `answer_type` (the asked
    type, as its label's words) and `relation_path` (the relation phrases in walking order: "place_of_death" ->
    "place of death", MetaQA's "starred_actors (inverse)" -> "starred actors"), where the record has them."""
    changes: dict[str, Any] = {"by": "gold"}
    hops = record.get("hops")
    if isinstance(hops, int) and hops >= 1:
        changes["hops"] = hops
    kind = record.get("answer_type")
    if isinstance(kind, str) and kind.strip():
        changes["asked"] = type_stems(kind)
        changes["asked_named"] = True
    path = record.get("relation_path")
    if isinstance(path, list) and path and all(isinstance(r, str) for r in path):
        changes["phrases"] = tuple(" ".join(re.sub(r"\(inverse\)", " ", r).replace("_", " ").split()) for r in path)
    return replace(base, **changes)


def type_stems(text: str) -> tuple[str, ...]:
    """The stems a reading holds for words naming what is asked ("town", "films", a type label such as GEO or
    PLACE_OF_BIRTH): each word read as the rule reader reads the noun after "which" (so "films" keeps the stem the
    stop words drop), else its tokens. () when no word names anything ("the of")."""
    out = [s for w in _WORD.findall(text.lower()) for s in (asked_type(f"which {w}")[0] or tokens(w))]
    return tuple(dict.fromkeys(out))
