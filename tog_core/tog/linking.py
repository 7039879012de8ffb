"""Question → topic entities: title spans (`link_exact` on a typed graph, `link_named` on a free-text one), fuzzy
title match (rapidfuzz), LLM extraction.

Every seed records how it was found. Callers may skip all of this and pass seeds explicitly.
"""
from __future__ import annotations

import re
import weakref
from collections.abc import Callable, Iterator
from typing import Any

from tog_core.graphrag.store import once_per_graph
from tog_core.llm.usage import Usage
from tog_core.scoring.text import ARTICLES, UNSPACED, tokens, without_article
from tog_core.scoring.question import asked_type
from tog_core.tog.trace import Seed

# scripts written without spaces between words: titles are found as substrings of a run of these characters
_EDGE_PUNCT = "?!.,;:\"'()[]«»“”‘’「」『』，。？！：；、（）"
MIN_SPAN_CHARS = 2  # a one-character title never links from a substring


def _spans(question: str, max_words: int = 10) -> list[tuple[int, int, str]]:
    """Candidate title spans (start, end, text) in character offsets, longest first: runs of up to `max_words`
    space-separated words, and every substring of a run of a script written without spaces (Chinese, Japanese,
    Korean), where a title may start and end anywhere."""
    words = [(m.start(), m.end()) for m in re.finditer(r"\S+", question)]
    out = []
    for n in range(min(max_words, len(words)), 0, -1):
        for i in range(len(words) - n + 1):
            a, b = words[i][0], words[i + n - 1][1]
            out.append((a, b, question[a:b]))
    for m in UNSPACED.finditer(question):
        a, b = m.span()
        out += [(x, y, question[x:y]) for x in range(a, b) for y in range(x + MIN_SPAN_CHARS, min(b, x + 24) + 1)]
    return sorted(out, key=lambda t: (-(t[1] - t[0]), t[0]))


def _variants(text: str) -> list[str]:
    t = text.strip().strip(_EDGE_PUNCT)
    out = [text.strip(), t, re.sub(r"['’]s$", "", t)]
    return list(dict.fromkeys(v for v in out if v))


def _common_noun(text: str) -> bool:
    """An article and lower-case words ("the grave"; "The grave" at the start of a sentence), not "The Hague"."""
    words = text.strip().split()
    return len(words) > 1 and words[0].lower() in ARTICLES and all(w == w.lower() for w in words[1:])


def _distinctive(text: str, *, sentence_start: bool, exact: bool) -> bool:
    """Whether a span is evidence of a name by its form alone, in any language: several words, a script without
    spaces, a capital letter (not only the one that starts the sentence), a digit or an underscore. A lone
    lower-case word that merely equals a title ("war", "drama", "town") is not, nor a lower-case common noun with
    its article ("the grave", "the shop": GraphRAG extracts such entities; in a question they describe)."""
    if _common_noun(text):
        return False
    if " " in text.strip() or UNSPACED.search(text) or any(ch.isdigit() or ch == "_" for ch in text):
        return True
    upper = [k for k, ch in enumerate(text) if ch.isupper()]
    return bool(upper) and (not sentence_start or len(upper) > 1 or not exact and len(text) > 1 and upper[0] > 0)


def _mentions(question: str, graph: Any, find: Callable[[Any, str], int | None],
              keep: Callable[[str, int, bool, bool], bool]) -> Iterator[tuple[int, int, bool, bool]]:
    """(position, entity, exact, distinctive) of each title the question names, longest spans first and never
    overlapping: `find(graph, span)` resolves a span (with its possessive or punctuation taken off) to an entity,
    `keep(span, entity, exact case, distinctive)` says whether it counts (see `_distinctive`)."""
    taken: list[tuple[int, int]] = []
    seen: set[int] = set()
    first_word = re.match(r"\s*\S+", question)
    for a, b, text in _spans(question):
        if any(a < y and x < b for x, y in taken):
            continue
        for v in _variants(text):
            if len(v) < MIN_SPAN_CHARS or (len(v) < 3 and not UNSPACED.search(v)):
                continue
            idx = find(graph, v)
            if idx is None or idx in seen:
                continue
            exact = graph.title(idx) == v
            distinctive = _distinctive(v, sentence_start=first_word is not None and a < first_word.end(), exact=exact)
            if not keep(v, idx, exact, distinctive):
                continue
            seen.add(idx)
            taken.append((a, b))
            yield a, idx, exact, distinctive
            break


