"""The candidates of the answer ranking and their features (the model that ranks them is policy/ranking.py).

The LLM-free search keeps several chains, and on a GraphRAG graph it runs one search per number of hops
(policy/depths.py). The right answer is often on a chain other than the best one, or one hop short of its end. So
every entity on any kept chain of any of those searches (the question's topic entities excepted) is a candidate
(`gather`), described by signals every project has:

* the search's own view: the chain's score relative to its search's best, its rank, whether the candidate ends the
  chain, how many chains and searches reach it, at which hop and in a search of how many hops;
* text, read by the packaged e5 embedder with its roles (the question as `query:`, texts as `passage:`): the
  candidate's title and first sentence of description, the chain up to it in words, its entity type, and the
  sentence of the last link's source text units that names both ends of that link (the best-matching one);
* words: how much of the question the chain's relations cover, plain word overlap (on a GraphRAG graph both without
  the noun naming what is asked: "which place" is no fact a chain states), the entity's degree, and the share of the
  question's words in the source text around where the last link's text units name the candidate
  (`passage_words`), and whether the opening phrase of its description (what it says the entity is) names what the
  question asks for ("which town": "Tarnby is a lakeside town on the island of ...", `asked_head`);
* the share of its title's words the question itself uses (`title_named`, policy/naming.py: a question names the
  way to its answer, not the answer);
* the rule-based answer choice (`is_pick`) and whether its type is the one the wording asks for (`type_fit`);
* its title and whole description read by BM25 against the question (`desc_bm25`), and whether a kept chain reaches
  it at all (`beam`): a few candidates are found by their descriptions alone (policy/retrieval.py).

The search-side and text features are filled here (`gather`, `text_features`); the others by the answer policy
(policy/answers.py).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Iterable, Sequence

import numpy as np

from tog_core.policy.passages import passage_words
from tog_core.scoring.sentences import name_pattern, sentences_naming
from tog_core.scoring.text import UNSPACED, first_sentence, tokens_in
from tog_core.tog.state import BeamPath, Search

_WORD = re.compile(r"\w+", re.UNICODE)
_SENTENCES_PER_CANDIDATE = 6
_UNITS_PER_LINK = 4
# a GraphRAG description opens by saying what the entity is ("Tarnby is a lakeside town on the island of ..."): its
# first run of content words after the title ("lakeside town") names it; a run is cut at this many words (4 and 6
# read the dev sets alike: the next stop word ends it first; docs/experiment-log.md)
HEAD_WORDS = 4
_PHRASE_WORD = re.compile(r"\w+(?:['’-]\w+)*", re.UNICODE)  # "scrooge's", "counting-house": one word


@dataclass(kw_only=True)
class RankedEntity:
    """An entity on a kept chain: the chain up to it (the best such chain) and its features."""

    entity: int
    path: BeamPath  # the chain ending at the candidate
    features: dict[str, float] = field(default_factory=dict)
    sentence: str = ""  # the source sentence that best supports the last link ("" when none names both ends)
    prob: float = 0.0


def entity_passage(ent: Any) -> str:
    """An answer candidate as the embedder reads it against the question (`sim_entity`): its title and the first
    sentence of its description."""
    return f"{ent.title}: {first_sentence(ent.description or '', limit=300)}"


def type_passage(ent: Any) -> str:
    """An entity's type as the embedder reads it against the question (`sim_type`)."""
    return (ent.type or "thing").lower().replace("_", " ")


def link_sentences(graph: Any, src: int, title: str, units: Sequence[Any]) -> list[str]:
    """Up to _SENTENCES_PER_CANDIDATE sentences of `units` (the source text of the link that reached the candidate)
    naming both the entity the link left (`src`) and the candidate (`title`), in order, each once."""
    found: list[str] = []
    for tu in units:
        found += sentences_naming(tu.text or "", graph.title(src), title)
        if len(found) >= _SENTENCES_PER_CANDIDATE:
            break
    return list(dict.fromkeys(found))[:_SENTENCES_PER_CANDIDATE]


