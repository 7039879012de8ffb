"""Issue #20 item 3, the app side: "How the question was read" under an answer on the Ask page. It says who read the
question (the rules, the LLM, the data set), the language, the topic entities as the question names them, what it
asks for, the relation phrases in walking order, the number of hops and what a person changed; the number of hops
and what is asked for can be corrected, and "Search again with this reading" makes a new run whose trace records
the corrected reading (`reading.edited`), the old run kept. A trace without a reading says so plainly; bad input
gets a message naming the field; data text is escaped."""
from __future__ import annotations

import json
import os
import re

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from streamlit.testing.v1 import AppTest

from appkit import APP, CORIN, FAKE_KEY, QUESTION, app, ask
from tog_core.app import reading_view as RV
from tog_core.app.session import K
from tog_core.runs.files import RunStore

SEARCH = "Search again with this reading"


@pytest.fixture(autouse=True)
def home(app_home):
    return app_home


def section(at: AppTest):
    [ex] = [e for e in at.expander if e.label.startswith("How the question was read")]
    return ex


def said(at: AppTest) -> str:
    """What the section says, escapes removed."""
    ex = section(at)
    return "\n".join([m.value for m in ex.markdown] + [m.value for m in ex.info] + [m.value for m in ex.warning]
                     + [m.value for m in ex.error]).replace("\\", "")


def search_again(at: AppTest, *, hops: int | None = None, asked: str | None = None) -> AppTest:
    rid = at.session_state[K.ASK_TRACE].run_id
    if hops is not None:
        at.number_input(key=f"{K.ASK_READING}_hops_{rid}").set_value(hops)
    if asked is not None:
        at.text_input(key=f"{K.ASK_READING}_asked_{rid}").set_value(asked)
    [b] = [b for b in section(at).button if b.label == SEARCH]
    at = b.click().run()
    assert not at.exception, at.exception
    return at


def reload(rid: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=90)
    at.query_params["run"] = rid
    at.run()
    assert not at.exception, at.exception
    return at


def test_the_section_shows_how_a_demo_question_was_read():
    at = ask(app(**{K.MODEL: "none"}), QUESTION)  # "In which town was the founder of the Lanternwright Guild born?"
    ex = section(at)
    assert ex.label == "How the question was read: 2 hops, by the rules"
    seen = said(at)
    assert "Read by: the rules (the question's wording)" in seen.replace("**", "")
    assert "Language: English" in seen.replace("**", "")
    assert "Topic entities, as the question names them: “Lanternwright Guild”" in seen.replace("**", "")
    assert "Asks for: town (named in the question) · this graph's types that fit: GEO" in seen.replace("**", "")
    assert "Relation phrases, walking from the topic: founder → born" in seen.replace("**", "")
    assert "Number of hops: 2" in seen.replace("**", "") and "corrected" not in seen
    rid = at.session_state[K.ASK_TRACE].run_id
    assert at.number_input(key=f"{K.ASK_READING}_hops_{rid}").value == 2  # the fields start at the reading
    assert at.text_input(key=f"{K.ASK_READING}_asked_{rid}").value == "town"
    assert "PERSON, GEO" in " ".join(c.value for c in ex.caption)  # the graph's types, as suggestions


def test_editing_the_hops_searches_again_that_deep_and_records_the_edit():
    at = ask(app(**{K.MODEL: "none"}), QUESTION)
    first = at.session_state[K.ASK_TRACE]
    assert first.reading["hops"] == 2 and first.plan["depth"] == 2
    at = search_again(at, hops=3)
    t = at.session_state[K.ASK_TRACE]
    assert t.run_id != first.run_id and at.query_params["run"] == t.run_id  # a new run, shown
    assert t.reading["edited"] == ["hops"] and t.reading["hops"] == 3 and t.reading["by"] == "rules"
    assert t.reading["asked"] == first.reading["asked"]  # the rest of the reading as it was
    assert t.plan["depth"] == 3 and t.plan["chosen"] and all(len(c) == 3 for c in t.chains if c)  # ran 3 hops
    assert [s.title for s in t.seeds] == [s.title for s in first.seeds]
    assert t.plan["trials"] == first.plan["trials"]  # what each number of hops found stays to compare
    assert {r.run_id for r in RunStore().list()} == {first.run_id, t.run_id}  # the first run is kept
    assert RunStore().load(t.run_id).reading["edited"] == ["hops"]  # saved like any run
    assert section(at).label == "How the question was read: 3 hops, by the rules, corrected"
    assert "then corrected by a person: the number of hops" in said(at)
    again = reload(t.run_id)  # a reload keeps it
    assert "then corrected by a person: the number of hops" in said(again)
    assert reload(first.run_id).session_state[K.ASK_TRACE].reading["edited"] == []


