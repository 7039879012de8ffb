"""Streamlit blocks the pages share: a run with live progress and a Stop button, the answer stated plainly, the
opt-in local draft, topic entities with "did you mean", "why not X?", evidence with the supporting sentence
marked, and the cached pictures. The logic is in tog_core.app (runner, views, run_notes, draft) and
tog_core.tog.diagnosis. Every block takes the run as a `Trace` and reads its attributes; the pictures, the diagnosis
and the support check read the stable trace JSON, handed to them by `ui.as_dict` (made once per trace shown).
"""
from __future__ import annotations

import time
from typing import Any
from collections.abc import Callable, Sequence

import streamlit as st

from explorer import projects
from explorer import ui
from explorer.reading import hops_block  # the Explore page draws it too (B.hops_block)
from tog_core.app import run_notes as N
from tog_core.app import views as V
from tog_core.app.runner import RunCallbacks, is_unfinished, where_stopped
from tog_core.app.session import K, NAMES_MAX
from tog_core.errors import UsageError
from tog_core.graphrag.store import GraphStore
from tog_core.render.cache import trace_key
from tog_core.render.chains import chains_html
from tog_core.render.frontier import frontier_html
from tog_core.render.frontier_items import trace_entity_types
from tog_core.tog.choice import found_words
from tog_core.tog.diagnosis import diagnose, diagnosis_text
from tog_core.tog.state import Step
from tog_core.tog.trace import Trace

ss = st.session_state
STAGE_WORDS = {"linking": "finding the topic entities", "reading": "reading the question",
               "planning": "trying each number of hops",
               "relations": "scoring relations", "entities": "scoring entities", "evaluate": "judging the chains",
               "answer": "answering (with no LLM, a second search checks the answer first)"}


# why an answer on no kept chain was found, by its `found` kind (tog/choice.FOUND_HOW); a kind not here says nothing
FOUND_WHERE = {"description": "it reads best against the question among the entities this near the topic entities",
               "text": "the source text behind the relationships this near the topic entities names it where that "
                       "text reads best against the question"}


def _stop_pressed() -> None:
    ss[K.ASK_STOPPED] = True


def _client_usage(llm: Any) -> dict[str, Any]:
    u = getattr(llm, "usage", None)
    if u is None:
        return {}
    return {"llm_calls": u.calls, "prompt_tokens": u.prompt_tokens, "completion_tokens": u.completion_tokens,
            "cost_usd": u.cost_usd}


