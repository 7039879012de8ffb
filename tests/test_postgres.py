"""PostgreSQL as graph store, against a real server (a throwaway cluster, tests/pg.py; the run store, the command line
and the app on PostgreSQL: tests/test_postgres_runs.py).

Skipped, with the reason, only when PostgreSQL is not installed and TOG_REQUIRE_POSTGRES is unset (CI sets it).
"""
from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path

import numpy as np
import psycopg
import pytest

from builders import ACME_EDGES, GRAPHRAG_SAMPLES, write_project
from tog_core.graphrag.graph import KnowledgeGraph
from tog_core.graphrag.open import open_graph
from tog_core.graphrag.pg_common import StoreError
from tog_core.graphrag import pg_import
from tog_core.graphrag.pg_import import import_graph
from tog_core.lru import LRU
from tog_core.graphrag.postgres import PgGraphStore
from tog_core.tog.engine import ToGEngine
from tog_core.tog.state import EngineConfig

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "demo"
SAMPLES = ["christmas-carol-v1.2", "christmas-carol-v3", "operation-dulce-v3"]


def assert_same_graph(mem, pg, ents, rels):
    """Every GraphStore method (and the batched ones) gives what the in-memory graph gives."""
    assert (pg.n_entities, pg.n_relationships, pg.has_relation_labels) == \
        (mem.n_entities, mem.n_relationships, mem.has_relation_labels)
    assert pg.counts == mem.counts and pg.problems == mem.problems and pg.audit() == mem.audit()
    assert pg.all_titles() == mem.all_titles()
    many = pg.neighbors_many(ents)
    assert pg.entities(ents) == mem.entities(ents) == [mem.entity(i) for i in ents] and pg.entities([]) == []
    assert pg.entity_descriptions(ents) == mem.entity_descriptions(ents) == [mem.entity(i).description for i in ents]
    for i in ents:
        assert pg.entity(i) == mem.entity(i) and pg.title(i) == mem.title(i) and pg.degree(i) == mem.degree(i)
        e = mem.entity(i)
        assert pg.find(e.id) == mem.find(e.id) and pg.find_title(e.title) == mem.find_title(e.title)
        assert pg.find(e.title.upper()) == mem.find(e.title.upper())
        for a, b, c in zip(pg.neighbors(i), mem.neighbors(i), many[i]):
            assert a.dtype == b.dtype and np.array_equal(a, b) and np.array_equal(c, b)
    assert pg.labels(rels) == mem.labels(rels) and pg.descriptions(rels) == mem.descriptions(rels)
    assert pg.relationship_ids(rels) == mem.relationship_ids(rels)
    ev = pg.evidence_many(rels)
    for r in rels:
        assert pg.relationship(r) == mem.relationship(r) and pg.endpoints(r) == mem.endpoints(r)
        assert pg.text_unit_ids(r) == mem.text_unit_ids(r)
        assert pg.evidence(r) == mem.evidence(r) == ev[r]
        rid = mem.relationship(r).id
        assert pg.find_relationship(rid) == mem.find_relationship(rid)
    # the text units near a walk: ids per relationship, the first `limit` distinct units' texts, in the caller's order
    order = list(rels)[::-1]
    for limit in (0, 3, 10_000):
        assert pg.text_units_near(order, limit) == mem.text_units_near(order, limit)
    ids, texts = pg.text_units_near(order, 3)
    met = list(dict.fromkeys(u for r in order for u in ids[r]))
    assert list(texts) == met[:3] and all(texts[u] == next(x.text for r in order for x in mem.evidence(r) if x.id == u)
                                          for u in texts)
    assert pg.text_units_near([], 5) == ({}, {})
    assert pg.find("no such entity anywhere") is None and pg.find_relationship("no-such-rel") is None
    some = list(ents)[::-1] + list(ents)[:3]  # any order, repeats: cached rows and one light query for the rest
    assert pg.degrees_of(some).dtype == np.int64 and np.array_equal(pg.degrees_of(some), mem.degrees_of(some))
    assert np.array_equal(pg.degrees, mem.degrees)
    assert np.array_equal(pg.degrees_of(some), mem.degrees_of(some))  # from the whole array once it is read


