"""Where a model typed on a shared app reaches without an API base, and where LiteLLM's own credential finding may
send the server's credentials (review 21b). Many of LiteLLM's providers answer, without a base, on the server itself
(ollama: localhost:11434, llamafile: 127.0.0.1:8080, lemonade, docker_model_runner, langgraph, langflow, …): a shared
app sends a typed model only to a provider whose default is its own hosted service (llm/factory.HOSTED_PROVIDERS), and
not when LiteLLM would resolve its base to a local address (llm/factory.typed_model_refusal). Providers that read the
server's own credentials whatever key they are given (watsonx's WATSONX_TOKEN, gigachat's GIGACHAT_ACCESS_TOKEN, AWS,
Google's ADC) get no request at a base those credentials may not go to (llm/factory.ambient_refusal, build_llm)."""
from __future__ import annotations

import pytest

from listenerkit import counting_listener
from tog_core.graphrag.settings import ModelSettings
from tog_core.llm.factory import (
    ALLOWED_BASES_ENV,
    HOSTED_PROVIDERS,
    WITHHELD,
    ModelChoiceError,
    build_llm,
    choose_model,
    local_host,
    typed_model_refusal,
)

LOCAL_DEFAULTS = ["ollama/llama3", "ollama_chat/llama3", "llamafile/m", "lemonade/m", "docker_model_runner/m",
                  "langgraph/agent", "langflow/flow", "lm_studio/m", "hosted_vllm/m", "vllm/m", "xinference/m",
                  "oobabooga/m", "triton/m", "openai_like/m", "custom_openai/m", "litellm_proxy/m", "petals/m",
                  "github_copilot/gpt-4o", "no_such_provider/m"]


@pytest.mark.parametrize("model", LOCAL_DEFAULTS)
def test_a_typed_model_whose_provider_is_not_hosted_gets_no_request_without_a_base(model):
    why = typed_model_refusal(model, None, None, {}) or ""
    assert f"'{model.split('/')[0]}'" in why and ALLOWED_BASES_ENV in why and "set it to none" in why


def test_hosted_providers_the_projects_own_none_and_local_are_not_refused():
    for model in ("openai/gpt-4o-mini", "anthropic/claude-3-5-haiku-latest", "gemini/gemini-2.0", "gpt-4o-mini",
                  "groq/llama-3.1-8b-instant", "mistral/mistral-small", "", "none", "local", "LOCAL"):
        assert typed_model_refusal(model, None, None, {}) is None, model
    assert typed_model_refusal("ollama/llama3", None, None, {}) is not None


def test_the_projects_own_model_and_a_model_with_a_base_are_not_this_checks():
    own = ModelSettings(kind="chat", litellm_model="ollama/llama3", api_base=None)
    assert typed_model_refusal("ollama/llama3", None, own, {}) is None  # the project's configured model
    assert typed_model_refusal("ollama/mistral", None, own, {}) is not None  # another one typed
    assert typed_model_refusal("ollama/llama3", "http://gpu.internal:11434", None, {}) is None  # typed_base_refusal's


def test_no_hosted_provider_defaults_to_a_local_address():
    """The list stays true to LiteLLM: each name is one of its providers, and none of them resolves, without a base,
    to an address on the server or its network."""
    from tog_core.llm._litellm import load_litellm

    litellm = load_litellm()
    known = {str(getattr(p, "value", p)) for p in litellm.provider_list}
    assert HOSTED_PROVIDERS <= known, sorted(HOSTED_PROVIDERS - known)
    for provider in sorted(HOSTED_PROVIDERS):
        try:
            default = litellm.get_llm_provider(f"{provider}/m")[3]
        except Exception:  # noqa: BLE001 - a provider that needs more than a name: no default base either
            continue
        assert not (default and local_host(str(default))), (provider, default)


