"""What the sidebar remembers for the next session (tog_core/app/session.py memory_home, remember_settings; explorer/
shell.py): never a number it had to refuse (Width 0 set to 1, Depth 99 set to 6: the next session opened with 1 and 6
and no word why), and, when runs are kept per person (TOG_RUN_OWNER), each person's sidebar and recent projects in
their own folder, never another's; without owners, one person's app (127.0.0.1) keeps one memory for the server."""
from __future__ import annotations

import json
import pytest
from streamlit import config as st_config
from streamlit.testing.v1 import AppTest

from builders import write_project
from sessionkit import plain_session
from tog_core.app.session import K
from tog_core.runs.files import RunStore

HEADER = {"TOG_RUN_OWNER": "header:X-Forwarded-User"}


@pytest.fixture(autouse=True)
def home(app_home):
    return app_home


# a new browser session (a reload, another person's first visit), nothing set by hand unless given
_fresh = plain_session


def _type(at: AppTest, key: str, value: int) -> AppTest:
    at.sidebar.number_input(key=key).set_value(value).run()
    assert not at.exception, at.exception
    return at


def _numbers(at: AppTest) -> tuple[int, int]:
    return at.session_state[K.WIDTH], at.session_state[K.DEPTH]


def _as(monkeypatch, who: str | None) -> None:
    import explorer.ui as ui

    monkeypatch.setattr(ui, "_request_headers", lambda: {} if who is None else {"x-forwarded-user": who})


@pytest.fixture()
def served_on():
    """Serve the app on another address for one test (the default is 127.0.0.1, one person's app)."""
    old = st_config.get_option("server.address")

    def serve(address: str) -> None:
        st_config.set_option("server.address", address)

    yield serve
    st_config.set_option("server.address", old)


def test_a_width_and_depth_the_sidebar_refused_are_never_remembered(home):
    """The review's steps: Width 0 and Depth 99 are set to 1 and 6 and said; a new session opens with the numbers
    last typed that were taken, not with 1 and 6 and no word why."""
    at = _fresh()
    at = _type(_type(at, K.WIDTH, 5), K.DEPTH, 2)  # good numbers, remembered
    at = _type(_type(at, K.WIDTH, 0), K.DEPTH, 99)
    assert _numbers(at) == (1, 6) and len(at.sidebar.warning) == 2  # refused, set to the limits, and said
    kept = json.loads((home / "sidebar.json").read_text())
    assert (kept[K.WIDTH], kept[K.DEPTH]) == (5, 2)
    again = _fresh()
    assert _numbers(again) == (5, 2) and not again.sidebar.warning
    again = _type(again, K.WIDTH, 7)  # a good number typed after: remembered again
    assert _numbers(_fresh()) == (7, 2)


def test_a_refused_number_leaves_what_the_field_held_before_and_the_other_choices_are_kept(home):
    at = _type(_type(_fresh(), K.WIDTH, 0), K.DEPTH, 99)
    at.session_state[K.REL_PRUNER] = "bm25"  # another choice of the same session is remembered as before
    at.run()
    assert _numbers(at) == (1, 6)
    kept = json.loads((home / "sidebar.json").read_text())
    assert (kept[K.WIDTH], kept[K.DEPTH], kept[K.REL_PRUNER]) == (3, 3, "bm25")  # what the fields held before
    again = _fresh()
    assert _numbers(again) == (3, 3) and again.session_state[K.REL_PRUNER] == "bm25"


def test_remember_settings_keeps_what_was_remembered_for_a_refused_field(tmp_path):
    from tog_core.app.session import remember_settings, remembered_settings

    remember_settings({K.WIDTH: 5, K.DEPTH: 2}, tmp_path)
    remember_settings({K.WIDTH: 1, K.DEPTH: 6, K.MODE: "fast"}, tmp_path, refused=[K.WIDTH])
    assert remembered_settings(tmp_path) == {K.WIDTH: 5, K.DEPTH: 6, K.MODE: "fast"}
    remember_settings({K.WIDTH: 1}, tmp_path / "new", refused={K.WIDTH: "Width 0 is not taken …"})  # K.REFUSED's dict
    assert remembered_settings(tmp_path / "new") == {}


