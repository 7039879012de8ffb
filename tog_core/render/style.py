"""How every picture's items look: data text made inert for vis (`plain`, `short`), colours (by depth, and one per
entity type, the same in every picture), numbers in tooltips, and the legend (as HTML, and as data for the live
picture, render.live). render/page.py assembles these into a page.
"""
from __future__ import annotations

import hashlib
import html as _html
import re
from html.parser import HTMLParser
from typing import Any
from collections.abc import Iterable

DEPTH_COLOURS = ("#4263eb", "#2f9e44", "#f08c00", "#ae3ec9", "#1098ad", "#e8590c", "#5c940d")
TYPE_COLOURS = {"PERSON": "#4263eb", "ORGANIZATION": "#2f9e44", "ORG": "#2f9e44", "GEO": "#f08c00",
                "LOCATION": "#f08c00", "EVENT": "#ae3ec9", "ARTIFACT": "#1098ad", "PRODUCT": "#1098ad",
                "WORK": "#c2255c", "CONCEPT": "#5c940d"}
OTHER_COLOURS = ("#e8590c", "#364fc7", "#087f5b", "#862e9c", "#a61e4d", "#5f3dc4", "#2b8a3e", "#0b7285")
UNTYPED_COLOUR = "#868e96"
OVERRIDE_COLOUR = "#d6336c"
EXPECTED_COLOUR = "#e03131"
FRONTIER_BORDER = "#212529"
EDGE_LABELS_MAX = 24  # above this many edges, relation text is in tooltips only (hover an edge)
MORE_COLOUR = "#f1f3f5"
TOOLTIP_MAX = 600

_INVISIBLE = re.compile("[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]")
_HREF = re.compile(r"(?i)h(?=ref)")


def cut(text: str, n: int) -> str:
    """One line of at most n characters (whitespace collapsed, "…" when cut); the trace keeps the whole text."""
    s = " ".join(text[: 4 * n + 64].split())
    return s if len(s) <= n else s[: n - 1] + "…"


def plain(text: Any, limit: int = TOOLTIP_MAX, *, say_cut: bool = True) -> str:
    """Data text made inert for a vis label/tooltip: no markup characters, no invisible/bidi characters,
    no "href" substring, at most `limit` characters (then "…", and with `say_cut` how long the whole text was).
    Readable (no `&amp;` shown to people). Only the first few `limit`s of a huge text are looked at."""
    s = "" if text is None else str(text)
    total = len(s)
    s = _INVISIBLE.sub("", s[: 4 * limit + 64])
    if len(s) > limit or total > 4 * limit + 64:
        s = s[: max(limit - 1, 0)] + "…" + (f" [cut: {total:,} characters in all]" if say_cut else "")
    return _HREF.sub("h\u200b", s.replace("<", "‹").replace(">", "›"))


def short(text: Any, n: int = 40) -> str:
    """One line of at most n characters (whitespace collapsed, "…" when cut), made inert like `plain`."""
    s = " ".join(("" if text is None else str(text))[: 4 * n + 64].split())
    return plain(s, n, say_cut=False)


def depth_colour(depth: int) -> str:
    return DEPTH_COLOURS[max(depth, 0) % len(DEPTH_COLOURS)]


def type_colour(entity_type: str | None) -> str:
    """One colour per entity type, the same in every picture: common GraphRAG types fixed, others hashed."""
    t = (entity_type or "").strip().upper()
    if not t:
        return UNTYPED_COLOUR
    if t in TYPE_COLOURS:
        return TYPE_COLOURS[t]
    return OTHER_COLOURS[int(hashlib.sha1(t.encode("utf-8")).hexdigest(), 16) % len(OTHER_COLOURS)]


def fade(hex_colour: str, amount: float = 0.7) -> str:
    r, g, b = (int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))
    return "#{:02x}{:02x}{:02x}".format(*(round(c + (255 - c) * amount) for c in (r, g, b)))


def num(x: Any) -> str:
    try:
        return f"{float(x):.2f}"
    except (TypeError, ValueError):
        return "?"


# ---------------------------------------------------------------------------------------------- legend

def swatch(colour: str, *, border: str | None = None, ring: bool = False) -> str:
    style = f"background:{'#fff' if ring else colour}" + (f";border:3px solid {border or colour}" if ring or border
                                                          else "")
    return f'<i class="sw" style="{style}"></i>'


ZOOM_HINT = "Ctrl + wheel (⌘ + wheel on a Mac, or a pinch) zooms about the pointer; the wheel alone scrolls the page"


def legend(items: Iterable[str], note: str = "", *, fit_button: bool = True) -> str:
    """items are trusted HTML fragments built here; note is plain text (escaped)."""
    parts = [f"<span>{p}</span>" for p in items]
    if note:
        parts.append(f'<span class="note">{_html.escape(note)}</span>')
    if fit_button:
        # the wheel scrolls the page over a picture; zooming takes Ctrl or ⌘ (render/page.py _FIT)
        parts.append(f'<span class="zoom" title="{ZOOM_HINT}">Ctrl + wheel: zoom</span>'
                     '<button id="tog-fit" type="button" title="Fit the whole picture in view">Fit</button>')
    return '<div class="tog-legend">' + "".join(parts) + "</div>"


def type_items(types: Iterable[str]) -> list[str]:
    """Legend entries for the entity types drawn (each once, in a stable order)."""
    seen = sorted({(t or "").strip().upper() for t in types})
    return [swatch(type_colour(t)) + _html.escape(t.lower() if t else "no type") for t in seen]

_LEGEND_TAGS = frozenset({"div", "span", "i", "b", "button"})
_LEGEND_ATTRS = frozenset({"class", "style", "id", "type", "title"})


class _Tree(HTMLParser):
    """A legend's markup (built here) as data: [text | {tag, attrs, children}], allowed tags and attributes only."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root: list[Any] = []
        self._open: list[list[Any]] = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        children: list[Any] = []
        if tag in _LEGEND_TAGS:  # another tag is left out, its content kept as text
            self._open[-1].append({"tag": tag, "attrs": {k: v or "" for k, v in attrs if k in _LEGEND_ATTRS},
                                   "children": children})
        else:
            children = self._open[-1]
        self._open.append(children)

    def handle_endtag(self, tag: str) -> None:
        if len(self._open) > 1:
            self._open.pop()

    def handle_data(self, data: str) -> None:
        self._open[-1].append(data)


def legend_tree(legend_html: str) -> list[Any]:
    """The children of a legend (`legend(...)`) as data for a live picture's page (render.live) to build."""
    tree = _Tree()
    tree.feed(legend_html)
    tree.close()
    top = tree.root[0] if len(tree.root) == 1 and isinstance(tree.root[0], dict) else {"children": tree.root}
    return list(top["children"])
