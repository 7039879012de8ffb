"""pyvis pictures of a trace (search frontier, final chains) and of a graph neighbourhood.

Every function returns one standalone HTML page (vis.js inlined, no external URL) built from a trace
dict (`Trace.to_dict()`) or a KnowledgeGraph. Safety, measured on pyvis 0.3.2 / vis-network 9.1.2:

* data reaches the page only inside `nodes|tojson` / `edges|tojson`, which escapes `<`, `>`, `&`, `'`;
* vis draws labels on a canvas and shows string tooltips with `innerText`, so data is never parsed as
  HTML; we still make every data string inert (`plain`): `<`/`>` become `‹`/`›`, control, bidi and
  zero-width characters go, and "href" is broken with a zero-width space because pyvis switches its
  tooltips to `innerHTML` when a node title contains that substring;
* pyvis `heading=` (inserted unescaped) is never used; the Bootstrap CDN tags and the unused
  `utils.js` bindings pyvis adds are removed, and `_finish` fails loudly if any external src/href is left;
* physics stabilises (bounded iterations) and is then switched off, so the picture stops moving.

pyvis is imported lazily: importing this module is cheap (the CLI imports it for `export`).
"""
from __future__ import annotations

import html as _html
import json
import re
from collections import defaultdict, deque
from typing import Any, Iterable

DEPTH_COLOURS = ("#4263eb", "#2f9e44", "#f08c00", "#ae3ec9", "#1098ad", "#e8590c", "#5c940d")
OVERRIDE_COLOUR = "#d6336c"
FRONTIER_BORDER = "#212529"
EDGE_LABELS_MAX = 120  # above this many edges, relation text is in tooltips only (labels would be unreadable)
TOOLTIP_MAX = 600

_INVISIBLE = re.compile("[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]")
_HREF = re.compile(r"(?i)h(?=ref)")


def plain(text: Any, limit: int = TOOLTIP_MAX) -> str:
    """Data text made inert for a vis label/tooltip: no markup characters, no invisible/bidi characters,
    no "href" substring, at most `limit` characters. Readable (no `&amp;` shown to people)."""
    s = "" if text is None else str(text)
    s = _INVISIBLE.sub("", s).replace("<", "‹").replace(">", "›")
    if len(s) > limit:
        s = s[: max(limit - 1, 0)] + "…"
    return _HREF.sub("h\u200b", s)


def short(text: Any, n: int = 40) -> str:
    """One line of at most n characters (whitespace collapsed, "…" when cut), made inert like `plain`."""
    s = " ".join(("" if text is None else str(text)).split())
    return plain(s, n)


def _colour(depth: int) -> str:
    return DEPTH_COLOURS[max(depth, 0) % len(DEPTH_COLOURS)]


def _fade(hex_colour: str, amount: float = 0.7) -> str:
    r, g, b = (int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))
    return "#{:02x}{:02x}{:02x}".format(*(round(c + (255 - c) * amount) for c in (r, g, b)))


def _num(x: Any) -> str:
    try:
        return f"{float(x):.2f}"
    except (TypeError, ValueError):
        return "?"


# ---------------------------------------------------------------------------------------------- page

_CSS = """<style>
body{margin:0;font-family:system-ui,-apple-system,"Segoe UI",sans-serif;color:#212529;background:#fff}
.tog-legend{font-size:13px;padding:6px 10px;display:flex;flex-wrap:wrap;gap:4px 14px;align-items:center;
 border-bottom:1px solid #e9ecef}
.tog-legend .sw{display:inline-block;width:12px;height:12px;border-radius:50%;vertical-align:-2px;margin-right:4px}
.tog-legend .ln{display:inline-block;width:22px;border-top:2px dashed #adb5bd;vertical-align:3px;margin-right:4px}
.tog-legend .note{color:#c92a2a;font-weight:600}
div.vis-tooltip{white-space:pre-wrap;max-width:440px;font-size:12px;font-family:inherit}
#mynetwork{float:none!important;border:0!important}
</style>"""

