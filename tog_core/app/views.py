"""What the pages show, as plain data (no Streamlit): the answer and its chain, candidate tables, evidence with the
supporting sentence marked (render/evidence.py), progress lines, saved-run rows and comparisons, and text made inert
for st.markdown (`md_text`). What a run says about itself beside its answer (its run line, fallbacks and notes) is
in run_notes.py.
Every function reads a `Trace` (its attributes; a trace file read from elsewhere is made one with `Trace.from_dict`
where it comes in) or a graph and returns rows or strings.
"""
from __future__ import annotations

import re
from dataclasses import asdict
from typing import Any
from collections.abc import Iterable

from tog_core.app.run_notes import stop_words, usage_words
from tog_core.app.session import project_label
from tog_core.graphrag.store import GraphStore
from tog_core.render.chains import answer_chain_index, answer_own_chain, found_off_chain, naming_chain_index, walk
from tog_core.render.evidence import evidence, support_span, with_evidence  # noqa: F401  (the pages use them here)
from tog_core.render.support import answer_support  # noqa: F401  (the answer block marks unsupported text)
from tog_core.runs.index import same_project, same_question  # noqa: F401  (here for the pages; the CLI reads them from runs)
from tog_core.tog.choice import STOP_WORDS, PersonAnswer, changed_search, changed_words, second_search_words
from tog_core.tog.policy import BESIDE_BEAM, GUESS_WORDS
from tog_core.tog.state import Proposal, Step
from tog_core.tog.trace import Candidate, Seed, Trace, outcome_change

SEARCH_CUTOFF = 72.0  # graph browser: fuzzy scores (0-100, rapidfuzz WRatio) below this are "no match"


# ---------------------------------------------------------------------------------------------- answer

def answer_view(trace: Trace) -> dict[str, Any]:
    """The answer stated plainly: the entity (the trace's `answer_entity`, else the end of the best chain), its
    chain as (from, relation, to) hops, the confidence when the trace carries one, the other candidates, and
    who wrote the text ("llm" or "chains")."""
    chains = [c for c in trace.chains if c]
    seed_ids = {str(s.id) for s in trace.seeds}
    links = [[asdict(link) for link in c] for c in chains]
    walks = [walk(c, seed_ids) for c in links]
    ends = [w[-1][1] for w in walks if w]
    entity = trace.answer_entity or (ends[0] if ends else None)
    # the ranked answer's own chain and the chain it came along, else the chain that names the answer, read as the
    # chains picture and the exports read them (render/chains.py)
    view_trace = {"chains": links, "candidates": trace.candidates, "answer_entity": trace.answer_entity,
                  "seeds": [{"id": str(s.id)} for s in trace.seeds]}
    came, own = answer_chain_index(view_trace), answer_own_chain(view_trace)
    pick = came if came is not None else naming_chain_index(view_trace)
    hops = []
    ranked = [c for c in trace.candidates or [] if isinstance(c, dict)]
    found = found_off_chain(view_trace)
    if own:
        # the ranked answer carries its own chain (from a number of hops tried but not kept, or the shortest chain
        # to an entity found by its description or in the source text)
        hops = [(str(x.get("source") or ""), str(x.get("relation") or ""), str(x.get("target") or "")) for x in own]
    elif walks:
        w, chain = walks[pick], chains[pick]
        hops = [(w[i][1], str(link.relation or ""), w[i + 1][1]) for i, link in enumerate(chain)]
        stop = next((i for i, h in enumerate(hops) if h[2] == entity), len(hops) - 1)
        hops = hops[: stop + 1]
    conf: Any = trace.confidence  # a number; an old trace may hold {"value", "low", "reason"}
    value, low, why = None, trace.low_confidence, ""
    if isinstance(low, (int, float)) and not isinstance(low, bool):  # the trace's threshold (tog/policy.py)
        low = isinstance(conf, (int, float)) and not isinstance(conf, bool) and float(conf) < float(low)
    if isinstance(conf, dict):
        value, low, why = conf.get("value", conf.get("score")), conf.get("low", low), str(conf.get("reason") or "")
    elif isinstance(conf, (int, float)) and not isinstance(conf, bool):
        value = float(conf)
    scores = [float(c[-1].score or 0) for c in chains]
    return {"entity": entity, "by": trace.answer_by or "", "hops": hops, "changed": changed_search(trace),
            "confidence": None if value is None else float(value), "low": None if low is None else bool(low),
            "why": why, "second": second_view(trace.second_search),
            "others": [e for e in dict.fromkeys([*(str(c.get("title")) for c in ranked), *ends]) if e != entity],
            "chain_scores": scores, "chain_index": pick,
            # the answer's own chain is none of the run's: it comes from a number of hops searched before the run ...
            "from_trial": came is None and bool(own) and not found,
            # ... or it is the shortest chain to an answer found off the kept chains: how ("description", "text":
            # tog/choice.FOUND_HOW), "" otherwise
            "found": found if came is None and own else "",
            # where along that chain the answer stands (a hop number), None when it is not on it
            "answer_hop": next((i for i, (_, title) in enumerate(walks[pick]) if i and title == entity), None)
            if walks else None}


