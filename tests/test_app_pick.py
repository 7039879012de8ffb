"""Issue #22 item 2: "This is the answer". Under the answer the Ask page lists the run's answer candidates (the
search's answer first; three shown, the rest one click away), each with its score, its chain in words and its
supporting sentence. A click records the person's choice in the trace (`person_answer`), saves the run under the
same id and says it apart from the search's answer; a reload shows it, another click replaces it, "Clear my choice"
removes it. Saved runs and compare say it as a person's choice, never as the search's answer."""
from __future__ import annotations

import json
import os

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from streamlit.testing.v1 import AppTest

from appkit import APP, CORIN, app, ask, open_tab, texts
from runkit import _unfinished_run
from tog_core.app.session import K
from tog_core.runs.files import RunStore
from tog_core.tog.choice import person_answer

IVO = "Which ship was captained by the mentor of Ivo Brask?"
SHIP = "Lantern's Promise"  # the demo's answer; the others are read from the run's ranked list (candidates)


@pytest.fixture(autouse=True)
def home(app_home):
    return app_home


def choose(at: AppTest, i: int) -> AppTest:
    rid = at.session_state[K.ASK_TRACE].run_id
    at.button(key=f"pick_{rid}_{i}").click()
    at = at.run()
    assert not at.exception, at.exception
    return at


def cards(at: AppTest) -> list[str]:
    """The candidates as the page titles them, in order."""
    return [m.value.replace("\\", "") for m in at.markdown if m.value.startswith("**") and m.value[2:3].isdigit()]


def test_a_click_records_the_choice_saves_it_and_a_reload_shows_it_replaced_and_cleared(home):
    at = ask(app(**{K.MODEL: "none"}), IVO)
    t = at.session_state[K.ASK_TRACE]
    rid = t.run_id
    assert t.answer_entity == SHIP and t.person_answer is None
    titles = [c["title"] for c in t.candidates]
    ACADEMY, TOWN = titles[1], titles[2]  # noqa: N806 - the second and third of the ranked list
    shown = cards(at)
    assert [s.split(" · ")[0] for s in shown[:3]] == [f"**1. {SHIP}**", f"**2. {ACADEMY}**", f"**3. {TOWN}**"]
    assert "the search's answer" in shown[0] and f"weight {t.candidates[0]['score']:.2f}" in shown[0]
    seen = texts(at)
    assert "Ivo Brask —Mara Quell is the mentor of Ivo Brask.→ Mara Quell —Mara Quell captained the ship " \
           "Lantern's Promise.→ Lantern's Promise" in seen  # its chain in words
    quoted = [m.value.replace("\\", "") for m in at.markdown if m.value.startswith(">")]
    assert t.candidates[0]["sentence"] and any(t.candidates[0]["sentence"][:40] in q for q in quoted)  # quoted
    why = [c.value.replace("\\", "") for c in at.caption if c.value.startswith("Why here: ")]
    assert f"ahead of {ACADEMY} on: " in why[0] and f"behind {SHIP} on: " in why[1]  # each says why it placed so
    assert "You chose" not in seen

    at = choose(at, 1)  # "This is the answer" on the academy
    t = at.session_state[K.ASK_TRACE]
    assert person_answer(t).title == ACADEMY and person_answer(t).entity_id and person_answer(t).at
    assert t.answer_entity == SHIP and t.run_id == rid and at.query_params["run"] == rid  # the search's is kept
    saved = RunStore().load(rid)
    assert person_answer(saved) == person_answer(t) and saved.answer_entity == SHIP
    assert [r.run_id for r in RunStore().list()] == [rid]  # the same run, saved again: no new one
    assert f"You chose {ACADEMY}; the search answered {SHIP}." in texts(at)
    assert at.button(key=f"pick_{rid}_1").label == "Your choice" and at.button(key=f"pick_{rid}_1").disabled

    again = AppTest.from_file(APP, default_timeout=90)  # a reload: the run from the address, with the choice
    again.query_params["run"] = rid
    again.run()
    assert not again.exception, again.exception
    assert f"You chose {ACADEMY}; the search answered {SHIP}." in texts(again)

    at = choose(at, 2)  # another click replaces it
    assert person_answer(RunStore().load(rid)).title == TOWN
    assert f"You chose {TOWN}; the search answered {SHIP}." in texts(at) and ACADEMY + ";" not in texts(at)

    at.button(key=f"pick_clear_{rid}").click()
    at = at.run()
    assert not at.exception, at.exception
    assert at.session_state[K.ASK_TRACE].person_answer is None and RunStore().load(rid).person_answer is None
    assert "You chose" not in texts(at) and RunStore().load(rid).answer_entity == SHIP


def test_choosing_the_search_answer_itself_says_so():
    at = choose(ask(app(**{K.MODEL: "none"}), IVO), 0)
    assert f"You chose {SHIP}; the search answered {SHIP} too." in texts(at)
    score = at.session_state[K.ASK_TRACE].candidates[0]["score"]
    assert cards(at)[0] == f"**1. {SHIP}** · weight {score:.2f} · the search's answer · your choice"


def test_a_choice_that_cannot_be_saved_is_said_and_not_recorded(monkeypatch):
    at = ask(app(**{K.MODEL: "none"}), IVO)
    rid = at.session_state[K.ASK_TRACE].run_id

    def refuse(self, trace):
        raise OSError("Read-only file system")

    with monkeypatch.context() as m:
        m.setattr(RunStore, "save", refuse)
        at = choose(at, 1)
    assert "Your choice was not saved, so it is not recorded: Read-only file system" in texts(at)
    assert at.session_state[K.ASK_TRACE].person_answer is None and "You chose" not in texts(at)
    assert RunStore().load(rid).person_answer is None


