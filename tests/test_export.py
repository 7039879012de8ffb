"""tog_core.render.export (export_md, export_html) and `python -m tog_core export`: escaped, secret-free, standalone,
round-trips JSON."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from builders import make_trace
from vizkit import URL, VIS_URLS

from tog_core.cli.main import main
from tog_core.render.export import export_json
from tog_core.render.export_common import public_trace
from tog_core.render.export_html import export_html
from tog_core.render.export_md import export_markdown, md, md_block

ROOT = Path(__file__).resolve().parents[1]
EVIL = ('<img src=x onerror=alert(1)> [click](javascript:alert(1)) ![i](https://evil.example/x.png) '
        '<script>alert(1)</script> `code` *bold* _it_ | pipe https://evil.example www.evil.example $x$ \u202e')
SECRET = "sk-THISISNOTAREALKEY1234567890"


def hostile_trace() -> dict:
    t = make_trace({"A": EVIL, "E": "E " + EVIL, "D": EVIL + " D"}, reason=EVIL)
    t["question"] = EVIL
    t["answer"] = "# heading\n- item\n1. one\n    code\n> quote\n" + EVIL
    t["answer_by"] = "chains"
    t["config"] |= {"api_key": SECRET, "llm": {"openai_api_key": SECRET, "model": "m"}, "api_base": "http://x"}
    t["steps"][1]["fallbacks"] = [{"name": "uniform_scores", "detail": EVIL, "where": "entities"}]
    t["stats"] = {"llm_calls": 3, "prompt_tokens": 10, "completion_tokens": 5, "wall_s": 1.5}
    return t


def unescaped(text: str, chars: str) -> list[str]:
    """Characters of `chars` not preceded by a backslash escape."""
    stripped = re.sub(r"\\.", "", text)
    return [c for c in stripped if c in chars]


def test_public_trace_strips_secrets_but_keeps_token_counts():
    t = public_trace(hostile_trace())
    assert "api_key" not in t["config"] and "openai_api_key" not in t["config"]["llm"]
    assert t["config"]["llm"]["model"] == "m" and t["stats"]["prompt_tokens"] == 10
    assert SECRET not in json.dumps(t)


def test_markdown_escapes_everything():
    text = export_markdown(hostile_trace())
    assert SECRET not in text and "api\\_key" not in text
    assert "<" not in text and ">" not in text.replace("→", "")
    assert unescaped(text, "[]`<") == []
    assert "](" not in text.replace("\\]\\(", "")
    assert "https://" not in text and "www.evil" not in text
    assert "&lt;img src=x" in text and "&lt;/script&gt;" in text
    assert "Composed from the reasoning chains without an LLM" in text
    for line in text.splitlines():  # data pipes never add table cells
        if line.startswith("| "):
            assert len(unescaped(line, "|")) in (3, 13)
    answer = text.split("## Answer", 1)[1].split("## Topic", 1)[0]
    for line in answer.splitlines():  # no block syntax from data
        assert not re.match(r"\s*(#|-\s|\d+\.|>|\s{4})", line)
    assert "uniform\\_scores" in text and "✎ G" in text and "automatic pruned, person kept" in text
    assert "| llm\\_calls | 3 |" in text


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_md_leaves_no_active_character(s):
    out = md(s)
    assert "\n" not in out
    assert unescaped(out, "[]()<>`*_|~$!#\\") == []
    assert "://" not in out and not re.search(r"(?i)\bwww\.", out)
    block = md_block(s)
    assert all(not re.match(r"(#|[-+=>]|\d+[.)])", line.lstrip()) for line in block.split("\n"))


def test_json_export_round_trips_without_secrets():
    t = hostile_trace()
    back = json.loads(export_json(t))
    assert back == public_trace(t)
    assert back["question"] == EVIL  # data is kept verbatim in JSON (it's data, not markup)


def test_html_export_is_escaped_standalone_and_sandboxed():
    page = export_html(hostile_trace())
    low = page.lower()
    assert SECRET not in page and "api_key" not in page
    assert "<img" not in low and "<script" not in low  # the outer page has no script at all
    assert low.count('<iframe sandbox="allow-scripts"') == 2
    assert not re.search(r"""\b(?:src|href)\s*=\s*["']?\s*(?:https?:)?//""", page, re.I)
    assert not re.search(r"""\b(?:src|href)\s*=\s*["']?\s*(?:https?:)?//""", _srcdocs(page), re.I)
    data_urls = {"https://evil.example", "https://evil.example/x.png", "http://x"}  # shown as text only
    assert set(URL.findall(re.sub(r'srcdoc="[^"]*"', "", page))) <= data_urls
    assert set(URL.findall(_srcdocs(page))) <= VIS_URLS | data_urls
    assert "&lt;img src=x" in page  # visible as text
    assert "Composed from the reasoning chains, without an LLM" in page


