"""Guidance for a newcomer (#22 item 10): example questions made from the loaded graph, help on the search settings,
departures in words, temperatures only with an LLM, and a clickable "Did you mean" without generic titles."""
from __future__ import annotations

import re

import os

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from builders import write_project
from streamlit.testing.v1 import AppTest

from appkit import APP, ROOT, app, click, texts
from tog_core.app.guide import did_you_mean, example_questions
from tog_core.app.session import K
from tog_core.graphrag.graph import KnowledgeGraph
from tog_core.graphrag.project import open_project
from tog_core.tog.state import DEPARTURES


@pytest.fixture(autouse=True)
def home(app_home):
    return app_home


@pytest.fixture(scope="module")
def demo():
    info = open_project(ROOT / "demo")
    return info, KnowledgeGraph.load(info)


def test_example_questions_are_made_from_the_demo_and_answered_by_it(demo):
    from tog_core.app.runner import run_question
    from tog_core.compose import RunSpec, build_engine

    info, graph = demo
    made = example_questions(graph)
    assert 3 <= len(made) <= 4 and {e.hops for e in made} <= {1, 2} and 1 in {e.hops for e in made}
    hubs = {graph.title(int(i)) for i in graph.degrees.argsort()[::-1][:20]}
    engine = build_engine(RunSpec(model="none"), graph=graph, info=info).engine
    for e in made:
        assert e.question.endswith("?") and graph.find_title(e.answer) is not None
        assert run_question(engine, e.question).answer_entity == e.answer, e  # the graph answers it
    about = [e for e in made if e.answer in hubs or any(h in e.question for h in hubs)]
    assert len(about) >= len(made) - 1  # about the best-connected entities


def test_an_example_asks_for_the_kind_its_answer_names_and_in_the_graphs_language(demo):
    info, graph = demo
    made = {e.answer: e.question for e in example_questions(graph)}
    assert made["Ashwater River"].startswith("Which river flows")  # not "Which place flows"
    fr = KnowledgeGraph.load(open_project(ROOT / "bench/data/fr-atelier"))
    asked = [e.question for e in example_questions(fr)]
    assert asked and all(q.startswith("Qui ") and q.endswith(" ?") for q in asked)  # never "Who est …"
    assert not any(re.search(r"\b\w['’] ", q) for q in asked)  # "d'Émile", never "d' Émile"
    assert any(re.search(r"\b\w['’]\w", q) for q in asked)  # (the project has such an example)
    assert all(fr.entity(fr.find_title(e.answer)).type == "PERSON" for e in example_questions(fr))


def test_no_examples_from_a_graph_whose_relations_are_not_sentences(tmp_path):
    root = write_project(tmp_path / "bare", [("A", "a"), ("B", "b")], [("A", "B", "related")])
    assert example_questions(KnowledgeGraph.load(open_project(root))) == []


def test_did_you_mean_ranks_by_the_questions_words_and_leaves_generic_titles_out(tmp_path):
    names = ["SCROOGE", "EBENEZER SCROOGE", "ROOM", "TOWN", "THE TOWN", "THE END OF IT", "THE STAR", "FRED",
             "FRED'S HOUSE", "TINY TIM", "TIM", "BOB CRATCHIT"] + [f"THE PLACE OF {i}" for i in range(20)]
    root = write_project(tmp_path / "carol", [(n, n.lower()) for n in names],
                         [("SCROOGE", "FRED", "Scrooge is the uncle of Fred."),
                          ("EBENEZER SCROOGE", "TIM", "Ebenezer Scrooge helps Tim."),
                          ("EBENEZER SCROOGE", "FRED", "Ebenezer Scrooge visits Fred.")])
    graph = KnowledgeGraph.load(open_project(root))
    got = did_you_mean(graph, "Who visits Scrooge at the end of the story in the room?", ["SCROOGE"])
    assert got[0] == "EBENEZER SCROOGE" and not {"ROOM", "THE END OF IT", "THE STAR"} & set(got)
    got = did_you_mean(graph, "In which town does Bob Cratchit live?", ["BOB CRATCHIT"])
    assert "TOWN" not in got and "THE TOWN" not in got
    got = did_you_mean(graph, "What did Fred invite Scrooge to?", ["FRED", "SCROOGE"])
    assert got[:2] == ["FRED'S HOUSE", "EBENEZER SCROOGE"] or set(got[:2]) == {"FRED'S HOUSE", "EBENEZER SCROOGE"}


