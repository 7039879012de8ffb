"""In real Chromium (issue #22 items 3, 4 and 6), on the demo with no key:

* "Why not Saltmere?" on "Which ship was captained by the mentor of Ivo Brask?": the force button names Saltmere
  (not an internal step such as "answer at depth 2"), and the forced run answers Saltmere;
* "How many hops" agrees with the answer's chain (2 for the asked run and for the forced one) and its table reads the
  question's words as written ("mentor", never the stem "ment"); an answer part way along its chain is said so in
  test_app_traces (the demo's automatic runs now keep Gray Heron, the one-hop answer forced here before, in their
  final beam);
* an LLM answer (a loopback fake OpenAI server) naming nobody the chains reach is marked "Not supported by the
  chains" and is shown without the chains' confidence.

Needs /usr/bin/chromium (skipped without it unless TOG_REQUIRE_BROWSER=1). TOG_SCREENSHOTS=DIR keeps the pictures.
"""
from __future__ import annotations

import re

import pytest

from scripted import toy_llm
from browserkit import _idle, _shot, ask_in_page
from tog_core.testing.server import FakeOpenAIServer, last_user_message

pytestmark = [pytest.mark.browser, pytest.mark.slow]
IVO = "Which ship was captained by the mentor of Ivo Brask?"
HOPS = re.compile(r"How many hops: (\d+) \(tried 1 to 3\)")


def _main(page) -> str:
    return page.locator("[data-testid=stMain]").inner_text()


def _answer_chain(page) -> list[str]:
    """The numbered hops under the answer ("A → B: relation"), as the page shows them."""
    lists = page.locator("[data-testid=stMain] [data-testid=stMarkdownContainer] ol")
    return [li for li in lists.first.locator("li").all_inner_texts()]


def _hops_table(page) -> tuple[int, list[dict[str, str]]]:
    """The number in the "How many hops" expander's title, and its table's rows once it is opened (the grid draws
    its cells on a canvas; the text is read from the grid's own accessible copy of the table)."""
    exp = page.locator("[data-testid=stExpander]").filter(has_text=HOPS)
    title = exp.locator("summary").inner_text()
    exp.locator("summary").click()
    grid = exp.locator("[data-testid=stDataFrame] table[role=grid]")
    grid.wait_for(state="attached", timeout=10_000)
    page.wait_for_function("g => g.querySelectorAll('tbody tr').length + 1 == +g.getAttribute('aria-rowcount')",
                           arg=grid.element_handle(), timeout=10_000)
    heads = grid.locator("thead th").all_text_contents()
    rows = [dict(zip(heads, tr.locator("td").all_text_contents())) for tr in grid.locator("tbody tr").all()]
    return int(HOPS.search(title).group(1)), rows


def test_why_not_forces_the_named_entity_and_the_hops_agree_with_its_chain(app_url, browser_page,
                                                                          tmp_path):
    page = browser_page
    ask_in_page(page, app_url, IVO, "Lantern's Promise")
    _idle(page)

    # item 6: the kept number of hops is the answer chain's; the table says "captained, mentor", not stems
    chain = _answer_chain(page)
    assert len(chain) == 2 and "Lantern's Promise" in chain[-1], chain
    kept, rows = _hops_table(page)
    assert kept == len(chain) and [r["hops"] for r in rows if r["kept"] == "true"] == ["2"], (kept, chain, rows)
    assert [r["which"] for r in rows] == ["captained, ship", "captained, mentor, ship", "captained, mentor, ship"], rows
    _shot(page, tmp_path, "hops-asked.png")

    # item 3: "Why not Saltmere?" names it on the button and the forced run answers it
    why = page.get_by_role("textbox", name="Why not …? The answer you expected")
    why.fill("Saltmere")
    why.press("Enter")
    force = page.get_by_role("button", name=re.compile("^Force"))
    force.wait_for(timeout=30_000)
    assert force.inner_text().strip().endswith("Force “Saltmere” in from depth 2 and continue"), force.inner_text()
    assert "answer at depth" not in force.inner_text()  # the diagnosis names the step; the button the entity
    _shot(page, tmp_path, "why-not-saltmere.png")
    run = page.url.split("run=", 1)[1].split("&", 1)[0]
    force.click()
    page.get_by_role("heading", name="Saltmere", exact=True).wait_for(timeout=60_000)
    _idle(page)
    assert page.get_by_role("heading", name="Lantern's Promise").count() == 0  # the forced run's answer replaced it
    assert f"run={run}" not in page.url  # a new run, a branch of the asked one
    page.get_by_text("Saltmere: in the final beam").wait_for(timeout=10_000)

    # item 6 again: the forced run's answer is at the end of a two-hop chain: the count says 2
    chain = _answer_chain(page)
    assert len(chain) == 2 and "Saltmere" in chain[-1], chain
    kept, rows = _hops_table(page)
    assert kept == 2 and [r["hops"] for r in rows if r["kept"] == "true"] == ["2"], (kept, rows)
    assert "The search went 2 hops deep; the answer is" not in _main(page)
    _shot(page, tmp_path, "forced-saltmere.png")


def _contradicting_llm(request: dict) -> str:
    """toy_llm, except that its answer names someone the chains do not reach (as in the issue: Ivo Brask)."""
    if "Answer the question" in last_user_message(request):
        return "The Lanternwright Guild was founded by Ivo Brask in the year of the long night."
    return toy_llm(request)


def _set(page, label: str, value: str) -> None:
    field = page.get_by_role("textbox", name=label) if "Width" not in label and "Depth" not in label \
        else page.get_by_role("spinbutton", name=label)
    field.fill(value)
    field.press("Enter")
    _idle(page)


def test_an_llm_answer_naming_no_entity_of_the_chains_is_marked_without_a_confidence(app_url, browser_page,
                                                                                      tmp_path):
    page = browser_page
    with FakeOpenAIServer(_contradicting_llm) as llm:
        page.goto(app_url, wait_until="domcontentloaded")
        box = page.get_by_role("textbox", name="Question")
        box.wait_for(timeout=60_000)
        _set(page, "Model (LiteLLM string, `local` or `none`)", "openai/toy")
        _set(page, "API base", llm.base_url)
        _set(page, "Width N", "1")
        _set(page, "Depth D", "1")  # one chain, as in the issue: the Guild's founder, Mara Quell
        box.fill("Who founded the Lanternwright Guild?")
        page.get_by_role("button", name="Ask", exact=True).click()
        page.get_by_text("founded by Ivo Brask").first.wait_for(timeout=120_000)
        _idle(page)
        calls = len(llm.auth_headers)
    assert calls, "the fake LLM was never called: the test would prove nothing"
    text = _main(page)
    chain = _answer_chain(page)
    assert chain and "Mara Quell" in chain[-1] and not any("Ivo Brask" in c for c in chain), chain
    mark = page.get_by_text("Not supported by the chains")
    assert mark.count() == 1, text
    assert "names no entity of the chains below (they reach" in text and "so no confidence is given for it" in text
    assert "Mara Quell" in mark.inner_text()
    assert "Written by the LLM" not in text  # the "written from the chains · the chains' confidence" line is not shown
    assert not re.search(r"confidence \d", text), text  # no number presented as the sentence's confidence
    _shot(page, tmp_path, "llm-unsupported.png")