def _seed(graph: Any, idx: int, exact: bool) -> Seed:
    e = graph.entity(idx)
    return Seed(id=e.id, title=e.title, how="exact", score=1.0 if exact else 0.9)


def link_exact(question: str, graph: Any, *, limit: int = 3) -> list[Seed]:
    """Titles that occur in the question (case-sensitive first, then case-insensitive), longest first and never
    overlapping. Spans distinctive by their form (see `_distinctive`) win; plain lower-case words that equal a
    title are taken only when nothing distinctive matched."""
    # a lone lower-case word matching a title only by case is too weak
    found = [(distinctive, a, _seed(graph, idx, exact)) for a, idx, exact, distinctive in _mentions(
        question, graph, lambda g, v: g.find_title(v), lambda v, _i, ex, dist: ex or dist or _common_noun(v))]
    strong = [f for f in found if f[0]]
    return [seed for _, _, seed in sorted(strong or found, key=lambda f: f[1])][:limit]


_BARE_TITLES: weakref.WeakKeyDictionary[Any, dict[str, int]] = weakref.WeakKeyDictionary()


def _bare_titles(graph: Any) -> dict[str, int]:
    """Titles that start with an article, by the rest (case-folded): "fiddler" -> THE FIDDLER. Built once per graph;
    the first title wins a shared key."""
    def make() -> dict[str, int]:
        out: dict[str, int] = {}
        for i, t in enumerate(graph.all_titles()):
            bare = without_article(t)
            if bare != t.strip():
                out.setdefault(bare.casefold(), i)
        return out

    return once_per_graph(_BARE_TITLES, graph, make)


def _find_named(graph: Any, text: str) -> int | None:
    """The entity a span names: its title in any case, or, either side with its article left off ("a fiddler",
    "fiddler" -> THE FIDDLER; "the shop" -> SHOP)."""
    idx = graph.find_title(text)
    if idx is not None:
        return idx
    bare = without_article(text)
    if bare != text.strip():
        idx = graph.find_title(bare)
        if idx is not None:
            return idx
    return _bare_titles(graph).get(bare.casefold())


def link_named(question: str, graph: Any, *, limit: int = 3) -> list[Seed]:
    """A free-text graph's topic entities: every title the question names, in any case and with or without its
    article, longest spans first and never overlapping, the most specific first (fewest relationships; one without
    any last), at most `limit`. GraphRAG writes every title in capitals, so the case a question writes a word in
    says nothing about whether it names an entity ("the copper", "a fiddler", "window-blinds" are the peripheral
    entities a path starts from); what the question asks for is not a topic ("which spirit" asks for one), nor a
    title of stop words only ("WHO" from "who"). Measured against
    `link_exact` (names first, lower-case words only when no name matched) on the GraphRAG dev sets: the gold topic
    among the seeds 214 -> 234 of 249 (docs/experiment-log.md, "Linking every title the question names")."""
    asked, named = asked_type(question)
    asked_stems = set(asked) if named else set()

    def keep(_v: str, idx: int, _exact: bool, distinctive: bool) -> bool:
        if distinctive:
            return True
        words = set(tokens(without_article(graph.title(idx))))
        # a title of stop words only ("WHO", "THE") is not named by "who" or "the"; "which spirit": asked, not a start
        return bool(words) and not words <= asked_stems

    found = [(graph.degree(idx), a, _seed(graph, idx, exact))
             for a, idx, exact, _ in _mentions(question, graph, _find_named, keep)]
    # an entity without relationships leads nowhere: last
    found.sort(key=lambda f: (f[0] == 0, f[0], f[1]))
    return [seed for _, _, seed in found][:limit]


