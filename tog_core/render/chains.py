"""Pictures of final reasoning chains: one run's chains, and two runs' paths as a diff in one picture.

Both lay the entities out left→right by hop (one node per distinct entity). Tooltips of a link show its
relation text and, when the trace carries `evidence` (views.with_evidence), the supporting sentence of its
source text, never a text-unit hash. The chains of the first answer candidates no drawn chain reaches are drawn
too, dashed (render/candidate_chains.py).
"""
from __future__ import annotations

import html
from collections import defaultdict
from typing import Any

from tog_core.render.candidate_chains import COLOUR as CANDIDATE_COLOUR, DASHES, candidate_chains
from tog_core.tog.choice import found_of, found_words
from tog_core.render.labels import frame_of, level_labels, place_edge_labels
from tog_core.render.page import arrows, build_page, empty_html, vis_options
from tog_core.render.style import (
    FRONTIER_BORDER,
    depth_colour,
    fade,
    legend,
    num,
    plain,
    short,
    swatch,
    type_colour,
    type_items,
)

HOP_W = 280
ROW_H = 110
EDGE_LABELS_ALL = 8  # links drawn with their relation text when the chains have at most this many
ONLY_A = "#1c7ed6"
ONLY_B = "#e8590c"
SHARED = "#495057"
COMPARE_WIDER = 1.8  # the compare picture's hops this much further apart: its level link labels need the room


def walk(chain: list[dict[str, Any]], seed_ids: set[str]) -> list[tuple[str, str]]:
    """Entities of a chain in walking order as (key, title), whatever direction each link is stored in."""
    if not chain:
        return []
    first = chain[0]
    s, t = str(first.get("source_id") or first.get("source")), str(first.get("target_id") or first.get("target"))
    if len(chain) > 1:
        nxt = chain[1]
        ends = {str(nxt.get("source_id") or nxt.get("source")), str(nxt.get("target_id") or nxt.get("target"))}
        start = t if (s in ends and t not in ends) else s
    else:
        start = t if (t in seed_ids and s not in seed_ids) else s
    titles = {s: first.get("source", ""), t: first.get("target", "")}
    out = [(start, titles[start])]
    cur = start
    for link in chain:
        ls, lt = str(link.get("source_id") or link.get("source")), str(link.get("target_id") or link.get("target"))
        nxt_key, nxt_title = (lt, link.get("target", "")) if cur == ls else (ls, link.get("source", ""))
        out.append((nxt_key, nxt_title))
        cur = nxt_key
    return out


def evidence_lines(link: dict[str, Any], evidence: dict[str, Any] | None, *, limit: int = 2) -> list[str]:
    """What a link's tooltip says about its source text: supporting sentences when known, else a count."""
    units = [str(u) for u in link.get("text_unit_ids") or []]
    if not units:
        return []
    found = [(evidence or {}).get(u) or {} for u in units]
    said = [plain(f.get("support") or f.get("text") or "", 240) for f in found if f.get("support") or f.get("text")]
    if said:
        return ["source: “" + s + "”" for s in said[:limit]] + ([f"… {len(units) - limit} more source passage(s)"]
                                                               if len(units) > limit else [])
    return [f"{len(units)} source passage(s)"]


def _stored_forward(link: dict[str, Any], walked_from: str) -> bool:
    """Whether the graph stores this link pointing from `walked_from` onward. Links record the walk's direction
    (source/target) and, since stored_forward, whether the graph's relationship points the same way; an older
    trace without it keeps the walk's direction."""
    forward = str(link.get("source_id") or link.get("source")) == walked_from
    if isinstance(link.get("stored_forward"), bool):
        forward = forward == link["stored_forward"]
    return forward


def _layout(walks: list[list[tuple[str, str]]]) -> tuple[dict[str, tuple[int, str]], dict[int, list[str]]]:
    place: dict[str, tuple[int, str]] = {}
    for w in walks:
        for hop, (key, title) in enumerate(w):
            if key not in place or hop < place[key][0]:
                place[key] = (hop, title if key not in place else place[key][1])
    columns: dict[int, list[str]] = defaultdict(list)
    for key, (hop, _) in place.items():
        columns[hop].append(key)
    return place, columns


