"""The protocols, checked from the source: GraphStore and ChatModel list exactly what the engine and its helpers call
on a graph and on a chat model (both ways), and the implementations match them, signature by signature.

The scan reads `graph.X` / `llm.X` with `ast`, through local aliases (`g = self.graph`), in the engine's packages."""
from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

from sourcekit import PACKAGE, ROOT, own_nodes
from tog_core.graphrag.graph import KnowledgeGraph
from tog_core.graphrag.store import GraphStore
from tog_core.llm.chat import ChatModel
from tog_core.llm.client import LLMClient, LLMConfig
from tog_core.testing.scripted import ScriptedLLM

# Where the engine and its helpers live: every `graph.X` / `llm.X` they use must be in the protocol.
ENGINE_PACKAGES = ("tog", "policy", "scoring", "reading", "prompting", "render", "app", "bench")


def members(protocol: type) -> set[str]:
    names = {n for n in vars(protocol) if not n.startswith("_")}
    return names | set(getattr(protocol, "__annotations__", {}))


def attributes_used_on(names: set[str], packages: tuple[str, ...] = ENGINE_PACKAGES) -> dict[str, list[str]]:
    """attribute -> places, for `X.attr` where X is one of `names`, `<anything>.<one of names>`, or a local
    alias of those (`g = self.graph`, seen by nested functions too), in the engine's packages."""
    used: dict[str, list[str]] = {}

    def visit(scope: ast.AST, inherited: frozenset[str], where: Path) -> None:
        aliases = set(inherited)

        def is_target(node: ast.AST) -> bool:
            return (isinstance(node, ast.Name) and node.id in aliases) or \
                (isinstance(node, ast.Attribute) and node.attr in names)

        nodes = list(own_nodes(scope))
        for node in nodes:
            if isinstance(node, ast.Assign) and is_target(node.value):
                aliases |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        for node in nodes:
            if isinstance(node, ast.Attribute) and is_target(node.value):
                used.setdefault(node.attr, []).append(f"{where.relative_to(ROOT)}:{node.lineno}")
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                visit(node, frozenset(aliases), where)

    for package in packages:
        for path in sorted((PACKAGE / package).rglob("*.py")):
            visit(ast.parse(path.read_text(encoding="utf-8")), frozenset(names), path)
    return used


def test_graph_store_lists_exactly_what_the_engine_calls():
    used = attributes_used_on({"graph"})
    listed = members(GraphStore)
    missing = {a: used[a][:3] for a in sorted(set(used) - listed)}
    unused = sorted(listed - set(used))
    assert not missing and not unused, (f"called on a graph but not in GraphStore (graphrag/store.py): {missing}; "
                                        f"in GraphStore but called nowhere: {unused}")


def test_the_scan_sees_aliases_and_attributes():
    assert {"find", "find_relationship"} <= set(attributes_used_on({"graph"}))  # `g = self.graph` in recording.py
    assert {"complete", "stream"} <= set(attributes_used_on({"llm"}))


def test_knowledge_graph_is_a_graph_store():
    from builders import ACME_EDGES, graph_tables

    _, ent, rel, tu = graph_tables(ACME_EDGES)
    g = KnowledgeGraph.from_tables(ent, rel, tu)
    assert isinstance(g, GraphStore)
    for name in members(GraphStore):
        assert hasattr(g, name), name
        spec = getattr(GraphStore, name)
        if inspect.isfunction(spec):
            assert inspect.signature(getattr(KnowledgeGraph, name)).parameters.keys() == \
                inspect.signature(spec).parameters.keys(), name


def test_chat_model_lists_exactly_what_the_engine_calls():
    used = attributes_used_on({"llm"})
    assert set(used) == members(ChatModel), f"engine calls {sorted(used)}; ChatModel lists {sorted(members(ChatModel))}"


@pytest.mark.parametrize("model", [LLMClient(LLMConfig(model="openai/x")), ScriptedLLM(lambda messages: "ok")],
                         ids=["LLMClient", "ScriptedLLM"])
def test_client_and_scripted_model_are_chat_models(model):
    assert isinstance(model, ChatModel)
    for name in members(ChatModel):
        want = inspect.signature(getattr(ChatModel, name))
        got = inspect.signature(getattr(type(model), name))
        assert list(got.parameters.items()) == list(want.parameters.items()), name
        # the calls are coroutines; cache_only is a plain context manager
        assert inspect.iscoroutinefunction(getattr(type(model), name)) == \
            inspect.iscoroutinefunction(getattr(ChatModel, name)), name
