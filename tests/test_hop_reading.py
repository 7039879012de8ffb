"""The number of hops read from a question's wording (scoring/hops.expected_hops), the asked type and the hop
bands (scoring/text.py): the cases each reading must get right, and the boundaries of each count and length they
compare. Each rule switched off, one row per rule: tests/test_rule_rows.py."""
from __future__ import annotations

import pytest

from tog_core.scoring.hops import expected_hops
from builders import question_bands
from tog_core.scoring.question import _relation_word, asked_type, type_matches

# (rule, question, topics, relation names of several words, expected number of hops)
HOPS = [
    ("a relation per run of content words", "who directed the movies written by Paul", ["Paul"], (), 2),
    ("the noun after which/what is the answer's type", "which town hosts the Tide Fair", ["Tide Fair"], (), 1),
    ("no possessive: the year is what the verb gives", "what year was The Fighting Prince of Donegal released",
     ["The Fighting Prince of Donegal"], (), 1),
    ("one verb, one relation", "where does Ann work", ["Ann"], (), 1),
    ("a word that names no entity type is an attribute", "which religion is Ann 's home", ["Ann"], (), 2),
    ("an attribute of a noun phrase after the copula", "what types are the films written by Simon Pegg",
     ["Simon Pegg"], (), 2),
    ("a type word stays the answer's type", "What city is the capital of France?", ["France"], (), 1),
    ("'the film X' is no attribute", "what year was the film Alien released", ["Alien"], (), 1),
    ("a type word before a possessive stays the type", "which man is Ann 's husband", ["Ann"], (), 1),
    ("no inversion: still a type", "In which town the Tide Fair takes place?", ["Tide Fair"], (), 1),
    ("a plural is not a possessive", "which town is Aliens set in", ["Alien"], (), 1),
    ("the verb counts only where the auxiliary governs the possessive",
     "Where does the man who fined the tailor's wife's husband live?", ["tailor"], (), 4),
    ("each possessive's noun is a relation", "the place of birth of katherine 's spouse ?", ["katherine"], (), 3),
    ("a relation name of several words is one relation", "the place of birth of katherine 's spouse ?",
     ["katherine"], ("place of birth",), 2),
    ("a relation name is text, not a pattern", "what is x \\y z of Ann", ["Ann"], ("x \\y z",), 1),
    ("French puts the subject after the type noun", "Dans quelle ville la Banque Mercier a-t-elle son siège ?",
     ["Banque Mercier"], (), 1),
    ("a chain of possessives", "what is the child of X 's spouse 's parent ?", ["X"], (), 3),
    ("Chinese: one relation per 的", "林秋水的师父的故乡在哪里？", ["林秋水"], (), 2),
    ("Chinese: 是谁 asks, it names no relation", "陈小舟的母亲是谁？", ["陈小舟"], (), 1),
    ("'the writer of X' counts", "who directed the movies written by the writer of X", ["X"], (), 3),
]


@pytest.mark.parametrize("question,topics,phrases,hops", [row[1:] for row in HOPS], ids=[row[0] for row in HOPS])
def test_expected_hops(question, topics, phrases, hops):
    assert expected_hops(question, topics, list(phrases)) == hops


# (rule, question, asked words, whether a type noun names them)
ASKED = [
    ("an article after the noun: a verb, no type", "what killed the madhubala 's couple ?", [], False),
    ("a verb after the noun: a type", "which town is the Tide Fair held in", ["town"], True),
]


@pytest.mark.parametrize("question,words,named", [row[1:] for row in ASKED], ids=[row[0] for row in ASKED])
def test_asked_type(question, words, named):
    assert asked_type(question) == (words, named)


def test_are_the_is_skipped_before_the_type_noun():
    assert asked_type("what are the genres of X")[0] == asked_type("which genre")[0]


def test_french_type_noun_before_its_subject_asks_for_a_place():
    assert type_matches(asked_type("Dans quelle ville la Banque Mercier a-t-elle son siège ?")[0], "GEO")


# ---------------------------------------------------------------- boundaries
def test_a_relation_word_has_at_least_two_letters():
    assert _relation_word("ox", "", "en")  # two letters: a word
    assert not _relation_word("x", "", "en")  # one letter: the "s" of "'s" or an initial


