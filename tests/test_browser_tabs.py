"""A tab switch keeps the page where the person is, in real headless Chromium on the demo project.

The result's tabs draw only the open tab: a click emptied the new tab's panel until the rerun drew it, the page was
a picture's height shorter for that moment, and a page scrolled down to its pictures was pulled up (a newcomer's
review; 260 px on the demo's Ask page). explorer/hold.py holds the tab set's height over the switch.

Needs /usr/bin/chromium (see test_browser.py).
"""
from __future__ import annotations

import pytest

from browserkit import CORIN, _idle, _shot, ask_in_page

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# where the tab bar is on screen, and how far the app's scrolling main area is scrolled
WHERE = """() => {
  const m = document.querySelector('[data-testid=stMain]'), t = document.querySelector('[data-testid=stTabs]');
  return {top: t.getBoundingClientRect().top, scrolled: m.scrollTop, most: m.scrollHeight - m.clientHeight};
}"""
# scrolled down as far as the page goes while the tab bar is still on screen, near its top
DOWN = """() => {
  const m = document.querySelector('[data-testid=stMain]'), t = document.querySelector('[data-testid=stTabs]');
  m.scrollTop = Math.min(m.scrollHeight - m.clientHeight, m.scrollTop + t.getBoundingClientRect().top - 40);
}"""

# the tab set let go by hold.py (its height no longer held) and the app idle: no fixed wait, a loaded machine is slow
LET_GO = """() => {
  const t = document.querySelector('[data-testid=stTabs]');
  return !!t && !t.__togHeld && t.style.minHeight === "" && !document.querySelector('[data-testid=stStatusWidget]');
}"""


def test_switching_the_result_tabs_scrolled_down_keeps_the_page_still(app_url, browser_page, tmp_path):
    page = browser_page
    page.set_viewport_size({"width": 1280, "height": 800})
    ask_in_page(page, app_url, CORIN, "Pell Ardent", timeout=60_000)
    _idle(page)
    page.locator("[data-testid=stMain] iframe").first.wait_for()
    page.wait_for_timeout(500)
    # each switch to a taller tab, scrolled down to the pictures: an emptied panel pulled the page up
    for name, shown in (("Search replay", "[data-testid=stMain] iframe"), ("Evidence", "text=was founded by")):
        page.evaluate(DOWN)
        page.wait_for_timeout(300)
        before = page.evaluate(WHERE)
        assert before["scrolled"] > 300 and 0 < before["top"] < 300, before  # scrolled down to the pictures
        box = page.get_by_role("tab", name=name).bounding_box()
        page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)  # as a person: no scroll first
        _idle(page)
        page.locator(shown).first.wait_for(timeout=60_000)
        page.wait_for_function(LET_GO, timeout=60_000)  # the panel drawn and let go (hold.py: quiet for 400 ms)
        after = page.evaluate(WHERE)
        _shot(page, tmp_path, f"tab-{name}.png")
        assert page.get_by_role("tab", name=name).get_attribute("aria-selected") == "true"
        assert abs(after["top"] - before["top"]) <= 2, (name, before, after)  # the tab bar stayed where it was
        assert after["most"] >= after["scrolled"]