def _srcdocs(page: str) -> str:
    import html

    return "\n".join(html.unescape(m) for m in re.findall(r'srcdoc="([^"]*)"', page))


def test_html_export_of_empty_trace():
    page = export_html({"question": "q?", "steps": [], "chains": []})
    assert "No chains." in page and "<h1>q?</h1>" in page


def test_cli_export_round_trips_json(tmp_path):
    t = make_trace()
    src = tmp_path / "trace.json"
    src.write_text(json.dumps(t), encoding="utf-8")
    out = tmp_path / "out.json"
    assert main(["export", str(src), "--format", "json", "--out", str(out)]) == 0
    assert json.loads(out.read_text(encoding="utf-8")) == t
    assert main(["export", str(src), "--out", str(tmp_path / "t.md")]) == 0  # format from the suffix
    assert (tmp_path / "t.md").read_text(encoding="utf-8").startswith("# Where does the founder live?")
    assert main(["export", str(src), "--out", str(tmp_path / "t.html")]) == 0
    assert (tmp_path / "t.html").read_text(encoding="utf-8").startswith("<!doctype html>")


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tog_core", "export", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


def test_cli_bad_files_exit_2_with_one_line(tmp_path):
    missing = tmp_path / "missing.json"
    not_json = tmp_path / "notjson.json"
    not_json.write_text("hello", encoding="utf-8")
    not_trace = tmp_path / "other.json"
    not_trace.write_text('{"nodes": []}', encoding="utf-8")
    for path, words in ((missing, "no such file"), (not_json, "is not JSON"), (not_trace, "is not a ToG trace")):
        r = _run(str(path), "--format", "md", "--out", str(tmp_path / "x.md"))
        assert r.returncode == 2, r.stderr
        assert r.stdout == ""
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and str(path) in lines[0] and words in lines[0] and "query" in lines[0]
    assert not (tmp_path / "x.md").exists()


def test_cli_bad_out_folder(tmp_path, capsys):
    src = tmp_path / "trace.json"
    src.write_text(json.dumps(make_trace()), encoding="utf-8")
    assert main(["export", str(src), "--format", "md", "--out", str(tmp_path / "nope" / "x.md")]) == 2
    assert "does not exist" in capsys.readouterr().err


def _with_source_text() -> dict:
    t = make_trace()
    t["evidence"] = {"tu-1": {"text": "A long story. A founded B in the spring of 1820. Then more.",
                              "support": "A founded B in the spring of 1820."},
                     "tu-2": {"text": "Another <b>passage</b>: " + EVIL, "support": ""}}
    t["diagnosis"] = [{"title": "D", "entity_id": "D", "found": True, "in_final_beam": False, "never_candidate": False,
                       "lost": {"depth": 1, "stage": "entities", "rank": 3, "of": 3, "score": 0.1, "cutoff": 0.7,
                                "step": 1, "label": "D", "note": ""}, "nearest": None, "force": None}]
    return t


