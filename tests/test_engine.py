"""The step engine: real LiteLLM HTTP calls to a scripted server on 127.0.0.1, small hand-checkable graphs."""
from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from builders import make_graph
from scripted import toy_llm
from tog_core.policy.cheap import CheapPolicy
from tog_core.tog.engine import ToGEngine
from tog_core.testing.server import FakeOpenAIServer
from tog_core.graphrag.graph import KnowledgeGraph
from tog_core.llm.client import LLMClient, LLMConfig
from tog_core.testing.scripted import ScriptedLLM
from tog_core.runs.files import RunStore
from tog_core.tog.state import Callbacks, EngineConfig
from tog_core.tog.trace import Trace

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture()
def server():
    with FakeOpenAIServer(toy_llm) as srv:
        yield srv


def client(srv, cache_dir=None) -> LLMClient:
    return LLMClient(LLMConfig(model="openai/toy", api_base=srv.base_url, api_key="sk-test-not-a-real-key",
                               cache_dir=cache_dir, timeout_s=10, max_retries=0))


def run(engine, question, **kw):
    return asyncio.run(engine.run(question, **kw))


def test_two_hop_question_answered_with_the_right_chain(server):
    g = make_graph()
    eng = ToGEngine(g, llm=client(server), config=EngineConfig(width=2, depth=3))
    st = run(eng, "Where was the founder of Acme born?", seeds=["Acme"])
    tr = eng.trace(st)
    best = tr.chains[0]
    assert [(link.source, link.target) for link in best] == [("Acme", "Alice"), ("Alice", "Paris")]
    assert tr.stop_reason == "sufficient" and tr.answer_by == "llm" and "Paris" in tr.answer
    assert best[1].relationship_id == "r1" and best[1].text_unit_ids == ["t1"]
    assert tr.stats["llm_calls"] == len(server.requests) > 0
    # every step records who scored what, and the trace JSON round-trips
    assert Trace.from_json(tr.to_json()).to_dict() == tr.to_dict()


def test_width_one_keeps_a_single_path_and_width_none_keeps_all():
    g = make_graph()
    llm = ScriptedLLM(lambda msgs: toy_llm({"messages": msgs}))
    st = run(ToGEngine(g, llm=llm, config=EngineConfig(width=1, depth=1)), "Who founded Acme?", seeds=["Acme"])
    assert len(st.paths) == 1 and g.title(st.paths[0].end) == "Alice"
    st = run(ToGEngine(g, llm=llm, config=EngineConfig(width=None, depth=1)), "Who founded Acme?", seeds=["Acme"])
    assert {g.title(p.end) for p in st.paths} == {"Alice", "Bob", "Berlin"}


def test_dead_end_stops_with_no_candidates():
    g = make_graph(extra_entities=["Lonely"])
    eng = ToGEngine(g, config=EngineConfig(relation_pruner="bm25", entity_pruner="bm25"))
    st = run(eng, "What is Lonely near?", seeds=["Lonely"])
    assert st.stop_reason == "no_candidates" and st.answer_by == "chains"
    assert st.answer == "[No LLM] No answer: no reasoning chain was found from the topic entities (Lonely)."
    st = run(eng, "zxqv blorp?")  # nothing of the graph named: no topic entity, and the answer says so
    assert not st.seeds and st.answer.startswith("[No LLM] No answer: no entity of this project was found")
    stopped = eng.stop(eng.start("Who founded Acme?", ["Acme"]))  # a person stopped it before any chain
    assert eng.compose_answer(stopped) == ("[No LLM] No answer: the search was stopped before it found a reasoning "
                                           "chain from the topic entities (Acme). Ask again to let it search.")


def test_cycles_never_revisit_an_entity():
    g = make_graph()
    eng = ToGEngine(g, config=EngineConfig(relation_pruner="random", entity_pruner="random", width=3, depth=3))
    st = run(eng, "friend friend friend", seeds=["Carol"])
    for p in st.paths:
        visited = [p.start] + [h.dst for h in p.hops]
        assert len(visited) == len(set(visited))


def test_ties_break_by_candidate_order_deterministically():
    edges = [("Hub", f"Leaf{k}", "Hub touches a leaf") for k in range(6)]
    g = make_graph(edges)
    ends = []
    for _ in range(2):
        eng = ToGEngine(g, config=EngineConfig(relation_pruner="bm25", entity_pruner="bm25", width=2, depth=1))
        st = run(eng, "Which leaf does Hub touch?", seeds=["Hub"])
        ends.append([g.title(p.end) for p in st.paths])
    assert ends[0] == ends[1] == ["Leaf0", "Leaf1"]


