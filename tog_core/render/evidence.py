"""The source text behind a chain's links: each link's passages with the sentence that supports it marked.

Used by the app's evidence tab and by every export (a trace with `evidence` carries the source text of its links),
so `python -m tog_core export` can add it too when the project is at hand.
"""
from __future__ import annotations

import re
from typing import Any

from tog_core.scoring.sentences import sentence_spans

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_STOP = frozenset("the a an of and or in on at to for by with from is are was were be been its it this that "
                  "as his her their who which".split())


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if len(w) > 2 and w not in _STOP}


def sentences(passage: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence of a passage, surrounding white space left out: the sentences the answer
    ranking reads (scoring/sentences.py), so the sentence marked here is split the same way as the one a candidate
    shows."""
    return list(sentence_spans(passage))


def support_span(passage: str, *, relation: str, source: str, target: str) -> tuple[int, int] | None:
    """(start, end) of the sentence of `passage` that states the link: of the sentences naming both ends (their
    titles, case-insensitive, or a title's first or last word: "Scrooge" for "EBENEZER SCROOGE";
    render/support.py), the one sharing most words with the relation text; when none names both, the sentence
    sharing most of the relation's own words ("father"; the names aside), then most words with it (the shorter on
    a tie). None when no sentence names both ends or shares a word of the relation's own ("said Bob." is not
    marked for "Bob Cratchit is the father of Tiny Tim")."""
    from tog_core.render.support import title_in

    key = _words(relation)
    what = key - _words(source) - _words(target)  # the relation's own words ("father"), the names aside
    best, best_score = None, (0, 0, 0, 0)
    for a, b in sentences(passage):
        sent = passage[a:b]
        words = _words(sent)
        both = int(title_in(source, sent) and title_in(target, sent))
        shared = len(words & key)
        score = (both, len(words & what), shared, -len(words))
        if (both or score[1]) and score > best_score:
            best, best_score = (a, b), score
    return best


def evidence(graph: Any, trace: dict[str, Any], chain: int = 0, *, per_link: int = 3) -> list[dict[str, Any]]:
    """Each link of one chain with its relationship description and source passages: (id, text, support
    span or None), the supporting sentence marked by `support_span`."""
    chains = [c for c in trace.get("chains") or [] if c]
    if not 0 <= chain < len(chains):
        return []
    out = []
    for link in chains[chain]:
        ridx = graph.find_relationship(str(link.get("relationship_id")))
        desc = graph.relationship(ridx).description if ridx is not None else ""
        src, dst, rel = str(link.get("source", "")), str(link.get("target", "")), str(link.get("relation", ""))
        units = [(u.id, u.text, support_span(u.text, relation=desc or rel, source=src, target=dst))
                 for u in (graph.evidence(ridx)[:per_link] if ridx is not None else [])]
        out.append({"source": src, "relation": rel, "target": dst, "description": desc, "units": units,
                    "more": max(0, len(link.get("text_unit_ids") or []) - len(units))})
    return out


def with_evidence(trace: dict[str, Any], graph: Any, *, per_link: int = 3) -> dict[str, Any]:
    """A copy of the trace that carries the source text of every chain link: `evidence` maps each text-unit
    id to {"text", "support"} (the supporting sentence), for the exports."""
    out = dict(trace)
    ev: dict[str, dict[str, str]] = {}
    for ci in range(len([c for c in trace.get("chains") or [] if c])):
        for link in evidence(graph, trace, ci, per_link=per_link):
            for uid, text, span in link["units"]:
                if uid not in ev:
                    ev[uid] = {"text": text, "support": text[span[0]:span[1]] if span else ""}
    out["evidence"] = ev
    return out
