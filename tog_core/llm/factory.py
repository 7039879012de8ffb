"""Choosing and building the chat model and embedder for a run: a LiteLLM string, `local`, `none`, or the
project's own. The default (nothing asked for) is the project's configured model when its key is present, else
no LLM: the packaged local model is never chosen silently. tog_core/compose.py is the only caller that turns a
choice into an engine.
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from tog_core.graphrag.project import ProjectInfo
from tog_core.graphrag.project_env import server_may_supply
from tog_core.graphrag.settings import ModelSettings
from tog_core.home import tog_home
from tog_core.llm.limits import normalise_base  # one spelling of a base: the key allow-list's and the limiter's
from tog_core.errors import public_url

NONE = "none"
LOCAL = "local"
ALLOWED_BASES_ENV = "TOG_ALLOWED_API_BASES"  # operator setting: API bases the server's keys may be sent to
WITHHELD = "withheld"  # ModelChoice.key_source when a server key was kept from an API base a user typed


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
    # where the key comes from: "typed" (this session), "project" (settings or .env), "environment" (the provider's
    # own variable, read by LiteLLM), "withheld" (a server key kept from a user-typed API base), "none"
    key_source: str = "none"

    @property
    def send_env_key(self) -> bool:
        """Whether the provider may read the process environment's key (LiteLLM's fallback when none is given)."""
        return self.key_source != WITHHELD

    def public_dict(self) -> dict[str, Any]:
        return {"model": self.model, "model_kind": self.kind, "api_base": public_url(self.api_base),
                "api_version": self.api_version, "api_key_env": self.api_key_env, "key_source": self.key_source}


def allowed_api_bases(environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The operator's list (TOG_ALLOWED_API_BASES: comma- or space-separated URLs), normalised."""
    env = os.environ if environ is None else environ
    raw = env.get(ALLOWED_BASES_ENV, "")
    return tuple(b for b in (normalise_base(x) for x in raw.replace(",", " ").split()) if b)


def server_key_may_go(api_base: str | None, configured: str | None, environ: Mapping[str, str] | None = None) -> bool:
    """Whether a key the server holds (environment or project) may be sent to `api_base`: the provider's own
    endpoint (no base), the project's configured one, or one the operator allows (TOG_ALLOWED_API_BASES)."""
    wanted = normalise_base(api_base)
    return not wanted or wanted == normalise_base(configured) or wanted in allowed_api_bases(environ)


def typed_base_refusal(api_base: str | None, configured: str | None,
                       environ: Mapping[str, str] | None = None) -> str | None:
    """Why a shared app sends no request to an API base a person typed, or None when it may. A shared app's server
    would POST to whatever host a typed base names (its loopback, the internal network) and show the reply's text to
    the person; so it sends only to the provider's own endpoint (no base), the project's `configured` base, or one
    the operator lists in TOG_ALLOWED_API_BASES, compared as `server_key_may_go` compares them. A base whose address
    URL parsers read differently (a backslash, a space or control character, two '@') is refused outright. The app
    calls it for the sidebar's field (explorer/shell.py); one person's app and the CLI send anywhere they point."""
    typed = (api_base or "").strip()
    if not typed:
        return None
    head = typed.split("//", 1)[-1].split("/", 1)[0]
    odd = "\\" in typed or not typed.isprintable() or any(c.isspace() for c in typed) or head.count("@") > 1
    if not odd and server_key_may_go(typed, configured, environ):
        return None
    shown = (public_url(typed) or "")[:200]
    return (f"this app is shared, so it sends requests only to the provider's own endpoint (API base empty), the "
            f"project's configured API base, or a base its operator lists in {ALLOWED_BASES_ENV}, and {shown} is "
            f"none of them; empty the API base field, or ask the operator to add this base to {ALLOWED_BASES_ENV}")


def _withheld_note(what: str) -> str:
    return (f"no key sent to this API base: {what} is sent only to the provider's own endpoint, the project's "
            f"configured one, or a base the operator allows ({ALLOWED_BASES_ENV}); type your own key to send one")