def link_passages(graph: Any, ridx: int, src: int, dst: int, label: str) -> list[str]:
    """What `text_features` embeds of the link `ridx` when it reaches candidate `dst` from `src` with hop `label`:
    the sentences naming both ends, else the label itself."""
    units = graph.evidence(ridx)[:_UNITS_PER_LINK]
    return link_sentences(graph, src, graph.title(dst), units) or [label[:400]]


def chain_text(graph: Any, path: BeamPath) -> str:
    """A chain as the embedder reads it (a passage): "SOURCE relation TARGET" per hop, joined by " ; "."""
    return " ; ".join(f"{graph.title(h.src)} {h.label[:200]} {graph.title(h.dst)}" for h in path.hops)


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)}


def asked_head(asked: frozenset[str], title: str, description: str, language: str) -> bool:
    """Whether the noun naming what the question asks for (`asked`: its stems, read in `language`) is in the opening
    phrase of the description, which says what the entity is: past the entity's name (the title as the text writes
    it, `name_pattern`, after stop words only; else the leading words of the title, "Scrooge" for EBENEZER SCROOGE) and
    the stop words after it ("is a"), the first run of content words, up to the next stop word (at most HEAD_WORDS
    words). "Tarnby is a lakeside town on the island of Thornholm" is a town, not an island; "Ashwater River is a
    river" is a river. Finer than the graph's few entity types. A name followed by a comma or a bracket ("Tarnby,
    founded in 1602, is a town") opens with that aside instead. Not read in a script written without spaces (a
    clause there is one "word"): False."""
    if not asked:
        return False
    first = first_sentence(description, limit=300)
    if UNSPACED.search(first):
        return False
    pattern = name_pattern(title)
    named = pattern.search(first) if pattern else None
    if named and not any(tokens_in(w, language) for w in _PHRASE_WORD.findall(first[:named.start()])):
        first = first[named.end():]  # the name, after stop words only ("The Caradec company is ...")
    words = _PHRASE_WORD.findall(first.lower())
    stems = [tokens_in(w, language) for w in words]
    own = set(tokens_in(title, language))
    at = 0
    while at < len(words) and stems[at] and set(stems[at]) <= own:  # the name, when the text shortens it
        at += 1
    while at < len(words) and not stems[at]:  # the stop words before the phrase ("is a")
        at += 1
    head: set[str] = set()
    for st in stems[at:at + HEAD_WORDS]:
        if not st:
            break
        head |= set(st)
    return bool(asked & head)


def path_key(p: BeamPath) -> tuple[Any, ...]:
    """A chain's identity: its start and every (relation, entity) step."""
    return (p.start, tuple((h.ridx, h.dst) for h in p.hops))


