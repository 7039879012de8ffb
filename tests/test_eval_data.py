"""The evaluation data of bench/data: every question set passes the checker against its graph, the checker catches
what it claims to catch, and the two multilingual projects load through KnowledgeGraph with their counts and their
non-ASCII titles intact (and match the sources they are built from).

The Christmas Carol sets need ../shared/data (a real GraphRAG output, not in this repository); without it the cases
that read it skip and say so. Everything else uses files committed under bench/data.
"""
from __future__ import annotations

import dataclasses
import importlib.util
import json
import sys
from collections import Counter
from pathlib import Path

import pytest

from tog_core.graphrag.graph import KnowledgeGraph

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "bench" / "data"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"bench_data_{name}", DATA / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


checker = _load("check_questions")
builder = _load("build_multilingual")
PAIRS = checker.discover()
FR, ZH = DATA / "fr-atelier", DATA / "zh-chayuan"


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


# ------------------------------------------------------------------ every question file passes the checker

def test_the_question_files_are_all_found():
    names = sorted(f"{q.parent.name}/{q.name}" for q, _ in PAIRS)
    assert names == ["christmas-carol-v1.2/questions_blind.jsonl", "christmas-carol-v1.2/questions_blind13.jsonl",
                     "christmas-carol-v1.2/questions_blind3.jsonl",
                     "christmas-carol-v1.2/questions_blind5.jsonl", "christmas-carol-v1.2/questions_blind6.jsonl",
                     "christmas-carol-v1.2/questions_dev.jsonl",
                     "christmas-carol-v1.2/questions_dev2.jsonl", "christmas-carol-v1.2/questions_dev_hub.jsonl",
                     "christmas-carol/questions_blind10.jsonl", "christmas-carol/questions_blind11.jsonl",
                     "christmas-carol/questions_blind12.jsonl", "christmas-carol/questions_blind2.jsonl",
                     "christmas-carol/questions_blind4.jsonl", "christmas-carol/questions_blind7.jsonl",
                     "christmas-carol/questions_blind8.jsonl", "christmas-carol/questions_blind9.jsonl",
                     "christmas-carol/questions_dev.jsonl",
                     "christmas-carol/questions_dev2.jsonl", "christmas-carol/questions_dev3.jsonl",
                     "christmas-carol/questions_dev_hub.jsonl", "christmas-carol/questions_test.jsonl",
                     "fr-atelier/questions_dev.jsonl",
                     "operation-dulce/questions_blind.jsonl", "operation-dulce/questions_dev.jsonl",
                     "zh-chayuan/questions_dev.jsonl"]


@pytest.mark.parametrize(("questions", "output"), PAIRS, ids=[f"{q.parent.name}/{q.stem}" for q, _ in PAIRS])
def test_question_file_passes_the_checker(questions: Path, output: Path):
    if not checker.table_path(output, "entities").is_file():
        pytest.skip(f"the GraphRAG output {output} is not here (../shared/data holds the Christmas Carol index)")
    problems, rows = checker.check_file(questions, output)
    if "blind" in questions.name:  # a blind set's failure names no title or quote in the log: count only
        n = len(problems)
        assert n == 0, f"{n} problem(s); run bench/data/check_questions.py on {questions.name} to read them"
    else:
        assert problems == []
    assert rows


@pytest.mark.parametrize(("folder", "per_level"), [(FR, 8), (ZH, 8)], ids=["fr", "zh"])
def test_multilingual_sets_have_eight_questions_per_hop_and_name_their_topics(folder: Path, per_level: int):
    rows = _rows(folder / "questions_dev.jsonl")
    assert Counter(q["hops"] for q in rows) == {1: per_level, 2: per_level, 3: per_level}
    for q in rows:  # linking from the question can only work if the topic is named in it
        assert all(t.casefold() in q["question"].casefold() for t in q["topic_entities"]), q["id"]
        assert q["answer_min_hops"] == q["hops"], q["id"]  # no shortcut: the answer is exactly `hops` away