def test_a_hosted_provider_whose_base_the_environment_points_at_the_server_is_refused_when_resolved():
    env = {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
    assert typed_model_refusal("openai/gpt-4o-mini", None, None, env) is None  # the sidebar's look: no LiteLLM
    for model in ("openai/gpt-4o-mini", "gpt-4o-mini"):  # "gpt-4o-mini": LiteLLM says openai
        why = typed_model_refusal(model, None, None, env, resolve=True) or ""
        assert "$OPENAI_BASE_URL" in why and "127.0.0.1:9" in why and ALLOWED_BASES_ENV in why, model
    assert typed_model_refusal("openai/gpt-4o-mini", None, None, {**env, ALLOWED_BASES_ENV: "http://127.0.0.1:9/v1/"},
                               resolve=True) is None  # the operator lists it
    assert typed_model_refusal("openai/gpt-4o-mini", None, None, {"OPENAI_BASE_URL": "https://gw.example.test/v1"},
                               resolve=True) is None
    assert typed_model_refusal("ollama/llama3", None, None, {}, resolve=True) is not None


@pytest.mark.parametrize(("url", "local"), [
    ("http://127.0.0.1:8080/v1", True), ("http://localhost:11434", True), ("http://127.1/", True),
    ("http://2130706433/", True), ("http://0x7f.1/", True), ("http://[::1]:8000", True),
    ("http://[::ffff:10.0.0.5]/", True), ("http://169.254.169.254/latest", True), ("http://10.1.2.3", True),
    ("http://192.168.0.7", True), ("http://100.64.0.1", True), ("http://0.0.0.0:8000", True),
    ("http://ollama:11434", True), ("http://gpu.internal/v1", True), ("http://box.local/", True),
    ("http://a.localhost/", True), ("localhost:11434", True), ("http://[bad", True),
    ("https://api.openai.com/v1", False), ("https://8.8.8.8/", False), ("api.mistral.ai", False),
])
def test_which_addresses_are_on_the_server_or_its_network(url, local):
    assert local_host(url) is local


# ------------------------------------------------------------------------------------- the server's own credentials

@pytest.mark.parametrize(("model", "variable"), [("watsonx/ibm/granite-13b-chat-v2", "WATSONX_TOKEN"),
                                                 ("watsonx_text/ibm/granite", "WATSONX_ZENAPIKEY"),
                                                 ("gigachat/GigaChat", "GIGACHAT_ACCESS_TOKEN"),
                                                 ("sagemaker/endpoint", "AWS_SESSION_TOKEN"),
                                                 ("bedrock/anthropic.claude-v2", "AWS_SESSION_TOKEN"),
                                                 ("vertex_ai/gemini-pro", "VERTEXAI_CREDENTIALS")])
@pytest.mark.parametrize("typed_key", [None, "sk-typed-by-the-person"])
def test_a_provider_reading_the_servers_credentials_gets_no_request_at_a_base_they_may_not_go_to(
        monkeypatch, model, variable, typed_key):
    """The repro: with the server's key withheld (the placeholder 'no-key-sent'), LiteLLM's watsonx sent the server's
    WATSONX_ZENAPIKEY to the base as 'Authorization'; gigachat and watsonx do so over a key typed too."""
    monkeypatch.delenv(ALLOWED_BASES_ENV, raising=False)
    monkeypatch.setenv(variable, "SERVER-CREDENTIAL-CANARY")
    monkeypatch.setenv("WATSONX_PROJECT_ID", "p")
    provider = model.split("/")[0]
    with counting_listener() as (port, calls):
        base = f"http://127.0.0.1:{port}"
        choice = choose_model(model, None, api_base=base, api_key=typed_key)
        assert choice.key_source == ("typed" if typed_key else WITHHELD) and not choice.server_creds_ok
        assert f"'{provider}'" in choice.note and ALLOWED_BASES_ENV in choice.note  # the sidebar says it
        with pytest.raises(ModelChoiceError, match=f"'{provider}'.*{ALLOWED_BASES_ENV}"):
            build_llm(choice)
        assert not calls
    monkeypatch.setenv(ALLOWED_BASES_ENV, base)  # the operator's base: the provider's business, as before
    assert choose_model(model, None, api_base=base, api_key=typed_key).server_creds_ok


def test_a_projects_own_ambient_model_at_its_own_base_with_no_key_it_may_read_is_refused(tmp_path, monkeypatch):
    """The repro's project: watsonx at its own api_base, asked for by name; the server has WATSONX_ZENAPIKEY."""
    from builders import write_project
    from tog_core.graphrag.project import open_project

    monkeypatch.delenv(ALLOWED_BASES_ENV, raising=False)
    monkeypatch.setenv("WATSONX_ZENAPIKEY", "SERVER-WATSONX-ZENAPIKEY-CANARY")
    with counting_listener() as (port, calls):
        root = write_project(tmp_path / "p", [("A", "a"), ("B", "b")], [("A", "B", "A knows B")])
        (root / "settings.yaml").write_text("completion_models:\n  default_completion_model:\n"
                                            "    model_provider: watsonx\n    model: ibm/granite-13b-chat-v2\n"
                                            f"    api_base: http://127.0.0.1:{port}\n")
        info = open_project(root)
        assert info.chat_model is not None
        choice = choose_model(info.chat_model.litellm_model, info)
        assert choice.key_source == WITHHELD
        with pytest.raises(ModelChoiceError, match="'watsonx'"):
            build_llm(choice)
        assert not calls


def test_providers_that_take_the_key_they_are_given_are_unchanged():
    choice = choose_model("openai/toy", None, api_base="http://127.0.0.1:9/v1")
    assert choice.key_source == WITHHELD and not choice.server_creds_ok and "no key sent" in choice.note
    llm, _ = build_llm(choice)  # openai sends the placeholder: nothing of the server's goes there
    assert llm is not None
    assert choose_model("watsonx/ibm/granite", None).server_creds_ok  # the provider's own endpoint
    assert choose_model("watsonx/ibm/granite", None, api_base="http://x:1", trust_api_base=True).server_creds_ok


def test_the_app_says_why_and_sends_nothing(app_home, monkeypatch):
    """On one person's app too (a typed base gets no server key there either): the page says why, no traceback, and
    the server's WATSONX_TOKEN never reaches the typed base (it did, as 'Authorization: Bearer …')."""
    from sessionkit import ask, session
    from tog_core.app.session import K

    monkeypatch.setenv("WATSONX_TOKEN", "SERVER-WATSONX-TOKEN-CANARY")
    monkeypatch.setenv("WATSONX_PROJECT_ID", "p")
    with counting_listener() as (port, calls):
        at = session("demo", **{K.MODEL: "watsonx/ibm/granite-13b-chat-v2", K.API_BASE: f"http://127.0.0.1:{port}",
                                K.WIDTH: 1, K.DEPTH: 1})
        at = ask(at, "Where was Alice born?")
        assert not calls
    [said] = [e.value for e in at.main.error if "model cannot be used" in e.value]
    assert "'watsonx'" in said and "WATSONX\\_TOKEN" in said and "TOG\\_ALLOWED\\_API\\_BASES" in said
