"""The pictures' public names in one place (older imports and bench/render.py use this module).

style.py holds how items look (inert text, colours, the legend), page.py assembles pages (fit, clicks); frontier.py
draws the search (frontier_items.py reads its entities and edges from the trace), chains.py the final chains and two
runs' path diff, neighbourhood.py the graph browser's picture; cache.py keeps built pages.
"""
from __future__ import annotations

from tog_core.render.cache import PICTURES, PictureCache, trace_key
from tog_core.render.chains import chains_html, compare_html, path_diff, walk
from tog_core.render.frontier import frontier_html
from tog_core.render.frontier_items import overridden_ids, trace_entity_types
from tog_core.render.neighbourhood import neighbourhood_html
from tog_core.render.page import empty_html, picture_json
from tog_core.render.style import (
    DEPTH_COLOURS,
    EDGE_LABELS_MAX,
    EXPECTED_COLOUR,
    FRONTIER_BORDER,
    OVERRIDE_COLOUR,
    TOOLTIP_MAX,
    plain,
    short,
    type_colour,
)

__all__ = ["DEPTH_COLOURS", "EDGE_LABELS_MAX", "EXPECTED_COLOUR", "FRONTIER_BORDER", "OVERRIDE_COLOUR", "PICTURES",
           "PictureCache", "TOOLTIP_MAX", "chains_html", "compare_html", "empty_html", "frontier_html",
           "neighbourhood_html", "overridden_ids", "path_diff", "picture_json", "plain", "short",
           "trace_entity_types", "trace_key", "type_colour", "walk"]
