"""tog_core.render.viz, what the pictures mark: pending proposals drawn clickable, a diagnosis in place, types and
their legend, compare, the picture cache, overrides on their edges, the ranked answer's own chain, live pictures as
data, arrows in the graph's stored direction, relations tied at the cut-off. Helpers: test_viz.py."""
from __future__ import annotations

from builders import ent, make_trace
from vizkit import HOSTILE, assert_safe

from tog_core.render.viz import (
    OVERRIDE_COLOUR,
    chains_html,
    frontier_html,
    picture_json,
)
from tog_core.tog.trace import Candidate, Link, Seed, Step, Trace


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

    from builders import free_graph
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