def link_fuzzy(question: str, graph: Any, *, limit: int = 3, cutoff: float = 88.0) -> list[Seed]:
    from rapidfuzz import fuzz, process

    titles = graph.all_titles()
    hits = process.extract(question, titles, scorer=fuzz.partial_ratio, limit=limit * 4, score_cutoff=cutoff,
                           processor=lambda s: s.lower())
    seeds: list[Seed] = []
    for title, score, idx in sorted(hits, key=lambda h: (-h[1], -len(h[0]))):
        if len(title) < 4:
            continue
        e = graph.entity(idx)
        seeds.append(Seed(id=e.id, title=e.title, how="fuzzy", score=round(score / 100, 3)))
        if len(seeds) >= limit:
            break
    return seeds


def search_entities(graph: Any, query: str, *, limit: int = 10) -> list[tuple[int, str, float]]:
    """Fuzzy entity search for the graph browser: (index, title, score 0–100), best first."""
    from rapidfuzz import fuzz, process

    query = query.strip()
    if not query:
        return []
    exact = graph.find_title(query)
    hits = process.extract(query, graph.all_titles(), scorer=fuzz.WRatio, limit=limit, processor=lambda s: s.lower())
    out = [(idx, t, float(s)) for t, s, idx in hits]
    if exact is not None:
        out = [(exact, graph.title(exact), 100.0)] + [h for h in out if h[0] != exact]
    return out[:limit]


EMBEDDING_LINK_MAX_ENTITIES = 20_000  # embedding every title of a bigger graph is too slow for a first question


def link_embedding(question: str, graph: Any, embedder: Any, *, limit: int = 3, min_similarity: float = 0.80,
                   margin: float = 0.015) -> list[Seed]:
    """Entities whose title is closest to the question in embedding space (titles cached by the embedder):
    the best one, and others within `margin` of it (e5 similarities crowd together, so the gap matters)."""
    import numpy as np

    n = graph.n_entities
    if n > EMBEDDING_LINK_MAX_ENTITIES:
        return []
    titles = graph.all_titles()
    q = embedder.embed([question], kind="query")[0]
    m = embedder.embed(titles, kind="passage")
    sims = m @ q
    order = np.argsort(-sims, kind="stable")[:limit]
    out = []
    for idx in order:
        if sims[idx] < min_similarity or sims[idx] < sims[order[0]] - margin:
            break
        e = graph.entity(int(idx))
        out.append(Seed(id=e.id, title=e.title, how="embedding", score=round(float(sims[idx]), 3)))
    return out


def link_question(question: str, graph: Any, *, limit: int = 3) -> list[Seed]:
    """Title spans first (`link_named` on a free-text graph, `link_exact` on a typed one, where a lower-case word
    equal to a title, "drama", is rarely the topic); fuzzy only when no span matched."""
    spans = link_exact if graph.has_relation_labels else link_named
    return spans(question, graph, limit=limit) or link_fuzzy(question, graph, limit=limit)


async def link_with_llm(question: str, graph: Any, llm: Any, *, limit: int = 3,
                        temperature: float = 0.0) -> tuple[list[Seed], dict[str, Any]]:
    """Ask the LLM for the named entities, then resolve each name exactly or fuzzily.

    Returns (seeds, usage) where usage has llm_calls/prompt_tokens/completion_tokens and a fallback
    name if the reply was unusable.
    """
    from tog_core.prompting import prompts
    from tog_core.prompting.parsing import parse_entities_result
    from rapidfuzz import fuzz, process

    res = await llm.complete(prompts.topic_prompt(question), temperature=temperature, max_tokens=128,
                             json_schema=prompts.TOPIC_SCHEMA)
    parsed = parse_entities_result(res.text)
    usage = {**Usage.of_result(res).to_dict(), "fallback": parsed.fallback, "detail": parsed.detail}
    seeds: list[Seed] = []
    titles = None
    for name in parsed.names:
        idx = graph.find_title(name)
        if idx is None:
            titles = titles or graph.all_titles()
            hit = process.extractOne(name, titles, scorer=fuzz.WRatio, score_cutoff=85, processor=lambda s: s.lower())
            idx = hit[2] if hit else None
        if idx is not None and all(s.id != graph.entity(idx).id for s in seeds):
            e = graph.entity(idx)
            seeds.append(Seed(id=e.id, title=e.title, how="llm", score=1.0))
        if len(seeds) >= limit:
            break
    return seeds, usage
