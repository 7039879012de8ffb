"""One row per rule of bench/rule_table.py (#20 item 7): the input a rule acts on, what is read with the rule on and
what with it off. A wording rule (scoring/rules.py) is switched off with `rules.switched_off`; a switch of the LLM-free
policy by building CheapPolicy with it False. Switching any rule off fails its row; the rows cover every rule."""
from __future__ import annotations

import asyncio
import functools
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from builders import free_graph, kin_graph, typed_graph
from bench_scripts import _rule_table
from tog_core.policy import depths
from tog_core.policy.cheap import CheapPolicy
from tog_core.reading.readers import read
from tog_core.scoring import rules
from tog_core.scoring.question import type_matches
from tog_core.tog.engine import ToGEngine
from tog_core.tog.state import EngineConfig, RelChoice

ROOT = Path(__file__).resolve().parents[1]
Read = Callable[[str, list[str], CheapPolicy], Any]  # (question, topics, policy) -> what the row compares


# ---------------------------------------------------------------- what a row reads
def reading(*fields: str) -> Read:
    """Fields of the rule reader's QuestionReading (one field: its value; several: a tuple)."""
    def get(q: str, topics: list[str], _: CheapPolicy) -> Any:
        r = read(q, topics)
        values = tuple(getattr(r, f) for f in fields)
        return values if len(values) > 1 else values[0]
    return get


def near_far(q: str, topics: list[str], _: CheapPolicy) -> tuple[str, str]:
    r = read(q, topics)
    return r.near, r.far


def bands(hops: int) -> Read:
    return lambda q, topics, _: read(q, topics).bands(hops)


def fits(entity_type: str) -> Read:
    """Whether an entity type fits what the reading says the question asks for."""
    return lambda q, topics, _: type_matches(list(read(q, topics).asked), entity_type)


PHRASED = kin_graph([("Sam", "children", "Gus"), ("Gus", "place_of_birth", "Oslo")])  # names "place of birth"


def hops_on_a_typed_graph(q: str, topics: list[str], _: CheapPolicy) -> int:
    """The hops read with a typed graph's relation names of several words (readers.relation_names)."""
    return read(q, topics, graph=PHRASED).hops


FILMS = typed_graph([("Magnolia", "written_by", "Paul"), ("Magnolia", "directed_by", "Ruth")])
LANGUAGES = typed_graph([("Seedfilm", "starred_actors", "Kim"), ("Aster", "starred_actors", "Kim"),
                         ("Aster", "in_language", "French")])
FREE = free_graph([("Ann", "Bob", "Ann married Bob"), ("Bob", "Castle", "Bob lives at the castle")],
                  about={"Bob": "Bob is Ann's husband. He farms."})


def _engine(graph: Any, policy: CheapPolicy, **cfg: Any) -> ToGEngine:
    return ToGEngine(graph, config=EngineConfig(relation_pruner="bm25", entity_pruner="bm25", **cfg), policy=policy)


# the smallest function each policy switch acts on, named in its row's comment
def first_hop_focus(q: str, topics: list[str], policy: CheapPolicy) -> str:
    eng = _engine(FILMS, policy, depth=2, exact_depth=True)
    return policy.relation_query(eng, eng.start(q, topics), 0)[0]


def looks_ahead(q: str, topics: list[str], policy: CheapPolicy) -> bool:
    eng = _engine(FILMS, policy, depth=2, exact_depth=True)
    return policy.looks_ahead(eng, eng.start(q, topics))


def relation_text(label: str, _: list[str], policy: CheapPolicy) -> str:
    eng = _engine(FILMS, policy, depth=2)
    return policy.relation_text(eng, label, FILMS.labels(range(FILMS.n_relationships)).index(label))


def planned_depth(q: str, topics: list[str], policy: CheapPolicy) -> int:
    eng = _engine(FILMS, policy, depth=3)
    return policy.planned_depth(eng, eng.start(q, topics))


