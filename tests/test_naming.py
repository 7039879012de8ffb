"""What the question names of a candidate (tog_core/policy/naming.py): a question names the way to its answer, not
the answer. `named_in` (the whole title) sets a candidate last; `title_named` (the share of its title's words the
question uses) is a ranking feature."""
from __future__ import annotations

import pytest

from builders import free_graph
from searchkit import CHEAP, only, state_with_trials
from tog_core.policy import naming, ranking
from tog_core.policy.cheap import CheapPolicy
from tog_core.scoring.text import tokens_in
from tog_core.tog.engine import ToGEngine


@pytest.mark.parametrize("question, title, topics, named", [
    ("Who sat with the old man, surrounded by their children and their children's children?", "CHILDREN'S CHILDREN",
     ["OLD MAN"], True),
    ("Where would he retire, if his clerk talked of a merry Christmas?", "CLERK", [], True),
    ("Which shop did the clerk visit?", "THE SHOP", [], True),  # a leading article aside
    ("Under which place does Dulce base lie?", "DULCE", ["DULCE BASE"], False),  # inside a topic's own title
    ("What time is it in the tower?", "TIM", [], False),  # whole words only
    ("Who answered?", "A", [], False),  # too short to tell
    ("青山茶园的园主是谁？", "园主", ["青山茶园"], True),  # a script without spaces: a piece of the question
    ("青山茶园的园主是谁？", "茶园", ["青山茶园"], False),
])
def test_named_in_reads_whole_titles_outside_the_topic_entities(question, title, topics, named):
    assert naming.named_in(question, title, topics) is named


BAY = "Within which complex is the bay where the encrypted radio transmitter is kept?"


@pytest.mark.parametrize("question, title, topics, asked, share", [
    (BAY, "EQUIPMENT BAY", ["ENCRYPTED RADIO TRANSMITTER"], "complex", 0.5),  # "bay": one of two words
    (BAY, "MILITARY COMPLEX", ["ENCRYPTED RADIO TRANSMITTER"], "complex", 0.0),  # the asked noun is no naming
    (BAY, "MILITARY COMPLEX", ["ENCRYPTED RADIO TRANSMITTER"], "", 0.5),  # ... unless nothing is set aside
    (BAY, "Equipment Bay", [], "complex", 0.5),  # any case
    ("Who is married to Caroline's husband's brother?", "CAROLINE'S HUSBAND", ["CAROLINE"], "", 1.0),  # topic aside
    ("What did Caroline say?", "CAROLINE", ["CAROLINE"], "", 0.0),  # a title of the topic's words only
    ("A hard master's clerk went down a slide; which dwelling?", "BOB CRATCHIT'S HOUSE", [], "dwelling", 0.0),
    ("Qui dirige l'école où Théo a étudié ?", "École d'horlogerie", ["Théo"], "", 0.5),  # French stems
    ("紫砂壶“听松”出自哪家制陶坊？", "云溪制陶坊", ["听松"], "", 0.0),  # no spaces: not read
])
def test_title_named_is_the_share_of_the_title_the_question_uses(question, title, topics, asked, share):
    language = "fr" if "école" in question else "en"
    stems = frozenset(tokens_in(asked, language))
    assert naming.title_named(question, title, topics, stems, language) == pytest.approx(share)


def test_the_policy_reads_how_much_of_each_title_the_question_names(monkeypatch):
    chain = [("Ann", "Red Mill", "Ann owns the Red Mill"), ("Red Mill", "Carl", "Carl grinds corn at the Red Mill")]
    eng = ToGEngine(free_graph(chain), config=CHEAP, policy=CheapPolicy())

    def features(question: str) -> dict[str, float]:
        st = state_with_trials(eng, question, chain)
        paths = [*st.paths, *(p for s in st.other_searches for p in s.paths)]
        cands = eng.policy.answer_features(eng, st, paths, None, None)
        return {eng.graph.title(c.entity): c.features["title_named"] for c in cands}

    assert features("Who grinds corn at the mill Ann owns?") == {"Red Mill": 0.5, "Carl": 0.0}
    assert features("Who grinds corn for Ann?") == {"Red Mill": 0.0, "Carl": 0.0}
    # what the question asks for is set aside: "which mill" names no mill (read from the question, as the app does)
    assert features("Which mill does Ann own?")["Red Mill"] == 0.0
    assert features("Which building by the mill does Ann own?")["Red Mill"] == 0.5  # "mill" is not what is asked
    # a model that reads only this feature, with the sign it was fitted: the step the question names goes after
    monkeypatch.setattr(ranking, "shipped_model", lambda typed=False: only("title_named", -3.0))
    ranked = eng.answer_candidates(state_with_trials(eng, "Who grinds corn at the mill Ann owns?", chain))
    assert [eng.graph.title(c.entity) for c in ranked] == ["Carl", "Red Mill"]
    ranked = eng.answer_candidates(state_with_trials(eng, "Who grinds corn for Ann?", chain))
    assert eng.graph.title(ranked[0].entity) == "Red Mill"  # nothing named: the search's first chain leads


def test_the_shipped_free_model_counts_a_named_title_against_a_candidate():
    model = ranking.shipped_model(False)
    assert model is not None and "title_named" in model.features
    assert model.weights[model.features.index("title_named")] < 0
    typed = ranking.shipped_model(True)  # fitted before the feature existed, kept as shipped
    assert typed is not None and "title_named" not in typed.features


def test_a_typed_graph_reads_no_title_as_named(monkeypatch):
    eng = ToGEngine(free_graph(CHAIN_TYPED), config=CHEAP, policy=CheapPolicy())
    monkeypatch.setattr(type(eng.graph), "has_relation_labels", property(lambda self: True))
    st = state_with_trials(eng, "Who grinds corn at the mill Ann owns?", CHAIN_TYPED)
    paths = [*st.paths, *(p for s in st.other_searches for p in s.paths)]
    assert all(c.features["title_named"] == 0.0 for c in eng.policy.answer_features(eng, st, paths, None, None))


CHAIN_TYPED = [("Ann", "Red Mill", "owns"), ("Red Mill", "Carl", "employs")]
