"""A run made with an LLM, reopened step by step (runner.explore_from_trace): its history is replayed from the
response cache only (LLMClient.cache_only), so "Back to depth" can branch without one call to the provider; when a
reply is not cached, the run continues from its saved state and says why. The LLM is real LiteLLM against the toy
model on a loopback server."""
from __future__ import annotations

import asyncio
import os
import shutil

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from streamlit.testing.v1 import AppTest
from appkit import APP, FAKE_KEY, stepped_to_the_end, texts
from builders import make_graph

from tog_core.app.runner import explore_apply, explore_back, explore_finish, explore_from_trace, explore_propose, \
    explore_start
from tog_core.app.session import K, Settings
from tog_core.compose import RunSpec, build_engine
from tog_core.llm.client import LLMClient, LLMConfig
from tog_core.llm.errors import LLMError, NotCached
from tog_core.runs.files import RunStore
from tog_core.scoring.scorers import FALLBACK_LLM_ERROR
from tog_core.testing import ScriptedLLM
from tog_core.testing.server import Reply

Q = "Where was the founder of Acme born?"
KEY = "sk-test-reopen-0123456789"


def llm_engine(server):
    return build_engine(RunSpec(model="openai/toy", api_base=server.base_url, api_key=KEY, trust_api_base=True, width=2,
                                depth=3), graph=make_graph()).engine


def stepped_run(server):
    """An exploration stepped to its end by the automatic choices, and its saved trace."""
    store, eng = RunStore(), llm_engine(server)
    ex = explore_start(eng, Settings(), Q, ["Acme"])
    for _ in range(12):
        if ex.state.done:
            break
        explore_apply(eng, explore_propose(eng, ex), None, store)
    assert ex.state.done and ex.back_depths(), "the toy run should take more than one depth"
    return ex, store.load(ex.run_id), store


def test_an_llm_run_reopened_replays_from_the_cache_and_can_branch(tog_home, toy_server):
    ex, trace, store = stepped_run(toy_server)
    asked = len(toy_server.requests)
    assert asked and any(s.llm_calls for s in trace.steps)
    reopened = explore_from_trace(llm_engine(toy_server), Settings(), trace)  # a new session: a new client
    assert len(toy_server.requests) == asked  # every reply came from the cache
    assert reopened.no_history == "" and reopened.back_depths() == ex.back_depths()
    # the rebuilt history carries the steps as recorded (the calls they made), not as the cache replayed them
    for s in reopened.states:
        assert [x.to_dict() for x in s.steps] == [x.to_dict() for x in trace.steps[:len(s.steps)]]
    assert reopened.state.answer == trace.answer
    eng = llm_engine(toy_server)
    branch = explore_back(eng, reopened, 1, store)
    assert branch.parent_run == trace.run_id and branch.state.depth == 1 and not branch.state.steps
    explore_finish(eng, branch, store, auto=True)  # the branch goes on with the LLM as usual
    assert branch.state.done and store.load(branch.run_id).parent_run == trace.run_id


def test_without_its_replies_in_the_cache_the_run_continues_from_its_saved_state(tog_home, toy_server):
    _, trace, _ = stepped_run(toy_server)
    shutil.rmtree(tog_home / "cache" / "llm")
    asked = len(toy_server.requests)
    eng = llm_engine(toy_server)
    reopened = explore_from_trace(eng, Settings(), trace)
    assert len(toy_server.requests) == asked  # not one call to rebuild the history
    assert len(reopened.states) == 1 and reopened.back_depths() == []
    assert reopened.no_history == ("a reply of its LLM is not in the response cache (cleared, or the run was made on "
                                   "another machine or replica), and replaying it would call the LLM")
    assert reopened.state.answer == trace.answer
    assert eng.llm._cache_only == ""  # the session's client asks the provider again afterwards


def test_a_call_that_failed_when_the_run_was_made_fails_again_in_the_replay(tog_home, fake_openai):
    """Its reply was never cached: replayed, the step takes the fallback it took (BM25), and the run can branch."""
    from scripted import toy_llm

    seen = {"n": 0}

    def handler(request):
        seen["n"] += 1
        return Reply(status=400, text="bad request") if seen["n"] == 2 else toy_llm(request)

    server = fake_openai(handler)
    ex, trace, _ = stepped_run(server)
    assert FALLBACK_LLM_ERROR in [f["name"] for s in trace.steps for f in s.fallbacks]
    asked = len(server.requests)
    reopened = explore_from_trace(llm_engine(server), Settings(), trace)
    assert len(server.requests) == asked
    assert reopened.no_history == "" and reopened.back_depths() == ex.back_depths()


