"""tog_core.render.viz: pictures are offline, escaped, capped, deterministic, and show what the trace says."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from tog_core.render.viz import (
    OVERRIDE_COLOUR,
    chains_html,
    frontier_html,
    neighbourhood_html,
    picture_json,
    plain,
    short,
)
from tog_core.tog.trace import Candidate, Link, Seed, Step, Trace

ROOT = Path(__file__).resolve().parents[1]
HOSTILE = ["<img src=x onerror=alert(1)>", "<script>alert(1)</script>", "javascript:alert(1)",
           'a <a href="javascript:alert(1)">link</a> HREF', "quote \" and ' and `backtick`",
           "\u202eevil\u202c zero\u200bwidth \u2066rtl\u2069", "x" * 10_000]
URL = re.compile(r"https?://[^\s\"'<>)]*")


def _vis_urls() -> set[str]:
    import pyvis

    lib = Path(pyvis.__file__).parent / "templates" / "lib" / "vis-9.1.2" / "vis-network.min.js"
    return set(URL.findall(lib.read_text(encoding="utf-8")))


VIS_URLS = _vis_urls()


def ent(step_depth: int, src: tuple[str, str], dst: tuple[str, str], rel: str, score: float, kept: bool,
        auto_kept: bool | None = None, reason: str = "because") -> Candidate:
    return Candidate(id=f"ent:{step_depth}:{src[0]}:{dst[0]}", label=dst[1], kind="entity", score=score,
                     reason=reason, kept=kept, auto_kept=kept if auto_kept is None else auto_kept,
                     source_entity=src[1], source_id=src[0], target=dst[1], target_id=dst[0], relation=rel,
                     relationship_ids=[f"r-{dst[0]}"])


def make_trace(titles: dict[str, str] | None = None, reason: str = "because") -> dict:
    """A (seed) → B, C kept, D pruned (depth 1); B → E kept, F pruned; C → G kept by a person (depth 2)."""
    t = {k: k for k in "ABCDEFG"} | (titles or {})
    n = {k: (k, t[k]) for k in t}
    d1 = [ent(1, n["A"], n["B"], f"{t['A']} founded {t['B']}", 0.9, True, reason=reason),
          ent(1, n["A"], n["C"], f"{t['A']} met {t['C']}", 0.7, True, reason=reason),
          ent(1, n["A"], n["D"], f"{t['A']} saw {t['D']}", 0.1, False, reason=reason)]
    d2 = [ent(2, n["B"], n["E"], f"{t['B']} lives in {t['E']}", 0.8, True, reason=reason),
          ent(2, n["B"], n["F"], f"{t['B']} near {t['F']}", 0.2, False, reason=reason),
          ent(2, n["C"], n["G"], f"{t['C']} owns {t['G']}", 0.3, True, auto_kept=False, reason=reason)]
    rel1 = [Candidate(id="rel:A:founded", label="founded", score=0.9, kept=True, auto_kept=True,
                      source_entity=t["A"], source_id="A"),
            Candidate(id="rel:A:ate", label="ate", score=0.0, source_entity=t["A"], source_id="A")]
    link = lambda c: Link(source=c.source_entity, source_id=c.source_id, relation=c.relation or "",  # noqa: E731
                          target=c.target or "", target_id=c.target_id or "", relationship_id=c.relationship_ids[0],
                          text_unit_ids=["tu-1", "tu-2"], score=c.score)
    trace = Trace(question="Where does the founder live?", project="demo", config={"width": 2, "depth": 2},
                  seeds=[Seed(id="A", title=t["A"], how="fuzzy")],
                  steps=[Step(depth=1, stage="relations", candidates=rel1),
                         Step(depth=1, stage="entities", candidates=d1),
                         Step(depth=1, stage="evaluate", verdict={"sufficient": False, "reason": "need more"}),
                         Step(depth=2, stage="entities", candidates=d2,
                              overrides=[{"id": d2[2].id, "label": d2[2].label, "auto_kept": False, "kept": True}])],
                  chains=[[link(d1[0]), link(d2[0])], [link(d1[1]), link(d2[2])]])
    return trace.to_dict()


def labels(page: str) -> list[str]:
    return [n["label"] for n in picture_json(page)["nodes"]]


def assert_safe(page: str) -> None:
    low = page.lower()
    assert "<img src=x" not in low and "<script>alert" not in low and "<a href=\"javascript" not in low
    assert "<h1" not in low  # pyvis heading never used
    assert not re.search(r"""\b(?:src|href)\s*=\s*["']?\s*(?:https?:)?//""", page, re.I)
    assert set(URL.findall(page)) <= VIS_URLS  # only the URLs inside the inlined vis.js text
    # vis.js, pyvis' drawGraph, our fit hook and (clickable pictures) our click hook: data never adds a script
    assert page.count("</script>") == (4 if 'tog: "pick"' in page else 3)
    data = picture_json(page)
    for item in data["nodes"] + data["edges"]:
        for key in ("label", "title"):
            text = str(item.get(key, ""))
            assert "href" not in text.lower()
            assert "<" not in text and ">" not in text
            assert not re.search("[\u202a-\u202e\u2066-\u2069\u200e\u200f]", text)


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


