"""Page assembly for every picture: vis options, and the standalone pyvis page with its fit behaviour and an optional
click hook. What the items look like (inert text, colours, the legend) is render/style.py.

Safety, measured on pyvis 0.3.2 / vis-network 9.1.2:

* data reaches the page only inside `nodes|tojson` / `edges|tojson`, which escapes `<`, `>`, `&`, `'`;
* vis draws labels on a canvas and shows string tooltips with `innerText`, so data is never parsed as
  HTML; we still make every data string inert (`style.plain`): `<`/`>` become `‹`/`›`, control, bidi and
  zero-width characters go, and "href" is broken with a zero-width space because pyvis switches its
  tooltips to `innerHTML` when a node title contains that substring;
* pyvis `heading=` (inserted unescaped) is never used; the Bootstrap CDN tags and the unused
  `utils.js` bindings pyvis adds are removed, and `finish` fails loudly if any tag or attribute of the page's real
  markup (parsed, so text inside the data JSON never counts) still loads something from outside.

Fit: the network fills the frame below its legend (flex layout) and is fitted to the view when it is first
drawn, whenever the frame gets a new size (a Streamlit tab shown again, a window resize) until the person
zooms or drags, and when the legend's Fit button is pressed. Physics, when a picture uses it, stabilises in
bounded iterations and is then switched off. Click hook (`clickable`): a click on a node that carries a
`ref` posts {tog: "pick", ref, label} to the parent frame (the app's picture component, app_component/).

pyvis is imported lazily: importing this module is cheap (the CLI imports it for `export`).
"""
from __future__ import annotations

import html as _html
import json
import re
from html.parser import HTMLParser
from typing import Any

from tog_core.render.style import legend_tree

MIN_LABEL_PX = 12.5  # labels are held at least this large on screen when the picture is fitted to its frame
NODE_FONT, EDGE_FONT = 16, 12  # vis font sizes (canvas units) unless a node or edge sets its own


# ---------------------------------------------------------------------------------------------- page

_CSS = """<style>
html,body{height:100%}
body{margin:0;font-family:system-ui,-apple-system,"Segoe UI",sans-serif;color:#212529;background:#fff;
 display:flex;flex-direction:column;min-height:180px}
.tog-legend{font-size:13px;padding:6px 10px;display:flex;flex-wrap:wrap;gap:4px 14px;align-items:center;
 border-bottom:1px solid #e9ecef;flex:0 0 auto}
.tog-legend .sw{display:inline-block;width:12px;height:12px;border-radius:50%;vertical-align:-2px;margin-right:4px;
 box-sizing:border-box}
.tog-legend .ln{display:inline-block;width:22px;border-top:2px dashed #adb5bd;vertical-align:3px;margin-right:4px}
.tog-legend .note{color:#495057;font-style:italic}
.tog-legend .zoom{margin-left:auto;color:#868e96;font-size:12px}
.tog-legend .zoom+#tog-fit{margin-left:0}
#tog-fit{margin-left:auto;font:inherit;padding:1px 10px;border:1px solid #ced4da;border-radius:4px;background:#fff;
 cursor:pointer}
div.vis-tooltip{white-space:pre-wrap;max-width:440px;font-size:12px;font-family:inherit}
.card{flex:1 1 auto;display:flex;flex-direction:column;min-height:0}
#mynetwork{float:none!important;border:0!important;flex:1 1 auto;height:auto!important;min-height:140px}
</style>"""