def test_where_the_sidebar_is_remembered(tmp_path, home):
    from tog_core.app.session import memory_home, remember_settings

    assert memory_home(None, single_user=True) == home  # one person's app: the server's TOG_HOME
    assert memory_home(None, single_user=False) is None  # shared, without owners: nowhere
    ann = memory_home("ann@example.org", single_user=False)
    assert ann is not None and ann.parent == RunStore().for_owner("ann@example.org").root  # in her own folder
    assert memory_home("ann@example.org", single_user=True) == ann != memory_home("bob@example.org", single_user=True)
    remember_settings({K.WIDTH: 4}, ann)
    assert RunStore().for_owner("ann@example.org").problems() == []  # never taken for a damaged run


def test_with_runs_kept_per_person_each_person_has_their_own_sidebar(monkeypatch, home):
    """Behind an authenticating proxy on 127.0.0.1 (the setting's safe deployment), one sidebar.json was everyone's:
    ann's width became bob's."""
    for k, v in HEADER.items():
        monkeypatch.setenv(k, v)
    _as(monkeypatch, "ann")
    ann = _fresh(**{K.MODEL: "none"})
    ann = _type(ann, K.WIDTH, 5)
    ann.session_state[K.REL_PRUNER] = "bm25"
    ann.run()

    _as(monkeypatch, "bob")
    bob = _fresh()
    assert _numbers(bob) == (3, 3) and bob.session_state[K.REL_PRUNER] == "auto" and bob.session_state[K.MODEL] == ""
    bob = _type(bob, K.DEPTH, 4)
    assert not (home / "sidebar.json").exists()  # not the server's
    from tog_core.app.session import memory_home

    assert json.loads((memory_home("ann", single_user=True) / "sidebar.json").read_text())[K.WIDTH] == 5

    _as(monkeypatch, "ann")
    again = _fresh()
    assert _numbers(again) == (5, 3) and again.session_state[K.REL_PRUNER] == "bm25"
    _as(monkeypatch, "bob")
    assert _numbers(_fresh()) == (3, 4)

    _as(monkeypatch, None)  # a request that names nobody: neither's, and nothing written
    nobody = _fresh()
    assert _numbers(nobody) == (3, 3)
    _type(nobody, K.WIDTH, 9)
    assert not (home / "sidebar.json").exists()
    assert [p.parent.name for p in home.rglob("sidebar.json")] == [".settings", ".settings"]


def test_with_runs_kept_per_person_each_persons_recent_projects_are_their_own(monkeypatch, home, tmp_path):
    for k, v in HEADER.items():
        monkeypatch.setenv(k, v)
    other = write_project(tmp_path / "annsproject", [("Alpha", "a start"), ("Beta", "an end")],
                          [("Alpha", "Beta", "Alpha leads to Beta")])
    _as(monkeypatch, "ann")
    ann = _fresh(**{K.MODEL: "none"})
    ann.sidebar.text_input(key=K.PROJECT_INPUT).set_value(str(other)).run()
    assert not ann.exception, ann.exception
    assert any("annsproject" in r for r in ann.session_state[K.RECENT])

    _as(monkeypatch, "bob")
    bob = _fresh()
    assert not any("annsproject" in r for r in bob.session_state[K.RECENT])  # ann's project path is hers
    assert not (home / "recent.json").exists()
    _as(monkeypatch, "ann")
    assert any("annsproject" in r for r in _fresh().session_state[K.RECENT])


def test_with_runs_kept_per_person_a_shared_address_remembers_each_persons_sidebar(monkeypatch, home, served_on):
    """Served on the network, the sidebar was remembered for nobody (it would have been everyone's); with owners each
    person's is theirs, so it is remembered for them. Without owners nothing is, as before."""
    served_on("0.0.0.0")
    _type(_fresh(), K.WIDTH, 6)
    assert _numbers(_fresh()) == (3, 3) and not list(home.rglob("sidebar.json"))
    for k, v in HEADER.items():
        monkeypatch.setenv(k, v)
    _as(monkeypatch, "ann")
    _type(_fresh(), K.WIDTH, 6)
    assert _numbers(_fresh()) == (6, 3)
    _as(monkeypatch, "bob")
    assert _numbers(_fresh()) == (3, 3)


def test_an_old_servers_memory_is_not_a_persons_once_runs_are_kept_per_person(monkeypatch, home):
    (home).mkdir(parents=True, exist_ok=True)
    (home / "sidebar.json").write_text(json.dumps({K.WIDTH: 8, K.MODEL: "ollama/llama3.1"}))
    assert _numbers(_fresh()) == (8, 3)  # owners off, 127.0.0.1: the server's memory, as before
    for k, v in HEADER.items():
        monkeypatch.setenv(k, v)
    _as(monkeypatch, "ann")
    at = _fresh()
    assert _numbers(at) == (3, 3) and at.session_state[K.MODEL] == ""