def live_run(slot: Any, work: Callable[[RunCallbacks], Trace], *, max_depth: int,
             label: str = "Searching the graph…", llm: Any = None) -> Trace:
    """Run `work(callbacks)` showing the stage, depth, calls, tokens and elapsed time as they change, the
    streamed answer in plain view, and a Stop button (pressing it interrupts the run; the next page run
    answers from what was saved). Everything goes into `slot`, a container the page always creates, so the
    elements below keep their places (and their open or closed state) from one page run to the next."""
    stop_slot = slot.empty()
    stop_slot.button("Stop", key="stop_button", on_click=_stop_pressed, icon=":material/stop_circle:",
                     help="Stop the search and answer from the chains found so far")
    status = slot.status(label, expanded=True)
    box, parts = slot.empty(), []
    now = {"depth": 1, "stage": "linking", "usage": {}, "t0": time.perf_counter()}
    base = _client_usage(llm)  # the client counts calls as they return: between stages, the line moves too

    def show() -> None:
        words = STAGE_WORDS.get(now["stage"], now["stage"])
        live, done = _client_usage(llm), now["usage"]
        usage = {k: max(done.get(k) or 0, (live.get(k) or 0) - (base.get(k) or 0))
                 for k in ("llm_calls", "prompt_tokens", "completion_tokens")} if live else done
        if live or done:
            usage["cost_usd"] = done.get("cost_usd", 0.0) if done else (
                None if live.get("cost_usd") is None or base.get("cost_usd") is None
                else live["cost_usd"] - base["cost_usd"])
        status.update(label=V.progress_line(now["depth"], words, usage, max_depth=max_depth,
                                            elapsed=time.perf_counter() - now["t0"]))

    def on_stage(depth: int, stage: str) -> None:
        now.update(depth=depth, stage=stage)
        show()

    def on_usage(u: dict[str, Any]) -> None:
        now["usage"] = u
        show()

    def on_step(step: Step) -> None:
        kept = sum(1 for c in step.candidates if c.kept)
        what = (f"{len(step.candidates)} candidates, {kept} kept" if step.stage != "evaluate" else
                ("sufficient" if any(c.kept and c.id == "sufficient" for c in step.candidates) else "go deeper"))
        status.write(V.md_text(f"depth {step.depth} · {step.stage}: {what} ({step.wall_s:.1f} s)"))

    def on_token(t: str) -> None:
        parts.append(t)
        box.markdown(V.md_text("".join(parts)))

    def on_reset() -> None:  # the stream broke: the answer composed from the chains follows
        parts.clear()
        box.empty()

    try:
        result = work(RunCallbacks(on_stage=on_stage, on_usage=on_usage, on_step=on_step, on_token=on_token,
                                   on_answer_reset=on_reset, on_tick=lambda _e: show(), on_note=slot.warning))
    except (ValueError, UsageError, OSError) as err:  # bad input, a store that is down before the search began
        stop_slot.empty()
        box.empty()
        status.update(label="Could not start", state="error", expanded=False)
        slot.error(str(err))
        st.stop()
    stop_slot.empty()
    box.empty()
    # never "done ✓ sufficient" over a guess, nor over a run that found nothing to answer from
    done = "No answer · " if N.no_answer(result) else "Done, a guess · " if result.is_guess() else "Done · "
    status.update(label=done + V.progress_line(now["depth"], result.stop_reason or "", result.stats),
                  state="error" if result.stop_reason == "error" or N.no_answer(result) else "complete",
                  expanded=False)
    return result


# ---------------------------------------------------------------------------------------------- answer

