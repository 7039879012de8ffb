"""In real Chromium (issue #20 item 3, the app side): on the demo, "How the question was read" under the answer shows
the reading (the relation phrases in walking order, what is asked for); a number of hops past the maximum gets a
message in the page, not a traceback; 3 hops and "Search again with this reading" make a new run (a new address)
that ran 3 hops and says the reading was corrected, and a reload keeps it. Needs /usr/bin/chromium (skipped without
it unless TOG_REQUIRE_BROWSER=1)."""
from __future__ import annotations

import pytest

from browserkit import QUESTION, _idle, _shot, ask_in_page

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _open(page):
    """The section, opened."""
    head = page.get_by_text("How the question was read:")
    head.wait_for(timeout=30_000)
    head.click()
    page.get_by_label("Number of hops", exact=True).wait_for(timeout=10_000)
    return page.locator("[data-testid=stExpander]", has_text="How the question was read")


def test_the_reading_is_shown_corrected_and_searched_again(app_url, browser_page, tmp_path):
    page = browser_page
    ask_in_page(page, app_url, QUESTION, "Tarnby")
    _idle(page)
    first = page.url.split("run=", 1)[1].split("&", 1)[0]
    box = _open(page)
    seen = box.inner_text()
    assert "founder → born" in seen and "town (named in the question)" in seen and "by the rules" in seen

    hops = page.get_by_label("Number of hops", exact=True)
    hops.fill("9")
    hops.press("Tab")  # the number input keeps what was typed once it loses focus; a click alone raced it under load
    page.get_by_role("button", name="Search again with this reading").click()
    page.get_by_text("Number of hops: 9 is outside 1 to 3").wait_for(timeout=30_000)
    _idle(page)
    assert f"run={first}" in page.url and not page.locator("[data-testid=stException]").count()

    hops.fill("3")
    hops.press("Tab")
    page.get_by_role("button", name="Search again with this reading").click()
    page.wait_for_function(f"() => location.search.includes('run=') && !location.search.includes('{first}')",
                           timeout=60_000)
    page.get_by_text("How the question was read: 3 hops, by the rules, corrected").wait_for(timeout=60_000)
    _idle(page)
    second = page.url.split("run=", 1)[1].split("&", 1)[0]
    assert second != first and "then corrected by a person: the number of hops" in page.locator("body").inner_text()
    assert page.get_by_text("How many hops: 3").count()  # the new run searched 3 hops
    _shot(page, tmp_path, "reading-corrected.png")

    page.reload(wait_until="domcontentloaded")  # the corrected run from the address
    page.get_by_text("How the question was read: 3 hops, by the rules, corrected").wait_for(timeout=60_000)
    assert f"run={second}" in page.url and not page.locator("[data-testid=stException]").count()
