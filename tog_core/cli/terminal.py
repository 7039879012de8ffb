"""Text for a terminal: graph data (titles, relation texts, answers, paths, problems) may hold control characters,
ANSI escape sequences, bidi overrides and invisible characters that would recolour, move, hide or reorder what a
person reads. Every human-readable line the CLI prints goes through `safe`, which shows them as visible escapes
(`\\x1b`, `\\u202e`). `--json` output is not touched: JSON escaping applies there.
"""
from __future__ import annotations

import re
import sys
from typing import Any, TextIO

# C0 controls but tab and newline, DEL, C1 controls; bidi embeddings/overrides/isolates and marks; zero-width and
# other invisible format characters; line and paragraph separators
_UNSAFE = re.compile("[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u00ad\u061c\u115f\u1160\u180e\u200b-\u200f"
                     "\u2028-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\ufff9-\ufffb]")


def _escape(m: re.Match[str]) -> str:
    c = ord(m.group(0))
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def safe(text: Any, *, one_line: bool = False) -> str:
    """`text` with every control, bidi and invisible character shown as an escape; with `one_line`, newlines and
    tabs too (for a value inside a line: a title, a relation)."""
    s = _UNSAFE.sub(_escape, "" if text is None else str(text))
    return s.replace("\n", "\\n").replace("\t", "\\t") if one_line else s


def echo(text: Any = "", *, file: TextIO | None = None, flush: bool = False) -> None:
    """print() for human-readable CLI output: made terminal-safe first."""
    print(safe(text), file=file if file is not None else sys.stdout, flush=flush)
