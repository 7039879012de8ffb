"""Many sessions on one graph: ten threads, each with its own event loop (asyncio.run), drive the engine on
ONE shared KnowledgeGraph with different questions, settings and human overrides — as app sessions do.
No state leaks between them, the graph is never mutated, and each result equals the same run done alone."""
from __future__ import annotations

import asyncio
import hashlib
import json
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pyarrow as pa
import pytest

from faultkit import Faults, make_graph
from tog_core.tog.engine import ToGEngine
from tog_core.graphrag.graph import KnowledgeGraph
from tog_core.llm.client import LLMClient, LLMConfig
from tog_core.tog.state import EngineConfig, Proposal

DERIVED = {"_memo", "_memo_lock", "_sealed", "__weakref__"}  # lazy lookup maps, their lock, weak references to it


def drop_top_entity(proposal: Proposal) -> set[str] | None:
    """A person unticks the best entity of the first entity stage (an override), else accepts."""
    step = proposal.step
    if step.stage != "entities" or step.depth != 1 or len(step.candidates) < 2:
        return None
    top = max(step.candidates, key=lambda c: c.score)
    return {c.id for c in step.candidates if c.auto_kept and c.id != top.id} or {
        next(c.id for c in step.candidates if c.id != top.id)}


def keep_everything(proposal: Proposal) -> set[str] | None:
    if proposal.step.stage == "relations":
        return {c.id for c in proposal.step.candidates}
    return None


# (question, seeds, engine settings, policy); pruners "llm" talk HTTP to the shared fake server
SESSIONS = [
    ("Where was the founder of Acme born?", ["Acme"], dict(width=2, depth=3), None),
    ("Who works at Acme?", ["Acme"], dict(width=1, depth=2), drop_top_entity),
    ("Which country is Berlin the capital of?", ["Berlin"], dict(width=3, depth=1), None),
    ("Where was Bob born?", ["Bob"], dict(width=2, depth=2, relation_pruner="bm25", entity_pruner="bm25"), None),
    ("Who is a friend of Carol?", ["Carol"], dict(width=2, depth=3, relation_pruner="random",
                                                 entity_pruner="random", seed=7), keep_everything),
    ("Which continent is Germany in?", ["Germany"], dict(width=2, depth=2, mode="fast"), None),
    ("Which city is the capital of France?", ["France"], dict(width=3, depth=2, relation_pruner="bm25",
                                                             entity_pruner="llm"), drop_top_entity),
    ("Who founded Acme?", None, dict(width=2, depth=2), None),  # topic entities linked from the question
    ("Where is Lyon?", ["Lyon"], dict(width=1, depth=3, relation_pruner="llm", entity_pruner="bm25"), None),
    ("Who is a friend of Dave?", ["Dave"], dict(width=3, depth=3, degree_filter=True, degree_factor=1.0),
     keep_everything),
]


def fingerprint(graph: KnowledgeGraph) -> str:
    h = hashlib.sha256()
    for name in KnowledgeGraph.__slots__:
        if name in DERIVED:
            continue
        value = getattr(graph, name)
        h.update(name.encode())
        if isinstance(value, np.ndarray):
            h.update(str(value.dtype).encode() + value.tobytes())
        elif isinstance(value, (pa.Array, pa.ChunkedArray)):
            h.update(json.dumps(value.to_pylist()).encode())
        elif isinstance(value, dict):
            h.update(json.dumps(sorted(value.items()), default=str).encode())
        else:
            h.update(repr(value).encode())
    return h.hexdigest()


def one_session(graph, llm, k: int) -> dict:
    question, seeds, settings, policy = SESSIONS[k]
    eng = ToGEngine(graph, llm=llm, config=EngineConfig(**settings))
    state = asyncio.run(eng.run(question, seeds=seeds, policy=policy))
    trace = eng.trace(state, run_id=f"session-{k}").to_dict()
    return {"question": trace["question"], "seeds": [s["id"] for s in trace["seeds"]],
            "chains": trace["chains"], "answer": trace["answer"], "stop_reason": trace["stop_reason"],
            "config": {k2: trace["config"][k2] for k2 in ("width", "depth", "relation_pruner", "entity_pruner")},
            "steps": [(s["depth"], s["stage"], [(c["id"], c["score"], c["kept"]) for c in s["candidates"]],
                       s["overrides"]) for s in trace["steps"]]}


@pytest.fixture(scope="module")
def server(module_fake_openai):
    return module_fake_openai(Faults())


def client(srv) -> LLMClient:
    return LLMClient(LLMConfig(model="openai/toy", api_base=srv.base_url, api_key="sk-test-not-a-real-key",
                               timeout_s=30, max_retries=2, backoff_base_s=0.01, concurrency=4))


def test_sessions_ten_threads_on_one_graph_equal_the_runs_done_alone(server):
    graph = make_graph()
    arrays = [getattr(graph, n) for n in KnowledgeGraph.__slots__ if isinstance(getattr(graph, n), np.ndarray)]
    assert arrays and all(not a.flags.writeable for a in arrays)
    before = fingerprint(graph)

    alone = [one_session(graph, client(server), k) for k in range(len(SESSIONS))]  # one by one, fresh clients
    assert fingerprint(graph) == before

    shared_llm = client(server)  # one client for every session, as the app's cache_resource shares it
    barrier = threading.Barrier(len(SESSIONS))
    loops: set[int] = set()

    def in_thread(k: int) -> dict:
        barrier.wait(timeout=30)
        result = one_session(graph, shared_llm, k)
        loops.add(threading.get_ident())
        return result

    with ThreadPoolExecutor(max_workers=len(SESSIONS)) as pool:
        together = list(pool.map(in_thread, range(len(SESSIONS))))

    assert len(loops) == len(SESSIONS)  # really ten threads, each with its own event loop
    assert fingerprint(graph) == before  # the shared graph was never mutated
    assert all(not a.flags.writeable for a in arrays)
    for k, (a, t) in enumerate(zip(alone, together)):
        assert t["question"] == SESSIONS[k][0]  # no leaks: each session got its own question back
        assert t == a, f"session {k} differs when run concurrently"
    # the sessions really differ from each other (so equality above is not vacuous)
    assert len({json.dumps(r["chains"]) for r in together}) >= 6
    assert any(s[3] for r in together for s in r["steps"])  # overrides were recorded
    assert {r["stop_reason"] for r in together} >= {"max_depth"}


def test_sessions_graph_rejects_writes():
    graph = make_graph()
    with pytest.raises(AttributeError):
        graph.problems = ()
    with pytest.raises(ValueError):
        graph.degrees[0] = 99