def test_exports_carry_the_source_text_of_every_link_and_the_diagnosis():
    t = _with_source_text()
    j = json.loads(export_json(t))
    assert j["evidence"]["tu-1"]["support"] == "A founded B in the spring of 1820."
    assert j["diagnosis"][0]["title"] == "D"
    m = export_markdown(t)
    assert "1. **A** → A founded B → **B**" in m and "   > “A founded B in the spring of 1820.”" in m
    assert "## Source text" in m and "### tu-1" in m and "\nA long story. A founded B in the spring" in m
    assert "## Why not …?" in m and "Lost at depth 1 \\(entities\\): “D” ranked 3 of 3" in m
    source = m.split("## Source text", 1)[1]
    assert unescaped(source, "<>[]`") == [] and "\\*bold\\*" in source  # the passages' text stays inert
    h = export_html(t)
    assert "<blockquote><mark>A founded B in the spring of 1820.</mark></blockquote>" in h
    assert "A long story. <mark>A founded B in the spring of 1820.</mark> Then more." in h
    assert "<details><summary>tu-1: A founded B" in h and "&lt;b&gt;passage&lt;/b&gt;" in h
    assert "<h2>Why not …?</h2>" in h and "<script>alert" not in h.lower()


def test_the_app_adds_source_text_from_the_graph():
    from tog_core.app.views import with_evidence
    from tog_core.graphrag.graph import KnowledgeGraph

    g = KnowledgeGraph.load(ROOT / "demo")
    ridx, _, _ = g.neighbors(g.find_title("Mara Quell"))
    rel = next(g.relationship(r) for r in ridx.tolist()
               if g.relationship(r).description == "Mara Quell was born in the town of Tarnby.")
    link = {"source": "Mara Quell", "source_id": g.entity(rel.source_idx).id, "relation": rel.description,
            "target": "Tarnby", "target_id": g.entity(rel.target_idx).id, "relationship_id": rel.id,
            "text_unit_ids": list(rel.text_unit_ids)}
    t = with_evidence({"question": "q", "seeds": [], "chains": [[link]]}, g)
    [(uid, ev)] = list(t["evidence"].items())[:1]
    assert uid in rel.text_unit_ids and "Tarnby" in ev["support"] and ev["support"] in ev["text"]
    assert "Mara Quell" in ev["support"] and len(ev["support"]) < len(ev["text"])


def test_a_choice_of_outcome_at_an_evaluate_step_is_one_decision_in_the_report():
    t = make_trace()
    ev = t["steps"][2]  # depth 1, evaluate
    ev["candidates"] = [{"id": "eval:sufficient", "kind": "verdict", "label": "Answer now", "auto_kept": False,
                         "kept": True}, {"id": "eval:continue", "kind": "verdict", "label": "Search deeper",
                                         "auto_kept": True, "kept": False}]
    ev["overrides"] = [{"id": c["id"], "label": c["label"], "auto_kept": c["auto_kept"], "kept": c["kept"]}
                       for c in ev["candidates"]]
    text = export_markdown(t)
    assert "✎ what next: automatic “Search deeper”, person “Answer now”" in text
    assert "✎ Answer now" not in text and "✎ Search deeper" not in text
    [row] = [line for line in text.splitlines() if line.startswith("| 3 | 1 | evaluate |")]
    assert [c.strip() for c in row.split("|")][10] == "1"  # the overrides column: one decision


def test_the_reports_mark_the_chain_the_answer_came_along():
    t = make_trace()
    c0, c1 = t["chains"]
    t["answer_entity"] = "C"  # the ranked answer came along chain 2, one hop
    t["candidates"] = [{"title": "C", "entity_id": "C", "score": 0.6, "chain": [dict(c1[0])], "sentence": ""}]
    text, page = export_markdown(t), export_html(t)
    assert "### Chain 2 (used for the answer)" in text and "### Chain 1 (used" not in text
    assert "<h3>Chain 2 (used for the answer)</h3>" in page and "<h3>Chain 1 (used" not in page
    own = [{**c1[0], "relationship_id": "r-elsewhere", "target": "H", "target_id": "H"}]
    t["answer_entity"], t["candidates"] = "H", [{"title": "H", "entity_id": "H", "score": 0.7, "chain": own}]
    assert "(used for the answer)" not in export_markdown(t)  # found before the run: none of the run's chains
    t["candidates"] = []  # an older trace: the best chain, as before
    assert "### Chain 1 (used for the answer)" in export_markdown(t)


