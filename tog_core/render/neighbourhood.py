"""The graph browser's picture: `hops` around one entity of a graph, coloured by entity type.

The centre sits in the middle and its neighbours on rings around it (flattened to the frame's shape), the nearest
and, within a distance, the highest-degree entities first. At most `first` are drawn at once: a "+N more" node
adds the next `first` when clicked (a hub such as SCROOGE, 158 neighbours, opens as 40 and three clicks). Beyond
`max_nodes` in all, the rest are left out ("N more not shown"). With many edges, relation text is in the edges'
tooltips only. With `clickable`, every entity node carries its entity index as `ref`, so a click on a neighbour
can move the browser to it.
"""
from __future__ import annotations

import math
from collections import deque
from typing import Any

from tog_core.render.page import build_page, vis_options
from tog_core.render.style import (
    EDGE_LABELS_MAX,
    FRONTIER_BORDER,
    MORE_COLOUR,
    legend,
    num,
    plain,
    short,
    swatch,
    type_colour,
    type_items,
)


# rings: the first is RING_Y tall (half-height, canvas units), each next one RING_STEP more, ASPECT times as wide
# (a picture frame is about twice as wide as tall); neighbours SLOT apart along a ring. Sized so that 30
# neighbours fit a 1000 x 500 px frame at about scale 0.8, where 15 px labels are 12 px on screen.
RING_Y, RING_STEP, ASPECT, SLOT = 105.0, 80.0, 2.3, 110.0
FIRST = 30


def ring_positions(n: int) -> list[tuple[float, float]]:
    """Places for n nodes around a centre at (0, 0): on concentric ellipses (ASPECT times wider than tall, as the
    frame is), each holding as many as fit SLOT apart, every other ring turned by half a slot."""
    out: list[tuple[float, float]] = []
    ring = 0
    while len(out) < n:
        ry = RING_Y + ring * RING_STEP
        rx = ry * ASPECT
        around = 2 * math.pi * math.sqrt((rx * rx + ry * ry) / 2)
        k = min(max(int(around // SLOT), 6), n - len(out))
        if n - len(out) - k in range(1, 4):  # no ring of one to three at the very end: share them out
            k = n - len(out)
        turn = 0.5 if ring % 2 else 0.0
        for j in range(k):
            a = 2 * math.pi * (j + turn) / max(k, 1) - math.pi / 2
            out.append((rx * math.cos(a), ry * math.sin(a)))
        ring += 1
    return out


def neighbourhood_html(graph: Any, entity_idx: int, *, hops: int = 1, max_nodes: int = 150, first: int = FIRST,
                       height: str = "560px", clickable: bool = False) -> str:
    centre = int(entity_idx)
    dist = {centre: 0}
    queue = deque([centre])
    while queue:
        v = queue.popleft()
        if dist[v] >= hops:
            continue
        _, others, _ = graph.neighbors(v)
        for o in others.tolist():
            if o not in dist:
                dist[o] = dist[v] + 1
                queue.append(o)
    order = sorted(dist, key=lambda i: (dist[i], -graph.degree(i), i))
    shown = order[:max(max_nodes, 1)]
    hidden = len(order) - len(shown)
    batch_size = max(int(first), 1)
    batch = {i: k // batch_size for k, i in enumerate(shown[1:])}  # which click shows it (0: drawn at once)
    batch[centre] = 0
    spots = ring_positions(len(shown) - 1)
    nodes_by: dict[int, list[dict[str, Any]]] = {}
    types = []
    for k, i in enumerate(shown):
        e = graph.entity(i)
        types.append(e.type or "")
        colour = "#ced4da" if e.placeholder else type_colour(e.type)
        tip = [plain(e.title, 300), f"{plain(e.type, 40).lower() or 'no type'} · degree {e.degree} · hop {dist[i]}"]
        if e.description:
            tip.append(plain(e.description, 500))
        if clickable and i != centre:
            tip.append("click to move here")
        x, y = (0.0, 0.0) if i == centre else spots[k - 1]
        nodes_by.setdefault(batch[i], []).append(
            {"id": i, "label": short(e.title, 24), "title": "\n".join(tip), "ref": str(i), "x": round(x), "y": round(y),
             "size": 10 + min(e.degree, 60) ** 0.5 * 2.5, "borderWidth": 5 if i == centre else 1,
             "color": {"background": colour, "border": FRONTIER_BORDER if i == centre else colour},
             "font": {"size": 18 if i == centre else (15 if dist[i] == 1 else 13)}})
    keep = set(shown)
    rels: set[int] = set()
    for i in shown:
        ridx, others, _ = graph.neighbors(i)
        rels.update(r for r, o in zip(ridx.tolist(), others.tolist()) if o in keep)
    labelled = len(rels) <= EDGE_LABELS_MAX
    edges_by: dict[int, list[dict[str, Any]]] = {}
    for r in sorted(rels):
        rel = graph.relationship(r)
        tip = [plain(rel.description or rel.label, 400), f"weight {num(rel.weight)} · "
               f"{len(rel.text_unit_ids)} source passage(s)"]
        edges_by.setdefault(max(batch[rel.source_idx], batch[rel.target_idx]), []).append(
            {"from": rel.source_idx, "to": rel.target_idx, "label": short(rel.label, 40) if labelled else "",
             "title": "\n".join(tip), "smooth": False,
             # the centre's own edges drawn, the ones between its neighbours faint (a hub's would be a tangle)
             **({"color": {"color": "#adb5bd", "highlight": FRONTIER_BORDER}, "width": 1.5}
                if centre in (rel.source_idx, rel.target_idx) else
                {"color": {"color": "#e9ecef", "highlight": FRONTIER_BORDER}, "width": 0.5})})
    last = max(nodes_by)
    below = max([y for _, y in spots[:batch_size]] + [0.0]) + 70  # under the rings drawn at first

    def more(b: int) -> dict[str, Any]:  # the "+N more" node that shows batch b
        n = sum(len(nodes_by[c]) for c in range(b, last + 1))
        return {"id": f"more-{b}", "label": f"+{n} more: click to show {len(nodes_by[b])}", "shape": "box",
                "x": 0, "y": round(below), "title": f"{n} more neighbours, nearest and best connected first",
                "color": {"background": MORE_COLOUR, "border": "#868e96"}, "font": {"size": 14}}
    nodes = nodes_by[0] + ([more(1)] if last > 0 else [])
    reserve = {f"more-{b}": {"nodes": nodes_by[b] + ([more(b + 1)] if b < last else []), "edges": edges_by.get(b, [])}
               for b in range(1, last + 1)}
    note = f"{hidden} more not shown" if hidden else ""
    if not labelled:
        note = (note + "; " if note else "") + f"{len(rels)} edges: hover an edge for its relation"
    items = type_items(types) + [swatch("#fff", border=FRONTIER_BORDER, ring=True) + "centre"]
    if clickable:
        items.append("click a neighbour to move to it")
    return build_page(nodes, edges_by.get(0, []), vis_options(len(nodes), len(edges_by.get(0, [])), physics=False),
                      height=height, legend_html=legend(items, note), title="Neighbourhood", clickable=clickable,
                      reserve=reserve)