# ---------------------------------------------------------------------------------------------- layers, clicks, marks

def test_pending_proposal_is_drawn_clickable_with_the_current_choice():
    trace = make_trace()
    d3 = [ent(3, ("E", "E"), ("H", "H"), "E knows H", 0.7, False),
          ent(3, ("E", "E"), ("I", "I"), "E saw I", 0.2, False)]
    pending = {"step": Step(depth=3, stage="entities", candidates=d3).to_dict(), "choice": [d3[0].id]}
    page = frontier_html(trace, pending=pending, clickable=True)
    assert_safe(page)
    nodes = {n["label"]: n for n in picture_json(page)["nodes"]}
    assert nodes["☑ H"]["ref"] == d3[0].id and nodes["☐ I"]["ref"] == d3[1].id
    assert "click to drop" in nodes["☑ H"]["title"] and "click to keep" in nodes["☐ I"]["title"]
    assert nodes["☑ H"]["x"] > nodes["E"]["x"]  # the next column
    assert 'tog: "pick"' in page and "ref" not in nodes["E"]  # only proposed candidates act
    assert 'tog: "pick"' not in frontier_html(trace, pending=pending)  # not clickable: no click hook


def test_pending_relations_are_boxes_between_columns():
    trace = make_trace()
    rels = [Candidate(id=f"rel:E:{k}", label=f"E relation {k}", score=1 - k / 20, source_entity="E", source_id="E")
            for k in range(14)]
    page = frontier_html(trace, pending={"step": Step(depth=3, stage="relations", candidates=rels).to_dict(),
                                         "choice": ["rel:E:0"]}, clickable=True)
    boxes = [n for n in picture_json(page)["nodes"] if n.get("shape") == "box"]
    assert len(boxes) == 10 and boxes[0]["label"].startswith("☑ E relation 0")  # the best 10, then a note
    assert "4 more not shown" in page


def test_diagnosis_marks_a_pruned_entity_in_place_and_a_never_reached_one_as_a_ghost():
    trace = make_trace()
    marks = [{"title": "D", "entity_id": "D", "in_final_beam": False,
              "lost": {"depth": 1, "stage": "entities", "rank": 3, "score": 0.1, "cutoff": 0.7}},
             {"title": "Zed", "entity_id": "Z", "never_candidate": True, "lost": {"stage": "relations"},
              "nearest": {"entity_id": "E", "hops": 2}}]
    page = frontier_html(trace, marks=marks)
    nodes = {n["label"]: n for n in picture_json(page)["nodes"]}
    assert nodes["★ D"]["shape"] == "star" and "lost at depth 1 (entities): rank 3" in nodes["★ D"]["title"]
    assert nodes["★ Zed"]["x"] > nodes["E"]["x"] and "not reached" in nodes["★ Zed"]["title"]
    ghost = [e for e in picture_json(page)["edges"] if e["to"] == nodes["★ Zed"]["id"]]
    assert len(ghost) == 1 and ghost[0]["from"] == nodes["E"]["id"] and "2 hop(s) away" in ghost[0]["title"]
    assert "expected by you" in page


def test_types_colour_nodes_with_a_legend_and_edges_run_left_to_right():
    from tog_core.render.style import type_colour

    trace = make_trace()
    types = {"A": "PERSON", "B": "GEO", "C": "ORGANIZATION", "E": "GEO"}
    page = frontier_html(trace, types=types)
    nodes = {n["label"].rstrip(" ✎"): n for n in picture_json(page)["nodes"]}
    assert nodes["A"]["color"]["background"] == type_colour("PERSON") != type_colour("GEO")
    assert nodes["B"]["color"]["background"] == nodes["E"]["color"]["background"] == type_colour("GEO")
    assert "person</span>" in page and "geo</span>" in page and "no type</span>" in page
    assert type_colour("SPACESHIP") == type_colour("spaceship")  # unknown types: stable hashed colours
    x = {n["id"]: n["x"] for n in nodes.values()}
    assert all(x[e["from"]] < x[e["to"]] for e in picture_json(page)["edges"])


