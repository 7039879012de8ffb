"""The beam keeps the whole path (CheapPolicy.path_beam, an option, off by default): beside its own N at every step,
the relation and the chain on the path to the expected depth that names the most of the question read whole
(policy/pathcover.py), each said in the trace; the paper's beam and a search that does not read the question keep only
their N."""
from __future__ import annotations

import asyncio

from harbour_graph import QUESTION, graph, searched, walked
from tog_core.policy.cheap import CheapPolicy
from tog_core.tog.engine import ToGEngine
from tog_core.tog.stages import on_route, route_next
from tog_core.tog.state import BeamPath, EngineConfig, Hop


def hop(a: int, b: int, r: int = 0) -> Hop:
    return Hop(ridx=r, src=a, dst=b, score=0.5, label="")


def test_a_chain_is_on_the_route_when_it_reaches_the_same_entities_in_order_whatever_twin_it_took():
    route = BeamPath(start=1, hops=(hop(1, 2, r=7), hop(2, 3, r=8)), score=0.0)
    assert route_next(route, BeamPath(start=1, hops=())) == route.hops[0]
    assert route_next(route, BeamPath(start=1, hops=(hop(1, 2, r=99),))) == route.hops[1]  # the reversed twin
    assert route_next(route, BeamPath(start=1, hops=(hop(1, 4),))) is None  # another way
    assert route_next(route, BeamPath(start=5, hops=())) is None  # another topic
    assert route_next(route, route) is None  # the whole route: nothing after it
    assert on_route(route, BeamPath(start=1, hops=(hop(1, 2, r=99),))) and on_route(route, route)
    assert not on_route(route, BeamPath(start=1, hops=())) and not on_route(route, BeamPath(start=1, hops=(
        hop(1, 2), hop(2, 4))))


def test_the_beam_keeps_the_hub_relation_the_whole_path_needs_and_says_so():
    eng, st = searched(CheapPolicy(path_found=0, retrieved=0, path_beam=True))
    g = eng.graph
    ends = [g.title(p.end) for p in st.paths]
    assert "Wenna" in ends and len(st.paths) <= 2  # width 1, and the whole path beside it (at most)
    rel = next(c for s in st.steps if s.stage == "relations" and s.depth == 1 for c in s.candidates
               if "grew up" in c.label)
    assert rel.kept and rel.auto_kept and "beside the beam" in rel.reason and "names the most" in rel.reason
    # the share the reason gives is the kept path's (two hops), not the best of any length to its end
    two = walked(g, depth=2).best[2][g.find_title("Wenna")][0]
    assert f"({two:.0%} of its words)" in rel.reason
    ent = next(c for s in st.steps if s.stage == "entities" and s.depth == 1 for c in s.candidates
               if c.label == "Bram")
    assert ent.kept and ent.auto_kept and "beside the beam" in ent.reason
    # without it, width 1 keeps one chain, and not this one
    eng0, st0 = searched(CheapPolicy(path_found=0, retrieved=0, path_beam=False))
    assert len(st0.paths) == 1 and "Wenna" not in [eng0.graph.title(p.end) for p in st0.paths]
    assert CheapPolicy(path_beam=True).params()["path_beam"] is True and "path_beam" not in CheapPolicy().params()
    assert CheapPolicy().path_beam is False  # off since blind12's reading (docs/experiment-log.md, nineteenth stop)


def test_a_search_that_does_not_read_the_question_and_the_paper_keep_their_n():
    _, st = searched(CheapPolicy(path_found=0, retrieved=0, path_beam=True), "random")
    assert len(st.paths) == 1 and not any("beside the beam" in c.reason for s in st.steps for c in s.candidates)
    eng = ToGEngine(graph(), config=EngineConfig(width=1, depth=2, relation_pruner="bm25", entity_pruner="bm25"))
    st = asyncio.run(eng.run(QUESTION, seeds=["Orla"]))  # the faithful policy
    assert len(st.paths) == 1


def test_a_person_who_drops_the_whole_path_is_not_overruled():
    pol = CheapPolicy(path_found=0, retrieved=0, path_beam=True)
    eng = ToGEngine(graph(), config=EngineConfig(width=1, depth=2, relation_pruner="bm25", entity_pruner="bm25"),
                    policy=pol)
    state = asyncio.run(eng.start_async(QUESTION, ["Orla"]))
    prop = asyncio.run(eng.propose(state))
    way = next(c for c in prop.step.candidates if "grew up" in c.label)
    assert way.kept
    state = eng.apply(state, prop, prop.auto_choice() - {way.id})
    while not state.done:
        state = eng.apply(state, asyncio.run(eng.propose(state)))
    assert "Wenna" not in [eng.graph.title(p.end) for p in state.paths]


def test_the_step_says_one_more_is_kept_beside_the_beam_and_why():
    from tog_core.app.views import keep_words

    _, st = searched(CheapPolicy(path_found=0, retrieved=0, path_beam=True))
    said = {}
    for step in st.steps:
        if step.depth == 1 and step.stage in ("relations", "entities"):
            auto = {c.id for c in step.candidates if c.auto_kept}
            said[step.stage] = keep_words(step, auto, width=1, relations_kept=2)
    assert "One more relation is kept beside the beam" in said["relations"]
    assert "One more chain is kept beside the beam" in said["entities"] and "names the most" in said["entities"]
    _, st0 = searched(CheapPolicy(path_found=0, retrieved=0, path_beam=False))
    step = next(s for s in st0.steps if s.stage == "entities")
    assert "beside" not in keep_words(step, {c.id for c in step.candidates if c.auto_kept}, width=1, relations_kept=2)


def test_two_relations_beside_the_beam_are_counted_as_two():
    """Two frontier paths may both begin the walk's path (parallel relationships between the same entities): the
    step says how many are kept beside the beam, not "one more"."""
    from dataclasses import replace as _replace

    from tog_core.app.views import keep_words

    _, st = searched(CheapPolicy(path_found=0, retrieved=0, path_beam=True))
    step = next(s for s in st.steps if s.depth == 1 and s.stage == "relations")
    [beside] = [c for c in step.candidates if c.auto_kept and "beside the beam" in c.reason]
    twin = _replace(beside, id=beside.id + "-twin")
    step = _replace(step, candidates=[*step.candidates, twin])
    auto = {c.id for c in step.candidates if c.auto_kept}
    said = keep_words(step, auto, width=1, relations_kept=2)
    assert "2 more relations are kept beside the beam" in said and "One more" not in said