def test_christmas_carol_splits_are_sized_and_kept_apart():
    dev = _rows(DATA / "christmas-carol" / "questions_dev.jsonl")
    test = _rows(DATA / "christmas-carol" / "questions_test.jsonl")
    assert Counter(q["hops"] for q in dev) == {1: 15, 2: 15, 3: 10}
    assert len(test) == 20 and set(Counter(q["hops"] for q in test)) == {1, 2, 3}
    assert not {q["question"] for q in dev} & {q["question"] for q in test}
    assert not {q["id"] for q in dev} & {q["id"] for q in test}
    assert all(q["id"].startswith("cc-dev-") for q in dev) and all(q["id"].startswith("cc-test-") for q in test)


BLIND = DATA / "christmas-carol-v1.2" / "questions_blind.jsonl"
CC12 = ROOT.parent / "shared" / "data" / "graphrag" / "christmas-carol-v1.2" / "output"
BLIND2 = DATA / "christmas-carol" / "questions_blind2.jsonl"
BLIND3 = DATA / "christmas-carol-v1.2" / "questions_blind3.jsonl"
BLIND4 = DATA / "christmas-carol" / "questions_blind4.jsonl"
BLIND5 = DATA / "christmas-carol-v1.2" / "questions_blind5.jsonl"
BLIND6 = DATA / "christmas-carol-v1.2" / "questions_blind6.jsonl"
BLIND7 = DATA / "christmas-carol" / "questions_blind7.jsonl"
BLIND8 = DATA / "christmas-carol" / "questions_blind8.jsonl"
BLIND9 = DATA / "christmas-carol" / "questions_blind9.jsonl"
BLIND10 = DATA / "christmas-carol" / "questions_blind10.jsonl"
BLIND11 = DATA / "christmas-carol" / "questions_blind11.jsonl"
BLIND12 = DATA / "christmas-carol" / "questions_blind12.jsonl"
BLIND13 = DATA / "christmas-carol-v1.2" / "questions_blind13.jsonl"
CC3 = ROOT.parent / "shared" / "data" / "graphrag" / "christmas-carol-v3" / "output"
DULCE_BLIND = DATA / "operation-dulce" / "questions_blind.jsonl"
DULCE = ROOT.parent / "shared" / "data" / "graphrag" / "operation-dulce-v3" / "output"


@pytest.mark.parametrize("path, per_hop, prefix", [(BLIND, 12, "cc12-blind-"), (BLIND2, 10, "cc-blind2-"),
                                                  (BLIND3, 10, "cc12-blind3-"), (DULCE_BLIND, 4, "dulce-blind-"),
                                                  (BLIND4, 10, "cc-blind4-"), (BLIND5, 10, "cc12-blind5-"),
                                                  (BLIND6, {1: 10, 2: 11, 3: 3}, "cc12-blind6-"),
                                                  (BLIND7, 10, "cc-blind7-"), (BLIND8, 10, "cc-blind8-"),
                                                  (BLIND9, 10, "cc-blind9-"), (BLIND10, 10, "cc-blind10-"),
                                                  (BLIND11, 10, "cc-blind11-"), (BLIND12, 10, "cc-blind12-"),
                                                  (BLIND13, {1: 18, 2: 11, 3: 1}, "cc12-blind13-")],
                         ids=["blind (1.2)", "blind2 (3.x)", "blind3 (1.2)", "dulce-blind", "blind4 (3.x)",
                              "blind5 (1.2)", "blind6 (1.2)", "blind7 (3.x)", "blind8 (3.x)", "blind9 (3.x)",
                              "blind10 (3.x)", "blind11 (3.x)", "blind12 (3.x)", "blind13 (1.2)"])
def test_each_blind_set_is_sized_sourced_and_apart_from_every_other_set(path, per_hop, prefix):
    """A blind set: the same number of questions per hop level (or the counts given, for blind6 and blind13, whose
    graph holds only three, then one, clean three-hop paths once the earlier sets' relationships are left out), each
    hop backed by a quoted passage, no shortcut, and no question or id shared with another set."""
    rows = _rows(path)
    expected = per_hop if isinstance(per_hop, dict) else {1: per_hop, 2: per_hop, 3: per_hop}
    assert Counter(q["hops"] for q in rows) == expected
    assert all(q["id"].startswith(prefix) for q in rows)
    assert all(len(q["quotes"]) == q["hops"] == q["answer_min_hops"] for q in rows)
    others = [q for other, _ in PAIRS if other != path for q in _rows(other)]
    assert not {q["question"].casefold() for q in rows} & {q["question"].casefold() for q in others}
    assert not {q["id"] for q in rows} & {q["id"] for q in others}


