"""A reply is untrusted (a person may type an API base of their own): the LLM client reads at most what the call's
max_tokens allows (llm/client.py: reply_cap), stops reading a stream there, never uses nor caches a longer reply and
says so by name (`reply_too_long`), so a run's trace records it as the stage's fallback; the response cache bounds
its memory and its folder (llm/cache.py, TOG_LLM_CACHE_MB), the oldest files removed first."""
from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path

import pytest

from faultkit import QUESTION, Faults, Rule, fast_client, make_graph
from llmkit import make_client, user
from tog_core.llm.cache import (CACHE_FORMAT_VERSION, ENTRY_MAX_CHARS, ResponseCache, cache_key,
                                disk_limit_bytes)
from tog_core.llm.client import TOO_LONG, LLMError, reply_cap
from tog_core.scoring.scorers import FALLBACK_LLM_ERROR
from tog_core.testing.server import FakeOpenAIServer
from tog_core.tog.engine import FALLBACK_ANSWER_LLM_ERROR, ToGEngine
from tog_core.tog.state import EngineConfig


def words(n: int) -> str:
    """n different words (LiteLLM stops a stream that repeats one chunk), one streamed chunk each."""
    return "".join(f"w{i} " for i in range(n))


def files(directory: Path) -> list[Path]:
    return sorted(directory.rglob("*.json"))


def test_the_cap_follows_max_tokens_between_a_floor_and_a_ceiling():
    assert reply_cap(8) == reply_cap(128) == 16_384
    assert reply_cap(512) == 16_384 and reply_cap(4096) == 131_072
    assert reply_cap(10**9) == ENTRY_MAX_CHARS == 1_000_000


def test_a_reply_over_the_cap_is_refused_by_name_and_never_cached(fake_openai, tmp_path):
    cap = reply_cap(8)
    srv = fake_openai(lambda r: "A" * (cap + 1) if "long" in str(r["messages"]) else "A" * cap)
    client = make_client(srv, cache_dir=tmp_path)

    async def calls():
        for _ in range(2):
            with pytest.raises(LLMError) as caught:
                await client.complete(user("long"), temperature=0, max_tokens=8)
            assert caught.value.kind == "bad_response" and TOO_LONG in str(caught.value)[:200]
        return await client.complete(user("short"), temperature=0, max_tokens=8)

    fine = asyncio.run(calls())
    assert len(fine.text) == cap and not fine.cached  # a reply at the cap is read, used and cached
    assert len(srv.requests) == 3 and client.usage.failures == 2  # the refused one was not cached: asked again
    [kept] = files(tmp_path)
    assert len(json.loads(kept.read_text())["text"]) == cap
    assert client.circuit.tripped is None  # the reply's fault, not the provider's: later calls still go


def test_a_stream_is_read_no_further_than_the_cap_and_its_reply_is_refused(fake_openai, tmp_path):
    cap = reply_cap(512)
    srv = fake_openai(lambda r: words(100_000))  # ~690,000 characters for an answer of 512 tokens
    client = make_client(srv, cache_dir=tmp_path, timeout_s=30.0)
    shown: list[str] = []
    with pytest.raises(LLMError) as caught:
        asyncio.run(client.stream(user("q"), temperature=0, max_tokens=512, on_token=shown.append))
    assert caught.value.kind == "bad_response" and TOO_LONG in str(caught.value)
    assert 0 < sum(map(len, shown)) <= cap  # what reached the caller stops at the cap
    assert files(tmp_path) == [] and len(srv.requests) == 1  # not cached, not retried


def test_a_cached_reply_longer_than_the_call_may_read_is_not_used(fake_openai, tmp_path):
    srv = fake_openai(lambda r: "fresh")
    client = make_client(srv, cache_dir=tmp_path)
    key = cache_key(model=client.config.model, api_base=client.config.api_base, messages=user("q"),
                    temperature=0, max_tokens=8, json_schema=None)
    ResponseCache(model=client.config.model, directory=tmp_path).put(key, {"text": "B" * (reply_cap(8) + 1)})
    result = asyncio.run(client.complete(user("q"), temperature=0, max_tokens=8))
    assert result.text == "fresh" and not result.cached and len(srv.requests) == 1