def choose_model(requested: str | None, info: ProjectInfo | None, *, api_base: str | None = None,
                 api_key: str | None = None, environ: Mapping[str, str] | None = None,
                 trust_api_base: bool = False) -> ModelChoice:
    """Resolve what the person asked for (None = the default) without starting anything.

    Keys: a typed `api_key` goes wherever the person points. A key the server holds (the project's, or the
    environment's that LiteLLM would read) goes only where `server_key_may_go` allows, unless `trust_api_base`
    (the CLI: the person running it owns the environment). Otherwise the call is made with no key and the
    choice's note says why (key_source "withheld")."""
    env = os.environ if environ is None else environ
    req = (requested or "").strip()
    if req.lower() == NONE:
        return ModelChoice(kind=NONE, model=NONE, note="no LLM: BM25/embedding scores, answer composed from chains")
    if req.lower() == LOCAL:
        return ModelChoice(kind=LOCAL, model=LOCAL, note="local demo model — configure a provider for quality")
    cm = info.chat_model if info else None
    own = cm if cm is not None and (not req or cm.litellm_model == req) else None  # the project's model, asked for
    base = api_base or (own.api_base if own else None)
    may_send = trust_api_base or server_key_may_go(api_base, own.api_base if own else None, env)
    if req:
        version = own.api_version if own else None
        if api_key:
            return ModelChoice(kind="litellm", model=req, api_base=base, api_version=version, api_key=api_key,
                               key_source="typed")
        if not may_send:
            return ModelChoice(kind="litellm", model=req, api_base=base, api_version=version, key_source=WITHHELD,
                               note=_withheld_note("the server's key"))
        key_env, project_key = (own.api_key_env, own.api_key) if own else (None, None)
        if own and not project_key and not (key_env and server_may_supply(key_env, env, provider=own.provider)):
            key_env = None  # LLMClient would read it from the environment: only a variable the project may read
        if (own and not project_key and not key_env and not trust_api_base and (base or "").strip()
                and normalise_base(base) not in allowed_api_bases(env)):
            # LiteLLM would read the variable of the provider the project names and send it to the base the project
            # names: a project may not choose both (graphrag/project_env.server_may_supply)
            return ModelChoice(kind="litellm", model=req, api_base=base, api_version=version, key_source=WITHHELD,
                               note=_withheld_note("the server's key"))
        return ModelChoice(kind="litellm", model=req, api_base=base, api_key_env=key_env, api_key=project_key,
                           api_version=version, key_source="project" if (project_key or key_env) else "environment")
    if cm is not None:
        server_key = project_key_value(cm, env)
        common = ModelChoice(kind="litellm", model=cm.litellm_model, api_base=base, api_version=cm.api_version)
        if api_key:
            return replace(common, api_key=api_key, key_source="typed", note=f"the project's model ({cm.source})")
        if server_key and may_send:
            return replace(common, api_key_env=cm.api_key_env, api_key=server_key, key_source="project",
                           note=f"the project's model ({cm.source})")
        if api_base and not may_send:  # the person pointed the project's model at a base of their own
            what = f"the project's key (${cm.api_key_env})" if cm.api_key_env else "the project's key"
            return replace(common, key_source=WITHHELD, note=_withheld_note(what))
    why = f"no key for the project's model (${cm.api_key_env})" if cm and cm.api_key_env else \
        (f"no key for the project's model ({cm.key_note})" if cm and cm.key_note else
         "no key for the project's model" if cm else "the project names no model")
    return ModelChoice(kind=NONE, model=NONE, note=f"{why}: LLM-free search, the answer is composed from the chains "
                       "(choose 'local' to draft one with the small local model)")


def project_key_value(m: ModelSettings, env: Mapping[str, str]) -> str | None:
    """A project model's key: the one its settings resolved, else its variable's value in `env` when the project may
    read that variable from the server's environment (graphrag/project_env.py), else None."""
    if m.api_key:
        return m.api_key
    if m.api_key_env and server_may_supply(m.api_key_env, env, provider=m.provider):
        return env.get(m.api_key_env) or None
    return None


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
    check_provider(choice.model, choice.api_base)
    cfg = LLMConfig(model=choice.model, api_base=choice.api_base, api_version=choice.api_version,
                    api_key_env=choice.api_key_env, api_key=choice.api_key, send_env_key=choice.send_env_key,
                    cache_dir=cache, timeout_s=timeout_s,
                    stream_timeout_s=stream_timeout_s, deadline_s=deadline_s, max_retries=max_retries,
                    concurrency=concurrency)
    return LLMClient(cfg), choice


def check_provider(model: str, api_base: str | None = None) -> None:
    """ModelChoiceError when LiteLLM cannot tell which provider `model` is for ("gpt-4o-mini" is OpenAI's, "mistral"
    is nobody's without "mistral/"): every call of a run would fail the same way before reaching any provider, and
    the run would fall back at each of them. Nothing is sent anywhere."""
    from tog_core.llm._litellm import load_litellm

    litellm = load_litellm()  # with LiteLLM's debug prints off (its provider list's address on this failure)
    try:
        litellm.get_llm_provider(model, api_base=api_base)
    except litellm.BadRequestError:
        raise ModelChoiceError(
            f"LiteLLM cannot tell which provider the model '{model}' is for. Write it as provider/model, for example "
            "openai/gpt-4o-mini, azure/<deployment>, anthropic/claude-3-5-haiku-latest or ollama/llama3 (with an "
            "OpenAI-compatible server or a LiteLLM proxy: openai/<its model name> and its API base); or leave the "
            "model empty to search without an LLM") from None


def build_embedder(info: ProjectInfo | None, *, cache_dir: Path | None = None, use_project_model: bool = True,
                   environ: Mapping[str, str] | None = None) -> Any:
    """The project's configured embedding model through LiteLLM when its key is present, else the
    packaged offline embedder; either way cached on disk per project."""
    from tog_core.llm.embed import CachedEmbedder, LiteLLMEmbedder, default_embedder

    env = os.environ if environ is None else environ
    name = info.name if info else "default"
    cache = cache_dir if cache_dir is not None else tog_home() / "cache" / "embeddings" / name
    em = info.embedding_model if info and use_project_model else None
    if em is not None:
        key = project_key_value(em, env)
        if key:
            return CachedEmbedder(LiteLLMEmbedder(em.litellm_model, api_base=em.api_base, api_key=key), cache)
    return default_embedder(cache)
