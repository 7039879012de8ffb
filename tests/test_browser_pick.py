"""In real Chromium (issue #22 item 2): on the demo, the candidates under the answer each have "This is the answer";
a click records the person's choice, the page says it apart from the search's answer, a reload (the run in the
address) shows it again, the click costs one run of the page, and the run's Markdown export on Saved runs says it
as a person's choice. Needs /usr/bin/chromium (skipped without it unless TOG_REQUIRE_BROWSER=1)."""
from __future__ import annotations

import pytest

from browserkit import _idle, _settled_runs, _shot, ask_in_page

pytestmark = [pytest.mark.browser, pytest.mark.slow]
IVO = "Which ship was captained by the mentor of Ivo Brask?"


def test_this_is_the_answer_is_recorded_kept_on_reload_and_exported(timing, app_url, browser_page,
                                                                     tmp_path):
    page = browser_page
    ask_in_page(page, app_url, IVO, "Lantern's Promise")
    _idle(page)
    buttons = page.get_by_role("button", name="This is the answer")
    assert buttons.count() == 3  # the three candidates shown under the answer
    card = page.locator(".st-key-pick_card_1").inner_text()  # the second candidate, as the page titles it
    second = card.split("2. ", 1)[1].split(" · ", 1)[0].strip()
    chose = f"You chose {second}; the search answered Lantern's Promise."
    assert second and second != "Lantern's Promise" and chose not in page.locator("body").inner_text()
    run = page.url.split("run=", 1)[1].split("&", 1)[0]
    before = _settled_runs(timing, page)
    buttons.nth(1).click()  # the second candidate
    page.get_by_text(chose).wait_for(timeout=20_000)
    _idle(page)
    assert _settled_runs(timing, page) - before == 1  # one run of the page for the click (the save is its callback)
    assert page.get_by_role("button", name="Your choice").is_disabled()
    assert page.get_by_role("heading", name="Lantern's Promise").is_visible()  # the search's answer stays the answer
    _shot(page, tmp_path, "pick-chosen.png")

    page.reload(wait_until="domcontentloaded")  # the run from the address, with the choice
    page.get_by_text(chose).wait_for(timeout=30_000)
    assert f"run={run}" in page.url
    _idle(page)

    page.get_by_role("link", name="Saved runs").click()
    pick = page.locator("[data-testid=stMain] [data-testid=stSelectbox] input").first  # "Run": typing filters
    pick.wait_for(timeout=30_000)
    pick.click()
    pick.fill("Ivo Brask")
    pick.press("Enter")
    _idle(page)
    page.get_by_text(chose).wait_for(timeout=30_000)
    _idle(page)
    with page.expect_download(timeout=30_000) as dl:
        page.get_by_role("button", name="Markdown report").click()
    text = open(dl.value.path(), encoding="utf-8").read()
    part = text.split("## A person's choice of answer", 1)[1]
    assert "Chosen by a person" in part and f"- chosen: **{second}**" in part
    assert "- the search's answer: Lantern's Promise" in part
    _shot(page, tmp_path, "pick-saved-runs.png")
