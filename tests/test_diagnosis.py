""""Why not X?" on hand-made traces over the small Acme graph (tests/builders.py), each case checkable by eye:

    Alice -founded-> Acme <-works at- Bob;  Alice -born in-> Paris;  Bob -born in-> Lyon;
    Acme -located in-> Berlin -capital of-> Germany;  Alice -> Carol -> Dave -> Alice (friends)
"""
from __future__ import annotations

import pytest
from builders import make_graph

from tog_core.tog.diagnosis import diagnose, diagnosis_text


@pytest.fixture(scope="module")
def g():
    return make_graph()


def eid(g, title: str) -> str:
    return g.entity(g.find_title(title)).id


def rid(g, src: str, dst: str) -> str:
    a, b = g.find_title(src), g.find_title(dst)
    ridx, others, _ = g.neighbors(a)
    return next(g.relationship(r).id for r, o in zip(ridx.tolist(), others.tolist()) if o == b)


def rel(g, src: str, dst: str, score: float, kept: bool, path: int = 0) -> dict:
    r = rid(g, src, dst)
    return {"id": f"p{path}|{r}", "label": g.relationship(g.find_relationship(r)).description, "score": score,
            "kept": kept, "auto_kept": kept, "kind": "relation", "source_entity": src, "source_id": eid(g, src),
            "relationship_ids": [r], "path": path}


def ent(g, src: str, dst: str, score: float, kept: bool, path: int = 0) -> dict:
    return {"id": f"e|{path}|{eid(g, dst)}", "label": dst, "score": score, "kept": kept, "auto_kept": kept,
            "kind": "entity", "source_entity": src, "source_id": eid(g, src), "target": dst,
            "target_id": eid(g, dst), "relation": "", "relationship_ids": [rid(g, src, dst)], "path": path}


def verdict(depth: int, sufficient: bool) -> dict:
    return {"depth": depth, "stage": "evaluate", "candidates": [
        {"id": "sufficient", "label": "enough", "score": 0.0, "kept": sufficient, "kind": "verdict"},
        {"id": "continue", "label": "deeper", "score": 0.0, "kept": not sufficient, "kind": "verdict"}]}


def link(g, src: str, dst: str) -> dict:
    return {"source": src, "source_id": eid(g, src), "target": dst, "target_id": eid(g, dst),
            "relation": "", "relationship_id": rid(g, src, dst), "text_unit_ids": []}


def trace(g, steps: list[dict], chains: list[list[dict]], depth: int = 3) -> dict:
    return {"question": "Where was the founder of Acme born?", "config": {"depth": depth, "max_candidates": 30},
            "seeds": [{"id": eid(g, "Acme"), "title": "Acme", "how": "exact"}], "steps": steps, "chains": chains,
            "stop_reason": "max_depth"}


@pytest.fixture(scope="module")
def t(g):
    """Depth 1: relations founded (.9) and works at (.6) kept, located in (.2) pruned; entities Alice (.9) and
    Bob (.4) kept; evaluate: deeper. Depth 2: Alice -> Paris (.8) kept, Bob -> Lyon (.3) pruned."""
    d1 = [rel(g, "Alice", "Acme", 0.9, True), rel(g, "Bob", "Acme", 0.6, True), rel(g, "Acme", "Berlin", 0.2, False)]
    for c in d1:
        c["source_entity"], c["source_id"] = "Acme", eid(g, "Acme")
    e1 = [ent(g, "Acme", "Alice", 0.9, True), ent(g, "Acme", "Bob", 0.4, True, path=1)]
    e2 = [ent(g, "Alice", "Paris", 0.8, True), ent(g, "Bob", "Lyon", 0.3, False, path=1),
          ent(g, "Alice", "Carol", 0.1, False)]
    steps = [{"depth": 1, "stage": "relations", "candidates": d1}, {"depth": 1, "stage": "entities", "candidates": e1},
             verdict(1, False), {"depth": 2, "stage": "relations", "candidates": []},
             {"depth": 2, "stage": "entities", "candidates": e2}, verdict(2, True)]
    return trace(g, steps, [[link(g, "Alice", "Acme"), link(g, "Alice", "Paris")]])


def test_in_the_final_beam(g, t):
    [d] = diagnose(t, ["Paris"], g)
    assert d["in_final_beam"] and d["lost"] is None and not d["never_candidate"] and d["chain"] == 1
    assert diagnosis_text([d]) == "Paris: in the final beam (chain 1)."


