"""The graph browser's picture: `hops` around one entity of a graph, coloured by entity type.

The centre sits in the middle and its neighbours on rings around it (flattened to the frame's shape), the nearest
and, within a distance, the highest-degree entities first, then moved apart as little as it takes for no dot or
label to cover another (`separate`; a label is wider than a ring's slot, and big dots push theirs into the next
ring). At most `first` are drawn at once: a "+N more" node
adds the next `first` when clicked (a hub such as SCROOGE, 148 neighbours, opens as 30 and four clicks). Beyond
`max_nodes` in all, the rest are left out ("N more not shown"). With many edges, relation text is in the edges'
tooltips only; with fewer, each is written level on a white ground in the middle of its link where it covers no
entity and no other relation text (render/labels.py), the centre's own links first; the others' in their tooltips.
With `clickable`, every entity node carries its entity index as `ref`, so a click on a neighbour
can move the browser to it.
"""
from __future__ import annotations

import math
from collections import deque
from typing import Any

from tog_core.render.labels import frame_of, label_box, level_labels, place_edge_labels, two_lines
from tog_core.render.page import MIN_LABEL_PX, build_page, vis_options
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
MORE_BELOW = 70.0  # the "+N more" node's centre, under the lowest ring drawn at first
LABELLED_WIDER = 2.4  # rings this much wider when the links carry their relation texts (as the compare picture's hops)
MORE_ROOM = MORE_BELOW + 20.0  # what it takes below the rings, its box included (fit_scale)


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


def separate(xy: list[tuple[float, float]], boxes: list[tuple[float, float, float]], fixed: list[bool], *,
             rounds: int = 300) -> list[tuple[float, float]]:
    """The points moved as little as it takes for no two boxes (label_box, around each point) to overlap: each
    overlapping pair is pushed apart along the axis where it overlaps less, half each (all of it onto the other
    when one is `fixed`), a little at a time, until none overlaps or `rounds` are done. Deterministic."""
    if len(xy) < 2:
        return list(xy)
    import numpy as np

    p = np.array(xy, dtype=float)
    half, up, down = (np.array(c, dtype=float) for c in zip(*boxes))
    still = np.array(fixed, dtype=bool)
    upper = np.triu(np.ones((len(p), len(p)), dtype=bool), 1)
    for _ in range(rounds):
        x, y = p[:, 0], p[:, 1]
        ox = np.minimum(x[:, None] + half[:, None], x[None, :] + half[None, :]) - \
            np.maximum(x[:, None] - half[:, None], x[None, :] - half[None, :])
        oy = np.minimum(y[:, None] + down[:, None], y[None, :] + down[None, :]) - \
            np.maximum(y[:, None] - up[:, None], y[None, :] - up[None, :])
        hit = upper & (ox > 0.5) & (oy > 0.5) & ~(still[:, None] & still[None, :])
        if not hit.any():
            break
        move = np.zeros_like(p)
        for i, j in zip(*np.nonzero(hit)):
            dx, dy = x[i] - x[j], y[i] - y[j]
            if ox[i, j] < oy[i, j]:
                push = np.array([(ox[i, j] + 1) * (1 if dx > 0 or (dx == 0 and i < j) else -1), 0.0])
            else:
                push = np.array([0.0, (oy[i, j] + 1) * (1 if dy > 0 or (dy == 0 and i < j) else -1)])
            share_i = 0.0 if still[i] else (1.0 if still[j] else 0.5)
            move[i] += push * share_i
            move[j] -= push * (1.0 - share_i)
        p += 0.6 * move
    return [(float(a), float(b)) for a, b in p]


def _weight(w: Any) -> float:
    try:
        return float(w)
    except (TypeError, ValueError):
        return 0.0


def _look(graph: Any, i: int, hop: int) -> tuple[str, float, int]:
    """A node's label, dot radius (by degree) and font size (by distance from the centre)."""
    return short(graph.title(i), 24), 10 + min(graph.degree(i), 60) ** 0.5 * 2.5, 18 if hop == 0 else (
        15 if hop == 1 else 13)


def spread(looks: list[tuple[str, float, int]], batches: list[int], spots: list[tuple[float, float]],
           frame: tuple[float, float] = (1000.0, 480.0)) -> list[tuple[float, float]]:
    """The ring places `spots` of the nodes after the centre, moved apart until no dot or label covers another
    (`separate`). Each node (the centre first, at 0, 0) comes with its look (`_look`: label, dot radius, font size)
    and the batch it is drawn in (`batches`, 0: at once). One batch at a time, the centre and the batches drawn
    before it held still, so what a person sees first is laid out for itself and a "+N more" click places the
    newcomers around it. The first batch's labels are sized as the page will draw them once fitted to `frame` (px):
    page.py enlarges every label to MIN_LABEL_PX on screen, so up to three rounds of separating and estimating the
    scale. Later batches keep their own font size: sized the same way the layout only grew, the scale fell and more
    labels met. Measured in Chromium on Christmas Carol's SCROOGE (158 relationships) in 1000 x 520 px, labels over
    another label or dot: at first 0 (was 5), after one "+30 more" 20 (was 35)."""
    at = [(0.0, 0.0), *spots]
    for b in sorted(set(batches)):
        upto = [k for k, nb in enumerate(batches) if nb <= b]
        scale = 1.0
        for _ in range(3 if b == 0 else 1):  # what is drawn first: labels as large as the page will draw them
            use = [label_box(looks[k][0], looks[k][1], max(looks[k][2], MIN_LABEL_PX / scale)) for k in upto]
            moved = separate([at[k] for k in upto], use, [k == 0 or batches[k] < b for k in upto])
            for k, q in zip(upto, moved):
                at[k] = q
            now = fit_scale([at[k] for k in upto], use, frame, more=b < max(batches))
            if now >= scale:
                break
            scale = now
    return at[1:]