def gather(searches: Iterable[Search], topics: frozenset[int], *, ends_only: bool = False
           ) -> tuple[list[RankedEntity], int, int]:
    """Every entity on a chain of any search (topics and each chain's start excepted; `ends_only`: only the chains'
    ends), once, with the search-side features; the chain kept for a candidate is its best-ranked one. Returns
    (candidates, chains, searches)."""
    seen: set[tuple[Any, ...]] = set()
    cands: dict[int, RankedEntity] = {}
    best_key: dict[int, tuple[float, float]] = {}
    holders: dict[int, set[int]] = {}
    n_chains = n_searches = 0
    for s_i, search in enumerate(searches):
        paths = [p for p in search.paths if p.hops]
        if not paths:
            continue
        top = max(p.score for p in paths) or 1.0
        fresh = False
        for rank, p in enumerate(paths):
            if path_key(p) in seen:  # the same chain found by two searches counts once (the main run repeats a trial)
                continue
            seen.add(path_key(p))
            fresh = True
            n_chains += 1
            rel = p.score / top if top > 0 else 0.0
            for k, h in enumerate(p.hops, 1):
                e = h.dst
                if ends_only and k < len(p.hops):
                    continue
                # a topic entity answers nothing (the question names it), unless the graph states the start is its
                # own relative by a self-loop (PathQuestion's "Cold_War --recording--> Cold_War": BeamPath.back_home)
                if (e in topics or e == p.start) and not (e == p.start and h.src == h.dst):
                    continue
                end = k == len(p.hops)
                c = cands.get(e)
                if c is None:
                    c = cands[e] = RankedEntity(entity=e,
                                                   path=BeamPath(start=p.start, hops=p.hops[:k], score=p.score))
                    c.features.update(share_in=0.0, share_end=0.0)
                    best_key[e] = (math.inf, 0.0)
                    holders[e] = set()
                c.features["share_in"] += 1
                c.features["share_end"] += float(end)
                holders[e].add(s_i)
                if (rank, -rel) < best_key[e]:
                    best_key[e] = (rank, -rel)
                    c.path = BeamPath(start=p.start, hops=p.hops[:k], score=p.score)
                    c.features.update(path_rel=rel, inv_rank=1.0 / (1 + rank), is_end=float(end), hop=float(k),
                                      search_depth=float(search.depth))
        n_searches += fresh
    out = list(cands.values())
    for c in out:
        c.features["share_in"] /= max(1, n_chains)
        c.features["share_end"] /= max(1, n_chains)
        c.features["share_searches"] = len(holders[c.entity]) / max(1, n_searches)
    return out, n_chains, n_searches


def text_features(cands: list[RankedEntity], *, question: str, topic_titles: Sequence[str], graph: Any,
                  embedder: Any | None, facts: frozenset[str] = frozenset(), asked: frozenset[str] = frozenset(),
                  language: str = "en") -> None:
    """Fill the text features (and each candidate's supporting sentence) in place. Without an embedder the
    similarities are 0 for every candidate (they then do not move the ranking). `facts`: the reading's content words
    (stems) that `passage_words` looks for; `asked`: the stems (read in the question's `language`) of the words naming
    what it asks for, left out of the words a chain's text overlaps and looked for in the description's opening phrase
    (`asked_head`)."""
    if not cands:
        return
    qwords = _words(question) - _words(" ".join(topic_titles))
    if asked:
        qwords = {w for w in qwords if not asked & set(tokens_in(w, language))}
    ent_texts, chain_texts, type_texts, sents, counts = [], [], [], [], []
    for c in cands:
        ent = graph.entity(c.entity)
        ent_texts.append(entity_passage(ent))
        chain = chain_text(graph, c.path)
        chain_texts.append(chain)
        type_texts.append(type_passage(ent))
        last = c.path.hops[-1]
        units = graph.evidence(last.ridx)[:_UNITS_PER_LINK]
        found = link_sentences(graph, last.src, ent.title, units)
        c.sentence = found[0] if found else ""
        sents.append(found or [last.label[:400]])
        counts.append(len(found))
        c.features["overlap"] = len(qwords & _words(chain)) / max(1, len(qwords))
        c.features["passage_words"] = passage_words(units, ent.title, facts)
        c.features["log_degree"] = math.log1p(graph.degree(c.entity))
        c.features["asked_head"] = float(asked_head(asked, ent.title, ent.description or "", language))
    if embedder is None:
        for c in cands:
            c.features.update(sim_entity=0.0, sim_chain=0.0, sim_sentence=0.0, sim_type=0.0)
        return
    flat = [s for group in sents for s in group]
    q = embedder.embed([question], kind="query")[0]
    vecs = embedder.embed(ent_texts + chain_texts + type_texts + flat, kind="passage") @ q
    n = len(cands)
    i = 3 * n
    for j, c in enumerate(cands):
        k = len(sents[j])
        block = vecs[i:i + k]
        c.features.update(sim_entity=float(vecs[j]), sim_chain=float(vecs[n + j]), sim_type=float(vecs[2 * n + j]),
                          sim_sentence=float(block.max()))
        if counts[j]:
            c.sentence = sents[j][int(np.argmax(block))]
        i += k
