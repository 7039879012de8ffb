"""Issue #22 item 2, below the pages: the answer candidates a run offers (the trace's own list, else built from its
chains as the page showed them before), a person's choice recorded apart from the search's answer, the exports and
`python -m tog_core export` saying it as a person's choice, and the benchmark never reading it."""
from __future__ import annotations

import ast
import json
from pathlib import Path

from tog_core.app import pick as P
from tog_core.app.views import answer_view, compare_rows
from tog_core.cli.main import main
from tog_core.render.export import export_json
from tog_core.render.export_html import export_html
from tog_core.render.export_md import export_markdown
from tog_core.tog.choice import AnswerCandidate, PersonAnswer, person_answer, recorded_candidates
from tog_core.tog.trace import Link, Seed, Trace

ROOT = Path(__file__).resolve().parents[1]


def link(a: str, rel: str, b: str, score: float = 1.0) -> Link:
    return Link(source=a, source_id=a.lower(), relation=rel, target=b, target_id=b.lower(),
                relationship_id=f"{a}-{b}", score=score)


def trace(**kw) -> Trace:
    """Topic entity S. Chain 1: S → M (stored backwards: M mentors S) → X; chain 2: S → M → Y; chain 3: S → Z."""
    base = dict(question="q?", project="p", config={}, seeds=[Seed(id="s", title="S", how="exact")],
                chains=[[link("M", "mentors", "S", 0.9), link("M", "sailed", "X", 0.8)],
                        [link("M", "mentors", "S", 0.9), link("M", "studied at", "Y", 0.4)],
                        [link("S", "lives in", "Z", 0.2)]],
                answer_entity="X", answer_entity_id="x", run_id="r1")
    return Trace(**{**base, **kw})


def test_an_older_trace_lists_the_answer_first_then_the_chain_ends_walked_from_the_topic_entity():
    cands = P.answer_list(trace())
    assert [(c.title, c.entity_id, c.score) for c in cands] == [("X", "x", 0.8), ("Y", "y", 0.4), ("Z", "z", 0.2)]
    assert P.chain_words(cands[0]) == "S —mentors→ M —sailed→ X"  # walking order, the stored direction aside
    assert (cands[0].chain[0].source_id, cands[0].chain[0].target_id) == ("s", "m")
    assert all(c.sentence == "" for c in cands)  # no graph at hand: no sentence


def test_an_answer_part_way_along_a_chain_comes_first_with_the_chain_up_to_it():
    cands = P.answer_list(trace(answer_entity="M", answer_entity_id="m"))
    assert [c.title for c in cands] == ["M", "X", "Y", "Z"]
    assert P.chain_words(cands[0]) == "S —mentors→ M" and cands[0].score == 0.9


def test_each_entity_once_and_a_trace_without_chains_offers_its_answer_alone():
    t = trace(answer_entity="Y", answer_entity_id="y")
    assert [c.title for c in P.answer_list(t)] == ["Y", "X", "Z"]
    bare = trace(chains=[], answer_entity="Q", answer_entity_id=None)
    assert [(c.title, c.entity_id, c.chain) for c in P.answer_list(bare)] == [("Q", "", ())]
    assert P.answer_list(trace(chains=[], answer_entity=None)) == []


def test_the_recorded_list_wins_and_a_malformed_entry_is_left_out():
    t = trace(candidates=[{"title": "Y", "entity_id": "y", "score": 0.7, "sentence": "Y it is.",
                           "chain": [{"source": "S", "relation": "r", "target": "Y"}, "junk"]},
                          {"entity_id": "no title"}, "junk", {"title": "X", "score": True}])
    got = recorded_candidates(t)
    assert [(c.title, c.score, c.sentence) for c in got] == [("Y", 0.7, "Y it is."), ("X", None, "")]
    assert P.answer_list(t) == got and P.chain_words(got[0]) == "S —r→ Y"
    assert AnswerCandidate.from_dict(got[0].to_dict()) == got[0]


def test_a_graph_gives_an_older_trace_its_supporting_sentences(tmp_path, tog_home, capsys):
    from tog_core.graphrag.graph import KnowledgeGraph

    out = tmp_path / "t.json"
    assert main(["query", str(ROOT / "demo"), "Which ship was captained by the mentor of Ivo Brask?", "--model",
                 "none", "--no-save", "--out", str(out)]) == 0
    t = Trace.from_json(out.read_text(encoding="utf-8"))
    t.candidates = []  # as written before the search recorded its list
    cands = P.answer_list(t, KnowledgeGraph.load(str(ROOT / "demo")))
    assert [c.title for c in cands][:2] == ["Lantern's Promise", "Saltmere Academy of Navigation"]
    assert "studied at the Saltmere Academy of Navigation" in cands[1].sentence
    assert "commanded by Mara Quell" in cands[0].sentence  # the sentence naming both ends of its last link


def test_choose_replaces_clear_removes_and_the_search_answer_is_untouched():
    t = trace()
    x, y, _ = P.answer_list(t)
    one = P.choose(t, y, at="2026-01-01T00:00:00+00:00")
    assert one.person_answer == {"entity_id": "y", "title": "Y", "at": "2026-01-01T00:00:00+00:00"}
    assert t.person_answer is None  # a copy: the trace shown before is not changed under the page
    assert (one.answer_entity, one.answer_entity_id, one.run_id) == ("X", "x", "r1")
    assert P.is_chosen(one, y) and not P.is_chosen(one, x)
    assert P.choice_line(one) == "You chose Y; the search answered X."
    two = P.choose(one, x)
    assert person_answer(two).title == "X" and P.choice_line(two) == "You chose X; the search answered X too."
    assert P.clear(two).person_answer is None and P.choice_line(P.clear(two)) == ""
    back = Trace.from_json(one.to_json())  # saved and read back
    assert person_answer(back) == PersonAnswer(entity_id="y", title="Y", at="2026-01-01T00:00:00+00:00")
    assert PersonAnswer.from_dict({"entity_id": "y"}) is None and PersonAnswer.from_dict("Y") is None