def fit_scale(points: list[tuple[float, float]], boxes: list[tuple[float, float, float]],
              frame: tuple[float, float], *, more: bool = False) -> float:
    """About the scale the page fits these boxes to a frame of (width, height) px at (never above 1): vis-network
    fits their bounding box, with the "+N more" node under the rings when `more`, and a tenth to spare."""
    left = min(x - q[0] for (x, _), q in zip(points, boxes))
    right = max(x + q[0] for (x, _), q in zip(points, boxes))
    top = min(y - q[1] for (_, y), q in zip(points, boxes))
    bottom = max(y + q[2] for (_, y), q in zip(points, boxes)) + (MORE_ROOM if more else 0.0)
    return min(1.0, frame[0] / max(1.1 * (right - left), 1.0), frame[1] / max(1.1 * (bottom - top), 1.0))


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
    looks = [_look(graph, i, dist[i]) for i in shown]
    keep = set(shown)
    rels: set[int] = set()
    for i in shown:
        ridx, others, _ = graph.neighbors(i)
        rels.update(r for r, o in zip(ridx.tolist(), others.tolist()) if o in keep)
    labelled = len(rels) <= EDGE_LABELS_MAX
    wider = LABELLED_WIDER if labelled else 1.0  # room in the middle of the links for their relation texts
    spots = spread(looks, [batch[i] for i in shown], [(x * wider, y * wider)
                                                      for x, y in ring_positions(len(shown) - 1)], frame_of(height))
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
        label, size, font = looks[k]
        nodes_by.setdefault(batch[i], []).append(
            {"id": i, "label": label, "title": "\n".join(tip), "ref": str(i), "x": round(x), "y": round(y),
             "size": size, "borderWidth": 5 if i == centre else 1,
             "color": {"background": colour, "border": FRONTIER_BORDER if i == centre else colour},
             "font": {"size": font}})
    edges_by: dict[int, list[dict[str, Any]]] = {}
    got = {r: graph.relationship(r) for r in rels}  # each read once (a hub has thousands; a database store is slow)
    # the centre's own links first, the heaviest first: their relation texts are placed first (place_edge_labels)
    for r in sorted(rels, key=lambda r: (centre not in (got[r].source_idx, got[r].target_idx),
                                         -_weight(got[r].weight), r)):
        rel = got[r]
        tip = [plain(rel.description or rel.label, 400), f"weight {num(rel.weight)} · "
               f"{len(rel.text_unit_ids)} source passage(s)"]
        edges_by.setdefault(max(batch[rel.source_idx], batch[rel.target_idx]), []).append(
            {"from": rel.source_idx, "to": rel.target_idx,
             "label": two_lines(short(rel.label, 200)) if labelled else "",
             "title": "\n".join(tip), "smooth": False,
             # the centre's own edges drawn, the ones between its neighbours faint (a hub's would be a tangle)
             **({"color": {"color": "#adb5bd", "highlight": FRONTIER_BORDER}, "width": 1.5}
                if centre in (rel.source_idx, rel.target_idx) else
                {"color": {"color": "#e9ecef", "highlight": FRONTIER_BORDER}, "width": 0.5})})
    last = max(nodes_by)
    below = max([y for _, y in spots[:batch_size]] + [0.0]) + MORE_BELOW  # under the rings drawn at first

    def more(b: int) -> dict[str, Any]:  # the "+N more" node that shows batch b
        n = sum(len(nodes_by[c]) for c in range(b, last + 1))
        return {"id": f"more-{b}", "label": f"+{n} more: click to show {len(nodes_by[b])}", "shape": "box",
                "x": 0, "y": round(below), "title": f"{n} more neighbours, nearest and best connected first",
                "color": {"background": MORE_COLOUR, "border": "#868e96"}, "font": {"size": 14}}
    nodes = nodes_by[0] + ([more(1)] if last > 0 else [])
    reserve = {f"more-{b}": {"nodes": nodes_by[b] + ([more(b + 1)] if b < last else []), "edges": edges_by.get(b, [])}
               for b in range(1, last + 1)}
    if labelled:  # each batch's texts placed around what is drawn by then
        taken: list[Any] = []
        upto: list[dict[str, Any]] = []
        for b in range(last + 1):
            upto += nodes_by[b]
            taken = place_edge_labels(upto + ([more(b + 1)] if b < last else []), edges_by.get(b, []),
                                      frame=frame_of(height), taken=taken)
    unsaid = sum(1 for es in edges_by.values() for e in es if not e["label"])
    note = f"{hidden} more not shown" if hidden else ""
    if not labelled:
        note = (note + "; " if note else "") + f"{len(rels)} edges: hover an edge for its relation"
    elif unsaid:
        note = (note + "; " if note else "") + "hover a link without text for its relation"
    items = type_items(types) + [swatch("#fff", border=FRONTIER_BORDER, ring=True) + "centre"]
    if clickable:
        items.append("click a neighbour to move to it")
    opts = vis_options(len(nodes), len(edges_by.get(0, [])), physics=False)
    level_labels(opts)
    return build_page(nodes, edges_by.get(0, []), opts, height=height, legend_html=legend(items, note),
                      title="Neighbourhood", clickable=clickable, reserve=reserve)
