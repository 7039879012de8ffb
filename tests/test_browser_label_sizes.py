"""Pictures that scale, measured in real headless Chromium: each picture page is loaded at the size of its frame in the
app, vis.js fits it, and every drawn node label's on-screen size is read from vis.js itself (its font size times
the view's scale) — at least 12 px:

* the search replay of a width 10 / depth 5 run on the Christmas Carol graph (and on the demo);
* the graph browser on SCROOGE, a hub with 158 neighbours, before and after its "+N more" node is clicked;
* the Explore picture of a pending relation stage at width 10 (the candidate boxes).

The labels must also not pile up: at most a few percent of the pairs of drawn node labels overlap on screen, and the
picture spreads over most of its frame's width.

Needs /usr/bin/chromium (see test_browser.py; the `chromium` fixture is conftest's); the Christmas Carol cases need
/work/shared/data/graphrag/christmas-carol-v3/output and skip with that reason without it. The labels' reader,
_overlapping, _fitted and _engine: tests/browserkit.py; the other pictures, which write their relation texts apart:
test_browser_pictures.py.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from browserkit import LABELS, _engine, _fitted, _overlapping, _shot

ROOT = Path(__file__).resolve().parents[1]
CAROL = ROOT.parent / "shared" / "data" / "graphrag" / "christmas-carol-v3" / "output"
if not CAROL.exists():
    CAROL = Path("/work/shared/data/graphrag/christmas-carol-v3/output")

pytestmark = [pytest.mark.browser, pytest.mark.slow]

DOTS = """() => {
  const pos = network.getPositions(), out = [];
  for (const id of Object.keys(pos)) {
    const n = network.body.nodes[id], p = network.canvasToDOM(pos[id]);
    if (!n || n.options.shape !== "dot") { continue; }
    out.push({id: id, x: p.x, y: p.y, r: network.canvasToDOM({x: pos[id].x + n.options.size, y: 0}).x -
              network.canvasToDOM({x: pos[id].x, y: 0}).x});
  }
  return out;
}"""


def _labels_over_dots(labels: list[dict], dots: list[dict]) -> list[tuple[str, str]]:
    """(label, the dot it covers) for every label drawn over another node's dot."""
    out = []
    for a in labels:
        x0, y0, x1, y1 = a["box"]
        for d in dots:
            if d["id"] != a["id"] and x0 < d["x"] + d["r"] - 2 and d["x"] - d["r"] + 2 < x1 and \
                    y0 < d["y"] + d["r"] - 2 and d["y"] - d["r"] + 2 < y1:
                out.append((a["label"], d["id"]))
    return out


def _check(got: dict, *, min_labels: int, name: str, min_span: float = 0.6) -> None:
    labels = got["labels"]
    assert len(labels) >= min_labels, (name, len(labels))
    small = [(x["label"], round(x["px"], 1)) for x in labels if x["px"] < 12]
    assert not small, (name, got["scale"], small[:5])
    pairs = len(labels) * (len(labels) - 1) / 2
    assert _overlapping(labels) <= 0.02 * pairs, (name, _overlapping(labels), pairs)
    span = max(x["box"][2] for x in labels) - min(x["box"][0] for x in labels)
    assert span >= min_span * got["w"], (name, span, got["w"])  # the labels spread over the frame's width


def _carol() -> Path:
    if not (CAROL / "entities.parquet").exists():
        pytest.skip(f"the Christmas Carol GraphRAG output is not at {CAROL}")
    return CAROL


def _run(where: str, question: str) -> tuple[dict, object]:
    """A width 10 / depth 5 run without an LLM (before Chromium starts: its driver holds the event loop)."""
    from tog_core.app.runner import run_question

    from concurrent.futures import ThreadPoolExecutor

    from unittest import mock

    from tog_core.policy import ranking

    engine = _engine(_carol() if where == "carol" else ROOT / "demo", 10, 5)
    # without the packaged e5 (BM25 only): the pictures' labels are the subject, and e5 reading every chain of a
    # width-10 search five hops deep cold took 270 s of a loaded CI machine
    with ThreadPoolExecutor(1) as pool, mock.patch.object(ranking, "ranking_embedder", lambda: None):
        t = pool.submit(lambda: run_question(engine, question, hops=5).to_dict()).result()
    assert t["config"]["width"] == 10 and len({s["depth"] for s in t["steps"]}) >= 3
    return t, engine.graph


