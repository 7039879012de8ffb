"""The question reading: one value made once per question (tog_core/reading), recorded in the trace, kept through
resume, read by the LLM-free policy instead of the wording, correctable by a person, and a data set's gold reading."""
from __future__ import annotations

import asyncio
import json

import pytest

from builders import kin_graph, typed_graph
from tog_core.policy.cheap import CheapPolicy
from tog_core.reading import QuestionReading
from tog_core.reading import readers
from tog_core.tog.engine import ToGEngine
from tog_core.tog.state import EngineConfig
from tog_core.tog.trace import Trace

CHEAP = EngineConfig(relation_pruner="bm25", entity_pruner="bm25", depth=3)


def test_the_rule_reader_reads_each_part_of_an_english_question():
    q = "Which town is the birthplace of Ann Lee 's husband ?"
    r = readers.read(q, ["Ann Lee"])
    assert r.by == "rules" and r.language == "en" and r.topics == ("Ann Lee",)
    [(a, b)] = r.spans
    assert q[a:b] == "Ann Lee"
    assert r.asked == ("town",) and r.asked_named
    assert r.phrases == ("husband", "birthplace")  # walking order: the possessive after the topic first
    assert r.hops == 2 and r.want["husband"] == 1 and "ann" not in r.words  # the topic's words are not wanted


def test_the_rule_reader_reads_french_and_a_topic_it_cannot_find():
    r = readers.read("Qui a fondé l'Atelier Garnier ?", ["Atelier Garnier", "Absent"])
    assert r.language == "fr" and r.spans[1] == (-1, -1) and r.hops == 1 and not r.asked_named


def test_the_readings_bands_need_two_hops_and_take_the_phrases_only_one_per_hop():
    r = QuestionReading(question="q", phrases=("a", "b", "c"), near="n", far="f")
    assert r.bands(1) == []  # one hop: nothing to split
    assert r.bands(2) == ["n", "f"]  # three phrases for two hops: the near and far words
    assert r.bands(3) == ["a", "b", "c"]  # one phrase per hop: each hop reads its own
    assert r.bands(4) == ["n", "n", "n", "f"]  # fewer phrases than hops: the near and far words again
    assert QuestionReading(question="q", phrases=("a", "b")).bands(2) == ["a", "b"]  # phrases need no split
    assert QuestionReading(question="q").bands(2) == []  # not split, no phrases


def test_the_gold_reader_takes_the_data_sets_hops_type_and_relation_path():
    base = readers.read("frances_polidori 's offspring 's occupation ?", ["frances_polidori"])
    g = readers.gold({"hops": 2, "relation_path": ["children", "place_of_death"], "answer_type": "PERSON"}, base)
    assert g.by == "gold" and g.hops == 2 and g.phrases == ("children", "place of death")
    assert g.asked == ("person",) and g.asked_named and g.words == base.words
    metaqa = readers.gold({"hops": 1, "relation_path": ["starred_actors (inverse)"]}, base)
    assert metaqa.phrases == ("starred actors",) and metaqa.asked == base.asked  # no answer type: the rules'
    assert readers.gold({}, base).hops == base.hops  # nothing given: the rule reading with by=gold


def test_a_person_may_correct_the_hops_and_the_asked_type_only():
    r = readers.read("Who was Scrooge's business partner?", ["SCROOGE"])
    e = r.edit(hops=2, asked=["place"])
    assert (e.hops, e.asked, e.asked_named, e.edited) == (2, ("place",), True, ("hops", "asked"))
    assert e.edit(hops=3).edited == ("hops", "asked")
    with pytest.raises(ValueError, match="not 'words'"):
        r.edit(words={})
    with pytest.raises(ValueError, match="at least 1"):
        r.edit(hops=0)


def test_a_reading_round_trips_through_json_and_reads_an_older_or_broken_record():
    r = readers.read("Which town is the birthplace of Ann Lee 's husband ?", ["Ann Lee"]).edit(hops=3)
    assert QuestionReading.from_dict(json.loads(json.dumps(r.to_dict()))) == r
    old = QuestionReading.from_dict({"question": "q", "hops": "2", "words": "not a dict"})
    assert old.hops == 2 and old.words == {} and old.by == "rules"
    with pytest.raises(ValueError, match="question"):
        QuestionReading.from_dict({"hops": 2})


def test_a_run_records_its_reading_and_a_resumed_run_keeps_it():
    g = kin_graph([("Sam", "children", "Gus"), ("Gus", "place_of_birth", "Oslo")])
    eng = ToGEngine(g, config=CHEAP, policy=CheapPolicy())
    st = asyncio.run(eng.run("the place of birth of Sam 's son ?", seeds=["Sam"]))
    t = eng.trace(st)
    assert t.reading is not None and t.reading["hops"] == 2 and t.reading["by"] == "rules"
    back = Trace.from_json(t.to_json())
    assert eng.restore(back).reading == st.reading
    # a trace written before readings is read again by the rules when it is continued
    older = Trace.from_dict({k: v for k, v in t.to_dict().items() if k != "reading"})
    assert older.reading is None and eng.restore(older).reading == st.reading
    # a reading of another question is not taken
    other = Trace.from_dict({**t.to_dict(), "reading": {**t.reading, "question": "something else"}})
    assert eng.restore(other).reading == st.reading


def test_the_search_follows_a_corrected_number_of_hops_not_the_wording():
    g = kin_graph([("Sam", "children", "Gus"), ("Gus", "place_of_birth", "Oslo")])
    policy = CheapPolicy()
    eng = ToGEngine(g, config=CHEAP, policy=policy)
    q = "the place of birth of Sam 's son ?"
    st = eng.start(q, ["Sam"])
    assert policy.planned_depth(eng, st) == 2
    one = eng.start(q, ["Sam"], reading=st.reading.edit(hops=1))
    assert one.reading.edited == ("hops",) and policy.planned_depth(eng, one) == 1
    done = asyncio.run(eng.run(q, state=one))
    assert done.depth == 1


def test_the_judge_reads_the_asked_type_from_the_reading():
    g = typed_graph([("Seedfilm", "starred_actors", "Kim"), ("Aster", "starred_actors", "Kim"),
                     ("Aster", "in_language", "French")])
    q = "the films that share actors with Seedfilm were in which languages"
    eng = ToGEngine(g, config=CHEAP, policy=CheapPolicy())
    gated = asyncio.run(eng.run(q, seeds=["Seedfilm"]))
    assert gated.depth == 3  # no chain ends in a language at two hops: one more
    st = eng.start(q, ["Seedfilm"])
    told = asyncio.run(eng.run(q, state=st.with_(reading=st.reading.edit(asked=[]))))
    assert told.depth == 2 and "type" not in [s.verdict["by"] for s in told.steps if s.stage == "evaluate"]
