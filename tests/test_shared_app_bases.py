"""Where a shared app sends things a person typed (review 21). An app served on 127.0.0.1 with runs kept per person
(TOG_RUN_OWNER, behind an authenticating proxy) is shared, not one person's: a PostgreSQL store typed in its sidebar
is refused like on any other address (explorer/shell.single_user). On a shared app an API base typed in the sidebar
is used only when it is the project's configured base or one listed in TOG_ALLOWED_API_BASES: any other gets no
request at all and the sidebar says why (llm/factory.typed_base_refusal, explorer/shell.typed_base_refused); one
person's app sends where it is pointed. The per-provider concurrency limit is keyed by the base as the allow-list
compares it (llm/limits.normalise_base), so spellings of one base share its slots.
"""
from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from streamlit import config as st_config

from listenerkit import counting_listener
from scripted import toy_llm
from sessionkit import ask, plain_session, session
from tog_core.app.session import K
from tog_core.errors import UsageError
from tog_core.llm.factory import ALLOWED_BASES_ENV, server_key_may_go, typed_base_refusal
from tog_core.llm.limits import all_limiters, limiter_for
from tog_core.testing.server import FakeOpenAIServer

from appkit import QUESTION

OWNER = "header:X-Forwarded-User"


@pytest.fixture()
def served_on(app_home, monkeypatch) -> Iterator:
    """`served_on(address)` sets the address the app listens on (restored after the test); no TOG_RUN_OWNER."""
    monkeypatch.delenv("TOG_RUN_OWNER", raising=False)
    old = st_config.get_option("server.address")
    yield lambda address: st_config.set_option("server.address", address)
    st_config.set_option("server.address", old)


# ---------------------------------------------------------------------------------------------- one person's app

@pytest.mark.parametrize(("address", "owner", "single"), [
    ("127.0.0.1", None, True), ("localhost", "", True), ("::1", "  ", True),  # unset or empty: one person's
    ("127.0.0.1", OWNER, False), ("127.0.0.1", "st.user", False),  # runs kept per person: shared
    ("127.0.0.1", "nonsense", False),  # a bad setting: the pages refuse it; never one person's app
    ("0.0.0.0", None, False), ("", None, False),
])
def test_one_persons_app_is_loopback_without_run_owners(served_on, monkeypatch, address, owner, single):
    from explorer.shell import single_user

    served_on(address)
    if owner is not None:
        monkeypatch.setenv("TOG_RUN_OWNER", owner)
    assert single_user() is single


def test_a_typed_store_is_refused_on_127_0_0_1_when_runs_are_kept_per_person(served_on, monkeypatch):
    """The repro: behind a proxy on 127.0.0.1 with TOG_RUN_OWNER, a typed store was connected to with the server's
    own libpq credentials (PGPASSWORD went to the typed host)."""
    served_on("127.0.0.1")
    monkeypatch.delenv("TOG_STORE", raising=False)
    monkeypatch.setenv("TOG_RUN_OWNER", OWNER)
    monkeypatch.setenv("PGPASSWORD", "server-db-secret-CANARY")
    with counting_listener() as (port, calls):
        at = session("demo", **{K.STORE: f"postgresql://postgres@127.0.0.1:{port}/x"})
        warned = [w.value for w in at.sidebar.warning if "store typed here is not used" in w.value]
        assert warned and "TOG\\_ALLOWED\\_STORES" in warned[0], [w.value for w in at.sidebar.warning]
        assert not calls  # never connected


# ---------------------------------------------------------------------------------------------- typed API bases

def test_which_typed_bases_a_shared_app_refuses(monkeypatch):
    env = {ALLOWED_BASES_ENV: "http://proxy.internal:4000, https://gw.example.test/v1"}
    project = "https://llm.example.test/v1"
    for fine in ("", "http://proxy.internal:4000/", "HTTP://PROXY.internal:4000", "https://GW.example.test:443/v1",
                 "https://llm.example.test/v1/", "http://user:pw@proxy.internal:4000"):
        assert typed_base_refusal(fine, project, env) is None, fine
    for bad in ("http://127.0.0.1:8080/admin", "http://proxy.internal:4001", "http://169.254.169.254/latest",
                "https://gw.example.test/v2", "http://proxy.internal.evil:4000", "file:///etc/passwd",
                "http://proxy.internal:4000\\@127.0.0.1:9/",  # parsers disagree on these: refused outright
                "http://a@b@proxy.internal:4000", "http://proxy.internal:4000 /x", "http://proxy.internal:4000\t/x"):
        why = typed_base_refusal(bad, project, env) or ""
        assert ALLOWED_BASES_ENV in why and "empty the API base field" in why, bad
    assert typed_base_refusal("http://127.0.0.1:9/v1", None, {}) is not None  # nothing allowed: only the provider's
    why = typed_base_refusal("http://alice:S3cretPw@10.0.0.5/v1?key=QSECRET", None, {}) or ""
    assert "10.0.0.5" in why and "S3cretPw" not in why and "QSECRET" not in why  # the base named without secrets


