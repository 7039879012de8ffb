"""The named rule switches (scoring/rules.py) that bench/rule_table.py measures: a rule switched off changes what its
site reads and comes back on after the block, caches included; the table's verdict removes what carries nowhere."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from tog_core.scoring import rules
from tog_core.scoring.hops import expected_hops
from tog_core.scoring.text import asked_type, tokens

ROOT = Path(__file__).resolve().parents[1]


def _rule_table():
    if str(ROOT / "bench") not in sys.path:  # as `python bench/rule_table.py` runs it: bench/dev_sets.py importable
        sys.path.insert(0, str(ROOT / "bench"))
    spec = importlib.util.spec_from_file_location("rule_table", ROOT / "bench" / "rule_table.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # its dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


def test_a_word_list_switched_off_rebuilds_the_stop_words_and_comes_back():
    assert tokens("which films") == []  # film/movie are stop words for matching
    with rules.switched_off("film_nouns_stop"):
        assert tokens("which films") == ["film"]  # the tokens cache was cleared on the way in
    assert tokens("which films") == [] and not rules.OFF


def test_a_wording_rule_switched_off_changes_its_site_only_inside_the_block():
    q = "who is the name of X 's wife"
    assert expected_hops(q, ["X"]) == 1  # "name" frames the question
    with rules.switched_off("framing_words"):
        assert expected_hops(q, ["X"]) == 2
    assert asked_type("who wrote X")[0]
    with rules.switched_off("asks_for"):
        assert asked_type("who wrote X") == ([], False)
    assert asked_type("what types are the films written by X") == ([], False)  # kinds, not films
    with rules.switched_off("kind_words"):
        assert asked_type("what types are the films written by X")[1] is True


def test_every_rule_of_the_table_has_a_site_or_a_policy_switch():
    from tog_core.policy.cheap import CheapPolicy

    src = "".join(p.read_text(encoding="utf-8") for p in (ROOT / "tog_core").rglob("*.py"))
    switches = set(CheapPolicy().params())
    for rule in _rule_table().RULES:
        if rule.switch:
            assert rule.name in switches, f"{rule.name} is no CheapPolicy switch"
        else:
            assert f'rules.on("{rule.name}")' in src, f"no site reads rules.on({rule.name!r})"


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
