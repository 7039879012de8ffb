"""The chains of the first answer candidates that the reasoning chains picture (render/chains.py) would not show.

The picture draws the kept chains and the answer's own chain. A candidate found off those chains (by its description,
in the source text, by a whole path, or on a number of hops tried but not kept) would have no chain in the picture, so
a person reading its card could not find it: the chains of the first CANDIDATES_SHOWN candidates (the number the app
and `query` show) that no drawn chain reaches are drawn too, thin and dashed, each link saying on hover that the
search did not score it and how the candidate was found.
"""
from __future__ import annotations

from typing import Any

from tog_core.tog.choice import CANDIDATES_SHOWN, found_chain, found_of, found_words

DASHES = [6, 5]  # a candidate's chain: dashed, beside the kept chains' solid links
COLOUR = "#7950f2"


def entities(chain: list[dict[str, Any]]) -> set[str]:
    """The entities a chain passes through, each by its id and by its title (a trace without ids keys them by title)."""
    out: set[str] = set()
    for link in chain:
        for end in ("source", "target"):
            out |= {str(v) for v in (link.get(end + "_id"), link.get(end)) if v}
    return out


def candidate_chains(trace: dict[str, Any], drawn: list[list[dict[str, Any]]]) -> list[tuple[int, list[dict[str, Any]],
                                                                                             str]]:
    """Of the first CANDIDATES_SHOWN candidates, those no chain of `drawn` (nor an earlier one of these) reaches, each
    as (its place in the answer list, from 1; its chain; what its links say on hover). A trace read from elsewhere is
    not trusted: a candidate or chain of the wrong shape is left out, as render.chains.answer_own_chain reads one."""
    cands = trace.get("candidates")
    if not isinstance(cands, list):
        return []
    reached = set().union(*(entities(c) for c in drawn)) if drawn else set()
    out = []
    # the first entries that are objects, as Trace.from_dict reads the list (a hand-edited file may hold others)
    for place, c in enumerate([c for c in cands if isinstance(c, dict)][:CANDIDATES_SHOWN], start=1):
        chain = c.get("chain")
        if not isinstance(chain, list) or not chain or not all(isinstance(x, dict) for x in chain):
            continue
        if {str(v) for v in (c.get("entity_id"), c.get("title")) if v} & reached:
            continue
        out.append((place, list(chain), hover(found_of(c))))
        reached |= entities(chain)
    return out


def hover(found: Any) -> str:
    """What a link of a candidate's chain says on hover: not scored, and how the candidate was found."""
    if not found:  # a candidate of the chains, on a number of hops the search tried but did not keep
        return "not scored by the search: its chain from a number of hops tried but not kept"
    kind = str(found)
    return f"not scored by the search: {found_words(kind)}, its chain {found_chain(kind)}"
