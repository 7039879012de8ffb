"""Guidance for a newcomer, made from the loaded graph (no Streamlit here):

* `example_questions` — a few 1–2 hop questions read off the best-connected entities and the sentences of their
  relations ("Bob Cratchit is the father of Peter Cratchit." → "Who is the father of Peter Cratchit?"), each with
  the entity that answers it;
* `did_you_mean` — other entities a question may be about, ranked by how well their words match the question's.
  A title's words that are in a large share of the graph's titles ("the", "of") count for nothing: the graph says
  which words are structural, no word list does.
"""
from __future__ import annotations

import math
import re
import weakref
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from tog_core.graphrag.store import GraphStore, once_per_graph
from tog_core.scoring.text import first_sentence, language_of

_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?", re.UNICODE)
STRUCTURAL_SHARE = 0.07  # a word in more than this share of the titles ("the", "of") tells no entity apart
FUZZY = 88  # rapidfuzz ratio at which two longer words are the same word (plural, spelling)


def words(text: str) -> list[str]:
    """Lower-case words, a possessive 's dropped ("Tim's" → "tim")."""
    out = []
    for w in _WORD.findall(text.lower()):
        out.append(w[:-2] if w.endswith("'s") else w)
    return out


@dataclass(frozen=True)
class _Index:
    by_word: dict[str, tuple[int, ...]]  # word -> indices of the titles holding it
    structural: frozenset[str]
    titles: tuple[str, ...]


_INDEX: weakref.WeakKeyDictionary[Any, _Index] = weakref.WeakKeyDictionary()


def _index(graph: GraphStore) -> _Index:
    return once_per_graph(_INDEX, graph, lambda: _make_index(graph))


def _make_index(graph: GraphStore) -> _Index:
    titles = tuple(graph.all_titles())
    by: dict[str, list[int]] = {}
    for i, t in enumerate(titles):
        for w in set(words(t)):
            by.setdefault(w, []).append(i)
    cap = max(3, int(STRUCTURAL_SHARE * len(titles)))
    return _Index(by_word={w: tuple(v) for w, v in by.items()},
                  structural=frozenset(w for w, v in by.items() if len(v) > cap), titles=titles)


def _same(a: str, b: str) -> bool:
    if a == b:
        return True
    if min(len(a), len(b)) < 5:
        return False
    from rapidfuzz import fuzz

    return fuzz.ratio(a, b) >= FUZZY


def did_you_mean(graph: GraphStore, question: str, current: Iterable[str], *, limit: int = 5) -> list[str]:
    """Other entities the question may be about, best first; the current topic entities left out. Two kinds:

    * titles matching the question's words: each word weighs what it tells apart (its rarity among the graph's
      titles), and a title is offered when at least half of its weight is words of the question and it either
      shares a word with a current topic entity or covers two words of the question ("TOWN" alone in "In which
      town …" names no topic; "THE END OF IT" is mostly words the question does not have);
    * longer names holding a current topic entity's whole name ("EBENEZER SCROOGE" for "SCROOGE"), the best
      connected first.
    """
    idx = _index(graph)
    n = len(idx.titles)
    cur = [c for c in current if c]

    def weight(w: str) -> float:
        return 0.0 if w in idx.structural else math.log((n + 1) / (len(idx.by_word.get(w, ())) + 1)) + 0.1

    q = [w for w in dict.fromkeys(words(question)) if w not in idx.structural]
    seed_names = [set(words(c)) - idx.structural for c in cur]
    seed_words = set().union(*seed_names) if seed_names else set()
    pool: set[int] = set()
    for w in q:
        pool.update(idx.by_word.get(w, ()))
        if len(w) >= 5:  # a near spelling: the title words that start alike
            pool.update(i for k, v in idx.by_word.items() if k[:3] == w[:3] and k != w and _same(k, w) for i in v)
    matching, holding = [], []
    for i in pool:
        title = idx.titles[i]
        if title in cur:
            continue
        meaningful = [w for w in dict.fromkeys(words(title)) if w not in idx.structural]
        total = sum(weight(w) for w in meaningful)
        if not meaningful or total <= 0:
            continue
        hit = [w for w in meaningful if any(_same(w, x) for x in q)]
        share = sum(weight(w) for w in hit) / total
        if share >= 0.5 and (seed_words & set(hit) or len(hit) >= 2 or not cur):
            matching.append((-round(share, 3), -len(hit), -_degree(graph, title), title))
        elif any(name and name <= set(meaningful) for name in seed_names):
            holding.append((-_degree(graph, title), title))
    out = [t for *_, t in sorted(matching)][:limit]
    out += [t for _, t in sorted(holding)][: max(0, limit - len(out))]
    return out


