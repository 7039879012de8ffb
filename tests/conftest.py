"""Fixtures shared by the test files: the loopback fake OpenAI server, a temporary TOG_HOME, the demo project.

    def test_x(fake_openai):                     # a server per call, all closed after the test
        srv = fake_openai(script([("France", "Paris")]))
    def test_y(toy_server): ...                  # the toy LLM of scripted.py behind real HTTP
    def test_z(tog_home): ...                    # runs, caches and settings under tmp_path/home

`module_fake_openai` is the same factory for module-scoped fixtures (servers closed after the module).
`chromium` is a headless /usr/bin/chromium for test_browser_pictures.py and test_browser_label_sizes.py.
The browser tests' `app_url` (the app served by `streamlit run`), `browser_page` (a Chromium page that must
request nothing outside 127.0.0.1 and open no dialog) and `timing` (app.py's page-run log) are here too; their
helpers are tests/browserkit.py's. The other shared helpers are plain modules beside this file (appkit.py,
builders.py, searchkit.py, ...): test files import them, never each other.
"""
from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

# Tests import litellm directly in places; it must never fetch its cost map from the internet (the
# production code sets this itself, at first use, through tog_core.llm._litellm.load_litellm).
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
# the app's background e5 warm of each opened project (policy/prewarm.py) would outlive the app tests and run
# beside every later test: off here; tests/test_prewarm.py turns it on where it is the subject
os.environ.setdefault("TOG_WARM", "0")

# the shared helpers' asserts say what they compared, as they did inside the test files (before they are imported)
pytest.register_assert_rewrite("appkit", "benchkit", "browserkit", "llmkit", "runkit", "searchkit", "sessionkit",
                               "sourcekit", "vizkit")

from tog_core.testing.server import FakeOpenAIServer  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[1]
StartServer = Callable[..., FakeOpenAIServer]


def _server_factory() -> Iterator[StartServer]:
    started: list[FakeOpenAIServer] = []

    def start(handler=None, **kwargs) -> FakeOpenAIServer:
        server = FakeOpenAIServer(handler, **kwargs).start()
        started.append(server)
        return server

    try:
        yield start
    finally:
        for server in reversed(started):
            server.close()


@pytest.fixture()
def fake_openai() -> Iterator[StartServer]:
    """`fake_openai(handler, **FakeOpenAIServer options)` → a started server on 127.0.0.1; closed after the test."""
    yield from _server_factory()


@pytest.fixture(scope="module")
def module_fake_openai() -> Iterator[StartServer]:
    """The `fake_openai` factory for module-scoped fixtures: its servers are closed after the module."""
    yield from _server_factory()


@pytest.fixture()
def toy_server(fake_openai: StartServer) -> FakeOpenAIServer:
    """The toy LLM of tests/scripted.py (word-overlap scores, a chain-covering verdict) behind real HTTP."""
    from scripted import toy_llm

    return fake_openai(toy_llm)


@pytest.fixture()
def tog_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh TOG_HOME (tmp_path/home, not created) for runs, caches and settings."""
    home = tmp_path / "home"
    monkeypatch.setenv("TOG_HOME", str(home))
    return home


@pytest.fixture()
def app_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An app test's world: a fresh TOG_HOME (tmp_path/home), the working folder at the repository root (the app
    opens `demo`), and no operator setting or provider key inherited from the machine."""
    for name in ("GRAPHRAG_API_KEY", "TOG_PROJECT_ROOTS", "TOG_STORE", "TOG_ALLOWED_API_BASES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TOG_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(Path(__file__).resolve().parents[1])
    return tmp_path / "home"


@pytest.fixture()
def chromium():
    """A headless Chromium (Playwright on /usr/bin/chromium), closed after the test; skipped without it unless
    TOG_REQUIRE_BROWSER=1 (browserkit._need_browser)."""
    from browserkit import ARGS, CHROMIUM, _need_browser

    _need_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture()
def app_url(tmp_path):
    """The address of the app served by `streamlit run` on the demo (browserkit.serve_app), stopped after the
    test; skipped without Chromium unless TOG_REQUIRE_BROWSER=1."""
    from browserkit import serve_app

    yield from serve_app(tmp_path)


@pytest.fixture()
def browser_page(tmp_path):
    """A page of headless Chromium, 1400 x 1800; the test fails if the page requested anything outside 127.0.0.1
    or opened a dialog."""
    from playwright.sync_api import sync_playwright

    from browserkit import ARGS, CHROMIUM, _local

    requests, dialogs = [], []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1800})
        page.on("request", lambda r: requests.append(r.url))
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        try:
            yield page
        finally:
            browser.close()
    outside = [u for u in requests if not _local(u)]
    assert not outside, f"requests left 127.0.0.1: {outside[:5]}"
    assert not dialogs, f"dialogs opened: {dialogs}"


@pytest.fixture()
def timing(tmp_path, monkeypatch):
    """A file where app.py writes one line per run of the page (TOG_TIMING); set before the app starts."""
    path = tmp_path / "runs.txt"
    monkeypatch.setenv("TOG_TIMING", str(path))
    return path


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def demo_project() -> Path:
    """The packaged demo project (a GraphRAG 3.x output folder, 312 entities)."""
    return REPO_ROOT / "demo"


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    """A throwaway PostgreSQL cluster on a free loopback port for the whole session (tests/pg.py); skipped with the
    reason when PostgreSQL is not installed, failed instead when TOG_REQUIRE_POSTGRES is set."""
    from pg import find_bin, start_cluster

    if find_bin() is None:
        if os.environ.get("TOG_REQUIRE_POSTGRES"):
            pytest.fail("TOG_REQUIRE_POSTGRES is set but PostgreSQL is not installed (`make postgres` installs it)")
        pytest.skip("PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb); `make postgres` installs it")
    cluster = start_cluster()
    yield cluster.url
    cluster.stop()


@pytest.fixture(scope="session")
def demo_mem():
    """The demo project in memory, beside `demo_pg` (tests/test_postgres*.py compare the two)."""
    from tog_core.graphrag.graph import KnowledgeGraph

    return KnowledgeGraph.load(REPO_ROOT / "demo")


@pytest.fixture(scope="session")
def demo_pg(pg_url):
    """The demo project imported into the throwaway PostgreSQL cluster, as a graph store."""
    from tog_core.graphrag.pg_import import import_graph
    from tog_core.graphrag.postgres import PgGraphStore

    import_graph(pg_url, REPO_ROOT / "demo", name="demo")
    with PgGraphStore(pg_url, "demo") as store:
        yield store
