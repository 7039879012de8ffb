"""The README stays a first page and docs/ stays true to the code: links resolve, every named departure from the
paper and every switch of the LLM-free policy is documented, and the commands the README gives exist."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from tog_core.policy.cheap import CheapPolicy
from tog_core.tog.state import DEPARTURES

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = ("usage", "algorithm", "llm-free-policy", "benchmarks", "experiment-log", "architecture", "trace-format",
         "operations", "rules")
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def test_readme_is_a_first_page():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 200, f"README.md has {len(lines)} lines; move detail to docs/"
    text = "\n".join(lines)
    for page in PAGES:
        assert f"docs/{page}.md" in text, f"README.md does not link docs/{page}.md"


@pytest.mark.parametrize("page", PAGES)
def test_docs_page_exists(page):
    assert (DOCS / f"{page}.md").is_file()


@pytest.mark.parametrize("doc", ["README.md", *(f"docs/{p}.md" for p in PAGES)])
def test_relative_links_resolve(doc):
    path = ROOT / doc
    for target in LINK.findall(path.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", target):
            continue  # http:, mailto:
        assert (path.parent / target).exists(), f"{doc} links {target}, which does not exist"


def test_every_departure_is_in_the_algorithm_page():
    text = (DOCS / "algorithm.md").read_text(encoding="utf-8")
    missing = [name for name in DEPARTURES if f"`{name}`" not in text]
    assert not missing, f"docs/algorithm.md does not name the departures {missing} (tog/state.py: DEPARTURES)"


def test_every_policy_switch_is_in_the_policy_page():
    text = (DOCS / "llm-free-policy.md").read_text(encoding="utf-8")
    missing = [name for name in CheapPolicy().params() if not re.search(rf"`(CheapPolicy\.)?{name}`", text)]
    assert not missing, f"docs/llm-free-policy.md does not document {missing} (policy/cheap.py: CheapPolicy.params)"


def test_readme_setup_commands_are_make_targets():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    for target in re.findall(r"^make (\w+)", readme, flags=re.MULTILINE):
        assert re.search(rf"^{target}:", makefile, flags=re.MULTILINE), f"README runs 'make {target}': no such target"


def test_scripts_the_docs_run_exist():
    for doc in ["README.md", *(f"docs/{p}.md" for p in PAGES)]:
        text = (ROOT / doc).read_text(encoding="utf-8")
        for script in set(re.findall(r"python (bench/[\w/]+\.py|demo/[\w/]+\.py)", text)):
            assert (ROOT / script).is_file(), f"{doc} runs {script}, which does not exist"


@pytest.mark.parametrize("doc", ["README.md", *(f"docs/{p}.md" for p in PAGES)])
def test_no_merge_markers_left(doc):
    text = (ROOT / doc).read_text(encoding="utf-8")
    bad = [k for k, line in enumerate(text.splitlines(), 1) if re.match(r"^(<{7}|>{7}|={7})( |$)", line)]
    assert not bad, f"{doc} has merge conflict markers at lines {bad}: resolve them"