def test_checker_reads_graphrag_1_tables_and_checks_quotes_against_the_text_units():
    if not (CC12 / "create_final_entities.parquet").is_file():
        pytest.skip(f"the GraphRAG 1.2 output {CC12} is not here (../shared/data holds it)")
    graph = checker.Graph.load(CC12)
    q = next(q for q in _rows(BLIND) if q["hops"] == 2)
    assert checker.check_question(q, graph, "q") == []
    moved = {**q, "quotes": [q["quotes"][0], "a phrase the book never prints"]}
    assert any("quote 2" in p and "no text unit" in p for p in checker.check_question(moved, graph, "q"))
    short = {**q, "quotes": q["quotes"][:1]}
    assert any("'quotes' must hold 2" in p for p in checker.check_question(short, graph, "q"))


@pytest.mark.parametrize("path, output", [(BLIND, CC12), (BLIND2, CC3), (BLIND3, CC12), (DULCE_BLIND, DULCE),
                                          (BLIND4, CC3), (BLIND5, CC12), (BLIND6, CC12), (BLIND7, CC3),
                                          (BLIND8, CC3), (BLIND9, CC3), (BLIND10, CC3), (BLIND11, CC3),
                                          (BLIND12, CC3), (BLIND13, CC12)],
                         ids=["blind (1.2)", "blind2 (3.x)", "blind3 (1.2)", "dulce-blind", "blind4 (3.x)",
                              "blind5 (1.2)", "blind6 (1.2)", "blind7 (3.x)", "blind8 (3.x)", "blind9 (3.x)",
                              "blind10 (3.x)", "blind11 (3.x)", "blind12 (3.x)", "blind13 (1.2)"])
def test_the_bench_loader_finds_every_blind_title(path, output):
    """`bench kgqa` opens the output through KnowledgeGraph: every topic entity and answer is found there too (the
    checker above reads the parquet tables itself)."""
    if not checker.table_path(output, "entities").is_file():
        pytest.skip(f"the GraphRAG output {output} is not here (../shared/data holds it)")
    g = KnowledgeGraph.load(output)
    titles = {t for q in _rows(path) for t in q["topic_entities"] + q["answers"]}
    missing = sum(g.find_title(t) is None for t in titles)  # a count: the log shows no blind title
    assert missing == 0, f"{missing} title(s) not found"


def _hops(q: dict, graph) -> set[frozenset[str]]:
    """The relationships (as unordered pairs of titles) along a question's evidence walk from its topic entities."""
    return {pair for end, used in graph.evidence_walks(q["topic_entities"], q["evidence"]) if end in q["answers"]
            for pair in used}


# each graph's question sets in the order they were written: a blind set's "earlier sets" are the ones before it
WRITTEN = {
    CC3: [f"christmas-carol/questions_{n}.jsonl" for n in
          ("dev", "dev2", "dev3", "test", "blind2", "blind4", "blind7", "dev_hub", "blind8", "blind9", "blind10",
           "blind11", "blind12")],
    CC12: [f"christmas-carol-v1.2/questions_{n}.jsonl" for n in
           ("dev", "dev2", "blind", "blind3", "blind5", "dev_hub", "blind6", "blind13")],
    DULCE: ["operation-dulce/questions_dev.jsonl", "operation-dulce/questions_blind.jsonl"],
}


@pytest.mark.parametrize("path, output, starts_apart", [
    (BLIND2, CC3, False), (BLIND3, CC12, True), (DULCE_BLIND, DULCE, True), (BLIND4, CC3, True), (BLIND5, CC12, True),
    (BLIND6, CC12, True), (BLIND7, CC3, True), (BLIND8, CC3, True), (BLIND9, CC3, True), (BLIND10, CC3, True),
    (BLIND11, CC3, True), (BLIND12, CC3, True), (BLIND13, CC12, True),
], ids=["blind2 (3.x)", "blind3 (1.2)", "dulce-blind", "blind4 (3.x)", "blind5 (1.2)", "blind6 (1.2)", "blind7 (3.x)",
        "blind8 (3.x)", "blind9 (3.x)", "blind10 (3.x)", "blind11 (3.x)", "blind12 (3.x)", "blind13 (1.2)"])