_STOP_PHYSICS = """<script>
(function () {
  if (typeof network === "undefined" || !network) { return; }
  var stopped = false;
  function stop() { if (!stopped) { stopped = true; network.setOptions({physics: {enabled: false}}); } }
  network.once("stabilizationIterationsDone", stop);
  network.once("stabilized", stop);
  setTimeout(stop, 15000);
})();
</script>"""

_EXTERNAL = re.compile(r"""\b(?:src|href)\s*=\s*["']?\s*(?:https?:)?//""", re.I)


def _options(n_nodes: int, n_edges: int, *, physics: bool) -> dict[str, Any]:
    opts: dict[str, Any] = {
        "nodes": {"shape": "dot", "font": {"size": 14, "face": "sans-serif", "strokeWidth": 3, "strokeColor": "#ffffff"}},
        "edges": {"arrows": {"to": {"enabled": True, "scaleFactor": 0.5}},
                  "font": {"size": 10, "align": "middle", "color": "#495057", "strokeWidth": 3},
                  "smooth": {"enabled": n_edges <= 150, "type": "continuous"}},
        "interaction": {"hover": True, "tooltipDelay": 150},
        "layout": {"randomSeed": 7, "improvedLayout": n_nodes <= 100},
        "physics": {"enabled": physics, "solver": "forceAtlas2Based",
                    "forceAtlas2Based": {"gravitationalConstant": -70, "springLength": 130, "avoidOverlap": 0.3},
                    "stabilization": {"enabled": physics, "iterations": 200 if n_nodes <= 300 else 120, "fit": True}},
    }
    return opts


def _legend(items: Iterable[str], note: str = "") -> str:
    """items are trusted HTML fragments built here; note is plain text (escaped)."""
    parts = list(items)
    if note:
        parts.append(f'<span class="note">{_html.escape(note)}</span>')
    return '<div class="tog-legend">' + "".join(f"<span>{p}</span>" for p in parts) + "</div>"


def legend_html(depths: Iterable[int] = (0, 1, 2, 3), *, pruned: bool = True, frontier: bool = True,
                overridden: bool = True, note: str = "") -> str:
    """The legend drawn above a frontier picture (HTML fragment, no data text except the escaped note)."""
    items = []
    for d in sorted(set(depths)):
        name = "seed" if d == 0 else f"depth {d}"
        items.append(f'<i class="sw" style="background:{_colour(d)}"></i>{name}')
    if pruned:
        items.append(f'<i class="sw" style="background:{_fade(DEPTH_COLOURS[1])}"></i><i class="ln"></i>pruned')
    if frontier:
        items.append(f'<i class="sw" style="background:#fff;border:3px solid {FRONTIER_BORDER}"></i>current frontier')
    if overridden:
        items.append(f'<i class="sw" style="background:#fff;border:3px solid {OVERRIDE_COLOUR}"></i>✎ overridden by a person')
    return _legend(items, note)


def _page(nodes: list[dict[str, Any]], edges: list[dict[str, Any]], options: dict[str, Any], *, height: str,
          legend: str, title: str) -> str:
    from pyvis.network import Network  # lazy: pyvis pulls in networkx and IPython

    net = Network(height=height, width="100%", directed=True, cdn_resources="in_line")
    for n in nodes:
        n = dict(n)
        net.add_node(n.pop("id"), label=n.pop("label"), shape=n.pop("shape", "dot"), **n)
    for e in edges:
        e = dict(e)
        net.add_edge(e.pop("from"), e.pop("to"), **e)
    net.options = options
    return _finish(net.generate_html(), legend=legend, title=title, physics=bool(options["physics"]["enabled"]))


def _finish(page: str, *, legend: str, title: str, physics: bool) -> str:
    """Post-process pyvis' page: drop CDN tags, empty headings, unused bindings; add CSS, legend, physics stop."""
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
    page = page.replace("<body>", "<body>\n" + legend, 1)
    if physics:
        i = page.rfind("</body>")
        page = page[:i] + _STOP_PHYSICS + "\n" + page[i:]
    if _EXTERNAL.search(page):
        raise RuntimeError("pyvis output still references an external resource; check the pyvis version")
    return page


