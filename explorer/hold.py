"""The page stays where the person is when they switch a tab.

The app's tabs (`st.tabs(..., on_change="rerun")`) draw only the open tab: a click empties the new tab's panel until
the rerun has drawn it, so for a moment the page is a picture's height shorter, and a page scrolled down to its
pictures was pulled up by as much (the browser keeps the scroll inside the page; measured on the demo's Ask page:
a click on "Search replay" moved it up 260 px). `hold_tabs` adds one small script to the page that holds a tab set's
height from the click (or the arrow key) until the new tab is drawn and has stopped growing, then lets it go.
The script reads no data and writes nothing but that height.
"""
from __future__ import annotations

import streamlit as st

# the tab set keeps its height (min-height) from the switch until its open panel holds this run's elements, the app is
# idle and the panel's height has not changed for HOLD_QUIET ms (at most HOLD_MAX ms in all)
_HOLD = """<script>
(function () {
  var doc = window.parent && window.parent !== window ? window.parent.document : document;
  var view = doc.defaultView || window;
  if (view.__togHoldTabs) { return; }
  view.__togHoldTabs = true;
  var QUIET = 400, MOST = 15000, STEP = 100;
  function drawn(set) {
    var panel = set.querySelector('[data-testid=stTabPanel]:not([data-st-inactive])');
    return panel && panel.querySelector('[data-testid=stElementContainer]') &&
      !set.querySelector('[data-stale=true]') && !doc.querySelector('[data-testid=stStatusWidget]');
  }
  function hold(set) {
    if (set.__togHeld) { set.__togHeld.since = Date.now(); return; }
    var h = set.getBoundingClientRect().height;
    if (!(h > 0)) { return; }
    set.style.minHeight = h + "px";
    var held = set.__togHeld = {since: Date.now(), last: -1, still: 0};
    var timer = view.setInterval(function () {
      var panel = set.querySelector('[data-testid=stTabPanel]:not([data-st-inactive])');
      var now = panel ? panel.getBoundingClientRect().height : 0;
      held.still = now === held.last ? held.still + STEP : 0;
      held.last = now;
      if (!set.isConnected || Date.now() - held.since > MOST || (drawn(set) && held.still >= QUIET)) {
        view.clearInterval(timer);
        set.style.minHeight = "";
        set.__togHeld = null;
      }
    }, STEP);
  }
  function tabOf(e) {
    var t = e.target && e.target.closest ? e.target.closest('[data-testid=stTab]') : null;
    return t ? t.closest('[data-testid=stTabs]') : null;
  }
  doc.addEventListener("pointerdown", function (e) { var s = tabOf(e); if (s) { hold(s); } }, true);
  doc.addEventListener("keydown", function (e) {
    var s = tabOf(e);
    if (s && /^(Arrow|Home|End|Enter| )/.test(e.key)) { hold(s); }
  }, true);
})();
</script>"""


def hold_tabs() -> None:
    """Add the script that holds a tab set's height while its new tab is drawn (once per page; harmless again)."""
    st.html(_HOLD, unsafe_allow_javascript=True, width="content")
