"""Default model and embedder selection: the project's own when its key is present, else local, else none."""
from __future__ import annotations

import os

import numpy as np

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from builders import write_project
from tog_core.testing.server import FakeOpenAIServer
from tog_core.llm.factory import LOCAL, NONE, build_embedder, choose_model
from tog_core.graphrag.project import open_project

SETTINGS = """completion_models:
  default_completion_model:
    model_provider: openai
    model: gpt-4.1-mini
    api_key: ${{MY_TEST_KEY}}
embedding_models:
  default_embedding_model:
    model_provider: openai
    model: text-embedding-3-small
    api_base: {base}
    api_key: ${{MY_TEST_KEY}}
"""


def _project(tmp_path, base="http://127.0.0.1:9/v1", dotenv: str | None = None):
    root = write_project(tmp_path / "p", [("A", ""), ("B", "")], [("A", "B", "A knows B")],
                         settings=SETTINGS.format(base=base))
    if dotenv is not None:
        (root / ".env").write_text(dotenv)
    return root


def test_project_model_is_used_only_with_its_key(tmp_path):
    allow = {"TOG_PROJECT_ENV_VARS": "MY_TEST_KEY"}  # the operator lets projects name this server variable
    info = open_project(_project(tmp_path), environ=allow)
    with_key = choose_model(None, info, environ={**allow, "MY_TEST_KEY": "sk-abcdef123456"})
    assert (with_key.kind, with_key.model, with_key.api_key_env) == ("litellm", "openai/gpt-4.1-mini", "MY_TEST_KEY")
    assert "sk-abcdef123456" not in repr(with_key) and "sk-abcdef123456" not in str(with_key.public_dict())
    without = choose_model(None, info, environ={})  # never the small local model silently
    assert without.kind == NONE and "$MY_TEST_KEY" in without.note and "'local'" in without.note
    assert choose_model("none", info).kind == NONE and choose_model("local", info).kind == LOCAL
    explicit = choose_model("ollama/llama3", info, api_base="http://127.0.0.1:11434")
    assert (explicit.kind, explicit.model, explicit.api_base) == ("litellm", "ollama/llama3", "http://127.0.0.1:11434")


def test_configured_embedding_model_is_used_through_litellm(tmp_path):
    with FakeOpenAIServer(lambda req: "unused") as srv:
        root = _project(tmp_path, base=srv.base_url, dotenv="MY_TEST_KEY=sk-from-dotenv-999\n")
        info = open_project(root, environ={})
        emb = build_embedder(info, cache_dir=tmp_path / "cache", environ={})
        vecs = emb.embed(["who directed the film", "who directed the film"], kind="query")
        assert vecs.shape[0] == 2 and np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
        assert len(srv.embedding_requests) == 1  # the duplicate text was embedded once
        assert srv.embedding_auth_headers[-1] == "Bearer sk-from-dotenv-999"  # the key from .env reached the provider
        emb.embed(["who directed the film"], kind="query")
        assert len(srv.embedding_requests) == 1  # second time: from the disk cache