def _node(nid: int, key: str, title: str, hop: int, row: int, n_rows: int, colour: str, *, on: bool,
          extra: str = "") -> dict[str, Any]:
    return {"id": nid, "label": short(title, 30), "title": plain(title, 300) + f"\nhop {hop}" + extra,
            "x": hop * HOP_W, "y": round((row - (n_rows - 1) / 2) * ROW_H), "physics": False,
            "size": 18 if on else 12, "borderWidth": 3 if on else 1,
            "color": {"background": colour if on else fade(colour, 0.45), "border": FRONTIER_BORDER if on else colour},
            "font": {"color": "#212529" if on else "#495057"}}


def answer_own_chain(trace: dict[str, Any]) -> list[dict[str, Any]]:
    """The chain the ranked answer (the first candidate, when its title is the trace's `answer_entity`) carries; []
    without one. A trace read from elsewhere is not trusted: candidates or a chain that is not a list, or a chain
    with an entry that is not a link (a dict), count as no chain rather than one with a hop missing."""
    cands = trace.get("candidates")
    # the first entry that is an object, as Trace.from_dict reads the list (a hand-edited file may hold others)
    top = next((c for c in cands if isinstance(c, dict)), {}) if isinstance(cands, list) else {}
    answer, chain = trace.get("answer_entity"), top.get("chain")
    if not answer or top.get("title") != answer or not isinstance(chain, list):
        return []
    return list(chain) if all(isinstance(x, dict) for x in chain) else []


def answer_chain_index(trace: dict[str, Any]) -> int | None:
    """Which of the trace's chains the ranked answer (`candidates[0]`, carrying its own chain) came along: the
    first that starts with that chain. None without such a candidate, or when no chain of the beam starts with it
    (the answer came from a number of hops tried but not kept, or was found off the kept chains)."""
    chains = [c for c in (trace.get("chains") or []) if c]
    own = answer_own_chain(trace)
    if not own:
        return None

    def same(a: dict[str, Any], b: dict[str, Any]) -> bool:
        return (a.get("relationship_id"), a.get("target_id")) == (b.get("relationship_id"), b.get("target_id"))

    return next((i for i, c in enumerate(chains) if len(c) >= len(own) and all(same(a, b) for a, b in zip(c, own))),
                None)


def naming_chain_index(trace: dict[str, Any]) -> int:
    """The chain that names the answer (`answer_entity`) when no ranked answer says which it came along: the first
    that ends at it, else the first that passes through it (the answer may be a chain's prefix), else the best (0)."""
    chains = [c for c in (trace.get("chains") or []) if c]
    answer = trace.get("answer_entity")
    seeds = {str(x.get("id")) for x in trace.get("seeds") or [] if isinstance(x, dict)}
    walks = [walk(c, seeds) for c in chains]
    ends = [k for k, w in enumerate(walks) if w and w[-1][1] == answer]
    through = [k for k, w in enumerate(walks) if answer in [title for _, title in w[1:]]]
    return next(iter(ends + through), 0) if answer else 0


def with_answer_chain(trace: dict[str, Any]) -> tuple[list[list[dict[str, Any]]], int]:
    """The chains to draw and which one the answer used. The ranked answer (the first candidate) carries its own
    chain; the chain of the beam that starts with it is the answer's, else (the answer came from a number of hops
    tried but not kept, or was found off the kept chains) its chain is drawn first. Without one: the chain that names
    the answer (naming_chain_index)."""
    chains = [c for c in (trace.get("chains") or []) if c]
    at = answer_chain_index(trace)
    if at is not None:
        return chains, at
    own = answer_own_chain(trace)
    found = found_off_chain(trace)
    if own and found:  # the search scored none of its links: they say so on hover
        own = [{**link, "score": None, "unscored": unscored(found)} for link in own]
    return ([own, *chains], 0) if own else (chains, naming_chain_index(trace))