def _degree(graph: GraphStore, title: str) -> int:
    i = graph.find_title(title)
    return graph.degree(i) if i is not None else 0


# ---------------------------------------------------------------------------------------------- examples

@dataclass(frozen=True)
class Example:
    question: str
    answer: str  # the entity that answers it, as the graph names it
    hops: int


_WH = {"PERSON": "Who", "ORGANIZATION": "Which organisation", "GEO": "Which place", "EVENT": "Which event"}


def _kind_noun(title: str, description: str) -> str | None:
    """The noun a title ends with when its own description uses it for what the entity is ("Ashwater River": "…
    is a river …" -> "river"; "Port Anselm": "a harbour town" has no "anselm" -> None): "Which river flows …",
    not "Which place flows …"."""
    last = title.split()[-1].lower() if title.split() else ""
    if len(last) < 3 or not last.isalpha():
        return None
    return last if _called(last, description) else None


def _called(noun: str, description: str) -> bool:
    """Whether a description's first sentence calls its entity a `noun` ("… is a bustling harbor town …": "town")."""
    first = first_sentence(description, limit=300).lower()
    return re.search(rf"\b(?:a|an|the)\s+(?:\w+\s+){{0,2}}{re.escape(noun.lower())}\b", first) is not None


_KIND_OF = re.compile(r"^(?P<rest>.*?)\s*\bthe\s+(?P<noun>[^\W\d_]{3,})\s+of$", re.IGNORECASE)


def _without_kind(phrase: str, obj: str, graph: GraphStore) -> str:
    """`phrase` without a closing "the <noun> of" that only says what `obj` is ("flows through the town of" before
    Saltmere, a town): when a description of `obj` stands in its place, "flows through the capital of the Verdant
    Isles" reads better than "flows through the town of the capital of …". The graph's own description says what
    `obj` is; kept as it is when it does not say so."""
    m = _KIND_OF.match(phrase)
    i = graph.find_title(obj)
    if m is None or i is None or not _called(m["noun"], graph.entity(i).description or ""):
        return phrase
    return m["rest"]


def _fact(sentence: str, subject: str, obj: str) -> str | None:
    """The words between `subject` and `obj` when the sentence is "<subject> <words> <obj>." (a short relation
    phrase that starts with a verb-like word), else None."""
    s = " ".join(sentence.split()).rstrip(". ")
    if s.lower().startswith("the ") and not subject.lower().startswith("the "):
        s = s[4:]
    low = s.lower()
    if not low.startswith(subject.lower()) or not low.endswith(obj.lower()):
        return None
    middle = s[len(subject): len(s) - len(obj)].strip(" ,")
    ws = middle.split()
    if not 1 <= len(ws) <= 7 or any(ch in middle for ch in ".;:()\"") or ws[0].lower() in ("and", "or", "who"):
        return None
    return middle


# words a title-cased title keeps in lower case past its first word ("The End of It", "École des Beaux-Arts")
_MINOR = frozenset("a an and as at but by for from in into nor of on or per the to upon via with "
                   "au aux d de des du en et l la le les un une".split())
_ROMAN = re.compile(r"X{0,3}(?:IX|IV|V?I{0,3})")  # a ruler's number: "GEORGE III", "LOUIS XIV" (not "MIX")
_ELIDED = re.compile(r"([^\W\d_])(['’])([^\W\d_]{3,})")  # "O'BRIEN", "D'ARTAGNAN": both parts capitalised


