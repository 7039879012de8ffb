"""Choosing and building the chat model and embedder for a run: a LiteLLM string, `local`, `none`, or the
project's own. The default (nothing asked for) is the project's configured model when its key is present, else
no LLM: the packaged local model is never chosen silently. tog_core/compose.py is the only caller that turns a
choice into an engine.
"""
from __future__ import annotations

import ipaddress
import os
import re
import socket
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
    # whether credentials LiteLLM reads by itself (WATSONX_TOKEN, AWS_*, Google's ADC, whatever key is given) may
    # reach api_base: no base, one the operator lists, the CLI's own, or where the server's keys go anyway
    server_creds_ok: bool = True

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


# Providers whose endpoint without an API base is the provider's own hosted service (or one the operator names in
# the server's environment: AZURE_API_BASE, WATSONX_URL, …). Any other provider's default is a server on this machine
# or its network (ollama: localhost:11434, llamafile: 127.0.0.1:8080, lemonade, docker_model_runner, langgraph,
# langflow, xinference; lm_studio, hosted_vllm, oobabooga, triton: wherever their variable says) or no endpoint at
# all. A provider missing here costs its users on a shared app an API base the operator lists; nothing more.
HOSTED_PROVIDERS = frozenset("""
    openai text-completion-openai azure azure_text azure_ai anthropic anthropic_text gemini vertex_ai vertex_ai_beta
    bedrock bedrock_mantle amazon_nova sagemaker sagemaker_chat sagemaker_nova cohere cohere_chat ai21 ai21_chat
    mistral codestral text-completion-codestral groq xai deepseek together_ai fireworks_ai perplexity deepinfra
    cerebras sambanova nvidia_nim replicate huggingface openrouter databricks cloudflare watsonx watsonx_text nlp_cloud
    maritalk predibase friendliai github dashscope moonshot minimax novita nebius nscale hyperbolic lambda_ai
    featherless_ai galadriel inception text-completion-inception meta meta_llama volcengine zai v0 vercel_ai_gateway
    wandb baseten aiml ovhcloud cometapi compactifai snowflake oci gigachat heroku clarifai empower gradient_ai
    jina_ai voyage cortecs apertis assemblyai charity_engine chutes cognition darkbloom datarobot edenai helicone
    libertai manus modelscope morph nadir nano-gpt neosantara parasail pinstripes poe prism publicai qwen_ai_platform
    qwencloud reka sail scaleway scx-ai soniox synthetic tencent tensormesh xiaomi_mimo
""".split())
# Providers LiteLLM lets sign or authenticate a request with credentials it finds on the server by itself, whatever
# api_key is given (a name prefix: what it finds)
_AWS = "the AWS credentials (AWS_* variables, ~/.aws, an instance role)"
_GOOGLE = "Google's application default credentials (GOOGLE_APPLICATION_CREDENTIALS, VERTEXAI_CREDENTIALS, gcloud)"
AMBIENT_PROVIDERS = {"watsonx": "WATSONX_TOKEN or WATSONX_ZENAPIKEY", "gigachat": "GIGACHAT_ACCESS_TOKEN",
                     "vertex_ai": _GOOGLE, "gdc": _GOOGLE, "sagemaker": _AWS, "bedrock": _AWS, "aws_": _AWS,
                     "oci": "the OCI configuration (~/.oci/config)", "sap": "AICORE_* or its service key",
                     "github_copilot": "its stored sign-in token", "chatgpt": "its stored sign-in token"}
_BASE_VARIABLE = ("_API_BASE", "_BASE_URL", "_API_URL", "_URL", "_ENDPOINT", "_HOST", "_BASE")
_LOCAL_NAMES = (".localhost", ".local", ".internal", ".lan", ".home.arpa", ".intranet", ".corp", ".private")


def local_host(url: str) -> bool:
    """Whether `url` names the server itself or its private network: a loopback, private, link-local, shared or
    unspecified address however written (127.1, 2130706433, [::ffff:10.0.0.1]), localhost, a name without a dot, or
    one under .local, .internal, … (a name is never looked up in DNS). A URL that cannot be read counts as local."""
    from urllib.parse import urlsplit

    text = url.strip()
    try:
        host = (urlsplit(text if "//" in text else "//" + text).hostname or "").rstrip(".").lower()
    except ValueError:
        return True
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        try:
            ip = ipaddress.ip_address(socket.inet_aton(host))
        except OSError:
            return not host or host == "localhost" or "." not in host or host.endswith(_LOCAL_NAMES)
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return not ip.is_global


