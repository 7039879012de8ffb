"""The file run store's list: damaged run files named and set aside (never the whole list lost), and runs listed
from the index (runs/.index) without parsing their traces; old runs without an index entry summarised once."""
from __future__ import annotations

import errno
import json
from dataclasses import replace

import pytest
from builders import make_graph
from runkit import DAMAGED, write_damaged

from tog_core.app.progress import Saver
from tog_core.app.runner import RunCallbacks, run_question
from tog_core.policy.cheap import CheapPolicy
from tog_core.runs import index as index_mod
from tog_core.runs.fallback import FallbackRunStore, Outage
from tog_core.runs.files import RunStore
from tog_core.runs.index import INDEX_DIR, summarize
from tog_core.graphrag.pg_common import StoreError
from tog_core.tog.engine import ToGEngine
from tog_core.tog.state import EngineConfig

Q = "Where was the founder of Acme born?"


def engine() -> ToGEngine:
    cfg = EngineConfig(width=2, depth=3, relation_pruner="bm25", entity_pruner="bm25")
    return ToGEngine(make_graph(), config=cfg, policy=CheapPolicy())


def good_run(store: RunStore, run_id: str = "20260101-000000-good01"):
    return run_question(engine(), Q, seeds=["Acme"], store=store, run_id=run_id)


def test_each_damaged_file_is_named_with_why_and_the_good_run_still_listed(tmp_path):
    store = RunStore(tmp_path / "runs")
    tr = good_run(store)
    write_damaged(store.root, tr.to_dict())
    for _ in range(2):  # first from the files, then from the index (the reasons are remembered there too)
        listed, bad = store.scan()
        assert [r.run_id for r in listed] == [tr.run_id]
        assert len(bad) == len(DAMAGED)
        for name, (_, why) in DAMAGED.items():
            [line] = [b for b in bad if b.startswith(f"2026-{name}.json: ")]
            assert why in line, line
    assert store.list() == listed and store.problems() == bad
    assert store.load(tr.run_id).answer == tr.answer  # the good run opens
    for name in ("bad-utf8", "deep"):  # one that cannot be parsed says why in one line, never a traceback
        with pytest.raises(ValueError, match="not a readable trace"):
            store.load(f"2026-{name}")
    store.delete(tr.run_id)
    assert store.list() == [] and not (store.root / INDEX_DIR / f"{tr.run_id}.json").exists()


def test_listing_reads_the_index_not_the_traces(tmp_path, monkeypatch):
    store = RunStore(tmp_path / "runs")
    tr = good_run(store)
    assert (store.root / INDEX_DIR / f"{tr.run_id}.json").exists()  # written when the run was saved
    want = summarize(tr.to_dict(), store.path(tr.run_id), stamp=store.list()[0].stamp)

    def no_parsing(*_a, **_k):
        raise AssertionError("a trace was read to list the runs")

    monkeypatch.setattr(index_mod, "summarize_file", no_parsing)
    assert store.list() == [want]


def test_an_old_run_is_summarised_from_its_top_level_fields_only(tmp_path, monkeypatch):
    store = RunStore(tmp_path / "runs")
    tr = good_run(store)
    p = store.path(tr.run_id)
    big = tr.to_dict()
    for s in big["steps"]:  # steps full of candidates, as a hub makes them
        s["candidates"] = [dict(s["candidates"][0], id=f"c{i}", reason="x" * 200) for i in range(300)] \
            if s["candidates"] else []
    p.write_text(json.dumps(big, ensure_ascii=False, indent=1), encoding="utf-8")
    (store.root / INDEX_DIR / p.name).unlink()  # as a run saved before the index existed
    seen = []
    real = index_mod.json.loads
    monkeypatch.setattr(index_mod.json, "loads", lambda s, *a, **k: (seen.append(len(s)), real(s, *a, **k))[1])
    [r] = store.list()
    assert r == replace(summarize(big, p, stamp=r.stamp))  # the same summary a whole parse gives
    assert r.steps == len(big["steps"]) > 0 and r.answer == tr.answer
    assert max(seen) < p.stat().st_size / 10  # the steps were counted, not parsed
    seen.clear()
    assert store.list() == [r] and all(n < 2000 for n in seen)  # then from the index entry written now