def unscored(kind: str) -> str:
    """What a link of the chain to an answer found off the kept chains says on hover."""
    if kind == "path":
        return "not scored: the path that names the most of the question, read whole, to the answer it found"
    return f"not scored: the shortest chain to an answer {found_words(kind)}"


def found_off_chain(trace: dict[str, Any]) -> str:
    """How the ranked answer (the first candidate, naming `answer_entity`) was found when it is on no kept chain (its
    trace record's "found": "description", policy/retrieval.py; "text", policy/textunits.py); "" otherwise."""
    cands = trace.get("candidates")
    top = next((c for c in cands if isinstance(c, dict)), {}) if isinstance(cands, list) else {}
    found = found_of(top)
    return found if found and top.get("title") == trace.get("answer_entity") else ""


def _answer_hop(trace: dict[str, Any], w: list[tuple[str, str]]) -> int | None:
    """The hop of walk `w` at which the answer entity stands, when before the walk's end (None: at its end, or
    not on it)."""
    key, title = str(trace.get("answer_entity_id") or ""), trace.get("answer_entity")
    at = next((i for i, (k, t) in enumerate(w) if i and ((key and k == key) or (not key and t == title))), None)
    return at if at is not None and at < len(w) - 1 else None


def chains_html(trace: dict[str, Any], *, emphasise: int | None = None, height: str = "420px",
                types: dict[str, str] | None = None) -> str:
    """The final reasoning chains laid out left→right by hop; chain `emphasise` (default: the one the answer used,
    with_answer_chain) drawn thick, the others thin and grey; then, thin and dashed, the chains of the first answer
    candidates that none of these reaches (candidate_chains). Nodes coloured by type when `types` (entity id → type)
    is given."""
    chains, answer_at = with_answer_chain(trace)
    extra = candidate_chains(trace, chains)
    kept = len(chains)  # chains from here on are candidates' (extra), never emphasised
    chains = chains + [chain for _, chain, _ in extra]
    emphasise = answer_at if emphasise is None else emphasise
    if not chains:
        done = trace.get("stop_reason") and trace.get("answer")
        return empty_html("No reasoning chains: the search found none." if done else "No reasoning chains yet.",
                          height=height)
    seed_ids = {str(s.get("id")) for s in trace.get("seeds") or []}
    walks = [walk(c, seed_ids) for c in chains]
    place, columns = _layout(walks)
    # the answer may sit part way along its chain (a deeper chain passes through it): thick up to the answer only
    upto = _answer_hop(trace, walks[emphasise]) if 0 <= emphasise < kept and emphasise == answer_at else None
    emph_walk = (walks[emphasise][: upto + 1] if upto else walks[emphasise]) if 0 <= emphasise < kept else []
    emph_keys = {k for k, _ in emph_walk}
    ids = {k: i for i, k in enumerate(place)}
    ends = {w[-1][0]: rank for (rank, _, _), w in zip(extra, walks[kept:]) if w}  # each drawn candidate's entity
    nodes = []
    for hop, keys in sorted(columns.items()):
        for row, key in enumerate(keys):
            colour = type_colour((types or {}).get(key)) if types is not None else depth_colour(hop)
            nodes.append(_node(ids[key], key, place[key][1], hop, row, len(keys), colour, on=key in emph_keys,
                               extra=f"\ncandidate {ends[key]} of the answer list" if key in ends else ""))
    evidence = trace.get("evidence") if isinstance(trace.get("evidence"), dict) else None
    # many links: only the emphasised chain's carry their relation text, the others show it on hover
    # ... the kept chains' as before, whatever candidates' chains are drawn beside them; those only when all fit
    every_label = tuple(sum(len(c) for c in part) <= EDGE_LABELS_ALL for part in (chains[:kept], chains))
    edges: list[dict[str, Any]] = []
    seen: set[tuple[str, str, str]] = set()
    parallel: defaultdict[frozenset[str], int] = defaultdict(int)
    for ci, (chain, w) in enumerate(zip(chains, walks)):
        for hop, link in enumerate(chain):
            rid = str(link.get("relationship_id") or link.get("relation"))
            a, b = w[hop][0], w[hop + 1][0]
            if (a, b, rid) in seen and ci != emphasise:
                continue
            seen.add((a, b, rid))
            stored_fwd = _stored_forward(link, a)
            which = f"chain {ci + 1}"
            if ci >= kept:  # a candidate's chain (candidate_chains): what it says on hover, its place in the list
                rank, _, said = extra[ci - kept]
                scored, which = plain(said, 160), f"candidate {rank}'s chain"
            elif link.get("unscored"):
                scored = plain(link["unscored"], 120)
            else:
                scored = f"score {num(link.get('score', 1.0))}"
            tip = [plain(link.get("relation"), 400), f"{scored} · {which}, hop {hop + 1}"] + \
                evidence_lines(link, evidence)
            on = ci == emphasise and ci < kept and (upto is None or hop < upto)
            k = parallel[frozenset((a, b))]
            parallel[frozenset((a, b))] += 1
            edges.append({"from": ids[a], "to": ids[b], "arrows": arrows(stored_fwd),
                          "label": short(link.get("relation"), 40) if every_label[ci >= kept] or on else "",
                          "title": "\n".join(tip),
                          "width": 3 if on else 1, "dashes": DASHES if ci >= kept else False,
                          "color": {"color": "#343a40" if on else CANDIDATE_COLOUR if ci >= kept else "#adb5bd"},
                          "smooth": {"enabled": True, "type": "curvedCW" if k % 2 == 0 else "curvedCCW",
                                     "roundness": 0.08 + 0.12 * ((k + 1) // 2)}})
    items = type_items(types.get(k, "") for k in place) if types is not None else []
    items += [f"{kept} chain(s), left→right by hop" if kept else "no kept chain",
              swatch("#fff", border=FRONTIER_BORDER, ring=True) + f"chain {emphasise + 1} (used for the answer"
              + (f", up to {html.escape(short(emph_walk[-1][1], 40))}, its hop {upto})" if upto else ")")
              if emph_keys else "no chain emphasised"]
    if extra:
        ranks = ", ".join(str(rank) for rank, _, _ in extra)
        items.append(f'<i class="ln" style="border-top:2px dashed {CANDIDATE_COLOUR}"></i>'
                     + (f"the chains of candidates {ranks}" if len(extra) > 1 else f"the chain of candidate {ranks}")
                     + ": off the kept chains, not scored by the search")
    opts = vis_options(len(nodes), len(edges), physics=False)
    opts["interaction"]["dragNodes"] = True
    return build_page(nodes, edges, opts, height=height, legend_html=legend(items), title="ToG reasoning chains")


def path_diff(a: dict[str, Any], b: dict[str, Any]) -> dict[str, list[tuple[str, str, str]]]:
    """The hops (from, relation, to) of two runs' chains: shared, only in A, only in B (titles)."""
    def hops(t: dict[str, Any]) -> list[tuple[str, str, str]]:
        seed_ids = {str(s.get("id")) for s in t.get("seeds") or []}
        out = []
        for chain in [c for c in t.get("chains") or [] if c]:
            w = walk(chain, seed_ids)
            out += [(w[i][1], str(link.get("relation") or ""), w[i + 1][1]) for i, link in enumerate(chain)]
        return list(dict.fromkeys(out))
    ha, hb = hops(a), hops(b)
    return {"shared": [h for h in ha if h in hb], "only_a": [h for h in ha if h not in hb],
            "only_b": [h for h in hb if h not in ha]}


def compare_html(a: dict[str, Any], b: dict[str, Any], *, height: str = "460px",
                 types: dict[str, str] | None = None) -> str:
    """Two runs' paths in one picture, left→right by hop: links both runs took in dark grey, links only run A
    took in blue, only run B in orange (solid A, dashed B); each run's answer entity ringed in its colour."""
    ca, cb = [c for c in a.get("chains") or [] if c], [c for c in b.get("chains") or [] if c]
    if not ca and not cb:
        return empty_html("Neither run has reasoning chains.", height=height)
    seeds = {str(s.get("id")) for s in (a.get("seeds") or []) + (b.get("seeds") or [])}
    wa, wb = [walk(c, seeds) for c in ca], [walk(c, seeds) for c in cb]
    place, columns = _layout(wa + wb)
    ids = {k: i for i, k in enumerate(place)}
    ends_a, ends_b = ({w[-1][0] for w in ws[:1]} for ws in (wa, wb))
    links: dict[tuple[str, str, str], dict[str, Any]] = {}
    for side, chains, walks in (("a", ca, wa), ("b", cb, wb)):
        for chain, w in zip(chains, walks):
            for hop, link in enumerate(chain):
                lk = (w[hop][0], w[hop + 1][0], str(link.get("relation") or ""))
                e = links.setdefault(lk, {"sides": set(), "link": link, "hop": hop})
                e["sides"].add(side)
    nodes = []
    for hop, keys in sorted(columns.items()):
        for row, key in enumerate(keys):
            colour = type_colour((types or {}).get(key)) if types is not None else depth_colour(hop)
            which = ("A" if key in ends_a else "") + ("B" if key in ends_b else "")
            n = _node(ids[key], key, place[key][1], hop, row, len(keys), colour, on=True,
                      extra=f"\nanswer of run {' and '.join(which)}" if which else "")
            n["x"] = round(n["x"] * COMPARE_WIDER)
            if which:
                n["color"]["border"] = {"A": ONLY_A, "B": ONLY_B}.get(which, SHARED)
                n["borderWidth"] = 5
                n["label"] = n["label"] + f" ({'/'.join(which)})"
            else:
                n["borderWidth"], n["size"] = 1, 13
            nodes.append(n)
    edges = []
    parallel: defaultdict[frozenset[str], int] = defaultdict(int)
    for (s, t, rel), e in links.items():
        sides = e["sides"]
        colour, name = (SHARED, "both runs") if sides == {"a", "b"} else \
            ((ONLY_A, "only run A") if sides == {"a"} else (ONLY_B, "only run B"))
        link = e["link"]
        k = parallel[frozenset((s, t))]
        parallel[frozenset((s, t))] += 1
        edges.append({"from": ids[s], "to": ids[t], "arrows": arrows(_stored_forward(link, s)), "label": short(rel, 32),
                      "title": plain(rel, 400) + f"\n{name} · hop {e['hop'] + 1}", "width": 3 if len(sides) == 2 else 2,
                      "dashes": sides == {"b"}, "color": {"color": colour},
                      # straight unless another link joins the same two entities: links bowed opposite ways by run
                      # brought their labels together where neighbouring rows met
                      "smooth": {"enabled": True, "type": "curvedCW" if k % 2 else "curvedCCW",
                                 "roundness": 0.15 * ((k + 1) // 2)}})
    d = path_diff(a, b)
    items = (type_items(types.get(k, "") for k in place) if types is not None else []) + [
        f'<i class="ln" style="border-top:3px solid {SHARED}"></i>both runs ({len(d["shared"])})',
        f'<i class="ln" style="border-top:3px solid {ONLY_A}"></i>only run A ({len(d["only_a"])})',
        f'<i class="ln" style="border-top:3px dashed {ONLY_B}"></i>only run B ({len(d["only_b"])})']
    opts = vis_options(len(nodes), len(edges), physics=False)
    # both runs' links fan out of the same nodes, every one labelled: labels written along steep links crossed each
    # other near the topic; level, on a white ground, they sit half a row apart
    level_labels(opts)
    place_edge_labels(nodes, edges, frame=frame_of(height))  # a text that would cover another: on hover only
    return build_page(nodes, edges, opts, height=height, legend_html=legend(items), title="ToG runs compared")
