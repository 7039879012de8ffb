"""ToG's Algorithm 1 run by hand: the paper's settings (every departure off, the faithful policy), a graph of ten
entities and a scripted LLM whose every score is written below, so each frontier can be checked on paper.

    Kim <-starred_actors- Aster, Elm, Birch          (Elm has no other edge: a dead end)
    Aster -directed_by-> Dee, -has_genre-> Drama, -in_language-> French
    Birch -directed_by-> Eve, -written_by-> Fox <-written_by- Dune

Question "Who directed the films starring Kim?", topic Kim, beam width N = 2, maximum depth D = 3.
"""
from __future__ import annotations

import asyncio
import json
import re

import pyarrow as pa

from tog_core.graphrag.graph import KnowledgeGraph
from tog_core.testing.scripted import ScriptedLLM
from tog_core.tog.engine import ToGEngine
from tog_core.tog.state import DEPARTURES, EngineConfig
from tog_core.tog.stages import beam_cut

EDGES = [("Aster", "starred_actors", "Kim"), ("Elm", "starred_actors", "Kim"), ("Birch", "starred_actors", "Kim"),
         ("Aster", "directed_by", "Dee"), ("Aster", "has_genre", "Drama"), ("Aster", "in_language", "French"),
         ("Birch", "directed_by", "Eve"), ("Birch", "written_by", "Fox"), ("Dune", "written_by", "Fox")]
KINDS = {"Kim": "person", "Dee": "person", "Eve": "person", "Fox": "person", "Drama": "genre", "French": "language"}
QUESTION = "Who directed the films starring Kim?"

# every score the LLM gives, by the candidate line it reads
SCORES = {
    "starred actors": 0.9,  # depth 1, relations of Kim: one group (three incoming edges)
    "Aster": 0.8, "Elm": 0.6, "Birch": 0.6,  # depth 1, entities behind "starred actors": Elm and Birch tie
    "directed by": 0.8, "has genre": 0.2, "in language": 0.1,  # depth 2, relations of Aster
    "Aster — directed by — Dee": 0.9, "Aster — has genre — Drama": 0.6,  # depth 2, Aster's two kept relations
}
VERDICTS = [False, True]  # the judge: not yet at depth 1, enough at depth 2


def graph() -> KnowledgeGraph:
    names = list(dict.fromkeys(n for s, _, t in EDGES for n in (s, t)))
    ent = pa.table({"id": [f"id-{n}" for n in names], "title": names,
                    "type": [KINDS.get(n, "movie") for n in names], "description": [""] * len(names)})
    rel = pa.table({"id": [f"r{k}" for k in range(len(EDGES))], "source": [s for s, _, _ in EDGES],
                    "target": [t for _, _, t in EDGES], "relation": [r for _, r, _ in EDGES],
                    "description": [""] * len(EDGES),
                    "text_unit_ids": pa.array([[] for _ in EDGES], pa.list_(pa.string()))})
    return KnowledgeGraph.from_tables(ent, rel, None)


def reply(messages: list[dict], verdicts: list[bool]) -> str:
    text = messages[-1]["content"]
    if "enough to answer" in text:
        return json.dumps({"sufficient": verdicts.pop(0), "reason": "scripted"})
    if "Answer the question" in text:
        return "Dee directed Aster [1]."
    lines = re.findall(r"^\[(\d+)\] (.*)$", text, re.MULTILINE)
    return json.dumps({"scores": [{"i": int(i), "score": SCORES[c], "reason": "scripted"} for i, c in lines]})


def frontier(step, kept=True):
    return [(c.label, c.score) for c in step.candidates if c.kept == kept]