def test_fit_on_show_on_resize_and_by_button():
    page = chains_html(make_trace())
    assert 'id="tog-fit"' in page and "ResizeObserver" in page and "network.fit(" in page
    assert "visibilitychange" in page and "#mynetwork{" in page and "flex:1 1 auto" in page


def test_compare_is_one_picture_with_shared_and_one_sided_links():
    from tog_core.render.chains import compare_html, path_diff

    a = make_trace()
    b = make_trace()
    b["chains"] = [b["chains"][0][:1]]  # B: only A → B
    d = path_diff(a, b)
    assert d["shared"] == [("A", "A founded B", "B")] and d["only_b"] == []
    assert {h[2] for h in d["only_a"]} == {"C", "E", "G"}
    page = compare_html(a, b)
    assert_safe(page)
    edges = picture_json(page)["edges"]
    assert sum("both runs" in e["title"] for e in edges) == 1 and sum("only run A" in e["title"] for e in edges) == 3
    assert "only run A (3)" in page and "only run B (0)" in page
    assert "Neither run has reasoning chains" in compare_html({"chains": []}, {"chains": []})


def test_picture_cache_builds_once_per_key_and_is_bounded():
    from tog_core.render.cache import PictureCache, trace_key

    cache, built = PictureCache(max_entries=2), []

    def build(tag):
        return lambda: (built.append(tag), f"page {tag}")[1]

    assert cache.get_or_build("a", build("a")) == cache.get_or_build("a", build("a2")) == "page a"
    cache.get_or_build("b", build("b"))
    cache.get_or_build("c", build("c"))  # evicts a, the least recently used
    cache.get_or_build("a", build("a3"))
    assert built == ["a", "b", "c", "a3"] and cache.hits == 1
    t = make_trace()
    before = trace_key(t)
    t["steps"][0]["overrides"] = [{"id": "x"}]
    assert trace_key(t) != before and trace_key(make_trace()) == before


def test_relation_overrides_are_drawn_on_their_source_and_on_the_edges_they_open():
    trace = make_trace()
    rel = trace["steps"][0]
    rel["candidates"][1].update(kept=True)  # a person kept "ate" (the policy had dropped it) ...
    rel["candidates"][0].update(kept=False, auto_kept=True)  # ... and dropped "founded"
    rel["overrides"] = [{"id": "rel:A:ate", "label": "ate", "auto_kept": False, "kept": True},
                        {"id": "rel:A:founded", "label": "founded", "auto_kept": True, "kept": False}]
    trace["steps"][1]["candidates"][0]["relation"] = "ate"  # B was reached through "ate"
    page = frontier_html(trace)
    nodes = {n["label"].rstrip(" ✎"): n for n in picture_json(page)["nodes"]}
    a = nodes["A"]
    assert a["label"].endswith("✎") and a["color"]["border"] == OVERRIDE_COLOUR
    assert "✎ relation kept by a person: ate" in a["title"] and "✎ relation dropped by a person: founded" in a["title"]
    [edge] = [e for e in picture_json(page)["edges"] if e["to"] == nodes["B"]["id"]]
    assert edge["color"]["color"] == OVERRIDE_COLOUR and "relation a person kept" in edge["title"]


def test_many_chains_label_only_the_answers_chain_the_rest_on_hover():
    chains = [[Link(source="S", source_id="S", relation=f"S knows M{k}", target=f"M{k}", target_id=f"M{k}",
                    relationship_id=f"r{k}"),
               Link(source=f"M{k}", source_id=f"M{k}", relation=f"M{k} owns E{k}", target=f"E{k}", target_id=f"E{k}",
                    relationship_id=f"q{k}")] for k in range(10)]
    trace = Trace(question="q", project="p", config={}, seeds=[Seed(id="S", title="S", how="user")],
                  chains=chains).to_dict()
    edges = picture_json(chains_html(trace, emphasise=2))["edges"]
    assert sorted(e["label"] for e in edges if e["label"]) == ["M2 owns E2", "S knows M2"]
    assert all(e["title"] for e in edges)  # every relation is still in its tooltip
    few = picture_json(chains_html({**trace, "chains": trace["chains"][:3]}))["edges"]
    assert all(e["label"] for e in few)


