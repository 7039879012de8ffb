"""The architecture, checked from the source: module sizes, no import cycle, imports only go down the layers,
nothing writes os.environ at import, `inspect` starts without LiteLLM or Streamlit, and the pages read a run's Trace
by attribute (the protocols against what the engine calls: tests/test_protocols.py).

Imports are read with `ast` anywhere in a module (a function-level import counts as much as a top-level one; so
do imports under `if TYPE_CHECKING:`), and resolved to tog_core modules: `from tog_core.prompting import prompts` is an
edge to tog_core.prompting.prompts, `from tog_core.testing import ScriptedLLM` one to the package tog_core.testing.
The implicit import of parent packages is not counted (every module would otherwise depend on its __init__).
"""
from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sourcekit import PACKAGE, ROOT, own_nodes

MAX_LINES = 450

# Bottom to top. A module may import modules of a lower layer, or of its own unit (same subpackage).
LAYERS: tuple[tuple[str, ...], ...] = (
    ("tog_core.errors", "tog_core.home", "tog_core"),
    ("tog_core.graphrag",),
    ("tog_core.llm",),
    ("tog_core.prompting",),
    ("tog_core.scoring",),
    ("tog_core.reading",),
    ("tog_core.tog",),
    ("tog_core.policy",),
    ("tog_core.render",),
    ("tog_core.runs",),
    ("tog_core.compose",),
    ("tog_core.bench",),
    ("tog_core.cli", "tog_core.app"),
    ("tog_core.__main__",),
)
TESTING = "tog_core.testing"  # may import the layers below tog; nothing in production may import it
TESTING_MAX_LAYER = next(k for k, layer in enumerate(LAYERS) if "tog_core.scoring" in layer)


# ------------------------------------------------------------------ reading the source

