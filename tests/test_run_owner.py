"""Runs kept per person on a shared deployment (`TOG_RUN_OWNER`, tog_core/app/owner.py): who is asking, read from
an authenticating proxy's header or Streamlit's sign-in; each person's runs in a folder of their own; the app's
pages list, open and save only the asking person's runs, and a request that names nobody gets none. The PostgreSQL
store's per-person view: tests/test_postgres_runs.py."""
from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from appkit import HEADER, QUESTION, _as, runs_per_person
from sessionkit import ask, session, texts
from tog_core.app.owner import OwnerUnknown, owner_setting, run_owner
from tog_core.app.session import K
from tog_core.errors import UsageError
from tog_core.runs.files import PEOPLE, RunStore
from tog_core.tog.trace import Trace

ROOT = Path(__file__).resolve().parents[1]
ISS = "https://login.example.org/tenant/v2.0"  # an OIDC provider's issuer, as st.user carries it


@pytest.fixture(autouse=True)
def home(app_home):
    return app_home


def test_the_setting_takes_a_header_or_streamlits_sign_in_and_refuses_anything_else():
    assert owner_setting({}) is None and owner_setting({"TOG_RUN_OWNER": "  "}) is None
    assert owner_setting(HEADER) == ("header", "X-Forwarded-User")
    assert owner_setting({"TOG_RUN_OWNER": "Header: X-Auth-Request-Email "}) == ("header", "X-Auth-Request-Email")
    assert owner_setting({"TOG_RUN_OWNER": "st.user"}) == ("st.user", "")
    for bad in ("X-Forwarded-User", "header:", "header:two words", "cookie:session", "st.users"):
        with pytest.raises(UsageError, match="TOG_RUN_OWNER") as err:
            owner_setting({"TOG_RUN_OWNER": bad})
        assert "header:NAME" in str(err.value) and "st.user" in str(err.value)


def test_the_owner_is_the_header_in_any_case_or_the_signed_in_person():
    assert run_owner({}, {"X-Forwarded-User": "ann"}) is None  # unset: runs are everyone's
    assert run_owner(HEADER, {"x-forwarded-user": " ann@example.org "}) == "ann@example.org"
    signed = {"TOG_RUN_OWNER": "st.user"}
    bob = {"is_logged_in": True, "email": "bob@example.org", "email_verified": True, "iss": ISS, "sub": "b-1"}
    assert run_owner(signed, {}, bob) == "bob@example.org"
    assert run_owner(signed, {}, {"is_logged_in": True, "iss": ISS, "sub": "b-1"}) == f"oidc {ISS} b-1"


@pytest.mark.parametrize("environ, headers, user, said", [
    (HEADER, {}, None, "does not say who is asking"),
    (HEADER, {"X-Forwarded-User": "  "}, None, "does not say who is asking"),
    (HEADER, {"X-Forwarded-User": ["mallory", "ann"]}, None, "does not say who is asking"),  # sent twice
    (HEADER, {"X-Forwarded-User": "ann\nbob"}, None, "cannot keep runs under"),
    (HEADER, {"X-Forwarded-User": "a" * 257}, None, "cannot keep runs under"),
    ({"TOG_RUN_OWNER": "st.user"}, {}, {"is_logged_in": False}, "sign in first"),
    ({"TOG_RUN_OWNER": "st.user"}, {}, None, "sign-in (st.user) does not say"),
])
def test_a_request_that_names_nobody_gets_no_runs_and_is_told_the_fix(environ, headers, user, said, caplog):
    with pytest.raises(OwnerUnknown, match="TOG_RUN_OWNER") as err:
        run_owner(environ, headers, user)
    assert said in str(err.value) and "no run can be listed or saved" in str(err.value)
    assert "X-Forwarded-User" not in str(err.value)  # whoever reads it reached the app around the proxy
    if environ is HEADER and said == "does not say who is asking":
        assert "X-Forwarded-User" in caplog.text  # the operator's log names the header


def test_one_value_in_a_list_is_the_owner_and_an_unverified_address_is_not():
    assert run_owner(HEADER, {"x-forwarded-user": ["ann"]}) == "ann"
    signed = {"TOG_RUN_OWNER": "st.user"}
    claim = {"is_logged_in": True, "email": "ann@example.org", "iss": ISS, "sub": "provider-42"}
    assert run_owner(signed, {}, {**claim, "email_verified": False}) == f"oidc {ISS} provider-42"
    assert run_owner(signed, {}, {**claim, "email_verified": True}) == "ann@example.org"