def answer_block(t: Trace, *, on_hops: Callable[[int], None] | None = None, guess_said: bool = False) -> None:
    """The answer stated plainly: the entity, how sure, the chain it rests on, who wrote the text. `on_hops(n)`:
    the person asks for the answer at n hops instead of the number the search kept. `guess_said`: the page already
    said above that the answer is a guess (no second warning)."""
    view = V.answer_view(t)
    conf = V.md_text(V.confidence_line(view))  # names titles: the second search's answer
    early = is_unfinished(t) and bool(view["entity"])  # no answer yet: what its best chain reaches, claiming nothing
    if early:
        st.markdown(f"**Not an answer yet:** the run stopped before it answered ({V.md_text(where_stopped(t))}). "
                    f"Its best chain so far reaches **{V.md_text(view['entity'])}**; resume the run to answer.")
    elif t.answer_by == "llm":
        sup = V.answer_support(t.answer or "", ui.as_dict(t))
        st.markdown(V.md_text(t.answer or ""))
        if sup["supported"]:
            st.caption(f"Written by the LLM ({V.md_text(N.model_name(t))}) from the chains below"
                       + (f" · the chains' {conf}" if conf else ""))
        else:
            st.error(unsupported_words(sup, "the LLM"), icon=":material/report:")
    elif view["entity"]:
        st.markdown(f"### {V.md_text(view['entity'])}")
        st.caption("Composed from the reasoning chains; no language model wrote it"
                   + (f" · {conf}" if conf else "")
                   + (f" · other candidates: {V.md_text(', '.join(view['others'][:4]))}" if view["others"] else ""))
    else:
        st.markdown(V.md_text(t.answer or "(no answer yet)"))
    if view["hops"]:
        lines = [f"{i + 1}. **{V.md_text(a)}** → **{V.md_text(b)}**: {V.md_text(rel)}"
                 for i, (a, rel, b) in enumerate(view["hops"])]
        st.markdown("\n".join(lines))
        if view["from_trial"]:  # not in the search picture: say where it was found
            st.caption("This chain was found by one of the searches made before the run (see “How many hops”), "
                       "not by the run's own steps: the search picture does not show it; the reasoning chains draw "
                       "it first.")
        elif view.get("found"):
            where = FOUND_WHERE.get(view["found"], "")
            st.caption(f"The answer was {found_words(view['found'])}{f' ({where})' if where else ''}, not on a "
                       "chain the search kept: "
                       "this chain is the shortest to it, and its links were not scored. The search picture does not "
                       "show it; the reasoning chains draw it first.")
    (_, chosen), n = N.plan_depth(t), len(view["hops"])
    # how deep the run went (not the depth it planned): its steps, or its chains when a trace keeps no steps
    searched = max([int(s.depth) for s in t.steps] + [len(c) for c in t.chains if c], default=0)
    part_way = bool(n and searched and n < searched and not view.get("found") and not view["from_trial"])
    if view.get("found"):
        how = f"The answer is not at the end of any row's chain: it was {found_words(view['found'])}. "
    elif part_way:  # the answer sits part-way along a longer chain
        how = (f"The search went {searched} hops deep; the answer is {n} hop{'s' if n > 1 else ''} along its chain "
               "(the kept row). ")
    else:
        how = ("You chose the kept one. " if chosen else "The run then searched the kept one (the fewest "
               "hops whose best chain's relations match the most question words). ")
    hops_block(t.plan, trace=t, on_choose=on_hops,
               note="Each row is its own search of exactly that many hops, made before the run. " + how
               + "The chains and pictures here are the run's.",
               searched=searched if part_way else None)
    if view["confidence"] is not None and view["low"] and not guess_said and not early:
        st.warning("Low confidence: treat this answer as a guess. " + (
            "Check the answer candidates and the evidence, or name the entity you expected under “Why not …?”."
            if on_hops is not None else  # the Ask page has them; elsewhere the caption names the other candidates
            ("The other candidates are named above. " if view["others"] else "No other candidate was found. ")
            + "“Why not …?” (under the answer on the Ask and Explore pages) places the entity you expected."))
    if t.error:
        st.error(f"The run hit an error: {V.md_text(t.error)}")
    for line in N.person_notes(t):
        st.info(V.md_text(line), icon=":material/call_split:")
    for line in N.fallbacks(t):
        st.warning("Fallback: " + V.md_text(line))
    st.caption(N.run_line(t))


def unsupported_words(sup: dict[str, Any], who: str) -> str:
    ends = ", ".join(V.md_text(e) for e in sup["chain_entities"][:4])
    return (f"Not supported by the chains: what {who} wrote names no entity of the chains below"
            + (f" (they reach {ends})" if ends else "") + ", so no confidence is given for it.")


