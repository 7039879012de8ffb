"""What the app's export buttons and `python -m tog_core export` write: JSON, Markdown, standalone HTML.

`EXPORTERS` names the writer of each of `FORMATS`: JSON here (the trace without secrets, its data kept as it is),
Markdown in export_md.py, standalone HTML in export_html.py; what those two share (the secret-free copy, the caps on
long text, what both read of a trace) is in export_common.py.
"""
from __future__ import annotations

import json
from typing import Any

from tog_core.render.export_common import public_trace
from tog_core.render.export_html import export_html
from tog_core.render.export_md import export_markdown

FORMATS = ("json", "md", "html")


def export_json(trace: dict[str, Any]) -> str:
    return json.dumps(public_trace(trace), ensure_ascii=False, indent=2) + "\n"


EXPORTERS = {"json": export_json, "md": export_markdown, "html": export_html}
