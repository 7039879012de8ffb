"""The live picture: one page (vis-network, the fit and click hooks of render.page, and `_LIVE`) loaded once in the
app's picture component, into which each new picture is drawn as data (render.page.build_page(..., for_live=True)),
so that a new picture does not cost parsing vis-network again (~0.7 MB).

The parent frame posts {tog: "draw", picture: <JSON string>}; the page draws it into the same network (new DataSets)
and fits it afresh, as a newly loaded page would be. Text stays data: labels and tooltips go to vis (canvas /
innerText; the "href" trap of pyvis' template is not in this path, and `plain` breaks "href" anyway), the legend is
built element by element from a tree of allowed tags and attributes (render.style.legend_tree) with its text as text
nodes, the title as document.title. The page says {tog: "ready"} to its parent once its listener is set.
"""
from __future__ import annotations

from tog_core.render.page import build_page, vis_options

_LIVE = """<script>
(function () {
  if (typeof network === "undefined" || !network || window.parent === window) { return; }
  var MORE = {}, TAGS = {div: 1, span: 1, i: 1, b: 1, button: 1},
      ATTRS = {"class": 1, style: 1, id: 1, type: 1, title: 1};
  function build(parent, items) {
    (Array.isArray(items) ? items : []).forEach(function (it) {
      if (typeof it === "string") { parent.appendChild(document.createTextNode(it)); return; }
      if (!it || typeof it !== "object" || !TAGS[it.tag]) { return; }
      var el = document.createElement(it.tag), attrs = it.attrs || {};
      Object.keys(attrs).forEach(function (k) {
        var v = String(attrs[k]);
        if (ATTRS[k] && !/url\\s*\\(|expression\\s*\\(/i.test(v)) { el.setAttribute(k, v); }
      });
      build(el, it.children);
      parent.appendChild(el);
    });
  }
  network.on("click", function (p) {  // an "n more" node: what it stands for comes into the picture
    if (!p.nodes || !p.nodes.length) { return; }
    var key = String(p.nodes[0]), more = Object.prototype.hasOwnProperty.call(MORE, key) ? MORE[key] : null;
    if (!more) { return; }
    delete MORE[key];
    nodes.remove(p.nodes[0]);
    nodes.add(more.nodes || []);
    edges.add(more.edges || []);
    if (window.togFit) { window.togFit(); }
  });
  window.addEventListener("message", function (event) {
    var m = event.data, pic;
    if (event.source !== window.parent || !m || typeof m !== "object" || m.tog !== "draw") { return; }
    try { pic = JSON.parse(String(m.picture)); } catch (err) { return; }
    if (!pic || typeof pic !== "object") { return; }
    // a tooltip open over the picture being replaced would stay over the next one: hide it
    Array.prototype.forEach.call(document.querySelectorAll(".vis-tooltip"), function (t) {
      t.style.visibility = "hidden";
    });
    network.setOptions(pic.options || {});
    nodes = new vis.DataSet(Array.isArray(pic.nodes) ? pic.nodes : []);
    edges = new vis.DataSet(Array.isArray(pic.edges) ? pic.edges : []);
    network.setData({nodes: nodes, edges: edges});
    MORE = pic.more && typeof pic.more === "object" ? pic.more : {};
    var box = document.querySelector(".tog-legend");
    if (box) { while (box.firstChild) { box.removeChild(box.firstChild); } build(box, pic.legend); }
    document.title = String(pic.title || "picture");
    if (window.togRedraw) { window.togRedraw(!!pic.physics); }
  });
  window.parent.postMessage({tog: "ready"}, "*");
})();
</script>"""


_SHELL: list[str] = []


def live_shell() -> str:
    """The page of a live picture: vis-network, the fit and click hooks and `_LIVE`, with nothing drawn yet; each
    picture then comes as data (`build_page(..., for_live=True)`). The same string for the whole process."""
    if not _SHELL:
        page = build_page([], [], vis_options(0, 0, physics=False), height="100%",
                          legend_html='<div class="tog-legend"></div>', title="ToG picture", clickable=True)
        i = page.rfind("</body>")
        _SHELL.append(page[:i] + _LIVE + "\n" + page[i:])
    return _SHELL[0]