def draft_block(t: Trace, project: str) -> None:
    """The opt-in draft by the small local model, never the default, with its caveat."""
    from tog_core.llm.local import local_model_available

    if t.answer_by != "chains" or not [c for c in t.chains if c]:
        return
    drafts = ss.setdefault(K.ASK_DRAFT, {})
    ok, why = local_model_available()
    wanted = ss.pop(K.ASK_DRAFT + "_wanted", None) == t.run_id
    with st.expander("A sentence instead of a chain? (small local model)", expanded=wanted or t.run_id in drafts):
        st.caption("SmolLM2-135M runs offline and can turn the chain and its source text into a sentence. It often "
                   "repeats itself or invents facts: the chain above is the answer. At most 160 tokens; the "
                   "draft stops as soon as it repeats itself.")
        st.button("Draft with the small local model", disabled=not ok, help=None if ok else why,
                  on_click=lambda: ss.__setitem__(K.ASK_DRAFT + "_wanted", t.run_id))
        if wanted:
            from tog_core.app.draft import draft_answer

            box, parts = st.empty(), []

            def on_token(piece: str) -> None:
                parts.append(piece)
                box.markdown(V.md_text("".join(parts)))

            with st.spinner("The local model is writing…"):
                d = draft_answer(t, projects.need_project()[1], ui.local_client(project), on_token=on_token)
            box.empty()
            drafts[t.run_id] = {"text": d.text, "stopped": d.stopped}
        d = drafts.get(t.run_id)
        if d:
            stopped = {"repetition": "stopped: it began to repeat itself", "cap": "stopped at the token cap",
                       "end": "complete"}.get(d["stopped"], d["stopped"])
            st.warning("Draft by the small local model, not checked against the graph: it may be wrong.")
            st.markdown(V.md_text(d["text"] or "(nothing usable)"))
            sup = V.answer_support(d["text"] or "", ui.as_dict(t))
            if not sup["supported"]:
                st.error(unsupported_words(sup, "the local model"), icon=":material/report:")
            st.caption(stopped)


def seeds_block(t: Trace, graph: GraphStore, *, on_again: Callable[[list[str]], None]) -> None:
    """The topic entities the run started from, how each was found, "did you mean", and a way to change them."""
    rows = V.seed_rows(t)
    current = [r["entity"] for r in rows]
    alts = V.did_you_mean(graph, t.question, current)
    if rows:
        st.markdown("**Started from:** " + "; ".join(f"{V.md_text(r['entity'])} ({V.md_text(r['how'])})"
                                                     for r in rows))
    else:
        st.warning("No entity of this project was found in the question, so the search had nowhere to start.")
    if alts:  # a click asks again from that entity
        pick = st.pills("Did you mean", alts, key=f"ask_did_you_mean_{t.run_id}", format_func=V.md_text,
                        help="Ask again starting from this entity instead")
        if pick:
            on_again([pick])
    with st.popover("Change the topic entities", icon=":material/edit:"):
        options = list(dict.fromkeys(current + alts + (graph.all_titles() if graph.n_entities <= 5000 else [])))
        chosen = st.multiselect("Topic entities", options, default=current, key=f"{K.ASK_SEED_EDIT}_{t.run_id}",
                                help="The search starts from these; type to find others")
        if st.button("Ask again from these", type="primary", disabled=not chosen):
            on_again(list(chosen))


# ---------------------------------------------------------------------------------------------- why not X?

FORCE_ANSWERS = ("A new branch of this run with your override, searched to the end: when a chain reaches it, it "
                 "is the answer (said as forced in by you)")
FORCE_WAITS = ("A new branch of this run with your override, waiting at the next stage for you: the search goes on "
               "from there, and its answer may still be another entity")


def diagnosis_block(t: Trace, graph: GraphStore, *, key: str, on_force: Callable[[dict[str, Any]], None],
                    force_help: str = FORCE_ANSWERS, pending: tuple[Step, set[str]] | None = None
                    ) -> list[dict[str, Any]]:
    """"Why not X?": the person names the entities they expected; each is placed (final beam, where it was
    lost, or the nearest point), with a one-click override when there is one. Returns the diagnosis. `pending`:
    Explore's step on screen, not yet in the trace, and the ids ticked in it: an expected entity among its
    candidates is said to be there (tick it), not "never a candidate"."""
    text = st.text_input("Why not …? The answer you expected", key=key, max_chars=NAMES_MAX,
                         placeholder="an entity's name; several: separate them with ;",
                         help="Shows where the search dropped it, and lets you force it in and go on")
    names = [n.strip() for n in (text or "").split(";") if n.strip()]
    if not names:
        return []
    diag = diagnose(ui.as_dict(t), names, graph)
    for i, d in enumerate(diag):
        words = V.md_text(diagnosis_text([d]))  # titles, labels: the graph's text
        here = V.pending_candidate(pending[0], pending[1], d.get("entity_id")) if pending and d["found"] else None
        if here and not d["in_final_beam"]:
            st.info(V.md_text(here))
        elif not d["found"]:
            st.warning(words)
        elif d["in_final_beam"] or d.get("answer"):  # the answer itself (found off the kept chains): nothing lost
            st.success(words)
        else:
            st.error(words)
            f = d.get("force")
            if f and f.get("step") is not None:
                depth = (d.get("lost") or {}).get("depth")
                if st.button(f"Force “{V.md_text(d['title'][:60])}” in from depth {V.md_text(depth)} and continue",
                             key=f"{key}_force_{i}",
                             icon=":material/call_split:", help=force_help):
                    on_force(f)
    return diag


