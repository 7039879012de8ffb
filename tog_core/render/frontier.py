"""The search picture: the frontier as of a depth, laid out in layers left→right by depth.

Columns are depths (0 = the topic entities). In a column the kept entities come first (near the entity they
were reached from), then the pruned ones (faded, smaller, dashed edges, at most `pruned_per_depth` of the best).
Nodes are coloured by entity type when `types` is given (else by depth), with a legend; the current frontier
has a thick border, a person's overrides a pink one and ✎. A pending proposal (the Explore page) is drawn in
the next column with ☑/☐ (kept or not in the person's current choice); with `clickable`, a click on it posts
its candidate id to the app. Diagnosis marks ("why not X?") draw the expected entity as a red star, placed
where it was lost, or, when it was never a candidate, after the last column joined to the nearest point. What it
draws is read from the trace in frontier_items.py; here it is capped, laid out in columns and drawn.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Any
from collections.abc import Iterable

from tog_core.render.frontier_items import add_marks, add_pending, collect, steps_upto
from tog_core.render.labels import frame_of, level_labels, place_edge_labels, two_lines
from tog_core.render.page import arrows, build_page, vis_options
from tog_core.render.style import (
    EXPECTED_COLOUR,
    FRONTIER_BORDER,
    MORE_COLOUR,
    OVERRIDE_COLOUR,
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

COLUMN_W = 340
ROW_KEPT = 78
ROW_PRUNED = 40
ROW_DOT = 24  # a pruned entity drawn without its label (level of detail: its name is in its tooltip)
COLUMN_ROWS = 14  # a column taller than this shows fewer pruned entities (at least PRUNED_MIN)
PRUNED_MIN = 3
LOD_NODES = 30  # above this many nodes, pruned entities are dots without labels
HELD_IDS = 1_000_000  # vis ids of the pruned entities held behind a "+N pruned" node
RELATIONS_SHOWN = 10  # relation candidates drawn per frontier entity in a pending relation stage (best first)
BOXES_MAX = 24  # relation candidates drawn at most in all (each frontier entity keeps its best two)
ROW_BOX, BOX_X = 40, 1.3 * COLUMN_W  # their rows, and how far right of the frontier their column stands
FRONTIER_EDGE_LABELS = 8  # above this many kept links, relation text is in the edges' tooltips only



def frontier_html(trace: dict[str, Any], depth: int | None = None, *, max_nodes: int = 300,
                  pruned_per_depth: int = 12, height: str = "560px", types: dict[str, str] | None = None,
                  pending: dict[str, Any] | None = None, marks: Iterable[dict[str, Any]] = (),
                  clickable: bool = False, for_live: bool = False) -> str:
    """The search as of `depth` (None = all): layers left→right by depth. `types`: entity id → type (colours
    and legend); `pending`: {"step": a proposal's step dict, "choice": ids kept now}; `marks`: diagnosis
    entries to draw; `clickable`: nodes of the pending proposal post their candidate id when clicked;
    `for_live`: the picture as data for a live page (render.live.live_shell), not a page."""
    ents, rel_summary, edges, last_kept = collect(trace, steps_upto(trace, depth))
    pend_rels = add_pending(ents, edges, pending) if pending else []
    frontier = set(last_kept) if last_kept else {k for k, e in ents.by.items() if e["seed"] is not None}
    top_col = max([e["depth"] or 0 for e in ents.by.values()] + [0])
    add_marks(ents, marks, edges, top_col + 1)

    # cap: seeds, frontier, marks, pending, kept by depth, then pruned by score (at most pruned_per_depth each)
    by = ents.by

    def rank(k: str) -> tuple:
        e = by[k]
        return (e["seed"] is None, k not in frontier, e["mark"] is None, e["pending"] is None, not e["kept"],
                e["depth"] if e["depth"] is not None else 99, -e["best"])
    order = sorted(by, key=rank)

    def plain_pruned(e: dict[str, Any]) -> bool:
        return not e["kept"] and e["seed"] is None and e["mark"] is None and e["pending"] is None
    live_n: dict[Any, int] = defaultdict(int)
    for e in by.values():
        live_n[e["depth"]] += not plain_pruned(e)
    # a column holds at most COLUMN_ROWS entities: its pruned ones make room for the kept (at least PRUNED_MIN)
    cap = {d: pruned_per_depth if n + pruned_per_depth <= COLUMN_ROWS else
           min(pruned_per_depth, max(PRUNED_MIN, COLUMN_ROWS - n)) for d, n in live_n.items()}
    shown: list[str] = []
    per_depth: defaultdict[Any, int] = defaultdict(int)
    held: defaultdict[Any, list[str]] = defaultdict(list)  # held: behind a column's "+N pruned" node
    for k in order:
        e = by[k]
        if plain_pruned(e):
            per_depth[e["depth"]] += 1
            if per_depth[e["depth"]] > pruned_per_depth:
                continue
            if per_depth[e["depth"]] > cap.get(e["depth"], pruned_per_depth):
                if len(shown) + sum(map(len, held.values())) < max_nodes:
                    held[e["depth"]].append(k)
                continue
        if len(shown) + sum(map(len, held.values())) < max_nodes:
            shown.append(k)
    hidden = len(order) - len(shown) - sum(map(len, held.values()))
    ids = {k: i for i, k in enumerate(shown)}
    ids.update({k: HELD_IDS + i for i, k in enumerate(k for col in sorted(held) for k in held[col])})
    dots = len(shown) > LOD_NODES  # level of detail: a big picture names only what the search kept

    # layers: x by depth; y in order (kept near their parent, pending, then pruned), each column centred
    columns: dict[int, list[str]] = defaultdict(list)
    for k in shown:
        columns[by[k]["depth"] or 0].append(k)
    ypos: dict[str, float] = {}
    for col in sorted(columns):
        keys = sorted(columns[col], key=lambda k: (not by[k]["kept"] and by[k]["seed"] is None,
                                                   by[k]["pending"] is None and not by[k]["kept"],
                                                   ypos.get(by[k]["parent"] or "", 0.0), -by[k]["best"]))
        y, placed = 0.0, []
        for k in keys:
            small = not by[k]["kept"] and by[k]["pending"] is None and by[k]["mark"] is None
            placed.append((k, y))
            y += (ROW_DOT if dots else ROW_PRUNED) if small else ROW_KEPT
        mid = (placed[-1][1] if placed else 0.0) / 2
        for k, yy in placed:
            ypos[k] = yy - mid
    more_y = {}
    for col, keys in held.items():  # under the column, where its "+N pruned" node stands until clicked
        bottom = max([ypos[k] for k in columns.get(col, [])] + [0.0])
        more_y[col] = bottom + ROW_KEPT * 0.6
        for i, k in enumerate(keys):
            ypos[k] = more_y[col] + i * (ROW_DOT if dots else ROW_PRUNED)
    ghosts = [k for k in shown if by[k].get("ghost")]
    if ghosts:  # below everything else, so the dotted line to the nearest point crosses nothing
        low = max([y for k, y in ypos.items() if k not in ghosts] + [0.0]) + ROW_KEPT
        for i, k in enumerate(ghosts):
            ypos[k] = low + i * ROW_KEPT

    nodes: list[dict[str, Any]] = []
    reserve: dict[str, dict[str, list[dict[str, Any]]]] = {f"more-d{col}": {"nodes": [], "edges": []} for col in held}
    column_of = {k: col for col, keys in held.items() for k in keys}
    for k in shown + list(column_of):
        e = by[k]
        d = e["depth"] or 0
        etype = (types or {}).get(k)
        base = type_colour(etype) if types is not None else depth_colour(d)
        live = e["kept"] or e["pending"] or e["mark"] is not None
        fill = base if live else fade(base)
        border, width = (fill, 1)
        if k in frontier:
            border, width = FRONTIER_BORDER, 4
        if e["overridden"]:
            border, width = OVERRIDE_COLOUR, 4
        if e["mark"] is not None:
            border, width = EXPECTED_COLOUR, 4
        if e["seed"] is not None:
            status = "topic entity (" + plain(e["seed"], 40) + ")"
        elif e["kept"]:
            status = f"kept at depth {d}"
        elif e["pending"] is not None:
            status = f"proposed at depth {d}: " + ("kept now" if e["pending"] else "not kept now")
        else:
            status = "not reached" if e.get("ghost") else f"pruned at depth {d}"
        tip = [plain(e["title"], 300), (plain(etype, 40).lower() + " · " if etype else "") + status]
        if k in frontier:
            tip.append("in the current frontier")
        if e["overridden"]:
            tip += e["rel_over"] or ["✎ overridden by a person"]
        if e["mark"] is not None:
            tip.append("★ expected by you: " + plain(e["mark"], 200))
        if e["pending"] is not None and clickable:
            tip.append("click to " + ("drop" if e["pending"] else "keep"))
        for (src, rd), (nk, np_) in sorted(rel_summary.items(), key=lambda x: x[0][1]):
            if src == k:
                tip.append(f"depth {rd} relations: {nk} kept, {np_} pruned")
        label = short(e["title"], 22 if dots else 30) + (" ✎" if e["overridden"] else "")
        if dots and not live:
            label = ""
        if e["pending"] is not None:
            label = ("☑ " if e["pending"] else "☐ ") + label
        if e["mark"] is not None:
            label = "★ " + label
        node = {"id": ids[k], "label": label, "title": "\n".join(tip), "x": d * COLUMN_W, "y": round(ypos[k]),
                "color": {"background": fill, "border": border, "highlight": {"background": fill,
                                                                              "border": FRONTIER_BORDER}},
                "borderWidth": width, "shape": "star" if e["mark"] is not None else "dot",
                "size": 20 if e["seed"] is not None else (15 if live else 9),
                "font": {"color": "#212529" if live else "#868e96", "size": 16 if live else 12}}
        if e["pending"] is not None:
            node["shapeProperties"] = {"borderDashes": [5, 3]}
            node["ref"] = e["ref"]
        (reserve[f"more-d{column_of[k]}"]["nodes"] if k in column_of else nodes).append(node)
    for col, keys in held.items():
        nodes.append({"id": f"more-d{col}", "label": f"+{len(keys)} pruned", "shape": "box", "x": col * COLUMN_W,
                      "y": round(more_y[col]), "title": f"{len(keys)} more pruned at depth {col}: click to show them",
                      "color": {"background": MORE_COLOUR, "border": "#adb5bd"}, "font": {"size": 12}})

    visible = [(key, v) for key, v in edges.items() if key[0] in ids and key[1] in ids]
    per_src: dict[str, list[dict[str, Any]]] = defaultdict(list)
    # at most BOXES_MAX boxes at once (the page's table lists every candidate): the best of each source entity
    per = min(RELATIONS_SHOWN, max(2, BOXES_MAX // max(len({r["src"] for r in pend_rels}), 1)))
    for r in sorted(pend_rels, key=lambda r: (-float(r["score"] or 0), not r["auto"])):  # ties: the kept first
        if len(per_src[r["src"]]) < per:
            per_src[r["src"]].append(r)
        else:
            hidden += 1
    # one column of boxes to the right of the frontier, grouped by source entity in the frontier's order
    pend_rels = sorted([r for r in pend_rels if r in per_src[r["src"]] and r["src"] in ids],
                       key=lambda r: (ypos.get(r["src"], 0.0), -float(r["score"] or 0), not r["auto"]))
    for j, r in enumerate(pend_rels):  # relation candidates of a pending relation stage
        rid = len(nodes)
        r["y"] = (j - (len(pend_rels) - 1) / 2) * ROW_BOX
        nodes.append({"id": rid, "label": ("☑ " if r["on"] else "☐ ") + short(r["label"], 40), "shape": "box",
                      "ref": r["id"], "x": round((r["depth"] - 1) * COLUMN_W + BOX_X),
                      "y": round(r["y"]),
                      "title": "\n".join([plain(r["label"], 400), f"score {num(r['score'])} · proposed at depth "
                                          f"{r['depth']}", "reason: " + plain(r["reason"], 300)] +
                                         (["click to " + ("drop" if r["on"] else "keep")] if clickable else [])),
                      "color": {"background": "#e7f5ff" if r["on"] else "#f8f9fa",
                                "border": "#1c7ed6" if r["on"] else "#ced4da"},
                      "font": {"size": 12, "color": "#212529" if r["on"] else "#868e96"},
                      "shapeProperties": {"borderDashes": [5, 3]}})
        visible.append(((r["src"], rid, r["label"]), {"kept": False, "over": False, "depth": r["depth"],
                                                      "cand": {}, "pending": r["on"], "box": rid}))
    labelled = sum(1 for _, v in visible if v["kept"]) <= FRONTIER_EDGE_LABELS
    out_edges: list[dict[str, Any]] = []
    for (src, dst, rel), v in visible:
        c = v["cand"]
        b_id = v.get("box", ids.get(dst))
        a, b = ids[src], b_id
        tip = [plain(rel if not v.get("ghost") else c.get("relation"), 400)]
        if not v.get("ghost") and "box" not in v:
            tip.append(f"score {num(c.get('score'))} · " + ("kept" if v["kept"] else "pruned" if v["pending"] is None
                                                             else "proposed") + f" at depth {v['depth']}")
        if c.get("reason"):
            tip.append("reason: " + plain(c.get("reason"), 400))
        if v.get("rel_person"):
            tip.append("✎ reached through a relation a person kept")
        elif v["over"]:
            tip.append(f"✎ overridden (automatic choice: {'kept' if c.get('auto_kept') else 'pruned'})")
        colour = ("#495057" if v["kept"] else "#1c7ed6" if v["pending"] else EXPECTED_COLOUR if v.get("ghost")
                  else "#ced4da")
        held_end = column_of.get(dst, column_of.get(src))
        (reserve[f"more-d{held_end}"]["edges"] if held_end is not None else out_edges).append(
                         {"from": a, "to": b, "arrows": arrows(bool(c.get("outgoing", True))),
                          "label": two_lines(short(rel, 200)) if labelled and v["kept"] else "",
                          "title": "\n".join(tip), "dashes": [2, 6] if v.get("ghost") else not v["kept"],
                          "width": 3 if v["over"] else (2 if v["kept"] else 1),
                          "color": {"color": OVERRIDE_COLOUR if v["over"] else colour, "highlight": FRONTIER_BORDER}})

    items = type_items((types or {}).get(k, "") for k in shown) if types is not None else \
        [swatch(depth_colour(d)) + ("topic entity" if d == 0 else f"depth {d}")
         for d in sorted({by[k]["depth"] or 0 for k in shown})]
    items.append(swatch(fade(depth_colour(1))) + '<i class="ln"></i>pruned')
    items.append(swatch("#fff", border=FRONTIER_BORDER, ring=True) + "current frontier")
    items.append(swatch("#fff", border=OVERRIDE_COLOUR, ring=True) + "✎ overridden by a person")
    if pending:
        items.append("☑/☐ proposed" + (": click to keep or drop" if clickable else ""))
    if any(by[k]["mark"] is not None for k in shown):
        items.append(f'<span style="color:{EXPECTED_COLOUR}">★</span> expected by you')
    note = f"{hidden} more not shown" if hidden else ""
    if not labelled:
        note = (note + "; " if note else "") + "hover an edge for its relation"
    title = "ToG search" + ("" if depth is None else f" up to depth {depth}")
    opts = vis_options(len(nodes), len(out_edges), physics=False)
    opts["edges"]["smooth"] = {"enabled": True, "type": "cubicBezier", "forceDirection": "horizontal",
                               "roundness": 0.4}
    # relation texts level in the middle of their links, where they cover no entity and no other text (the links
    # fanning out of one entity crossed each other's texts when written along them); the others on hover
    level_labels(opts)
    said = sum(1 for e in out_edges if e["label"])
    place_edge_labels(nodes, out_edges, frame=frame_of(height))
    if sum(1 for e in out_edges if e["label"]) < said:
        note = (note + "; " if note else "") + "hover a link without text for its relation"
    return build_page(nodes, out_edges, opts, height=height, legend_html=legend(items, note), title=title,
                      clickable=clickable, reserve=reserve, for_live=for_live)
