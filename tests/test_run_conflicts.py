"""Two sessions continuing one saved run never overwrite each other (runs/revision.py, runs/saving.py: Saver): the
second save over a run someone else saved meanwhile is refused by the store, and that session's work is saved as a
new run, a branch of it, and it is told so in one sentence. In the JSON files, in PostgreSQL (a throwaway cluster,
tests/pg.py; skipped with the reason when PostgreSQL is not installed, unless TOG_REQUIRE_POSTGRES is set) and in the
store that keeps runs on this machine while PostgreSQL is down (FallbackRunStore). A run continued by one session
only is saved as before, under its own id, every step."""
from __future__ import annotations

import json
import threading

import pytest
from builders import make_graph
from runkit import stopped_at_depth_2

from tog_core.app.runner import RunCallbacks, explore_apply, explore_back, explore_from_trace, explore_propose
from tog_core.app.runner import explore_start, resume_question
from tog_core.app.session import Settings
from tog_core.graphrag.pg_common import StoreError
from tog_core.policy.cheap import CheapPolicy
from tog_core.runs.fallback import FallbackRunStore, Outage
from tog_core.runs.files import RunStore
from tog_core.runs.revision import RunConflict
from tog_core.tog.engine import ToGEngine
from tog_core.tog.state import EngineConfig

Q = "Where was the founder of Acme born?"


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("TOG_HOME", str(tmp_path))
    return tmp_path


def engine() -> ToGEngine:
    cfg = EngineConfig(width=2, depth=3, relation_pruner="bm25", entity_pruner="bm25")
    return ToGEngine(make_graph(), config=cfg, policy=CheapPolicy())


@pytest.fixture(params=["files", "postgres", "fallback"])
def store(request, tmp_path):
    """The run store of a deployment: the files under TOG_HOME, PostgreSQL, or PostgreSQL with the files behind it."""
    if request.param == "files":
        yield RunStore()
        return
    from tog_core.runs.postgres import PgRunStore

    pg = PgRunStore(request.getfixturevalue("pg_url"), user=f"conflicts-{tmp_path.name}")
    yield pg if request.param == "postgres" else FallbackRunStore(pg, RunStore(), outage=Outage())
    pg.close()


def overridden(ex) -> set[str]:
    """A choice other than the automatic one at the pending step: a candidate the policy drops kept, or else one
    it keeps dropped."""
    auto, ids = ex.proposal.auto_choice(), [c.id for c in ex.proposal.step.candidates]
    extra = [i for i in ids if i not in auto]
    return set(auto) | {extra[0]} if extra else set(list(auto)[1:])


def overrides(trace) -> list[str]:
    return [o["id"] for s in trace.steps for o in s.overrides]


def saved_run(eng, store) -> str:
    """A run started and taken one step on the Explore page (saved at Start and after the step)."""
    ex = explore_start(eng, Settings(), Q, ["Acme"])
    ex.saver(eng, store).save(ex.state)
    explore_apply(eng, explore_propose(eng, ex), None, store)
    assert ex.unsaved == "" and len(ex.state.steps) == 1
    return ex.run_id


