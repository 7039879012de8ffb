"""Reading tog_core's own source for the architecture and protocol tests (tests/test_architecture.py,
test_protocols.py): the repository root (`ROOT`), the package folder (`PACKAGE`), and the nodes of one scope of a
syntax tree without entering nested functions or classes (`own_nodes`)."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "tog_core"


def own_nodes(scope: ast.AST):
    """The nodes of one scope, not descending into nested functions or classes (yielded, not entered)."""
    todo = list(ast.iter_child_nodes(scope))
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            todo.extend(ast.iter_child_nodes(node))
