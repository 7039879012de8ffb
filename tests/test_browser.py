"""End to end in real headless Chromium: the app served by `streamlit run`, a demo question asked by
typing and clicking, the answer and the pyvis pictures drawn, nothing fetched from outside 127.0.0.1.

Needs /usr/bin/chromium (Debian's; never `playwright install`). Skipped when it is absent unless
TOG_REQUIRE_BROWSER=1.
"""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlparse

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]
QUESTION = "In which town was the founder of the Lanternwright Guild born?"

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _need_browser() -> None:
    if not Path(CHROMIUM).exists():
        if os.environ.get("TOG_REQUIRE_BROWSER") == "1":
            pytest.fail(f"{CHROMIUM} is missing and TOG_REQUIRE_BROWSER=1")
        pytest.skip(f"{CHROMIUM} is not installed (apt-get install chromium); set TOG_REQUIRE_BROWSER=1 to fail instead")
    pytest.importorskip("playwright.sync_api")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture()
def app_url(tmp_path):
    _need_browser()
    port = _free_port()
    env = {**os.environ, "TOG_HOME": str(tmp_path / "home")}
    env.pop("GRAPHRAG_API_KEY", None)
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


def _local(url: str) -> bool:
    p = urlparse(url)
    if p.scheme in ("data", "blob", "about"):
        return True
    return p.hostname in ("127.0.0.1", "localhost")


def test_ask_a_demo_question_in_chromium(app_url, tmp_path):
    from playwright.sync_api import sync_playwright

    requests, dialogs = [], []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 2000})
            page.on("request", lambda r: requests.append(r.url))
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            page.goto(app_url, wait_until="domcontentloaded")
            model = page.get_by_role("textbox", name="Model (LiteLLM string")
            model.wait_for(timeout=30_000)
            model.fill("none")
            model.press("Enter")
            page.get_by_text("no LLM: BM25/embedding scores").wait_for(timeout=10_000)
            box = page.get_by_role("textbox", name="Question")
            box.wait_for(timeout=30_000)
            box.fill(QUESTION)
            box.press("Control+Enter")
            page.get_by_role("button", name="Ask", exact=True).click()
            page.get_by_text("Most likely answer: Tarnby").wait_for(timeout=60_000)
            # the chains picture: a vis canvas inside the first picture iframe, with the chain entities
            frame_el = page.locator("iframe").first
            frame_el.wait_for(timeout=30_000)
            frame = frame_el.content_frame
            frame.locator("canvas").first.wait_for(timeout=30_000)
            size = frame.locator("canvas").first.evaluate("c => [c.width, c.height]")
            assert size[0] > 100 and size[1] > 100
            page.wait_for_timeout(1500)  # let physics settle for the screenshot
            page.screenshot(path=str(tmp_path / "ask.png"), full_page=True)
            page.get_by_role("tab", name="Evidence").click()
            page.get_by_text("Mara Quell was born in the town of Tarnby").first.wait_for(timeout=10_000)
            page.screenshot(path=str(tmp_path / "evidence.png"), full_page=True)
        finally:
            browser.close()
    outside = [u for u in requests if not _local(u)]
    assert not outside, f"requests left 127.0.0.1: {outside[:5]}"
    assert not dialogs, f"dialogs opened: {dialogs}"
    assert (tmp_path / "ask.png").stat().st_size > 10_000
    shots = os.environ.get("TOG_SCREENSHOTS")
    if shots:  # keep the pictures for a person to look at
        Path(shots).mkdir(parents=True, exist_ok=True)
        for name in ("ask.png", "evidence.png"):
            (Path(shots) / name).write_bytes((tmp_path / name).read_bytes())


def test_ask_with_the_default_local_model_in_chromium(app_url, tmp_path):
    """No key, no --model: the app picks the packaged local model (issue: runs with no key and no internet)."""
    from playwright.sync_api import sync_playwright

    requests = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1800})
            page.on("request", lambda r: requests.append(r.url))
            page.goto(app_url, wait_until="domcontentloaded")
            page.get_by_text("local demo model").first.wait_for(timeout=60_000)  # the sidebar says so
            box = page.get_by_role("textbox", name="Question")
            box.wait_for(timeout=30_000)
            box.fill(QUESTION)
            box.press("Control+Enter")
            page.get_by_role("button", name="Ask", exact=True).click()
            page.get_by_text("answered by the LLM").wait_for(timeout=300_000)
            frame = page.locator("iframe").first.content_frame
            frame.locator("canvas").first.wait_for(timeout=30_000)
            page.screenshot(path=str(tmp_path / "ask-local.png"), full_page=True)
        finally:
            browser.close()
    assert not [u for u in requests if not _local(u)]
    import json

    [saved] = (tmp_path / "home" / "runs").glob("*.json")  # the app's run store (TOG_HOME of the app)
    trace = json.loads(saved.read_text())
    assert "smollm2" in trace["config"]["model"] and trace["answer_by"] == "llm" and trace["stats"]["llm_calls"] > 0
