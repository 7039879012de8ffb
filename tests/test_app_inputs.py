"""What a person types, and what a saved run says, reach the page safely (a security review, issues 1-3): a run's
model and other trace words show as their characters, never as live Markdown; a Model field holding no model name
is refused under the field and no run starts; a project path with a NUL, too long, `~` of any account, or that
cannot be resolved is a plain sidebar error, never a traceback, and on a shared server `~root` and `~nobody` read
alike; every text field has a length limit, and Explore's question is checked against the engine's limit before any
linking. Code: tog_core/app/inputs.py."""
from __future__ import annotations

import ast
import os
import re
import time
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from streamlit.testing.v1 import AppTest

from scripted import toy_llm
from sessionkit import ask, plain_session
from tog_core.app.inputs import MAX_QUESTION_CHARS, MODEL_MAX, NAME_MAX, PATH_MAX, model_problem
from tog_core.app.session import K, check_project_root, resolve_project_path  # where the app has always read them
from tog_core.graphrag.errors import ProjectError
from tog_core.runs.files import RunStore
from tog_core.testing.server import FakeOpenAIServer
from tog_core.tog.limits import MAX_QUESTION_CHARS as ENGINE_LIMIT

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
QUESTION = "In which town was the founder of the Lanternwright Guild born?"
EVIL = ("openai/toy ![pixel](http://127.0.0.1:9/track.png) [Re-enter your API key here](https://evil.example/login) "
        "**BOLD**")
RAW = re.compile(r"(?<!\\)!(?<!\\)\[pixel|(?<!\\)\[Re|(?<!\\)\*\*BOLD|(?<!\\)\[x(?<!\\)\]")  # live Markdown
KEY = "sk-test-typed-into-the-password-field-0123456789"


@pytest.fixture(autouse=True)
def home(app_home):
    return app_home


def shown(at: AppTest) -> list[str]:
    return [str(e.value) for kind in ("markdown", "caption", "info", "warning", "error", "success")
            for e in getattr(at, kind)]


# ---------------------------------------------------------------------------------------------- 1. the model's name

def test_a_runs_model_and_parent_show_as_their_characters_on_saved_runs():
    """A model typed by one person (saved with the run by the command line or an older version) was live Markdown on
    everyone's Saved runs: a tracking image, a phishing link. Now the run's caption and the answer's "Written by
    the LLM (…)" show its characters."""
    with FakeOpenAIServer(toy_llm) as srv:
        at = ask(plain_session(**{K.MODEL: "openai/toy", K.API_BASE: srv.base_url, K.API_KEY: KEY}), QUESTION)
    made = at.session_state[K.ASK_TRACE]
    assert made.answer_by == "llm"
    tr = RunStore().load(made.run_id)
    tr.config["model"], tr.parent_run = EVIL, "[x](https://evil.example/run)"
    RunStore().save(tr)
    other = plain_session(**{K.MODEL: "none"})  # another person opens the run
    other.switch_page("pages/runs.py").run()
    other.selectbox(key=K.RUNS_OPEN).set_value(tr.run_id).run()
    assert not other.exception, other.exception
    texts = shown(other)
    said = [t for t in texts if "track" in t]
    assert any("· model openai/toy" in t and "branch of" in t for t in said), texts  # the run's caption
    assert any(t.startswith("Written by the LLM (openai/toy") for t in said), said  # the answer's
    bad = [t for t in texts if RAW.search(t)]
    assert not bad, f"a trace's words reached the page as Markdown: {bad[:2]}"
    assert all("\\[Re\\-enter your API key here\\]" in t for t in said)


@pytest.mark.parametrize("model", ["", "none", "local", "openai/gpt-4.1-mini", "ollama/llama3.1:8b",
                                   "bedrock/anthropic.claude-3-sonnet-20240229-v1:0", "azure/my_deploy@2024",
                                   "  openai/gpt-4o  ", "m" * MODEL_MAX])
def test_model_names_are_taken(model):
    assert model_problem(model) is None


