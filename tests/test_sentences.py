"""scoring/sentences.py: the one reader of source text as sentences and names, behind the evidence tab's marked
sentence and the answer ranking's supporting sentence."""
from __future__ import annotations

from tog_core.render.evidence import sentences, support_span
from tog_core.scoring.sentences import name_pattern, sentence_spans, sentences_naming


def test_sentences_naming_both_ends_of_a_link():
    text = "Scrooge walked home. Bob Cratchit works for Scrooge in the counting-house!\nFred laughed."
    assert sentences_naming(text, "SCROOGE", "bob cratchit") == [
        "Bob Cratchit works for Scrooge in the counting-house!"]
    assert sentences_naming(text, "Scrooge", "Marley") == []
    assert sentences_naming("茶园在山上。李明住在茶园旁边。", "茶园", "李明") == ["李明住在茶园旁边。"]


def test_a_sentence_ends_at_a_stop_and_space_a_cjk_stop_or_a_blank_line_not_at_a_wrapped_line():
    text = ('  "Humbug!" said Scrooge, and\nwent home.  Mrs. Cratchit laughed.\n\nNew part\nstill here.\n'
            "茶园在山上。李明住在茶园旁边。")
    got = [text[a:b] for a, b in sentence_spans(text)]
    assert got == ['"Humbug!" said Scrooge, and\nwent home.', "Mrs.", "Cratchit laughed.", "New part\nstill here.",
                   "茶园在山上。", "李明住在茶园旁边。"]
    assert sentences(text) == list(sentence_spans(text))  # the evidence tab splits as the ranking does
    assert sentence_spans("") == () and sentence_spans(" \n\n ") == ()


def test_a_name_is_found_with_its_article_aside_in_any_case_and_wrapped():
    pattern = name_pattern("THE GHOST OF CHRISTMAS PAST")
    assert pattern is not None and pattern.search("and the ghost of\nChristmas   Past said")
    assert not pattern.search("the ghosts of christmas past")  # whole words
    assert name_pattern("Al") is None and name_pattern("茶园") is not None


def test_the_evidence_tab_marks_a_chinese_sentence_not_the_whole_passage():
    text = "茶园在山上。李明住在茶园旁边。王芳在城里。"
    a, b = support_span(text, relation="李明住在茶园旁边", source="李明", target="茶园")
    assert text[a:b] == "李明住在茶园旁边。"


def test_the_sentence_naming_both_ends_may_be_wrapped_and_cut_at_a_title():
    """Source text is hard-wrapped and "Mrs." ends no sentence of its own: the sentence naming both ends of a link
    comes back whole, on one line."""
    text = "It was cold.\nThen Mrs.\nCratchit thanked\nBob for the goose. He smiled.\n\nA new paragraph."
    assert sentences_naming(text, "MRS. CRATCHIT", "BOB") == ["Then Mrs. Cratchit thanked Bob for the goose."]
    assert sentences_naming(text, "BOB", "PARAGRAPH") == []


def test_a_quotation_closed_after_its_stop_ends_the_sentence_before_a_capital_not_before_said():
    def split(text):
        return [text[a:b] for a, b in sentence_spans(text)]

    assert split("He said, 'Scrooge and Marley's, I believe?' It sent a pang.") == [
        "He said, 'Scrooge and Marley's, I believe?'", "It sent a pang."]
    assert split('He said "Bah!" Then he left.') == ['He said "Bah!"', "Then he left."]
    assert split('"Humbug!" said Scrooge. Then he left.') == ['"Humbug!" said Scrooge.', "Then he left."]
    assert split("他说：“我明天来。”然后走了。") == ["他说：“我明天来。”", "然后走了。"]  # the quote stays
    assert split("It cost 3.50 in all.") == ["It cost 3.50 in all."]
