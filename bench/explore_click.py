"""Server time of a click in Explore, without an LLM, measured in the real app driven by headless Chromium.

    python bench/explore_click.py [--project demo] [--question "..."] [--clicks 6] [--pruner auto] [--json]

Starts `streamlit run app.py` on 127.0.0.1 with TOG_TIMING set (app.py then appends each script run's server
time to a file), opens Explore, starts the question, and clicks "Continue" --clicks times, then clicks a
candidate in the search picture, switches to the chains tab and back. For each click: "server s" is the sum of
the script runs that click caused (a button that calls st.rerun causes two), "wall s" the time until the page
is idle again in the browser (server + transfer + drawing). Model: none (no LLM); pruner: --pruner (auto =
the packaged embedder on a typed graph, BM25 on GraphRAG's free-text relations, as in the app). Needs
/usr/bin/chromium and playwright.
"""
from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
QUESTION = "Who founded the company that manufactures the invention of Corin Vell?"


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _lines(path: Path) -> list[float]:
    if not path.exists():
        return []
    return [float(line.split()[-1]) for line in path.read_text().splitlines() if line.strip()]


def _idle(page, settle_ms: int = 300) -> None:
    page.wait_for_timeout(settle_ms)
    page.wait_for_function("() => !document.querySelector('[data-testid=stStatusWidget]')", timeout=120_000)
    page.wait_for_timeout(settle_ms)
    page.wait_for_function("() => !document.querySelector('[data-testid=stStatusWidget]')", timeout=120_000)


def measure(project: str, question: str, clicks: int, pruner: str) -> list[dict]:
    from playwright.sync_api import sync_playwright

    timing = Path(tempfile.mkdtemp()) / "runs.txt"
    port = _port()
    env = {**os.environ, "TOG_TIMING": str(timing), "TOG_HOME": tempfile.mkdtemp()}
    env.pop("GRAPHRAG_API_KEY", None)
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
                             "--server.headless", "true", "--", "--project", project], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    rows = []
    try:
        for _ in range(200):
            try:
                urllib.request.urlopen(url + "/_stcore/health", timeout=2)
                break
            except OSError:
                time.sleep(0.3)
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1400, "height": 1600})
            page.goto(url)
            page.get_by_role("textbox", name="Question").wait_for(timeout=60_000)
            model = page.get_by_role("textbox", name="Model (LiteLLM string")
            model.fill("none")
            model.press("Enter")
            _idle(page)
            if pruner != "auto":
                for label in ("Relation pruner", "Entity pruner"):
                    page.get_by_label(label).click()
                    page.get_by_role("option", name=pruner, exact=True).click()
                    _idle(page)
            page.get_by_role("link", name="Explore step by step").click()
            box = page.get_by_role("textbox", name="Question")
            box.wait_for(timeout=30_000)
            box.fill(question)
            box.press("Enter")
            _idle(page)

            def heading() -> str:
                return page.locator("[data-testid=stMain] h3").first.inner_text(timeout=60_000).strip()

            def click(name: str, action, changes_heading: bool = False) -> None:
                before, head = len(_lines(timing)), heading() if changes_heading else ""
                t0 = time.perf_counter()
                action()
                if changes_heading:  # wait for the next stage to be on screen, not just for a quiet moment
                    page.wait_for_function("h => { const e = document.querySelector('[data-testid=stMain] h3');"
                                           " return e && e.innerText.trim() !== h; }", arg=head, timeout=120_000)
                _idle(page)
                runs = _lines(timing)[before:]
                rows.append({"click": name, "server s": round(sum(runs), 3), "runs": len(runs),
                             "wall s": round(time.perf_counter() - t0, 3)})

            click("Start (first proposal)", lambda: page.get_by_role("button", name="Start").click())
            page.get_by_text("Depth 1 · relations").wait_for(timeout=120_000)
            _idle(page)
            for _ in range(clicks):
                now = heading()
                if "Answer" in now:
                    break
                click(f"Continue ({now})", lambda: page.get_by_role("button", name="Continue").click(), True)
            outer = page.frame_locator("iframe[title='explorer.ui.tog_picture']")
            inner = outer.frame_locator("iframe")

            def pick_node() -> None:  # click the first proposed candidate in the picture, as a person would
                inner.locator("canvas").first.wait_for(timeout=30_000)
                frame = page.frames[-1]
                for f in page.frames:
                    if f.url.startswith("about:srcdoc"):
                        frame = f
                xy = frame.evaluate("""() => { const ids = nodes.getIds().filter(i => nodes.get(i).ref);
                    if (!ids.length) return null; const p = network.getPositions([ids[0]])[ids[0]];
                    return network.canvasToDOM(p); }""")
                if xy:
                    inner.locator("canvas").first.click(position={"x": xy["x"], "y": xy["y"]})

            click("picture: keep/drop a candidate", pick_node)
            click("tab: reasoning chains", lambda: page.get_by_role("tab", name="Reasoning chains").click())
            click("tab: search (cached)", lambda: page.get_by_role("tab", name="Search").click())
            browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--project", default="demo")
    ap.add_argument("--question", default=QUESTION)
    ap.add_argument("--clicks", type=int, default=6)
    ap.add_argument("--pruner", default="auto", choices=["auto", "bm25", "embedding", "random"])
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    rows = measure(a.project, a.question, a.clicks, a.pruner)
    if a.json:
        print(json.dumps(rows, indent=1))
        return 0
    print(f"{'click':<44} {'server s':>9} {'runs':>5} {'wall s':>8}")
    for r in rows:
        print(f"{r['click'][:44]:<44} {r['server s']:>9.3f} {r['runs']:>5} {r['wall s']:>8.3f}")
    after = [r["server s"] for r in rows if not r["click"].startswith("Start")]
    print(f"\nclicks after Start: median {statistics.median(after):.3f} s, max {max(after):.3f} s server time "
          f"(target ≤ 0.5 s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
