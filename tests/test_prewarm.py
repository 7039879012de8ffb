"""policy/prewarm.py: the background warm embeds what a question reads at its first hop, with the very texts the
search builds, so a new question embeds only its own vector and its longer chains."""
from __future__ import annotations

import asyncio
import threading

import numpy as np
import pytest

from builders import typed_graph
from prewarmkit import Recorder
from tog_core.compose import RunSpec, build_engine
from tog_core.graphrag.open import open_graph
from tog_core.policy import depths, prewarm, ranking

QUESTIONS = ["Which ship was captained by the mentor of Ivo Brask?",  # demo/questions.jsonl
             "Who founded the Lanternwright Guild?",
             "Where did the inventor of the Tide Clock study?"]  # not in the demo's question file


@pytest.fixture(scope="module")
def demo():
    return open_graph("demo")


def ask(demo, question: str):
    info, graph = demo
    engine = build_engine(RunSpec(model="none"), graph=graph, info=info).engine
    state = asyncio.run(depths.run(engine, question))
    return engine.answer_candidates(state)


def first_hop(kind_text: tuple[str, str]) -> bool:
    """A passage no chain of two hops or more wrote (those join their hops with " ; ")."""
    kind, text = kind_text
    return kind == "passage" and " ; " not in text


@pytest.mark.parametrize("question", QUESTIONS)
def test_after_the_warm_a_question_embeds_only_its_own_vector_and_its_longer_chains(demo, tog_home, monkeypatch,
                                                                                   question):
    cold = Recorder()
    monkeypatch.setattr(ranking, "ranking_embedder", lambda: cold)
    cands = ask(demo, question)
    assert cands and any(first_hop(x) for x in cold.new)  # without the warm, the question embeds its first hop

    warmed = Recorder()
    monkeypatch.setattr(ranking, "ranking_embedder", lambda: warmed)
    done = asyncio.run(prewarm.warm_project(demo[1]))
    assert done >= len(warmed.new) > 1000
    warmed.new.clear()
    again = ask(demo, question)
    assert [c.entity for c in again] == [c.entity for c in cands]  # the warm changes what is cached, not the answer
    assert [x for x in warmed.new if first_hop(x)] == []
    assert ("query", question.rstrip("?")) in warmed.new or ("query", question) in warmed.new


def test_the_warm_stops_near_its_limit_and_reports_its_progress(demo, tog_home, monkeypatch):
    rec = Recorder()
    monkeypatch.setattr(ranking, "ranking_embedder", lambda: rec)
    monkeypatch.setattr(prewarm.agreement, "warm", _nothing)
    seen: list[int] = []
    done = asyncio.run(prewarm.warm_project(demo[1], limit=200, progress=seen.append))
    hub = max(len(prewarm.first_hop_texts(demo[1], i)) for i in range(demo[1].n_entities))
    assert 200 <= done < 200 + hub and 0.8 * done < len(rec.new) <= done  # an entity type is read by many
    assert seen == sorted(seen) and seen[-1] == done


def test_the_first_hop_texts_of_an_entity_are_each_once_and_name_its_links(demo):
    graph = demo[1]
    idx = int(np.argmax(graph.degrees))
    texts = prewarm.first_hop_texts(graph, idx)
    assert len(texts) == len(set(texts))
    title = graph.title(idx)
    rels, others, _ = graph.neighbors(idx)
    for r, o in zip(rels.tolist(), others.tolist()):  # the one-hop chain leaving it by each link
        assert f"{title} {graph.labels([r])[0][:200]} {graph.title(o)}" in texts


def test_the_warm_does_nothing_on_a_typed_graph_or_without_e5(demo, tog_home, monkeypatch):
    rec = Recorder()
    monkeypatch.setattr(ranking, "ranking_embedder", lambda: rec)
    typed = typed_graph([("Jaws", "directed_by", "Steven Spielberg")])
    assert asyncio.run(prewarm.warm_project(typed)) == 0 and rec.new == []
    monkeypatch.setattr(ranking, "ranking_embedder", lambda: None)
    assert asyncio.run(prewarm.warm_project(demo[1])) == 0


@pytest.mark.parametrize("setting, warmed", [(None, True), ("0", False)])
def test_the_app_warms_an_opened_project_unless_told_not_to(demo, tog_home, monkeypatch, setting, warmed):
    from explorer import projects
    from tog_core.policy import retrieval

    got = []

    async def warm(graph, **_k):
        got.append(graph)
        return 0

    monkeypatch.setattr(prewarm, "warm_project", warm)
    monkeypatch.setattr(retrieval, "index_of", lambda graph: None)
    if setting is None:
        monkeypatch.delenv("TOG_WARM", raising=False)  # tests/conftest.py sets 0 for the other tests
    else:
        monkeypatch.setenv("TOG_WARM", setting)
    projects._warm_project(demo[1])
    for t in threading.enumerate():
        if t.name == "tog-warm-project":
            t.join(30)
    assert got == ([demo[1]] if warmed else [])


async def _nothing(_graph, **_kw) -> int:
    return 0
