"""What a safe picture page is, for the tests of pictures, exports and chains: the hostile strings put into titles
and reasons (`HOSTILE`), the URL pattern and the only URLs allowed in a page (`VIS_URLS`, those inside the inlined
vis.js), and `assert_safe`, which checks a page for live markup, outside addresses, extra scripts and hidden
direction marks."""
from __future__ import annotations

import re
from pathlib import Path

from tog_core.render.viz import picture_json

HOSTILE = ["<img src=x onerror=alert(1)>", "<script>alert(1)</script>", "javascript:alert(1)",
           'a <a href="javascript:alert(1)">link</a> HREF', "quote \" and ' and `backtick`",
           "\u202eevil\u202c zero\u200bwidth \u2066rtl\u2069", "x" * 10_000]
URL = re.compile(r"https?://[^\s\"'<>)]*")


def _vis_urls() -> set[str]:
    import pyvis

    lib = Path(pyvis.__file__).parent / "templates" / "lib" / "vis-9.1.2" / "vis-network.min.js"
    return set(URL.findall(lib.read_text(encoding="utf-8")))


VIS_URLS = _vis_urls()


def assert_safe(page: str) -> None:
    low = page.lower()
    assert "<img src=x" not in low and "<script>alert" not in low and "<a href=\"javascript" not in low
    assert "<h1" not in low  # pyvis heading never used
    assert not re.search(r"""\b(?:src|href)\s*=\s*["']?\s*(?:https?:)?//""", page, re.I)
    assert set(URL.findall(page)) <= VIS_URLS  # only the URLs inside the inlined vis.js text
    # vis.js, pyvis' drawGraph, our fit hook and (clickable pictures) our click hook: data never adds a script
    assert page.count("</script>") == (4 if 'tog: "pick"' in page else 3)
    data = picture_json(page)
    for item in data["nodes"] + data["edges"]:
        for key in ("label", "title"):
            text = str(item.get(key, ""))
            assert "href" not in text.lower()
            assert "<" not in text and ">" not in text
            assert not re.search("[\u202a-\u202e\u2066-\u2069\u200e\u200f]", text)