@pytest.fixture(scope="module")
def carol_run():
    return _run("carol", "Who is Tiny Tim's father?")


@pytest.fixture(scope="module")
def demo_run():
    return _run("demo", "Who founded the company that manufactures the invention of Corin Vell?")


@pytest.mark.parametrize("where", ["carol", "demo"])
def test_search_replay_at_width_10_depth_5_has_labels_of_12_px_at_fit(request, where, chromium, tmp_path):
    from tog_core.render.frontier import frontier_html
    from tog_core.render.frontier_items import trace_entity_types

    t, graph = request.getfixturevalue(f"{where}_run")
    html = frontier_html(t, None, height="560px", types=trace_entity_types(graph, t))
    page = _fitted(chromium, html, 1000, 560)
    got = page.evaluate(LABELS)
    _shot(page, tmp_path, f"replay_w10_{where}.png")
    _check(got, min_labels=12, name=f"replay {where}")


def test_explore_relation_boxes_at_width_10_are_readable(carol_run, chromium, tmp_path):
    from tog_core.render.frontier import frontier_html
    from tog_core.render.frontier_items import trace_entity_types

    t, graph = carol_run
    step = [s for s in t["steps"] if s["stage"] == "relations"][1]  # depth 2: ten entities, ~100 relations
    assert len(step["candidates"]) > 40
    pending = {"step": step, "choice": [c["id"] for c in step["candidates"] if c["kept"]]}
    html = frontier_html(t, step["depth"] - 1, pending=pending, clickable=True, height="560px",
                         types=trace_entity_types(graph, t))
    page = _fitted(chromium, html, 1000, 560)
    got = page.evaluate(LABELS)
    _shot(page, tmp_path, "explore_w10_relations.png")
    # ten frontier entities and their proposed relations, one column each: the fit is set by the height (the LLM-free
    # relation stage proposes 2N relations an entity), so the two columns span a little over half the width
    _check(got, min_labels=20, name="explore relations", min_span=0.5)


def test_the_158_neighbour_hub_has_labels_of_12_px_before_and_after_more(chromium, tmp_path):
    from tog_core.graphrag.graph import KnowledgeGraph
    from tog_core.render.neighbourhood import neighbourhood_html

    graph = KnowledgeGraph.load(_carol())
    hub = graph.find_title("SCROOGE")
    _, others, _ = graph.neighbors(hub)
    n = len(set(others.tolist()))  # 158 relationships, to 148 distinct entities
    assert graph.degree(hub) == 158 and n > 140
    page = _fitted(chromium, neighbourhood_html(graph, hub, hops=1, height="520px", clickable=True), 1000, 520)
    got = page.evaluate(LABELS)
    _shot(page, tmp_path, "hub_scrooge.png")
    _check(got, min_labels=30, name="hub")
    assert _overlapping(got["labels"]) == 0 and _labels_over_dots(got["labels"], page.evaluate(DOTS)) == []
    more = [x for x in got["labels"] if x["label"].startswith(f"+{n - 30} more: click to show 30")]
    assert len(more) == 1, [x["label"] for x in got["labels"] if "more" in x["label"]]
    page.mouse.click(got["left"] + more[0]["x"], got["top"] + more[0]["y"])  # the canvas is under the legend
    page.wait_for_timeout(600)
    after = page.evaluate(LABELS)
    _shot(page, tmp_path, "hub_scrooge_more.png")
    assert len(after["labels"]) == len(got["labels"]) + 30  # thirty more neighbours, and the next "more" node
    assert any(x["label"].startswith(f"+{n - 60} more") for x in after["labels"])
    assert min(x["px"] for x in after["labels"]) >= 12