def chain_graph(n_hubs=3, fan=6, depth=4) -> KnowledgeGraph:
    edges = []
    for h in range(n_hubs):
        edges.append(("Start", f"N{h}", f"Start links to node {h}"))
        frontier = [f"N{h}"]
        for _ in range(depth):
            nxt = []
            for f in frontier[:2]:
                for k in range(fan):
                    t = f"{f}.{k}"
                    edges.append((f, t, f"{f} connects to {t}"))
                    nxt.append(t)
            frontier = nxt
    return make_graph(edges)


def test_call_count_and_rounds_within_the_paper_bound(server):
    g = chain_graph()
    eng = ToGEngine(g, llm=client(server), config=EngineConfig(width=3, depth=3))
    st = run(eng, "Which node is reached after three links?", seeds=["Start"])
    stats = eng.stats(st)
    n, d = 3, 3
    assert stats["llm_calls"] <= 2 * n * d + d + 1 == 22
    assert stats["llm_rounds"] <= 10
    assert stats["llm_calls"] == len(server.requests)
    assert st.stop_reason == "max_depth"


def test_cached_rerun_makes_zero_calls(server, tmp_path):
    g = make_graph()
    cfg = EngineConfig(width=2, depth=2)
    first = run(ToGEngine(g, llm=client(server, tmp_path), config=cfg), "Where was the founder of Acme born?",
                seeds=["Acme"])
    sent = len(server.requests)
    second_engine = ToGEngine(g, llm=client(server, tmp_path), config=cfg)  # a new client: disk cache only
    second = run(second_engine, "Where was the founder of Acme born?", seeds=["Acme"])
    assert len(server.requests) == sent
    assert second_engine.stats(second)["llm_calls"] == 0 and second_engine.stats(second)["cache_hits"] > 0
    assert second.answer == first.answer


def test_override_changes_the_next_frontier_and_is_recorded():
    g = make_graph()
    llm = ScriptedLLM(lambda msgs: toy_llm({"messages": msgs}))
    eng = ToGEngine(g, llm=llm, config=EngineConfig(width=2, depth=2))

    async def go():
        st = eng.start("Where was the founder of Acme born?", ["Acme"])
        st = eng.apply(st, await eng.propose(st))  # relations of Acme, automatic choice
        prop = await eng.propose(st)  # entities: Alice is the top candidate
        top = max(prop.step.candidates, key=lambda c: c.score)
        assert top.label == "Alice" and top.auto_kept
        others = {c.id for c in prop.step.candidates if c.id != top.id}
        st = eng.apply(st, prop, others)  # untick the top entity
        return st, top

    st, top = asyncio.run(go())
    frontier = {g.title(p.end) for p in st.paths}
    assert "Alice" not in frontier and frontier
    assert {"id": top.id, "label": "Alice", "auto_kept": True, "kept": False} in st.steps[-1].overrides
    tr = eng.trace(st).to_dict()
    assert tr["steps"][-1]["overrides"] and tr["state"]["stage"] == "evaluate"


def test_resume_from_a_saved_mid_run_trace_finishes_the_same(tmp_path):
    g = make_graph()
    llm = ScriptedLLM(lambda msgs: toy_llm({"messages": msgs}))
    cfg = EngineConfig(width=2, depth=3)
    q = "Where was the founder of Acme born?"
    whole = run(ToGEngine(g, llm=llm, config=cfg), q, seeds=["Acme"])
    store = RunStore(tmp_path)
    eng = ToGEngine(g, llm=llm, config=cfg)
    saved = []

    async def partial():
        st = eng.start(q, ["Acme"])
        for _ in range(2):  # relations + entities of depth 1, then "crash"
            st = eng.apply(st, await eng.propose(st))
            store.save(eng.trace(st, run_id="run-1"))
            saved.append(st)

    asyncio.run(partial())
    trace = store.load("run-1")
    resumed_engine = ToGEngine(g, llm=llm, config=cfg)
    st = resumed_engine.restore(trace)
    assert st.stage == "evaluate" and st.depth == 1 and len(st.steps) == 2
    done = run(resumed_engine, q, state=st)
    assert done.answer == whole.answer
    fresh = ToGEngine(g, llm=llm, config=cfg).trace(whole).chains
    assert [[link.to_dict() if hasattr(link, "to_dict") else link for link in c] for c in
            resumed_engine.trace(done).chains] == [list(c) for c in fresh]