def _ask_with_typed_base(base: str, **state) -> tuple:
    at = session("demo", **{K.MODEL: "openai/toy", K.API_BASE: base, K.API_KEY: "sk-typed-by-the-person", **state})
    if any(b.label == "Ask" for b in at.button):
        at = ask(at, QUESTION)
    return at


def test_a_shared_app_sends_nothing_to_a_typed_base_its_operator_did_not_name(served_on):
    served_on("0.0.0.0")
    with FakeOpenAIServer(toy_llm) as srv:
        base = srv.base_url
        at = _ask_with_typed_base(base)
        assert srv.requests == []  # the repro: the server POSTed there and showed the reply's text
    assert not at.exception
    [said] = [e.value for e in at.sidebar.error if "API base typed here is not used" in e.value]
    assert "TOG\\_ALLOWED\\_API\\_BASES" in said and "empty the API base field" in said
    assert any("cannot be used on this app" in e.value for e in at.main.error)
    # what the person typed is all kept, the base too (they see what was refused)
    assert (at.session_state[K.MODEL], at.session_state[K.API_BASE], at.session_state[K.API_KEY]) == \
        ("openai/toy", base, "sk-typed-by-the-person")
    at.session_state[K.MODEL] = "none"  # the field is not used without a provider's model: nothing is refused
    at.run()
    assert not at.exception and not at.sidebar.error and not at.main.error


def test_a_shared_app_sends_to_a_listed_base_and_one_persons_app_anywhere(served_on, monkeypatch):
    served_on("0.0.0.0")
    with FakeOpenAIServer(toy_llm) as srv:
        monkeypatch.setenv(ALLOWED_BASES_ENV, "HTTP" + srv.base_url.removeprefix("http") + "/")
        at = _ask_with_typed_base(srv.base_url)
        assert srv.requests and not at.sidebar.error  # the operator's base, spelled otherwise
    monkeypatch.delenv(ALLOWED_BASES_ENV)
    served_on("127.0.0.1")  # one person's app: nothing changes
    with FakeOpenAIServer(toy_llm) as srv:
        at = _ask_with_typed_base(srv.base_url)
        assert srv.requests and not at.sidebar.error


def test_a_shared_app_behind_a_proxy_on_127_0_0_1_refuses_a_typed_base_too(served_on, monkeypatch):
    served_on("127.0.0.1")
    monkeypatch.setenv("TOG_RUN_OWNER", OWNER)
    with FakeOpenAIServer(toy_llm) as srv:
        at = session("demo", **{K.MODEL: "openai/toy", K.API_BASE: srv.base_url})
        assert srv.requests == []
    assert any("API base typed here is not used" in e.value for e in at.sidebar.error)


# ---------------------------------------------------------------------------------------------- the limiter

def test_spellings_of_one_base_share_one_providers_limit(monkeypatch):
    """The repro: five spellings of one allowed proxy were five limiters, five times TOG_LLM_CONCURRENCY slots."""
    monkeypatch.setenv(ALLOWED_BASES_ENV, "http://proxy.internal:4000")
    model = f"openai/spellings-{uuid.uuid4().hex[:8]}"
    spellings = ["http://proxy.internal:4000", "http://proxy.internal:4000/", "HTTP://PROXY.internal:4000",
                 "http://proxy.internal:4000//", "http://Proxy.Internal:80/".replace(":80", ":4000"),
                 "http://someone:pw@proxy.internal:4000/?x=1"]
    assert all(server_key_may_go(s, None) for s in spellings)
    limiters = {id(limiter_for(model, s)) for s in spellings}
    assert len(limiters) == 1
    mine = [k for k in all_limiters() if k[0] == model]
    assert mine == [(model, "http://proxy.internal:4000")]  # one entry, with no user, password or query in it
    assert limiter_for(model, "http://proxy.internal:4001") is not limiter_for(model, spellings[0])
    assert limiter_for(model, None) is limiter_for(model, "")