def test_two_explorations_of_one_run_both_save_and_the_second_is_told(store):
    """Ann and Ben open one saved run ("Continue step by step", or its ?run= link) and take the next step: Ann
    overrides the automatic choice and saves first; Ben takes the automatic choice. Ann's overrides stay in the run;
    Ben's step is saved as a new run, a branch of it, and his page says so; both go on, each in their own run."""
    eng = engine()
    rid = saved_run(eng, store)
    ann = explore_from_trace(eng, Settings(), store.load(rid))
    ben = explore_from_trace(eng, Settings(), store.load(rid))
    explore_propose(eng, ann), explore_propose(eng, ben)
    explore_apply(eng, ann, overridden(ann), store)
    mine = overrides(store.load(rid))
    assert mine and ann.unsaved == "" and ann.run_id == rid

    explore_apply(eng, ben, None, store)
    assert overrides(store.load(rid)) == mine  # Ann's overrides are still there
    assert ben.run_id != rid and ben.parent_run == rid and ben.branched_at == 1
    assert ben.unsaved == (f"Someone else saved this run ({rid}) meanwhile; your choices were saved as a new run "
                           f"{ben.run_id}.")
    bens = store.load(ben.run_id)
    assert len(bens.steps) == 2 and overrides(bens) == [] and bens.parent_run == rid and bens.branched_at == 1
    assert {r.run_id: r.parent_run for r in store.list() if r.run_id in (rid, ben.run_id)} == {
        rid: None, ben.run_id: rid}

    explore_apply(eng, explore_propose(eng, ann), None, store)  # each goes on in their own run, told nothing more
    explore_apply(eng, explore_propose(eng, ben), None, store)
    assert (ann.run_id, ann.unsaved) == (rid, "") and ben.parent_run == rid
    assert len(store.load(rid).steps) == len(ann.state.steps) == 3 and overrides(store.load(rid)) == mine
    assert len(store.load(ben.run_id).steps) == len(ben.state.steps) == 3
    assert sorted(r.run_id for r in store.list() if r.run_id in (rid, ben.run_id) or r.parent_run == rid) == sorted(
        [rid, ben.run_id])  # no third run: Ben's later steps went to his own


def test_one_session_saves_every_step_over_its_own_run(store):
    """The normal case: a run continued by one session is saved under its id after every step, as before; the run
    counts its saves."""
    eng = engine()
    rid = saved_run(eng, store)
    ex = explore_from_trace(eng, Settings(), store.load(rid))
    at = store.load(rid).revision
    while not ex.state.done:
        explore_apply(eng, explore_propose(eng, ex), None, store)
    saved = store.load(rid)
    assert ex.run_id == rid and ex.unsaved == "" and ex.parent_run is None
    assert saved.answer == ex.state.answer and len(saved.steps) == len(ex.state.steps)
    assert saved.revision == ex.revision > at >= 2
    assert [r.run_id for r in store.list() if r.question == Q and r.run_id == rid] == [rid]


def test_two_resumes_of_one_stopped_run_both_save_and_the_second_is_told(store):
    """The Ask page's Resume, pressed in two sessions on one stopped run: the first finishes the run; the second's
    steps go to a new run, a branch of it, and the note it is given says so."""
    rid = stopped_at_depth_2(engine(), store, "20260101-000000-c0ffee", Q, seeds=["Acme"])
    first, second = store.load(rid), store.load(rid)
    notes_a, notes_b = [], []
    a = resume_question(engine(), first, store, RunCallbacks(on_note=notes_a.append))
    b = resume_question(engine(), second, store, RunCallbacks(on_note=notes_b.append))
    assert a.run_id == rid and notes_a == [] and store.load(rid).answer == a.answer
    assert b.run_id != rid and b.parent_run == rid and b.branched_at == len(second.steps)
    assert notes_b == [f"Someone else saved this run ({rid}) meanwhile; your choices were saved as a new run "
                       f"{b.run_id}."]
    assert store.load(b.run_id).answer == b.answer and "Paris" in b.answer


def test_stop_answered_over_a_run_resumed_meanwhile_is_a_new_run_and_says_so(store):
    """The Ask page's Stop answers the stopped run from its chains; when someone else resumed and saved the run
    meanwhile, that answer goes to a new run, a branch of it, and the note the page shows says so."""
    from tog_core.app.runner import finish_stopped

    rid = stopped_at_depth_2(engine(), store, "20260101-000000-5709ed", Q, seeds=["Acme"])
    mine, theirs = store.load(rid), store.load(rid)
    resume_question(engine(), theirs, store)  # someone else resumed it to its answer
    notes: list[str] = []
    done = finish_stopped(engine(), mine, store, on_note=notes.append)
    assert done.run_id != rid and done.parent_run == rid and done.stop_reason == "user"
    assert notes == [f"Someone else saved this run ({rid}) meanwhile; your choices were saved as a new run "
                     f"{done.run_id}."]
    assert store.load(rid).stop_reason != "user" and store.load(done.run_id).stop_reason == "user"  # theirs kept


