"""An uncaught exception in the app shows the browser Streamlit's generic message only: never the exception's type,
its message (a path, a host, a run id) or the server's traceback (.streamlit/config.toml, client.showErrorDetails;
the server's log keeps them)."""
from __future__ import annotations

import tomllib
from pathlib import Path

from streamlit import config as st_config
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]
SECRET = "/srv/tog/private/settings-7f3a.yaml"


def test_the_app_config_keeps_error_details_out_of_the_browser():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["client"]["showErrorDetails"] == "none"


def test_an_uncaught_exception_reaches_the_browser_without_its_message_type_or_traceback(tmp_path, monkeypatch):
    script = tmp_path / "boom.py"
    script.write_text(f"raise RuntimeError({SECRET!r})\n", encoding="utf-8")
    monkeypatch.chdir(ROOT)  # Streamlit reads .streamlit/config.toml from the working folder
    before = st_config.get_option("client.showErrorDetails")
    st_config.get_config_options(force_reparse=True)
    try:
        assert st_config.get_option("client.showErrorDetails") == "none"
        at = AppTest.from_file(str(script), default_timeout=30).run()
        [shown] = at.exception
        seen = f"{shown.message} {shown.value} {list(shown.stack_trace)} {shown.proto}"
        assert SECRET not in seen and "RuntimeError" not in seen and "boom.py" not in seen, seen
        assert list(shown.stack_trace) == [] and "redacted" in shown.message
    finally:
        st_config.set_option("client.showErrorDetails", before)


def test_started_from_another_folder_the_app_still_keeps_error_details_out(tmp_path, monkeypatch):
    """Streamlit reads .streamlit/config.toml from the working folder only: app.py sets the option itself, unless the
    operator chose one (STREAMLIT_CLIENT_SHOW_ERROR_DETAILS)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("STREAMLIT_CLIENT_SHOW_ERROR_DETAILS", raising=False)
    before = st_config.get_option("client.showErrorDetails")
    st_config.get_config_options(force_reparse=True)
    try:
        assert st_config.get_option("client.showErrorDetails") == "full"  # nothing read from this folder
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
        assert not at.exception
        assert st_config.get_option("client.showErrorDetails") == "none"
    finally:  # every option back as the repository's config.toml sets it (server.address: one person's app)
        monkeypatch.chdir(ROOT)
        st_config.get_config_options(force_reparse=True)
        st_config.set_option("client.showErrorDetails", before)
