"""LLM call schedule: our engine vs a serial schedule (one call at a time, as the original ToG code does).

    python bench/llm_schedule.py [--questions 5] [--latency 0.2] [--json]

A loopback FakeOpenAIServer answers every chat call after a fixed latency with a valid reply
(scores for every candidate, "not sufficient" from the judge so every depth runs, a reading of the
question, a short answer).
The generated graph is a tree per question with 4 relations per entity, so with N=D=3 every depth
has 3 frontier entities. The same questions run, in the same process and against the same server,
under three schedules, each with a fresh cache-less LLMClient:

* serial, original ToG calls — the original code's schedule: one entity-scoring call per kept
                  relation (not per frontier entity), every call waiting for the previous one (a global
                  asyncio.Lock around the client), questions one after another;
* serial, our calls — our engine's calls (entity scoring batched per frontier entity), serialised:
                  isolates what concurrency alone buys (bounded by calls/rounds);
* ours, 1 at a time — our engine (concurrent within a stage), questions one after another;
* ours, Q in flight — our engine with all questions running concurrently (as `bench kgqa` does with
                  an LLM);
* ours, fast / reading mode — the other modes, one question at a time: fast scores (relation, entity)
                  pairs in one call per depth; reading reads the question in one call, prunes with BM25
                  guided by that reading, judges by coverage and answers in one call.

Every engine is built by the composition root (compose.build_engine, as the CLI, the app and `bench kgqa`
build theirs) and every question runs through policy/depths.run, so the reading mode's reading call counts.

Printed per schedule: mean LLM calls and sequential rounds per question (engine stats), total wall
seconds, and the speed-up over the original serial schedule. Per question, wall time is ~ rounds × latency for us and
~ calls × latency serially, so the single-question speed-up is bounded by calls/rounds.
"""
from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pyarrow as pa  # noqa: E402

from dataclasses import replace  # noqa: E402

from tog_core.compose import RunSpec, build_engine, plan  # noqa: E402
from tog_core.policy import depths  # noqa: E402
from tog_core.testing.server import FakeOpenAIServer, last_user_message  # noqa: E402
from tog_core.graphrag.graph import KnowledgeGraph  # noqa: E402
from tog_core.llm.client import LLMClient, LLMConfig  # noqa: E402

_CAND = re.compile(r"^\[(\d+)\]", re.MULTILINE)
RELATIONS = ("directed", "wrote", "starred in", "produced")


def valid_reply(request: dict) -> str:
    """A valid reply to every engine prompt: deterministic scores, never sufficient, a reading, a short answer."""
    text = last_user_message(request)
    if '"answer_type"' in text:  # the reading prompt
        return json.dumps({"hops": 3, "answer_type": "person", "relations": list(RELATIONS[:3])})
    if "enough to answer" in text:
        return json.dumps({"sufficient": False, "reason": "need more"})
    if "Answer the question" in text:
        return "The answer is in chain [1]."
    if '"entities"' in text:
        return json.dumps({"entities": []})
    scores = []
    for i in _CAND.findall(text):
        line = re.search(rf"^\[{i}\](.*)$", text, re.MULTILINE)
        h = hashlib.blake2b((line.group(1) if line else i).encode(), digest_size=2).digest()
        scores.append({"i": int(i), "score": round(0.2 + 0.8 * int.from_bytes(h, "big") / 65535, 3),
                       "reason": "toy"})
    return json.dumps({"scores": scores})


def make_graph(n_questions: int, fan: int = len(RELATIONS), depth: int = 3) -> KnowledgeGraph:
    """One tree per question: every entity has `fan` outgoing relations to distinct children."""
    titles: list[str] = []
    src, dst, desc = [], [], []
    for q in range(n_questions):
        level = [f"Root {q}"]
        titles.append(level[0])
        for _ in range(depth):
            nxt = []
            for parent in level:
                for k, rel in enumerate(RELATIONS[:fan]):
                    child = f"{parent}.{k}"
                    titles.append(child)
                    nxt.append(child)
                    src.append(parent)
                    dst.append(child)
                    desc.append(f"{parent} {rel} {child}")
            level = nxt
    ent = pa.table({"id": [f"e{i}" for i in range(len(titles))], "title": titles,
                    "description": [f"{t} is a generated entity" for t in titles]})
    rel = pa.table({"id": [f"r{i}" for i in range(len(src))], "source": src, "target": dst, "description": desc})
    return KnowledgeGraph.from_tables(ent, rel)