def module_files() -> dict[str, Path]:
    """Every tog_core module by dotted name (a package by its own name, for its __init__.py)."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def imports_of(module: str, path: Path, modules: dict[str, Path]) -> set[tuple[str, int]]:
    """(imported tog_core module, line) for every import statement anywhere in the module."""
    is_package = path.name == "__init__.py"
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".") if is_package else module.split(".")[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
        for target in targets:
            if target == "tog_core" or target.startswith("tog_core."):
                found = _resolve(target, modules)
                if found and found != module:
                    out.add((found, node.lineno))
    return out


def import_graph() -> dict[str, set[tuple[str, int]]]:
    modules = module_files()
    return {m: imports_of(m, p, modules) for m, p in modules.items()}


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm (iterative); components with more than one module are cycles."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                out.append(sorted(component))
    return out


def unit_of(module: str) -> str:
    """The layer unit a module belongs to: the longest LAYERS (or testing) prefix that names it."""
    names = [n for layer in LAYERS for n in layer] + [TESTING]
    best = max((n for n in names if module == n or module.startswith(n + ".")), key=len, default=None)
    if best is None:
        raise AssertionError(f"{module} is in no layer: add its package to LAYERS in tests/test_architecture.py")
    return best


def layer_of(unit: str) -> int:
    return next(k for k, layer in enumerate(LAYERS) if unit in layer)


def layer_violations() -> list[tuple[str, str]]:
    """(edge "a -> b", where and why) for every import that goes up or across the layers."""
    bad = []
    modules = module_files()
    for module, edges in sorted(import_graph().items()):
        src_unit = unit_of(module)
        for target, line in sorted(edges):
            dst_unit = unit_of(target)
            if dst_unit == src_unit:
                continue
            edge = f"{module} -> {target}"
            where = f"{modules[module].relative_to(ROOT)}:{line}: {edge}"
            if dst_unit == TESTING and src_unit != TESTING:
                bad.append((edge, f"{where} (production imports testing)"))
            elif src_unit == TESTING and layer_of(dst_unit) > TESTING_MAX_LAYER:
                bad.append((edge, f"{where} (testing may import only the layers below tog)"))
            elif src_unit != TESTING and layer_of(dst_unit) >= layer_of(src_unit):
                bad.append((edge, f"{where} (layer {layer_of(src_unit)} imports layer {layer_of(dst_unit)})"))
    return bad


# ------------------------------------------------------------------ sizes, cycles, layers

@pytest.mark.parametrize("path", [pytest.param(p, id=str(p.relative_to(ROOT))) for p in sorted(PACKAGE.rglob("*.py"))])
def test_no_module_over_the_line_limit(path):
    n = len(path.read_text(encoding="utf-8").splitlines())
    assert n <= MAX_LINES, f"{path.relative_to(ROOT)} has {n} lines (limit {MAX_LINES}): split it by responsibility"


def test_no_import_cycle():
    graph = {m: {t for t, _ in edges} for m, edges in import_graph().items()}
    cycles = [c for c in strongly_connected(graph) if len(c) > 1]
    detail = []
    for component in cycles:
        members = set(component)
        detail += [f"  {m} -> {t}" for m in component for t in sorted(graph[m] & members)]
    assert not cycles, "import cycles (function-level imports count):\n" + "\n".join(detail)


def test_the_cycle_finder_finds_a_cycle_and_only_it():
    comps = strongly_connected({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()})
    assert sorted(c for c in comps if len(c) > 1) == [["a", "b", "c"]]


def test_imports_go_only_down_the_layers():
    bad = layer_violations()
    assert not bad, "imports that go up or across the layers:\n" + "\n".join(why for _, why in bad)


def test_every_module_is_in_a_layer():
    assert {unit_of(m) for m in module_files()}  # raises, naming the module, when one is in no layer


# ------------------------------------------------------------------ import-time behaviour

def _run(code: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env,
                          timeout=120)


def test_importing_every_module_writes_nothing_to_the_environment_nor_imports_litellm(tmp_path):
    code = (
        "import importlib, json, os\n"
        f"names = {sorted(m for m in module_files() if m != 'tog_core.__main__')!r}\n"
        "before = dict(os.environ)\n"
        "for name in names:\n"
        "    importlib.import_module(name)\n"
        "after = dict(os.environ)\n"
        "import sys\n"
        "print(json.dumps({k: [before.get(k), after.get(k)] for k in set(before) | set(after)"
        " if before.get(k) != after.get(k)}))\n"
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules} & {'litellm', 'openai'})))\n")
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "PYTHONPATH": str(ROOT)}
    proc = _run(code, env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    written, heavy = (json.loads(line) for line in proc.stdout.strip().splitlines()[-2:])
    assert written == {}, f"variables written at import: {written}"
    assert heavy == [], f"imported at import time (LiteLLM must load at first use, llm/_litellm.py): {heavy}"


def test_inspect_imports_neither_litellm_nor_streamlit(tmp_path):
    code = (
        "import runpy, sys, json\n"
        "sys.argv = ['tog_core', 'inspect', 'demo', '--json']\n"
        "try:\n"
        "    runpy.run_module('tog_core', run_name='__main__')\n"
        "except SystemExit as exit_:\n"
        "    code = exit_.code\n"
        "heavy = sorted({m.split('.')[0] for m in sys.modules} & {'litellm', 'streamlit', 'openai'})\n"
        "print(json.dumps({'exit': code, 'heavy': heavy}))\n")
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "PYTHONPATH": str(ROOT),
           "TOG_HOME": str(tmp_path / "home")}
    proc = _run(code, env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.strip().splitlines()
    assert json.loads(lines[0])["counts"]["entities"] == 312  # the inspect output itself
    result = json.loads(lines[-1])
    assert result == {"exit": 0, "heavy": []}, result


# ------------------------------------------------------------------ the pages read traces as Trace objects

UI_DIRS = ("explorer", "pages")
TRACE_NAMES = frozenset({"t", "tr", "trace", "saved", "shown"})  # what the pages call a run's Trace


def _names_trace(annotation: ast.AST | None) -> bool:
    import re

    return annotation is not None and re.search(r"\bTrace\b", ast.unparse(annotation)) is not None


def _root(expr: ast.AST) -> str | None:
    """The variable an expression reads from: `t` for `t.stats`, `(t.plan or {})`, `t.steps[0]`."""
    while True:
        if isinstance(expr, (ast.Attribute, ast.Subscript)):
            expr = expr.value
        elif isinstance(expr, ast.BoolOp):
            expr = expr.values[0]
        else:
            return expr.id if isinstance(expr, ast.Name) else None


def trace_dict_reads(source: str) -> list[str]:
    """`line: code` for every read of a trace as a dict: `.get(` or a `["key"]` on a name bound to a Trace (a
    parameter or variable annotated `Trace`, or one of TRACE_NAMES) or on what it holds (`t.stats.get(…)`), and
    `.get(` on a name assigned `ui.as_dict(…)` / `.to_dict()` (the JSON form is for the pictures and exports)."""
    found: list[str] = []

    def visit(scope: ast.AST, trace_names: frozenset[str], json_names: frozenset[str]) -> None:
        nodes = list(own_nodes(scope))
        traces, jsons = set(trace_names), set(json_names)
        if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
            traces |= {a.arg for a in scope.args.posonlyargs + scope.args.args + scope.args.kwonlyargs
                       if _names_trace(a.annotation)}
        for node in sorted((n for n in nodes if isinstance(n, (ast.Assign, ast.AnnAssign))), key=lambda n: n.lineno):
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and _names_trace(node.annotation):
                traces.add(node.target.id)
            elif isinstance(node, ast.Assign) and _root(node.value) in traces:  # `where = t.state`
                traces |= {x.id for x in node.targets if isinstance(x, ast.Name)}
            elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and \
                    isinstance(node.value.func, (ast.Attribute, ast.Name)) and \
                    getattr(node.value.func, "attr", getattr(node.value.func, "id", "")) in ("as_dict", "to_dict"):
                jsons |= {x.id for x in node.targets if isinstance(x, ast.Name)}
        for node in nodes:
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
                r = _root(node.func.value)
                if r in traces or (r in jsons and isinstance(node.func.value, ast.Name)):
                    found.append(f"{node.lineno}: {ast.unparse(node)}")
            elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and \
                    isinstance(node.slice.value, str) and _root(node.value) in traces:
                found.append(f"{node.lineno}: {ast.unparse(node)}")
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                visit(node, frozenset(traces), frozenset(jsons))

    visit(ast.parse(source), TRACE_NAMES, frozenset())
    return sorted(found, key=lambda line: int(line.split(":")[0]))


def test_the_trace_scan_finds_dict_reads_and_leaves_attribute_reads_alone():
    src = '''
def block(run: Trace, rows: dict) -> None:
    run.answer, run.steps[0].depth, rows.get("x")
    run.get("answer")
    (run.stats or {}).get("cost_usd")
    run.config["model"]
    d = ui.as_dict(run)
    d.get("plan")
    for step in run.steps:
        step.fallbacks[0].get("name")
t: Trace | None = ss.get(K.ASK_TRACE)
t.plan.get("depth")
where = t.state
where.get("stage")
'''
    assert [line.split(":")[0] for line in trace_dict_reads(src)] == ["4", "5", "6", "8", "12", "14"]


def test_pages_and_blocks_read_traces_by_attribute_not_as_dicts():
    """Session state holds Trace objects and the pages and blocks read their attributes; the JSON form
    (`ui.as_dict`) only goes to the pictures, the exports and the diagnosis, which read the stable trace format."""
    reads = {str(p.relative_to(ROOT)): hits for d in UI_DIRS for p in sorted((ROOT / d).glob("*.py"))
             if (hits := trace_dict_reads(p.read_text(encoding="utf-8")))}
    assert not reads, f"a trace read as a dict (read its attributes, or add a function to tog_core/app/views.py): " \
        f"{reads}"