_FIT = """<script>
(function () {
  if (typeof network === "undefined" || !network) { return; }
  var el = document.getElementById("mynetwork"), moved = false, last = "";
  // labels held at a readable size at fit: a label's on-screen size is its font size times the view's scale
  var base = {};
  function hold() {
    var scale = network.getScale();
    if (!(scale > 0)) { return; }
    [[nodes, NODE_FONT], [edges, EDGE_FONT]].forEach(function (pair) {
      var set = pair[0], ups = [];
      set.forEach(function (item) {
        if (!item.label) { return; }
        var key = (set === nodes ? "n" : "e") + item.id;
        if (base[key] === undefined) { base[key] = (item.font && item.font.size) || pair[1]; }
        var want = Math.max(base[key], Math.ceil(MIN_PX / scale));
        if (!item.font || item.font.size !== want) {
          ups.push({id: item.id, font: Object.assign({}, item.font || {}, {size: want})});
        }
      });
      if (ups.length) { set.update(ups); }
    });
  }
  function fit() { network.fit({animation: false}); hold(); network.fit({animation: false}); hold(); }
  window.togFit = fit;
  function sized() {
    var w = el.clientWidth, h = el.clientHeight, s = w + "x" + h;
    if (w > 0 && h > 0 && s !== last) {
      last = s; network.setSize("100%", "100%"); network.redraw(); if (!moved) { fit(); }
    }
  }
  network.on("dragStart", function () { moved = true; });
  network.on("zoom", function () { moved = true; });
  // the wheel alone is the page's: stopped here, before vis' canvas hears it, and not prevented, so the browser
  // scrolls the app's page; Ctrl/⌘ + wheel (a touchpad's pinch arrives as one) and a touch pinch reach vis' own zoom
  el.addEventListener("wheel", function (e) {
    if (!(e.ctrlKey || e.metaKey)) { e.stopPropagation(); }
  }, true);
  document.addEventListener("click", function (e) {  // the legend's Fit button (a live picture redraws its legend)
    if (e.target && e.target.id === "tog-fit") { moved = false; last = ""; sized(); fit(); }
  });
  if (window.ResizeObserver) { new ResizeObserver(sized).observe(el); }
  window.addEventListener("resize", sized);
  document.addEventListener("visibilitychange", function () { if (!document.hidden) { last = ""; sized(); } });
  var physics = PHYSICS, round = 0;
  function start() {
    var mine = ++round, stopped = false;
    function settle() {
      if (stopped || mine !== round) { return; }
      stopped = true;
      if (physics) { network.setOptions({physics: {enabled: false}}); }
      if (!moved) { fit(); }
    }
    network.once("stabilizationIterationsDone", settle);
    network.once("stabilized", settle);
    setTimeout(settle, physics ? 15000 : 0);
  }
  // new data drawn into this page (a live picture, render.live): fitted afresh, as a newly loaded page would be
  window.togRedraw = function (withPhysics) {
    base = {}; moved = false; last = ""; physics = !!withPhysics; start(); sized();
  };
  start();
  sized();
})();
</script>"""

_CLICK = """<script>
(function () {
  if (typeof network === "undefined" || !network || window.parent === window) { return; }
  network.on("click", function (p) {
    if (!p.nodes || !p.nodes.length) { return; }
    var n = nodes.get(p.nodes[0]);
    if (!n || n.ref === undefined || n.ref === null) { return; }
    window.parent.postMessage({tog: "pick", ref: String(n.ref), label: String(n.label || "")}, "*");
  });
})();
</script>"""

_URL_ATTRS = frozenset({"src", "href", "srcset", "action", "formaction", "poster", "data", "background", "xlink:href",
                        "manifest", "ping", "cite", "longdesc", "codebase", "archive", "icon"})
_OUTSIDE = re.compile(r"(?i)^\s*(?:[a-z][a-z0-9+.\-]*:)?//|^\s*(?:https?|ftp|wss?):")
_CSS_OUTSIDE = re.compile(r"""(?i)(?:url\(\s*["']?|@import\s+["']?)\s*(?:[a-z][a-z0-9+.\-]*:)?//""")


class _Markup(HTMLParser):
    """Collects what a page's real markup loads from outside: URL attributes of tags, CSS in <style> elements and
    style attributes, and (recursively) iframe srcdoc pages. Script bodies are text to this parser, so data inside
    the pictures' JSON is never mistaken for markup."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []
        self._style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for k, v in attrs:
            v = v or ""
            if k in _URL_ATTRS and any(_OUTSIDE.search(u) for u in (v.split(",") if k == "srcset" else [v])):
                self.found.append(f"<{tag} {k}={v[:80]}>")
            elif k == "style" and _CSS_OUTSIDE.search(v):
                self.found.append(f"<{tag} style={v[:80]}>")
            elif k == "srcdoc":
                self.found += external_references(v)
            elif k == "http-equiv" and v.strip().lower() == "refresh":
                self.found.append(f"<{tag} http-equiv=refresh>")
        self._style = tag == "style"

    def handle_endtag(self, tag: str) -> None:
        self._style = False

    def handle_data(self, data: str) -> None:
        if self._style and _CSS_OUTSIDE.search(data):
            self.found.append(f"<style>{data[:80]}")


def external_references(page: str) -> list[str]:
    """What the page's markup would load from another origin (empty for every page built here)."""
    parser = _Markup()
    parser.feed(page)
    parser.close()
    return parser.found