def confidence_line(view: dict[str, Any]) -> str:
    """How sure, in words: the trace's confidence when it has one, else nothing is claimed. A search changed from
    the one the confidence was fitted on says so (changed_search)."""
    if view["confidence"] is None:
        return ""
    word = f"low: {GUESS_WORDS}" if view["low"] else ""
    changed = view.get("changed") or ""
    return f"confidence {view['confidence']:.2f}" + (f" ({word})" if word else "") + \
        (f": {view['why']}" if view["why"] else "") + \
        (f"; {view['second']}" if view.get("second") else "") + \
        (f"; {changed_words(changed)}" if changed else "")


def second_view(second: Any) -> str:
    """The trace's `second_search` in words ("" when it has none, or an unreadable one)."""
    if not isinstance(second, dict) or not second.get("pruner"):
        return ""
    place, p, first = second.get("place"), second.get("probability"), second.get("answer")
    return second_search_words(place if isinstance(place, int) else None,
                               float(p) if isinstance(p, (int, float)) else None, str(first) if first else None)


# ---------------------------------------------------------------------------------------------- explore

def table_order(step: Step) -> list[Candidate]:
    """A step's candidates in the order of Explore's table, best first; equal scores: the ones the search keeps first
    (a tie at the cut-off is broken by what the reason names)."""
    return sorted(step.candidates, key=lambda c: (-float(c.score), not c.auto_kept))


def candidate_rows(proposal: Proposal, choice: set[str] | None = None) -> list[dict[str, Any]]:
    """One row per candidate for the editable table, best first: keep pre-set to `choice` (default: the
    automatic choice)."""
    rows = []
    for c in table_order(proposal.step):
        what = c.label if c.kind != "entity" else f"{c.target or c.label}  (via: {c.relation or ''})"
        keep = bool(c.auto_kept) if choice is None else c.id in choice
        rows.append({"keep": keep, "score": round(float(c.score), 3), "candidate": what,
                     "from": c.source_entity, "reason": c.reason, "scored by": c.scored_by, "id": c.id})
    return rows


def pending_candidate(step: Step, ticked: set[str], entity_id: Any) -> str | None:
    """What "Why not X?" says of an entity that is a candidate of the step on screen (Explore's, not yet in the trace,
    where the diagnosis would call it never a candidate): its row and whether it is ticked. None when it is not one."""
    if step.stage != "entities" or not entity_id:
        return None
    rows = table_order(step)  # the row numbers the table shows
    at = next((k for k, c in enumerate(rows) if str(c.target_id) == str(entity_id)), None)
    if at is None:
        return None
    c = rows[at]
    where = (f"“{c.target or c.label}” is a candidate at this step (depth {step.depth} · entities, row {at + 1} of "
             f"{len(rows)}, score {float(c.score):.3f}, via “{c.relation or ''}”)")
    if c.id in ticked:
        return where + ": it is ticked, so Continue keeps it."
    return where + ", not ticked: tick it in the table above and press Continue to keep it."


