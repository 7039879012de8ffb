"""Choosing the chat model and embedder for a run: a LiteLLM string, `local`, `none`, or the project's own.

Shared by the CLI and the app so both pick the same default: the project's configured model when its
key is present, else the packaged local model, else (nothing installed) no LLM at all.
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
    from tog_core.llm.local import local_model_available

    ok, reason = local_model_available()
    if ok:
        why = "no key for the project's model" if cm else "the project names no model"
        return ModelChoice(kind=LOCAL, model=LOCAL, note=f"local demo model ({why}) — configure a provider for quality")
    return ModelChoice(kind=NONE, model=NONE, note=f"no LLM available ({reason}); running LLM-free")


def default_pruner(kind: str) -> str:
    """The pruner "auto" stands for: the LLM when it is a real provider; the packaged embedder beside the
    small local model (which scores relations poorly, see README); BM25 with no LLM at all."""
    return {NONE: "bm25", LOCAL: "embedding"}.get(kind, "llm")


def resolve_pruners(relation: str | None, entity: str | None, kind: str, *, extra: tuple[str, ...] = ()
                    ) -> tuple[str, str]:
    """The (relation, entity) pruners a run uses: None or "auto" becomes default_pruner(kind); the entity
    stage follows the relation stage unless given. Raises ValueError naming the choices for an unknown
    pruner (also checked: `extra`, e.g. the pre-filter), and when "llm" is asked for without a model."""
    from tog_core.scoring.scorers import SCORERS

    rel = relation if relation not in (None, "auto") else default_pruner(kind)
    ent = entity if entity not in (None, "auto") else rel
    for name in (rel, ent, *extra):
        if name not in SCORERS:
            raise ValueError(f"unknown pruner '{name}'; choose one of: auto, {', '.join(SCORERS)}")
    if "llm" in (rel, ent) and kind == NONE:
        raise ValueError("--pruner llm needs a model; pass --model LITELLM_MODEL or 'local', or use "
                         "--pruner bm25|embedding|random")
    return rel, ent


def engine_options(kind: str) -> dict[str, Any]:
    """EngineConfig settings a model kind needs. The 135M local model cannot write reasons in time nor
    judge sufficiency (it says "yes" after one hop), so it scores with bare lists and the question-word
    coverage judge decides when to stop."""
    return {"compact_scores": True, "judge": "coverage"} if kind == LOCAL else {}


def build_llm(choice: ModelChoice, *, cache_dir: Path | None = None, timeout_s: float = 60.0,
              max_retries: int = 3, concurrency: int = 8) -> tuple[Any | None, ModelChoice]:
    """The LLM client for a choice (None for `none`). Starts the local server when needed."""
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
                        timeout_s=max(timeout_s, 120.0), max_retries=1, concurrency=2)
        return LLMClient(cfg), resolved
    cfg = LLMConfig(model=choice.model, api_base=choice.api_base, api_version=choice.api_version,
                    api_key_env=choice.api_key_env, api_key=choice.api_key, cache_dir=cache, timeout_s=timeout_s,
                    max_retries=max_retries, concurrency=concurrency)
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
