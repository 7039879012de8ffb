"""Whether a written answer is supported by the chains: hand cases for tog_core.render.support."""
from __future__ import annotations

import pytest

from tog_core.render.support import answer_support, chain_entities, names_in, title_in

GUILD = {"seeds": [{"id": "g", "title": "Lanternwright Guild"}],
         "chains": [[{"source": "Lanternwright Guild", "source_id": "g", "relation": "Mara Quell founded the "
                      "Lanternwright Guild.", "target": "Mara Quell", "target_id": "m"}]]}


@pytest.mark.parametrize("title, text, found", [
    ("Mara Quell", "It was founded by Mara Quell.", True),
    ("Mara Quell", "It was founded by MARA   quell.", True),          # case and spaces
    ("Mara Quell", "Mara founded it.", True),                          # first word
    ("EBENEZER SCROOGE", "said Scrooge.", True),                        # last word
    ("Mara Quell", "Marais founded it.", False),                        # whole words only
    ("The Gray Heron", "the ship sailed", False),                       # a common first word is not the title
    ("The Gray Heron", "The Heron sailed at dawn.", True),
    ("Lanternwright Guild", "a guild of lamp makers", False),
    ("Paris", "Parisian bread", False),
    ("", "anything", False),
])
def test_title_in(title, text, found):
    assert title_in(title, text) is found


def test_names_in_keeps_order_and_drops_repeats():
    assert names_in("Bob met Alice Smith", ["Alice Smith", "Bob", "Carol", "Bob"]) == ["Alice Smith", "Bob"]


def test_chain_entities_leave_the_topic_entities_out():
    assert chain_entities(GUILD) == ["Mara Quell"]


def test_an_answer_naming_another_person_is_not_supported():
    s = answer_support("The Lanternwright Guild was founded by Ivo Brask in 1702.", GUILD)
    assert s == {"supported": False, "named": [], "chain_entities": ["Mara Quell"]}


def test_an_answer_naming_the_chain_end_is_supported():
    assert answer_support("Mara founded it.", GUILD)["supported"]
    assert answer_support("Founded by Mara Quell [1].", GUILD)["named"] == ["Mara Quell"]


def test_no_chains_support_nothing():
    assert not answer_support("Mara Quell", {"chains": []})["supported"]