def test_a_recorded_choice_the_project_no_longer_offers_is_said(tog_home, toy_server):
    _, trace, _ = stepped_run(toy_server)
    kept = next(c for c in trace.steps[0].candidates if c.kept)
    kept.id = "rel:gone"  # as if the project had changed since the run
    reopened = explore_from_trace(llm_engine(toy_server), Settings(), trace)
    assert reopened.back_depths() == [] and reopened.no_history.startswith("it cannot be replayed here (step 1")


def test_with_the_response_cache_off_the_reason_says_so(tog_home, toy_server):
    client = LLMClient(LLMConfig(model="openai/toy", api_base=toy_server.base_url, api_key="none", use_cache=False,
                                 timeout_s=10, max_retries=0))
    with pytest.raises(NotCached) as err, client.cache_only():
        asyncio.run(client.complete([{"role": "user", "content": "x"}], temperature=0.0))
    assert err.value.reason == "the response cache is off" and toy_server.requests == []


def test_cache_only_raises_on_a_miss_and_ends_with_its_block(tog_home, toy_server):
    client = LLMClient(LLMConfig(model="openai/toy", api_base=toy_server.base_url, api_key="none",
                                 cache_dir=tog_home / "cache" / "llm", timeout_s=10, max_retries=0))
    msgs = [{"role": "user", "content": "Say ok"}]
    with pytest.raises(NotCached), client.cache_only():  # the miss leaves the block
        asyncio.run(client.complete(msgs, temperature=0.0))
    assert toy_server.requests == [] and client._cache_only == ""
    with pytest.raises(LLMError), client.cache_only(misses_fail=True):  # a call that failed then fails again
        asyncio.run(client.complete(msgs, temperature=0.0))
    assert toy_server.requests == []
    first = asyncio.run(client.complete(msgs, temperature=0.0))  # outside the block: asked, then cached
    with client.cache_only():
        again = asyncio.run(client.complete(msgs, temperature=0.0))
        with pytest.raises(NotCached):
            asyncio.run(client.stream([{"role": "user", "content": "other"}], temperature=0.0,
                                      on_token=lambda _t: None))
    assert again.cached and again.text == first.text and len(toy_server.requests) == 1
    view = client.for_session(session="s")
    with view.cache_only():
        assert client._cache_only == ""  # one session's view: the process's client still asks


def test_a_scripted_model_caches_nothing_so_every_call_in_cache_only_raises():
    llm = ScriptedLLM(lambda messages: "ok")
    with llm.cache_only(), pytest.raises(NotCached):
        asyncio.run(llm.complete([{"role": "user", "content": "x"}], temperature=0.0))
    assert llm.calls == [] and asyncio.run(llm.complete([], temperature=0.0)).text == "ok"


@pytest.mark.parametrize("cached", [True, False])
def test_the_explore_page_reopens_an_llm_run_with_its_history_or_says_why_not(app_home, toy_server, cached):
    sidebar = {K.MODEL: "openai/toy", K.API_BASE: toy_server.base_url, K.API_KEY: FAKE_KEY, K.DEPTH: 2}
    at = stepped_to_the_end(**sidebar)
    first = at.session_state[K.EXPLORE]
    assert not at.exception and first.state.done and first.back_depths()
    if not cached:
        shutil.rmtree(app_home / "cache" / "llm")
    asked = len(toy_server.requests)
    assert asked  # the run was made with the LLM
    again = AppTest.from_file(APP, default_timeout=90)  # F5 on the run's address: a new session
    again.query_params["run"] = first.run_id
    for key, value in sidebar.items():
        again.session_state[key] = value
    again.switch_page("pages/explore.py").run()
    assert not again.exception, again.exception
    assert len(toy_server.requests) == asked  # reopening asked the LLM nothing
    back = [s for s in again.selectbox if s.label == "Back to depth"]
    if cached:
        assert back and again.session_state[K.EXPLORE].back_depths() == first.back_depths()
    else:
        assert not back
        assert "cannot go back to an earlier depth: a reply of its LLM is not in the response cache" in texts(again)
