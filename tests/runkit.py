"""Saved runs in the states the app tests need, on the demo project or a given engine and store: a run interrupted
as depth 2 begins, as Stop or a closed page leaves it (`_unfinished_run`, `stopped_at_depth_2`), the LLM-free
engine on the demo (`demo_engine`), a search start kept busy until Stop is pressed (`busy_until`, which raises
`Interrupted` as Streamlit's StopException would), and run files damaged in each way a store must survive
(`DAMAGED`, `write_damaged`)."""
from __future__ import annotations

import asyncio
import json
import threading
import time

import pytest

from appkit import CORIN, ROOT
from tog_core.app.runner import RunCallbacks, run_question
from tog_core.policy import depths
from tog_core.runs.files import RunStore


def _unfinished_run(depth_stop: int = 2) -> str:
    """A run interrupted at the start of depth 2, as a Stop or a closed page leaves it in the store."""
    from tog_core.compose import RunSpec, build_engine
    from tog_core.graphrag.graph import KnowledgeGraph
    from tog_core.graphrag.project import open_project

    class Interrupted(BaseException):
        pass

    info = open_project(ROOT / "demo")
    engine = build_engine(RunSpec(model="none"), graph=KnowledgeGraph.load(info), info=info).engine

    def on_stage(depth, stage):
        if depth == depth_stop:
            raise Interrupted()

    with pytest.raises(Interrupted):
        run_question(engine, CORIN, RunCallbacks(on_stage=on_stage), store=RunStore(),
                     model_info={"model": "none", "model_kind": "none"})
    [r] = RunStore().list()
    return r.run_id


def stopped_at_depth_2(eng, store, run_id: str, question: str, **kwargs) -> str:
    """A run of `question` saved to `store` as `run_id` and stopped as depth 2 begins (as Stop or a crash leaves it:
    unfinished, resumable); `kwargs` go to run_question (seeds, model_info). Returns the run id."""
    class Stop(BaseException):
        pass

    def stop_at_depth_2(depth, _stage):
        if depth == 2:
            raise Stop()

    with pytest.raises(Stop):
        run_question(eng, question, RunCallbacks(on_stage=stop_at_depth_2), store=store, run_id=run_id, **kwargs)
    return run_id


class Interrupted(BaseException):
    """What Streamlit raises in the stopped run's thread at its next tick (StopException)."""


def demo_engine():
    from tog_core.compose import RunSpec, build_engine
    from tog_core.graphrag.graph import KnowledgeGraph
    from tog_core.graphrag.project import open_project

    info = open_project(ROOT / "demo")
    return build_engine(RunSpec(model="none"), graph=KnowledgeGraph.load(info), info=info).engine


def busy_until(monkeypatch, linked: threading.Event, pressed: threading.Event, busy_s: float = 0.0):
    """Make the search's start busy: once linked (its first save, no step yet) it sets `linked`, waits for `pressed`,
    blocks the loop `busy_s` more (the hop trial's work: no tick meanwhile), then stays busy. Returns the ticker that
    ends the run once `pressed` is set."""
    real_start = depths.start

    async def busy_start(*args, on_linked=None, **kwargs):
        def hook(state):
            on_linked(state)
            linked.set()
            pressed.wait(30)
            time.sleep(busy_s)
        start = await real_start(*args, on_linked=hook, **kwargs)
        await asyncio.sleep(30)  # still busy: the next tick after the press ends the run (a warm run ends sooner)
        return start

    monkeypatch.setattr(depths, "start", busy_start)

    def tick(_elapsed: float) -> None:
        if pressed.is_set():
            raise Interrupted()
    return tick


# each damage the issue lists, as a run file; the value is a word the reason must contain
DAMAGED = {
    "bad-utf8": ("bytes", "UTF-8"),
    "config-list": ({"config": [1, 2]}, "'config' is a list"),
    "calls-text": ({"stats": {"llm_calls": "many"}}, "'stats.llm_calls' is a string"),
    "steps-number": ({"steps": 7}, "'steps' is a number"),
    "state-string": ({"state": "relations"}, "'state' is a string"),
    "deep": ("deep", "nested too deeply"),
}


def write_damaged(root, base: dict) -> None:
    root.mkdir(parents=True, exist_ok=True)
    for name, (change, _) in DAMAGED.items():
        p = root / f"2026-{name}.json"
        if change == "bytes":
            text = json.dumps({**base, "run_id": ""}, ensure_ascii=False).encode("utf-8")
            p.write_bytes(text.replace(b'"question": "', b'"question": "\xff', 1))
        elif change == "deep":
            p.write_text('{"question": "q", "steps": ' + "[" * 100_000 + "]" * 100_000 + "}")
        else:
            p.write_text(json.dumps({**base, "run_id": f"2026-{name}", **change}))