def test_the_chains_picture_emphasises_the_ranked_answers_own_chain():
    from tog_core.render.chains import with_answer_chain

    trace = make_trace()
    c0, c1 = trace["chains"]
    # the answer is C, one hop along chain 2: that chain is emphasised
    trace["answer_entity"] = "C"
    trace["candidates"] = [{"title": "C", "entity_id": "C", "score": 0.6, "chain": [dict(c1[0])], "sentence": ""}]
    assert with_answer_chain(trace) == ([c0, c1], 1)
    page = chains_html(trace)
    widths = {e["label"]: e["width"] for e in picture_json(page)["edges"]}
    assert widths["A met C"] > widths["A founded B"]
    # chain 2 goes on past the answer (C owns G): thick up to C only, and the legend says where the answer stands
    assert widths["C owns G"] == widths["A founded B"] and "chain 2 (used for the answer, up to C, its hop 1)" in page
    big = {n["label"]: n["size"] for n in picture_json(page)["nodes"]}
    assert big["C"] > big["G"]
    for link in (c1[0], c1[1], trace["candidates"][0]["chain"][0]):  # a hostile title in the legend stays text
        link["target"] = link["target"].replace("C", "C<img src=x onerror=alert(1)>&") if link["target"] == "C" else \
            link["target"]
    trace["answer_entity"] = "C<img src=x onerror=alert(1)>&"
    trace["candidates"][0]["title"] = trace["answer_entity"]
    hostile = chains_html(trace)
    # short() turns <> into ‹›; the & is escaped in the legend (a bare one would read as markup)
    assert "<img" not in hostile and "up to C‹img src=x onerror=alert(1)›&amp;, its hop 1" in hostile
    # an answer from a number of hops tried but not kept: its chain is drawn first, thick, with its end
    own = [{"source": "A", "source_id": "A", "relation": "A taught H", "target": "H", "target_id": "H",
            "relationship_id": "r-h"}]
    trace["answer_entity"] = "H"
    trace["candidates"] = [{"title": "H", "entity_id": "H", "score": 0.7, "chain": own, "sentence": ""}]
    chains, at = with_answer_chain(trace)
    assert at == 0 and chains[0] == own and len(chains) == 3
    data = picture_json(chains_html(trace))
    assert "H" in [n["label"] for n in data["nodes"]]
    widths = {e["label"]: e["width"] for e in data["edges"]}
    assert widths["A taught H"] == 3 and widths["A founded B"] == 1
    # candidates naming another entity than the answer (an old trace, a person's edit): the best chain, as before
    trace["answer_entity"] = "B"
    assert with_answer_chain(trace)[1] == 0 and len(with_answer_chain(trace)[0]) == 2



def test_the_evidence_tab_marks_the_chain_the_chains_picture_marks():
    """Two chains reach the answer C: one ends there, the other passes through it and is the one the ranked answer
    came along. The evidence tab (views.answer_view) and the chains picture name the same chain."""
    from tog_core.app.views import answer_view
    from tog_core.render.chains import with_answer_chain
    from tog_core.tog.trace import Trace

    trace = make_trace()
    c0, c1 = trace["chains"]
    other = [{**c1[0], "relation": "A wrote to C", "relationship_id": "r-other"}]
    trace["chains"] = [other, c0, c1]
    trace["answer_entity"] = "C"
    trace["candidates"] = [{"title": "C", "entity_id": "C", "score": 0.6, "chain": [dict(c1[0])], "sentence": ""}]
    assert with_answer_chain(trace)[1] == 2
    view = answer_view(Trace.from_dict(trace))
    assert view["chain_index"] == 2 and view["answer_hop"] == 1
    trace["candidates"] = []  # no ranked answer with its chain: the chain ending at the answer, as before
    assert answer_view(Trace.from_dict(trace))["chain_index"] == 0

def test_a_live_picture_is_the_same_picture_as_data():
    """Explore's picture as data for the page kept loaded in the picture component (render.live.live_shell): the
    same nodes, edges and "more" as the standalone page, the legend as a tree of allowed tags whose text is text."""
    import json

    from tog_core.render.live import live_shell
    from tog_core.render.page import external_references
    from tog_core.render.style import legend, legend_tree, type_items

    trace = make_trace()
    page, data = frontier_html(trace, clickable=True), frontier_html(trace, clickable=True, for_live=True)
    assert picture_json(data) == picture_json(page) and picture_json(data)["nodes"]
    pic = json.loads(data)
    assert pic["title"] == "ToG search" and pic["physics"] is False and pic["options"]["physics"]["enabled"] is False

    def texts(items: list) -> list[str]:
        return [t for it in items for t in ([it] if isinstance(it, str) else texts(it["children"]))]

    def tags(items: list) -> set[str]:
        return {t for it in items if isinstance(it, dict) for t in {it["tag"]} | tags(it["children"])}

    assert "overridden by a person" in " ".join(texts(pic["legend"])) and tags(pic["legend"]) <= {"span", "i", "button"}
    hostile = legend_tree(legend(type_items(HOSTILE[:2]), note=HOSTILE[3]))  # entity types and a note: text only
    assert tags(hostile) <= {"span", "i", "button"}
    said = " ".join(texts(hostile))
    assert HOSTILE[0].lower() in said and HOSTILE[1].lower() in said and HOSTILE[3] in said
    shell = live_shell()
    assert shell is live_shell() and external_references(shell) == [] and picture_json(shell)["nodes"] == []
    assert 'm.tog !== "draw"' in shell and "createTextNode" in shell and "innerHTML" not in shell.split("</style>")[-1]