def test_editing_what_is_asked_for_changes_the_reading_and_is_saved():
    at = ask(app(**{K.MODEL: "none"}), QUESTION)
    first = at.session_state[K.ASK_TRACE]
    assert first.reading["asked"] == ["town"]
    at = search_again(at, asked="PERSON")  # one of the graph's types
    t = at.session_state[K.ASK_TRACE]
    assert t.run_id != first.run_id
    assert t.reading["asked"] == ["person"] and t.reading["edited"] == ["asked"] and t.reading["hops"] == 2
    assert RunStore().load(t.run_id).reading["asked"] == ["person"]
    assert not t.plan["chosen"]  # the number of hops is the search's own choice, as before
    assert "Asks for: person (set by a person) · this graph's types that fit: PERSON" in said(at).replace("**", "")
    at = search_again(at, asked="")  # empty: the question does not say
    t = at.session_state[K.ASK_TRACE]
    assert t.reading["asked"] == [] and t.reading["edited"] == ["asked"]
    assert "Asks for: not said" in said(at).replace("**", "")
    assert len(RunStore().list()) == 3


def test_bad_input_gets_a_message_naming_the_field_and_no_run():
    at = ask(app(**{K.MODEL: "none"}), QUESTION)
    rid = at.session_state[K.ASK_TRACE].run_id
    for hops, asked, words in [(7, None, "Number of hops: 7 is outside 1 to 3 (this run's maximum depth)"),
                               (0, None, "Number of hops: 0 is outside 1 to 3"),
                               (None, "the of", "What the question asks for: “the of” has no word the search can use"),
                               (None, None, "Nothing was changed")]:
        at = search_again(at, hops=hops, asked=asked)
        assert words in said(at), said(at)
        assert at.session_state[K.ASK_TRACE].run_id == rid and [r.run_id for r in RunStore().list()] == [rid]
        at.number_input(key=f"{K.ASK_READING}_hops_{rid}").set_value(2)
        at.text_input(key=f"{K.ASK_READING}_asked_{rid}").set_value("town")


def test_with_an_llm_judging_the_hops_cannot_be_chosen_and_the_page_says_so(toy_server):
    at = app(**{K.MODEL: "openai/toy", K.API_BASE: toy_server.base_url, K.API_KEY: FAKE_KEY, K.DEPTH: 2})
    at = ask(at, QUESTION)
    rid = at.session_state[K.ASK_TRACE].run_id
    at = search_again(at, hops=1)
    seen = said(at)
    assert "The number of hops cannot be chosen for this run: with an LLM judging, the LLM decides" in seen
    assert at.session_state[K.ASK_TRACE].run_id == rid and [r.run_id for r in RunStore().list()] == [rid]


def test_an_older_trace_without_a_reading_says_so_plainly(home):
    at = ask(app(**{K.MODEL: "none"}), QUESTION)
    rid = at.session_state[K.ASK_TRACE].run_id
    path = home / "runs" / f"{rid}.json"
    d = json.loads(path.read_text(encoding="utf-8"))
    del d["reading"]  # as a trace written before readings were recorded
    path.write_text(json.dumps(d), encoding="utf-8")
    at = reload(rid)
    assert at.session_state[K.ASK_TRACE].reading is None
    ex = section(at)
    assert ex.label == "How the question was read"
    assert "no record of how its question was read: it was saved by an older version" in said(at)
    assert not [b for b in ex.button if b.label == SEARCH] and not ex.number_input


