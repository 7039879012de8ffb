""""Back to depth" (tog_core/app/runner.py explore_back / start_ticks) on the hand-checkable graph of test_engine: at
width 1 the search keeps Acme -> Alice at depth 1 (the relations Alice founded Acme and Acme is located in Berlin are
ticked, Bob works at Acme is not), then judges whether to go on. A branch starts each step from the person's earlier
ticks only while it is the same step on the same chains."""
from __future__ import annotations

import pytest
from searchkit import bm25_engine

from tog_core.app.runner import explore_apply, explore_back, explore_propose, explore_start
from tog_core.app.session import Settings

Q = "Where was the founder of Acme born?"


pytestmark = pytest.mark.usefixtures("tog_home")


@pytest.fixture()
def judged():
    """(engine, a run where the person answered at depth 1 though the automatic verdict was "continue")."""
    eng = bm25_engine(width=1, depth=3)
    ex = explore_start(eng, Settings(), Q, ["Acme"])
    explore_apply(eng, explore_propose(eng, ex), None, None)  # relations as proposed
    explore_apply(eng, explore_propose(eng, ex), None, None)  # entities: Alice
    assert ex.proposal is None and explore_propose(eng, ex).proposal.auto_choice() == {"continue"}
    explore_apply(eng, ex, {"sufficient"}, None)  # the person: the chain to Alice is enough
    assert ex.state.done
    return eng, ex


def _ids(prop, *labels):
    return {c.id for c in prop.step.candidates if c.label in labels}


def test_the_same_steps_on_the_same_chains_start_from_the_persons_earlier_ticks(judged):
    eng, ex = judged
    new = explore_back(eng, ex, 1, None)
    for stage in ("relations", "entities"):
        explore_propose(eng, new)
        assert new.proposal.step.stage == stage and new.start_ticks()[1] == "earlier"
        explore_apply(eng, new, new.start_ticks()[0], None)
    explore_propose(eng, new)
    assert new.start_ticks() == ({"sufficient"}, "earlier")  # the person's verdict, on the chain they judged


def test_a_verdict_is_not_brought_back_onto_chains_the_person_never_judged(judged):
    """A reviewer went back to depth 1 and ticked Bob's relation instead: the evaluate step (always "sufficient" and
    "continue") still came back "sufficient" from the old branch, so one Continue ended the search on Bob's chain."""
    eng, ex = judged
    new = explore_back(eng, ex, 1, None)
    prop = explore_propose(eng, new).proposal
    explore_apply(eng, new, _ids(prop, "Bob works at Acme"), None)  # other relations than before
    explore_propose(eng, new)
    assert new.proposal.step.stage == "entities" and new.start_ticks()[1] == "changed"
    explore_apply(eng, new, None, None)
    explore_propose(eng, new)
    assert new.proposal.step.stage == "evaluate"
    assert new.start_ticks() == ({"continue"}, "changed")  # the automatic verdict, said to differ from the old run


def test_an_edit_at_a_step_offered_as_before_stops_the_earlier_ticks_below_it(judged):
    """The person keeps only Alice's relation (Berlin's dropped): the search reaches the same chain to Alice, but the
    person changed a choice the old verdict was made after, so the verdict starts from the automatic one."""
    eng, ex = judged
    new = explore_back(eng, ex, 1, None)
    prop = explore_propose(eng, new).proposal
    assert new.start_ticks()[1] == "earlier"
    explore_apply(eng, new, _ids(prop, "Alice founded Acme"), None)
    assert new.diverged
    explore_apply(eng, explore_propose(eng, new), None, None)  # entities: Alice, as on the old branch
    assert [p.end for p in new.state.paths] == [p.end for p in ex.states[2].paths]
    explore_propose(eng, new)
    assert new.start_ticks() == ({"continue"}, "changed")


def test_an_evaluate_step_on_other_chains_is_not_the_same_step(judged):
    """Even with every choice above it the same, a verdict is only brought back onto the chains it was given on."""
    eng, ex = judged
    new = explore_back(eng, ex, 1, None)
    key = (1, "evaluate")
    offered, kept, _ = new.earlier[key]
    new.earlier[key] = (offered, kept, frozenset())  # as if the old branch's step had judged other chains
    for _ in range(2):
        explore_apply(eng, explore_propose(eng, new), new.start_ticks()[0], None)
    explore_propose(eng, new)
    assert new.start_ticks() == ({"continue"}, "changed")
