"""Choosing and building the chat model and embedder for a run: a LiteLLM string, `local`, `none`, or the
project's own. The default (nothing asked for) is the project's configured model when its key is present, else
no LLM: the packaged local model is never chosen silently. tog_core/compose.py is the only caller that turns a
choice into an engine.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tog_core.graphrag.project import ProjectInfo
from tog_core.home import tog_home

NONE = "none"
LOCAL = "local"


class ModelChoiceError(ValueError):
    """The chosen model cannot be used (message names the problem and the fix)."""


@dataclass(frozen=True, kw_only=True)
class ModelChoice:
    kind: str  # "none" | "local" | "litellm"
    model: str  # LiteLLM model string, "local" resolved to openai/<name>, or "none"
    api_base: str | None = None
    api_version: str | None = None
    api_key_env: str | None = None
    api_key: str | None = field(default=None, repr=False, compare=False)
    note: str = ""  # what a person should know (e.g. "local demo model — configure a provider for quality")

    def public_dict(self) -> dict[str, Any]:
        return {"model": self.model, "model_kind": self.kind, "api_base": self.api_base,
                "api_version": self.api_version, "api_key_env": self.api_key_env}


def choose_model(requested: str | None, info: ProjectInfo | None, *, api_base: str | None = None,
                 api_key: str | None = None, environ: dict[str, str] | None = None) -> ModelChoice:
    """Resolve what the person asked for (None = the default) without starting anything."""
    env = os.environ if environ is None else environ
    req = (requested or "").strip()
    if req.lower() == NONE:
        return ModelChoice(kind=NONE, model=NONE, note="no LLM: BM25/embedding scores, answer composed from chains")
    if req.lower() == LOCAL:
        return ModelChoice(kind=LOCAL, model=LOCAL, note="local demo model — configure a provider for quality")
    if req:
        key_env = None
        cm = info.chat_model if info else None
        if cm and cm.litellm_model == req:
            key_env, api_key = cm.api_key_env, api_key or cm.api_key
            api_base = api_base or cm.api_base
        return ModelChoice(kind="litellm", model=req, api_base=api_base, api_key_env=key_env, api_key=api_key,
                           api_version=cm.api_version if cm and cm.litellm_model == req else None)
    cm = info.chat_model if info else None
    if cm is not None:
        key = api_key or cm.api_key or (env.get(cm.api_key_env) if cm.api_key_env else None)
        if key:
            return ModelChoice(kind="litellm", model=cm.litellm_model, api_base=api_base or cm.api_base,
                               api_version=cm.api_version, api_key_env=cm.api_key_env, api_key=key,
                               note=f"the project's model ({cm.source})")
    why = f"no key for the project's model (${cm.api_key_env})" if cm and cm.api_key_env else \
        ("no key for the project's model" if cm else "the project names no model")
    return ModelChoice(kind=NONE, model=NONE, note=f"{why}: LLM-free search, the answer is composed from the chains "
                       "(choose 'local' to draft one with the small local model)")


def build_llm(choice: ModelChoice, *, cache_dir: Path | None = None, timeout_s: float = 20.0,
              stream_timeout_s: float = 60.0, deadline_s: float | None = None, max_retries: int = 3,
              concurrency: int | None = None) -> tuple[Any | None, ModelChoice]:
    """The LLM client for a choice (None for `none`). Starts the local server when needed. ``timeout_s`` bounds a
    scoring/judging try, ``stream_timeout_s`` the answer's; ``concurrency`` None = TOG_LLM_CONCURRENCY, else 8,
    requests in flight to the provider for the whole process (llm/limits.py)."""
    from tog_core.llm.client import LLMClient, LLMConfig

    if choice.kind == NONE:
        return None, choice
    cache = cache_dir if cache_dir is not None else tog_home() / "cache" / "llm"
    if choice.kind == LOCAL:
        from tog_core.llm.local import LocalModelUnavailable, ensure_local_server

        try:
            info = ensure_local_server(parallel=2)
        except LocalModelUnavailable as err:
            raise ModelChoiceError(f"the local model cannot start: {err}") from None
        resolved = ModelChoice(kind=LOCAL, model=info.litellm_model, api_base=info.api_base, note=choice.note)
        cfg = LLMConfig(model=info.litellm_model, api_base=info.api_base, api_key="none", cache_dir=cache,
                        timeout_s=max(timeout_s, 120.0), stream_timeout_s=max(stream_timeout_s, 120.0),
                        max_retries=1, concurrency=2)
        return LLMClient(cfg), resolved
    cfg = LLMConfig(model=choice.model, api_base=choice.api_base, api_version=choice.api_version,
                    api_key_env=choice.api_key_env, api_key=choice.api_key, cache_dir=cache, timeout_s=timeout_s,
                    stream_timeout_s=stream_timeout_s, deadline_s=deadline_s, max_retries=max_retries,
                    concurrency=concurrency)
    return LLMClient(cfg), choice


def build_embedder(info: ProjectInfo | None, *, cache_dir: Path | None = None, use_project_model: bool = True,
                   environ: dict[str, str] | None = None) -> Any:
    """The project's configured embedding model through LiteLLM when its key is present, else the
    packaged offline embedder; either way cached on disk per project."""
    from tog_core.llm.embed import CachedEmbedder, LiteLLMEmbedder, default_embedder

    env = os.environ if environ is None else environ
    name = info.name if info else "default"
    cache = cache_dir if cache_dir is not None else tog_home() / "cache" / "embeddings" / name
    em = info.embedding_model if info and use_project_model else None
    if em is not None:
        key = em.api_key or (env.get(em.api_key_env) if em.api_key_env else None)
        if key:
            return CachedEmbedder(LiteLLMEmbedder(em.litellm_model, api_base=em.api_base, api_key=key), cache)
    return default_embedder(cache)
