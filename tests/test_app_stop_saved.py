"""Stop on the Ask page while the search is still busy (a newcomer's review): Streamlit starts the page's next run at
once (fast reruns) while the stopped run is still ending in its own thread, which saves the run once more when it
ends. What the page shows at Stop must be what is saved: stop reason "stopped by you", the answer from what was
found, the run's real time (not the time of the save made when the topic entities were linked), the same after a
reload, and the run listed in Saved runs, with no second run made of the late save.
"""
from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from runkit import Interrupted, busy_until, demo_engine, stopped_at_depth_2
from tog_core.app import runner as R
from tog_core.app.session import K
from tog_core.app.views import run_rows
from tog_core.runs.files import RunStore

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
CORIN = "Who founded the company that manufactures the invention of Corin Vell?"
RID = "20260101-000000-stop01"
BUSY_S = 2.0  # how long the stopped run goes on after the press (the hop trial blocking the event loop)


@pytest.fixture(autouse=True)
def home(app_home):
    return app_home


def texts(at: AppTest) -> str:
    return "\n".join(e.value for kind in ("markdown", "caption", "text", "info", "warning", "error", "success")
                     for e in getattr(at, kind)).replace("\\", "")


def test_stop_during_the_hop_trial_is_saved_as_shown_with_its_real_time_and_listed(monkeypatch):
    at = AppTest.from_file(APP, default_timeout=90)
    at.run()  # the session and its project open before the run starts, as on a page where Ask was pressed
    assert not at.exception, at.exception
    at.session_state[K.MODEL] = "none"
    linked, pressed = threading.Event(), threading.Event()

    tick = busy_until(monkeypatch, linked, pressed, BUSY_S)

    raised: list[BaseException] = []

    def stopped_run() -> None:  # the page run that was interrupted, in its own thread
        try:
            R.run_question(demo_engine(), CORIN, R.RunCallbacks(on_tick=tick), store=RunStore(), run_id=RID,
                           model_info={"model": "none", "model_kind": "none"})
        except BaseException as err:  # noqa: BLE001 - checked below
            raised.append(err)

    t0 = time.perf_counter()
    th = threading.Thread(target=stopped_run)
    th.start()
    assert linked.wait(60)
    at.session_state[K.ASK_RUN] = RID
    at.session_state[K.ASK_STOPPED] = True  # what the Stop button's callback sets, in the page's next run
    pressed.set()
    at.run()  # started at once, while the stopped run is still busy
    th.join(60)
    took = time.perf_counter() - t0
    assert not at.exception, at.exception
    assert [type(e) for e in raised] == [Interrupted]

    shown = at.session_state[K.ASK_TRACE]
    saved = RunStore().load(RID)
    # one run, saved as shown: stopped by you, answered from what was found, its time the run's own
    assert [r.run_id for r in RunStore().list()] == [RID]
    assert (saved.stop_reason, shown.stop_reason) == ("user", "user")
    assert saved.answer and saved.answer == shown.answer
    wall = saved.stats["wall_s"]
    assert shown.stats["wall_s"] == wall and BUSY_S <= wall <= took + 1
    assert f"{wall:.1f} s" in texts(at) and "stopped by you" in texts(at)
    # Saved runs lists it, with its stop reason
    [row] = run_rows(RunStore().list(), project=str(ROOT / "demo"))
    assert row["run"] == RID and row["stop"] == "stopped by you"
    at.switch_page("pages/runs.py").run()
    assert not at.exception, at.exception
    assert CORIN in list(at.dataframe[0].value["question"])

    # a reload (a new session, the run in the address) shows the same run: not "unfinished", the same time
    again = AppTest.from_file(APP, default_timeout=90)
    again.query_params["run"] = RID
    again.run()
    assert not again.exception, again.exception
    assert again.session_state[K.ASK_TRACE].to_dict() == saved.to_dict()
    words = texts(again)
    assert "stopped before its answer" not in words and "stopped: stopped by you" in words
    assert f"{wall:.1f} s" in words


def _stopped_page() -> AppTest:
    """The Ask page run as it is after Stop was pressed on run RID (no model): it answers from what the run found."""
    at = AppTest.from_file(APP, default_timeout=90)
    at.run()
    at.session_state[K.MODEL] = "none"
    at.session_state[K.ASK_RUN] = RID
    at.session_state[K.ASK_STOPPED] = True
    at.run()
    assert not at.exception, at.exception
    return at


def test_stop_over_a_run_someone_else_saved_meanwhile_shows_the_new_run_it_was_saved_as(monkeypatch):
    """Another session resumed the run to its answer while this one was stopping: Stop's answer is saved as a new run,
    a branch of it, and the page says so (it said nothing: the note went nowhere)."""
    from explorer import ui

    stopped_at_depth_2(demo_engine(), RunStore(), RID, CORIN, model_info={"model": "none", "model_kind": "none"})
    real = ui.engine_or_stop

    def meanwhile(*args, **kwargs):  # after the page read the stopped run, before it answers it
        R.resume_question(demo_engine(), RunStore().load(RID), RunStore())
        return real(*args, **kwargs)

    monkeypatch.setattr(ui, "engine_or_stop", meanwhile)
    at = _stopped_page()
    shown = at.session_state[K.ASK_TRACE]
    assert shown.run_id != RID and shown.parent_run == RID and shown.stop_reason == "user"
    assert f"Someone else saved this run ({RID}) meanwhile" in texts(at) and shown.run_id in texts(at)
    assert RunStore().load(RID).stop_reason != "user"  # theirs, as they saved it


def test_stop_whose_answer_cannot_be_saved_says_so_with_a_warning_only_while_that_answer_is_shown(monkeypatch):
    """Stop's answer the store cannot keep: the page says it is not saved (a warning, not the branch's icon), and says
    it no more once the run shown is that run as saved since (another revision), e.g. resumed later in the session."""
    from explorer import ui

    stopped_at_depth_2(demo_engine(), RunStore(), RID, CORIN, model_info={"model": "none", "model_kind": "none"})
    real, save = ui.engine_or_stop, RunStore.save

    def full(self, trace):
        raise OSError(28, "No space left on device", str(self.root))

    def then_the_disk_fills(*args, **kwargs):  # after the page read the stopped run, before it answers it
        monkeypatch.setattr(RunStore, "save", full)
        return real(*args, **kwargs)

    monkeypatch.setattr(ui, "engine_or_stop", then_the_disk_fills)
    at = _stopped_page()
    shown = at.session_state[K.ASK_TRACE]
    assert shown.run_id == RID and shown.stop_reason == "user"
    [note] = [e for e in at.info if "could not be saved" in e.value]
    assert note.icon == ":material/warning:"
    monkeypatch.setattr(RunStore, "save", save)
    monkeypatch.setattr(ui, "engine_or_stop", real)
    later = RunStore().load(RID)  # the run as the store holds it, saved again since (a resume, say)
    RunStore().save(later)
    at.session_state[K.ASK_TRACE] = RunStore().load(RID)
    at.run()
    assert not at.exception, at.exception
    assert not [e for e in at.info if "could not be saved" in e.value]