@pytest.mark.parametrize(("address", "model", "refused"), [
    ("0.0.0.0", "openai/toy", True), ("0.0.0.0", "", True),  # a provider's model, or the project's, at that base
    ("0.0.0.0", "none", False), ("0.0.0.0", "local", False),  # the base is not used
    ("127.0.0.1", "openai/toy", False),  # one person's app sends where it is pointed
])
def test_a_saved_runs_api_base_is_checked_when_it_is_resumed(served_on, monkeypatch, address, model, refused):
    """A run saved with an internal base (before the rule, or on one person's app) brings that base back when it is
    resumed, continued or reopened: ui.engine refuses it on a shared app as the sidebar's field is refused."""
    from explorer import ui
    from tog_core.app.session import Settings

    monkeypatch.delenv(ALLOWED_BASES_ENV, raising=False)
    served_on(address)
    s = Settings(model=model, api_base="http://127.0.0.1:9/internal")
    why = ui.base_refusal(s, None)
    assert (why is not None) is refused
    if refused:
        assert ALLOWED_BASES_ENV in why
        with pytest.raises(UsageError, match=ALLOWED_BASES_ENV):
            ui.engine(s)
    monkeypatch.setenv(ALLOWED_BASES_ENV, "http://127.0.0.1:9/internal")
    assert ui.base_refusal(s, None) is None


# ------------------------------------------------------------------------- a typed model with the API base empty

def test_a_typed_model_whose_provider_answers_on_the_server_gets_no_request_on_a_shared_app(served_on, monkeypatch):
    """Review 21b's repro: on a shared app, the Model field alone (llamafile/…, ollama/…) made the server POST to its
    own loopback (LiteLLM's default base for those providers) and show the reply. Its stand-in here: llamafile's
    default moved to a listener by LLAMAFILE_API_BASE, which LiteLLM reads."""
    served_on("0.0.0.0")
    with FakeOpenAIServer(toy_llm) as srv:
        monkeypatch.setenv("LLAMAFILE_API_BASE", srv.base_url)
        at = session("demo", **{K.MODEL: "llamafile/toy"})
        assert not any(b.label == "Ask" for b in at.button)  # the page stopped before its question box
        assert srv.requests == []
        [said] = [e.value for e in at.sidebar.error if "model typed here is not used" in e.value]
        assert "llamafile" in said and "TOG\\_ALLOWED\\_API\\_BASES" in said
        assert any("cannot be used on this app" in e.value for e in at.main.error)
        at.session_state[K.MODEL] = "none"  # nothing else typed is lost; `none` goes on
        at.run()
        assert not at.exception and not at.sidebar.error and not at.main.error
        monkeypatch.setenv(ALLOWED_BASES_ENV, srv.base_url)  # with a base the operator lists: sent there
        at = _ask_with_typed_base(srv.base_url, **{K.MODEL: "hosted_vllm/toy"})
        assert srv.requests and not at.sidebar.error
    monkeypatch.delenv(ALLOWED_BASES_ENV)
    served_on("127.0.0.1")  # one person's app: sent where LiteLLM sends it, as before
    with FakeOpenAIServer(toy_llm) as srv:
        monkeypatch.setenv("LLAMAFILE_API_BASE", srv.base_url)
        at = _ask_with_typed_base("", **{K.MODEL: "llamafile/toy"})
        assert srv.requests and not at.sidebar.error


def test_a_hosted_model_the_servers_environment_sends_to_the_server_is_stopped_by_the_page(served_on, monkeypatch):
    """openai/… is hosted, but OPENAI_BASE_URL on the server names its loopback: LiteLLM's resolved base is checked
    where the client is built (ui.engine), and the page says why without a traceback."""
    served_on("0.0.0.0")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-server-key-0123456789")
    with FakeOpenAIServer(toy_llm) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
        at = ask(session("demo", **{K.MODEL: "openai/toy"}), QUESTION)
        assert srv.requests == []
        [said] = [e.value for e in at.main.error if "model cannot be used" in e.value]
        assert "OPENAI\\_BASE\\_URL" in said and "TOG\\_ALLOWED\\_API\\_BASES" in said
        monkeypatch.setenv(ALLOWED_BASES_ENV, srv.base_url)  # the operator lists it: used as before
        at = ask(session("demo", **{K.MODEL: "openai/toy"}), QUESTION)
        assert srv.requests and not at.main.error