def test_a_run_records_an_over_long_reply_as_the_stages_named_fallback(tmp_path):
    long_scores = words(5_000)  # ~34,000 characters where the scoring call allows 16,384
    rules = [Rule("scores", long_scores, when=lambda n: n == 0), Rule("answer", words(5_000))]
    with FakeOpenAIServer(Faults(rules)) as srv:
        llm = fast_client(srv.base_url, cache_dir=tmp_path)
        eng = ToGEngine(make_graph(), llm=llm, config=EngineConfig(width=2, depth=2))
        trace = eng.trace(asyncio.run(eng.run(QUESTION, seeds=["Acme"])))
    scored = [f for s in trace.steps for f in s.fallbacks if f["name"] == FALLBACK_LLM_ERROR]
    assert scored and TOO_LONG in scored[0]["detail"]
    [answer] = [f for f in trace.stats["other_fallbacks"] if f["name"] == FALLBACK_ANSWER_LLM_ERROR]
    assert TOO_LONG in answer["detail"]
    assert trace.answer_by == "chains" and len(trace.answer) < 2_000  # composed from the chains, not the flood
    assert TOO_LONG in trace.stats["llm_failure"]["message"]
    assert all(len(json.loads(p.read_text())["text"]) < 16_384 for p in files(tmp_path))


# ------------------------------------------------------------------ the cache's own bounds

def _entry(i: int, size: int = 900) -> dict:
    return {"text": f"{i:06d}" + "x" * (size - 6), "prompt_tokens": 1, "completion_tokens": 1}


def test_the_cache_folder_stays_within_its_bound_the_oldest_removed_first(tmp_path):
    cache = ResponseCache(model="m", directory=tmp_path, disk_bytes=20_000)
    keys = [cache_key(model="m", api_base=None, messages=user(str(i)), temperature=0, max_tokens=8,
                      json_schema=None) for i in range(60)]
    for i, key in enumerate(keys):
        cache.put(key, _entry(i))
        cache.settle(10)  # the folder is scanned and pruned in the background
        path = cache.path(key)
        assert path is not None
        os.utime(path, (time.time() - 1000 + i, time.time() - 1000 + i))  # written one second apart
    total = sum(p.stat().st_size for p in files(tmp_path))
    assert total <= 20_000
    kept = {p.stem for p in files(tmp_path)}
    assert keys[-1] in kept and keys[0] not in kept  # the newest stays, the oldest went
    newest_gone = max(i for i, k in enumerate(keys) if k not in kept)
    assert all(k in kept for k in keys[newest_gone + 1:])  # whatever went is older than whatever stayed
    fresh = ResponseCache(model="m", directory=tmp_path, disk_bytes=20_000, memory_entries=1)
    assert fresh.get(keys[-1]) is not None and fresh.get(keys[0]) is None


def test_the_bound_is_read_from_tog_llm_cache_mb_and_zero_keeps_no_files(tmp_path, monkeypatch, caplog):
    assert disk_limit_bytes({}) == 256_000_000
    assert disk_limit_bytes({"TOG_LLM_CACHE_MB": "0.02"}) == 20_000
    for bad in ("lots", "-1", "nan", "inf"):
        assert disk_limit_bytes({"TOG_LLM_CACHE_MB": bad}) == 256_000_000
    assert "TOG_LLM_CACHE_MB" in caplog.text
    monkeypatch.setenv("TOG_LLM_CACHE_MB", "0")
    cache = ResponseCache(model="m", directory=tmp_path)
    cache.put("ab" * 32, _entry(1))
    assert cache.get("ab" * 32) is not None and files(tmp_path) == []  # kept in memory only


def test_the_cache_never_keeps_nor_reads_an_entry_over_the_ceiling(tmp_path):
    cache = ResponseCache(model="m", directory=tmp_path)
    cache.put("cd" * 32, {"text": "C" * (ENTRY_MAX_CHARS + 1)})
    assert cache.get("cd" * 32) is None and files(tmp_path) == []
    huge = tmp_path / "ef" / f"{'ef' * 32}.json"  # a file written before the ceiling, or by hand
    huge.parent.mkdir()
    huge.write_text(json.dumps({"version": CACHE_FORMAT_VERSION, "text": "D" * (7 * ENTRY_MAX_CHARS)}))
    assert ResponseCache(model="m", directory=tmp_path).get("ef" * 32) is None


def test_the_memory_holds_a_bounded_number_of_characters(tmp_path):
    cache = ResponseCache(model="m", directory=None, memory_chars=10_000)
    for i in range(30):
        cache.put(f"{i:064d}", _entry(i, 1_000))
    held = [i for i in range(30) if cache.get(f"{i:064d}") is not None]
    assert held == list(range(20, 30))  # the ten most recent: 10,000 characters