def test_an_address_the_provider_does_not_say_it_verified_is_nobodys_and_the_subject_is_read_with_its_issuer():
    """A provider that sends no `email_verified` (Entra ID, some generic OIDC ones, which may let a person type any
    address) or a value other than true: two accounts with one typed address keep their own runs, named by issuer and
    subject; the same subject at two issuers is two people; a verified address keeps the folder it always had."""
    signed = {"TOG_RUN_OWNER": "st.user"}
    ann = {"is_logged_in": True, "email": "ann@example.org", "iss": ISS, "sub": "subject-ann"}
    mallory = {**ann, "sub": "subject-mallory"}
    owners = {run_owner(signed, {}, u) for u in (ann, mallory)}
    assert owners == {f"oidc {ISS} subject-ann", f"oidc {ISS} subject-mallory"}
    for said in (1, "yes", None, False, "false"):  # only the claim's true counts
        assert run_owner(signed, {}, {**ann, "email_verified": said}) == f"oidc {ISS} subject-ann"
    for said in ("true", "True", " TRUE "):  # some providers' userinfo sends it as text
        assert run_owner(signed, {}, {**ann, "email_verified": said}) == "ann@example.org"
    for odd in (f"oidc {ISS} subject-bob", "ann@x@y", "@example.org", "ann@", "ann @example.org", ["ann@example.org"]):
        # a "verified" claim that is not one address is not a name: it could read as another person's
        assert run_owner(signed, {}, {**ann, "email": odd, "email_verified": True}) == f"oidc {ISS} subject-ann"
    other = run_owner(signed, {}, {**ann, "iss": "https://other.example.net"})
    assert other == "oidc https://other.example.net subject-ann" and other not in owners
    assert run_owner(signed, {}, {**ann, "email_verified": True}) == "ann@example.org"
    assert RunStore().for_owner("ann@example.org").root != RunStore().for_owner(f"oidc {ISS} subject-ann").root
    long_sub = "s" * 255  # an OIDC subject may be 255 characters: with its issuer it is still a person
    assert run_owner(signed, {}, {**ann, "sub": long_sub}) == f"oidc {ISS} {long_sub}"
    for bad in ({**ann, "iss": ""}, {**ann, "sub": " "}, {**ann, "iss": "https://a b"}):
        with pytest.raises(OwnerUnknown, match="does not say who is asking"):
            run_owner(signed, {}, bad)


def _trace(run_id: str, question: str = "Who?") -> Trace:
    return Trace.from_dict({"run_id": run_id, "question": question, "project": "/p", "created_at": "2026-11-30T10:00",
                            "answer": "Someone", "steps": [], "config": {}})


def test_each_persons_runs_are_apart_from_everyone_elses_and_from_the_shared_ones(tmp_path):
    shared = RunStore(tmp_path / "runs")
    ann, bob = shared.for_owner("ann@example.org"), shared.for_owner("bob@example.org")
    shared.save(_trace("shared-1"))
    ann.save(_trace("ann-1"))
    bob.save(_trace("bob-1"))
    assert [r.run_id for r in shared.list()] == ["shared-1"]
    assert [r.run_id for r in ann.list()] == ["ann-1"] and [r.run_id for r in bob.list()] == ["bob-1"]
    with pytest.raises(FileNotFoundError):
        ann.load("bob-1")
    ann.delete("bob-1")  # another person's id: nothing of theirs is touched
    assert bob.load("bob-1").answer == "Someone"
    assert ann.root.parent == tmp_path / "runs" / PEOPLE and "ann" not in ann.root.name  # a digest, not the name
    assert shared.for_owner("../../etc").root.parent == ann.root.parent  # no identity names a path
    assert RunStore(tmp_path / "runs").for_owner("ann@example.org").list()[0].run_id == "ann-1"  # the same each time


def test_the_app_lists_opens_and_saves_only_the_asking_persons_runs(monkeypatch, home):
    runs_per_person(monkeypatch, "ann")
    at = ask(session(ROOT / "demo"), QUESTION)
    run_id = at.session_state[K.ASK_TRACE].run_id
    assert [r.run_id for r in RunStore().for_owner("ann").list()] == [run_id] and RunStore().list() == []
    at.switch_page("pages/runs.py").run()
    assert not at.exception and QUESTION in list(at.dataframe[0].value["question"])

    _as(monkeypatch, "bob")  # another person, the same server
    other = session(ROOT / "demo")
    other.switch_page("pages/runs.py").run()
    assert not other.exception and QUESTION not in texts(other)
    assert not other.dataframe or QUESTION not in list(other.dataframe[0].value["question"])
    linked = AppTest.from_file(str(ROOT / "pages" / "ask.py"), default_timeout=90)  # ann's run's address, as bob
    linked.session_state[K.PROJECT_INPUT] = str(ROOT / "demo")
    linked.session_state[K.MODEL] = "none"
    linked.query_params["run"] = run_id
    linked.run()
    assert not linked.exception and "is not saved here" in texts(linked) and K.ASK_TRACE not in linked.session_state

    _as(monkeypatch, None)  # around the proxy: no header
    nobody = session(ROOT / "demo")
    nobody.switch_page("pages/runs.py").run()
    assert not nobody.exception
    assert any("does not say who is asking" in e.value for e in nobody.error), texts(nobody)
    assert QUESTION not in texts(nobody)
    nobody.switch_page("pages/explore.py").run()  # nobody searches step by step either
    assert not nobody.exception and any("does not say who is asking" in e.value for e in nobody.error)
    assert not [b for b in nobody.button if b.label == "Start"]


def test_with_streamlits_sign_in_a_person_not_signed_in_is_offered_it_and_told_when_it_is_not_set_up(monkeypatch):
    monkeypatch.setenv("TOG_RUN_OWNER", "st.user")
    at = session(ROOT / "demo")
    at.switch_page("pages/runs.py").run()
    assert not at.exception
    assert any("sign in first" in e.value for e in at.error)
    [b] = [b for b in at.button if b.label == "Sign in"]
    b.click()
    at.run()  # no [auth] in this test's secrets: said under the button, no traceback
    assert not at.exception and any("Signing in is not set up" in e.value for e in at.error), texts(at)