def as_written(title: str) -> str:
    """A title as a person writes it in a sentence: an all-caps title ("SCROOGE'S OFFICE", as some GraphRAG
    extractions name every entity) in title case ("Scrooge's Office", "The End of It", "King George III"); a title
    with any lower-case letter kept as the graph writes it ("iPhone", "Émile Garnier")."""
    if not title.isupper():
        return title

    def cap(piece: str) -> str:  # "scrooge's" -> "Scrooge's", "o'brien" -> "O'Brien"
        m = _ELIDED.fullmatch(piece)
        if m:
            return m[1].upper() + m[2] + m[3].capitalize()
        i = next((i for i, ch in enumerate(piece) if ch.isalpha()), 0)  # "(a)" -> "(A)"
        return piece[:i] + piece[i:i + 1].upper() + piece[i + 1:]

    out = []
    for k, word in enumerate(title.split(" ")):
        bare = word.strip(".,;:()\"")
        if k and bare.lower() in _MINOR:
            out.append(word.lower())
        elif k and bare and _ROMAN.fullmatch(bare):
            out.append(word)
        else:
            out.append("-".join(cap(part) for part in word.lower().split("-")))
    return " ".join(out)


def example_questions(graph: GraphStore, *, limit: int = 4, scan: int = 20) -> list[Example]:
    """A few questions the graph can answer, from its `scan` best-connected entities: one hop ("Who is the father
    of Peter Cratchit?") and, where a fact's object is itself the subject of a definite fact ("… is the capital
    town of …"), two hops. Made from relation sentences of the form "<A> <phrase> <B>.", so every question is a
    sentence of the graph turned round; none when the graph has no such sentences."""
    import numpy as np

    deg = np.asarray(graph.degrees_of(np.arange(graph.n_entities)))
    if deg.size == 0:
        return []
    order = [int(i) for i in np.argsort(-deg, kind="stable")[:scan]]
    facts: list[tuple[str, str, str]] = []  # (subject, phrase, object)
    seen: set[tuple[str, str]] = set()
    for hub in order:
        rels, others, _out = graph.neighbors(hub)
        for r in list(rels[:60]):
            rel = graph.relationship(int(r))
            for a, b in ((rel.source, rel.target), (rel.target, rel.source)):
                phrase = _fact(rel.description, a, b)
                if phrase and (a, b) not in seen:
                    seen.add((a, b))
                    facts.append((a, phrase, b))
    if not facts:
        return []

    def unique(a: str, phrase: str, b: str) -> bool:  # no other entity is "<x> <phrase> <b>": one right answer
        i = graph.find_title(b)
        if i is None:
            return False
        rels, _o, _d = graph.neighbors(i)
        for r in list(rels[:200]):
            rel = graph.relationship(int(r))
            x = rel.source if rel.target == b else rel.target
            if x != a and _fact(rel.description, x, b) == phrase:
                return False
        return True

    facts = [f for f in facts if unique(*f)]

    def wh(title: str, lang: str = "en") -> str | None:
        """The question word for an answer entity in the fact's language; None where no question can be made in
        it (a French fact gets "Qui" for a person; other kinds and other languages: no example)."""
        i = graph.find_title(title)
        if lang != "en":
            person = i is not None and str(graph.entity(i).type or "").upper() == "PERSON"
            return "Qui" if lang == "fr" and person else None
        if i is None:
            return "What"
        e = graph.entity(i)
        noun = _kind_noun(e.title, e.description or "")
        return f"Which {noun}" if noun else _WH.get(str(e.type or "").upper(), "What")

    one: list[Example] = []
    used: Counter[str] = Counter()
    for a, phrase, b in facts:
        if used[b] >= 1 or used[a] >= 2:
            continue  # spread over the graph, not five questions about one hub
        word = wh(a, language_of(f"{phrase} {b}"))
        if word is None:
            continue
        used[b] += 1
        used[a] += 1
        named = as_written(b)  # "Scrooge's Office", not the graph's "SCROOGE'S OFFICE"
        # an elided article or preposition joins its word: "la fille d'Émile Garnier", not "d' Émile"
        fact = f"{phrase}{named}" if phrase.endswith(("'", "’")) else f"{phrase} {named}"
        one.append(Example(question=f"{word} {fact} ?" if word == "Qui" else f"{word} {fact}?", answer=a, hops=1))
    two: list[Example] = []
    by_subject = {a: (phrase, b) for a, phrase, b in facts if phrase.lower().startswith("is the ")}
    for a, phrase, b in facts:
        if b in by_subject and by_subject[b][1] != a and not phrase.lower().startswith("is "):
            p2, c = by_subject[b]
            word = wh(a, language_of(f"{phrase} {p2} {c}"))
            if word is None or word == "Qui":  # "is the ..." is an English pattern
                continue
            two.append(Example(question=f"{word} {_without_kind(phrase, b, graph)} {p2[3:]} {as_written(c)}?", answer=a,
                               hops=2))
            break
    picked = one[: max(1, limit - len(two[:1]))] + two[:1]
    return sorted(picked, key=lambda e: e.hops)[:limit] if picked else []



