"""A project path typed in the sidebar or named in the address (a security review): a NUL, too long, `~` of any
account, or a path that cannot be resolved is a plain sidebar error, never a traceback, and on a shared server
`~root` and `~nobody` read alike. Code: tog_core/app/inputs.py."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from streamlit.testing.v1 import AppTest

from tog_core.app.inputs import PATH_MAX
from tog_core.app.session import K, check_project_root, resolve_project_path  # where the app has always read them
from tog_core.graphrag.errors import ProjectError

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
QUESTION = "In which town was the founder of the Lanternwright Guild born?"


@pytest.fixture(autouse=True)
def home(app_home):
    return app_home


def session(**state) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=90)
    for k, v in state.items():
        at.session_state[k] = v
    at.run()
    assert not at.exception, at.exception
    return at


# ---------------------------------------------------------------------------------------------- 2. project paths

def test_project_paths_that_cannot_be_folders_are_refused_in_plain_words(monkeypatch):
    monkeypatch.delenv("TOG_PROJECT_ROOTS", raising=False)
    for bad, said in [("demo\x00x", "holds a NUL character"), ("/tmp/" + "a" * PATH_MAX, "characters long"),
                      ("~no_such_user_zz/proj", "is not a path this server can read")]:
        with pytest.raises(ProjectError, match=said) as err:
            resolve_project_path(bad, base=ROOT)
        assert "the GraphRAG project folder" in str(err.value) and " — " in str(err.value)  # the field, the fix
    assert resolve_project_path("demo", base=ROOT) == ROOT / "demo"  # unchanged for a real one
    assert resolve_project_path("~") == Path.home()  # one person's app: ~ is theirs


def test_a_shared_server_expands_no_tilde_and_its_words_do_not_tell_whether_an_account_exists(monkeypatch):
    env = {"TOG_PROJECT_ROOTS": str(ROOT / "demo")}
    monkeypatch.setenv("TOG_PROJECT_ROOTS", env["TOG_PROJECT_ROOTS"])
    said = set()
    for typed in ("~root/secret-project", "~no_such_user_zz/secret-project", "~", "~/x"):
        with pytest.raises(ProjectError) as err:
            resolve_project_path(typed, base=ROOT)
        said.add(str(err.value))
    assert said == {"the GraphRAG project folder starts with ~, which this shared server does not expand — type "
                    f"the full path of a project under {ROOT / 'demo'}"}
    for typed in ("~root/x", "~no_such_user_zz/x"):  # a resolved path is checked the same way, whatever it names
        with pytest.raises(ProjectError, match="is outside the folders this server opens projects from"):
            check_project_root(typed, environ=env)


@pytest.mark.parametrize("roots", [False, True])
def test_the_project_field_and_address_say_a_bad_path_in_plain_words_not_a_traceback(monkeypatch, roots):
    if roots:
        monkeypatch.setenv("TOG_PROJECT_ROOTS", str(ROOT / "demo"))
    for bad in ("demo\x00x", "~no_such_user_zz/proj", str(ROOT / "demo" / ("a" * 5000)), "~root/secret"):
        at = session(**{K.MODEL: "none"})
        at.sidebar.text_input(key=K.PROJECT_INPUT).set_value(bad).run()  # typed in the field
        assert not at.exception, (bad[:30], at.exception)
        [err] = [e.value for e in at.sidebar.error]
        assert err.startswith("Cannot open this project: ") and "Traceback" not in err, err
        assert any("312 entities" in c.value for c in at.sidebar.caption)  # still on the demo
        linked = AppTest.from_file(APP, default_timeout=90)  # the same through the address: ?project=…
        linked.query_params["project"] = bad
        linked.run()
        assert not linked.exception, (bad[:30], linked.exception)
        [err] = [e.value for e in linked.sidebar.error]
        assert err.startswith("Cannot open this project: "), err
        if roots and bad.startswith("~"):
            assert "starts with \\~" in err  # ~root and ~no_such_user alike
    if roots:
        msgs = set()
        for typed in ("~root/secret", "~no_such_user_zz/secret"):
            at = session(**{K.MODEL: "none", K.PROJECT_INPUT: typed})
            msgs.add(tuple(e.value for e in at.sidebar.error))
        assert len(msgs) == 1, msgs