def test_data_text_in_a_reading_is_escaped(home):
    at = ask(app(**{K.MODEL: "none"}), QUESTION)
    rid = at.session_state[K.ASK_TRACE].run_id
    path = home / "runs" / f"{rid}.json"
    d = json.loads(path.read_text(encoding="utf-8"))
    d["reading"].update(topics=["<script>alert(1)</script> **Guild**"], spans=[[-1, -1]],
                        phrases=["[click](http://evil.example)", "<img src=x onerror=alert(1)>"],
                        asked=["<b>boss</b>"], fallback="_llm said_ <iframe src=//evil.example>")
    path.write_text(json.dumps(d), encoding="utf-8")
    at = reload(rid)
    ex = section(at)
    raw = "\n".join([m.value for m in ex.markdown] + [m.value for m in ex.warning])
    for markup in ("<script>", "<img", "<b>", "<iframe", "](http", "**Guild**", "_llm said_"):
        assert not re.search(r"(?<!\\)" + re.escape(markup), raw), markup  # nothing from the data becomes markup
    assert "\\<script\\>alert\\(1\\)\\</script\\> \\*\\*Guild\\*\\* \\(not named in the question\\)" in raw
    assert "\\[click\\]\\(http\\:\u200b//evil\\.example\\) → \\<img src=x onerror=alert\\(1\\)\\>" in raw
    assert "\\<b\\>boss\\</b\\>" in raw
    assert "so the rules read it: \\_llm said\\_ \\<iframe" in raw


def test_what_is_asked_for_reads_as_the_rule_reader_reads_a_noun_after_which():
    assert RV.asked_stems("town") == ("town",) and RV.asked_stems("") == ()  # empty: not said
    assert RV.asked_stems("films, GEO") == ("film", "geo")  # a noun the stop words drop, a type label
    with pytest.raises(ValueError, match="What the question asks for: “the of” has no word"):
        RV.asked_stems("the of")


def test_an_implied_type_is_said_in_words_and_left_as_it_is_when_the_field_is_not_changed():
    at = ask(app(**{K.MODEL: "none"}), CORIN)  # "Who founded …": "who" implies a person or an organization
    t = at.session_state[K.ASK_TRACE]
    assert t.reading["asked"] == ["person", "peopl", "organizat"] and not t.reading["asked_named"]
    view = RV.reading_view(t, ["PERSON", "GEO", "ORGANIZATION"])
    assert view.asked == "person, people, organization" and view.asked_how == "implied by the question word"
    assert view.fits == ("PERSON", "ORGANIZATION") and view.topics == ("“Corin Vell”",)
    assert view.searched == t.plan["depth"]
    assert section(at).label == f"How the question was read: 4 hops (the search ran {view.searched}), by the rules"
    with pytest.raises(ValueError, match="Nothing was changed"):
        RV.edit_reading(t, hops=t.reading["hops"], asked_text=view.asked_text, max_depth=3)
    edit = RV.edit_reading(t, hops=t.reading["hops"], asked_text="company", max_depth=3)
    assert edit.hops is None and edit.reading.asked == ("company",) and edit.reading.edited == ("asked",)
    with pytest.raises(ValueError, match="Number of hops: “two” is not a whole number; choose 1 to 3"):
        RV.edit_reading(t, hops="two", asked_text="", max_depth=3)


def test_a_rambling_question_reads_at_most_the_engines_depth_and_lists_ten_phrases(home):
    rambling = CORIN + " and I would really like to know more about it, please," * 30
    at = ask(app(**{K.MODEL: "none"}), rambling)
    t = at.session_state[K.ASK_TRACE]
    assert t.reading["hops"] == 10 and len(t.reading["phrases"]) > 20  # the wording names ~30 "relations"
    view = RV.reading_view(t, [])
    assert len(view.phrases) == RV.PHRASES_SHOWN + 1 and re.fullmatch(r"… and \d+ more", view.phrases[-1])
    rid = t.run_id
    assert at.number_input(key=f"{K.ASK_READING}_hops_{rid}").value == 3  # the field starts within 1 to the depth
    # submitting the form with only "what is asked" changed keeps the search's own hops (the field was clamped)
    edit = RV.edit_reading(t, hops=3, asked_text="company", max_depth=3)
    assert edit.hops is None and edit.reading.edited == ("asked",) and edit.reading.hops == 10
    edit = RV.edit_reading(t, hops=2, asked_text=RV.reading_view(t, []).asked_text, max_depth=3)
    assert edit.hops == 2 and edit.reading.edited == ("hops",)
