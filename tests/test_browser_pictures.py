"""Pictures in real headless Chromium, as a person handles and reads them:

* a tooltip open over a live picture goes with it when the next picture is drawn;
* the wheel over a picture scrolls the page, Ctrl + wheel zooms the picture (a standalone picture and a live one);
* the relation texts are written apart: in compare where both runs fan out of the topic, in the demo's dense 2-hop
  neighbourhood of Rookhaven and in a replay, no relation text is drawn over another or over an entity's name.

Needs /usr/bin/chromium (see test_browser.py; the `chromium` fixture is conftest's). The node labels' on-screen size
at fit (12 px at least): test_browser_label_sizes.py. Both read LABELS, _overlapping, _fitted and _engine from
tests/browserkit.py.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from browserkit import LABELS, _engine, _fitted, _overlapping, _shot

ROOT = Path(__file__).resolve().parents[1]

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_a_tooltip_open_over_a_live_picture_goes_with_it(chromium):
    """Explore draws each step's picture into the same page (render.live), held in a frame as the app's picture
    component holds it: a node's tooltip open when the next picture comes is hidden, not left over the new picture
    (seen by a newcomer: "click to drop" over a node gone)."""
    from builders import make_trace

    from tog_core.render.live import live_shell
    from tog_core.render.viz import frontier_html

    page = chromium.new_page(viewport={"width": 900, "height": 600})
    page.set_content('<iframe id="pic" style="position:absolute;left:0;top:0;width:880px;height:580px;border:0">'
                     '</iframe>')
    page.evaluate("(html) => { document.getElementById('pic').srcdoc = html; }", live_shell())
    page.wait_for_function("() => { const w = document.getElementById('pic').contentWindow;"
                           " return w && typeof w.network !== 'undefined'; }")
    frame = next(f for f in page.frames if f != page.main_frame)
    draw = "(pic) => document.getElementById('pic').contentWindow.postMessage({tog: 'draw', picture: pic}, '*')"
    page.evaluate(draw, frontier_html(make_trace(), clickable=True, for_live=True))
    frame.wait_for_function("() => Object.keys(network.getPositions()).length > 0")
    page.wait_for_timeout(800)
    box = frame.evaluate("""() => { const id = Object.keys(network.getPositions())[0];
        const p = network.canvasToDOM(network.getPositions()[id]);
        const r = document.querySelector('#mynetwork canvas').getBoundingClientRect();
        return {x: r.left + p.x, y: r.top + p.y}; }""")
    shown = ("() => [...document.querySelectorAll('.vis-tooltip')]"
             ".some(t => getComputedStyle(t).visibility !== 'hidden')")
    for dx in (0, 1, 2, 3, 4):  # hover the node until vis opens its tooltip
        page.mouse.move(box["x"] + dx, box["y"])
        page.wait_for_timeout(500)
        if frame.evaluate(shown):
            break
    assert frame.evaluate(shown), "no tooltip opened on hover"
    page.evaluate(draw, frontier_html(make_trace({"A": "Another start"}), clickable=True, for_live=True))
    page.wait_for_timeout(300)
    assert not frame.evaluate(shown)
    page.close()


@pytest.mark.parametrize("live", [False, True], ids=["page", "live"])
def test_the_wheel_over_a_picture_scrolls_the_page_and_ctrl_wheel_zooms_it(chromium, live):
    """A picture that took every wheel turn for its zoom held the page still whenever the pointer crossed it (a
    newcomer's "Continue does nothing after scrolling to the picture": the page had not scrolled back). The wheel
    now scrolls the page; Ctrl + wheel zooms (vis, as a pinch does); both in a standalone picture and a live one."""
    from builders import make_trace

    from tog_core.render.live import live_shell
    from tog_core.render.viz import frontier_html

    page = chromium.new_page(viewport={"width": 900, "height": 600})
    page.set_content('<div style="height:500px">above</div><iframe id="pic" style="width:880px;height:500px;border:0">'
                     '</iframe><div style="height:1500px">below</div>')
    html = live_shell() if live else frontier_html(make_trace(), clickable=True)
    page.evaluate("(html) => { document.getElementById('pic').srcdoc = html; }", html)
    page.wait_for_function("() => { const w = document.getElementById('pic').contentWindow;"
                           " return w && typeof w.network !== 'undefined'; }")
    frame = next(f for f in page.frames if f != page.main_frame)
    if live:
        page.evaluate("(pic) => document.getElementById('pic').contentWindow.postMessage({tog: 'draw', picture: pic},"
                      " '*')", frontier_html(make_trace(), clickable=True, for_live=True))
    frame.wait_for_function("() => Object.keys(network.getPositions()).length > 0")
    page.wait_for_timeout(800)
    page.evaluate("() => window.scrollTo(0, 300)")
    page.wait_for_timeout(200)
    scale = frame.evaluate("() => network.getScale()")
    r = page.evaluate("() => { const b = document.getElementById('pic').getBoundingClientRect();"
                      " return {x: b.left + b.width / 2, y: b.top + b.height / 2}; }")
    page.mouse.move(r["x"], r["y"] + 60)  # over the picture's canvas
    page.mouse.wheel(0, 400)
    page.wait_for_timeout(400)
    assert page.evaluate("() => window.scrollY") > 450  # the page scrolled on
    assert frame.evaluate("() => network.getScale()") == pytest.approx(scale)  # the picture did not zoom
    page.evaluate("() => window.scrollTo(0, 300)")
    page.wait_for_timeout(200)
    page.keyboard.down("Control")
    page.mouse.wheel(0, -300)
    page.keyboard.up("Control")
    page.wait_for_timeout(400)
    assert frame.evaluate("() => network.getScale()") > scale * 1.05  # zoomed in (vis: a step a turn)
    assert page.evaluate("() => window.scrollY") == 300  # and the page stayed where it was
    assert frame.evaluate("() => network.interactionHandler.options.zoomView") is True  # a touch pinch zooms too
    page.close()


EDGE_LABELS = """() => {
  const out = [];
  for (const id of Object.keys(network.body.edges)) {
    const e = network.body.edges[id];
    if (!e.options.label || !e.labelModule.size || !e.labelModule.size.width) { continue; }
    const s = e.labelModule.size, a = network.canvasToDOM({x: s.left, y: s.top}),
          b = network.canvasToDOM({x: s.left + s.width, y: s.top + s.height});
    out.push({id: id, label: String(e.options.label), box: [a.x, a.y, b.x, b.y]});
  }
  return out;
}"""


def test_compare_labels_every_link_apart_where_both_runs_fan_out_of_the_topic(chromium, tmp_path):
    """Two runs whose chains leave the topic for five different entities: every link carries its relation text,
    and no two of those texts, nor a text and an entity's name, are drawn over each other (they crossed near the
    topic when written along the links: a newcomer's review)."""
    from tog_core.render.chains import compare_html

    def link(a, b, rel):
        return {"source": a, "source_id": a, "relation": rel, "target": b, "target_id": b, "relationship_id": a + b,
                "text_unit_ids": [], "score": 1.0}

    def run(ends):
        return {"question": "Who is Tiny Tim's father?", "seeds": [{"id": "TINY TIM", "title": "TINY TIM"}],
                "chains": [[link("TINY TIM", e, f"Tiny Tim and {e.title()} are linked in some long sentence")]
                           for e in ends]}

    a = run(["BOB CRATCHIT", "CHURCH", "FATHER"])
    b = run(["BOB CRATCHIT", "EBENEZER SCROOGE", "BOB CRATCHIT'S FAMILY"])
    page = _fitted(chromium, compare_html(a, b, types={}), 1000, 460)
    edges, got = page.evaluate(EDGE_LABELS), page.evaluate(LABELS)
    _shot(page, tmp_path, "compare_fan.png")
    assert len(edges) == 5 and len(got["labels"]) == 6
    assert _overlapping(edges) == 0, edges
    both = edges + got["labels"]
    assert _overlapping(both) == 0, [(x["label"], [round(v) for v in x["box"]]) for x in both]


# every drawn relation text's box on screen as four corners: vis turns a text written along its link about the
# link's middle (align "top"), so its box is turned with it; a level text's box is as drawn
EDGE_CORNERS = """() => {
  const out = [];
  for (const id of Object.keys(network.body.edges)) {
    const e = network.body.edges[id], s = e.labelModule.size;
    if (!e.options.label || !s || !s.width || !e.from || !e.to) { continue; }
    let angle = 0, px = 0, py = 0;
    if (e.options.font.align !== "horizontal") {
      const dx = e.to.x - e.from.x, dy = e.to.y - e.from.y;
      angle = Math.atan2(dy, dx);
      if ((angle < -1 && dx < 0) || (angle > 0 && dx < 0)) { angle += Math.PI; }
      px = e.edgeType.getPoint(0.5).x; py = s.yLine;
    }
    const c = Math.cos(angle), n = Math.sin(angle);
    const corners = [[s.left, s.top], [s.left + s.width, s.top], [s.left + s.width, s.top + s.height],
                     [s.left, s.top + s.height]].map(([x, y]) => {
      const q = network.canvasToDOM({x: px + (x - px) * c - (y - py) * n, y: py + (x - px) * n + (y - py) * c});
      return [q.x, q.y]; });
    out.push({label: String(e.options.label), corners: corners});
  }
  return out;
}"""


def _meet(a: list, b: list, tol: float = 2.0) -> bool:
    """Whether two drawn boxes (four corners each, turned or not) overlap by more than `tol` px (separating axes)."""
    for poly in (a, b):
        for (x0, y0), (x1, y1) in zip(poly, poly[1:] + poly[:1]):
            ax, ay = y0 - y1, x1 - x0
            norm = (ax * ax + ay * ay) ** 0.5 or 1.0
            pa = [(x * ax + y * ay) / norm for x, y in a]
            pb = [(x * ax + y * ay) / norm for x, y in b]
            if min(max(pa), max(pb)) - max(min(pa), min(pb)) <= tol:
                return False
    return True


def _text_overlaps(page) -> tuple[int, int, list]:
    """(relation texts drawn, pairs of them drawn over each other, and of a relation text over an entity's name)."""
    edges = page.evaluate(EDGE_CORNERS)
    names = [[[x0, y0], [x1, y0], [x1, y1], [x0, y1]] for x0, y0, x1, y1 in
             (n["box"] for n in page.evaluate(LABELS)["labels"])]
    pairs = [(a["label"], b["label"]) for i, a in enumerate(edges) for b in edges[i + 1:]
             if _meet(a["corners"], b["corners"])]
    over = [a["label"] for a in edges for n in names if _meet(a["corners"], n)]
    return len(edges), len(pairs) + len(over), pairs[:3] + over[:3]


def test_a_dense_neighbourhood_and_a_replay_write_their_relations_apart(chromium, tmp_path):
    """The demo's 2-hop neighbourhood of Rookhaven (24 links, each with its relation text) drew 65 pairs of texts over
    each other when written along the links, and the replay of the Lanternwright Guild question four of six texts over
    each other where the links fan out of the topic (a newcomer's review). Now each is written level in the middle of
    its link where it covers nothing, the rest on hover, and none overlaps."""
    from concurrent.futures import ThreadPoolExecutor

    from tog_core.app.runner import run_question
    from tog_core.render.frontier import frontier_html
    from tog_core.render.frontier_items import trace_entity_types
    from tog_core.render.neighbourhood import neighbourhood_html

    engine = _engine(ROOT / "demo", 3, 3)
    graph = engine.graph
    with ThreadPoolExecutor(1) as pool:  # as test_browser_label_sizes._run: a thread of its own for the run's loop
        t = pool.submit(lambda: run_question(
            engine, "In which town was the founder of the Lanternwright Guild born?").to_dict()).result()
    hub = graph.find_title("Rookhaven")
    page = _fitted(chromium, neighbourhood_html(graph, hub, hops=2, height="520px", clickable=True), 1000, 520)
    _shot(page, tmp_path, "rookhaven_2_hops.png")
    said, overlaps, which = _text_overlaps(page)
    assert said >= 4 and overlaps == 0, (said, overlaps, which)
    assert "hover a link without text" in page.inner_text(".tog-legend")
    page.close()
    page = _fitted(chromium, frontier_html(t, None, height="560px", types=trace_entity_types(graph, t)), 1000, 560)
    _shot(page, tmp_path, "replay_lanternwright.png")
    said, overlaps, which = _text_overlaps(page)
    assert said >= 3 and overlaps == 0, (said, overlaps, which)
    page.close()