def test_a_stale_copy_of_a_run_is_refused_and_the_run_left_as_it_was(store):
    """Anything that saves back a run it loaded (a person's choice of answer) is refused once someone else saved
    the run since: RunConflict, a ValueError the page says, and the stored run untouched."""
    eng = engine()
    rid = saved_run(eng, store)
    stale, fresh = store.load(rid), store.load(rid)
    fresh.answer = "saved meanwhile"
    store.save(fresh)
    stale.answer = "the stale copy"
    with pytest.raises(RunConflict) as err:
        store.save(stale)
    assert isinstance(err.value, ValueError) and rid in str(err.value) and "someone else" in str(err.value)
    assert store.load(rid).answer == "saved meanwhile" and store.load(rid).revision == fresh.revision
    never_stored = store.load(rid)
    never_stored.revision = None  # a trace that never came from the store (the command line's): saved as before
    store.save(never_stored)
    assert store.load(rid).revision == fresh.revision + 1


def test_of_two_saves_at_once_over_one_revision_only_one_goes_through(store, tmp_path):
    """Sessions in threads of one process, each with its own store object (as the app makes one per page run),
    saving one revision of a run at the same moment: the store compares and writes under a lock, so exactly one
    save goes through."""
    eng = engine()
    rid = saved_run(eng, store)
    copies = [store.load(rid) for _ in range(6)]
    go, won, lost = threading.Barrier(len(copies)), [], []

    def save(i, tr):
        own = RunStore() if isinstance(store, RunStore) else store  # one pool for PostgreSQL, as in the app
        tr.answer = f"session {i}"
        go.wait()
        try:
            own.save(tr)
            won.append(i)
        except RunConflict:
            lost.append(i)

    threads = [threading.Thread(target=save, args=(i, tr)) for i, tr in enumerate(copies)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(won) == 1 and len(lost) == len(copies) - 1
    assert store.load(rid).answer == f"session {won[0]}"


def test_a_run_saved_before_saves_were_counted_is_protected_too(home):
    """A run file written before `revision` existed reads as revision 0: of two sessions continuing it, the second
    to save is told, as for any run."""
    eng, store = engine(), RunStore()
    rid = saved_run(eng, store)
    p = store.path(rid)
    d = json.loads(p.read_text(encoding="utf-8"))
    del d["revision"]
    p.write_text(json.dumps(d, indent=1), encoding="utf-8")
    ann, ben = (explore_from_trace(eng, Settings(), store.load(rid)) for _ in range(2))
    assert ann.revision == 0
    explore_apply(eng, explore_propose(eng, ann), None, store)
    explore_apply(eng, explore_propose(eng, ben), None, store)
    assert ann.run_id == rid and ann.unsaved == "" and store.load(rid).revision == 1
    assert ben.parent_run == rid and "Someone else saved this run" in ben.unsaved


def test_going_back_over_a_run_saved_meanwhile_keeps_both_and_says_so(home):
    """Back to depth saves the branch it leaves as it stands: when someone else saved that run meanwhile, it is
    saved as a new run, the new branch starts from that one, and the page (the new branch's) says so."""
    eng, store = engine(), RunStore()
    rid = saved_run(eng, store)
    ann = explore_from_trace(eng, Settings(), store.load(rid))
    explore_apply(eng, explore_propose(eng, ann), overridden(ann), store)
    explore_apply(eng, explore_propose(eng, ann), None, store)
    ben = explore_from_trace(eng, Settings(), store.load(rid))
    explore_apply(eng, explore_propose(eng, ben), None, store)  # Ben goes on with the run while Ann looks at it
    new = explore_back(eng, ann, 1, store)
    assert ann.run_id != rid and ann.parent_run == rid and new.parent_run == ann.run_id
    assert new.unsaved == (f"Someone else saved this run ({rid}) meanwhile; your choices were saved as a new run "
                           f"{ann.run_id}.")
    assert len(store.load(rid).steps) == len(ben.state.steps) == 4 and ben.unsaved == ""
    assert overrides(store.load(ann.run_id)) and len(store.load(ann.run_id).steps) == 3


# ------------------------------------------------------------------------------------- while PostgreSQL is down

class Primary(RunStore):
    """Stands in for PostgreSQL: a run store that fails as a server that went away does, while `down`."""

    down = False

    def _check(self) -> None:
        if self.down:
            raise StoreError("run store postgresql://***@h/db: server closed the connection unexpectedly")

    def save(self, trace):
        self._check()
        return super().save(trace)

    def load(self, run_id):
        self._check()
        return super().load(run_id)

    def scan(self):
        self._check()
        return super().scan()


def outage_stores(tmp_path):
    now = [0.0]
    outage, primary = Outage(retry_s=30, clock=lambda: now[0]), Primary(tmp_path / "primary")

    def store() -> FallbackRunStore:  # the app makes one for every page run, sharing the process's Outage
        return FallbackRunStore(primary, RunStore(tmp_path / "local"), outage=outage)

    def back_up() -> None:
        primary.down, now[0] = False, now[0] + 31.0

    return primary, store, back_up


def ann_step_during_outage(tmp_path):
    """A saved run Ann opens, then PostgreSQL goes down and her next step (an override) is kept on this machine:
    (engine, the primary store, the store factory, back_up, the run id, Ann's exploration)."""
    eng = engine()
    primary, store, back_up = outage_stores(tmp_path)
    rid = saved_run(eng, store())
    ann = explore_from_trace(eng, Settings(), store().load(rid))
    primary.down = True
    explore_apply(eng, explore_propose(eng, ann), overridden(ann), store())
    return eng, primary, store, back_up, rid, ann


def test_a_run_continued_while_the_store_was_down_goes_back_to_it_without_a_branch(tmp_path):
    """Ann's steps are kept on this machine while PostgreSQL is down; once it is back, her next save goes over the run
    there (nobody else saved it): no new run, nothing said."""
    eng, primary, store, back_up, rid, ann = ann_step_during_outage(tmp_path)
    explore_apply(eng, explore_propose(eng, ann), None, store())
    assert store().local.load(rid).revision == -ann.revision > 0  # kept here meanwhile, in its own count
    back_up()
    explore_apply(eng, explore_propose(eng, ann), None, store())
    assert ann.run_id == rid and ann.unsaved == "" and ann.parent_run is None and ann.revision > 0
    back = primary.load(rid)
    assert len(back.steps) == len(ann.state.steps) == 4 and overrides(back)
    assert not store().local.path(rid).exists() and [r.run_id for r in store().list()] == [rid]


def test_two_sessions_while_the_store_was_down_keep_both(tmp_path):
    """Ann and Ben continue one run while PostgreSQL is down: the local copy refuses Ben's save over Ann's, so his
    step is a new run (kept locally); once the store is back, Ann's run goes over the run there and Ben's new run is
    saved there too."""
    eng = engine()
    primary, store, back_up = outage_stores(tmp_path)
    rid = saved_run(eng, store())
    ann, ben = (explore_from_trace(eng, Settings(), store().load(rid)) for _ in range(2))
    primary.down = True
    explore_apply(eng, explore_propose(eng, ann), overridden(ann), store())
    explore_apply(eng, explore_propose(eng, ben), None, store())
    assert ann.run_id == rid and ben.parent_run == rid and "Someone else saved this run" in ben.unsaved
    back_up()
    explore_apply(eng, explore_propose(eng, ann), None, store())
    explore_apply(eng, explore_propose(eng, ben), None, store())
    assert ann.run_id == rid and ann.parent_run is None and overrides(primary.load(rid))
    assert primary.load(ben.run_id).parent_run == rid and len(primary.load(ben.run_id).steps) == 3


def test_a_session_that_saved_over_the_store_while_it_was_down_is_told_when_it_is_back(tmp_path):
    """Ben saved the run in PostgreSQL while Ann's steps were kept on her machine (the store was down for her only):
    once it is back for her, her save is refused there and saved as a new run, and she is told."""
    eng = engine()
    primary, store, back_up = outage_stores(tmp_path)
    rid = saved_run(eng, store())
    ann = explore_from_trace(eng, Settings(), store().load(rid))
    ben = explore_from_trace(eng, Settings(), primary.load(rid))
    primary.down = True
    explore_apply(eng, explore_propose(eng, ann), overridden(ann), store())
    back_up()
    explore_apply(eng, explore_propose(eng, ben), None, primary)  # Ben, on another machine, where it was up
    explore_apply(eng, explore_propose(eng, ann), None, store())
    assert ben.run_id == rid and ann.parent_run == rid and "Someone else saved this run" in ann.unsaved
    assert overrides(primary.load(ann.run_id)) and not overrides(primary.load(rid))


def test_a_copy_opened_here_while_the_store_was_down_does_not_go_back_over_a_newer_run(tmp_path):
    """Ben opens the run while PostgreSQL is down (the copy kept here, with Ann's step); Ann goes on, and once the
    store is back her run goes there first. Ben's step, made on the older copy, is saved as a new run, and he is
    told: the copy's count of saves and the store's are never mistaken for one another."""
    eng, primary, store, back_up, rid, ann = ann_step_during_outage(tmp_path)
    ben = explore_from_trace(eng, Settings(), store().load(rid))  # from the copy here
    explore_apply(eng, explore_propose(eng, ann), None, store())
    back_up()
    explore_apply(eng, explore_propose(eng, ann), None, store())
    explore_apply(eng, explore_propose(eng, ben), None, store())
    assert ann.run_id == rid and ann.unsaved == "" and len(primary.load(rid).steps) == 4
    assert ben.parent_run == rid and "Someone else saved this run" in ben.unsaved
    assert len(primary.load(ben.run_id).steps) == 3 and overrides(primary.load(ben.run_id))


def test_the_explore_page_says_in_one_sentence_that_the_run_was_saved_as_a_new_one(app_home):
    """Two sessions on one run's address (the same ?run= link, or one person in two tabs): the first Continue goes on
    in the run; the second page's Continue saves a new run, names it in its header and address, and says why."""
    from streamlit.testing.v1 import AppTest
    from appkit import QUESTION, app, click, texts
    from appkit import _reload as reopened

    from tog_core.app.session import K

    at = app(**{K.MODEL: "none", K.REL_PRUNER: "bm25", K.ENT_PRUNER: "bm25"})
    at.switch_page("pages/explore.py").run()
    at.text_input(key=K.EXPLORE_QUESTION).set_value(QUESTION).run()
    at = click(at, "Start")
    rid = at.session_state[K.EXPLORE].run_id

    def opened() -> AppTest:  # a new browser session on the run's address
        return reopened(rid)

    ann, ben = opened(), opened()
    ann, ben = click(ann, "Continue"), click(ben, "Continue")
    assert not ann.exception and not ben.exception, (ann.exception, ben.exception)
    new = ben.session_state[K.EXPLORE].run_id
    assert ann.session_state[K.EXPLORE].run_id == rid and "Someone else saved" not in texts(ann)
    assert new != rid and ben.query_params["run"] in (new, [new]) and f"run {new} · branch of {rid}" in texts(ben)
    said = [w.value for w in ben.warning if "Someone else saved" in w.value]
    assert said == [f"Someone else saved this run ({rid}) meanwhile; your choices were saved as a new run {new}."]
    assert len(RunStore().load(rid).steps) == len(RunStore().load(new).steps) == 1
