"""`python -m tog_core export TRACE.json --format html|md|json --out FILE` (what the app's export buttons write)."""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from tog_core.errors import UsageError
from tog_core.render.export import EXPORTERS, FORMATS


def add_parser(sub: Any) -> None:
    s = sub.add_parser("export", help="write a saved trace as HTML, Markdown or JSON")
    s.add_argument("trace", help="trace JSON file (from `query --out` or the app)")
    s.add_argument("--format", choices=FORMATS, help="default: from the --out suffix, else md")
    s.add_argument("--out", help="file to write (default: stdout)")
    s.add_argument("--project", default=None, help="the GraphRAG project the trace ran on, to include the source "
                   "text of every link (default: the trace's own project path, when it is here)")


def load_trace_file(path: str) -> dict[str, Any]:
    from tog_core.tog.trace import Trace

    p = Path(path)
    fix = "pass a trace JSON written by `python -m tog_core query ... --out FILE` or the app's export"
    if not p.is_file():
        raise UsageError(f"{path}: no such file; {fix}")
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise UsageError(f"{path} is not UTF-8 text; {fix}") from None
    except json.JSONDecodeError as err:
        raise UsageError(f"{path} is not JSON ({err.msg} at line {err.lineno}); {fix}") from None
    try:
        Trace.from_dict(data)
    except (ValueError, TypeError, AttributeError, KeyError) as err:
        detail = " ".join(str(err).split())[:200]
        raise UsageError(f"{path} is not a ToG trace ({detail}); {fix}") from None
    return data


def _with_source_text(data: dict[str, Any], project: str | None) -> dict[str, Any]:
    """The trace with the source text of every link, read from its project when that can be opened here; a
    trace that already carries it (saved by the app) or whose project is elsewhere is exported as it is."""
    if data.get("evidence") and not project:
        return data
    where = project or str(data.get("project") or "")
    if not where or not Path(where).exists():
        if project:
            raise UsageError(f"--project {project}: no such folder; give the GraphRAG project the trace ran on")
        return data
    from tog_core.graphrag.graph import KnowledgeGraph
    from tog_core.graphrag.project import ProjectError
    from tog_core.render.evidence import with_evidence

    try:
        grounded = with_evidence(data, KnowledgeGraph.load(where))
        return grounded if grounded.get("evidence") else data  # none of its links is in that project: as it is
    except ProjectError:
        if project:
            raise
        return data


def cmd(args: argparse.Namespace) -> int:

    data = _with_source_text(load_trace_file(args.trace), args.project)
    fmt = args.format
    if fmt is None:
        suffix = Path(args.out).suffix.lower() if args.out else ""
        fmt = {".html": "html", ".htm": "html", ".md": "md", ".markdown": "md", ".json": "json"}.get(suffix, "md")
    text = EXPORTERS[fmt](data)
    if not args.out:
        print(text, end="")
        return 0
    out = Path(args.out)
    if not out.parent.is_dir():
        raise UsageError(f"{args.out}: folder {out.parent} does not exist; create it or choose another --out")
    out.write_text(text, encoding="utf-8")
    return 0