class SerialLLM:
    """Any chat client behind one global lock: exactly one call in flight, like the original ToG code."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.lock = asyncio.Lock()

    async def complete(self, messages: list[dict], **kw: Any) -> Any:
        async with self.lock:
            return await self.inner.complete(messages, **kw)

    async def stream(self, messages: list[dict], **kw: Any) -> Any:
        async with self.lock:
            return await self.inner.stream(messages, **kw)

    def cache_only(self, **kw: Any) -> Any:
        return self.inner.cache_only(**kw)


def client(server: FakeOpenAIServer) -> LLMClient:
    return LLMClient(LLMConfig(model="openai/toy", api_base=server.base_url, api_key="sk-fake-not-a-key",
                               use_cache=False, max_retries=0, timeout_s=30, concurrency=32))


async def schedule(graph: KnowledgeGraph, llm: Any, n: int, *, in_flight: int, base_url: str,
                   entity_batch: str = "entity", mode: str = "faithful") -> tuple[list[dict], float]:
    spec = RunSpec(model="openai/toy", api_base=base_url, api_key="sk-fake-not-a-key", trust_api_base=True,
                   width=3, depth=3, mode=mode)
    p = plan(spec, None, graph=graph)
    engine = build_engine(replace(p, config=replace(p.config, entity_batch=entity_batch)), graph=graph,
                          llm=llm).engine
    sem = asyncio.Semaphore(in_flight)

    async def one(q: int) -> dict:
        async with sem:
            st = await depths.run(engine, f"Which entity is three steps from Root {q}?", seeds=[f"Root {q}"])
        return engine.stats(st)

    t0 = time.perf_counter()
    stats = await asyncio.gather(*(one(q) for q in range(n)))
    return list(stats), time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", type=int, default=5)
    ap.add_argument("--latency", type=float, default=0.2, help="seconds the fake server waits per call")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    graph = make_graph(args.questions)
    rows = []
    with FakeOpenAIServer(valid_reply, latency_s=args.latency) as server:
        asyncio.run(client(server).complete([{"role": "user", "content": "warm up"}], temperature=0))
        plans = [("serial, original ToG calls", lambda s: SerialLLM(client(s)), 1, "relation", "faithful"),
                 ("serial, our calls", lambda s: SerialLLM(client(s)), 1, "entity", "faithful"),
                 ("ours, 1 question at a time", client, 1, "entity", "faithful"),
                 ("ours, fast mode, 1 at a time", client, 1, "entity", "fast"),
                 ("ours, reading mode, 1 at a time", client, 1, "entity", "reading"),
                 (f"ours, {args.questions} questions in flight", client, args.questions, "entity", "faithful")]
        for name, make, in_flight, batch, mode in plans:
            server.reset()
            stats, wall = asyncio.run(schedule(graph, make(server), args.questions, in_flight=in_flight,
                                               base_url=server.base_url, entity_batch=batch, mode=mode))
            n = len(stats)
            rows.append({"schedule": name, "questions": n,
                         "calls_per_q": sum(s["llm_calls"] for s in stats) / n,
                         "max_calls": max(s["llm_calls"] for s in stats),
                         "rounds_per_q": sum(s["llm_rounds"] for s in stats) / n,
                         "tokens_per_q": sum(s["prompt_tokens"] + s["completion_tokens"] for s in stats) / n,
                         "max_rounds": max(s["llm_rounds"] for s in stats),
                         "server_requests": len(server.requests), "peak_in_flight": server.max_concurrent,
                         "wall_s": round(wall, 3)})
    serial = rows[0]["wall_s"]
    for r in rows:
        r["speedup"] = round(serial / r["wall_s"], 2)
    bound = 2 * 3 * 3 + 3 + 1
    if args.json:
        print(json.dumps({"latency_s": args.latency, "width": 3, "depth": 3, "paper_bound_calls": bound,
                          "schedules": rows}))
        return 0
    print(f"LLM schedule: {args.questions} questions, N=D=3, fake server latency {args.latency * 1000:.0f} ms "
          f"per call; paper bound {bound} calls/question")
    print(f"{'schedule':<34} {'calls/q':>8} {'max':>4} {'rounds/q':>9} {'max':>4} {'tokens/q':>9} {'peak':>5} "
          f"{'wall s':>8} {'speed-up':>9}")
    for r in rows:
        print(f"{r['schedule']:<34} {r['calls_per_q']:>8.1f} {r['max_calls']:>4} {r['rounds_per_q']:>9.1f} "
              f"{r['max_rounds']:>4} {r['tokens_per_q']:>9.0f} {r['peak_in_flight']:>5} {r['wall_s']:>8.2f} "
              f"{r['speedup']:>8.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