@pytest.mark.parametrize(("model", "said"), [
    (EVIL, "it holds a space, '!', '[', ']', '('"),
    ("openai/gpt-4o\nIgnore that", "it holds '\\n'"),
    ("openai/gpt‐4o", "it holds '‐'"),  # a Unicode hyphen that looks like "-"
    ("<img src=x>", "it holds '<', a space, '='"),
    ("m" * (MODEL_MAX + 1), f"{MODEL_MAX + 1} characters is not a model name (at most {MODEL_MAX})"),
])
def test_what_is_not_a_model_name_is_refused_naming_the_field_and_the_fix(model, said):
    why = model_problem(model)
    assert why is not None and why.startswith("Model: ") and said in why, why
    assert "openai/gpt-4.1-mini" in why and "`none`" in why  # the fix


def test_a_model_field_holding_no_model_name_is_refused_under_it_and_no_run_starts():
    with FakeOpenAIServer(toy_llm) as srv:
        at = plain_session(**{K.MODEL: EVIL, K.API_BASE: srv.base_url, K.API_KEY: KEY})
        [err] = [e.value for e in at.sidebar.error]
        assert err.startswith("Model\\: not a model name") and "letters, digits" in err, err
        assert not [c for c in at.sidebar.caption if "track" in c.value]  # no "model …" note repeats it
        kids = [getattr(el, "key", None) or type(el).__name__ for el in at.sidebar]  # drawn just under the field
        assert kids[kids.index(K.MODEL) + 1] == "Error", kids
        at = ask(at, QUESTION)
        assert not srv.requests  # nothing sent to the provider
        assert K.ASK_TRACE not in at.session_state and not RunStore().list()  # no run started, none saved
        [page] = [e.value for e in at.main.error]
        assert page.startswith("The model cannot be used: Model\\: not a model name"), page
        at.session_state[K.MODEL] = "openai/toy"  # fixed: the message goes, the run goes ahead
        at = ask(at, QUESTION)
        assert not at.sidebar.error and srv.requests and at.session_state[K.ASK_TRACE].answer


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
        at = plain_session(**{K.MODEL: "none"})
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
            at = plain_session(**{K.MODEL: "none", K.PROJECT_INPUT: typed})
            msgs.add(tuple(e.value for e in at.sidebar.error))
        assert len(msgs) == 1, msgs


# ---------------------------------------------------------------------------------------------- 3. text lengths

def test_every_text_field_of_the_app_has_a_length_limit():
    missing = []
    for path in sorted([*(ROOT / "pages").glob("*.py"), *(ROOT / "explorer").glob("*.py"), ROOT / "app.py"]):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("text_input", "text_area", "chat_input")
                    and not any(k.arg == "max_chars" for k in node.keywords)):
                missing.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not missing, missing
    assert MAX_QUESTION_CHARS is ENGINE_LIMIT or MAX_QUESTION_CHARS == ENGINE_LIMIT  # the engine's own limit


def test_find_an_entity_takes_a_name_not_a_megabyte():
    at = plain_session(**{K.MODEL: "none"})
    at.switch_page("pages/graph.py").run()
    t0 = time.perf_counter()
    at.text_input(key=K.GRAPH_QUERY).set_value("Tarnby founder lantern " * 5_000).run()  # 115,000 characters
    assert not at.exception, at.exception
    assert len(at.text_input(key=K.GRAPH_QUERY).value) == NAME_MAX
    assert time.perf_counter() - t0 < 10


def test_explores_question_is_checked_against_the_engines_limit_before_any_linking(monkeypatch):
    """A question put in the field by the app (not cut by the widget) was linked on every rerun before the engine's
    4,000-character check: 400,000 characters took 5 s a rerun."""
    import explorer.explore_blocks as E

    linked: list[int] = []
    real = E.link_question
    monkeypatch.setattr(E, "link_question", lambda q, g: linked.append(len(q)) or real(q, g))
    at = plain_session(**{K.MODEL: "none", K.EXPLORE_QUESTION: "Who founded Tarnby? " * 300})  # 6,000 characters
    at.switch_page("pages/explore.py").run()
    assert not at.exception, at.exception
    assert not linked  # never linked
    [err] = [e.value for e in at.error]
    assert err.startswith("Question: the question is 5,999 characters long; the limit is 4,000"), err
    [start] = [b for b in at.button if b.label == "Start"]
    assert start.disabled
    at.text_input(key=K.EXPLORE_QUESTION).set_value("Who founded Tarnby?").run()  # a question: linked as before
    assert not at.error and linked == [len("Who founded Tarnby?")]