def test_a_run_resumed_under_other_policy_settings_says_which_in_its_trace():
    """A run saved by an older version (here relation_width 1) goes on under today's policy and names the change
    as a fallback of the resume; the same settings, or a trace that recorded none, add nothing."""
    g = make_graph()
    q = "Where was the founder of Acme born?"
    cfg = EngineConfig(width=2, depth=3, relation_pruner="bm25", entity_pruner="bm25")
    old = ToGEngine(g, config=cfg, policy=CheapPolicy(relation_width=1))
    st = old.apply(old.start(q, ["Acme"]), asyncio.run(old.propose(old.start(q, ["Acme"]))))
    saved = old.trace(st).to_dict()
    assert saved["config"]["policy_params"]["relation_width"] == 1
    now = ToGEngine(g, config=cfg, policy=CheapPolicy())
    done = run(now, q, state=now.restore(saved))
    notes = [f for f in now.trace(done).stats.get("other_fallbacks", []) if f["name"] == "policy_changed"]
    assert len(notes) == 1 and notes[0]["where"] == "resume" and "relation_width 1 -> 2" in notes[0]["detail"]
    again = now.trace(done).to_dict()  # resumed once more: the trace now records today's settings
    assert [u for u in now.restore(again).extra_usage if u.get("fallback") == "policy_changed"] == notes_usage(notes)
    assert not [u for u in old.restore(saved).extra_usage if u.get("fallback") == "policy_changed"]
    finished = old.trace(run(old, q, seeds=["Acme"])).to_dict()  # reopened to be read, not resumed: no record
    assert finished["answer"] and not [u for u in now.restore(finished).extra_usage
                                       if u.get("fallback") == "policy_changed"]
    saved["config"]["policy"] = "faithful"
    said = [u["detail"] for u in now.restore(saved).extra_usage if u.get("fallback") == "policy_changed"]
    assert said == ["the run was started under the faithful policy; it goes on under the cheap policy"]
    saved["config"].pop("policy_params")
    saved["config"].pop("policy")
    assert not [u for u in now.restore(saved).extra_usage if u.get("fallback") == "policy_changed"]


def notes_usage(notes):
    return [{"fallback": n["name"], "stage": n["where"], "detail": n["detail"]} for n in notes]


def test_unusable_llm_reply_applies_a_named_fallback():
    g = make_graph()
    llm = ScriptedLLM(lambda msgs: "Sorry, I am just a language model and cannot rate these.")
    eng = ToGEngine(g, llm=llm, config=EngineConfig(width=2, depth=1))
    st = run(eng, "Who founded Acme?", seeds=["Acme"])
    names = {f["name"] for s in st.steps for f in s.fallbacks}
    assert names and all(isinstance(n, str) and n for n in names)
    assert len(st.paths) == 2  # the search still went on


def test_hub_is_prefiltered_before_the_llm_sees_it(server):
    edges = [("Hub", f"Thing{k}", f"Hub is related to unrelated thing number {k}") for k in range(100)]
    edges.append(("Hub", "Answer", "Hub was designed by Answer"))
    g = make_graph(edges)
    eng = ToGEngine(g, llm=client(server), config=EngineConfig(width=3, depth=1, max_candidates=30))
    st = run(eng, "Who designed Hub?", seeds=["Hub"])
    rel_step = st.steps[0]
    assert "101 relations, 30 scored by llm after bm25 pre-filter" in rel_step.note
    first_prompt = server.requests[0]["messages"][-1]["content"]
    assert first_prompt.count("\n[") <= 30
    assert g.title(st.paths[0].end) == "Answer"


def test_progress_callbacks_report_every_stage():
    g = make_graph()
    seen = []
    cb = Callbacks(on_stage=lambda d, s: seen.append((d, s)), on_token=lambda t: seen.append(("token", t)))
    llm = ScriptedLLM(lambda msgs: toy_llm({"messages": msgs}))
    run(ToGEngine(g, llm=llm, config=EngineConfig(depth=2)), "Where was the founder of Acme born?", seeds=["Acme"],
        callbacks=cb)
    assert seen[:3] == [(1, "relations"), (1, "entities"), (1, "evaluate")]
    assert any(s[0] == "token" for s in seen)


