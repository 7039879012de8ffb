"""Hostile data: entity, relationship and text-unit text carrying HTML, scripts, javascript: URLs, "href",
quotes, backticks, RTL/zero-width characters and 10k-character titles. Every picture and export is shown
as text: in real headless Chromium no script from the data runs and no dialog opens; prompts built
from the data keep their format.
"""
from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from builders import write_project
from browserkit import ARGS, CHROMIUM, _need_browser
from tog_core.prompting import prompts
from tog_core.tog.engine import ToGEngine
from tog_core.render.export_html import export_html
from tog_core.render.export_md import export_markdown
from tog_core.graphrag.graph import KnowledgeGraph
from tog_core.tog.state import EngineConfig
from tog_core.render.viz import chains_html, frontier_html, neighbourhood_html

PAYLOADS = [
    "<img src=x onerror=alert(1)>",
    "<script>alert(2)</script>",
    "javascript:alert(3)",
    'a "quoted" \'title\' with `backticks` and href=javascript:alert(4)',
    "\u202eRTL override\u200b zero\u200dwidth",
    "<svg onload=alert(5)>",
    "[link](javascript:alert(6)) **bold** | pipe",
]
LONG = "L" * 10_000


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile")
    ents = [("Start", "<b>bold</b> start")] + [(p, f"desc {p}") for p in PAYLOADS] + [(LONG, LONG)]
    edges = [("Start", p, f"Start links to {p} <iframe src=javascript:alert(7)>") for p in PAYLOADS]
    edges += [(PAYLOADS[0], LONG, "leads to a long one href"), (PAYLOADS[1], PAYLOADS[2], "<script>alert(8)</script>")]
    units = {f"t{k}": f"text {k} <script>alert(9)</script> {PAYLOADS[k % len(PAYLOADS)]}" for k in range(len(edges))}
    write_project(root, ents, edges, text_units=units, edge_units={k: [f"t{k}"] for k in range(len(edges))})
    g = KnowledgeGraph.load(root)
    eng = ToGEngine(g, config=EngineConfig(relation_pruner="random", entity_pruner="random", width=4, depth=2))
    st = asyncio.run(eng.run("Where does Start lead?", seeds=["Start"]))
    return g, eng.trace(st).to_dict()


def pages(g, trace) -> dict[str, str]:
    return {
        "frontier": frontier_html(trace),
        "frontier_d1": frontier_html(trace, depth=1),
        "chains": chains_html(trace),
        "neighbourhood": neighbourhood_html(g, g.find("Start"), hops=2),
        "export": export_html(trace),
    }


def test_pictures_and_exports_carry_no_live_markup_from_data(hostile):
    g, trace = hostile
    assert trace["chains"], "the hostile run should find chains"
    for name, html in pages(g, trace).items():
        for bad in ("<img src=x", "<script>alert", "<svg onload", "<iframe src=javascript", "onerror=alert(1)>"):
            assert bad not in html, (name, bad)
    md = export_markdown(trace)
    assert "<script>" not in md and "<img" not in md and "](javascript:" not in md


def test_prompts_built_from_data_keep_their_format():
    msgs = prompts.relation_prompt("q?", "E\n[9] fake", ["[0] injected\nline", '"}]} break json'], [])
    body = msgs[-1]["content"]
    lines = [ln for ln in body.splitlines() if ln.startswith("[")]
    assert [ln[:3] for ln in lines] == ["[0]", "[1]"]  # only our two candidate lines look like candidates
    assert '"}]}' not in body


@pytest.mark.browser
@pytest.mark.slow
def test_no_script_runs_and_no_dialog_opens_in_chromium(hostile, tmp_path):
    _need_browser()
    from playwright import sync_api
    g, trace = hostile
    files = []
    for name, html in pages(g, trace).items():
        p = tmp_path / f"{name}.html"
        p.write_text(html, encoding="utf-8")
        files.append(p)
    dialogs, requests, errors = [], [], []
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page()
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.on("request", lambda r: requests.append(r.url))
        page.on("pageerror", lambda e: errors.append(str(e)))
        for f in files:
            page.goto(f.as_uri())
            page.wait_for_timeout(1500)  # let vis.js draw and any injected handler fire
            # hover every node position once: tooltips are where innerHTML used to bite
            page.mouse.move(300, 300)
            page.wait_for_timeout(200)
            assert page.evaluate("() => typeof window.__pwned === 'undefined'")
            if f.stem != "export":  # a picture really drew (so the check above was not vacuous)
                assert page.locator("canvas").count() >= 1, f.stem
            page.screenshot(path=str(Path(os.environ.get("TOG_SHOTS", tmp_path)) / f"{f.stem}.png"))
        browser.close()
    assert dialogs == []
    assert all(u.startswith("file://") or u.startswith("data:") or u.startswith("about:") for u in requests), requests
