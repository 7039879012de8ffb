"""Long questions (issue #23 item 8): the question's reading is n log n, not words x marks, with the same bands
as before; a question past MAX_QUESTION_CHARS is refused by the engine and the CLI with one line naming the limit."""
from __future__ import annotations

import random

import pytest

from builders import question_bands
from tog_core.cli.main import main
from tog_core.scoring import question
from tog_core.tog.limits import MAX_QUESTION_CHARS, question_too_long


def brute_gap(pos: int, marks: list[tuple[int, int]], word: str = "") -> int:
    """The distance as first written: every mark looked at for every word."""
    return min(a - pos - len(word) if pos < a else max(0, pos - b) for a, b in marks)


def test_the_nearest_mark_by_binary_search_is_the_nearest_by_looking_at_every_mark():
    rng = random.Random(7)
    for _ in range(300):
        marks = []
        for _ in range(rng.randint(1, 8)):  # topic spans may overlap; question words never do
            a = rng.randint(0, 200)
            marks.append((a, a + rng.randint(1, 30)))
        gaps = question._Gaps(marks)
        for _ in range(30):
            pos, word = rng.randint(0, 240), "x" * rng.randint(0, 12)
            assert gaps(pos, word) == brute_gap(pos, marks, word), (marks, pos, word)


def test_bands_of_a_long_repetitive_question_are_the_ones_every_mark_gives(monkeypatch):
    q = "Who directed the films written by the writer of Alien, and who produced them? " * 40
    fast = question_bands(q, ["Alien"], 3)

    class Brute:  # the old definition, every mark for every word
        def __init__(self, marks):
            self.marks = marks

        def __call__(self, pos, word=""):
            return brute_gap(pos, self.marks, word)

    monkeypatch.setattr(question, "_Gaps", Brute)
    assert question_bands(q, ["Alien"], 3) == fast and fast


def test_a_question_past_the_limit_is_refused_by_the_engine_naming_the_limit(demo_project):
    from tog_core.graphrag.open import open_graph
    from tog_core.tog.engine import ToGEngine
    from tog_core.tog.state import EngineConfig

    _info, graph = open_graph(str(demo_project))
    engine = ToGEngine(graph, config=EngineConfig(relation_pruner="bm25", entity_pruner="bm25"))
    ok = "Who founded the Lanternwright Guild? ".ljust(MAX_QUESTION_CHARS)
    assert engine.start(ok).paths  # at the limit: answered
    with pytest.raises(ValueError, match="MAX_QUESTION_CHARS") as err:
        engine.start(ok + "x")
    assert "\n" not in str(err.value) and f"{MAX_QUESTION_CHARS:,}" in str(err.value)
    assert question_too_long("  " + ok + "  ") is None  # spaces around it do not count


def test_the_cli_refuses_a_question_past_the_limit_with_one_line_and_exit_2(capsys, tog_home):
    q = "Who founded the Lanternwright Guild? " * 200
    assert len(q) > MAX_QUESTION_CHARS
    assert main(["query", "demo", q, "--model", "none", "--no-save"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    [line] = captured.err.strip().splitlines()
    assert f"{MAX_QUESTION_CHARS:,}" in line and "MAX_QUESTION_CHARS" in line
