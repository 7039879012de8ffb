"""`python -m tog_core query PROJECT "question" [...]`: one ToG run, printed or as trace JSON."""
from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from typing import TYPE_CHECKING, Any
from collections.abc import Callable

from tog_core.cli.terminal import echo, safe
from tog_core.errors import UsageError
from tog_core.render.style import cut
from tog_core.tog.choice import CANDIDATES_SHOWN, changed_search, changed_words, threshold_words

if TYPE_CHECKING:
    from tog_core.compose import RunSpec
    from tog_core.tog.state import Callbacks, State, Step
    from tog_core.tog.trace import Trace


def add_parser(sub: Any) -> None:
    from tog_core.compose import DEPARTURES, MODE_NOTES, MODES, PRUNERS

    q = sub.add_parser("query", help="answer a question with Think-on-Graph")
    q.add_argument("project", help="GraphRAG root, its output folder, or a folder of parquet files")
    q.add_argument("question", nargs="?", default=None,
                   help="the question (leave it out with --resume: a resumed run continues its own question)")
    q.add_argument("--width", type=int, default=3, help="beam width N (default 3)")
    q.add_argument("--depth", type=int, default=3, help="maximum depth D (default 3)")
    q.add_argument("--pruner", default=None, help=f"{' | '.join(PRUNERS)} (auto: llm with a provider, the "
                   "packaged embedder beside the local model; with no LLM the embedder on a typed graph, bm25 on "
                   "free-text relations)")
    q.add_argument("--entity-pruner", default=None, help="scorer of the entity stage (default: same as --pruner)")
    q.add_argument("--model", default=None, help="LiteLLM model string, 'local' or 'none' (default: the project's "
                   "model when its key is set, else none)")
    q.add_argument("--api-base", default=None,
                   help="API base URL for the model (e.g. a LiteLLM proxy or Ollama); the CLI sends your environment's "
                        "key there (the app sends the server's keys only to TOG_ALLOWED_API_BASES)")
    q.add_argument("--seed", action="append", default=[], metavar="TITLE", help="topic entity (repeatable)")
    q.add_argument("--mode", default="faithful", choices=list(MODES),
                   help="; ".join(f"{name}: {note}" for name, note in MODE_NOTES.items()))
    q.add_argument("--paper", action="store_true", help="ToG as published: every departure below switched off")
    q.add_argument("--without", action="append", default=[], choices=list(DEPARTURES), metavar="DEPARTURE",
                   help=f"switch one departure from the paper off (repeatable): {', '.join(DEPARTURES)}")
    q.add_argument("--store", default=None, metavar="URL", help="read the graph from, and save the run to, this "
                   "PostgreSQL store (see `store import`)")
    q.add_argument("--name", default=None, help="the graph's name in the store (default: the project folder's name)")
    q.add_argument("--expect", action="append", default=[], metavar="TITLE",
                   help="an entity you expected in the answer (repeatable): the trace's diagnosis says where the "
                        "search lost it, or that it never was a candidate")
    q.add_argument("--json", action="store_true", help="print the trace JSON only")
    q.add_argument("--candidates", type=int, default=CANDIDATES_SHOWN, metavar="N",
                   help=f"how many of the ordered answer candidates to print (default {CANDIDATES_SHOWN}; 0: none)")
    q.add_argument("--out", default=None, help="also write the trace JSON to this file")
    q.add_argument("--no-save", action="store_true", help="don't keep the run in the run store")
    q.add_argument("--resume", default=None, metavar="RUN_ID", help="continue a saved run from its last step")
    q.add_argument("--allow-fallback", action="store_true",
                   help="when the LLM provider fails, answer without it (BM25 scores, the answer composed from the "
                        "chains; every fallback named in the trace) instead of stopping with exit code 1")
    q.add_argument("--hops", type=int, default=None, metavar="N",
                   help="search exactly N hops deep (1..--depth) instead of the number the LLM-free search would "
                        "choose; not with an LLM judging (there the LLM decides)")


def _progress(enabled: bool) -> Callable[[str], None]:
    def say(text: str) -> None:
        if enabled:
            echo(text, file=sys.stderr, flush=True)
    return say


