"""ToG Explorer: `streamlit run app.py -- --project demo`. Navigation and the sidebar (project, model, search).

The frame (sidebar) is shell.py; the pages are pages/*.py. With TOG_TIMING=FILE set, every
script run appends "<page> <seconds>" to FILE (bench/explore_click.py reads it).
"""
from __future__ import annotations

import os
import time

import streamlit as st

from explorer import shell
from tog_core.app.views import md_text
from tog_core.errors import UsageError

_t0 = time.perf_counter()
if not os.environ.get("STREAMLIT_CLIENT_SHOW_ERROR_DETAILS"):  # an operator's explicit choice stands
    # as .streamlit/config.toml says, also when the app is started from another folder (Streamlit reads that file
    # from the working folder only): no exception's type, message or traceback reaches the browser
    st.set_option("client.showErrorDetails", "none")
shell.draw()
pages = [st.Page("pages/ask.py", title="Ask", default=True),
         st.Page("pages/explore.py", title="Explore step by step"),
         st.Page("pages/graph.py", title="Graph browser"),
         st.Page("pages/runs.py", title="Saved runs")]
page = st.navigation(pages)
try:
    with shell.drawn():
        page.run()
except UsageError as err:  # a store that went down while the page read the graph: said, never a traceback
    st.error(f"Cannot read the graph now: {md_text(str(err))}")
finally:
    if os.environ.get("TOG_TIMING"):
        with open(os.environ["TOG_TIMING"], "a", encoding="utf-8") as _f:
            _f.write(f"{page.url_path or 'ask'} {time.perf_counter() - _t0:.4f}\n")