def empty_html(message: str, *, height: str = "200px") -> str:
    """A picture-shaped page that only says why there is nothing to draw."""
    return (f'<!doctype html><html><head><meta charset="utf-8">{_CSS}</head><body>'
            f'<div style="height:{_html.escape(height)};display:flex;align-items:center;justify-content:center;'
            f'color:#868e96">{_html.escape(message)}</div></body></html>')


# ---------------------------------------------------------------------------------------------- frontier

def _steps_upto(trace: dict[str, Any], depth: int | None) -> list[dict[str, Any]]:
    steps = trace.get("steps") or []
    return [s for s in steps if depth is None or int(s.get("depth", 0) or 0) <= depth]


def overridden_ids(step: dict[str, Any]) -> set[str]:
    """Ids of the candidates a person overrode in one step: the step's recorded `overrides`; when none are
    recorded but the step carries automatic choices (some `auto_kept` true), candidates whose `kept`
    differs from `auto_kept`."""
    recorded = {str(o.get("id")) for o in step.get("overrides") or [] if isinstance(o, dict)}
    if recorded:
        return recorded
    cands = step.get("candidates") or []
    if not any(c.get("auto_kept") for c in cands):
        return set()
    return {str(c.get("id")) for c in cands if bool(c.get("kept")) != bool(c.get("auto_kept"))}


