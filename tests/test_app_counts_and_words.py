"""A newcomer's review of the app's numbers and words: the answer candidates add up to the count their `why` gives
("ranked 1 of 14" with 10 kept), Explore's evaluate step (a single choice) speaks of a choice, not of a table and
ticks, the hops table leaves out a column that says nothing (and explains it when it does), and the suggested
questions write an all-caps title as a person would."""
from __future__ import annotations

import os
import re

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from builders import write_project

from appkit import app, ask, click
from tog_core.app import pick as P
from tog_core.app.session import K
from tog_core.tog.choice import AnswerCandidate

VERDANT = "Which river flows through the capital of the Verdant Isles?"


@pytest.fixture(autouse=True)
def home(app_home):
    return app_home


# ------------------------------------------------------------------ 1. the candidates add up

def _cands(n: int, of: int | None) -> list[AnswerCandidate]:
    return [AnswerCandidate(title=f"C{k}", entity_id=f"c{k}",
                            why=f"ranked {k + 1} of {of} candidates by chain, text, type and agreement" if of else "")
            for k in range(n)]


def test_the_candidate_list_says_how_many_were_ranked_when_it_kept_fewer():
    assert P.ranked_in_all(_cands(10, 14)) == 14 and P.ranked_in_all(_cands(4, None)) is None
    assert P.more_label(_cands(10, 14)) == "7 more candidate(s) · the run kept the 10 best of the 14 ranked"
    assert P.more_label(_cands(5, 5)) == "2 more candidate(s)"  # every ranked one kept: nothing to reconcile
    assert P.more_label(_cands(5, None)) == "2 more candidate(s)"  # a list built from the chains says no count
    assert P.kept_words(_cands(3, 8)) == "the run kept the 3 best of the 8 ranked"


def test_the_demos_cards_and_more_add_up_to_the_count_their_why_gives():
    """The review: "ranked 1 of 14 candidates" on the first card, 3 cards and "7 more candidate(s)" (10) below."""
    at = ask(app(**{K.MODEL: "none"}), VERDANT)
    t = at.session_state[K.ASK_TRACE]
    whys = [c.value.replace("\\", "") for c in at.caption if c.value.startswith("Why here: ")]
    of = int(re.search(r"ranked 1 of (\d+) candidates", whys[0]).group(1))
    kept = len(t.candidates)
    assert of > kept > P.SHOWN  # the run ranked more than its trace keeps (MAX_CANDIDATES)
    [more] = [e for e in at.expander if "more candidate" in e.label]
    assert more.label == f"{kept - P.SHOWN} more candidate(s) · the run kept the {kept} best of the {of} ranked"


# ------------------------------------------------------------------ 2. the evaluate step's own words

def test_explores_evaluate_step_speaks_of_its_choice_not_of_a_table_and_ticks():
    """The review: a single radio choice under "What the words in this table mean" and "Your ticks count …"."""
    from tog_core.app.guide import EVALUATE_WORDS, STEP_WORDS

    at = app(**{K.MODEL: "none", K.REL_PRUNER: "bm25", K.ENT_PRUNER: "bm25"})
    at.switch_page("pages/explore.py").run()
    at.text_input(key=K.EXPLORE_QUESTION).set_value(VERDANT).run()
    at = click(at, "Start")
    labels = [e.label for e in at.expander]
    assert "What the words in this table mean" in labels  # a stage with a table keeps its words …
    assert any("Your ticks count when you press Continue" in c.value for c in at.caption)
    at = click(click(at, "Continue"), "Continue")
    assert [r for r in at.radio if r.label == "What next?"] and not at.data_editor  # the evaluate step
    labels = [e.label for e in at.expander]
    assert "What the words in this table mean" not in labels and "What these two choices mean" in labels
    [ex] = [e for e in at.expander if e.label == "What these two choices mean"]
    said = " ".join(m.value for m in ex.markdown).replace("\\", "")
    assert all(term in said for term, _ in EVALUATE_WORDS) and "BM25" not in said
    assert not any(term == "BM25" for term, _ in EVALUATE_WORDS) and STEP_WORDS
    captions = " ".join(c.value for c in at.caption)
    assert "ticks" not in captions.lower() and "Your choice counts when you press Continue" in captions


# ------------------------------------------------------------------ 3. the hops table's "not counted"

def test_the_hops_table_drops_an_empty_not_counted_column_and_explains_a_full_one():
    from tog_core.app.reading_view import NOT_COUNTED, hops_table

    rows = [{"hops": 1, "which": "river", NOT_COUNTED: "", "kept": True},
            {"hops": 2, "which": "river", NOT_COUNTED: "", "kept": False}]
    shown, note = hops_table(rows)
    assert [list(r) for r in shown] == [["hops", "which", "kept"]] * 2 and note == ""
    rows[1][NOT_COUNTED] = "town"
    shown, note = hops_table(rows)
    assert shown == rows and NOT_COUNTED in note.lower() and len(note) > 60  # the column kept, and said


def test_the_ask_pages_hops_table_has_no_empty_column():
    """The review: a "not counted" column empty on every row, explained nowhere."""
    at = ask(app(**{K.MODEL: "none"}), VERDANT)
    [ex] = [e for e in at.expander if e.label.startswith("How many hops")]
    [table] = ex.dataframe
    frame = table.value
    assert "question words matched" in frame.columns and "kept" in frame.columns
    assert all(frame[c].astype(str).str.strip().ne("").any() for c in frame.columns if c != "kept"), frame
    assert "not counted" not in frame.columns


# ------------------------------------------------------------------ 5. titles in the suggestions

def test_suggested_questions_write_all_caps_titles_as_a_person_would(tmp_path):
    from tog_core.app.guide import as_written, example_questions
    from tog_core.graphrag.graph import KnowledgeGraph
    from tog_core.graphrag.project import open_project

    assert as_written("SCROOGE'S OFFICE") == "Scrooge's Office" and as_written("THE END OF IT") == "The End of It"
    assert as_written("CRATCHIT FAMILY") == "Cratchit Family" and as_written("KING GEORGE III") == "King George III"
    assert as_written("O'BRIEN") == "O'Brien" and as_written("JEAN-LUC") == "Jean-Luc"
    assert as_written("Émile Garnier") == "Émile Garnier" and as_written("iPhone") == "iPhone"  # mixed: as it is
    assert as_written("ÉCOLE DES BEAUX-ARTS") == "École des Beaux-Arts" and as_written("42") == "42"
    root = write_project(tmp_path / "carol", [
        ("EBENEZER SCROOGE", "Ebenezer Scrooge is a miser."), ("SCROOGE'S OFFICE", "An office in London."),
        ("BOB CRATCHIT", "Bob Cratchit is a clerk."), ("CRATCHIT FAMILY", "The family of Bob Cratchit.")],
        [("EBENEZER SCROOGE", "SCROOGE'S OFFICE", "Ebenezer Scrooge owns and works in Scrooge's office."),
         ("BOB CRATCHIT", "CRATCHIT FAMILY", "Bob Cratchit is the head of the Cratchit family.")])
    graph = KnowledgeGraph.load(open_project(root))
    made = {e.answer: e.question for e in example_questions(graph)}
    assert made["EBENEZER SCROOGE"].endswith(" owns and works in Scrooge's Office?")  # not "SCROOGE'S OFFICE"
    assert made["BOB CRATCHIT"].endswith("the Cratchit Family?")
    assert not any(re.search(r"[A-Z]{3,}", q) for q in made.values())