def verdict_at_depth_2(q: str, topics: list[str], policy: CheapPolicy) -> str:
    """How the judge decides once the chains are two hops long (their ends are films)."""
    eng = _engine(LANGUAGES, policy, depth=3)
    st = eng.start(q, topics)
    while not (st.stage == "evaluate" and st.depth == 2):
        st = eng.apply(st, asyncio.run(eng.propose(st)))
    return policy.judge(eng, st)["by"]


def evidence_of_bob(q: str, topics: list[str], policy: CheapPolicy) -> list[str]:
    eng = _engine(FREE, policy, depth=3)
    bob = RelChoice(path=0, key="p0|>|Ann married Bob|0", ridxs=(0,), others=(FREE.find("Bob"),), score=1.0,
                    label="Ann married Bob", text="Ann married Bob")
    return policy.relation_evidence(eng, [bob])


def judge_reads_ahead(q: str, topics: list[str], policy: CheapPolicy) -> bool:
    eng = _engine(FREE, policy, depth=3)
    return policy.needs_ahead(eng, eng.start(q, topics))


def tries_depths(q: str, topics: list[str], policy: CheapPolicy) -> bool:
    eng = _engine(FREE, policy, depth=3)
    return depths.tries(eng, eng.start(q, topics))


# ---------------------------------------------------------------- the rows
# (rule, question or input, topics, what is read, read with the rule on, read with it off)
ROWS: list[tuple[str, str, list[str], Read, Any, Any]] = [
    ("film_nouns_stop", "which films did Ann Lee direct", ["Ann Lee"], reading("words"), {"direct": 1},
     {"film": 1, "direct": 1}),
    ("film_nouns_type", "the actor in Dragnet also appears in which movies", ["Dragnet"], reading("asked"),
     ("movi",), ()),
    ("fr_stop_extra", "Où est né Marc ?", ["Marc"], reading("words"), {"né": 1}, {"où": 1, "né": 1}),
    ("bands_by_question_word", "the films that share actors with the film Gods and Monsters are written by who",
     ["Gods and Monsters"], near_far, ("share actors", "written"), ("actors written", "share")),
    ("bands_from_phrases", "who directed the movies written by the writer of X", ["X"], bands(3),
     ["writer", "written", "directed"], ["written writer", "written writer", "directed"]),
    ("framing_words", "What was the name of Scrooge's little sister?", ["Scrooge"], reading("hops"), 1, 2),
    ("asking_noun_is_type", "which town is the Tide Fair held in", ["Tide Fair"], reading("hops"), 1, 2),
    ("verb_after_asking", "what killed the madhubala 's couple ?", ["madhubala"], reading("hops"), 2, 1),
    ("named_type", "which town hosts the Tide Fair", ["Tide Fair"], reading("asked"), ("town",), ()),
    ("asks_for", "who wrote X", ["X"], reading("asked"), ("person", "peopl", "organizat"), ()),
    ("auxiliaries", "what are the genres of X", ["X"], reading("asked"), ("genr",), ()),
    ("kind_words", "what types are the films written by Simon Pegg", ["Simon Pegg"], reading("asked", "asked_named"),
     ((), False), (("film",), True)),
    ("type_words", "which town hosts the Tide Fair", ["Tide Fair"], fits("GEO"), True, False),
    ("time_words", "at what hour did Scrooge wake", ["Scrooge"], fits("EVENT"), True, False),
    ("attribute_after_asking", "which nationality is george_formby 's mom ?", ["george_formby"], reading("hops"), 2,
     1),
    ("do_support", "where does julie_london 's husband work for ?", ["julie_london"], reading("hops"), 2, 1),
    ("title_before_name", "Quel navire le capitaine Jules Caradec commande-t-il ?", ["Jules Caradec"],
     reading("hops"), 1, 2),
    ("recurs_hops", "the films that share actors with X", ["X"], reading("hops"), 2, 1),
    ("relation_phrases", "the place of birth of Sam 's son ?", ["Sam"], hops_on_a_typed_graph, 2, 3),
    ("relative_wh", "The dealer who sold the lamp kept it in which shop?", ["lamp"], reading("asked", "asked_named"),
     (("shop",), True), (("person", "peopl", "organizat"), False)),
    # the policy's switches, each on the smallest function it switches:
    # CheapPolicy.relation_query (hop 1 reads the band by the topic)
    ("hop_focus", "who directed the movies written by Paul", ["Paul"], first_hop_focus, "written", ""),
    # CheapPolicy.looks_ahead (before the last hop)
    ("lookahead", "who directed the movies written by Paul", ["Paul"], looks_ahead, True, False),
    # CheapPolicy.relation_text of the typed relation directed_by
    ("type_templates", "directed_by", [], relation_text, "a movie was directed by a person", "directed by"),
    # CheapPolicy.planned_depth under a maximum depth of 3
    ("plan_hops", "who directed the movies written by Paul", ["Paul"], planned_depth, 2, 3),
    # CheapPolicy.judge at two hops, no chain ending in a language
    ("type_gate", "the films that share actors with Seedfilm were in which languages", ["Seedfilm"],
     verdict_at_depth_2, "type", "plan"),
    # CheapPolicy.relation_evidence on a GraphRAG graph
    ("neighbour_evidence", "who is the husband of Ann", ["Ann"], evidence_of_bob, ["Bob is Ann's husband."], [""]),
    # CheapPolicy.needs_ahead on a GraphRAG graph under a maximum depth
    ("stop_when_nothing_ahead", "who is the husband of Ann", ["Ann"], judge_reads_ahead, True, False),
    # policy/depths.tries on a GraphRAG graph under a maximum depth
    ("try_depths", "who is the husband of Ann", ["Ann"], tries_depths, True, False),
]


