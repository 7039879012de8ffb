"""Graph text that looks like markup pointing outside (`src=https://…`, `src=//…`, quoted, `href=`, `<script>`) in
entity titles, descriptions and relation texts: every picture kind and every export renders without error, shows the
text, references nothing outside the page and carries no script the data made. The external-resource check looks at
real markup (tags and attributes), never at escaped text inside the data.
"""
from __future__ import annotations

import asyncio
import json
from html.parser import HTMLParser

import pytest

from builders import write_project
from tog_core.cli.main import main
from tog_core.graphrag.graph import KnowledgeGraph
from tog_core.render.export import export_json
from tog_core.render.export_html import export_html
from tog_core.render.export_md import export_markdown
from tog_core.render.page import external_references
from tog_core.render.viz import chains_html, compare_html, frontier_html, neighbourhood_html
from tog_core.tog.engine import ToGEngine
from tog_core.tog.state import EngineConfig

SRC = [
    "src=https://evil.example/a.js",
    "src=//evil.example/b.js",
    'src="https://evil.example/c.js"',
    "src='//evil.example/d.png'",
    "SRC = HTTP://EVIL.EXAMPLE/E",
    "href=https://evil.example/f",
    '<script src="https://evil.example/g.js"></script>',
    "<script>window.__pwned=1</script>",
    "<img src=//evil.example/h.png>",
    "url(//evil.example/i.png) @import 'https://evil.example/j.css'",
]


class _Tags(HTMLParser):
    """Every real tag of a page (scripts' and styles' bodies are text to this parser), iframe srcdoc pages too."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.inner: list[str] = []

    def handle_starttag(self, tag, attrs):
        d = {k: v or "" for k, v in attrs}
        self.tags.append((tag, d))
        if "srcdoc" in d:
            self.inner.append(d["srcdoc"])


def all_tags(page: str) -> list[tuple[str, dict[str, str]]]:
    p = _Tags()
    p.feed(page)
    p.close()
    out = list(p.tags)
    for inner in p.inner:
        out += all_tags(inner)
    return out


def assert_closed(name: str, page: str, benign_scripts: int | None = None) -> None:
    """No tag attribute points outside, and no script tag beyond the ones a benign page has."""
    assert external_references(page) == [], name
    tags = all_tags(page)
    for tag, attrs in tags:
        for k, v in attrs.items():
            if k in ("src", "href", "srcset", "action", "formaction", "poster", "data", "background"):
                assert not v.strip().lower().startswith(("http:", "https:", "//")), (name, tag, k, v)
    scripts = [a for t, a in tags if t == "script"]
    assert all("src" not in a for a in scripts), name
    if benign_scripts is not None:
        assert len(scripts) == benign_scripts, name
    assert "window.__pwned=1</script>" not in page, name


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile_src")
    ents = [("Start", "start " + SRC[0])] + [(f"E{k} {p}", f"desc {p} {SRC[(k + 1) % len(SRC)]}")
                                             for k, p in enumerate(SRC)]
    edges = [("Start", t, f"Start {SRC[k]} links to it") for k, (t, _) in enumerate(ents[1:])]
    edges += [(ents[1][0], ents[2][0], SRC[1] + " " + SRC[2])]
    units = {f"t{k}": f"text {k} {SRC[k % len(SRC)]}" for k in range(len(edges))}
    write_project(root, ents, edges, text_units=units, edge_units={k: [f"t{k}"] for k in range(len(edges))},
                  relation_labels=[SRC[k % len(SRC)] for k in range(len(edges))])
    g = KnowledgeGraph.load(root)
    eng = ToGEngine(g, config=EngineConfig(relation_pruner="random", entity_pruner="random", width=4, depth=2))
    st = asyncio.run(eng.run("Where does " + SRC[1] + " Start lead?", seeds=["Start"]))
    trace = eng.trace(st).to_dict()
    trace["answer"] = "answer " + " ".join(SRC)
    trace["evidence"] = {f"t{k}": {"text": units[f"t{k}"], "support": SRC[k % len(SRC)]} for k in range(len(edges))}
    return root, g, trace


def _benign_scripts(g, trace) -> dict[str, int]:
    """Script tags of the same pictures for a harmless trace (the count hostile text must not change)."""
    def count(page):
        return sum(1 for t, _ in all_tags(page) if t == "script")
    seeds_only = {"seeds": [{"id": "x", "title": "x"}], "steps": []}
    return {"picture": count(frontier_html(seeds_only)),
            "clickable": count(frontier_html(seeds_only, clickable=True))}


def test_every_picture_renders_hostile_src_text_without_external_references(hostile):
    _root, g, trace = hostile
    assert trace["chains"], "the hostile run should find chains"
    other = json.loads(json.dumps(trace))
    other["chains"] = other["chains"][::-1] or other["chains"]
    benign = _benign_scripts(g, trace)
    pages = {"frontier": frontier_html(trace), "frontier_d1": frontier_html(trace, depth=1),
             "frontier_marks": frontier_html(trace, marks=[{"entity_id": "e3", "title": SRC[2],
                                                             "never_candidate": True}]),
             "chains": chains_html(trace), "compare": compare_html(trace, other),
             "neighbourhood": neighbourhood_html(g, g.find("Start"), hops=2, clickable=True)}
    for name, page in pages.items():
        assert_closed(name, page, benign["clickable" if name == "neighbourhood" else "picture"])
    # the text is shown (made inert), not dropped: the unquoted src= of a title is in the data
    assert "src=//evil.example/b.js" in pages["neighbourhood"]


def test_every_export_renders_hostile_src_text(hostile):
    _root, g, trace = hostile
    html = export_html(trace)
    assert_closed("export", html)
    assert "src=//evil.example/b.js" in html  # shown as text
    md = export_markdown(trace)
    assert "<script" not in md and "<img" not in md
    assert json.loads(export_json(trace))["answer"] == trace["answer"]


@pytest.mark.parametrize("fmt", ["html", "md", "json"])
def test_cli_export_of_hostile_trace_exits_0(hostile, tmp_path, fmt, capsys):
    root, _g, trace = hostile
    src = tmp_path / "trace.json"
    src.write_text(json.dumps(trace), encoding="utf-8")
    out = tmp_path / f"out.{fmt}"
    assert main(["export", str(src), "--format", fmt, "--out", str(out), "--project", str(root)]) == 0, \
        capsys.readouterr().err
    if fmt == "html":
        assert_closed("cli export", out.read_text(encoding="utf-8"))


def test_the_check_still_catches_real_external_markup():
    for bad in ['<script src="https://cdn.example/x.js"></script>', "<link rel=stylesheet href=//cdn.example/x.css>",
                "<img src=HTTPS://x.example/y.png>",
                '<iframe srcdoc="&lt;script src=//x.example/z.js&gt;&lt;/script&gt;">',
                "<style>@import url(//x.example/s.css);</style>", '<div style="background:url(https://x.example/b)">']:
        assert external_references("<html><body>" + bad + "</body></html>"), bad
    for fine in ['<script>var d = {"title": "src=//x.example/y"};</script>', "<p>src=https://x.example/y</p>",
                 '<a href="#top">top</a>', '<div title="src=//x.example">t</div>']:
        assert external_references("<html><body>" + fine + "</body></html>") == [], fine
