"""Question → topic entities: exact title spans, fuzzy title match (rapidfuzz), LLM extraction.

Every seed records how it was found. Callers may skip all of this and pass seeds explicitly.
"""
from __future__ import annotations

import re
from typing import Any

from tog_core.llm.usage import Usage
from tog_core.tog.trace import Seed

_TOKEN = re.compile(r"[\w'’\-\.&]+|[^\w\s]", re.UNICODE)
_COMMON = frozenset("""a an the of in on at to for by with from and or is are was were be what which who whom whose
when where why how that this these those it its as did do does film films movie movies act acted star starred
direct directed write wrote written born town city founder founded people person year years language genre
""".split())


def _spans(question: str, max_words: int = 10) -> list[tuple[int, int, str]]:
    """All word n-grams (start, end, text), longest first."""
    words = [(m.start(), m.end()) for m in re.finditer(r"\S+", question)]
    out = []
    for n in range(min(max_words, len(words)), 0, -1):
        for i in range(len(words) - n + 1):
            a, b = words[i][0], words[i + n - 1][1]
            out.append((i, i + n, question[a:b]))
    return out


def _variants(text: str) -> list[str]:
    t = text.strip()
    out = [t, t.strip("?!.,;:\"'()[]"), re.sub(r"['’]s$", "", t.strip("?!.,;:\"'()[]"))]
    return list(dict.fromkeys(v for v in out if v))


def link_exact(question: str, graph: Any, *, limit: int = 3) -> list[Seed]:
    """Titles that appear verbatim (case-sensitive first, then case-insensitive) as word spans."""
    taken: set[int] = set()
    seeds: list[Seed] = []
    seen: set[int] = set()
    for i, j, text in _spans(question):
        if any(k in taken for k in range(i, j)):
            continue
        for v in _variants(text):
            if j - i == 1 and (v.lower() in _COMMON or len(v) < 3):
                continue
            idx = graph.find_title(v)
            if idx is None or idx in seen:
                continue
            exact = graph.title(idx) == v
            if j - i == 1 and not exact and not v[:1].isupper():
                continue  # a lone lower-case word matching a title only by case: too weak
            seen.add(idx)
            taken.update(range(i, j))
            e = graph.entity(idx)
            seeds.append(Seed(id=e.id, title=e.title, how="exact", score=1.0 if exact else 0.9))
            break
        if len(seeds) >= limit:
            break
    return seeds


def link_fuzzy(question: str, graph: Any, *, limit: int = 3, cutoff: float = 88.0) -> list[Seed]:
    from rapidfuzz import fuzz, process

    titles = graph.all_titles()
    hits = process.extract(question, titles, scorer=fuzz.partial_ratio, limit=limit * 4, score_cutoff=cutoff,
                           processor=lambda s: s.lower())
    seeds: list[Seed] = []
    for title, score, idx in sorted(hits, key=lambda h: (-h[1], -len(h[0]))):
        if len(title) < 4 or title.lower() in _COMMON:
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
    """Exact spans first; fuzzy only when no span matched."""
    return link_exact(question, graph, limit=limit) or link_fuzzy(question, graph, limit=limit)


async def link_with_llm(question: str, graph: Any, llm: Any, *, limit: int = 3,
                        temperature: float = 0.0) -> tuple[list[Seed], dict[str, Any]]:
    """Ask the LLM for the named entities, then resolve each name exactly or fuzzily.

    Returns (seeds, usage) where usage has llm_calls/prompt_tokens/completion_tokens and a fallback
    name if the reply was unusable.
    """
    from tog_core.tog import prompts
    from tog_core.tog.parsing import parse_entities_result
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