def run_query(spec: RunSpec, callbacks: Callbacks | None = None, *, project: str, question: str,
              seeds: list[str] | None = None, hops: int | None = None, expect: list[str] | None = None,
              save: bool = True, resume: str | None = None, store_url: str | None = None,
              graph_name: str | None = None, allow_fallback: bool = True,
              say: Callable[[str], None] = lambda _t: None,
              on_note: Callable[[str], None] | None = None,
              on_saved: Callable[[bool], None] | None = None) -> Trace:
    """One ToG run as the CLI does it: the engine `spec` describes (tog_core.compose, as given: the CLI's own spec
    trusts its --api-base) on `project`, asked `question`; returns the Trace. `callbacks` see the run as the engine
    reports it (the run is saved after every step before `on_state` is called; `say` gets a line per step). With
    `store_url` the graph is read from PostgreSQL and the run saved there. Also used by benchmarks and tests. A
    provider's failure is in the trace's `stats.llm_failure` (with `allow_fallback` recorded in its config): the CLI
    stops on it unless --allow-fallback. `on_note` is told, in one sentence, when the run cannot be saved or was saved
    as a new run because someone else saved it meanwhile (app/progress.py: Saver). `on_saved` is told once, at the end,
    whether the run as returned is in the store (False: `save` was off, or the store could not keep it)."""
    import asyncio
    import getpass
    import time

    from tog_core.compose import build_engine, plan
    from tog_core.graphrag.open import open_graph
    from tog_core.home import new_run_id
    from tog_core.runs.saving import Saver, saver_for
    from tog_core.policy import depths
    from tog_core.runs.postgres import open_run_store
    from tog_core.tog.state import Callbacks

    given = callbacks or Callbacks()
    if resume is not None:
        from tog_core.runs.files import _RUN_ID

        if not _RUN_ID.match(resume):
            raise UsageError(f"--resume {resume!r} is not a run id; give the id of a saved run (letters, digits, "
                             "'-', '_'), or leave --resume out to start a new run")

    from tog_core.tog.limits import question_too_long

    too_long = None if resume else question_too_long(question)
    if too_long:
        raise UsageError(too_long)
    if hops is not None and resume:
        raise UsageError("--hops starts a new run; a resumed run keeps the number of hops it had (drop one)")
    info, graph = open_graph(project, store=store_url, name=graph_name)
    store = None
    try:
        p = plan(spec, info, graph=graph)
        say(f"model: {p.choice.model}" + (f" ({p.choice.note})" if p.choice.note else ""))
        built = build_engine(p, graph=graph, info=info, project=getattr(graph, "name", "") if store_url else "")
        engine, choice = built.engine, built.choice
        model_info = {**choice.public_dict(), "allow_fallback": allow_fallback}
        store = open_run_store(store_url, user=getpass.getuser()) if save or resume else None
        run_id = resume or new_run_id()
        t0 = time.perf_counter()
        try:
            saved = store.load(resume) if resume and store is not None else None
        except FileNotFoundError:
            where = ("in the store" if store_url else
                     "(a run's id is the name of its file under $TOG_HOME/runs)")
            raise UsageError(f"--resume {resume}: no saved run has that id {where}; the app's Saved runs page lists "
                             "them, or leave --resume out to start a new run") from None
        state = _restore(engine, saved, store_url, question) if saved is not None else None

        # every save over the revision the run was loaded or last saved at (runs/revision.py), as the app saves: a
        # run someone else continued meanwhile is left as they saved it, and this one goes on as a new run, a branch
        # of it (its note goes to `on_note`); a store that cannot keep the run is a note too, and the run goes on
        saver = None
        if store is not None and save:  # --resume with --no-save: the run is loaded from the store, never written
            runs: Any = store  # files or PostgreSQL: one interface (the app's Saver takes either)
            saver = (saver_for(engine, saved, runs, model_info, on_note) if saved is not None else
                     Saver(engine=engine, store=runs, run_id=run_id, model_info=model_info, on_note=on_note))
            saver.shown_where = "in this command's output"

        def save_state(st: State) -> None:
            if saver is not None:
                saver.save(st)
            given.on_state(st)

        def on_step(step: Step) -> None:
            say(f"depth {step.depth} {step.stage}: {step.n_candidates} candidates, {step.llm_calls} LLM calls"
                + (f", fallbacks: {', '.join(f['name'] for f in step.fallbacks)}" if step.fallbacks else ""))
            given.on_step(step)

        cb = replace(given, on_step=on_step, on_state=save_state)
        try:
            state = asyncio.run(depths.run(engine, question, seeds=seeds or None, callbacks=cb, state=state, hops=hops))
        except ValueError as err:
            raise UsageError(str(err)) from None
        trace = (saver.trace(state) if saver is not None else
                 engine.trace(state, run_id=run_id, wall_s=time.perf_counter() - t0, model_info=model_info))
        if expect:
            from tog_core.tog.diagnosis import diagnose

            trace.diagnosis = diagnose(trace.to_dict(), expect, graph)
            if saver is not None:
                trace = saver.save_trace(trace)
        if on_saved is not None:
            on_saved(saver is not None and saver.kept)
        return trace
    finally:
        for closable in (store, graph):
            getattr(closable, "close", lambda: None)()


