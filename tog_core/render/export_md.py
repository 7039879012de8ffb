"""The Markdown export of a trace (`export_markdown`) and the escaping of data text for Markdown (`md`, `md_block`).

Data text writes `&<>` as entities and backslash-escapes every other character that could start a link, image,
emphasis, code span or table cell, and breaks bare URLs. A text cut at its cap says "full text [k] below" and is
written in full once, in the "Full texts" section at the end (export_common.py: the caps and what is shared with the
HTML export).
"""
from __future__ import annotations

import json
import re
from typing import Any

from tog_core.render.export_common import (ANSWER_BY, INVISIBLE, LABEL_MAX, PERSON_NOTE, QUESTION_MAX, STEP_COLUMNS,
                                           TEXT_MAX, LongTexts, as_text, evidence_of, public_trace, step_overrides,
                                           step_rows, supports, used_chain, own_answer_chain, config_split,
                                           confidence_caveat, stop_line, arrow_note)
from tog_core.tog.choice import PersonAnswer
from tog_core.tog.diagnosis import diagnosis_text
from tog_core.tog.trace import outcome_change

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#!|~$])")


def md(text: Any, limit: int | None = None) -> str:
    """Inline Markdown for data: one line; `&<>` as entities (safe in every renderer, including those that
    don't honour `\\<`), other active characters backslash-escaped, bare URLs broken with a zero-width space."""
    s = " ".join(INVISIBLE.sub("", "" if text is None else str(text)).split())
    if limit is not None and len(s) > limit:
        s = s[: limit - 1] + "…"
    s = _MD_SPECIAL.sub(r"\\\1", s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;"))
    s = s.replace("://", ":\u200b//")  # no autolink of https://…
    return re.sub(r"(?i)\b(www)\.", "\\1\u200b.", s)  # nor of www.…


def md_block(text: Any) -> str:
    """Multi-line data (an answer): each line escaped like `md`, paragraphs kept, no block syntax possible
    (headings, lists, quotes, code fences and indented code are all neutralised)."""
    lines = ("" if text is None else str(text)).replace("\r\n", "\n").split("\n")
    out = []
    for line in lines:
        esc = md(line)
        esc = re.sub(r"^(\d+)([.)])", r"\1\\\2", esc)  # ordered-list marker
        esc = re.sub(r"^([-+=])", r"\\\1", esc)  # bullet, setext underline
        out.append(esc)
    return "  \n".join(out).replace("  \n  \n", "\n\n")


def _mc(x: Any, limit: int, long: LongTexts) -> str:
    """Inline Markdown for data capped at `limit` characters; a cut text says where it is in full."""
    s = as_text(x)
    if len(s) <= limit:
        return md(s)
    return md(s[: limit - 1]) + f"… *(full text [{long.ref(s)}] below)*"


def _mc_block(x: Any, limit: int, long: LongTexts) -> str:
    s = long.inside(as_text(x))
    if len(s) <= limit:
        return md_block(s)
    return md_block(s[: limit - 1] + "…") + f"\n\n*(full text [{long.ref(s)}] below)*"


def _cell(x: Any, limit: int = 300) -> str:
    if isinstance(x, float):
        x = f"{x:.4g}"
    elif isinstance(x, (dict, list)):
        x = json.dumps(x, ensure_ascii=False)
    return md(x, limit) or " "


def _table(header: list[str], rows: list[list[Any]]) -> list[str]:
    lines = ["| " + " | ".join(md(h) for h in header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return lines


def export_markdown(trace: dict[str, Any]) -> str:
    t = public_trace(trace)
    long = LongTexts(t)
    out = [f"# {_mc(t.get('question'), QUESTION_MAX, long)}", ""]
    meta: list[list[Any]] = [["project", t.get("project")], ["run", t.get("run_id")], ["created", t.get("created_at")],
                             ["stop reason", stop_line(t.get("stop_reason")) if t.get("stop_reason") else None],
                             ["branched from", t.get("parent_run")]]
    out += _table(["field", "value"], [r for r in meta if r[1] not in (None, "")]) + [""]
    if t.get("error"):
        out += [f"**Error:** {_mc(t.get('error'), TEXT_MAX, long)}", ""]
    out += ["## Configuration", ""]
    rows, unused = config_split(t.get("config"))
    out += _table(["setting", "value"], rows) + [""]
    if unused:  # recorded in the trace (the JSON export keeps them), read by no step of a run without an LLM
        out += [f"*Without an LLM these settings were not used: {md(', '.join(unused))}.*", ""]

    out += ["## Answer", ""]
    by = t.get("answer_by") or ""
    if by == "chains":
        out += ["*Composed from the reasoning chains without an LLM (answer\\_by = chains).*", ""]
    elif by:
        out += [f"*{md(ANSWER_BY.get(by, by))}.*", ""]
    out += [_mc_block(t.get("answer"), TEXT_MAX, long) or "*(no answer)*", ""]
    if note := arrow_note(t.get("answer")):
        out += [f"*{md(note)}*", ""]
    if caveat := confidence_caveat(t):
        out += [f"*{md(caveat)}*", ""]
    if mine := PersonAnswer.from_dict(t.get("person_answer")):
        out += ["## A person's choice of answer", "", f"*{md(PERSON_NOTE)}*", "",
                f"- chosen: **{_mc(mine.title, LABEL_MAX, long)}** (entity {md(mine.entity_id or '–', LABEL_MAX)}, "
                f"at {md(mine.at or '–', 80)})",
                f"- the search's answer: {_mc(t.get('answer_entity') or 'none', LABEL_MAX, long)}", ""]

    seeds = t.get("seeds") or []
    out += ["## Topic entities", ""]
    out += [f"- {_mc(s.get('title'), LABEL_MAX, long)} ({md(s.get('how'))}, score {_cell(s.get('score', ''))})"
            for s in seeds] or ["*(none)*"]
    out += ["", "## Reasoning chains", ""]
    chains = [c for c in t.get("chains") or [] if c]
    if not chains:
        out += ["*(no chains)*", ""]
    used = used_chain(t)
    if own := own_answer_chain(t):
        out += [f"### The answer's own chain ({md(own[1])})", ""]
        out += [f"{hop}. **{_mc(link.get('source'), LABEL_MAX, long)}** → "
                f"{_mc(link.get('relation'), LABEL_MAX, long)} → **{_mc(link.get('target'), LABEL_MAX, long)}** "
                f"(relationship {md(link.get('relationship_id'), LABEL_MAX)})"
                for hop, link in enumerate(own[0], start=1)] + [""]
    for ci, chain in enumerate(chains, start=1):
        out += [f"### Chain {ci}" + (" (used for the answer)" if ci == used else ""), ""]
        for hop, link in enumerate(chain, start=1):
            units = ", ".join(md(u, LABEL_MAX) for u in link.get("text_unit_ids") or []) or "none"
            out.append(f"{hop}. **{_mc(link.get('source'), LABEL_MAX, long)}** → "
                       f"{_mc(link.get('relation'), LABEL_MAX, long)} → "
                       f"**{_mc(link.get('target'), LABEL_MAX, long)}** (score {_cell(link.get('score', ''))}; "
                       f"relationship {md(link.get('relationship_id'), LABEL_MAX)}; evidence text units: {units})")
            for said in supports(t, link):
                out.append(f"   > “{_mc(said, TEXT_MAX, long)}”")
        out.append("")
    if t.get("diagnosis"):
        out += ["## Why not …?", ""] + [_mc_block(diagnosis_text([d]), TEXT_MAX, long) + "\n" for d in t["diagnosis"]]
    evidence = evidence_of(t)
    if evidence:
        out += ["## Source text", ""]
        for uid, ev in evidence.items():
            out += [f"### {md(uid, LABEL_MAX)}", ""]
            if ev.get("support"):
                out += [f"Supporting sentence: **{_mc(ev['support'], TEXT_MAX, long)}**", ""]
            out += [_mc_block(ev.get("text"), TEXT_MAX, long), ""]

    steps = t.get("steps") or []
    out += ["## Steps", ""]
    out += _table(STEP_COLUMNS, step_rows(steps)) + [""]
    details = []
    for i, s in enumerate(steps, start=1):
        where = f"step {i} (depth {md(s.get('depth'))}, {md(s.get('stage'))})"
        for f in s.get("fallbacks") or []:
            details.append(f"- {where}: fallback {md(f.get('name'))}: {md(f.get('detail'), 300)}")
        done = step_overrides(s)
        if s.get("stage") == "evaluate" and done:  # one choice of outcome
            auto_label, person_label = (o.get("label") or o.get("id") or "" for o in outcome_change(done))
            details.append(f"- {where}: ✎ what next: automatic “{_mc(auto_label, LABEL_MAX, long)}”, person "
                           f"“{_mc(person_label, LABEL_MAX, long)}”")
            continue
        for o in done:
            was, now = ("kept" if o.get(k) else "pruned" for k in ("auto_kept", "kept"))
            details.append(f"- {where}: ✎ {_mc(o.get('label') or o.get('id'), LABEL_MAX, long)}: automatic {was}, "
                           f"person {now}")
    if details:
        out += ["### Fallbacks and overrides", ""] + details + [""]
    stats = t.get("stats") or {}
    if stats:
        out += ["## Stats", ""] + _table(["stat", "value"], [[k, v] for k, v in stats.items()]) + [""]
    if long.ids:
        out += ["## Full texts", ""]
        for text, k in long.ids.items():
            out += [f"### [{k}] ({len(text):,} characters)", "", md_block(text), ""]
    return "\n".join(out)