def test_demo_imports_and_every_method_matches_memory(demo_pg, demo_mem):
    assert_same_graph(demo_mem, demo_pg, list(range(demo_mem.n_entities)), list(range(demo_mem.n_relationships)))
    with pytest.raises(IndexError):
        demo_pg.entity(demo_mem.n_entities)
    with pytest.raises(IndexError):
        demo_pg.neighbors(-1)


@pytest.mark.parametrize("sample", SAMPLES)
def test_real_graphrag_outputs_match_memory(pg_url, sample):
    path = GRAPHRAG_SAMPLES / sample
    if not path.is_dir():
        pytest.skip(f"{path} is absent (the shared GraphRAG samples are not next to this checkout)")
    mem = KnowledgeGraph.load(path)
    res = import_graph(pg_url, path, name=sample)
    assert res.record.n_relationships == mem.n_relationships and not res.replaced
    rng = random.Random(7)
    ents = rng.sample(range(mem.n_entities), min(150, mem.n_entities)) + [int(np.argmax(mem.degrees))]
    rels = rng.sample(range(mem.n_relationships), min(250, mem.n_relationships))
    with PgGraphStore(pg_url, sample) as pg:
        assert_same_graph(mem, pg, ents, rels)


HOSTILE = [("Straße", "a street, with \"quotes\", commas\nand a newline"), ("STRASSE", ""), ("Twin", "first"),
           ("Twin", "second of the same title"), ("Nul\x00Byte", "a NUL in the title"), ("50% off_sale", "x"),
           ("Hub", "connects everything")]


def test_hostile_values_and_relation_labels_survive_the_copy(pg_url, tmp_path):
    edges = [("Straße", "Hub", "s→h"), ("Twin", "Hub", ""), ("Hub", "Ghost", "to an entity not in the table"),
             ("Hub", "Straße", "back"), ("50% off_sale", "Hub", "sale")]
    proj = write_project(tmp_path / "hostile", HOSTILE, edges, relation_labels=["r1", "", "r3", None, "r5"],
                         text_units={"t1": "text, one", "t2": ""}, edge_units={0: ["t1", "missing", "t2"]})
    mem = KnowledgeGraph.load(proj)
    res = import_graph(pg_url, proj, name="hostile")
    assert any("NUL" in p for p in res.record.problems)
    with PgGraphStore(pg_url, "hostile") as pg:
        nul = mem.find_title("Nul\x00Byte")
        ok = [i for i in range(mem.n_entities) if i != nul]
        assert pg.title(nul) == "Nul\ufffdByte"  # PostgreSQL text cannot hold NUL: stored replaced, reported
        assert pg.has_relation_labels
        for i in ok:
            assert pg.entity(i) == mem.entity(i)
        assert pg.find_title("strasse") == mem.find_title("strasse")  # casefold, not lower(): ß → ss
        assert pg.labels(range(5)) == mem.labels(range(5)) and pg.evidence(0) == mem.evidence(0)
        assert [pg.relationship(r) for r in range(5)] == [mem.relationship(r) for r in range(5)]
        assert pg.search_titles("% off") == [(mem.find_title("50% off_sale"), "50% off_sale", pytest.approx(
            pg.search_titles("% off")[0][2]))]
        assert pg.search_titles("_") and all("_" in t for _, t, _ in pg.search_titles("_"))
        second_twin = mem.all_titles().index("Twin", mem.find_title("Twin") + 1)  # edges go to the first
        lonely = pg.neighbors_many([second_twin, second_twin])
        assert list(lonely) == [second_twin] and [a.dtype for a in lonely[second_twin]] == \
            [a.dtype for a in mem.neighbors(second_twin)] and lonely[second_twin][0].size == 0