def test_after_a_possessive_only_the_second_word_of_a_run_starts_a_relation():
    # "where does X 's wife come from": wife, then where she comes from (the run's second word). A third word of the
    # same run ("come back from") is the same relation
    assert expected_hops("where does X 's wife come from", ["X"]) == 2
    assert expected_hops("where does X 's wife come back from", ["X"]) == 2


def test_the_auxiliary_is_read_right_before_the_topic_and_never_wraps_round():
    # the run's first word is the fourth word (k = 3): the auxiliary is the first word
    assert expected_hops("does X 's wife come from", ["X"]) == 2
    # the run's first word is the third word (k = 2): there is no word before the topic, and the word looked for
    # must not be read from the end of the question
    assert expected_hops("X 's wife come from where does", ["X"]) == 1


def test_bands_need_two_hops_and_two_content_words():
    q = "the films that share actors with the film Gods and Monsters are written by who"
    assert question_bands(q, ["Gods and Monsters"], 1) == []  # one hop: nothing to split
    assert question_bands(q, ["Gods and Monsters"], 2) == ["share actors", "written"]
    assert question_bands("who wrote Gods and Monsters", ["Gods and Monsters"], 2) == []  # one content word
    assert question_bands("Ann aa bb", ["Ann"], 2) == ["aa", "bb"]  # two: one each


def test_a_word_as_near_the_topic_as_the_question_word_goes_to_the_near_band():
    # "x" sits one space from the topic and one from "who": a tie goes to the near band (the first hops)
    assert question_bands("aa Ann x who y", ["Ann"], 2) == ["aa x", "y"]


def test_one_phrase_per_hop_only_when_their_numbers_are_equal():
    q = "who directed the movies written by the writer of X"  # three phrases: writer, written, directed
    assert question_bands(q, ["X"], 3) == ["writer", "written", "directed"]
    assert question_bands(q, ["X"], 2) == ["written writer", "directed"]  # two hops: split by distance


def test_an_odd_number_of_words_gives_the_near_half_the_extra_one():
    # no question word: split by distance from the topic, the nearer half rounded up
    assert question_bands("Ann aa bb cc", ["Ann"], 2) == ["aa bb", "cc"]
    assert question_bands("Ann aa bb cc dd", ["Ann"], 2) == ["aa bb", "cc dd"]


def test_each_hop_reads_its_own_band_the_last_one_included():
    from builders import typed_graph
    from tog_core.policy.cheap import CheapPolicy
    from tog_core.tog.engine import ToGEngine
    from tog_core.tog.state import EngineConfig

    q = "who directed the movies written by Paul"
    g = typed_graph([("Magnolia", "written_by", "Paul"), ("Magnolia", "directed_by", "Ruth")])
    eng = ToGEngine(g, config=EngineConfig(relation_pruner="bm25", entity_pruner="bm25", depth=2, exact_depth=True),
                    policy=CheapPolicy())
    st = eng.start(q, ["Paul"])
    assert question_bands(q, ["Paul"], 2) == ["written", "directed"]
    assert eng.policy.relation_query(eng, st, 0)[0] == "written"  # hop 1: the band by the topic
    assert eng.policy.relation_query(eng, st.with_(depth=2), 0)[0] == "directed"  # hop 2, the last band
    assert eng.policy.relation_query(eng, st.with_(depth=3), 0)[0] == ""  # past the bands: the whole question


def test_a_question_that_names_no_relation_still_takes_one_hop():
    assert expected_hops("who is Ann ?", ["Ann"]) == 1  # no content word: zero runs
    assert expected_hops("陈小舟是谁？", ["陈小舟"]) == 1  # no 的, nothing besides the question word and 是


def test_the_attribute_pattern_never_reads_past_either_end_of_the_question():
    # "which T is X 's R" looks one word back for which/what: at the first word it must not read the last one
    assert expected_hops("one is X 's mom what", ["X"]) == 1
    # and up to four words ahead: a question that stops at the copula, or at the noun after the article
    assert expected_hops("which nationality is", ["Ann"]) == 1
    assert expected_hops("what genres are the films", ["Ann"]) == 1


def test_a_kind_word_right_before_the_noun_still_asks_for_kinds():
    assert asked_type("which types exist in X") == ([], False)  # the noun two words after the question word


def test_only_the_word_right_after_the_question_word_may_be_read_as_a_verb():
    # "town" comes after "is the", not right after "what": an article after it makes it no verb
    assert asked_type("what is the town the Tide Fair is held in") == (["town"], True)
