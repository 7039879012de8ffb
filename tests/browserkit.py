"""Helpers for the tests in real headless Chromium (tests/test_browser*.py, test_hostile*.py, test_long_text.py):
where Chromium is and how it is started (`CHROMIUM`, `ARGS`, `_need_browser`, which skips without it unless
TOG_REQUIRE_BROWSER=1), the app served by `streamlit run` on a free loopback port (`serve_app`), a page waited on
until Streamlit is idle (`_idle`), a screenshot kept under TOG_SCREENSHOTS (`_shot`), a question asked with the
Ask button (`ask_in_page`), the page-run count once it settles (`_settled_runs`), and the pictures' label reader
(`LABELS`, `_overlapping`, `_fitted`, `_engine`); with the demo's questions (`CORIN`, `QUESTION`). The fixtures
`app_url`, `browser_page` and `timing` are conftest.py's."""
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
CORIN = "Who founded the company that manufactures the invention of Corin Vell?"
QUESTION = "In which town was the founder of the Lanternwright Guild born?"


def _need_browser() -> None:
    if not Path(CHROMIUM).exists():
        if os.environ.get("TOG_REQUIRE_BROWSER") == "1":
            pytest.fail(f"{CHROMIUM} is missing and TOG_REQUIRE_BROWSER=1")
        pytest.skip(f"{CHROMIUM} is not installed (apt-get install chromium); "
                    "set TOG_REQUIRE_BROWSER=1 to fail instead")
    pytest.importorskip("playwright.sync_api")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve_app(tmp_path: Path, **env_extra: str):
    """`streamlit run app.py -- --project demo` on a free loopback port with its own TOG_HOME (and `env_extra`);
    yields the address, stops the server after."""
    _need_browser()
    port = _free_port()
    env = {**os.environ, "TOG_HOME": str(tmp_path / "home"), **env_extra}
    env.pop("TOG_ALLOWED_API_BASES", None)
    if "GRAPHRAG_API_KEY" not in env_extra:
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


def _shot(page, tmp_path: Path, name: str) -> None:
    page.screenshot(path=str(tmp_path / name))
    shots = os.environ.get("TOG_SCREENSHOTS")
    if shots:
        Path(shots).mkdir(parents=True, exist_ok=True)
        (Path(shots) / name).write_bytes((tmp_path / name).read_bytes())


def _idle(page) -> None:
    page.wait_for_timeout(300)
    page.wait_for_function("() => !document.querySelector('[data-testid=stStatusWidget]')", timeout=60_000)


def ask_in_page(page, app_url: str, question: str, answer: str, *, timeout: int = 30_000) -> None:
    """Open the app, ask `question` with the Ask button and wait until the answer's heading `answer` shows."""
    page.goto(app_url, wait_until="domcontentloaded")
    box = page.get_by_role("textbox", name="Question")
    box.wait_for(timeout=60_000)
    box.fill(question)
    page.get_by_role("button", name="Ask", exact=True).click()
    page.get_by_role("heading", name=answer).wait_for(timeout=timeout)


def _settled_runs(timing, page) -> int:
    """The page-run count once it has stopped moving (unchanged for about a second, at most 15 s): a run still
    finishing from the step before is not counted against the next click."""
    last, same = _runs(timing), 0
    for _ in range(50):
        page.wait_for_timeout(300)
        now = _runs(timing)
        same = same + 1 if now == last else 0
        if same >= 3:
            break
        last = now
    return last


def _runs(path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


# every drawn node's label: on-screen font size (vis font size x view scale) and on-screen box; the canvas size
LABELS = """() => {
  const scale = network.getScale(), c = document.querySelector('#mynetwork canvas'), out = [];
  const pos = network.getPositions();
  for (const id of Object.keys(pos)) {
    const n = network.body.nodes[id];
    if (!n || !n.options.label || !String(n.options.label).trim()) { continue; }
    const s = n.labelModule.size, a = network.canvasToDOM({x: s.left, y: s.top}),
          b = network.canvasToDOM({x: s.left + s.width, y: s.top + s.height}), p = network.canvasToDOM(pos[id]);
    out.push({id: id, label: String(n.options.label), px: n.options.font.size * scale, box: [a.x, a.y, b.x, b.y],
              x: p.x, y: p.y});
  }
  const r = c.getBoundingClientRect();
  return {scale: scale, w: c.clientWidth, h: c.clientHeight, top: r.top, left: r.left, labels: out};
}"""


def _overlapping(labels: list[dict]) -> int:
    n = 0
    for i, a in enumerate(labels):
        for b in labels[i + 1:]:
            ax0, ay0, ax1, ay1 = a["box"]
            bx0, by0, bx1, by1 = b["box"]
            if min(ax1, bx1) - max(ax0, bx0) > 2 and min(ay1, by1) - max(ay0, by0) > 2:
                n += 1
    return n


def _fitted(chromium, page_html: str, width: int, height: int):
    page = chromium.new_page(viewport={"width": width, "height": height})
    outside = []
    page.on("request", lambda r: outside.append(r.url) if not r.url.startswith(("data:", "about:")) else None)
    page.set_content(page_html)
    page.wait_for_function("() => typeof network !== 'undefined' && network.getScale() > 0")
    page.wait_for_timeout(600)  # the fit after the first drawing and the frame's size settle
    assert not outside, outside
    return page


def _engine(project: Path, width: int, depth: int):
    from tog_core.compose import RunSpec, build_engine
    from tog_core.graphrag.graph import KnowledgeGraph
    from tog_core.graphrag.project import open_project

    info = open_project(project)
    graph = KnowledgeGraph.load(info)
    return build_engine(RunSpec(model="none", width=width, depth=depth), graph=graph, info=info).engine
