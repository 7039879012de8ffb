"""The second search read by the confidence (tog_core/policy/agreement.py): where it is made and where not, that it
is the search it claims to be, what the confidence and the trace make of it, resume, a failure, and the warm."""
from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from dataclasses import replace

import numpy as np
import pytest

from builders import typed_graph
from tog_core.compose import RunSpec, build_engine
from tog_core.graphrag.open import open_graph
from tog_core.graphrag.pg_common import StoreError
from tog_core.policy import agreement, depths, ranking
from tog_core.tog.engine import ToGEngine
from tog_core.tog.state import Callbacks, SecondSearch
from tog_core.tog.trace import Trace

TYPED = typed_graph([("Jaws", "directed_by", "Steven Spielberg"), ("Duel", "directed_by", "Steven Spielberg")])
QUESTION = "Which ship was captained by the mentor of Ivo Brask?"  # demo/questions.jsonl


@pytest.fixture(scope="module")
def demo():
    return open_graph("demo")


def run(engine: ToGEngine, question: str = QUESTION, **kw):
    return asyncio.run(depths.run(engine, question, **kw))


def free_engine(demo, **spec) -> ToGEngine:
    info, graph = demo
    return build_engine(RunSpec(model="none", **spec), graph=graph, info=info).engine


@pytest.mark.parametrize("question", [QUESTION, "Who founded the Lanternwright Guild?"])
def test_the_second_search_is_a_search_with_its_relations_read_by_e5(demo, tog_home, question):
    eng = free_engine(demo)
    # the app ranks every state it saves: the second search must not be handed that ranking from the policy's cache
    st = run(eng, question, callbacks=Callbacks(on_state=eng.answer_candidates))
    assert st.second is not None and st.second.pruner == "embedding" and st.second.probs
    # the same question searched as `--pruner embedding --entity-pruner bm25` does, from the same topic entities
    other = free_engine(demo, relation_pruner="embedding", entity_pruner="bm25")
    other.before_answer = None
    theirs = other.answer_candidates(run(other, question, seeds=list(st.seeds)))
    assert [c.entity for c in theirs] == [e for e, _ in st.second.probs]
    assert [c.score for c in theirs] == pytest.approx([p for _, p in st.second.probs])


def test_the_confidence_reads_the_second_search_and_the_answer_list_does_not(demo, tog_home):
    eng = free_engine(demo)
    st = run(eng)
    model = ranking.shipped_model(False)
    assert model is not None and model.agree is not None and "top_vp" in model.agree.features
    with_it, without = eng.answer_candidates(st), eng.answer_candidates(st.with_(second=None))
    assert [c.entity for c in with_it] == [c.entity for c in without]  # the ranking is the product's
    assert with_it[0].low == model.agree_low and without[0].low == model.low
    top = with_it[0].entity
    # the confidence moves with the second search's probability for the first answer, and only through it
    sure = [eng.answer_candidates(st.with_(second=SecondSearch(pruner="embedding", probs=((top, p),))))[0].confidence
            for p in (0.0, 0.5, 1.0)]
    assert sure[0] < sure[1] < sure[2]
    assert eng.answer_candidates(st.with_(second=SecondSearch(pruner="embedding", probs=())))[0].confidence == sure[0]
    t = eng.trace(st)
    assert t.second_search is not None and t.second_search["pruner"] == "embedding"
    assert t.second_search["probability"] == pytest.approx(st.second.prob(top), abs=1e-4)
    assert t.second_search["place"] == st.second.place(top) and t.confidence == with_it[0].confidence
    assert "a second search reading the relations with e5" in t.candidates[0]["why"]
    assert "second search" not in t.candidates[1]["why"]


def test_a_saved_run_keeps_its_second_search_through_resume(demo, tog_home):
    eng = free_engine(demo)
    st = run(eng)
    back = eng.restore(Trace.from_json(eng.trace(st).to_json()))
    assert back.second is not None and back.second.probs == st.second.probs
    assert eng.answer_candidates(back)[0].confidence == eng.answer_candidates(st)[0].confidence
    # a second search is made once per run: answering again does not search again
    calls = []
    eng.before_answer = lambda e, s: (calls.append(s.second), agreement.second_search(e, s))[1]
    again = asyncio.run(eng.answer(back.with_(stage="answer", answer="")))
    assert again.second == back.second and calls == [back.second]


class FailedStore:
    """A graph whose store failed a read a moment ago (PgGraphStore.last_failure)."""

    def __init__(self, graph):
        self.graph, self.last_failure = graph, time.monotonic()

    def __getattr__(self, name):
        return getattr(self.graph, name)


@pytest.mark.parametrize("how, reason", [
    ("llm", "an LLM takes part"), ("pruner", "pruned by another scorer than bm25"), ("off", "off"),
    ("forced", "no answer of the search's own"), ("stopped", "a person steered the search"),
    ("dropped", "a person steered the search"), ("error", "the search hit an error"),
    ("store", "the graph's store failed a moment ago")])