def keep_words(step: Step, auto: set[str], *, width: int, relations_kept: int) -> str:
    """How many candidates the stage keeps, and why, from the numbers of this run's search: a relations step keeps up
    to `relations_kept` (the policy's) of each entity, which may be more than the width N of chains the entity stage
    keeps; an entities step keeps N chains. `auto`: the automatic choice, ticked before the person edits it."""
    beside = sum(1 for c in step.candidates if c.id in auto and c.reason.startswith(BESIDE_BEAM))
    what = "relation" if step.stage == "relations" else "chain"
    also = (f" {'One more' if beside == 1 else f'{beside} more'} {what}{'s are' if beside > 1 else ' is'} kept "
            f"{BESIDE_BEAM}: {'it is' if beside == 1 else 'each is'} on the path that, read whole, names the most of "
            "the question." if beside else "")
    if step.stage == "relations":
        ents = len({c.source_id for c in step.candidates})
        more = (f" ({relations_kept // width if relations_kept % width == 0 else round(relations_kept / width, 1)}× "
                "the width: without an LLM the search reads GraphRAG's free-text relations loosely, so it keeps more "
                "relations than chains)" if width and relations_kept > width else "")
        return (f"At width {width} the search keeps up to {relations_kept} relations of each entity{more}; the "
                f"entity stage then keeps the best {width} chains. Ticked by the automatic choice: {len(auto)} "
                f"relation{'s' if len(auto) != 1 else ''} of {ents} entit{'y' if ents == 1 else 'ies'}.{also}")
    if step.stage == "entities":
        return (f"At width {width} the beam keeps the best {width} chains; ticked by the automatic choice: "
                f"{len(auto)}.{also}")
    return ""


def choice_from_rows(rows: Iterable[dict[str, Any]]) -> set[str]:
    return {str(r["id"]) for r in rows if bool(r.get("keep"))}


def edited_choice(rows: list[dict[str, Any]], edits: dict[str, Any] | None) -> set[str]:
    """The kept candidates once a table's edits (Streamlit's data-editor state: {"edited_rows": {position:
    {"keep": bool}}}) are applied to `rows`: what a click on Continue keeps, read before the page runs again."""
    out = [dict(r) for r in rows]
    for pos, change in ((edits or {}).get("edited_rows") or {}).items():
        i = int(pos)
        if 0 <= i < len(out) and isinstance(change, dict) and "keep" in change:
            out[i]["keep"] = bool(change["keep"])
    return choice_from_rows(out)


def overrides(trace: Trace) -> list[dict[str, Any]]:
    """Every override of a trace, one row a decision, with where it happened. At an evaluate step the person chose
    the other outcome (answer now / search deeper): one decision, though both outcomes are recorded as changed. The
    overrides of a "Force X in" say so ("why": "forcing X in")."""
    rows = []
    for s in trace.steps:
        done = [o for o in s.overrides or [] if isinstance(o, dict)]
        if s.stage == "evaluate" and done:
            auto, mine = outcome_change(done)
            rows.append({"depth": s.depth, "stage": s.stage, "candidate": "what next",
                         "automatic": auto.get("label", ""), "person": mine.get("label", ""),
                         **_forcing(mine)})
            continue
        rows += [{"depth": s.depth, "stage": s.stage, "candidate": o.get("label", ""),
                  "automatic": "keep" if o.get("auto_kept") else "drop", "person": "keep" if o.get("kept") else "drop",
                  **_forcing(o)} for o in done]
    if any("why" in r for r in rows):  # a "Force X in" made some: the column says which, on every row
        rows = [{**r, "why": r.get("why", "")} for r in rows]
    return rows


def _forcing(o: dict[str, Any]) -> dict[str, str]:
    """An override a press of "Force X in" made (its `forced`: X's title), said as such."""
    return {"why": f"forcing {o['forced']} in"} if o.get("forced") else {}


def seed_rows(trace: Trace) -> list[dict[str, Any]]:
    """The topic entities a run started from and how each was found."""
    how = {"exact": "its name is in the question", "fuzzy": "a name close to words of the question",
           "embedding": "closest in meaning (embedder)", "llm": "named by the LLM", "user": "chosen by you"}
    return [{"entity": s.title, "how": how.get(str(s.how), str(s.how or "")), "score": s.score} for s in trace.seeds]


def seed_titles(seeds: Iterable[Seed | dict[str, Any]]) -> list[str]:
    return [s.title if isinstance(s, Seed) else str(s.get("title", "")) for s in seeds]


def did_you_mean(graph: GraphStore, question: str, current: Iterable[str], *, limit: int = 5) -> list[str]:
    """Other entities the question may be about (tog_core.app.guide.did_you_mean): ranked by how well their words
    match the question's, generic titles left out; the current ones left out."""
    from tog_core.app.guide import did_you_mean as ranked

    return ranked(graph, question, current, limit=limit)


def entity_matches(graph: GraphStore, query: str, *, limit: int = 12) -> list[tuple[int, str, float]]:
    """Graph-browser search: fuzzy hits at or above SEARCH_CUTOFF only (nothing close = no match)."""
    from tog_core.tog.linking import search_entities

    return [h for h in search_entities(graph, query, limit=limit) if h[2] >= SEARCH_CUTOFF]