@functools.cache
def _table() -> tuple[Any, ...]:
    return _rule_table().RULES


def _switches() -> set[str]:
    return {r.name for r in _table() if r.switch}


@pytest.mark.parametrize("rule,question,topics,what,on,off", ROWS, ids=[row[0] for row in ROWS])
def test_rule_row(rule, question, topics, what, on, off):
    if rule in _switches():
        assert what(question, topics, CheapPolicy()) == on
        assert what(question, topics, CheapPolicy(**{rule: False})) == off
        return
    assert what(question, topics, CheapPolicy()) == on
    with rules.switched_off(rule):
        assert what(question, topics, CheapPolicy()) == off
    assert what(question, topics, CheapPolicy()) == on and not rules.OFF  # back on, caches rebuilt


def test_the_rows_are_the_rules_of_the_table_one_each():
    table = _table()
    assert [row[0] for row in ROWS] == [r.name for r in table]  # one row per rule, in the table's order
    assert all(row[4] != row[5] for row in ROWS)  # so a rule whose switch does nothing fails its row
    wording = {r.name for r in table if not r.switch}
    assert wording == rules.NAMES, "scoring/rules.py: NAMES and bench/rule_table.py: RULES differ"
    assert _switches() <= set(CheapPolicy().params()), "a policy switch of the table is no CheapPolicy switch"


def test_every_rule_site_asks_about_a_known_rule_and_every_rule_has_a_site():
    src = "".join(p.read_text(encoding="utf-8") for p in (ROOT / "tog_core").rglob("*.py"))
    sites = set(re.findall(r"\b(?:rules|wording)\.on\(\"(\w+)\"\)", src))
    assert sites == rules.NAMES


def test_switching_off_an_unknown_rule_names_the_rules():
    with pytest.raises(ValueError, match=r"unknown rule 'framing_word'; the wording rules are: .*framing_words"):
        with rules.switched_off("framing_word"):
            pass
    assert not rules.OFF