def test_the_markdown_export_of_a_run_without_an_llm_leaves_out_the_settings_only_an_llm_reads():
    """A no-LLM run records EngineConfig's LLM settings (temperatures, the judge) without using them: the Markdown
    lists them apart as unused; a run with a model keeps them in the table; the JSON export keeps everything."""
    t = make_trace()
    t["config"] = {**(t.get("config") or {}), "model_kind": "none", "model": "none", "width": 3,
                   "temperature_exploration": 0.4, "judge": "llm"}
    text = export_markdown(t)
    table = text.split("## Configuration", 1)[1].split("## Answer", 1)[0]
    assert "| width | 3 |" in table and "temperature\\_exploration |" not in table and "| judge |" not in table
    assert "Without an LLM these settings were not used: temperature\\_exploration, judge." in table
    with_llm = export_markdown({**t, "config": {**t["config"], "model_kind": "litellm", "model": "openai/x"}})
    assert "| judge | llm |" in with_llm and "were not used" not in with_llm
    assert json.loads(export_json(t))["config"]["judge"] == "llm"
    # the HTML export says the same (a reviewer found it listing them as if used, beside the Markdown that did not)
    config = export_html(t).split("<h2>Configuration</h2>", 1)[1].split("<h2>", 1)[0]
    assert "<td>width</td>" in config and "<td>judge</td>" not in config
    assert "temperature_exploration</td>" not in config
    assert "Without an LLM these settings were not used: temperature_exploration, judge." in config


def test_both_exports_repeat_the_caveat_of_a_confidence_on_a_changed_search():
    """The app says a no-LLM confidence may be too high on a search changed from the one it was fitted on (another
    width or depth, a person's choices); the exports said nothing of it."""
    t = make_trace()
    t["config"] = {**(t.get("config") or {}), "model_kind": "none", "model": "none", "width": 1, "depth": 3}
    t["confidence"] = 0.94
    for text in (export_markdown(t), export_html(t)):
        assert "The confidence (0.94) is fitted on searches left as set by default" in text.replace("\\", "")
        assert "width 1" in text and "may be too high" in text
    t["config"]["width"] = 3
    assert "width 1" not in export_markdown(t) + export_html(t)  # the default width: not named
    assert "your choices at a step" in export_markdown(t)  # (this trace holds a person's override)
    t["confidence"] = None
    assert "may be too high" not in export_markdown(t) + export_html(t)  # no confidence claimed: nothing to qualify


@pytest.mark.parametrize("reason, said", [("sufficient", "judged enough to answer (sufficient)"),
                                          ("user", "stopped by you (user)"), ("weird_new_reason", "weird_new_reason")])
def test_the_exports_say_why_a_run_stopped_in_the_apps_words(reason, said):
    t = make_trace()
    t["stop_reason"] = reason
    assert f"| stop reason | {said} |" in export_markdown(t).replace("\\", "")  # markdown escapes ( ) _
    assert f"stop reason {said}" in export_html(t)


def test_a_reversed_link_in_the_composed_answer_is_explained_where_the_exports_show_it():
    t = make_trace()
    t["answer"] = "Most likely answer: E. Chain: A —[founded]→ B —[lives in]← E"
    assert "stored the other way" in export_markdown(t) and "stored the other way" in export_html(t)
    t["answer"] = "Most likely answer: E. Chain: A —[founded]→ B —[lives in]→ E"
    assert "stored the other way" not in export_markdown(t) and "stored the other way" not in export_html(t)
