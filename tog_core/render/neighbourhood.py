"""The graph browser's picture: `hops` around one entity of a graph, coloured by entity type.

When more than `max_nodes` are reached, the centre, then the nearest and, within a distance, the
highest-degree entities are kept ("N more not shown"). With `clickable`, every node carries its entity index
as `ref`, so a click on a neighbour can move the browser to it.
"""
from __future__ import annotations

from collections import deque
from typing import Any

from tog_core.render.page import (
    EDGE_LABELS_MAX,
    FRONTIER_BORDER,
    build_page,
    legend,
    num,
    plain,
    short,
    swatch,
    type_colour,
    type_items,
    vis_options,
)


def neighbourhood_html(graph: Any, entity_idx: int, *, hops: int = 1, max_nodes: int = 150,
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
    keep = set(shown)
    nodes, types = [], []
    for i in shown:
        e = graph.entity(i)
        types.append(e.type or "")
        colour = "#ced4da" if e.placeholder else type_colour(e.type)
        tip = [plain(e.title, 300), f"{plain(e.type, 40).lower() or 'no type'} · degree {e.degree} · hop {dist[i]}"]
        if e.description:
            tip.append(plain(e.description, 500))
        if clickable and i != centre:
            tip.append("click to move here")
        nodes.append({"id": i, "label": short(e.title, 30), "title": "\n".join(tip), "ref": str(i),
                      "size": 10 + min(e.degree, 60) ** 0.5 * 2.5, "borderWidth": 5 if i == centre else 1,
                      "color": {"background": colour, "border": FRONTIER_BORDER if i == centre else colour},
                      "font": {"size": 18 if i == centre else (15 if dist[i] == 1 else 13)}})
    rels = []
    for i in shown:
        ridx, others, _ = graph.neighbors(i)
        for r, o in zip(ridx.tolist(), others.tolist()):
            if o in keep:
                rels.append(r)
    rels = sorted(set(rels))
    labelled = len(rels) <= EDGE_LABELS_MAX
    edges = []
    for r in rels:
        rel = graph.relationship(r)
        tip = [plain(rel.description or rel.label, 400), f"weight {num(rel.weight)} · "
               f"{len(rel.text_unit_ids)} source passage(s)"]
        edges.append({"from": rel.source_idx, "to": rel.target_idx, "label": short(rel.label, 40) if labelled else "",
                      "title": "\n".join(tip), "color": {"color": "#adb5bd", "highlight": FRONTIER_BORDER}})
    note = f"{hidden} more not shown" if hidden else ""
    if not labelled:
        note = (note + "; " if note else "") + f"{len(rels)} edges: hover an edge for its relation"
    items = type_items(types) + [swatch("#fff", border=FRONTIER_BORDER, ring=True) + "centre"]
    if clickable:
        items.append("click a neighbour to move to it")
    return build_page(nodes, edges, vis_options(len(nodes), len(edges), physics=True), height=height,
                      legend_html=legend(items, note), title="Neighbourhood", clickable=clickable)
