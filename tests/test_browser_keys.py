"""In real Chromium (issue #23, item 1): the app is started with a canary provider key in its environment (both
LiteLLM's usual OPENAI_API_KEY and the demo project's GRAPHRAG_API_KEY). A fresh session leaves the key field empty,
points "API base" at a loopback listener and asks. The listener must never see the canary, and the page says why no
key was sent. Needs /usr/bin/chromium (skipped without it unless TOG_REQUIRE_BROWSER=1).
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request

import pytest

from scripted import toy_llm
from test_browser import CORIN, ROOT, _free_port, _idle, _need_browser, _shot, browser_page  # noqa: F401
from tog_core.testing.server import FakeOpenAIServer

CANARY = "sk-CANARY-operator-key-77e1d0"
pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture()
def app_with_key(tmp_path):
    _need_browser()
    port = _free_port()
    env = {**os.environ, "TOG_HOME": str(tmp_path / "home"), "OPENAI_API_KEY": CANARY, "GRAPHRAG_API_KEY": CANARY}
    env.pop("TOG_ALLOWED_API_BASES", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port), "--server.headless", "true",
         "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false", "--", "--project", "demo"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 60
        while True:
            try:
                with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.time() > deadline:
                out = proc.stdout.read().decode(errors="replace") if proc.stdout else ""
                pytest.fail(f"streamlit did not start:\n{out[-3000:]}")
            time.sleep(0.3)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.mark.parametrize("model", ["", "openai/toy"])  # the project's model; a model typed in the session
def test_a_typed_api_base_never_receives_the_servers_key(model, app_with_key, browser_page, tmp_path):  # noqa: F811
    page = browser_page
    with FakeOpenAIServer(toy_llm) as listener:
        page.goto(app_with_key, wait_until="domcontentloaded")
        box = page.get_by_role("textbox", name="Question")
        box.wait_for(timeout=60_000)
        if model:
            field = page.get_by_role("textbox", name="Model (LiteLLM string, `local` or `none`)")
            field.fill(model)
            field.press("Enter")
            _idle(page)
        base = page.get_by_role("textbox", name="API base")
        base.fill(listener.base_url)
        base.press("Enter")
        _idle(page)
        page.get_by_text("no key sent to this API base").first.wait_for(timeout=30_000)
        box.fill(CORIN)
        page.get_by_role("button", name="Ask", exact=True).click()
        _idle(page)
        page.wait_for_function("() => document.body.innerText.includes('Reasoning chains')", timeout=120_000)
        _shot(page, tmp_path, f"key-withheld-{model or 'project'}.png")
        text = page.locator("body").inner_text()
        headers = listener.auth_headers
    assert headers, "the listener was never called: the test would prove nothing"
    assert all(CANARY not in (h or "") for h in headers), headers
    assert CANARY not in text
    assert "no key sent to this API base" in text