def arrows(forward: bool) -> dict[str, Any]:
    """Edges are drawn left to right (from the nearer hop); the arrow shows the direction the graph stores."""
    return {"to": {"enabled": forward, "scaleFactor": 0.5}, "from": {"enabled": not forward, "scaleFactor": 0.5}}


def vis_options(n_nodes: int, n_edges: int, *, physics: bool) -> dict[str, Any]:
    return {
        "nodes": {"shape": "dot", "font": {"size": NODE_FONT, "face": "sans-serif", "strokeWidth": 4,
                                           "strokeColor": "#ffffff"}},
        # edge labels sit above their edge, so the line does not run through them
        "edges": {"arrows": {"to": {"enabled": True, "scaleFactor": 0.5}},
                  "font": {"size": EDGE_FONT, "align": "top", "color": "#495057", "strokeWidth": 3},
                  "smooth": {"enabled": n_edges <= 150, "type": "continuous"}},
        # vis zooms on Ctrl/⌘ + wheel and a pinch only; the wheel alone scrolls the page (_FIT): a picture that took
        # every wheel turn for its zoom held the page still whenever the pointer crossed it
        "interaction": {"hover": True, "tooltipDelay": 150},
        "layout": {"randomSeed": 7, "improvedLayout": n_nodes <= 100},
        "physics": {"enabled": physics, "solver": "forceAtlas2Based",
                    "forceAtlas2Based": {"gravitationalConstant": -70, "springLength": 130, "avoidOverlap": 0.3},
                    "stabilization": {"enabled": physics, "iterations": 200 if n_nodes <= 300 else 120, "fit": True}},
    }


_ENVS: dict[str, Any] = {}


def _template_env(template_dir: str) -> Any:
    """One jinja environment per pyvis template folder, so compiled templates are reused between pictures."""
    env = _ENVS.get(template_dir)
    if env is None:
        from jinja2 import Environment, FileSystemLoader

        env = _ENVS[template_dir] = Environment(loader=FileSystemLoader(template_dir), auto_reload=False)
    return env


def _js_json(value: Any) -> str:
    """JSON safe inside a <script> element (as jinja's tojson: < > & ' escaped)."""
    return (json.dumps(value, ensure_ascii=False).replace("<", "\\u003c").replace(">", "\\u003e")
            .replace("&", "\\u0026").replace("'", "\\u0027"))


def _more_data(reserve: dict[Any, dict[str, list[dict[str, Any]]]]) -> dict[str, Any]:
    return {str(k): {"nodes": [dict(n, label=n.get("label", "")) for n in v.get("nodes", [])],
                     "edges": v.get("edges", [])} for k, v in reserve.items()}


def _more_script(reserve: dict[Any, dict[str, list[dict[str, Any]]]]) -> str:
    """"n more" nodes: a click on one puts the nodes and edges it stands for into the picture (and its own next
    "more" node, if any), then fits the view again."""
    if not reserve:
        return ""
    data = _js_json(_more_data(reserve))
    return ("<script>\n(function () {\n  var MORE = " + data + ";\n" + """
  if (typeof network === "undefined" || !network) { return; }
  network.on("click", function (p) {
    if (!p.nodes || !p.nodes.length) { return; }
    var key = String(p.nodes[0]), more = MORE[key];
    if (!more) { return; }
    delete MORE[key];
    nodes.remove(p.nodes[0]);
    nodes.add(more.nodes);
    edges.add(more.edges);
    if (window.togFit) { window.togFit(); }
  });
})();
</script>""")


def build_page(nodes: list[dict[str, Any]], edges: list[dict[str, Any]], options: dict[str, Any], *, height: str,
               legend_html: str, title: str, clickable: bool = False,
               reserve: dict[Any, dict[str, list[dict[str, Any]]]] | None = None, for_live: bool = False) -> str:
    """The standalone page for these nodes and edges (pyvis + our post-processing). `reserve`: for each "n more"
    node id, the nodes and edges (vis dicts, made inert like the rest) a click on it adds. `for_live`: the picture as
    JSON data for the live page (render.live.live_shell) instead: nodes, edges, options, legend (`legend_tree`),
    title, more, physics."""
    net = _network(nodes, edges, height)
    if for_live:
        return json.dumps({"nodes": net.nodes, "edges": net.edges, "options": options,
                           "legend": legend_tree(legend_html), "title": title, "more": _more_data(reserve or {}),
                           "physics": bool(options["physics"]["enabled"])}, ensure_ascii=False)
    net.options = options
    return finish(net.generate_html(), legend_html=legend_html, title=title,
                  physics=bool(options["physics"]["enabled"]), clickable=clickable, reserve=reserve)


