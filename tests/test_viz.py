"""tog_core.render.viz: pictures are offline, escaped, capped, deterministic, and show what the trace says. Layers,
clicks and marks (pending proposals, diagnosis, types, compare, the answer's chain, live pictures, arrows):
test_viz_layers.py."""
from __future__ import annotations

from pathlib import Path

import pytest

from builders import ent, make_trace
from tog_core.render.viz import (
    OVERRIDE_COLOUR,
    chains_html,
    frontier_html,
    neighbourhood_html,
    picture_json,
    plain,
    short,
)
from tog_core.tog.trace import Seed, Step, Trace
from vizkit import HOSTILE, assert_safe

ROOT = Path(__file__).resolve().parents[1]


def labels(page: str) -> list[str]:
    return [n["label"] for n in picture_json(page)["nodes"]]


def test_frontier_synthetic_shows_kept_pruned_frontier_and_overrides():
    page = frontier_html(make_trace())
    assert_safe(page)
    data = picture_json(page)
    by_label = {n["label"].rstrip(" ✎"): n for n in data["nodes"]}
    assert set(by_label) == set("ABCDEFG")
    assert "topic entity" in by_label["A"]["title"]
    assert "pruned at depth 1" in by_label["D"]["title"]
    assert "in the current frontier" in by_label["E"]["title"] and "in the current frontier" in by_label["G"]["title"]
    assert "in the current frontier" not in by_label["B"]["title"]
    g = by_label["G"]
    assert g["label"].endswith("✎") and "overridden" in g["title"] and g["color"]["border"] == OVERRIDE_COLOUR
    dashed = {(e["from"], e["to"]) for e in data["edges"] if e["dashes"]}
    ids = {k: n["id"] for k, n in by_label.items()}
    assert dashed == {(ids["A"], ids["D"]), (ids["B"], ids["F"])}
    over_edges = [e for e in data["edges"] if "overridden" in e["title"]]
    assert len(over_edges) == 1 and "automatic choice: pruned" in over_edges[0]["title"]
    assert "score 0.90" in next(e["title"] for e in data["edges"] if e["to"] == ids["B"])
    assert "reason: because" in over_edges[0]["title"]
    assert "depth 1 relations: 1 kept, 1 pruned" in by_label["A"]["title"]
    assert 'class="tog-legend"' in page and "overridden by a person" in page and 'id="tog-fit"' in page
    x = {k: n["x"] for k, n in by_label.items()}  # layers left to right by depth
    assert x["A"] < x["B"] == x["C"] == x["D"] < x["E"] == x["F"] == x["G"]
    y = {k: n["y"] for k, n in by_label.items()}
    assert y["B"] < y["D"] and y["C"] < y["D"]  # kept above pruned in a column


def test_frontier_depth_1_excludes_depth_2():
    got = {label.rstrip(" ✎") for label in labels(frontier_html(make_trace(), depth=1))}
    assert got == {"A", "B", "C", "D"}
    page = frontier_html(make_trace(), depth=1)
    front = [n for n in picture_json(page)["nodes"] if "current frontier" in n["title"]]
    assert {n["label"] for n in front} == {"B", "C"}


def test_frontier_depth_0_is_the_seeds_only():
    data = picture_json(frontier_html(make_trace(), depth=0))
    assert [n["label"] for n in data["nodes"]] == ["A"] and data["edges"] == []


def test_override_inferred_from_auto_kept_when_not_recorded():
    trace = make_trace()
    trace["steps"][3]["overrides"] = []
    g = next(n for n in picture_json(frontier_html(trace))["nodes"] if n["label"].startswith("G"))
    assert "overridden" in g["title"]


def test_node_cap_and_more_not_shown_note():
    seed = ("S", "Seed")
    cands = [ent(1, seed, (f"N{i}", f"Node {i}"), f"rel {i}", 1 - i / 100, i < 3) for i in range(40)]
    trace = Trace(question="q", project="p", config={}, seeds=[Seed(id="S", title="Seed", how="user")],
                  steps=[Step(depth=1, stage="entities", candidates=cands)]).to_dict()
    page = frontier_html(trace, max_nodes=10)
    got = labels(page)
    assert len(got) == 10
    assert {"Seed", "Node 0", "Node 1", "Node 2"} <= set(got)  # seeds and kept survive the cap
    assert "31 more not shown" in page
    assert all(e["from"] in range(10) and e["to"] in range(10) for e in picture_json(page)["edges"])
    assert "more not shown" not in frontier_html(trace, max_nodes=100, pruned_per_depth=100)
    few = labels(frontier_html(trace, pruned_per_depth=5))  # the best 5 pruned of the depth, not 37
    assert len(few) == 1 + 3 + 5 and "Node 3" in few and "Node 8" not in few


@pytest.mark.parametrize("bad", HOSTILE)
def test_hostile_titles_are_inert(bad):
    trace = make_trace({"A": bad, "E": bad + " E", "D": "D " + bad}, reason=bad)
    trace["question"] = bad
    for page in (frontier_html(trace), frontier_html(trace, depth=1), chains_html(trace)):
        assert_safe(page)
        for n in picture_json(page)["nodes"]:
            assert len(n["label"]) <= 32
            assert len(n["title"]) <= 2_000


def test_href_broken_and_plain_text():
    assert "href" not in plain('<a HREF="x">').lower()
    assert plain("<b>&amp;</b>") == "‹b›&amp;‹/b›"
    assert plain("Smith & Sons") == "Smith & Sons"
    assert short("a\n\n  b " * 30, 10) == "a b a b a…" and len(short("x" * 100, 40)) == 40


