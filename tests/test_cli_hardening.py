"""CLI and loader hardening (issue 23, item 11): graph text never reaches the terminal as control, escape or bidi
characters (human-readable output shows them as escapes; --json keeps JSON escaping); a blank `--name` is refused
instead of replacing the folder's graph; `--resume ''` and run ids with a trailing newline are refused; relationship
weights that are missing, not numbers or not finite are read as the default weight with one counted problem line.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from builders import write_project
from tog_core.cli.main import main
from tog_core.cli.terminal import safe
from tog_core.graphrag.graph import KnowledgeGraph
from tog_core.graphrag.pg_common import StoreError, graph_name
from tog_core.runs.files import RunStore

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "demo"
ESC = "\x1b[2J\x1b[31mRED\x1b[0m"
BIDI = "\u202eevil\u202c\u2066iso\u2069"
HOSTILE = [f"Start {ESC}", f"Mid {BIDI}", "Car\rriage", "New\nLine\x07bell", "Zero\u200bwidth\x85c1"]
UNSAFE_CHARS = ["\x1b", "\u202e", "\u202c", "\u2066", "\u2069", "\r", "\x07", "\u200b", "\x85"]


def _no_raw_controls(text: str) -> None:
    for c in UNSAFE_CHARS:
        assert c not in text, repr(c)


def test_safe_escapes_controls_and_bidi_but_keeps_text():
    assert safe("a\x1b[31mb") == "a\\x1b[31mb"
    assert safe("\u202eabc") == "\\u202eabc"
    assert safe("one\ntwo\tthree") == "one\ntwo\tthree"
    assert safe("one\ntwo", one_line=True) == "one\\ntwo"
    assert safe("Zoë – naïve 東京 🙂") == "Zoë – naïve 東京 🙂"


@pytest.fixture(scope="module")
def hostile_project(tmp_path_factory):
    root = tmp_path_factory.mktemp("cli") / f"proj {ESC} {BIDI}"
    ents = [(t, f"{t} described {ESC}") for t in HOSTILE]
    edges = [(HOSTILE[0], HOSTILE[k], f"leads {BIDI} to \r{HOSTILE[k]}") for k in range(1, len(HOSTILE))]
    edges.append((HOSTILE[0], f"Missing {ESC}", "to a placeholder"))
    write_project(root, ents, edges)
    return root


def test_query_output_shows_control_and_bidi_characters_as_escapes(hostile_project, capsys):
    args = ["query", str(hostile_project), "Where does Start lead?", "--model", "none", "--pruner", "bm25",
            "--seed", HOSTILE[0], "--no-save"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "Chains:" in out and "\\x1b[31mRED" in out and "\\u202eevil" in out
    _no_raw_controls(out)
    chain_lines = [ln for ln in out.splitlines() if ln.startswith("  [")]
    assert chain_lines and all("\\n" in ln or "New" not in ln for ln in chain_lines)  # one line per chain
    assert main(args + ["--json"]) == 0
    trace = json.loads(capsys.readouterr().out)  # --json: the data as it is, JSON-escaped
    assert trace["seeds"][0]["title"] == HOSTILE[0]


def test_inspect_output_escapes_the_path_and_problems(hostile_project, capsys):
    assert main(["inspect", str(hostile_project)]) == 0
    out = capsys.readouterr().out
    assert "\\x1b[2J" in out and "\\u202eevil" in out
    _no_raw_controls(out)
    assert main(["inspect", str(hostile_project), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["project"] == str(hostile_project)


def test_error_lines_escape_data_and_stay_one_line(hostile_project, capsys):
    bad = f"no such {ESC}\n{BIDI}"
    assert main(["query", str(hostile_project), "q?", "--model", "none", "--seed", bad, "--no-save"]) in (1, 2)
    err = capsys.readouterr().err
    _no_raw_controls(err)
    assert err.count("\n") == 1


def test_a_blank_graph_name_is_refused_before_anything_is_replaced(capsys):
    for blank in ("", "  ", "\t\n"):
        with pytest.raises(StoreError, match="blank"):
            graph_name(str(DEMO), None, blank)
    # refused before the store is even contacted: nothing can be replaced (port 1: nobody listens)
    assert main(["store", "import", str(DEMO), "--store", "postgresql://nobody@127.0.0.1:1/x", "--name", "  "]) == 2
    err = capsys.readouterr().err
    assert "--name" in err and "blank" in err and err.count("\n") == 1
    assert graph_name(str(DEMO), None, " mine ") == "mine"


@pytest.mark.parametrize("rid", ["", " ", "abc\n", "../x", "a" * 81, "bogus"])
def test_resume_needs_a_real_run_id(rid, capsys, tmp_path, monkeypatch):
    """A malformed id, or a well-formed one no saved run has ("bogus"): a usage error (exit 2) in one line."""
    monkeypatch.setenv("TOG_HOME", str(tmp_path))
    assert main(["query", str(DEMO), "Who?", "--model", "none", "--resume", rid]) == 2
    err = capsys.readouterr().err
    assert "--resume" in err and err.count("\n") == 1
    assert not list(tmp_path.glob("runs/*.json"))  # no new run was started


def test_run_ids_with_a_trailing_newline_are_refused(tmp_path):
    from tog_core.runs.postgres import PgRunStore

    store = RunStore(tmp_path)
    for rid in ("abc\n", "abc\r\n", "abc\n\n"):
        with pytest.raises(ValueError):
            store.path(rid)
        with pytest.raises(ValueError):
            PgRunStore._check_id(rid)
    assert store.path("abc-1_2").name == "abc-1_2.json"


def _with_weights(root: Path, weights: pa.Array) -> Path:
    write_project(root, [(t, t) for t in "ABCDE"], [("A", t, f"A to {t}") for t in "BCDE"])
    path = root / "output" / "relationships.parquet"
    t = pq.read_table(path)
    pq.write_table(t.set_column(t.column_names.index("weight"), "weight", weights), path)
    return root


@pytest.mark.parametrize("weights, bad", [
    (pa.array([2.5, float("nan"), float("inf"), None]), 3),
    (pa.array(["2.5", "heavy", "nan", None]), 3),
    (pa.array([3, 4, None, 5], pa.int64()), 1),
    (pa.array([True, False, True, True]), 4),
    (pa.array([2.5, 1.0, 0.5, 2.0]), 0),
])
def test_unreadable_weights_are_read_as_the_default_with_one_counted_problem(tmp_path, capsys, weights, bad):
    root = _with_weights(tmp_path, weights)
    g = KnowledgeGraph.load(root)
    got = [g.relationship(r).weight for r in range(g.n_relationships)]
    assert all(math.isfinite(w) for w in got)
    assert got[0] in (2.5, 3.0, 1.0)
    lines = [p for p in g.problems if "relationships.weight" in p]
    assert g.counts["default_weights"] == bad
    assert len(lines) == (1 if bad else 0)
    if bad:
        assert f"{bad} of 4 weights" in lines[0] and "read as 1.0" in lines[0]
        assert main(["inspect", str(root)]) == 0
        assert lines[0] in capsys.readouterr().out


def test_text_cut_for_a_line_says_where_it_was_cut():
    from tog_core.render.style import cut

    assert cut("published by the Saltmere Gazette", 30) == "published by the Saltmere Gaz…"
    assert len(cut("x" * 100, 60)) == 60 and cut("short", 60) == "short"
