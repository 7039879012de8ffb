"""In real Chromium (#22 items 1, 7, 8): a run is shown with its own project.

On the Christmas Carol GraphRAG output a question is asked with Ctrl+Enter (the placeholder says it asks); the run's
address, opened in a new page (a new session, as a shared link or F5 gives), shows the run with the Carol project
in the sidebar (named by its folder, christmas-carol-v3, with its entity count) and the Carol passages as evidence,
never the demo. Needs /usr/bin/chromium (skipped without it unless TOG_REQUIRE_BROWSER=1) and ../shared/data.
"""
from __future__ import annotations

import re

import pytest

from browserkit import ROOT, _idle, _settled_runs, _shot

CAROL = ROOT.parent / "shared" / "data" / "graphrag" / "christmas-carol-v3" / "output"
pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _sidebar(page) -> str:
    return page.locator("[data-testid=stSidebar]").inner_text()


def test_a_shared_run_opens_with_its_own_project(app_url, browser_page, tmp_path):
    if not CAROL.is_dir():
        pytest.skip(f"{CAROL} is absent (the shared data set is not on this machine)")
    page = browser_page
    page.goto(app_url, wait_until="domcontentloaded")
    page.get_by_role("textbox", name="Question").wait_for(timeout=60_000)
    assert "312 entities" in _sidebar(page)  # the demo
    field = page.get_by_role("textbox", name="GraphRAG project folder")
    field.fill(str(CAROL))
    field.press("Enter")
    page.get_by_text("529 entities").first.wait_for(timeout=60_000)
    assert "christmas-carol-v3" in _sidebar(page)  # named by the folder above output/, not "output"
    _idle(page)

    box = page.get_by_role("textbox", name="Question")
    assert "Ctrl+Enter" in (box.get_attribute("placeholder") or "")
    box.fill("Who is Tiny Tim's father?")
    box.press("Control+Enter")
    page.get_by_role("heading", name=re.compile("BOB CRATCHIT")).wait_for(timeout=30_000)
    _idle(page)
    assert "run=" in page.url
    _shot(page, tmp_path, "carol-asked.png")

    fresh = page.context.browser.new_page(viewport={"width": 1400, "height": 1800})  # a new session
    fresh.goto(page.url, wait_until="domcontentloaded")
    fresh.get_by_role("heading", name=re.compile("BOB CRATCHIT")).wait_for(timeout=60_000)
    _idle(fresh)
    side = _sidebar(fresh)
    assert "christmas-carol-v3" in side and "529 entities" in side, side
    assert "312 entities" not in side
    fresh.get_by_role("tab", name="Evidence").click()
    fresh.get_by_text(re.compile("Whole passage")).first.wait_for(timeout=10_000)
    assert "Cratchit" in fresh.locator("[data-testid=stMain]").inner_text()
    _shot(fresh, tmp_path, "carol-shared.png")


def test_each_continue_runs_the_page_once_and_the_address_keeps_the_run(timing, app_url, browser_page,
                                                                         tmp_path):
    page = browser_page
    page.goto(app_url, wait_until="domcontentloaded")  # app.py writes the timing (a deep link runs the page alone)
    page.get_by_role("textbox", name="Question").wait_for(timeout=60_000)
    page.get_by_role("link", name="Explore step by step").click()
    # the Explore page drawn (its Start button, disabled until a question is typed): before that the Ask page's own
    # "Question" box may still be on screen and take the text (a clean-clone run timed out on a disabled Start)
    page.get_by_role("button", name="Start").wait_for(timeout=60_000)
    box = page.get_by_role("textbox", name="Question")
    box.wait_for(timeout=60_000)
    box.fill("In which town was the founder of the Lanternwright Guild born?")
    box.press("Enter")
    _idle(page)
    page.get_by_role("button", name="Start").click()
    page.get_by_text("Depth 1 · relations").wait_for(timeout=60_000)
    _idle(page)
    assert "run=" in page.url
    for stage in ("Depth 1 · entities", "Depth 1 · evaluate"):
        before = _settled_runs(timing, page)
        page.get_by_role("button", name="Continue").click()
        page.get_by_text(stage).wait_for(timeout=60_000)
        _idle(page)
        after = _settled_runs(timing, page)
        assert after - before == 1, f"{stage}: {after - before} runs of the page for one click"
    page.reload(wait_until="domcontentloaded")  # F5 keeps the run, where it was
    page.get_by_text("Depth 1 · evaluate").wait_for(timeout=60_000)
    _shot(page, tmp_path, "explore-reloaded.png")