def test_a_pruned_candidate_names_its_step_rank_score_and_cutoff(g, t):
    [d] = diagnose(t, ["Lyon"], g)
    assert not d["in_final_beam"] and not d["never_candidate"]
    assert {k: d["lost"][k] for k in ("depth", "stage", "rank", "of", "score", "cutoff", "step")} == \
        {"depth": 2, "stage": "entities", "rank": 2, "of": 3, "score": 0.3, "cutoff": 0.8, "step": 4}
    assert d["force"]["candidate_id"] == f"e|1|{eid(g, 'Lyon')}" and d["force"]["step"] == 4
    words = diagnosis_text([d])
    assert "Lost at depth 2 (entities): “Lyon” ranked 2 of 3, score 0.300, cut-off 0.800." in words
    assert "Override to try: keep “Lyon” (step 5: depth 2, entities)." in words  # where the page shows it


def test_kept_then_gone_is_lost_where_the_search_went_on(g, t):
    [d] = diagnose(t, ["Bob"], g)  # in the beam at depth 1, but depth 1 was "not yet sufficient"
    assert d["lost"]["stage"] == "evaluate" and d["lost"]["depth"] == 1
    assert d["force"] == {"step": 2, "candidate_id": "sufficient", "label": "Bob", "route": [],
                          "from_id": eid(g, "Bob"), "entity_id": eid(g, "Bob"), "action": "answer at depth 1"}
    assert "Override to try: answer at depth 1 with “Bob” (step 3: depth 1, evaluate)." in diagnosis_text([d])


def test_never_a_candidate_finds_the_nearest_point_and_the_pruned_relation(g, t):
    [d] = diagnose(t, ["Germany"], g)
    assert d["never_candidate"] and not d["in_final_beam"]
    assert d["nearest"]["entity"] == "Acme" and d["nearest"]["hops"] == 2
    assert d["nearest"]["route"] == ["Acme", "Berlin", "Germany"]
    assert (d["lost"]["depth"], d["lost"]["stage"], d["lost"]["rank"], d["lost"]["of"]) == (1, "relations", 3, 3)
    assert d["lost"]["cutoff"] == 0.6  # the lowest relation kept on that path
    assert d["force"]["route"] == [[rid(g, "Acme", "Berlin"), eid(g, "Berlin")],
                                   [rid(g, "Berlin", "Germany"), eid(g, "Germany")]]
    assert "Nearest point reached: Acme (depth 0), 2 hop(s) away: Acme → Berlin → Germany." in diagnosis_text([d])


def test_the_deepest_of_equally_near_points_is_the_nearest(g, t):
    [d] = diagnose(t, ["Dave"], g)  # one hop from Alice (depth 1, kept) and from Carol (a pruned candidate)
    assert d["nearest"]["entity"] == "Alice" and d["nearest"]["depth"] == 1 and d["nearest"]["hops"] == 1
    assert d["lost"]["stage"] == "relations" and d["lost"]["rank"] is None  # never offered at depth 2
    assert "cut before scoring" in d["lost"]["note"]


def test_max_depth_and_a_sufficient_stop_are_named(g):
    steps = [{"depth": 1, "stage": "relations", "candidates": []},
             {"depth": 1, "stage": "entities", "candidates": [ent(g, "Acme", "Alice", 0.9, True)]}]
    chains = [[link(g, "Alice", "Acme")]]
    [d] = diagnose(trace(g, steps, chains, depth=1), ["Paris"], g)
    assert d["lost"]["stage"] == "max_depth" and "reaching it needs depth 2 (this run: 1;" in d["lost"]["note"]
    [d] = diagnose(trace(g, steps + [verdict(1, True)], chains, depth=3), ["Paris"], g)
    assert d["lost"]["stage"] == "evaluate" and "judged sufficient" in d["lost"]["note"]
    assert d["force"]["candidate_id"] == "continue" and d["force"]["route"][0][1] == eid(g, "Paris")


def test_unknown_titles_offer_close_names_and_blank_ones_are_skipped(g, t):
    [d] = diagnose(t, ["Alise", "  "], g)
    assert not d["found"] and "Alice" in d["did_you_mean"] and d["lost"] is None
    assert diagnosis_text([d]).startswith("Alise: not an entity of this project (did you mean: Alice")
    assert diagnose(t, ["paris"], g)[0]["title"] == "Paris"  # titles are matched case-insensitively