def test_no_second_search_where_its_confidence_was_not_fitted(demo, tog_home, how, reason):
    from tog_core.tog.state import FORCED_ANSWER

    eng = free_engine(demo, **({"relation_pruner": "embedding"} if how == "pruner" else {}))
    if how == "off":
        eng.policy = replace(eng.policy, second_search=False)
    if how == "store":
        eng.graph = FailedStore(eng.graph)
    eng.before_answer = None  # the search alone, to the answer stage
    st = asyncio.run(depths.start(eng, QUESTION))
    if how == "dropped":  # the person unticks the relation the search kept first, then lets it go on
        prop = asyncio.run(eng.propose(st))
        st = eng.apply(st, prop, prop.auto_choice() - {sorted(prop.auto_choice())[0]})
        assert st.steps[-1].overrides
    st = run(eng, state=st) if how != "stopped" else eng.stop(run(eng, state=st))
    assert st.second is None and any(p.hops for p in st.paths)
    if how == "forced":
        st = st.with_(extra_usage=({"fallback": FORCED_ANSWER, "stage": "answer"},))
    if how == "error":
        st = st.with_(stop_reason="error", error="the store went away")
    if how == "llm":
        eng.llm = object()  # why_not reads only that an LLM takes part
    assert agreement.why_not(eng, st) == reason
    assert asyncio.run(agreement.second_search(eng, st)).second is None


def test_no_second_search_on_a_typed_graph(tog_home):
    eng = build_engine(RunSpec(model="none", relation_pruner="bm25"), graph=TYPED, info=None).engine
    st = asyncio.run(eng.run("who directed Jaws", seeds=["Jaws"]))
    assert st.second is None and agreement.why_not(eng, st) == "a typed graph"
    assert eng.trace(st).second_search is None


@pytest.mark.parametrize("error", [StoreError("the store went away"), sqlite3.OperationalError("database is locked")])
def test_a_failed_second_search_is_a_named_fallback_and_the_confidence_reads_without_it(demo, tog_home, monkeypatch,
                                                                                         error):
    eng = free_engine(demo)
    st = asyncio.run(depths.start(eng, QUESTION))

    async def gone(*_a, **_k):
        raise error

    real_start = depths.start
    monkeypatch.setattr(depths, "start", gone)
    done = asyncio.run(eng.run(QUESTION, state=asyncio.run(depths.settle(eng, st))))
    monkeypatch.setattr(depths, "start", real_start)
    assert done.second is None and done.answer
    t = eng.trace(done)
    assert [f["name"] for f in t.stats["other_fallbacks"]] == [agreement.FAILED]
    assert str(error) in t.stats["other_fallbacks"][0]["detail"]
    assert t.low_confidence == ranking.shipped_model(False).low and t.second_search is None


def test_the_warm_fills_the_cache_the_second_search_reads(demo, tog_home, monkeypatch):
    _, graph = demo
    e5 = ranking.ranking_embedder()
    assert 40 <= asyncio.run(agreement.warm(graph, limit=40)) < 120  # stops at the limit
    # what the relation stage of the second search scores at a warmed entity is read from the cache
    eng = ToGEngine(graph, embedder=e5, config=replace(free_engine(demo).config, relation_pruner="embedding"),
                    policy=free_engine(demo).policy)
    made: list[tuple[str, str]] = []
    inner = e5.inner
    real = inner.embed
    me = threading.get_ident()  # an app test's background warm may be embedding too

    def spy(texts, kind="passage"):
        if threading.get_ident() == me:
            made.extend((kind, t) for t in texts)
        return real(texts, kind=kind)

    monkeypatch.setattr(inner, "embed", spy)
    st = eng.start(QUESTION, [graph.entity(0).id])
    prop = asyncio.run(eng.propose(st))
    assert len(prop.payload) > 3 and made == [("query", QUESTION.rstrip("?"))]  # only the question was embedded
    assert np.isfinite([c.score for c in prop.step.candidates]).all()


def test_the_warm_does_nothing_on_a_typed_graph(tog_home):
    assert asyncio.run(agreement.warm(TYPED)) == 0


def test_the_app_says_what_the_second_search_found_and_escapes_its_answer(demo, tog_home):
    from tog_core.app import views as V

    eng = free_engine(demo)
    t = eng.trace(run(eng))
    line = V.confidence_line(V.answer_view(t))
    assert f"confidence {t.confidence:.2f}" in line and "a second search reading the relations with e5" in line
    t.second_search = {"pruner": "embedding", "answer": "[x](http://evil)", "probability": 0.0, "place": None}
    assert V.second_view(t.second_search).endswith("does not reach it (it answers [x](http://evil))")
    assert "\\[x\\]" in V.md_text(V.confidence_line(V.answer_view(t)))  # the caption escapes it (explorer/blocks.py)
    t.second_search = {"pruner": "embedding", "answer": "Mara", "probability": 0.1234, "place": 2}
    assert V.second_view(t.second_search).endswith("puts it second (its probability 0.12; it answers Mara)")
    t.second_search = None
    assert "second search" not in V.confidence_line(V.answer_view(t))