def frontier_html(trace: dict[str, Any], depth: int | None = None, *, max_nodes: int = 300,
                  height: str = "560px") -> str:
    """The search as of `depth` (None = all): seeds, kept entities per depth, pruned candidates (faded,
    dashed), the current frontier (thick border), overridden candidates (pink border, ✎)."""
    steps = _steps_upto(trace, depth)
    ents: dict[str, dict[str, Any]] = {}  # entity key → facts; insertion order is the drawing order

    def entity(key: str, title: str) -> dict[str, Any]:
        if key not in ents:
            ents[key] = {"title": title, "depth": None, "kept": False, "seed": None, "best": float("-inf"),
                         "overridden": False, "notes": []}
        return ents[key]

    for s in trace.get("seeds") or []:
        e = entity(str(s.get("id") or s.get("title")), s.get("title", ""))
        e.update(depth=0, kept=True, seed=s.get("how", ""))

    rel_summary: dict[tuple[str, int], list[int]] = defaultdict(lambda: [0, 0])
    edges: dict[tuple[str, str, str], dict[str, Any]] = {}
    last_kept: list[str] = []
    for step in steps:
        d = int(step.get("depth", 0) or 0)
        stage = step.get("stage")
        if stage == "relations":
            for c in step.get("candidates") or []:
                rel_summary[(str(c.get("source_id") or c.get("source_entity")), d)][0 if c.get("kept") else 1] += 1
            continue
        if stage != "entities":
            continue
        kept_here, over_ids = [], overridden_ids(step)
        for c in step.get("candidates") or []:
            src = str(c.get("source_id") or c.get("source_entity"))
            dst = str(c.get("target_id") or c.get("target") or c.get("label"))
            entity(src, c.get("source_entity", ""))["kept"] = True  # only kept entities are expanded
            e = entity(dst, c.get("target") or c.get("label", ""))
            kept, over = bool(c.get("kept")), str(c.get("id")) in over_ids
            if e["depth"] is None or (kept and not e["kept"]):
                e["depth"] = d
            e["kept"] = e["kept"] or kept
            e["overridden"] = e["overridden"] or over
            try:
                e["best"] = max(e["best"], float(c.get("score", 0) or 0))
            except (TypeError, ValueError):
                pass
            if kept:
                kept_here.append(dst)
            key = (src, dst, str(c.get("relation") or ""))
            old = edges.get(key)
            if old is None or (kept and not old["kept"]):
                edges[key] = {"kept": kept, "over": over, "depth": d, "cand": c}
        last_kept = kept_here or last_kept
    frontier = set(last_kept) if last_kept else {k for k, e in ents.items() if e["seed"] is not None}

    # cap: seeds, frontier, kept by depth, then pruned by score
    order = sorted(ents, key=lambda k: (ents[k]["seed"] is None, k not in frontier, not ents[k]["kept"],
                                        ents[k]["depth"] if ents[k]["depth"] is not None else 99, -ents[k]["best"]))
    shown = order[:max_nodes]
    hidden = len(order) - len(shown)
    ids = {k: i for i, k in enumerate(shown)}

    nodes = []
    for k in shown:
        e = ents[k]
        d = e["depth"] if e["depth"] is not None else 0
        base = _colour(d)
        fill = base if e["kept"] else _fade(base)
        border, width = (fill, 1)
        if k in frontier:
            border, width = FRONTIER_BORDER, 4
        if e["overridden"]:
            border, width = OVERRIDE_COLOUR, 4
        status = ("seed (" + plain(e["seed"], 40) + ")") if e["seed"] is not None else \
            (f"kept at depth {d}" if e["kept"] else f"pruned at depth {d}")
        tip = [plain(e["title"], 300), status]
        if k in frontier:
            tip.append("in the current frontier")
        if e["overridden"]:
            tip.append("✎ overridden by a person")
        for (src, rd), (nk, np_) in sorted(rel_summary.items(), key=lambda x: x[0][1]):
            if src == k:
                tip.append(f"depth {rd} relations: {nk} kept, {np_} pruned")
        label = short(e["title"], 30) + (" ✎" if e["overridden"] else "")
        nodes.append({"id": ids[k], "label": label, "title": "\n".join(tip),
                      "color": {"background": fill, "border": border,
                                "highlight": {"background": fill, "border": FRONTIER_BORDER}},
                      "borderWidth": width, "size": 18 if e["seed"] is not None else (14 if e["kept"] else 9),
                      "font": {"color": "#212529" if e["kept"] else "#adb5bd"}})

    visible = [(k, v) for k, v in edges.items() if k[0] in ids and k[1] in ids]
    labelled = len(visible) <= EDGE_LABELS_MAX
    out_edges = []
    for (src, dst, rel), v in visible:
        c = v["cand"]
        a, b = (ids[src], ids[dst]) if c.get("outgoing", True) else (ids[dst], ids[src])
        tip = [plain(rel, 400), f"score {_num(c.get('score'))} · " + ("kept" if v["kept"] else "pruned")
               + f" at depth {v['depth']}"]
        if c.get("reason"):
            tip.append("reason: " + plain(c.get("reason"), 400))
        if v["over"]:
            auto = "kept" if c.get("auto_kept") else "pruned"
            tip.append(f"✎ overridden (automatic choice: {auto})")
        colour = _colour(v["depth"]) if v["kept"] else "#ced4da"
        out_edges.append({"from": a, "to": b, "label": short(rel, 40) if labelled else "", "title": "\n".join(tip),
                          "dashes": not v["kept"], "width": 2 if v["kept"] else 1,
                          "color": {"color": OVERRIDE_COLOUR if v["over"] else colour, "highlight": FRONTIER_BORDER}})

    depths = {ents[k]["depth"] or 0 for k in shown}
    note = f"{hidden} more not shown" if hidden else ""
    if not labelled:
        note = (note + "; " if note else "") + f"{len(visible)} edges: hover an edge for its relation"
    legend = legend_html(depths, note=note)
    title = "ToG search" + ("" if depth is None else f" up to depth {depth}")
    return _page(nodes, out_edges, _options(len(nodes), len(out_edges), physics=True),
                 height=height, legend=legend, title=title)


# ---------------------------------------------------------------------------------------------- chains

