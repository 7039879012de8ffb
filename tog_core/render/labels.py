"""Where the pictures write a link's relation text: level, on a white ground, in the middle of the link, and only where
it covers no entity (its dot or its name) and no relation text written before it; a link whose text would is drawn
without it (the text stays in its tooltip: hover the link). Shared by the graph browser's neighbourhood, the search
replay and the runs' comparison, whose items are placed by our own layouts (x, y on every node), so the place of each
text is known before the page is drawn.

Measured in Chromium (tests/test_browser_pictures.py): on the demo's 2-hop neighbourhood of Rookhaven (24 links), 65
pairs of relation texts drew over each other and 24 texts over an entity's name when written along the links; none
now.
"""
from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from typing import Any

from tog_core.render.page import EDGE_FONT, MIN_LABEL_PX, NODE_FONT

GROUND = "rgba(255,255,255,0.85)"  # the white ground under a level relation text: the link's line does not cross it
Box = tuple[float, float, float, float]  # left, top, right, bottom (canvas units)


def level_labels(options: dict[str, Any]) -> None:
    """Relation texts written level (not along their links, where texts of links leaving one entity crossed each
    other) on a white ground, in these vis options."""
    options["edges"]["font"].update(align="horizontal", background=GROUND)


def _em(ch: str) -> float:
    if unicodedata.east_asian_width(ch) in "WF":  # Chinese, Japanese, Korean: a whole font size
        return 1.0
    if ch in " ilj.,;:'!|ftrI()[]":
        return 0.34
    return 0.68 if ch.isupper() or ch in "mwMW" else 0.56


def text_width(label: str, font: float) -> float:
    """About how wide vis draws the widest line of `label` at `font` px (vis' Arial in Chromium: capitals 0.56-0.68
    of the font size, small letters about 0.5, i, l, t and spaces about 0.3; a wide character a whole font size)."""
    return font * max(sum(_em(ch) for ch in line) for line in (label or " ").split("\n"))


def two_lines(text: str, n: int = 20) -> str:
    """A relation's text as at most two lines of about n characters (cut with "…"): the same words take half the
    width, so more of them find room between the entities. `text` is made inert by the caller (style.short)."""
    if len(text) <= n:
        return text
    spaces = [i for i, ch in enumerate(text[: n + 1]) if ch == " " and i >= 4]
    # the space nearest the middle when the whole text fits on two lines, else the last one on the first line
    cut = (min(spaces, key=lambda i: abs(len(text) / 2 - i)) if len(text) <= 2 * n else spaces[-1]) if spaces else n
    first, rest = text[:cut].rstrip(), text[cut:].strip()
    if len(rest) > n:
        rest = rest[: n - 1].rstrip() + "…"
    return first + "\n" + rest


def label_box(label: str, size: float, font: float) -> tuple[float, float, float]:
    """The room a dot of radius `size` takes with its label (`font` px, drawn under it), in canvas units: (half the
    width, height above the dot's centre, height below it), a margin included. Entity names are mostly capitals
    (GraphRAG's), so every character but a wide one counts 0.62 of the font size here."""
    units = sum(1.0 if unicodedata.east_asian_width(ch) in "WF" else 0.62 for ch in label)
    return max(size, 0.5 * font * units) + 6, size + 6, size + 4 + 1.25 * font + 6


def _node_boxes(node: dict[str, Any], scale: float) -> list[Box]:
    """What a node covers: its box (text inside), or its dot and its name under it."""
    x, y = float(node["x"]), float(node["y"])
    font = max(float((node.get("font") or {}).get("size") or NODE_FONT), MIN_LABEL_PX / scale)
    label = str(node.get("label") or "")
    lines = label.count("\n") + 1
    if node.get("shape") == "box":
        half, tall = 0.5 * text_width(label, font) + 10, 0.65 * font * lines + 8
        return [(x - half, y - tall, x + half, y + tall)]
    r = float(node.get("size") or 10) + 4
    out = [(x - r, y - r, x + r, y + r)]
    if label.strip():
        half = 0.5 * text_width(label, font) + 6
        out.append((x - half, y + r - 2, x + half, y + r + 1.25 * font * lines + 6))
    return out


def _meet(a: Box, b: Box) -> bool:
    return min(a[2], b[2]) > max(a[0], b[0]) and min(a[3], b[3]) > max(a[1], b[1])


def frame_of(height: str) -> tuple[float, float]:
    """The frame a picture is fitted to, in px: a page about 1000 wide, `height` ("520px") less its legend."""
    try:
        tall = float(height.removesuffix("px")) if height.endswith("px") else 520.0
    except ValueError:
        tall = 520.0
    return 1000.0, max(tall - 40.0, 200.0)


def fitted_scale(boxes: Iterable[Box], frame: tuple[float, float]) -> float:
    """About the scale vis fits these boxes to a frame of (width, height) px at (never above 1), a tenth to spare."""
    bs = list(boxes)
    if not bs:
        return 1.0
    w = max(b[2] for b in bs) - min(b[0] for b in bs)
    h = max(b[3] for b in bs) - min(b[1] for b in bs)
    return min(1.0, frame[0] / max(1.1 * w, 1.0), frame[1] / max(1.1 * h, 1.0))


def place_edge_labels(nodes: list[dict[str, Any]], edges: list[dict[str, Any]], *, frame: tuple[float, float],
                      taken: list[Box] | None = None, scale: float | None = None) -> list[Box]:
    """Keep the relation text of each edge, in the order given (the most telling first), whose level box at the
    middle of its link covers no node in `nodes` (dot and name, as large as the page draws them once fitted to
    `frame` px: render/page.py holds every label at MIN_LABEL_PX on screen) and none of the texts kept before it
    (`taken` too); empty the others' `label` (their tooltip keeps the text). Returns the boxes taken, `taken`'s
    included, for a later batch of the same picture. Nodes without a place (x, y) leave every text as it is."""
    if not nodes or any("x" not in n or "y" not in n for n in nodes):
        return list(taken or [])
    if scale is None:
        scale = fitted_scale((b for n in nodes for b in _node_boxes(n, 1.0)), frame)
    scale = max(scale, 0.05)
    where = {n["id"]: (float(n["x"]), float(n["y"])) for n in nodes}
    boxes = [b for n in nodes for b in _node_boxes(n, scale)]
    kept = list(taken or [])
    for e in edges:
        label = str(e.get("label") or "")
        ends = where.get(e.get("from")), where.get(e.get("to"))
        if not label.strip() or ends[0] is None or ends[1] is None:
            continue
        font = max(float((e.get("font") or {}).get("size") or EDGE_FONT), MIN_LABEL_PX / scale)
        mx, my = (ends[0][0] + ends[1][0]) / 2, (ends[0][1] + ends[1][1]) / 2
        half, tall = 0.5 * text_width(label, font) + 4, 0.5 * 1.15 * font * (label.count("\n") + 1) + 2
        box = (mx - half, my - tall, mx + half, my + tall)
        if any(_meet(box, b) for b in boxes) or any(_meet(box, b) for b in kept):
            e["label"] = ""
        else:
            kept.append(box)
    return kept