# ---------------------------------------------------------------------------------------------- evidence

def evidence_block(t: Trace, graph: GraphStore) -> None:
    chains = [c for c in t.chains if c]
    if not chains:
        st.caption("No chains, so no evidence.")
        return
    view = V.answer_view(t)
    ans, at = view["chain_index"], view["answer_hop"]
    # an answer from a depth trial or found off the kept chains is on none of the run's chains
    elsewhere = view["from_trial"] or view.get("found")

    def mark(i: int) -> str:  # the answer may stand part way along its chain: say up to which link
        if i != ans or elsewhere:
            return ""
        return f" (the answer's: its first {at} link(s))" if at and at < len(chains[i]) else " (the answer's)"
    labels = [f"Chain {i + 1}{mark(i)}" for i in range(len(chains))]
    pick = st.segmented_control("Chain", labels, default=labels[ans],
                                key=f"evidence_chain_{t.run_id}") or labels[0]
    for link in V.evidence(graph, ui.as_dict(t), labels.index(pick)):
        st.markdown(f"**{V.md_text(link['source'])}** → {V.md_text(link['relation'])} → "
                    f"**{V.md_text(link['target'])}**")
        for uid, text, span in link["units"]:
            if span:
                st.markdown("> " + V.marked_md(text[span[0]:span[1]], (0, span[1] - span[0])))
            with st.expander(f"Whole passage ({len(text)} characters, source {V.md_text(uid[:10])}…)"):
                st.caption(f"Text unit {V.md_text(uid)} (its `id` in the project's text_units table)")
                st.markdown(V.marked_md(text, span))
        if link["more"]:
            st.caption(f"… and {link['more']} more source passage(s)")


# ---------------------------------------------------------------------------------------------- pictures

def types_of(graph: GraphStore, d: dict[str, Any], marks: Sequence[dict[str, Any]] = (),
             extra: Sequence[str] = ()) -> dict[str, str]:
    """The type of every entity a picture of the trace JSON `d` draws (the marked and `extra` ones too)."""
    return trace_entity_types(graph, d, [m["entity_id"] for m in marks if m.get("entity_id")] + list(extra))


def marks_key(marks: Sequence[dict[str, Any]]) -> tuple[Any, ...]:
    return tuple((m.get("entity_id"), bool(m.get("in_final_beam")), str(m.get("lost"))) for m in marks)


def chains_picture(t: Trace, graph: GraphStore, height: int = 460) -> None:
    d = ui.as_dict(t)
    page = ui.cached(("chains", trace_key(d), height),  # tooltips quote each link's supporting sentence
                     lambda: chains_html(V.with_evidence(d, graph), height=f"{height}px", types=types_of(graph, d)))
    ui.picture(page, height)


def frontier_picture(t: Trace, graph: GraphStore, depth: int | None, marks: list[dict[str, Any]],
                     height: int = 560) -> None:
    d = ui.as_dict(t)
    page = ui.cached(("frontier", trace_key(d), depth, marks_key(marks), height),
                     lambda: frontier_html(d, depth, height=f"{height}px", types=types_of(graph, d, marks),
                                           marks=marks))
    ui.picture(page, height)
