"""Shared pieces of the robustness tests (faults, secrets, crash, sessions): a small demo-like graph,
a fault-injecting handler for FakeOpenAIServer, and an LLM client with tiny timeouts.

The handler wraps the toy LLM of scripted.py: `Faults(rules)` answers each chat request with the first
rule whose stage matches and whose `when(n)` (n = how many requests of that stage came before) is true;
otherwise the toy LLM answers. Stages are read off the prompt: scores | evaluate | answer | topics.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from collections.abc import Callable

import pyarrow as pa

from scripted import toy_llm
from builders import ACME_EDGES, graph_tables
from tog_core.testing.server import Reply, last_user_message
from tog_core.graphrag.graph import KnowledgeGraph
from tog_core.llm.client import LLMClient, LLMConfig

# Acme <-founded- Alice -born in-> Paris ; Bob works at Acme, born in Lyon ; Acme located in Berlin ...
EDGES = ACME_EDGES + [
    ("Germany", "Europe", "Germany is a country in Europe"),
    ("Lyon", "France", "Lyon is a city in France"),
    ("Paris", "France", "Paris is the capital of France"),
]
QUESTION = "Where was the founder of Acme born?"


def entity_table(edges=EDGES) -> tuple[list[str], pa.Table, pa.Table, pa.Table]:
    return graph_tables(edges)


def make_graph(edges=EDGES) -> KnowledgeGraph:
    _, ent, rel, tu = entity_table(edges)
    return KnowledgeGraph.from_tables(ent, rel, tu)


def stage_of(request: dict) -> str:
    if request.get("stream"):
        return "answer"
    text = last_user_message(request)
    if "enough to answer" in text:
        return "evaluate"
    if "Answer the question" in text:
        return "answer"
    if "named entities" in text or '"entities"' in text:
        return "topics"
    return "scores"


@dataclass
class Rule:
    stage: str  # a stage name or "*"
    reply: Reply | Callable[[dict], Reply | str]
    when: Callable[[int], bool] = lambda n: True  # n: earlier requests of this stage


@dataclass
class Faults:
    """A FakeOpenAIServer handler: scheduled faults over the toy LLM. Records the stage of every request."""

    rules: list[Rule] = field(default_factory=list)
    seen: list[str] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, request: dict) -> Reply | str:
        stage = stage_of(request)
        with self._lock:
            n = sum(1 for s in self.seen if s == stage)
            self.seen.append(stage)
        for rule in self.rules:
            if rule.stage in ("*", stage) and rule.when(n):
                return rule.reply(request) if callable(rule.reply) else rule.reply
        return toy_llm(request)


def fast_config(base_url: str, **kw) -> LLMConfig:
    """Tiny backoffs so every retry loop is bounded; hang tests pass their own small timeout_s."""
    opts = dict(model="openai/toy", api_base=base_url, api_key="sk-test-not-a-real-key", timeout_s=5.0,
                max_retries=1, backoff_base_s=0.01, backoff_max_s=0.05, retry_after_max_s=0.3, concurrency=4)
    opts.update(kw)
    return LLMConfig(**opts)


def fast_client(base_url: str, **kw) -> LLMClient:
    return LLMClient(fast_config(base_url, **kw))


def chains_of(trace) -> list[list[tuple[str, str, str]]]:
    return [[(link.source, link.relation, link.target) for link in chain] for chain in trace.chains]


class SilentListener:
    """A provider that accepts connections and never answers: a TCP listener on 127.0.0.1 whose thread accepts
    every connection, counts it and holds it open unread until close(). `base_url` is an OpenAI-style /v1 URL."""

    def __init__(self) -> None:
        import socket

        self._sock = socket.create_server(("127.0.0.1", 0), backlog=64)
        self._sock.settimeout(0.1)
        self.connections = 0
        self._held: list = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._sock.getsockname()[1]}/v1"

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:  # timeout: look at the stop flag again
                continue
            self.connections += 1
            self._held.append(conn)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        for conn in self._held:
            conn.close()
        self._sock.close()

    def __enter__(self) -> SilentListener:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def closed_port_url() -> str:
    """An API base nobody listens on: a port bound, then closed."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"