def test_the_search_answer_is_what_every_view_states_whatever_the_person_chose():
    chosen = P.choose(trace(), P.answer_list(trace())[1])
    assert answer_view(chosen)["entity"] == "X"
    rows = {r[""]: r for r in compare_rows(chosen, trace())}
    assert rows["answer (the search's)"]["A"] == rows["answer (the search's)"]["B"] == "X"
    assert (rows["answer chosen by a person"]["A"], rows["answer chosen by a person"]["B"]) == ("Y", "")
    assert {"stopped", "LLM calls", "seconds"} <= set(rows) and not {"stop reason", "llm_calls", "wall_s"} & set(rows)


def test_huge_graph_text_is_shown_cut_and_kept_whole_in_the_trace():
    big = "T" * 1_000_000
    t = trace(chains=[[link("S", "r" * 5000, big)]], answer_entity=big, answer_entity_id=big.lower())
    [c] = P.answer_list(t)
    assert c.title == big  # the data, whole
    words = P.chain_words(c)
    assert len(words) < 2 * P.TITLE_MAX + 20 and words.startswith("S —rrr") and words.endswith("T…")
    line = P.choice_line(P.choose(t, c))
    assert len(line) < 2 * P.TITLE_MAX + 60 and line.endswith("T… too.")
    assert P.cut("a \n b", 10) == "a b" and P.cut("abcdef", 4) == "abc…"


EVIL = "<img src=x onerror=alert(1)> [l](javascript:x) *b*"


def test_exports_say_the_choice_as_a_persons_apart_from_the_search_answer_and_escape_it():
    t = trace()
    evil = AnswerCandidate(title=EVIL, entity_id="e")
    d = P.choose(t, evil, at="2026-01-01T00:00:00+00:00").to_dict()
    md = export_markdown(d)
    part = md.split("## A person's choice of answer", 1)[1].split("## Topic entities", 1)[0]
    assert "Chosen by a person" in part and "not by the search" in part
    assert "- the search's answer: X" in part
    assert "&lt;img src=x" in part and "<img" not in md and "\\[l\\]\\(javascript:x\\)" in part
    assert md.index("## Answer") < md.index("## A person's choice of answer")
    html = export_html(d)
    assert "<h2>A person's choice of answer</h2>" in html and "Chosen by a person" in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html and "<img src=x" not in html
    assert "the search's answer: X</li>" in html
    assert json.loads(export_json(d))["person_answer"]["title"] == EVIL
    assert json.loads(export_json(d))["answer_entity"] == "X"
    assert "person's choice" not in export_markdown(t.to_dict())  # nothing said without a choice


def test_cli_export_shows_the_persons_choice(tmp_path, capsys):
    t = P.choose(trace(), P.answer_list(trace())[2], at="2026-01-01T00:00:00+00:00")
    f = tmp_path / "t.json"
    f.write_text(t.to_json(), encoding="utf-8")
    assert main(["export", str(f), "--format", "md"]) == 0
    out = capsys.readouterr().out
    assert "## A person's choice of answer" in out and "- chosen: **Z** (entity z, at 2026" in out
    assert main(["export", str(f), "--out", str(tmp_path / "t.html")]) == 0
    assert "chosen: <strong>Z</strong>" in (tmp_path / "t.html").read_text(encoding="utf-8")


def test_the_benchmark_never_reads_a_persons_choice():
    """`bench kgqa` scores the engine's own answer (engine.answer_choice → answer_entity); no module of the
    benchmark, nor a script of bench/, names the person's choice, so it cannot count as the search's answer."""
    files = sorted((ROOT / "tog_core" / "bench").glob("*.py")) + sorted((ROOT / "bench").glob("*.py"))
    assert len(files) >= 3
    for path in files:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
        names |= {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        names |= {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
        assert not {x for x in names if "person_answer" in x or x in ("PersonAnswer", "choice_line")}, path


def test_both_run_stores_keep_the_choice_under_the_same_run(tmp_path, pg_url):
    """Saving a run again with a choice replaces it in the files and in PostgreSQL: one run, the choice read back."""
    from tog_core.runs.files import RunStore
    from tog_core.runs.postgres import PgRunStore

    pg = PgRunStore(pg_url, user="pick")
    for store in (RunStore(tmp_path / "runs"), pg):
        t = trace(run_id="20260101-000000-abcdef")
        store.save(t)
        store.save(P.choose(t, P.answer_list(t)[1], at="2026-01-01T00:00:00+00:00"))
        back = store.load(t.run_id)
        assert person_answer(back) == PersonAnswer(entity_id="y", title="Y", at="2026-01-01T00:00:00+00:00")
        # saved again, not twice (the shared cluster may list other tests' runs beside it)
        assert back.answer_entity == "X" and [r.run_id for r in store.list()].count(t.run_id) == 1
        store.save(P.clear(back))
        assert store.load(t.run_id).person_answer is None
    pg.close()
