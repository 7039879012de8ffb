"""The engine's departures from the paper that had no name before (EngineConfig: topic_ends, typed_facts_once,
distinct_entities, lookahead_order, dead_chains_last): each on by default, and switched off, the paper's behaviour.
The graphs are those of test_cheap_search.py, where each rule is shown at work."""
from __future__ import annotations

from builders import free_graph, kin_graph, language_graph
from searchkit import chains, run


def test_typed_facts_once_off_offers_both_readings_of_a_fact():
    g = kin_graph([("Sam", "children", "Gus"), ("Gus", "parents", "Sam"), ("Ann", "children", "Gus")])

    def incoming_children(**cfg):
        _, st = run(g, "who is Gus 's parent", ["Gus"], depth=1, width=None, **cfg)
        rel = next(s for s in st.steps if s.stage == "relations")
        return next(c for c in rel.candidates if (c.relation, c.outgoing) == ("children", False)).relationship_ids

    assert incoming_children() == ["r2"]  # Sam's edge is the parents edge read the other way: offered once
    assert incoming_children(typed_facts_once=False) == ["r0", "r2"]


SHIP = [("SHIP", "CREW", "The crew works and lives aboard the ship"),
        ("CREW", "LOOK-OUT", "The look-out of the crew kept watch in the bow of the ship"),
        ("CREW", "HELMSMAN", "The helmsman, one of the crew, steers the ship")]
Q = "Who stood at the wheel of the ship where the look-out kept watch in the bow?"


def test_topic_ends_off_lets_a_chain_end_at_another_topic():
    g = free_graph(SHIP)
    eng, st = run(g, Q, ["SHIP", "LOOK-OUT"], depth=2, width=5)
    assert [c[-1] for c in chains(eng, st)] == ["HELMSMAN"]
    eng, st = run(g, Q, ["SHIP", "LOOK-OUT"], depth=2, width=5, topic_ends=False)
    assert ["LOOK-OUT", "CREW", "SHIP"] in chains(eng, st)  # from one topic to the other: it answers nothing


def test_dead_chains_last_off_ranks_by_score_alone():
    # one hop, random scores: the look-out's chains (to and from the other topic) outscore the helmsman's
    g = free_graph([("SHIP", "LOOK-OUT", "the look-out stood at the wheel of the ship and kept watch in the bow"),
                    ("SHIP", "HELMSMAN", "The helmsman stood at the wheel of the ship")])
    kw = dict(depth=2, width=3, exact_depth=False, relation_pruner="random", entity_pruner="random")

    def ranked(**cfg):
        eng, st = run(g, Q, ["SHIP", "LOOK-OUT"], **kw, **cfg)
        return [(g.title(p.end), p.answers_nothing(eng.topic_ids(st))) for p in eng.best_paths(st)]

    assert ranked() == [("HELMSMAN", False), ("SHIP", True), ("LOOK-OUT", True)]
    assert ranked(dead_chains_last=False) == [("SHIP", True), ("LOOK-OUT", True), ("HELMSMAN", False)]


def test_distinct_entities_off_lets_two_routes_to_one_entity_take_two_slots():
    g = free_graph([("Ann", "Bob", "Ann met Bob at the fair"), ("Bob", "Ann", "Bob met Ann at the fair again"),
                    ("Ann", "Cid", "Ann saw Cid")])
    q = "who did Ann meet at the fair"
    eng, st = run(g, q, ["Ann"], depth=1, width=3)
    assert chains(eng, st) == [["Ann", "Bob"], ["Ann", "Cid"]]  # the second way to Bob is not kept
    eng, st = run(g, q, ["Ann"], depth=1, width=3, distinct_entities=False)
    assert chains(eng, st) == [["Ann", "Bob"], ["Ann", "Bob"], ["Ann", "Cid"]]


def test_lookahead_order_off_cuts_a_big_relation_group_by_the_pre_filter_alone():
    q = "what languages are the movies starring the actors of Seedfilm in"
    eng, st = run(language_graph(), q, ["Seedfilm"], depth=3, width=1)
    assert chains(eng, st) == [["Seedfilm", "Kim Novak", "Fjord", "French"]]
    eng, st = run(language_graph(), q, ["Seedfilm"], depth=3, width=1, lookahead_order=False)
    assert "French" not in [c[-1] for c in chains(eng, st)]  # Fjord, listed last of seven films, was cut