def _walk(chain: list[dict[str, Any]], seed_ids: set[str]) -> list[tuple[str, str]]:
    """Entities of a chain in walking order as (key, title), whatever direction each link is stored in."""
    if not chain:
        return []
    first = chain[0]
    s, t = str(first.get("source_id") or first.get("source")), str(first.get("target_id") or first.get("target"))
    if len(chain) > 1:
        nxt = chain[1]
        ends = {str(nxt.get("source_id") or nxt.get("source")), str(nxt.get("target_id") or nxt.get("target"))}
        start = t if (s in ends and t not in ends) else s
    else:
        start = t if (t in seed_ids and s not in seed_ids) else s
    titles = {s: first.get("source", ""), t: first.get("target", "")}
    walk = [(start, titles[start])]
    cur = start
    for link in chain:
        ls, lt = str(link.get("source_id") or link.get("source")), str(link.get("target_id") or link.get("target"))
        nxt_key, nxt_title = (lt, link.get("target", "")) if cur == ls else (ls, link.get("source", ""))
        walk.append((nxt_key, nxt_title))
        cur = nxt_key
    return walk


def chains_html(trace: dict[str, Any], *, emphasise: int = 0, height: str = "420px") -> str:
    """The final reasoning chains laid out left→right by hop; chain `emphasise` (the one the answer used)
    drawn thick and coloured, the others grey. One node per distinct entity."""
    chains = [c for c in (trace.get("chains") or []) if c]
    if not chains:
        return empty_html("No reasoning chains yet.", height=height)
    seed_ids = {str(s.get("id")) for s in trace.get("seeds") or []}
    walks = [_walk(c, seed_ids) for c in chains]
    place: dict[str, tuple[int, str]] = {}
    for w in walks:
        for hop, (key, title) in enumerate(w):
            if key not in place or hop < place[key][0]:
                place[key] = (hop, title if key not in place else place[key][1])
    columns: dict[int, list[str]] = defaultdict(list)
    for key, (hop, _) in place.items():
        columns[hop].append(key)
    emph_keys = {k for k, _ in walks[emphasise]} if 0 <= emphasise < len(walks) else set()
    ids = {k: i for i, k in enumerate(place)}
    nodes = []
    for hop, keys in sorted(columns.items()):
        for row, key in enumerate(keys):
            title = place[key][1]
            on = key in emph_keys
            colour = _colour(hop)
            nodes.append({"id": ids[key], "label": short(title, 30), "title": plain(title, 300) + f"\nhop {hop}",
                          "x": hop * 260, "y": round((row - (len(keys) - 1) / 2) * 110), "fixed": True,
                          "physics": False, "size": 18 if on else 12, "borderWidth": 3 if on else 1,
                          "color": {"background": colour if on else _fade(colour, 0.45),
                                    "border": FRONTIER_BORDER if on else colour},
                          "font": {"color": "#212529" if on else "#495057"}})
    edges, seen, parallel = [], set(), defaultdict(int)
    for ci, (chain, w) in enumerate(zip(chains, walks)):
        for hop, link in enumerate(chain):
            rid = str(link.get("relationship_id") or link.get("relation"))
            a, b = w[hop][0], w[hop + 1][0]
            if (a, b, rid) in seen and ci != emphasise:
                continue
            seen.add((a, b, rid))
            stored_fwd = str(link.get("source_id") or link.get("source")) == a
            tip = [plain(link.get("relation"), 400), f"score {_num(link.get('score', 1.0))} · chain {ci + 1}, hop {hop + 1}"]
            units = [plain(u, 80) for u in (link.get("text_unit_ids") or [])]
            if units:
                tip.append("evidence: " + ", ".join(units[:8]) + (" …" if len(units) > 8 else ""))
            on = ci == emphasise
            k = parallel[frozenset((a, b))]
            parallel[frozenset((a, b))] += 1
            edges.append({"from": ids[a] if stored_fwd else ids[b], "to": ids[b] if stored_fwd else ids[a],
                          "label": short(link.get("relation"), 40), "title": "\n".join(tip),
                          "width": 3 if on else 1, "color": {"color": _colour(hop + 1) if on else "#adb5bd"},
                          "smooth": {"enabled": True, "type": "curvedCW" if k % 2 == 0 else "curvedCCW",
                                     "roundness": 0.08 + 0.12 * ((k + 1) // 2)}})
    legend = _legend([f"{len(chains)} chain(s), left→right by hop",
                      f'<i class="sw" style="background:#fff;border:3px solid {FRONTIER_BORDER}"></i>'
                      f"chain {emphasise + 1} (used for the answer)" if emph_keys else "no chain emphasised"])
    opts = _options(len(nodes), len(edges), physics=False)
    opts["interaction"]["dragNodes"] = True
    return _page(nodes, edges, opts, height=height, legend=legend, title="ToG reasoning chains")


# ---------------------------------------------------------------------------------------------- neighbourhood

def neighbourhood_html(graph: Any, entity_idx: int, *, hops: int = 1, max_nodes: int = 150,
                       height: str = "560px") -> str:
    """`hops` around one entity of a KnowledgeGraph; when more than `max_nodes` are reached, the centre,
    then the nearest and, within a distance, the highest-degree entities are kept ("N more not shown")."""
    centre = int(entity_idx)
    dist = {centre: 0}
    queue = deque([centre])
    while queue:
        v = queue.popleft()
        if dist[v] >= hops:
            continue
        _, others, _ = graph.neighbors(v)
        for o in others.tolist():
            if o not in dist:
                dist[o] = dist[v] + 1
                queue.append(o)
    order = sorted(dist, key=lambda i: (dist[i], -graph.degree(i), i))
    shown = order[:max(max_nodes, 1)]
    hidden = len(order) - len(shown)
    keep = set(shown)
    nodes = []
    for i in shown:
        e = graph.entity(i)
        colour = "#adb5bd" if e.placeholder else _colour(dist[i])
        tip = [plain(e.title, 300), f"{plain(e.type, 40) or 'entity'} · degree {e.degree} · hop {dist[i]}"]
        if e.description:
            tip.append(plain(e.description, 500))
        nodes.append({"id": i, "label": short(e.title, 30), "title": "\n".join(tip),
                      "size": 10 + min(e.degree, 60) ** 0.5 * 2.5, "borderWidth": 4 if i == centre else 1,
                      "color": {"background": colour, "border": FRONTIER_BORDER if i == centre else colour}})
    rels = []
    for i in shown:
        ridx, others, _ = graph.neighbors(i)
        for r, o in zip(ridx.tolist(), others.tolist()):
            if o in keep:
                rels.append(r)
    rels = sorted(set(rels))
    labelled = len(rels) <= EDGE_LABELS_MAX
    edges = []
    for r in rels:
        rel = graph.relationship(r)
        tip = [plain(rel.description or rel.label, 400), f"weight {_num(rel.weight)} · {len(rel.text_unit_ids)} text unit(s)"]
        edges.append({"from": rel.source_idx, "to": rel.target_idx, "label": short(rel.label, 40) if labelled else "",
                      "title": "\n".join(tip), "color": {"color": "#adb5bd", "highlight": FRONTIER_BORDER}})
    note = f"{hidden} more not shown" if hidden else ""
    if not labelled:
        note = (note + "; " if note else "") + f"{len(rels)} edges: hover an edge for its relation"
    items = [f'<i class="sw" style="background:{_colour(h)}"></i>' + ("centre" if h == 0 else f"{h} hop(s)")
             for h in sorted({dist[i] for i in shown})]
    return _page(nodes, edges, _options(len(nodes), len(edges), physics=True), height=height,
                 legend=_legend(items, note), title="Neighbourhood")


def picture_json(page: str) -> dict[str, Any]:
    """The nodes and edges embedded in a page built here (for tests and debugging)."""
    m_nodes = re.search(r"nodes = new vis\.DataSet\((.*?)\);\n", page)
    m_edges = re.search(r"edges = new vis\.DataSet\((.*?)\);\n", page)
    return {"nodes": json.loads(m_nodes.group(1)) if m_nodes else [],
            "edges": json.loads(m_edges.group(1)) if m_edges else []}
