"""Load test: N concurrent app sessions sharing one process-wide LLM limit.

    python bench/load_sessions.py [--sessions 1,10,50] [--questions 3] [--latency 0.2] [--limit 8] [--json]
    python bench/load_sessions.py --handoff [--json]   # what one queued call costs: hand-off vs poll vs thread

Every session runs in its own thread and drives the engine as the app does: a RunSpec with the session's typed
key, `plan` + `build_engine` (tog_core.compose) on the demo graph with the LLM pruner, and
`tog_core.app.runner.run_question` per question (one `asyncio.run` each). As the app's cached client would be,
one LLMClient per provider is shared; each session uses its `for_session` view (its id for fairness, its key).
The response cache is off so every call reaches the server. The loopback fake server answers every call after
`--latency` seconds: scores by word overlap with the question, "sufficient" once a chain covers the question's
words, the end of the first chain as the answer (the idea of tests/scripted.py's toy LLM).

The process-wide limit is set the way a deployment sets it, TOG_LLM_CONCURRENCY (default here 8). Reported per
N: p50/p95/max question latency, questions per second, LLM requests, and the peak of requests in flight measured
at the server and at the limiter; the exit status is 1 if a peak ever exceeds the limit or a question failed.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import re
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tog_core.app.runner import run_question  # noqa: E402
from tog_core.compose import RunSpec, build_engine, plan  # noqa: E402
from tog_core.graphrag.graph import KnowledgeGraph  # noqa: E402
from tog_core.llm._litellm import load_litellm  # noqa: E402
from tog_core.llm.client import LLMClient, LLMConfig  # noqa: E402
from tog_core.llm.limits import ENV_CONCURRENCY, ProviderLimiter, session  # noqa: E402
from tog_core.scoring.text import tokens  # noqa: E402
from tog_core.testing.server import FakeOpenAIServer, last_user_message  # noqa: E402

MODEL = "openai/toy"
_Q = re.compile(r"^Question:\s*(.*)$", re.MULTILINE)
_CAND = re.compile(r"^\[(\d+)\]\s*(.*)$", re.MULTILINE)
_WH = {"who", "what", "which", "where", "when", "how", "in", "did", "is", "the", "of"}


# ------------------------------------------------------------------ the fake LLM

def _question_words(text: str) -> set[str]:
    m = _Q.search(text)
    return set(tokens(m.group(1) if m else "")) - _WH


def toy_reply(request: dict) -> str:
    """A sensible reply to every engine prompt, from word overlap with the question."""
    text = last_user_message(request)
    if '"entities"' in text or "named entities this question" in text:
        return json.dumps({"entities": []})
    if "enough to answer" in text:
        q = _question_words(text)
        chains = text.split("Knowledge chains from the graph:", 1)[-1]
        covered = any(line.startswith("[") and q <= set(tokens(line)) for line in chains.splitlines())
        return json.dumps({"sufficient": covered, "reason": "covered" if covered else "not yet"})
    if "Answer the question" in text:
        first = next((line for line in text.splitlines() if line.startswith("[1]")), "")
        return f"The answer is {first.rsplit(' ', 1)[-1] or 'unknown'} [1]."
    q = _question_words(text)
    scores = [{"i": int(i), "score": round(len(q & set(tokens(c))) / max(1, len(q)), 3), "reason": "overlap"}
              for i, c in _CAND.findall(text)]
    if "in candidate order" in text:  # the compact format: bare numbers
        return json.dumps({"scores": [s["score"] for s in scores]})
    return json.dumps({"scores": scores})


class Measured:
    """The fake LLM with its latency inside the handler, counting the requests being answered: the reply is
    sent after the count drops, so a client's slot is always released after the server stopped counting it.
    (The server's own `max_concurrent` counts until its thread has finished writing, which lags the client's
    release by a moment and so can read one above the limit under load.)"""

    def __init__(self, latency_s: float) -> None:
        self.latency_s = latency_s
        self._lock = threading.Lock()
        self.in_flight = 0
        self.peak = 0

    def __call__(self, request: dict) -> str:
        with self._lock:
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
        try:
            time.sleep(self.latency_s)
            return toy_reply(request)
        finally:
            with self._lock:
                self.in_flight -= 1


class _Counter(logging.Handler):
    """Counts (and swallows) error records: LiteLLM's one process-wide logging worker rebinds to whichever event
    loop used it last, and complains when many sessions' loops run at once (its own callbacks, not our calls)."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1


# ------------------------------------------------------------------ one load level