# ---------------------------------------------------------------------------------------------- evidence

def marked_md(text: str, span: tuple[int, int] | None) -> str:
    """A passage for st.markdown, inert (md_text), with the span on a highlighted background."""
    if not span:
        return md_text(text)
    a, b = span
    return md_text(text[:a]) + ":yellow-background[" + md_text(text[a:b]) + "]" + md_text(text[b:])


# ---------------------------------------------------------------------------------------------- progress

# the pruners and policies as the run header names them (the settings keep their names)
PRUNER_WORDS = {"bm25": "BM25 word match", "embedding": "embedding similarity", "hybrid": "BM25 and embedding fused",
                "random": "random", "llm": "the LLM"}
POLICY_WORDS = {"cheap": "no LLM", "faithful": "the paper's LLM steps"}


def pruning_words(relation: str, entity: str, policy: str) -> str:
    """`pruning: BM25 word match · no LLM` (an entity pruner apart from the relation pruner after a slash)."""
    name = lambda p: PRUNER_WORDS.get(p, p)  # noqa: E731
    return (f"pruning: {name(relation)}" + ("" if entity == relation else f" / {name(entity)}") +
            f" · {POLICY_WORDS.get(policy, policy)}")


def progress_line(depth: int, stage: str, usage: dict[str, Any] | None, *, elapsed: float | None = None,
                  max_depth: int | None = None) -> str:
    where = f"depth {depth}" + (f" of {max_depth}" if max_depth else "")
    secs = f" · {elapsed:.1f} s" if elapsed is not None else ""
    return f"{where} · {stop_words(stage) if stage in STOP_WORDS else stage} · {usage_words(usage)}{secs}"


