"""Where the pictures write a link's relation text (render/labels.py), checked by hand on three entities."""
from __future__ import annotations

from tog_core.render.labels import place_edge_labels, two_lines


def _dot(i: int, x: float, y: float) -> dict:
    return {"id": i, "label": f"E{i}", "x": x, "y": y, "size": 10, "font": {"size": 16}}


def test_a_text_that_would_cover_another_or_a_name_is_left_to_the_tooltip():
    # A at the left, B and C far right one above the other: the middles of A-B and A-C are 10 apart; B-C is short
    nodes = [_dot(0, 0, 0), _dot(1, 600, -10), _dot(2, 600, 10)]
    edges = [{"from": 0, "to": 1, "label": "first relation"}, {"from": 0, "to": 2, "label": "second relation"},
             {"from": 1, "to": 2, "label": "between B and C"}]
    place_edge_labels(nodes, edges, frame=(1000.0, 480.0))
    assert [e["label"] for e in edges] == ["first relation", "", ""]  # the second covers the first, the third B's name


def test_texts_with_room_are_all_kept_and_nodes_without_a_place_change_nothing():
    nodes = [_dot(0, 0, 0), _dot(1, 600, -200), _dot(2, 600, 200)]
    edges = [{"from": 0, "to": 1, "label": "first"}, {"from": 0, "to": 2, "label": "second"}]
    place_edge_labels(nodes, edges, frame=(1000.0, 480.0))
    assert [e["label"] for e in edges] == ["first", "second"]
    edges = [{"from": 0, "to": 1, "label": "a"}, {"from": 0, "to": 1, "label": "a"}]
    place_edge_labels([{"id": 0, "label": "x"}, {"id": 1, "label": "y"}], edges, frame=(1000.0, 480.0))
    assert [e["label"] for e in edges] == ["a", "a"]  # physics places them: nothing known, nothing dropped


def test_two_lines_breaks_at_the_space_nearest_the_middle_and_cuts_the_rest():
    assert two_lines("Hestia Rook founded Rookhaven") == "Hestia Rook\nfounded Rookhaven"
    assert two_lines("short one") == "short one"
    assert two_lines("Rookhaven Shipbuilders is headquartered in Rookhaven.") == "Rookhaven\nShipbuilders is hea…"


def test_the_graph_browser_reads_each_relationship_of_a_neighbourhood_once():
    # sorting the links (the centre's own first, the heaviest first) read each relationship three times more: on a
    # hub of thousands, in a database store, a query each
    from collections import Counter
    from pathlib import Path

    from tog_core.graphrag.graph import KnowledgeGraph
    from tog_core.render.neighbourhood import neighbourhood_html

    class Counting:
        def __init__(self, graph):
            self.graph, self.reads = graph, Counter()

        def relationship(self, r):
            self.reads[r] += 1
            return self.graph.relationship(r)

        def __getattr__(self, name):
            return getattr(self.graph, name)

    graph = KnowledgeGraph.load(Path(__file__).resolve().parents[1] / "demo")
    hub = max(range(graph.n_entities), key=graph.degree)
    counting = Counting(graph)
    neighbourhood_html(counting, hub, hops=1)
    assert len(counting.reads) >= graph.degree(hub) and set(counting.reads.values()) == {1}