def test_a_later_blind_set_keeps_the_protocol_its_readme_states(path, output, starts_apart):
    """What bench/data/README.md says of blind2, blind3, dulce-blind, blind4, blind5, blind6, blind7, blind8, blind9,
    blind10, blind11, blind12 and blind13 and the checker does not check: no hop is a relationship the earlier sets on
    the graph use, no relationship is used twice, no answer has an empty type or is a licence entity, and (blind3,
    dulce-blind, blind4, blind5, blind6, blind7, blind8, blind9, blind10, blind11, blind12, blind13) no two- or
    three-hop question starts where an earlier set's question does.
    Failures are counts: the log shows nothing of a blind question."""
    if not checker.table_path(output, "entities").is_file():
        pytest.skip(f"the GraphRAG output {output} is not here (../shared/data holds it)")
    graph = checker.Graph.load(output)
    rows = _rows(path)
    written = WRITTEN[output]
    others = written[:written.index(str(path.relative_to(DATA)))]
    earlier = [q for name in others for q in _rows(DATA / name)]
    used_before = set().union(*(_hops(q, graph) for q in earlier))
    mine = [_hops(q, graph) for q in rows]
    assert sum(len(h) == q["hops"] for h, q in zip(mine, rows)) == len(rows), "evidence walks not found"
    reused = sum(len(h & used_before) for h in mine)
    assert reused == 0, f"{reused} hop(s) reuse a relationship of an earlier set"
    twice = sum(Counter(pair for h in mine for pair in h).values()) - len(set().union(*mine))
    assert twice == 0, f"{twice} relationship(s) used twice in the set"
    bad = sum(not graph.types.get(a) or "GUTENBERG" in a.upper() or "LICENSE" in a.upper()
              for q in rows for a in q["answers"])
    assert bad == 0, f"{bad} answer(s) with an empty type or a licence title"
    if starts_apart:
        starts = {t for q in earlier for t in q["topic_entities"]}
        shared = sum(bool(set(q["topic_entities"]) & starts) for q in rows if q["hops"] > 1)
        assert shared == 0, f"{shared} multi-hop question(s) start where an earlier set's question does"


# ------------------------------------------------------------------ the checker catches what it claims to

@pytest.fixture(scope="module")
def fr_graph():
    return checker.Graph.load(FR / "output")


@pytest.fixture(scope="module")
def two_hop() -> dict:
    return next(q for q in _rows(FR / "questions_dev.jsonl") if q["hops"] == 2)


def _problems(q: dict, graph) -> list[str]:
    return checker.check_question(q, graph, "q")


def test_checker_accepts_a_right_question(fr_graph, two_hop):
    assert _problems(two_hop, fr_graph) == []


@pytest.mark.parametrize(("change", "expected"), [
    ({"hops": 1}, "no simple path of exactly 1 hops"),
    ({"hops": 3}, "2 evidence strings for 3 hops"),
    ({"hops": 7}, "outside 1..6"),
    ({"answer_type": "GEO"}, "is not the type of any answer"),
    ({"answer_min_hops": 1}, "nearest answer is 2 hops away"),
    ({"question": ""}, "field 'question' missing"),
    ({"topic_entities": "Émile Garnier"}, "field 'topic_entities'"),
])
def test_checker_reports_a_wrong_field(fr_graph, two_hop, change, expected):
    problems = _problems({**two_hop, **change}, fr_graph)
    assert any(expected in p for p in problems), problems


def test_checker_names_an_unknown_title_and_the_right_case(fr_graph, two_hop):
    q = {**two_hop, "topic_entities": [t.upper() for t in two_hop["topic_entities"]]}
    problems = _problems(q, fr_graph)
    assert any("is not an entity title" in p and "did you mean" in p for p in problems), problems


def test_checker_rejects_evidence_that_is_not_a_description_or_out_of_order(fr_graph, two_hop):
    invented = {**two_hop, "evidence": [two_hop["evidence"][0], "Une phrase qui n'est dans aucune relation."]}
    assert any("not a relationship description" in p for p in _problems(invented, fr_graph))
    swapped = {**two_hop, "evidence": list(reversed(two_hop["evidence"]))}
    assert any("do not lead, in order" in p for p in _problems(swapped, fr_graph))
    short = {**two_hop, "evidence": two_hop["evidence"][:1]}
    assert any("1 evidence strings for 2 hops" in p for p in _problems(short, fr_graph))