def _restore(engine: Any, saved: Trace, store_url: str | None, question: str = "") -> State:
    """The state a saved run stopped in, on the project it was made on: a `question` other than the run's own (it
    continues its own), or a run of another project, is a usage error saying what to run instead."""
    import shlex

    from tog_core.runs.index import same_project, same_question

    if question.strip() and not same_question(question, saved.question):
        raise UsageError(f"--resume {saved.run_id} continues the run's own question ({cut(saved.question, 120)!r}), "
                         f"not {cut(question, 120)!r}: drop the question argument to resume, or leave --resume out "
                         "to ask a new one")
    if saved.project and not same_project(saved.project, engine.project):
        store = " --store URL" if store_url else ""
        raise UsageError(f"--resume {saved.run_id}: the run was made on the project {saved.project}, not on "
                         f"{engine.project}; resume it on its own: python -m tog_core query "
                         f"{shlex.quote(saved.project)} {shlex.quote(saved.question)} --resume {saved.run_id}{store}")
    try:
        return engine.restore(saved)
    except ValueError as err:  # the project was indexed again since the run: the ids it recorded are gone
        raise UsageError(f"--resume {saved.run_id}: cannot continue this run ({err}); ask its question again "
                         "without --resume") from None


def _candidate_lines(t: Trace, n: int) -> list[str]:
    """The first `n` of the trace's ordered answer list: title, score, chain and supporting sentence."""
    one = lambda x: safe(x, one_line=True)  # noqa: E731 - graph text inside a line
    out = []
    for k, c in enumerate(t.candidates[:n], 1):
        chain = c.get("chain") or []
        path = " ".join([one(chain[0]["source"])] + [f"--[{one(cut(x['relation'], 60))}]--> {one(x['target'])}"
                                                     for x in chain]) if chain else ""
        out.append(f"  {k}. {one(c['title'])} (score {float(c['score']):.2f})" + (f": {path}" if path else ""))
        if c.get("sentence"):
            out.append(f"     \"{one(cut(c['sentence'], 200))}\"")
        if c.get("why"):
            out.append(f"     why: {one(cut(str(c['why']), 400))}")
    return out


def guess_line(t: Trace) -> str | None:
    """The plain warning when the answer is a guess (confidence below the threshold), else None."""
    if not t.is_guess():
        return None
    return (f"This is a guess: confidence {t.confidence:.2f} is below {t.low_confidence:.2f}, "
            f"{threshold_words(t)}. Check the candidates, best first:")


def _failed_calls(t: Trace) -> int:
    """How many of the run's LLM calls failed (or were not made, the circuit open): each fell back by name."""
    from tog_core.reading.llm import FALLBACK_READING_ERROR
    from tog_core.scoring.scorers import FALLBACK_LLM_ERROR
    from tog_core.tog.engine import FALLBACK_ANSWER_LLM_ERROR, FALLBACK_LINK_LLM_ERROR
    from tog_core.tog.stages import FALLBACK_EVALUATE_LLM_ERROR

    failed = {FALLBACK_LLM_ERROR, FALLBACK_EVALUATE_LLM_ERROR, FALLBACK_ANSWER_LLM_ERROR, FALLBACK_LINK_LLM_ERROR,
              FALLBACK_READING_ERROR}
    named = [f for s in t.steps for f in s.fallbacks] + list(t.stats.get("other_fallbacks") or [])
    return min(sum(f.get("name") in failed for f in named), int(t.stats.get("llm_calls") or 0))


def fallback_line(t: Trace) -> str | None:
    """The warning when the provider failed and the run answered without it (--allow-fallback), else None: the
    trace's recorded failure (kind, HTTP status, model, API base, the fix) and, when the search's scores or its
    stop came from the fallbacks, that the LLM-free search may do better."""
    from tog_core.scoring.scorers import FALLBACK_LLM_ERROR
    from tog_core.tog.stages import FALLBACK_EVALUATE_LLM_ERROR

    failure = t.stats.get("llm_failure")
    if not failure:
        return None
    line = f"{failure['message']}; answered without the LLM (--allow-fallback)"
    if any(f.get("name") in (FALLBACK_LLM_ERROR, FALLBACK_EVALUATE_LLM_ERROR) for s in t.steps for f in s.fallbacks):
        return line + (" by the fallback scorers (BM25 in the LLM's place); the LLM-free search may do better: fix "
                       "the provider, or run with --model none")
    return line


def _usage_words(t: Trace) -> str:
    """The summary's LLM calls: a failed call (or one the open circuit refused) is not counted as answered."""
    s = t.stats
    failed = _failed_calls(t)
    if not failed:
        return f"{s['llm_calls']} LLM calls in {s['llm_rounds']} rounds"
    refused = int((s.get("llm_failure") or {}).get("refused_calls") or 0)
    failed_words = f"{failed - refused} failed" + (f", {refused} not made (circuit open)" if refused else "")
    return f"{s['llm_calls'] - failed} LLM calls answered, {failed_words}"


