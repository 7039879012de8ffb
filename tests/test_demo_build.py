"""The demo project is built from its world file: demo/build_demo.py reading demo/world.yaml reproduces the
committed demo/output tables, demo/questions.jsonl and demo/input exactly, and its checks catch a broken world."""
from __future__ import annotations

import copy
import importlib.util
from pathlib import Path

import pandas as pd
import pytest

DEMO = Path(__file__).resolve().parents[1] / "demo"
TABLES = ("entities", "relationships", "text_units", "documents", "communities")


@pytest.fixture(scope="module")
def builder():
    spec = importlib.util.spec_from_file_location("build_demo", DEMO / "build_demo.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def built(builder, tmp_path_factory):
    root = tmp_path_factory.mktemp("demo")
    world = builder.load_world()
    tables, questions, doc_text = builder.build(world)
    builder.check(tables, questions)
    builder.write(root, tables, questions, doc_text, world["document"])
    return root


def _frame(path: Path) -> pd.DataFrame:
    # list columns come back as numpy arrays; compare them as lists
    df = pd.read_parquet(path)
    return df.apply(lambda col: col.map(lambda v: list(v) if hasattr(v, "tolist") and not isinstance(v, str) else v))


@pytest.mark.parametrize("name", TABLES)
def test_rebuild_reproduces_the_committed_table(built, name):
    committed, rebuilt = _frame(DEMO / "output" / f"{name}.parquet"), _frame(built / "output" / f"{name}.parquet")
    assert list(rebuilt.columns) == list(committed.columns)
    assert len(rebuilt) == len(committed)
    for column in committed.columns:  # every column, ids and text_unit_ids included
        assert rebuilt[column].tolist() == committed[column].tolist(), f"{name}.{column} differs"
    assert pd.read_parquet(built / "output" / f"{name}.parquet").dtypes.equals(
        pd.read_parquet(DEMO / "output" / f"{name}.parquet").dtypes)


def test_rebuild_reproduces_questions_and_document(built):
    assert (built / "questions.jsonl").read_text(encoding="utf-8") == \
        (DEMO / "questions.jsonl").read_text(encoding="utf-8")
    assert (built / "input" / "verdant_isles.txt").read_text(encoding="utf-8") == \
        (DEMO / "input" / "verdant_isles.txt").read_text(encoding="utf-8")


def test_the_world_file_is_what_the_tables_say(builder):
    # a fact edited in the world file changes the table (the builder reads the data, it does not hold it)
    world = copy.deepcopy(builder.load_world())
    row = next(r for r in world["relationships"] if r[0] == "Ivo Brask" and r[1] == "captained")
    row[4] = "Ivo Brask sailed the ship Gray Heron."
    tables, _, _ = builder.build(world)
    descriptions = {(r["source"], r["target"]): r["description"] for r in tables["relationships"]}
    assert descriptions[("Ivo Brask", "Gray Heron")] == "Ivo Brask sailed the ship Gray Heron."


def test_a_question_whose_path_no_longer_reaches_its_answer_stops_the_build(builder):
    world = copy.deepcopy(builder.load_world())
    q = next(q for q in world["questions"] if q["question"] == "Which ship did Ivo Brask captain?")
    q["answers"] = ["Lantern's Promise"]
    with pytest.raises(AssertionError, match="Which ship did Ivo Brask captain"):
        builder.build(world)


def test_a_relationship_no_passage_states_fails_the_check(builder):
    world = copy.deepcopy(builder.load_world())
    row = next(r for r in world["relationships"] if r[0] == "Ivo Brask" and r[1] == "captained")
    row[3] = [0]  # the opening passage, about the islands, never names Ivo Brask
    tables, questions, _ = builder.build(world)
    with pytest.raises(AssertionError, match="Ivo Brask captained"):
        builder.check(tables, questions)
