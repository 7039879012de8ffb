"""bench/rule_table.py's verdict removes what carries nowhere. (Each rule switched off, one row each, and the rows
covering every rule of the table: tests/test_rule_rows.py.)"""
from __future__ import annotations

from bench_scripts import _rule_table


def test_the_verdict_removes_a_rule_that_helps_only_where_it_was_read():
    rt = _rule_table()
    rule = rt.Rule("x", "somewhere", ("cc",), "abc")
    quiet = {c: (0, 0) for c in ("cc", "fr", "mqa1", "pq2")}
    assert rt.verdict(rule, quiet) == "remove: changes no question"
    assert rt.verdict(rule, {**quiet, "cc": (2, 3), "fr": (0, 1)}).startswith("remove: helps only where read (+2")
    assert rt.verdict(rule, {**quiet, "cc": (2, 3), "fr": (1, 1)}) == "keep"  # helps another set too
    assert rt.verdict(rule, {**quiet, "cc": (-1, 3)}) == "remove: helps no set"
    # read from MetaQA and helping only there, but off would cost it two questions: kept, and the table says why
    typed = rt.Rule("y", "somewhere", ("mqa1",), "abc")
    assert rt.verdict(typed, {**quiet, "mqa1": (2, 2), "fr": (-1, 1)}) == "keep (typed): off costs MQA-1 2"
    assert rt.verdict(typed, {**quiet, "mqa1": (1, 1), "fr": (-1, 1)}).startswith("remove")  # one is within margin
    # the held-out column never decides
    assert rt.verdict(rule, {**quiet, "cc": (2, 3), "cc-test": (3, 3)}).startswith("remove")