def _print_trace(t: Trace, n_candidates: int = CANDIDATES_SHOWN, *, saved: bool = True) -> None:
    if fallback := fallback_line(t):
        echo(f"warning: {fallback}\n")
    guess = guess_line(t) if t.candidates else None
    if guess and n_candidates > 0:  # a guess shows the candidates before the answer
        echo(guess)
        for line in _candidate_lines(t, n_candidates):
            echo(line)
        echo()
    echo(t.answer.strip())
    if t.confidence is not None and (changed := changed_search(t)):
        echo(f"(The confidence: {changed_words(changed)}.)")
    echo()
    if t.candidates and not guess and n_candidates > 0:
        echo("Candidates, best first:")
        for line in _candidate_lines(t, n_candidates):
            echo(line)
        echo()
    if t.chains:
        echo("Chains, as the search walked them from the topic entities:")
        for k, chain in enumerate(t.chains, 1):
            one = lambda x: safe(x, one_line=True)  # noqa: E731 - a title or relation inside the line
            parts = [one(chain[0].source)] + [f"--[{one(cut(link.relation, 80))}]--> {one(link.target)}"
                                              for link in chain]
            echo(f"  [{k}] " + " ".join(parts))
    if t.plan:  # the hops the LLM-free search tried before it ran (GraphRAG graphs)
        tried = "; ".join(f"{x['depth']}: {len(x.get('matched') or [])} question word(s) matched"
                          + (f" ({', '.join(x['set_aside'])} not counted: the chain's end is not one)"
                             if x.get("set_aside") else "") + f", ends at {x.get('end') or '-'}"
                          for x in t.plan.get("trials") or [])
        echo(f"\nhops: {t.plan['depth']} (" + (f"tried {tried})" if tried else f"{t.plan.get('reason')})"))
    if t.diagnosis:
        from tog_core.tog.diagnosis import diagnosis_text

        echo("\n" + diagnosis_text(t.diagnosis))
    s = t.stats
    cost = "unknown" if s.get("cost_usd") is None else f"${s['cost_usd']:.4f}"
    echo(f"\nstop: {t.stop_reason}; {_usage_words(t)}, {s['prompt_tokens']}+{s['completion_tokens']} tokens, "
         f"cost {cost}, {s['wall_s']:.1f} s; " + (f"run {t.run_id}" if saved else "not saved"))


def _check_args(args: argparse.Namespace) -> None:
    """Usage errors found in the arguments alone (a question given with --resume is checked against the run's own
    when the run is read: _restore)."""
    from tog_core.tog.recording import MAX_CANDIDATES

    if not 0 <= args.candidates <= MAX_CANDIDATES:
        raise UsageError(f"--candidates {args.candidates}: give a number from 0 (none) to {MAX_CANDIDATES} (the "
                         "answer candidates a trace keeps)")
    if args.resume is None and args.question is None:
        raise UsageError('query needs a question after the project: query PROJECT "question" (or --resume '
                         "RUN_ID to continue a saved run)")


def cmd(args: argparse.Namespace) -> int:
    from tog_core.compose import RunSpec

    _check_args(args)
    say = _progress(not args.json and sys.stderr.isatty())
    spec = RunSpec(model=args.model, api_base=args.api_base, trust_api_base=True, width=args.width,
                   depth=args.depth, relation_pruner=args.pruner, entity_pruner=args.entity_pruner, mode=args.mode,
                   paper=args.paper, without=tuple(args.without))
    kept: list[bool] = []  # whether the run is in the store: --no-save, or a store that could not keep it, say not
    trace = run_query(spec, project=args.project, question=args.question or "", seeds=args.seed, hops=args.hops,
                      expect=args.expect, save=not args.no_save, resume=args.resume, store_url=args.store,
                      graph_name=args.name, allow_fallback=args.allow_fallback, say=say,
                      on_note=lambda note: echo(f"warning: {note}", file=sys.stderr), on_saved=kept.append)
    saved = bool(kept and kept[-1])
    if args.out:
        from tog_core.runs.files import atomic_write_text
        from pathlib import Path

        atomic_write_text(Path(args.out), trace.to_json(indent=1))
    failure = trace.stats.get("llm_failure")
    if failure and not args.allow_fallback:
        where = f"run {trace.run_id} saved" if saved else "run not saved"
        print(f"error: {failure['message']} ({where}; --allow-fallback answers without the LLM)", file=sys.stderr)
        return 1
    if fallback := fallback_line(trace):  # on stderr whatever stdout carries; the text output repeats it
        echo(f"warning: {fallback}", file=sys.stderr)
    if args.json:
        print(trace.to_json())
    else:
        _print_trace(trace, args.candidates, saved=saved)
    return 0 if trace.stop_reason != "error" else 1