def _network(nodes: list[dict[str, Any]], edges: list[dict[str, Any]], height: str) -> Any:
    """A pyvis network of these nodes and edges (its `nodes`/`edges`: the vis items a page draws)."""
    from pyvis.network import Network  # lazy: pyvis pulls in networkx and IPython

    net = Network(height=height, width="100%", directed=True, cdn_resources="in_line")
    net.templateEnv = _template_env(net.template_dir)  # pyvis makes a new one per network: its templates,
    # vis.js included, would be compiled again for every picture (~90 of ~120 ms)
    for n in nodes:
        n = dict(n)
        label = n.pop("label")
        net.add_node(n.pop("id"), label=label, shape=n.pop("shape", "dot"), **n)
        net.nodes[-1]["label"] = label  # pyvis would show the id in place of an empty label
    for e in edges:
        e = dict(e)
        net.add_edge(e.pop("from"), e.pop("to"), **e)
    return net


def finish(page: str, *, legend_html: str, title: str, physics: bool, clickable: bool = False,
           reserve: dict[Any, dict[str, list[dict[str, Any]]]] | None = None) -> str:
    """Post-process pyvis' page: drop CDN tags, empty headings, unused bindings; add CSS, legend, fit, clicks."""
    page = re.sub(r"<!--\s*<link.*?-->", "", page, flags=re.S)
    page = re.sub(r"<link\b[^>]*>", "", page)
    page = re.sub(r"<script\b[^>]*\bsrc\s*=[^>]*>\s*</script>", "", page)
    page = re.sub(r"<center>\s*<h1>\s*</h1>\s*</center>", "", page)
    start = page.find("<script>")
    end = page.find("</script>", start)
    if start >= 0 and "function neighbourhoodHighlight" in page[start:start + 200]:
        page = page[:start] + page[end + len("</script>"):]
    head = f'<meta charset="utf-8">\n<title>{_html.escape(title)}</title>'
    page = page.replace('<meta charset="utf-8">', head, 1)
    page = page.replace("</head>", _CSS + "\n</head>", 1)
    page = page.replace("<body>", "<body>\n" + legend_html, 1)
    i = page.rfind("</body>")
    scripts = (_FIT.replace("PHYSICS", "true" if physics else "false").replace("MIN_PX", str(MIN_LABEL_PX))
               .replace("NODE_FONT", str(NODE_FONT)).replace("EDGE_FONT", str(EDGE_FONT))
               + "\n" + _more_script(reserve or {}) + ("\n" + _CLICK if clickable else ""))
    page = page[:i] + scripts + "\n" + page[i:]
    outside = external_references(page)  # real tags and attributes only: data text is inert JSON inside a script
    if outside:
        raise RuntimeError(f"pyvis output still references an external resource ({outside[0]}); "
                           "check the pyvis version")
    return page


def empty_html(message: str, *, height: str = "200px") -> str:
    """A picture-shaped page that only says why there is nothing to draw."""
    return (f'<!doctype html><html><head><meta charset="utf-8">{_CSS}</head><body>'
            f'<div style="height:{_html.escape(height)};display:flex;align-items:center;justify-content:center;'
            f'color:#868e96">{_html.escape(message)}</div></body></html>')


def picture_json(page: str) -> dict[str, Any]:
    """The nodes and edges embedded in a page built here, and what each "n more" node adds (for tests and
    debugging); also of a live picture's data (`build_page(..., for_live=True)`)."""
    if page.startswith("{"):
        data = json.loads(page)
        return {"nodes": data["nodes"], "edges": data["edges"], "more": data["more"]}
    m_nodes = re.search(r"nodes = new vis\.DataSet\((.*?)\);\n", page)
    m_edges = re.search(r"edges = new vis\.DataSet\((.*?)\);\n", page)
    m_more = re.search(r"var MORE = (.*?);\n", page)
    return {"nodes": json.loads(m_nodes.group(1)) if m_nodes else [],
            "edges": json.loads(m_edges.group(1)) if m_edges else [],
            "more": json.loads(m_more.group(1)) if m_more else {}}