def test_big_candidate_sets_bypass_the_cache_with_the_same_answers(demo_pg, demo_mem, monkeypatch):
    from tog_core.graphrag import postgres

    monkeypatch.setattr(postgres, "BIG_BATCH", 10)
    demo_pg.clear_cache()
    rels = np.concatenate([np.arange(demo_mem.n_relationships), [0, 5, 5]])  # duplicates too
    assert demo_pg.labels(rels) == demo_mem.labels(rels)
    assert demo_pg.descriptions(rels) == demo_mem.descriptions(rels)  # served by the batch just fetched
    assert demo_pg.relationship_ids(rels[::-1]) == demo_mem.relationship_ids(rels[::-1])
    assert demo_pg.cache_info()["relationships"] == (0, 0)  # the per-row cache was not touched
    with pytest.raises(IndexError, match="relationship index"):
        demo_pg.labels(np.append(rels, demo_mem.n_relationships))


def test_lru_is_bounded_and_counts():
    c = LRU(2)
    c.put("a", 1)
    c.put_many([("b", 2), ("c", 3)])  # "a" is the least recently used: evicted
    found, missing = c.split(["a", "b", "b", "c", "d", "d"])
    assert found == {"b": 2, "c": 3} and missing == ["a", "d"] and (c.hits, c.misses) == (2, 2)
    c.split(["b"])
    c.put("e", 5)  # "c" is now the oldest
    assert c.split(["c", "b", "e"])[1] == ["c"]


def test_one_store_shared_by_threads(demo_pg, demo_mem):
    from concurrent.futures import ThreadPoolExecutor

    demo_pg.clear_cache()

    def walk(seed):
        rng = random.Random(seed)
        ents = rng.sample(range(demo_mem.n_entities), 40)
        nb = demo_pg.neighbors_many(ents)
        return all(np.array_equal(nb[e][0], demo_mem.neighbors(e)[0]) for e in ents) and \
            demo_pg.labels(np.concatenate([nb[e][0] for e in ents])) == \
            demo_mem.labels(np.concatenate([demo_mem.neighbors(e)[0] for e in ents]))

    with ThreadPoolExecutor(8) as ex:
        assert all(ex.map(walk, range(32)))


def test_search_titles_exact_then_substring_then_fuzzy(demo_pg, demo_mem):
    hits = demo_pg.search_titles("lanternwright guild", limit=5)
    assert hits[0][:2] == (demo_mem.find_title("Lanternwright Guild"), "Lanternwright Guild") and hits[0][2] == 100.0
    sub = demo_pg.search_titles("Lantern", limit=50)
    assert {t for _, t, _ in sub} == {t for t in demo_mem.all_titles() if "lantern" in t.lower()}
    assert [t for _, t, _ in demo_pg.search_titles("Mara Quel", limit=2)][0] == "Mara Quell"  # a typo, by trigrams
    assert demo_pg.search_titles("   ") == [] and demo_pg.search_titles("zzzqqqxxx") == []


def test_search_titles_without_pg_trgm_is_substring_only(pg_url, demo_pg, demo_mem):
    import dataclasses

    with PgGraphStore(pg_url, "demo") as pg:
        pg.record = dataclasses.replace(pg.record, trigram=False)  # as on a server without pg_trgm
        hits = pg.search_titles("lantern", limit=50)
        assert {t for _, t, _ in hits} == {t for t in demo_mem.all_titles() if "lantern" in t.lower()}
        assert [len(t) for _, t, _ in hits] == sorted(len(t) for _, t, _ in hits)  # shortest (closest) first
        assert pg.search_titles("Mara Quel")[0][1] == "Mara Quell" and pg.search_titles("Mara Qwell") == []