# ---------------------------------------------------------------------------------------------- the words of a step

# what the words in a step's scores and reasons mean, for a person who has not read the ToG paper (the Explore page
# shows them under each stage's table)
STEP_WORDS: tuple[tuple[str, str], ...] = (
    ("beam, width", "the search keeps only the best few chains at each depth (the width, 3 by default) and drops the "
                    "rest; a candidate that is not kept is cut from the beam"),
    ("relations, entities", "each depth has two stages: first which relations to follow from the chains' ends, then "
                            "which entities they lead to are kept"),
    ("score, cut-off", "what the candidates are ranked on at this stage; the cut-off is the score of the last one "
                       "kept, and candidates tied with it are broken by the next signal the reason names"),
    ("BM25", "a word-match score: how many of the question's words, rarer ones counting more, the relation's text "
             "uses"),
    ("e5, the embedder", "a small language model packaged with the app (multilingual-e5-small) that reads two texts "
                         "and says how close their meanings are, whatever their words"),
    ("fused by rank", "two rankings combined by the places they give a candidate, not by their numbers (so neither "
                      "needs a weight)"),
    ("lookahead", "an entity rated by the best relation leaving it, when its own text says little"),
    ("path score", "how well the whole chain so far was rated, link by link"),
    ("not yet covered", "question words no relation of the chain uses yet: the search goes on while some are left"),
    ("the rule's pick", "the answer the wording rules would choose: of the best chains' entities, the one nearest "
                        "their ends whose type is what the question asks for"),
)


def step_words_markdown() -> str:
    """STEP_WORDS as a Markdown list (the texts are ours, not data)."""
    return "\n".join(f"- **{term}**: {meaning}." for term, meaning in STEP_WORDS)


# what the two outcomes of an evaluate step mean (its choice is a single radio, not a table with ticks)
EVALUATE_WORDS: tuple[tuple[str, str], ...] = (
    ("answer now", "the search stops here and the answer is ranked from the chains kept so far"),
    ("search one level deeper", "one more depth: first which relations to follow from the chains' ends, then which "
                                "entities they lead to, up to the run's maximum depth"),
    ("the automatic choice", "what the search would do on its own, chosen when the step opens; its reason is under "
                             "it. Without an LLM the wording rules decide (the number of hops settled before the "
                             "search, the question words the chains' relations cover, the kind of entity asked "
                             "for); with an LLM, the model reads the chains and says whether they answer the "
                             "question"),
    ("not yet covered", "question words no relation of the chain uses yet: the search goes on while some are left"),
    ("override", "choosing the other one is recorded as your override, and the search picture marks it with a "
                 "pink ✎"),
)


def step_help(stage: str) -> tuple[str, str]:
    """The title and the Markdown of the help under a step's choice: the words of the candidates' table, or for an
    evaluate step (one choice of two outcomes, no table) what the two outcomes and their reason mean."""
    if stage == "evaluate":
        return ("What these two choices mean",
                "\n".join(f"- **{term}**: {meaning}." for term, meaning in EVALUATE_WORDS))
    return "What the words in this table mean", step_words_markdown()


def step_pending(stage: str) -> str:
    """When a person's choice at a step counts (a reload before Continue starts the step again)."""
    if stage == "evaluate":
        return ("Your choice counts when you press Continue; until then it lives in this page only, and a reload "
                "starts the step again from the automatic choice.")
    return ("Your ticks count when you press Continue; until then they live in this page only, and a reload starts "
            "the step again from the automatic choice.")
