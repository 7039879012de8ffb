"""#22 item 11: with a provider configured, the app imports LiteLLM in the background when it starts (the first
question does not wait ~5 s for the import); without one nothing is started."""
from __future__ import annotations

import os
import sys

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from streamlit.testing.v1 import AppTest

from appkit import APP
from tog_core.app.session import K


@pytest.fixture(autouse=True)
def home(app_home):
    return app_home


def _start(model: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=90)
    at.session_state[K.MODEL] = model
    at.run()
    assert not at.exception, at.exception
    return at


def test_litellm_is_warmed_in_the_background_only_with_a_provider():
    from explorer import ui

    ui._warm.clear()
    ui.WARMED.clear()
    _start("none")
    _start("")  # the default without a key: no LLM either
    assert ui.WARMED == []
    _start("openai/gpt-4.1-mini")  # a provider (its key is not needed to import the library)
    _start("openai/gpt-4.1-mini")  # a second session: the same thread, not another
    [thread] = ui.WARMED
    assert thread.name == ui.WARM_THREAD
    thread.join(timeout=120)
    assert not thread.is_alive() and "litellm" in sys.modules