def ambient_provider(provider: str) -> bool:
    """Whether LiteLLM's `provider` may send credentials from the server's environment or files whatever key it is
    given (AMBIENT_PROVIDERS)."""
    return provider.startswith(tuple(AMBIENT_PROVIDERS))


def typed_model_refusal(model: str | None, api_base: str | None, configured: ModelSettings | None = None,
                        environ: Mapping[str, str] | None = None, *, resolve: bool = False) -> str | None:
    """Why a shared app sends no request for a model a person typed with the API base empty, or None when it may.
    Without a base LiteLLM sends to the provider's default endpoint, which for many providers is on the server itself
    (ollama, llamafile, …): a shared app sends a typed model only to a provider of HOSTED_PROVIDERS, and, with
    `resolve` (imports LiteLLM: the engine, not the sidebar), only when the provider LiteLLM resolves the model to is
    one too and neither its default base nor a base variable of the server's environment (OLLAMA_API_BASE,
    OPENAI_BASE_URL, …) is a local address (`local_host`) the operator did not list in TOG_ALLOWED_API_BASES. The
    project's own model (`configured`), `none`, `local` and a model with an API base (typed_base_refusal decides)
    are not checked. The app calls it on a shared app only (explorer/shell.py, explorer/ui.py)."""
    req = (model or "").strip()
    if (not req or req.lower() in (NONE, LOCAL) or (api_base or "").strip()
            or (configured is not None and req == configured.litellm_model)):
        return None
    provider = req.split("/", 1)[0] if "/" in req else ""
    if provider and provider not in HOSTED_PROVIDERS:
        return _not_hosted(req, provider)
    if not resolve:
        return None
    from tog_core.llm._litellm import load_litellm

    litellm = load_litellm()
    try:
        _, provider, _, default = litellm.get_llm_provider(req)
    except Exception:  # noqa: BLE001 - no provider: check_provider says so before anything is sent
        return None
    if provider not in HOSTED_PROVIDERS:
        return _not_hosted(req, provider)
    env = os.environ if environ is None else environ
    root = re.split(r"[_-]", provider.removeprefix("text-completion-"))[0].upper()
    found = [("LiteLLM's default for it", default),
             *((f"the server's ${k}", v) for k, v in env.items() if k.upper().startswith(root)
               and k.upper().endswith(_BASE_VARIABLE))]
    for where, url in found:
        if (isinstance(url, str) and url.strip() and local_host(url)
                and not server_key_may_go(url, configured.api_base if configured else None, env)):
            return (f"this app is shared, and without an API base the model {req[:120]} is sent to "
                    f"{(public_url(url) or '')[:200]} ({where}), an address on this server or its private network; "
                    f"so no request is made. The operator may list that base in {ALLOWED_BASES_ENV}; else give an API "
                    "base it lists, leave the model empty for the project's own, or set it to none")
    return None


def _not_hosted(req: str, provider: str) -> str:
    return (f"this app is shared, and '{provider[:60]}' (the model {req[:120]}) is not a provider whose endpoint "
            "without an API base is its own hosted service: for ollama, llamafile, lm_studio, hosted_vllm and the like "
            "it is a server on this machine or its network, which a model typed here may not reach; so no request is "
            f"made. Give an API base the operator lists in {ALLOWED_BASES_ENV}, write a hosted provider's model "
            "(openai/…, anthropic/…, gemini/…), leave the model empty for the project's own, or set it to none")