def test_algorithm_1_by_hand():
    verdicts = list(VERDICTS)
    llm = ScriptedLLM(lambda messages: reply(messages, verdicts))
    g = graph()
    eng = ToGEngine(g, llm=llm, config=EngineConfig.paper(width=2, depth=3))
    assert eng.config.departures() == [] and eng.policy.name == "faithful"
    st = asyncio.run(eng.run(QUESTION, seeds=["Kim"]))
    rel1, ent1, eval1, rel2, ent2, eval2 = st.steps
    assert [(s.stage, s.depth) for s in st.steps] == [("relations", 1), ("entities", 1), ("evaluate", 1),
                                                      ("relations", 2), ("entities", 2), ("evaluate", 2)]
    # depth 1. Relation exploration: Kim's edges make one group; pruning keeps the top N = 2 (all of one)
    assert frontier(rel1) == [("starred actors", 0.9)]
    # entity exploration: the three films; pruning scores relation x entity (the last hop's score, not a
    # product over the chain) and keeps the top 2: Aster 0.72, then Elm and Birch tie at 0.54 and Elm, listed
    # first (its edge comes first), takes the second slot
    assert frontier(ent1) == [("Aster", 0.72), ("Elm", 0.54)] and frontier(ent1, kept=False) == [("Birch", 0.54)]
    # reasoning: the judge reads both chains and says not yet
    assert eval1.verdict["by"] == "llm" and not eval1.verdict["sufficient"]
    judged = llm.calls[2]["messages"][-1]["content"]  # calls: relations, entities, judge
    assert "[1] Kim —(starred actors)← Aster" in judged and "[2] Kim —(starred actors)← Elm" in judged
    # depth 2. Relation exploration: Elm is a dead end (its only edge is the one the chain came by, never walked
    # back); Aster offers three relations (the edge back to Kim is not offered) and pruning keeps two of them
    assert "Elm: dead end" in rel2.note
    assert frontier(rel2) == [("directed by", 0.8), ("has genre", 0.2)]
    assert frontier(rel2, kept=False) == [("in language", 0.1)]
    # entity exploration: one call for Aster's two kept relations; 0.8 x 0.9 and 0.2 x 0.6
    assert [(c.label, c.score, c.kept) for c in ent2.candidates] == [("Dee", 0.72, True), ("Drama", 0.12, True)]
    # reasoning: enough; the answer is written from the chains, the best first
    assert eval2.verdict["sufficient"] and st.stop_reason == "sufficient" and st.depth == 2
    assert [[g.title(p.start)] + [g.title(h.dst) for h in p.hops] for p in eng.best_paths(st)] == [
        ["Kim", "Aster", "Dee"], ["Kim", "Aster", "Drama"]]
    assert st.answer == "Dee directed Aster [1]." and st.answer_by == "llm"
    # the call budget of the paper: per depth one relation call and one entity call per frontier entity with
    # candidates, one judge call per depth, one answer
    assert len(llm.calls) == 3 + 3 + 1
    assert "[1] Kim —(starred actors)← Aster —(directed by)→ Dee" in llm.calls[-1]["messages"][-1]["content"]


def test_the_beam_cut_keeps_the_best_n_ties_by_position_and_with_reach_one_per_entity():
    assert beam_cut([(-0.5,), (-0.9,), (-0.5,), (-0.1,)], 2) == {1, 0}  # 0.9, then the first of the two 0.5s
    assert beam_cut([(-0.5,), (-0.9,), (-0.5,)], None) == {0, 1, 2}  # no width: all
    assert beam_cut([(-0.5, -0.2), (-0.5, -0.3)], 1) == {1}  # the second key breaks the tie before the position
    # two routes to entity 7: the second is skipped and the next entity takes the slot
    assert beam_cut([(-0.9,), (-0.8,), (-0.1,)], 2, reach=[7, 7, 8]) == {0, 2}
    assert beam_cut([(-0.9,), (-0.8,), (-0.1,)], 2) == {0, 1}


def test_a_default_run_lists_every_departure_and_the_paper_none():
    assert len(DEPARTURES) >= 11
    assert EngineConfig().departures() == list(DEPARTURES)
    assert EngineConfig.paper().departures() == []
    assert EngineConfig().without(["distinct_entities"]).departures() == [d for d in DEPARTURES
                                                                          if d != "distinct_entities"]


def test_best_first_orders_by_value_then_position():
    from tog_core.tog.groups import best_first

    values = [0.5, 1.0, 0.5, 0.0, 1.0, -0.0]
    assert best_first(values) == sorted(range(len(values)), key=lambda k: (-values[k], k)) == [1, 4, 0, 2, 3, 5]
    assert best_first([]) == []