def test_checker_reports_duplicate_ids_and_bad_lines(tmp_path: Path, two_hop):
    path = tmp_path / "questions_dev.jsonl"
    path.write_text(json.dumps(two_hop, ensure_ascii=False) + "\n"
                    + json.dumps({**two_hop, "question": two_hop["question"] + " (bis)"}, ensure_ascii=False)
                    + "\n{not json\n", encoding="utf-8")
    problems, rows = checker.check_file(path, FR / "output")
    assert len(rows) == 2
    assert any("is used 2 times" in p for p in problems)
    assert any(":3: not JSON" in p for p in problems)


def test_checker_command_exits_1_and_prints_one_line_per_problem(tmp_path: Path, two_hop, capsys):
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps({**two_hop, "answers": ["Personne Inconnue"]}, ensure_ascii=False) + "\n",
                    encoding="utf-8")
    assert checker.main([str(path), str(FR / "output")]) == 1
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1 and "'Personne Inconnue' is not an entity title" in out[0]
    assert checker.main([str(FR / "questions_dev.jsonl"), str(FR / "output")]) == 0


# ------------------------------------------------------------------ the multilingual projects

@pytest.mark.parametrize(("folder", "counts", "titles"), [
    (FR, {"entities": 61, "relationships": 138, "text_units": 15},
     ["Émile Garnier", "Société des Horlogers de Vézenay", "Chronomètre « Étoile du Nord »", "Église Saint-Éloi"]),
    (ZH, {"entities": 60, "relationships": 132, "text_units": 15},
     ["青山茶园", "林秋水", "紫砂壶“听松”", "《茶经新注》"]),
], ids=["fr", "zh"])
def test_multilingual_project_loads_with_its_counts_and_titles(folder: Path, counts: dict, titles: list[str]):
    g = KnowledgeGraph.load(folder)
    assert g.info is not None and g.info.version == "3.x"
    assert {k: g.counts[k] for k in counts} == counts
    assert g.counts["placeholder_entities"] == 0 and g.counts["reversed_duplicates"] == 1
    for title in titles:
        idx = g.find_title(title)
        assert idx is not None, title
        assert g.title(idx) == title  # the exact characters, not a folded or re-encoded form
    assert sum(any(ord(c) > 127 for c in t) for t in g.all_titles()) >= 20
    types = Counter(g.entity(i).type for i in range(g.n_entities))
    assert set(types) == {"PERSON", "ORGANIZATION", "GEO", "EVENT", "OBJECT"}
    hubs = sorted(g.degrees.tolist(), reverse=True)
    assert hubs[0] >= 10 and hubs[2] >= 8  # a couple of hubs, as a GraphRAG index has


@pytest.mark.parametrize("folder", [FR, ZH], ids=["fr", "zh"])
def test_every_relationship_cites_a_text_unit_that_names_both_ends(folder: Path):
    entities = {e["title"]: e for e in builder.load_world(folder).entities}  # titles and the short names the prose uses
    g = KnowledgeGraph.load(folder)
    for r in range(g.n_relationships):
        a, b = (entities[g.title(i)] for i in g.endpoints(r))
        units = g.evidence(r)
        assert units, (a["title"], b["title"])
        assert any(builder.mentions(u.text, a) and builder.mentions(u.text, b) for u in units), (a["title"], b["title"])


def test_committed_parquet_files_match_their_sources(capsys):
    assert builder.main(["--check"]) == 0, capsys.readouterr().out


def test_builder_refuses_sources_that_disagree():
    world = builder.load_world(ZH)
    rel = world.relationships[0]
    moved = dataclasses.replace(world, relationships=[dataclasses.replace(rel, units=("c09",)),
                                                      *world.relationships[1:]])
    assert builder.validate(moved) == [
        f"relationship '{rel.source}' -> '{rel.target}': text unit c09 does not mention both"]
    unknown = dataclasses.replace(world, relationships=[dataclasses.replace(rel, target="不存在的地方"),
                                                       *world.relationships[1:]])
    assert any("'不存在的地方' is not an entity" in p for p in builder.validate(unknown))
