"""Which two runs Compare opens with (tog_core/app/compare_pick.py), on lists checkable by eye (newest first)."""
from __future__ import annotations

from tog_core.app.compare_pick import Pair, default_pair


def rows(*runs: tuple[str, str]) -> list[dict[str, str]]:
    return [{"run": run, "question": q} for run, q in runs]


def test_the_newest_two_runs_of_one_question_not_the_newest_two_runs():
    listed = rows(("r4", "Who?"), ("r3", "Where?"), ("r2", "Where?"), ("r1", "Who?"))
    assert default_pair(listed, {}) == Pair(a="r3", b="r2", same=True)  # Who?'s pair is older (r1)
    listed = rows(("r3", "Who?"), ("r2", "Where?"), ("r1", "Who?"))
    assert default_pair(listed, {}) == Pair(a="r3", b="r1", same=True)


def test_spaces_aside_the_same_question_and_only_on_one_project():
    listed = rows(("r3", "Who is it?"), ("r2", "Who  is\nit?"), ("r1", "Who is it?"))
    assert default_pair(listed, {"r3": "/p/demo", "r2": "/p/other", "r1": "/p/demo"}) == Pair(a="r3", b="r1",
                                                                                               same=True)
    assert default_pair(listed, {"r3": "/p/demo", "r2": "demo", "r1": "/p/other"}) == Pair(a="r3", b="r2",
                                                                                           same=True)


def test_without_a_shared_question_the_newest_two_and_it_says_so():
    assert default_pair(rows(("r3", "Who?"), ("r2", "Where?"), ("r1", "When?")), {}) == Pair(a="r3", b="r2",
                                                                                             same=False)
    assert default_pair(rows(("r3", "Who?"), ("r2", "Who?")), {"r3": "/p/a", "r2": "/p/b"}).same is False
    assert default_pair(rows(("r1", "Who?")), {}) is None
