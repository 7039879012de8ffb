"""Whether a written answer (the LLM's, or the local model's draft) is supported by the chains it was written from:
it is when it names an entity of the chains other than the question's topic entities. Names are matched
case- and space-insensitively, as whole words, and a person's or a thing's title may be shortened to its first or
last word ("Mara" or "Quell" for "Mara Quell", "Scrooge" for "EBENEZER SCROOGE").

    support = answer_support(trace["answer"], trace)    # {"supported", "named", "chain_entities"}
"""
from __future__ import annotations

import re
from typing import Any
from collections.abc import Iterable

# words too common to stand for a title on their own ("The Gray Heron" is not named by "the")
_COMMON = frozenset("the a an of and or in on at to for by with from mr mrs ms dr sir st old new little great "
                    "house company guild ship town city street".split())


def _norm(text: str) -> str:
    return " ".join(str(text).lower().split())


def _found(needle: str, hay: str) -> bool:
    return bool(needle) and re.search(r"(?<!\w)" + re.escape(needle) + r"(?!\w)", hay) is not None


def title_in(title: str, text: str) -> bool:
    """Whether `text` names `title`: the whole title, or its first or last word when the title has several
    words and that word is not a common one (at least 3 letters)."""
    hay, name = _norm(text), _norm(title)
    if not name:
        return False
    if _found(name, hay):
        return True
    words = name.split()
    if len(words) < 2:
        return False
    return any(len(w) >= 3 and w not in _COMMON and _found(w, hay) for w in {words[0], words[-1]})


def names_in(text: str, titles: Iterable[str]) -> list[str]:
    """The titles `text` names (title_in), in the order given, each once."""
    return [t for t in dict.fromkeys(titles) if title_in(t, text)]


def chain_entities(trace: dict[str, Any]) -> list[str]:
    """The titles of the entities on the trace's chains, the question's topic entities left out."""
    seeds = {str(s.get("id")) for s in trace.get("seeds") or []} | {str(s.get("title")) for s in trace.get("seeds")
                                                                     or []}
    out: list[str] = []
    for chain in trace.get("chains") or []:
        for link in chain or []:
            for end in ("source", "target"):
                title, eid = link.get(end), link.get(f"{end}_id")
                if title and str(eid) not in seeds and str(title) not in seeds:
                    out.append(str(title))
    return list(dict.fromkeys(out))


def answer_support(text: str, trace: dict[str, Any]) -> dict[str, Any]:
    """{"supported": whether `text` names an entity of the chains (topic entities aside), "named": those it
    names, "chain_entities": every such entity}. With no chain entity at all, nothing can support it."""
    ents = chain_entities(trace)
    named = names_in(text or "", ents)
    return {"supported": bool(named), "named": named, "chain_entities": ents}