def test_an_empty_ask_page_offers_example_questions_and_one_click_asks():
    at = app(**{K.MODEL: "none"})
    buttons = [b for b in at.button if b.key and b.key.startswith("ask_example_")]
    assert len(buttons) >= 3
    question = buttons[0].label
    at = click(at, question)
    assert not at.exception, at.exception
    t = at.session_state[K.ASK_TRACE].to_dict()
    assert t["question"] == question and t["answer_entity"]
    assert not [b for b in at.button if b.key and b.key.startswith("ask_example_")]  # the answer takes the place


def test_the_sidebar_explains_the_search_and_hides_temperatures_without_an_llm():
    at = AppTest.from_file(APP, default_timeout=90)
    at.session_state[K.MODEL] = "none"
    at.run()
    assert not at.exception, at.exception
    for key in (K.WIDTH, K.DEPTH):
        assert at.sidebar.number_input(key=key).help
    for key in (K.REL_PRUNER, K.ENT_PRUNER):
        assert at.sidebar.selectbox(key=key).help
    assert not at.sidebar.slider  # no LLM: no temperature
    shown = at.sidebar.multiselect(key=K.WITHOUT).options
    assert shown and all(name not in shown for name in DEPARTURES)  # words, not code names
    assert any(DEPARTURES["cumulative_score"][1][1:] in o for o in shown)
    at = AppTest.from_file(APP, default_timeout=90)
    at.session_state[K.MODEL] = "openai/gpt-4.1-mini"
    at.run()
    assert {s.label for s in at.sidebar.slider} == {"Temperature (exploring)", "Temperature (reasoning)"}


def test_did_you_mean_is_a_click_that_asks_again_from_that_entity():
    at = app(**{K.MODEL: "none"})
    at.text_area(key=K.ASK_QUESTION).set_value("Who is the mentor of Ivo?")
    at = click(at, "Ask")
    first = at.session_state[K.ASK_TRACE].to_dict()
    [p] = at.get("button_group")
    assert "Ivo Brask" in [o.content for o in p.proto.options], texts(at)
    p.set_value("Ivo Brask").run()
    assert not at.exception, at.exception
    t = at.session_state[K.ASK_TRACE].to_dict()
    assert t["run_id"] != first["run_id"] and [s["title"] for s in t["seeds"]] == ["Ivo Brask"]


def test_a_two_hop_example_drops_the_kind_its_middle_entity_is_called(tmp_path):
    """"flows through the town of" + "the capital of Vale" reads "flows through the capital of Vale" when the graph
    describes the middle entity as a town, and keeps its words when the description does not say so."""
    def made(saltby: str) -> list[str]:
        root = write_project(tmp_path / saltby.split()[-1], [
            ("Ash River", "The Ash River is a river of Vale."), ("Saltby", saltby), ("Vale", "Vale is an island.")],
            [("Ash River", "Saltby", "Ash River flows through the town of Saltby."),
             ("Saltby", "Vale", "Saltby is the capital of Vale.")])
        return [e.question for e in example_questions(KnowledgeGraph.load(open_project(root))) if e.hops == 2]

    assert made("Saltby is a busy harbour town of Vale.") == ["Which river flows through the capital of Vale?"]
    assert made("Saltby lies by the sea.") == ["Which river flows through the town of the capital of Vale?"]
