"""How chains read: the text of a chain as prompts and the answer show it, a hop's label, an entity's text.
Mixed into ToGEngine.
"""
from __future__ import annotations

from typing import Any
from collections.abc import Iterable

from tog_core.prompting import prompts
from tog_core.tog.state import BeamPath

CHAIN_TEXT_CHARS = 160


class ChainTexts:
    """Chain and entity texts of ToGEngine (see engine.py)."""

    graph: Any

    def _chain_texts(self, paths: Iterable[BeamPath]) -> list[str]:
        return [self.path_text(p) for p in paths if p.hops]

    def path_text(self, p: BeamPath) -> str:
        parts = [self.graph.title(p.start)]
        for h in p.hops:
            arrow = "→" if self.graph.endpoints(h.ridx)[0] == h.src else "←"
            parts.append(f"—[{prompts.clean_text(h.label, CHAIN_TEXT_CHARS)}]{arrow} {self.graph.title(h.dst)}")
        return " ".join(parts)

    def _hop_label(self, ridx: int, text: str) -> str:
        """The label a chain shows for one hop: the edge's own description when the scorer saw a type template."""
        if self.graph.has_relation_labels:
            return self.graph.descriptions([ridx])[0] or text
        return text

    def entity_text(self, idx: int) -> str:
        e = self.graph.entity(idx)
        return f"{e.title} — {e.description}" if e.description else e.title