def plan_rows(trace: Trace | None, plan: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """The numbers of hops a run tried before it searched (`plan`, else the trace's), one row each: what its best chain
    matched of the question (the question's words as written), where that chain ended, and whether it was kept:
    the row of the answer's own number of hops once there is an answer (it may sit part-way along a longer chain),
    else the number the search settled on (no trace: a search not begun). [] when the run settled nothing."""
    plan = (plan if plan is not None else trace.plan if trace is not None else None) or {}
    from tog_core.scoring.text import words_as_written

    written = words_as_written(trace.question if trace is not None else "")
    view = answer_view(trace) if trace is not None and ([c for c in trace.chains if c] or trace.candidates) else None
    kept = (len(view["hops"]) if view else 0) or plan.get("depth")

    def words(stems: list[str]) -> str:
        return ", ".join(dict.fromkeys(written.get(w, w) for w in stems))

    # the kept row says the run's answer too: it is ranked over every chain's end, not always the best chain's
    return [{"hops": t.get("depth"), "question words matched": len(t.get("matched") or []),
             "which": words(t.get("matched") or []) or "none", "best chain ends at": t.get("end") or "no chain",
             # the asked noun ("which town") matched by the relations, where the chain's end does not say it is one
             "not counted": words(t.get("set_aside") or []), "kept": t.get("depth") == kept,
             "the answer": (view["entity"] or "") if view and t.get("depth") == kept else ""}
            for t in plan.get("trials") or []]


def best_connected(graph: Any, n: int = 6) -> list[str]:
    """The titles of the `n` entities with the most relationships (placeholders named only by a relationship
    left out), most first: where the graph browser offers to start."""
    import numpy as np

    deg = np.asarray(graph.degrees_of(np.arange(graph.n_entities)))
    out: list[str] = []
    for i in np.argsort(-deg, kind="stable")[: 4 * n]:
        e = graph.entity(int(i))
        if not e.placeholder:
            out.append(e.title)
        if len(out) == n:
            break
    return out


# ---------------------------------------------------------------------------------------------- saved runs

def answer_start(answer: str, n: int = 80) -> str:
    """The informative start of an answer: an LLM-free answer's entity and "(no LLM)"; else the text's start
    (a header line "[No LLM] …" shortened to "[No LLM]")."""
    m = re.search(r"(?m)^Most likely answer: (.+)$", answer or "")
    if m and answer.lstrip().startswith("[No LLM]"):
        guess = GUESS_WORDS in m.group(1)  # below the threshold (TogEngine.compose_answer)
        tag = " (no LLM, a guess)" if guess else " (no LLM)"
        return m.group(1).split(" (confidence")[0].strip()[: n - len(tag)] + tag
    lines = answer.strip().splitlines()
    if lines and lines[0].startswith("[No LLM] No answer"):  # what the run could not do is the informative part
        lines = [lines[0].removeprefix("[No LLM]").strip()] + lines[1:]
    elif lines and lines[0].startswith("[No LLM]"):
        lines = ["[No LLM]"] + lines[1:]
    text = " ".join(" ".join(lines).split())
    return text if len(text) <= n else text[: n - 1] + "…"


def run_rows(summaries: Iterable[Any], *, project: str | None = None, search: str = "") -> list[dict[str, Any]]:
    """Saved runs as table rows, newest first: only `project`'s when given (else a project column), only those
    whose question or answer as shown contains `search` (an LLM-free answer's entity, not the other candidates and
    chains its text goes on to list; an LLM's whole answer). Every saved run is listed: a run is saved only once a
    person's question is linked to the graph, so none is "abandoned" (a branch made with "Back to depth 1", a run
    stopped or left before its first step, a step-by-step run before its first Continue: unfinished, to resume)."""
    needle = search.strip().lower()
    rows = []
    for r in summaries:
        if project is not None and not same_project(r.project, project):
            continue
        if needle and needle not in r.question.lower() and needle not in answer_start(r.answer, 10**6).lower():
            continue
        row = {"run": r.run_id, "question": r.question, "time": r.created_at.replace("T", " ")[:19],
               "answer": answer_start(r.answer) if r.answer else "(unfinished: resume it)" if r.resumable else "",
               "calls": r.llm_calls, "cost $": None if r.cost_usd is None else round(r.cost_usd, 4),
               "width": r.width, "depth": r.depth, "pruner": r.pruner, "model": r.model,
               "stop": stop_words(r.stop_reason), "branch of": r.parent_run or ""}
        if project is None:
            row = {"project": project_label(r.project), **row}
        rows.append(row)
    return rows


def made_on(trace: Trace, project: str) -> bool:
    """Whether a run was made on the project at `project` (a run that names no project is taken as made there)."""
    return not trace.project or same_project(trace.project, project)


def compare_default(rows: list[dict[str, Any]], a: str) -> str:
    """Run B to compare run A with: the run it branched from, else the newest other run of the same question,
    else the newest other run."""
    by = {r["run"]: r for r in rows}
    ra = by.get(a) or {}
    if ra.get("branch of") in by:
        return ra["branch of"]
    same = [r["run"] for r in rows if r["run"] != a and r["question"] == ra.get("question")]
    others = [r["run"] for r in rows if r["run"] != a]
    return (same or others or [a])[0]


# a trace's usage counters as a person reads them (the trace's keys stay as they are)
USAGE_LABELS = {"llm_calls": "LLM calls", "prompt_tokens": "prompt tokens", "completion_tokens": "answer tokens",
                "cost_usd": "cost $", "wall_s": "seconds"}


def compare_rows(a: Trace, b: Trace) -> list[dict[str, Any]]:
    """Side-by-side facts of two traces; `same` marks rows that agree."""
    def facts(t: Trace) -> dict[str, Any]:
        cfg, st = t.config or {}, t.stats or {}
        view = answer_view(t)
        best = " → ".join([view["hops"][0][0]] + [h[2] for h in view["hops"]]) if view["hops"] else ""
        mine = PersonAnswer.from_dict(t.person_answer)  # a person's choice, never the search's answer
        return {"question": t.question, "answer (the search's)": view["entity"] or "",
                "answer chosen by a person": mine.title if mine else "",
                "stopped": stop_words(t.stop_reason), "best chain": best,
                "overrides": len(overrides(t)),
                **{k: cfg.get(k) for k in ("model", "width", "depth", "pruner", "mode")},
                **{label: st.get(k) for k, label in USAGE_LABELS.items()}}
    fa, fb = facts(a), facts(b)
    return [{"": k, "A": str(fa[k]), "B": str(fb[k]), "same": fa[k] == fb[k]} for k in fa]


_MD_ACTIVE = re.compile(r"([\\`*_{}\[\]()#!|~$<>+\-.:])")


def md_text(text: Any) -> str:
    """Data text for st.markdown: every Markdown-active character escaped, line breaks kept, bare URLs
    broken (so nothing from data becomes a link, image, emphasis or HTML)."""
    lines = str("" if text is None else text).splitlines() or [""]
    lines = [re.sub(r"(?i)\b(www)\.", "\\1\u200b.", line.replace("://", ":\u200b//")) for line in lines]
    return "  \n".join(_MD_ACTIVE.sub(r"\\\1", line) for line in lines)