def test_chain_arrows_follow_the_graphs_stored_direction_not_the_walk():
    """Links follow the walk from the topic; the trace records how the graph stores each relationship and the
    chains picture draws that, as the search picture does (a reversed relationship points back)."""
    import asyncio

    from test_policy import free_graph
    from tog_core.policy.cheap import CheapPolicy
    from tog_core.tog.engine import ToGEngine
    from tog_core.tog.state import EngineConfig

    g = free_graph([("Saltmere", "Verdant Isles", "Saltmere is the capital of the Verdant Isles"),
                    ("Verdant Isles", "Thornholm", "The Verdant Isles include Thornholm")])
    eng = ToGEngine(g, config=EngineConfig(relation_pruner="bm25", entity_pruner="bm25", depth=2, exact_depth=True),
                    policy=CheapPolicy())
    state = asyncio.run(eng.run("Which island is in the isles whose capital is Saltmere?", seeds=["Thornholm"]))
    trace = eng.trace(state).to_dict()
    [chain] = [c for c in trace["chains"] if len(c) == 2]
    # walked Thornholm -> Verdant Isles -> Saltmere; stored Verdant Isles -> Thornholm and Saltmere -> Verdant Isles
    assert [(lk["source"], lk["target"], lk["stored_forward"]) for lk in chain] == [
        ("Thornholm", "Verdant Isles", False), ("Verdant Isles", "Saltmere", False)]

    def arrows(t: dict) -> dict[str, str]:
        return {e["title"].split("\n")[0]: "to" if e["arrows"]["to"]["enabled"] else "from"
                for e in picture_json(chains_html(t))["edges"]}

    got = arrows(trace)
    assert got["Saltmere is the capital of the Verdant Isles"] == "from"  # drawn Isles→Saltmere, points to Isles
    assert got["The Verdant Isles include Thornholm"] == "from"
    old = {**trace, "chains": [[{k: v for k, v in lk.items() if k != "stored_forward"} for lk in c]
                               for c in trace["chains"]]}
    assert set(arrows(old).values()) == {"to"}  # an older trace, without the field: the walk's direction

    from tog_core.render.chains import compare_html  # the compare picture draws the same arrows
    drawn = {e["title"].split("\n")[0]: "to" if e["arrows"]["to"]["enabled"] else "from"
             for e in picture_json(compare_html(trace, old))["edges"]}
    assert drawn["Saltmere is the capital of the Verdant Isles"] == "from"
    assert drawn["The Verdant Isles include Thornholm"] == "from"


def test_relations_tied_at_the_cut_off_show_the_kept_ones_first_in_the_picture_and_the_table():
    """30 relations at the floor, the three kept ones (chosen by what their reason names) listed last in the graph's
    order: the picture's ten boxes and the Explore table start with them."""
    from tog_core.app.views import candidate_rows
    from tog_core.tog.state import Proposal

    trace = make_trace()
    rels = [Candidate(id=f"rel:E:{k}", label=f"E relation {k}", score=0.05, source_entity="E", source_id="E",
                      auto_kept=k >= 27, kept=k >= 27) for k in range(30)]
    step = Step(depth=3, stage="relations", candidates=rels)
    page = frontier_html(trace, pending={"step": step.to_dict(), "choice": [c.id for c in rels if c.kept]},
                         clickable=True)
    boxes = [n["label"] for n in picture_json(page)["nodes"] if n.get("shape") == "box"]
    assert boxes[:3] == ["☑ E relation 27", "☑ E relation 28", "☑ E relation 29"] and len(boxes) == 10
    rows = candidate_rows(Proposal(step=step, payload=()))
    assert [r["candidate"] for r in rows[:3]] == ["E relation 27", "E relation 28", "E relation 29"]
    assert all(r["keep"] for r in rows[:3]) and not any(r["keep"] for r in rows[3:])