def test_the_recorded_answer_list_is_shown_with_the_rest_one_click_away(home):
    at = ask(app(**{K.MODEL: "none"}), IVO)
    rid = at.session_state[K.ASK_TRACE].run_id
    d = json.loads((home / "runs" / f"{rid}.json").read_text(encoding="utf-8"))
    link = {"source": "Ivo Brask", "source_id": "i", "relation": "<b>mentor</b> of", "target": "X", "target_id": "x",
            "relationship_id": "r"}
    d["candidates"] = [{"title": f"Cand *{k}*", "entity_id": f"e{k}", "score": 1 - k / 10,
                        "chain": [{**link, "target": f"Cand *{k}*", "target_id": f"e{k}"}],
                        "sentence": f"[link](http://x.example) sentence {k}"} for k in range(5)]
    (home / "runs" / f"{rid}.json").write_text(json.dumps(d), encoding="utf-8")
    at = AppTest.from_file(APP, default_timeout=90)
    at.query_params["run"] = rid
    at.run()
    assert not at.exception, at.exception
    shown = cards(at)
    assert [s.split(" · ")[0] for s in shown] == [f"**{k + 1}. Cand *{k}***" for k in range(5)]
    assert "**1. Cand \\*0\\***" in [m.value.split(" · ")[0] for m in at.markdown]  # data is escaped
    [more] = [e for e in at.expander if e.label == "2 more candidate(s)"]
    assert len(more.button) == 2  # the fourth and fifth, one click away
    assert "Ivo Brask —<b>mentor</b> of→ Cand *3*" in texts(at)
    at = choose(at, 4)
    assert person_answer(RunStore().load(rid)).entity_id == "e4"
    assert f"You chose Cand *4*; the search answered {SHIP}." in texts(at)


def test_saved_runs_says_the_choice_apart_and_compare_has_its_own_row():
    at = ask(app(**{K.MODEL: "none"}), IVO)
    first = at.session_state[K.ASK_TRACE].run_id
    ACADEMY = at.session_state[K.ASK_TRACE].candidates[1]["title"]  # noqa: N806 - the second of the ranked list
    at = choose(at, 1)
    at = ask(at, CORIN)  # another question: Saved runs names runs by time and question, to the second
    at.switch_page("pages/runs.py").run()
    at.selectbox(key=K.RUNS_OPEN).set_value(first).run()
    assert not at.exception, at.exception
    assert f"You chose {ACADEMY}; the search answered {SHIP}." in texts(at)
    at.session_state[K.RUNS_A] = first
    at = open_tab(at, K.RUNS_TAB, "Compare two runs")
    assert not at.exception, at.exception
    rows = {r[""]: r for r in at.dataframe[-1].value.to_dict("records")}
    assert rows["answer (the search's)"]["A"] == SHIP and rows["answer (the search's)"]["B"] == "Pell Ardent"
    assert rows["answer chosen by a person"]["A"] == ACADEMY and rows["answer chosen by a person"]["B"] == ""
    assert "Run B asks another question" in texts(at)  # B defaults to the other question's run: said so
    assert rows["stopped"]["A"] == "judged enough to answer"  # in words, not the trace's "sufficient"


def test_an_unfinished_run_offers_no_choice_until_it_has_an_answer():
    rid = _unfinished_run()  # stopped at depth 2 before its answer: resuming it would answer anew
    at = AppTest.from_file(APP, default_timeout=90)
    at.query_params["run"] = rid
    at.run()
    assert not at.exception, at.exception
    assert "This run stopped before its answer" in texts(at)
    assert not [b for b in at.button if b.label == "This is the answer"]
    [b] = [b for b in at.button if b.label == "Resume"]
    at = b.click().run()
    assert not at.exception, at.exception
    assert [b for b in at.button if b.label == "This is the answer"]


def test_a_guess_says_so_plainly_and_shows_the_candidates_before_the_answer(home, monkeypatch):
    from tog_core.policy import ranking

    shipped = ranking.shipped_model()
    at = ask(app(**{K.MODEL: "none"}), IVO)
    sure = [e.value for e in at.warning]
    assert not any("this answer is a guess" in w for w in sure)  # the demo's answer is not a guess
    assert [s.label for s in at.status][0].startswith("Done · ")
    monkeypatch.setattr(ranking, "shipped_model", lambda typed=False: ranking.Model(
        features=shipped.features, weights=shipped.weights, mean=shipped.mean, scale=shipped.scale, low=1.0,
        sure=shipped.sure))
    at = ask(app(**{K.MODEL: "none"}), IVO)
    t = at.session_state[K.ASK_TRACE]
    assert t.low_confidence == 1.0 and t.confidence < 1.0
    [warn] = [e.value for e in at.warning if "this answer is a guess" in e.value or "Low confidence" in e.value]
    assert f"below {1.0:.2f}" in warn and "Check the candidates, best first" in warn
    assert [s.label for s in at.status][0].startswith("Done, a guess · ")  # the status line says it too
    body = [getattr(e, "value", "") for e in at.main]
    first_card = next(i for i, v in enumerate(body) if isinstance(v, str) and v.startswith("**1. "))
    answer_at = next(i for i, v in enumerate(body) if isinstance(v, str) and "Most likely answer" in v
                     or isinstance(v, str) and v.startswith("### "))
    assert first_card < answer_at, "the candidates come before the answer when it is a guess"
