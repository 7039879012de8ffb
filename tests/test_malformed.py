"""Malformed GraphRAG projects (corpus in malformed.py): each one either fails with the typed ProjectError
naming the file or field, or loads with the problem listed by `python -m tog_core inspect --json`."""
from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from malformed import CASES, huge_descriptions
from tog_core.cli.main import main
from tog_core.tog.engine import ToGEngine
from tog_core.graphrag.graph import KnowledgeGraph
from tog_core.testing.scripted import ScriptedLLM
from tog_core.graphrag.project import ProjectError, open_project
from tog_core.tog.state import EngineConfig

ROOT = Path(__file__).resolve().parents[1]
ERRORS = [n for n, (_, exp) in CASES.items() if exp[0] == "error"]
PROBLEMS = [n for n, (_, exp) in CASES.items() if exp[0] == "problem"]


def test_malformed_corpus_is_big_enough():
    assert len(CASES) >= 20 and len(ERRORS) >= 10 and len(PROBLEMS) >= 10


def _skip_if_meaningless(name: str) -> None:
    if name == "unreadable_folder" and os.geteuid() == 0:
        pytest.skip("running as root: permissions do not stop root from reading the folder")
    if name == "symlink_loop" and not hasattr(os, "symlink"):
        pytest.skip("no symlinks on this platform")


@pytest.mark.parametrize("name", ERRORS)
def test_malformed_project_raises_a_typed_error_naming_the_file(name, tmp_path, capsys, monkeypatch):
    _skip_if_meaningless(name)
    monkeypatch.delenv("TOG_TEST_UNDEFINED_MODEL", raising=False)
    writer, (_, error_class, fragments) = CASES[name]
    path = writer(tmp_path)
    with pytest.raises(error_class) as caught:
        KnowledgeGraph.load(open_project(path))
    message = str(caught.value)
    for fragment in fragments:
        assert fragment in message, message
    assert caught.value.fix  # every error says how to fix it
    # the CLI: one line on stderr, exit code 2, nothing on stdout
    assert main(["inspect", str(path), "--json"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and err.startswith("error: ") and fragments[0] in err


@pytest.mark.parametrize("name", PROBLEMS)
def test_malformed_project_loads_with_the_problem_reported(name, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("TOG_TEST_UNDEFINED_MODEL", raising=False)
    writer, (_, fragments) = CASES[name]
    path = writer(tmp_path)
    assert main(["inspect", str(path), "--json"]) == 0
    out, err = capsys.readouterr()
    report = json.loads(out)
    matching = [p for p in report["problems"] if all(f in p for f in fragments)]
    assert matching, report["problems"]
    assert report["counts"]["entities"] >= 1 and report["counts"]["relationships"] >= 1


def test_malformed_error_is_a_project_error_subclass():
    for name in ERRORS:
        assert issubclass(CASES[name][1][1], ProjectError), name


def test_malformed_inspect_subprocess_reports_problems(tmp_path):
    """The real `python -m tog_core inspect --json` (errors go through the same main(), tested above)."""
    huge = huge_descriptions(tmp_path / "huge")
    proc = subprocess.run([sys.executable, "-m", "tog_core", "inspect", str(huge), "--json"],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert any("entity descriptions are longer than" in p for p in json.loads(proc.stdout)["problems"])


def test_malformed_huge_descriptions_keep_prompts_small(tmp_path):
    graph = KnowledgeGraph.load(huge_descriptions(tmp_path))
    assert len(graph.entity(graph.find_title("Alice")).description) > 1_000_000
    sizes = []

    def reply(messages):
        sizes.append(sum(len(m["content"]) for m in messages))
        return '{"scores": [{"i": 0, "score": 1, "reason": "x"}]}'

    eng = ToGEngine(graph, llm=ScriptedLLM(reply), config=EngineConfig(width=2, depth=2))
    st = asyncio.run(eng.run("Who founded Acme?", seeds=["Acme"]))
    assert st.stop_reason in ("max_depth", "sufficient") and sizes
    assert max(sizes) < 20_000  # a 1 MB description never reaches a prompt whole


def test_malformed_non_utf8_text_is_readable_after_repair(tmp_path):
    writer = CASES["non_utf8_titles_in_string_column"][0]
    graph = KnowledgeGraph.load(writer(tmp_path))
    titles = [graph.entity(i).title for i in range(graph.n_entities)]
    assert "Par\ufffds" in titles and "Alice" in titles
    json.dumps(titles)  # valid text everywhere downstream