def test_a_saved_runs_model_is_checked_when_it_is_resumed(served_on):
    """A saved run's model comes back with it: checked as the sidebar's field is, where the engine is built."""
    from explorer import ui
    from tog_core.app.session import Settings

    for address, model, refused in [("0.0.0.0", "ollama/llama3", True), ("0.0.0.0", "llamafile/m", True),
                                    ("0.0.0.0", "openai/toy", False), ("0.0.0.0", "", False),
                                    ("0.0.0.0", "none", False), ("127.0.0.1", "ollama/llama3", False)]:
        served_on(address)
        s = Settings(model=model, api_base="")
        assert (ui.base_refusal(s, None) is not None) is refused, (address, model)
        if refused:
            with pytest.raises(UsageError, match=ALLOWED_BASES_ENV):
                ui.engine(s)


# ------------------------------------------------------------------------------ a proxy in front of 127.0.0.1

def test_a_request_through_a_proxy_is_not_one_persons_app(served_on, monkeypatch):
    from explorer import ui
    from explorer.shell import single_user

    served_on("127.0.0.1")
    for headers, single in [
        ({}, True), ({"Host": ["127.0.0.1:8501"], "Origin": ["http://localhost:8501"]}, True),
        ({"Host": ["[::1]:8501"], "Origin": ["http://[::1]:8501"]}, True),  # a browser on the server itself
        ({"X-Forwarded-For": ["203.0.113.7"]}, False), ({"x-real-ip": ["203.0.113.7"]}, False),
        ({"Forwarded": ["for=203.0.113.7"]}, False), ({"X-Forwarded-Host": ["tog.example.test"]}, False),
        ({"X-Forwarded-Proto": ["https"]}, False), ({"Via": ["1.1 proxy"]}, False),
        ({"Host": ["tog.example.test"]}, False),  # a proxy that passes the public name on, and nothing else
        ({"Host": ["127.0.0.1:8501"], "Origin": ["https://tog.example.test"]}, False),
    ]:
        monkeypatch.setattr(ui, "_request_headers", lambda h=headers: h)
        assert single_user() is single, headers


def test_behind_a_proxy_a_typed_base_is_refused_and_the_servers_memory_neither_kept_nor_read(served_on, monkeypatch,
                                                                                             app_home):
    """Review 21b's repro: behind a same-machine proxy without TOG_RUN_OWNER, Mallory's typed base was used and kept in
    TOG_HOME/sidebar.json, and the next person's session opened with it: their typed key went to her host."""
    import json

    from explorer import ui

    served_on("127.0.0.1")
    monkeypatch.setattr(ui, "_request_headers", lambda: {"Host": ["127.0.0.1:8501"], "X-Forwarded-For": ["1.2.3.4"]})
    kept = app_home / "sidebar.json"
    with FakeOpenAIServer(toy_llm) as srv:
        hers = srv.base_url
        at = _ask_with_typed_base(hers)  # Mallory's session
        assert srv.requests == [] and any("API base typed here is not used" in e.value for e in at.sidebar.error)
        assert not kept.exists()
        app_home.mkdir(parents=True, exist_ok=True)
        kept.write_text(json.dumps({K.MODEL: "openai/toy", K.API_BASE: hers}))  # left by one person's app
        victim = plain_session()
        assert (victim.session_state[K.MODEL], victim.session_state[K.API_BASE]) == ("", "")
    monkeypatch.setattr(ui, "_request_headers", lambda: {})  # a browser on the server itself: as before
    assert plain_session().session_state[K.API_BASE] == hers


def test_a_remembered_base_refused_now_is_not_brought_back(served_on, monkeypatch):
    """A person's own memory (TOG_RUN_OWNER) keeps the base they typed while the operator listed it; once the list
    no longer holds it, their next session opens with the field empty, not with a base the page would stop on."""
    from explorer import ui

    served_on("127.0.0.1")
    monkeypatch.setenv("TOG_RUN_OWNER", OWNER)
    monkeypatch.setattr(ui, "_request_headers", lambda: {"x-forwarded-user": "alice"})
    base = "http://127.0.0.1:9/v1"
    monkeypatch.setenv(ALLOWED_BASES_ENV, base)
    session("demo", **{K.MODEL: "openai/toy", K.API_BASE: base})
    assert plain_session().session_state[K.API_BASE] == base  # kept while listed
    monkeypatch.delenv(ALLOWED_BASES_ENV)
    at = plain_session()
    assert at.session_state[K.API_BASE] == "" and at.session_state[K.MODEL] == "openai/toy"
    assert not any("API base" in e.value for e in at.sidebar.error)