def test_chains_one_node_per_distinct_entity_left_to_right():
    trace = make_trace()
    page = chains_html(trace)
    assert_safe(page)
    data = picture_json(page)
    distinct = {x for chain in trace["chains"] for link in chain for x in (link["source_id"], link["target_id"])}
    assert len(data["nodes"]) == len(distinct) == 5
    x = {n["label"]: n["x"] for n in data["nodes"]}
    assert x["A"] < x["B"] == x["C"] < x["E"] == x["G"]
    assert all(n["physics"] is False for n in data["nodes"])
    widths = {e["label"]: e["width"] for e in data["edges"]}
    assert widths["A founded B"] > widths["A met C"]  # chain 0 emphasised
    widths2 = {e["label"]: e["width"] for e in picture_json(chains_html(trace, emphasise=1))["edges"]}
    assert widths2["A met C"] > widths2["A founded B"]
    assert "2 source passage(s)" in data["edges"][0]["title"] and "tu-1" not in data["edges"][0]["title"]
    trace["evidence"] = {"tu-1": {"text": "Long passage. A founded B in 1820.", "support": "A founded B in 1820."}}
    tip = picture_json(chains_html(trace))["edges"][0]["title"]
    assert "source: “A founded B in 1820.”" in tip and "tu-1" not in tip


def test_chains_walk_handles_links_stored_backwards():
    chain = [{"source": "Mara", "source_id": "m", "relation": "Mara founded Guild", "target": "Guild",
              "target_id": "g", "relationship_id": "r1", "text_unit_ids": []},
             {"source": "Mara", "source_id": "m", "relation": "Mara born in Tarnby", "target": "Tarnby",
              "target_id": "t", "relationship_id": "r2", "text_unit_ids": []}]
    trace = {"question": "q", "seeds": [{"id": "g", "title": "Guild", "how": "fuzzy"}], "chains": [chain]}
    x = {n["label"]: n["x"] for n in picture_json(chains_html(trace))["nodes"]}
    assert x["Guild"] < x["Mara"] < x["Tarnby"]


def test_empty_trace_pictures():
    trace = Trace(question="q", project="p", config={}).to_dict()
    assert "No reasoning chains" in chains_html(trace)
    assert picture_json(frontier_html(trace))["nodes"] == []


def test_deterministic():
    assert frontier_html(make_trace()) == frontier_html(make_trace())
    assert chains_html(make_trace()) == chains_html(make_trace())


@pytest.fixture(scope="module")
def demo_graph():
    from tog_core.graphrag.graph import KnowledgeGraph

    return KnowledgeGraph.load(ROOT / "demo")


def test_neighbourhood_on_demo(demo_graph):
    g = demo_graph
    centre = g.find("Lanternwright Guild")
    page = neighbourhood_html(g, centre, hops=1)
    assert_safe(page)
    data = picture_json(page)
    _, others, _ = g.neighbors(centre)
    assert {n["id"] for n in data["nodes"]} == {centre, *others.tolist()}
    assert "more not shown" not in page
    assert all({e["from"], e["to"]} <= {n["id"] for n in data["nodes"]} for e in data["edges"])


def test_neighbourhood_cap_keeps_nearest_then_biggest(demo_graph):
    g = demo_graph
    centre = g.find("Lanternwright Guild")
    full = picture_json(neighbourhood_html(g, centre, hops=2, max_nodes=10_000, first=10_000))["nodes"]
    page = neighbourhood_html(g, centre, hops=2, max_nodes=8)
    kept = [n["id"] for n in picture_json(page)["nodes"]]
    assert len(kept) == 8 and kept[0] == centre
    assert f"{len(full) - 8} more not shown" in page
    _, first_hop, _ = g.neighbors(centre)
    ring = sorted(set(first_hop.tolist()), key=lambda i: (-g.degree(i), i))
    assert kept[1:] == ring[:7]


def test_a_hub_opens_with_its_first_neighbours_and_a_more_node_that_adds_the_rest(demo_graph):
    g = demo_graph
    centre = g.find("Lanternwright Guild")
    everyone = {n["id"] for n in picture_json(neighbourhood_html(g, centre, hops=2, first=10_000))["nodes"]}
    data = picture_json(neighbourhood_html(g, centre, hops=2, first=5))
    drawn = [n for n in data["nodes"] if n["id"] != "more-1"]
    [more] = [n for n in data["nodes"] if n["id"] == "more-1"]
    assert len(drawn) == 6 and drawn[0]["id"] == centre
    assert more["label"] == f"+{len(everyone) - 6} more: click to show 5" and more["shape"] == "box"
    added, key, edges = set(), "more-1", list(data["edges"])
    while key:  # each click adds the next five and the next "more" node, until everyone is drawn
        batch = data["more"].pop(key)
        nxt = [n["id"] for n in batch["nodes"] if str(n["id"]).startswith("more-")]
        added |= {n["id"] for n in batch["nodes"]} - set(nxt)
        edges += batch["edges"]
        key = nxt[0] if nxt else None
    assert {n["id"] for n in drawn} | added == everyone and not data["more"]
    assert all({e["from"], e["to"]} <= everyone for e in edges)
    xy = {(n["x"], n["y"]) for n in drawn} | {(n["x"], n["y"]) for b in
                                               picture_json(neighbourhood_html(g, centre, hops=2, first=5))["more"]
                                               .values() for n in b["nodes"]}
    assert len(xy) == len(everyone) + 1  # every entity has its own place (and the "more" nodes share one)
