"""The graph browser's layout (render/neighbourhood.py): neighbours on rings, then moved apart until no dot or label
covers another; the centre and the neighbours already drawn never move when "+N more" adds the next ones."""
from __future__ import annotations

import random
from pathlib import Path

import pytest

from tog_core.render.neighbourhood import _look, label_box, neighbourhood_html, ring_positions, separate
from tog_core.render.page import picture_json

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def demo_graph():
    from tog_core.graphrag.graph import KnowledgeGraph

    return KnowledgeGraph.load(ROOT / "demo")


def overlapping(points, boxes) -> list[tuple[int, int]]:
    out = []
    for i in range(len(points)):
        for j in range(i + 1, len(points)):
            (xi, yi), (xj, yj) = points[i], points[j]
            (hi, ui, di), (hj, uj, dj) = boxes[i], boxes[j]
            if min(xi + hi, xj + hj) - max(xi - hi, xj - hj) > 0.5 and \
                    min(yi + di, yj + dj) - max(yi - ui, yj - uj) > 0.5:
                out.append((i, j))
    return out


def test_separate_leaves_no_two_boxes_overlapping_and_never_moves_a_fixed_point():
    rng = random.Random(7)
    points = [(0.0, 0.0)] + [(rng.uniform(-200, 200), rng.uniform(-100, 100)) for _ in range(40)]
    boxes = [label_box("X" * rng.randint(3, 24), rng.uniform(10, 29), 15) for _ in points]
    fixed = [k == 0 for k in range(len(points))]
    assert overlapping(points, boxes)  # crowded on purpose
    moved = separate(points, boxes, fixed, rounds=2000)
    assert overlapping(moved, boxes) == []
    assert moved[0] == (0.0, 0.0)
    assert moved == separate(points, boxes, fixed, rounds=2000)  # deterministic


def test_two_fixed_points_are_left_as_they_are():
    points, boxes = [(0.0, 0.0), (1.0, 0.0)], [label_box("SAME PLACE", 12, 15)] * 2
    assert separate(points, boxes, [True, True]) == points


def test_the_demo_hub_and_its_next_neighbours_are_drawn_without_a_label_over_a_dot_or_label(demo_graph):
    g = demo_graph
    hub = max(range(g.n_entities), key=g.degree)
    pic = picture_json(neighbourhood_html(g, hub, hops=2, first=12))
    first, reserve = pic["nodes"], pic["more"]
    assert reserve, "the demo hub should need a '+N more'"
    drawn = [n for n in first if isinstance(n["id"], int)]
    boxes = [label_box(*_look(g, n["id"], 0 if n["id"] == hub else 1)) for n in drawn]
    # rounded to whole canvas units in the page: half a unit of slack each way
    assert overlapping([(n["x"], n["y"]) for n in drawn], [(h - 1, u - 1, d - 1) for h, u, d in boxes]) == []
    more = next(iter(reserve.values()))["nodes"]
    added = [n for n in more if isinstance(n["id"], int)]
    assert {n["id"] for n in added}.isdisjoint({n["id"] for n in drawn})
    again = picture_json(neighbourhood_html(g, hub, hops=2, first=12))["nodes"]
    assert [(n["id"], n["x"], n["y"]) for n in again] == [(n["id"], n["x"], n["y"]) for n in first]


def test_a_later_batch_never_moves_what_was_drawn_before(demo_graph):
    from tog_core.render.neighbourhood import spread

    g = demo_graph
    hub = max(range(g.n_entities), key=g.degree)
    _, others, _ = g.neighbors(hub)
    near = list(dict.fromkeys(others.tolist()))[:24]
    shown, dist = [hub, *near], {hub: 0, **{i: 1 for i in near}}
    spots = ring_positions(len(near))

    def layout(n_later: int) -> list[tuple[float, float]]:  # the first 12 at once, then n_later more
        batch = {hub: 0, **{i: 0 if k < 12 else 1 for k, i in enumerate(near)}}
        keep = shown[:13 + n_later]
        return spread([_look(g, i, dist[i]) for i in keep], [batch[i] for i in keep], spots[:len(keep) - 1])

    few, many = layout(3), layout(12)
    assert few[:12] == many[:12]  # the first batch's places do not depend on what comes after
    assert few[12:] != spots[12:15] or many[12:] != spots[12:24]  # and the later ones were moved where needed


def test_a_wide_character_counts_as_a_whole_font_size():
    assert label_box("茶园茶园", 10, 15)[0] > label_box("ABCD", 10, 15)[0] + 10