def ambient_refusal(provider: str, api_base: str | None) -> str:
    """Why a provider that reads the server's own credentials (ambient_provider) gets no request at `api_base`."""
    what = next((v for k, v in AMBIENT_PROVIDERS.items() if provider.startswith(k)), "its own")
    return (f"the provider '{provider[:60]}' authenticates with credentials LiteLLM finds on the server by itself "
            f"— {what} — whatever key is given, typed or not, and the API base "
            f"{(public_url(api_base) or '')[:200]} is not one the server's credentials may go to; so no request is "
            f"made. Empty the API base to use {provider[:60]}'s own endpoint, or ask the operator to list this base in "
            f"{ALLOWED_BASES_ENV} (a project's configured base too)")


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
    # where credentials LiteLLM finds by itself may go when the choice sends a typed key or none (ambient_provider)
    creds_ok = trust_api_base or not (base or "").strip() or normalise_base(base) in allowed_api_bases(env)
    if req:
        version = own.api_version if own else None
        if api_key:
            return _ambient_checked(ModelChoice(kind="litellm", model=req, api_base=base, api_version=version,
                                                api_key=api_key, key_source="typed", server_creds_ok=creds_ok))
        if not may_send:
            return _ambient_checked(ModelChoice(kind="litellm", model=req, api_base=base, api_version=version,
                                                key_source=WITHHELD, server_creds_ok=creds_ok,
                                                note=_withheld_note("the server's key")))
        key_env, project_key = (own.api_key_env, own.api_key) if own else (None, None)
        if own and not project_key and not (key_env and server_may_supply(key_env, env, provider=own.provider)):
            key_env = None  # LLMClient would read it from the environment: only a variable the project may read
        if (own and not project_key and not key_env and not trust_api_base and (base or "").strip()
                and normalise_base(base) not in allowed_api_bases(env)):
            # LiteLLM would read the variable of the provider the project names and send it to the base the project
            # names: a project may not choose both (graphrag/project_env.server_may_supply)
            return _ambient_checked(ModelChoice(kind="litellm", model=req, api_base=base, api_version=version,
                                                key_source=WITHHELD, server_creds_ok=creds_ok,
                                                note=_withheld_note("the server's key")))
        return ModelChoice(kind="litellm", model=req, api_base=base, api_key_env=key_env, api_key=project_key,
                           api_version=version, key_source="project" if (project_key or key_env) else "environment")
    if cm is not None:
        server_key = project_key_value(cm, env)
        common = ModelChoice(kind="litellm", model=cm.litellm_model, api_base=base, api_version=cm.api_version)
        if api_key:
            return _ambient_checked(replace(common, api_key=api_key, key_source="typed", server_creds_ok=creds_ok,
                                            note=f"the project's model ({cm.source})"))
        if server_key and may_send:
            return replace(common, api_key_env=cm.api_key_env, api_key=server_key, key_source="project",
                           note=f"the project's model ({cm.source})")
        if api_base and not may_send:  # the person pointed the project's model at a base of their own
            what = f"the project's key (${cm.api_key_env})" if cm.api_key_env else "the project's key"
            return _ambient_checked(replace(common, key_source=WITHHELD, server_creds_ok=creds_ok,
                                            note=_withheld_note(what)))
    why = f"no key for the project's model (${cm.api_key_env})" if cm and cm.api_key_env else \
        (f"no key for the project's model ({cm.key_note})" if cm and cm.key_note else
         "no key for the project's model" if cm else "the project names no model")
    return ModelChoice(kind=NONE, model=NONE, note=f"{why}: LLM-free search, the answer is composed from the chains "
                       "(choose 'local' to draft one with the small local model)")


def _ambient_checked(choice: ModelChoice) -> ModelChoice:
    """The choice, its note saying why no request will be made when its provider (read from the model's prefix;
    build_llm asks LiteLLM) reads the server's own credentials and they may not go to its base."""
    provider = choice.model.split("/", 1)[0] if "/" in choice.model else ""
    if choice.server_creds_ok or not ambient_provider(provider):
        return choice
    return replace(choice, note=ambient_refusal(provider, choice.api_base))


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
    provider = check_provider(choice.model, choice.api_base)
    if not choice.server_creds_ok and ambient_provider(provider):  # the server's credentials would go to the base
        raise ModelChoiceError(ambient_refusal(provider, choice.api_base))
    cfg = LLMConfig(model=choice.model, api_base=choice.api_base, api_version=choice.api_version,
                    api_key_env=choice.api_key_env, api_key=choice.api_key, send_env_key=choice.send_env_key,
                    cache_dir=cache, timeout_s=timeout_s,
                    stream_timeout_s=stream_timeout_s, deadline_s=deadline_s, max_retries=max_retries,
                    concurrency=concurrency)
    return LLMClient(cfg), choice


def check_provider(model: str, api_base: str | None = None) -> str:
    """ModelChoiceError when LiteLLM cannot tell which provider `model` is for ("gpt-4o-mini" is OpenAI's, "mistral"
    is nobody's without "mistral/"): every call of a run would fail the same way before reaching any provider, and
    the run would fall back at each of them. Nothing is sent anywhere. Returns the provider's name."""
    from tog_core.llm._litellm import load_litellm

    litellm = load_litellm()  # with LiteLLM's debug prints off (its provider list's address on this failure)
    try:
        return str(litellm.get_llm_provider(model, api_base=api_base)[1])
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