def test_unreachable_says_so(g):
    lonely = make_graph(extra_entities=["Zed"])
    [d] = diagnose(trace(lonely, [], []), ["Zed"], lonely)
    assert d["lost"]["stage"] == "unreachable" and d["nearest"] is None and d["force"] is None


def test_a_candidate_tied_with_the_cut_off_says_so_and_what_broke_the_tie(g):
    d1 = [rel(g, "Alice", "Acme", 0.05, True), rel(g, "Acme", "Berlin", 0.05, False),
          rel(g, "Bob", "Acme", 0.05, False)]
    for c in d1:
        c["source_entity"], c["source_id"] = "Acme", eid(g, "Acme")
    d1[1]["reason"] = "tied at 0.05 with 2 other(s) at the cut-off: the whole chain read by e5 0.71; read with: x"
    steps = [{"depth": 1, "stage": "relations", "candidates": d1}, verdict(1, True)]
    t2 = trace(g, steps, [[link(g, "Alice", "Acme")]], depth=1)
    [berlin, bob] = diagnose(t2, ["Berlin", "Bob"], g)
    assert berlin["lost"]["rank"] == 1 and berlin["lost"]["cutoff"] == 0.05  # as high as the kept one: a tie
    text = diagnosis_text([berlin])
    assert "Tied with the cut-off and not kept: tied at 0.05 with 2 other(s) at the cut-off: the whole chain read " \
           "by e5 0.71; the relation towards Berlin was pruned" in text and "read with" not in text
    assert "ties go by the order the graph lists them in" in bob["lost"]["note"]
    [paris] = diagnose(trace(g, [{"depth": 1, "stage": "relations", "candidates": [
        rel(g, "Alice", "Acme", 0.9, True), {**rel(g, "Acme", "Berlin", 0.2, False), "source_id": eid(g, "Acme")}]},
        verdict(1, True)], [[link(g, "Alice", "Acme")]], depth=1), ["Berlin"], g)
    assert "tied" not in (paris["lost"]["note"] or "")  # below the cut-off: no tie to speak of


def test_no_override_is_offered_when_the_route_needs_more_than_the_runs_depth(g, t):
    """Germany is two hops past Acme's pruned relation: reachable with this run's depth 3, so forcing the relation
    in is offered. With a maximum depth of 1 no override within the run reaches it: no `force`, and the note says
    the depth to search again with (a newcomer was offered "Force … in" that could only fail)."""
    [d] = diagnose(t, ["Germany"], g)
    assert d["force"] is not None and "search again" not in d["lost"]["note"]
    shallow = {**t, "config": {**t["config"], "depth": 1}}
    [d] = diagnose(shallow, ["Germany"], g)
    assert (d["lost"]["stage"], d["lost"]["depth"]) == ("relations", 1) and d["force"] is None
    assert "reaching it needs depth 2 (this run: 1; search again with a maximum depth of 2 or more)" in \
        d["lost"]["note"]
    assert "Override to try" not in diagnosis_text([d])


def test_a_search_still_going_says_the_depth_is_still_to_come(g):
    """Explore waits at depth 1 for the person: "Why not Paris?" said "Lost at depth 2 (stopped). The search ended
    (unfinished) before depth 2" to a reviewer. A run with no stop reason and no answer is still going."""
    steps = [{"depth": 1, "stage": "relations", "candidates": []},
             {"depth": 1, "stage": "entities", "candidates": [ent(g, "Acme", "Alice", 0.9, True)]}]
    going = {**trace(g, steps, [[link(g, "Alice", "Acme")]], depth=3), "stop_reason": None}
    [d] = diagnose(going, ["Paris"], g)
    assert d["lost"]["stage"] == "not reached yet" and "has not gone past depth 1 yet" in d["lost"]["note"]
    said = diagnosis_text([d])
    assert "Not reached yet: depth 2 is still to come." in said and "ended" not in said and "Lost at" not in said
    [d] = diagnose({**going, "stop_reason": "user"}, ["Paris"], g)  # stopped by the person: it did end there
    assert d["lost"]["stage"] == "user" and "the search ended (user) before depth 2" in d["lost"]["note"]