def test_reimport_replaces_in_one_transaction(pg_url, demo_mem, monkeypatch):
    first = import_graph(pg_url, DEMO, name="twice")
    old = PgGraphStore(pg_url, "twice")
    second = import_graph(pg_url, DEMO, name="twice")
    assert second.replaced and second.record.schema != first.record.schema
    with pytest.raises(StoreError, match="re-imported"):
        old.neighbors(0)  # the old schema is gone; the message says to open the graph again
    old.close()

    def broken_copy(conn, schema, name, table):
        if name == "adjacency":
            raise RuntimeError("disk full")
        return real_copy(conn, schema, name, table)

    real_copy = pg_import._copy
    monkeypatch.setattr(pg_import, "_copy", broken_copy)
    with pytest.raises(RuntimeError, match="disk full"):
        import_graph(pg_url, DEMO, name="twice")
    with PgGraphStore(pg_url, "twice") as pg, psycopg.connect(pg_url) as conn:
        assert pg.record.schema == second.record.schema
        assert pg.neighbors(0)[0].tolist() == demo_mem.neighbors(0)[0].tolist()
        schemas = {r[0] for r in conn.execute("SELECT nspname FROM pg_namespace WHERE nspname LIKE 'g\\_%'")}
        catalog = {r[0] for r in conn.execute("SELECT schema FROM tog.graphs")}
        assert schemas == catalog  # no schema left behind by the replaced or the failed import


def test_two_projects_side_by_side(pg_url, demo_pg, demo_mem, tmp_path):
    acme = write_project(tmp_path / "acme", [(t, f"{t} desc") for t in ("Alice", "Acme", "Paris")], ACME_EDGES)
    import_graph(pg_url, acme)  # named after its folder
    info, pg = open_graph(str(acme), store=pg_url)
    with pg:
        mem = KnowledgeGraph.load(acme)
        assert info is not None and pg.name == "acme" and pg.all_titles() == mem.all_titles()
        assert pg.find_title("Alice") == mem.find_title("Alice") and demo_pg.find_title("Alice") is None
        assert demo_pg.n_entities == demo_mem.n_entities  # the demo is still there beside it


def test_open_graph_without_and_with_a_store(pg_url, demo_pg, tmp_path, monkeypatch):
    info, g = open_graph(str(DEMO))
    assert isinstance(g, KnowledgeGraph) and info.name == "demo"
    monkeypatch.chdir(tmp_path)
    info, g = open_graph("demo", store=pg_url)  # no folder called "demo" here: the graph's name, no settings
    with g:
        assert info is None and isinstance(g, PgGraphStore) and g.n_entities == demo_pg.n_entities
    with pytest.raises(StoreError, match="store import"):
        open_graph("never-imported", store=pg_url)


def chains(engine, question):
    st = asyncio.run(engine.run(question))
    tr = engine.trace(st)
    return [[(h.source_id, h.relationship_id, h.target_id) for h in c] for c in tr.chains], tr


def engine_as_query_does(graph):
    """What `query demo "<q>" --model none --pruner bm25` builds (compose: the LLM-free CheapPolicy)."""
    from tog_core.compose import RunSpec, build_engine

    return build_engine(RunSpec(model="none", relation_pruner="bm25"), graph=graph, info=None).engine


def engine_plain(graph):
    return ToGEngine(graph, config=EngineConfig(relation_pruner="bm25", entity_pruner="bm25"))


@pytest.mark.parametrize("build", [engine_as_query_does, engine_plain])
def test_parity_same_questions_same_chains(demo_pg, demo_mem, build):
    """Every demo question, LLM-free: the engine on PostgreSQL follows exactly the in-memory chains."""
    questions = [json.loads(line)["question"] for line in (DEMO / "questions.jsonl").read_text().splitlines() if line]
    assert len(questions) >= 10
    walked = 0
    for q in questions:
        want, tm = chains(build(demo_mem), q)
        got, tp = chains(build(demo_pg), q)
        assert got == want, q
        assert (tp.answer, tp.stop_reason) == (tm.answer, tm.stop_reason)
        assert [[c.id for c in s.candidates] for s in tp.steps] == [[c.id for c in s.candidates] for s in tm.steps]
        walked += any(want)
    assert walked >= len(questions) // 2  # the comparison is over real walks, not empty beams