def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100)."""
    ordered = sorted(values)
    rank = max(1, min(len(ordered), int(-(-q * len(ordered) // 100))))
    return ordered[rank - 1]


def run_level(n_sessions: int, *, graph: Any, questions: list[list[str]], per_session: int, latency_s: float,
              limit: int) -> dict[str, Any]:
    fake = Measured(latency_s)
    with FakeOpenAIServer(fake) as srv:
        shared = LLMClient(LLMConfig(model=MODEL, api_base=srv.base_url, use_cache=False, timeout_s=60,
                                     stream_timeout_s=120, max_retries=1))  # the app's cached client: no key
        limiter = shared.limiter
        latencies: list[float] = []
        failures: list[str] = []
        lock = threading.Lock()
        barrier = threading.Barrier(n_sessions)

        def one_session(k: int) -> None:
            sid = f"session-{k}"
            spec = RunSpec(model=MODEL, api_base=srv.base_url, api_key=f"sk-test-{k:04d}-typed-in-the-sidebar",
                           relation_pruner="llm")
            p = plan(spec, None)
            engine = build_engine(p, graph=graph, info=None,
                                  llm=shared.for_session(session=sid, api_key=spec.api_key)).engine
            barrier.wait()
            with session(sid):
                for j in range(per_session):
                    group = questions[j % len(questions)]  # 1-, 2-, 3-hop in turn: the same mix for every N
                    question = group[(k + j // len(questions)) % len(group)]
                    t0 = time.perf_counter()
                    try:
                        trace = run_question(engine, question, store=None)
                        bad = trace.stop_reason == "error" and f"{question}: {trace.error}"
                    except Exception as err:  # noqa: BLE001 - counted and reported
                        bad = f"{question}: {type(err).__name__}: {err}"
                    with lock:
                        latencies.append(time.perf_counter() - t0)
                        if bad:
                            failures.append(str(bad)[:300])

        threads = [threading.Thread(target=one_session, args=(k,), name=f"session-{k}") for k in range(n_sessions)]
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.perf_counter() - t0
        stats = limiter.stats()
        server_peak, requests, sockets = fake.peak, len(srv.requests), srv.max_concurrent
    return {"sessions": n_sessions, "questions": len(latencies), "limit": limit, "latency_s": latency_s,
            "p50_s": round(statistics.median(latencies), 3), "p95_s": round(percentile(latencies, 95), 3),
            "max_s": round(max(latencies), 3), "wall_s": round(wall, 2),
            "questions_per_s": round(len(latencies) / wall, 2), "llm_requests": requests,
            "requests_per_question": round(requests / max(1, len(latencies)), 1),
            "peak_in_flight_server": server_peak, "peak_in_flight_limiter": stats.peak,
            "peak_server_threads": sockets,
            "within_limit": server_peak <= limit and stats.peak <= limit, "failures": failures}


# ------------------------------------------------------------------ hand-off cost

def _contend(acquire_release: Any, *, loops: int, tasks: int, hold_s: float) -> tuple[float, float]:
    """`loops` threads, each an event loop running `tasks` tasks that take a slot, hold it, give it back."""
    def one_loop() -> None:
        async def main() -> None:
            await asyncio.gather(*(acquire_release(hold_s) for _ in range(tasks)))
        asyncio.run(main())

    threads = [threading.Thread(target=one_loop) for _ in range(loops)]
    wall0, cpu0 = time.perf_counter(), time.process_time()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - wall0, time.process_time() - cpu0


def handoff(limit: int = 4, loops: int = 10, tasks: int = 20, hold_s: float = 0.005) -> list[dict[str, Any]]:
    limiter = ProviderLimiter(limit)
    sem = threading.BoundedSemaphore(limit)

    async def handed(hold: float) -> None:
        async with limiter.slot(f"t{threading.get_ident()}"):
            await asyncio.sleep(hold)

    async def polled(hold: float) -> None:
        while not sem.acquire(blocking=False):
            await asyncio.sleep(0.005)
        try:
            await asyncio.sleep(hold)
        finally:
            sem.release()

    async def threaded(hold: float) -> None:
        await asyncio.to_thread(sem.acquire)
        try:
            await asyncio.sleep(hold)
        finally:
            sem.release()

    ideal = loops * tasks * hold_s / limit
    rows = []
    for name, fn in (("hand-off (call_soon_threadsafe)", handed), ("poll every 5 ms", polled),
                     ("blocking wait in a thread", threaded)):
        wall, cpu = _contend(fn, loops=loops, tasks=tasks, hold_s=hold_s)
        rows.append({"scenario": f"{loops} loops x {tasks} tasks, limit {limit}, hold {hold_s * 1000:g} ms",
                     "method": name, "wall_s": round(wall, 3), "ideal_s": round(ideal, 3),
                     "overhead_ms_per_call": round(1000 * (wall - ideal) / (loops * tasks), 3),
                     "cpu_s": round(cpu, 3)})
    return rows


HANDOFF_SCENARIOS = ({"limit": 4, "loops": 10, "tasks": 20, "hold_s": 0.005},  # short holds: hand-off latency
                     {"limit": 8, "loops": 50, "tasks": 4, "hold_s": 0.2})  # 50 sessions at 200 ms a call


# ------------------------------------------------------------------ command line

def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", default="1,10,50", help="comma-separated numbers of concurrent sessions")
    ap.add_argument("--questions", type=int, default=3,
                    help="questions each session asks one after another (a 1-, 2-, 3-hop demo question in turn)")
    ap.add_argument("--latency", type=float, default=0.2, help="seconds the fake server takes per call")
    ap.add_argument("--limit", type=int, default=8, help=f"process-wide LLM requests in flight ({ENV_CONCURRENCY})")
    ap.add_argument("--handoff", action="store_true", help="measure the cost of a queued call instead")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)

    if args.handoff:
        rows = [row for sc in HANDOFF_SCENARIOS for row in handoff(**sc)]
        if args.json:
            print(json.dumps({"handoff": rows}, indent=2))
            return 0
        print("Queued calls across threads/event loops (each thread its own asyncio.run): wall, and overhead over "
              "the ideal (calls x hold / limit)")
        print(f"{'scenario':<44} {'method':<32} {'wall s':>7} {'ideal s':>7} {'ms/call over':>12} {'cpu s':>6}")
        for r in rows:
            print(f"{r['scenario']:<44} {r['method']:<32} {r['wall_s']:>7.3f} {r['ideal_s']:>7.3f} "
                  f"{r['overhead_ms_per_call']:>12.3f} {r['cpu_s']:>6.3f}")
        return 0

    # LiteLLM's logging worker task is left pending when each asyncio.run ends (as in the app): not our failure
    load_litellm()  # its logger gets its own console handler at import: counted instead of printed
    noise = _Counter()
    for name in ("asyncio", "LiteLLM"):
        logging.getLogger(name).handlers = [noise]
        logging.getLogger(name).propagate = False
    os.environ[ENV_CONCURRENCY] = str(args.limit)  # read when the client is made, as in a deployment
    levels = [int(n) for n in args.sessions.split(",") if n.strip()]
    graph = KnowledgeGraph.load(str(ROOT / "demo"))
    rows = [json.loads(line) for line in (ROOT / "demo" / "questions.jsonl").read_text().splitlines() if line.strip()]
    questions = [[r["question"] for r in rows if r["hops"] == h] for h in sorted({r["hops"] for r in rows})]
    run_level(1, graph=graph, questions=questions, per_session=1, latency_s=0.0, limit=args.limit)  # warm-up
    results = [run_level(n, graph=graph, questions=questions, per_session=args.questions, latency_s=args.latency,
                         limit=args.limit) for n in levels]
    ok = all(r["within_limit"] and not r["failures"] for r in results)
    if args.json:
        print(json.dumps({"limit": args.limit, "latency_s": args.latency, "questions_per_session": args.questions,
                          "results": results, "litellm_logging_errors": noise.count, "ok": ok}, indent=2))
    else:
        print(f"Load: sessions in their own threads, {args.questions} questions each (demo graph, llm pruner), "
              f"fake LLM {args.latency * 1000:.0f} ms a call, {ENV_CONCURRENCY}={args.limit}")
        print(f"{'sessions':>8} {'questions':>9} {'p50 s':>7} {'p95 s':>7} {'max s':>7} {'q/s':>6} {'LLM req':>8} "
              f"{'req/q':>6} {'peak@server':>11} {'peak@limiter':>12} {'failed':>6}")
        for r in results:
            print(f"{r['sessions']:>8} {r['questions']:>9} {r['p50_s']:>7.2f} {r['p95_s']:>7.2f} {r['max_s']:>7.2f} "
                  f"{r['questions_per_s']:>6.2f} {r['llm_requests']:>8} {r['requests_per_question']:>6} "
                  f"{r['peak_in_flight_server']:>11} {r['peak_in_flight_limiter']:>12} {len(r['failures']):>6}")
        for r in results:
            for f in r["failures"][:3]:
                print(f"  failed (N={r['sessions']}): {f}")
        print("peak in flight within the limit: " + ("yes" if all(r["within_limit"] for r in results) else "NO")
              + f"; LiteLLM logging-worker errors swallowed: {noise.count}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
