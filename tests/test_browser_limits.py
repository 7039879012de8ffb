"""Browser: a width typed outside its range is said, not refused silently (a newcomer typed 0 and the field kept the
last number without a word). Chromium (TOG_REQUIRE_BROWSER=1), as tests/test_browser.py."""
from __future__ import annotations

from browserkit import _idle


def test_width_zero_typed_in_the_sidebar_is_set_to_one_and_said(app_url, browser_page):
    page = browser_page
    page.goto(app_url, wait_until="domcontentloaded")
    field = page.get_by_role("spinbutton", name="Width N")
    field.wait_for(timeout=60_000)
    field.fill("0")
    field.press("Enter")
    _idle(page)
    page.get_by_text("Width 0 is not taken (it goes from 1 to 10): set to 1.").wait_for(timeout=30_000)
    assert field.input_value() == "1"