def test_cli_query_without_any_llm_reaches_the_demo_answer(tmp_path):
    env = {**os.environ, "TOG_HOME": str(tmp_path)}
    q = "In which town was the founder of the Lanternwright Guild born?"
    proc = subprocess.run([sys.executable, "-m", "tog_core", "query", "demo", q, "--pruner", "bm25", "--model", "none",
                           "--json"], capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    tr = json.loads(proc.stdout)
    assert tr["config"]["model"] == "none" and tr["stats"]["llm_calls"] == 0
    assert tr["answer_by"] == "chains" and tr["answer"].startswith("[No LLM]")
    assert tr["chains"][0][-1]["target"] == "Tarnby"
    assert any(link["target"] == "Mara Quell" or link["source"] == "Mara Quell" for link in tr["chains"][0])
    saved = list((tmp_path / "runs").glob("*.json"))
    assert len(saved) == 1 and json.loads(saved[0].read_text())["answer"] == tr["answer"]


def test_fast_mode_scores_the_frontier_in_one_call_per_depth(server):
    g = chain_graph()
    eng = ToGEngine(g, llm=client(server), config=EngineConfig(width=3, depth=3, mode="fast"))
    st = run(eng, "Which node is reached after three links?", seeds=["Start"])
    stats = eng.stats(st)
    assert stats["llm_rounds"] <= 2 * 3 + 1
    assert all(s.llm_calls <= 1 for s in st.steps)
    assert [s.stage for s in st.steps].count("relations") == 0
    assert len(st.paths) == 3 and all(len(p.hops) == 3 for p in st.paths)


def test_embedding_linking_finds_a_seed_when_no_title_is_in_the_question(tmp_path):
    from tog_core.llm.embed import default_embedder, local_embedder_available

    ok, why = local_embedder_available()
    if not ok:
        pytest.skip(f"packaged embedder missing: {why}")
    g = make_graph([("Zeppelin Works", "Berlin", "Zeppelin Works is based in Berlin"),
                    ("Alice", "Paris", "Alice was born in Paris")])
    eng = ToGEngine(g, embedder=default_embedder(tmp_path), config=EngineConfig(
        relation_pruner="embedding", entity_pruner="embedding", depth=1))
    q = "where are the works of zeppelin based?"
    assert eng.start(q).seeds == ()  # neither an exact span nor a fuzzy title match
    st = asyncio.run(eng.start_async(q))
    assert [(s.title, s.how) for s in st.seeds][:1] == [("Zeppelin Works", "embedding")]


def test_compact_scoring_asks_small_models_for_bare_score_lists(server):
    g = make_graph()
    eng = ToGEngine(g, llm=client(server), config=EngineConfig(width=2, depth=3, compact_scores=True))
    st = run(eng, "Where was the founder of Acme born?", seeds=["Acme"])
    scoring = [r for r in server.requests if "in candidate order" in r["messages"][-1]["content"]]
    assert scoring and all("reason" not in json.dumps(r.get("response_format", {})) for r in scoring)
    assert not any(f for s in st.steps for f in s.fallbacks)  # the bare lists parsed cleanly
    assert eng.trace(st).chains[0][-1].target == "Paris"


def test_coverage_judge_replaces_an_overeager_llm_judge():
    g = make_graph()

    def eager(msgs):  # scores like the toy model but always claims the chains suffice
        reply = toy_llm({"messages": msgs})
        return '{"sufficient": true, "reason": "yes"}' if "enough to answer" in msgs[-1]["content"] else reply

    q = "Where was the founder of Acme born?"
    llm_judged = run(ToGEngine(g, llm=ScriptedLLM(eager), config=EngineConfig(width=2, depth=3)), q, seeds=["Acme"])
    assert llm_judged.depth == 1 and llm_judged.stop_reason == "sufficient"  # stopped after one hop
    llm = ScriptedLLM(eager)
    covered = run(ToGEngine(g, llm=llm, config=EngineConfig(width=2, depth=3, judge="coverage"), policy=CheapPolicy()),
                  q, seeds=["Acme"])
    assert covered.depth == 2 and covered.stop_reason == "sufficient"
    assert [s.verdict["by"] for s in covered.steps if s.stage == "evaluate"] == ["coverage", "coverage"]
    assert not any("enough to answer" in c["messages"][-1]["content"] for c in llm.calls)