def test_a_compact_or_hand_written_trace_is_parsed_whole_once(tmp_path):
    store = RunStore(tmp_path / "runs")
    tr = good_run(store)
    p = store.path(tr.run_id)
    p.write_text(json.dumps(tr.to_dict()), encoding="utf-8")  # no indentation: the light reading does not apply
    [r] = store.list()
    assert r.steps == len(tr.steps) and r.question == Q and r.answer == tr.answer


# ---------------------------------------------------------------------------------------------- saving fails

def test_a_full_disk_keeps_the_run_in_memory_and_says_so_once(tmp_path, monkeypatch):
    store, notes = RunStore(tmp_path / "runs"), []

    def full(_tr):
        raise OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "runs"))

    monkeypatch.setattr(store, "save", full)
    tr = run_question(engine(), Q, RunCallbacks(on_note=notes.append), seeds=["Acme"], store=store)
    assert "Paris" in tr.answer and tr.stop_reason != "error"  # the search went on to its answer
    [note] = notes
    assert "No space left on device" in note and "not be in Saved runs" in note


def test_a_store_that_goes_down_mid_run_keeps_the_run_locally(tmp_path):
    calls = []

    class Flaky:
        def save(self, tr):
            calls.append(len(tr.steps))
            if len(calls) > 2:
                raise StoreError("run store postgresql://***@h/db: server closed the connection unexpectedly")

    now = [0.0]
    outage = Outage(retry_s=30, clock=lambda: now[0])
    store = FallbackRunStore(Flaky(), RunStore(tmp_path / "runs"), outage=outage)
    saver_notes = []
    tr = run_question(engine(), Q, RunCallbacks(on_note=saver_notes.append), seeds=["Acme"], store=store)
    assert len(calls) == 3  # the store was asked once after it failed, not at every step
    assert saver_notes == []  # kept: nothing to warn about in the run itself
    assert "cannot be reached" in store.note() and "server closed" in store.note()
    assert store.local.load(tr.run_id).answer == tr.answer and [r.run_id for r in store.list()] == [tr.run_id]
    now[0] = 31.0  # after the retry time the primary store is asked again
    assert store.note() == ""


def test_a_full_disk_during_a_step_by_step_run_is_said_on_the_exploration(tmp_path, monkeypatch):
    from tog_core.app.runner import explore_apply, explore_propose, explore_start
    from tog_core.app.session import Settings

    store = RunStore(tmp_path / "runs")
    monkeypatch.setattr(store, "save", lambda _tr: (_ for _ in ()).throw(OSError(errno.ENOSPC, "No space left")))
    eng = engine()
    ex = explore_start(eng, Settings(), Q, ["Acme"])
    explore_apply(eng, explore_propose(eng, ex), None, store)
    assert len(ex.states) == 2 and "could not be saved: No space left" in ex.unsaved


def test_saver_without_a_store_and_with_one_that_works(tmp_path):
    s = Saver(engine=engine(), store=None)
    tr = s.save(engine().start(Q, ["Acme"]))
    assert tr.question == Q and s.unsaved == ""


def test_runs_made_within_one_second_are_listed_newest_first(tmp_path):
    """The store orders runs by when they started, then by id; ids made within one second differ only in their
    random suffix, so the start must tell them apart (it has milliseconds)."""
    store = RunStore(tmp_path / "runs")
    made = [good_run(store, run_id=f"20260101-000000-{c * 6}").run_id for c in "zyx"]  # ids against the order made
    assert [r.run_id for r in store.list()] == made[::-1]
    stamps = [r.created_at for r in store.list()]
    assert len(set(stamps)) == 3 and all("." in s for s in stamps), stamps
