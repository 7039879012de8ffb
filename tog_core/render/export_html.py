"""The standalone HTML export of a trace (`export_html`): one page, its pictures embedded as sandboxed iframes.

Data text is escaped with `html.escape`. A text cut at its cap links to its full text, written once in the "Full texts"
section at the end inside a closed <details>, which a browser does not lay out until it is opened (export_common.py:
the caps and what is shared with the Markdown export).
"""
from __future__ import annotations

import html as _html
import json
import re
from typing import Any

from tog_core.render.chains import chains_html
from tog_core.render.export_common import (ANSWER_BY, INVISIBLE, LABEL_MAX, PERSON_NOTE, QUESTION_MAX, STEP_COLUMNS,
                                           TEXT_MAX, LongTexts, as_text, evidence_of, public_trace, step_rows, supports,
                                           used_chain, own_answer_chain, config_split, confidence_caveat,
                                           stop_line, arrow_note)
from tog_core.render.frontier import frontier_html
from tog_core.tog.choice import PersonAnswer
from tog_core.tog.diagnosis import diagnosis_text

_PAGE_CSS = """body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;max-width:1100px;margin:24px auto;
padding:0 16px;color:#212529;line-height:1.45;overflow-wrap:anywhere}
table{border-collapse:collapse;margin:8px 0 16px;font-size:14px}td,th{border:1px solid #dee2e6;padding:3px 8px;
text-align:left;vertical-align:top}th{background:#f8f9fa}.muted{color:#868e96}.answer{white-space:pre-wrap;
background:#f8f9fa;padding:10px 14px;border-left:4px solid #4263eb}iframe{width:100%;border:1px solid #dee2e6}
ol li{margin-bottom:4px}blockquote{margin:4px 0 4px 12px;color:#495057}mark{background:#fff3bf}
.passage{white-space:pre-wrap}details{margin:6px 0}a.more{font-size:90%}"""


def _h(x: Any, limit: int | None = None) -> str:
    raw = "" if x is None else (json.dumps(x, ensure_ascii=False) if isinstance(x, (dict, list)) else str(x))
    s = INVISIBLE.sub("", raw)
    if limit is not None and len(s) > limit:
        s = s[: limit - 1] + "…"
    return _html.escape(s)


def _hc(x: Any, limit: int, long: LongTexts) -> str:
    """Escaped data text capped at `limit` characters; a cut text links to its full text (in a closed <details>)."""
    s = INVISIBLE.sub("", as_text(x))
    if len(s) <= limit:
        return _html.escape(s)
    return (_html.escape(s[: limit - 1]) + f'… <a class="more" href="#full-{long.ref(s)}">full text '
            f"({len(s):,} characters)</a>")


_LONG_RUN = re.compile(r"(\S{80})(?=\S)")


def _breakable(text: str) -> str:
    """Escaped text with a <wbr> after every 80 characters of an unbroken run: Chromium took 30-120 s to lay out one
    1 MB word (with or without overflow-wrap/word-break), under a second with these break points. The text (and
    what is copied) is unchanged."""
    marked = _LONG_RUN.sub("\\1\x00", INVISIBLE.sub("", text))  # NUL: removed from data above, so only ours
    return _html.escape(marked).replace("\x00", "<wbr>")


def _passage(text: str, said: str, long: LongTexts) -> str:
    """A source passage with its supporting sentence marked, cut to TEXT_MAX characters around that sentence."""
    text = INVISIBLE.sub("", text)
    said = INVISIBLE.sub("", said)
    at = text.find(said) if said else -1
    start = 0
    if len(text) > TEXT_MAX and at > TEXT_MAX // 4:
        start = min(at - TEXT_MAX // 4, len(text) - TEXT_MAX)
    end = start + TEXT_MAX
    if at < start or at + len(said) > end:
        at = -1
    shown = _h(text[start:end]) if at < 0 else (_h(text[start:at]) + f"<mark>{_h(said)}</mark>"
                                                + _h(text[at + len(said):end]))
    if start > 0:
        shown = "…" + shown
    if end < len(text) or start > 0:
        shown += f'… <a class="more" href="#full-{long.ref(text)}">full text ({len(text):,} characters)</a>'
    return shown


def _html_table(header: list[str], rows: list[list[Any]]) -> str:
    head = "".join(f"<th>{_h(c)}</th>" for c in header)
    body = "".join("<tr>" + "".join(f"<td>{_h(c, 300)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def _frame(page: str, canvas_px: int) -> str:
    """A picture page inside a sandboxed iframe (scripts run in an opaque origin; srcdoc attribute-escaped)."""
    return (f'<iframe sandbox="allow-scripts" style="height:{canvas_px + 56}px" '
            f'srcdoc="{_html.escape(page, quote=True)}"></iframe>')


def export_html(trace: dict[str, Any]) -> str:
    t = public_trace(trace)
    long = LongTexts(t)
    by = t.get("answer_by") or ""
    parts = [f"<h1>{_hc(t.get('question'), QUESTION_MAX, long)}</h1>",
             f"<p class=\"muted\">project {_h(t.get('project'), LABEL_MAX)} · run {_h(t.get('run_id') or '–', 80)} · "
             f"stop reason {_h(stop_line(t.get('stop_reason')), 120)}</p>"]
    if t.get("error"):
        parts.append(f"<p><strong>Error:</strong> {_hc(t.get('error'), TEXT_MAX, long)}</p>")
    parts.append("<h2>Answer</h2>")
    if by:
        parts.append(f"<p class=\"muted\">{_h(ANSWER_BY.get(by, by))}.</p>")
    parts.append(f"<div class=\"answer\">{_hc(long.inside(as_text(t.get('answer') or '(no answer)')), TEXT_MAX, long)}"
                 "</div>")
    if note := arrow_note(t.get("answer")):
        parts.append(f"<p class=\"muted\">{_h(note)}</p>")
    if caveat := confidence_caveat(t):
        parts.append(f"<p class=\"muted\">{_h(caveat)}</p>")
    if mine := PersonAnswer.from_dict(t.get("person_answer")):
        parts.append(f"<h2>A person's choice of answer</h2><p class=\"muted\">{_h(PERSON_NOTE)}</p>"
                     f"<ul class=\"person-answer\"><li>chosen: <strong>{_hc(mine.title, LABEL_MAX, long)}</strong> "
                     f"(entity {_h(mine.entity_id or '–', LABEL_MAX)}, at {_h(mine.at or '–', 80)})</li>"
                     f"<li>the search's answer: {_hc(t.get('answer_entity') or 'none', LABEL_MAX, long)}</li></ul>")
    chains = [c for c in t.get("chains") or [] if c]
    parts.append("<h2>Reasoning chains</h2>")
    used = used_chain(t)
    if own := own_answer_chain(t):
        items = "".join(f"<li><strong>{_hc(link.get('source'), LABEL_MAX, long)}</strong> → "
                        f"{_hc(link.get('relation'), LABEL_MAX, long)} → <strong>"
                        f"{_hc(link.get('target'), LABEL_MAX, long)}</strong></li>" for link in own[0])
        parts.append(f"<h3>The answer's own chain ({_h(own[1])})</h3><ol>{items}</ol>")
    for ci, chain in enumerate(chains, start=1):
        items = "".join(
            f"<li><strong>{_hc(link.get('source'), LABEL_MAX, long)}</strong> → "
            f"{_hc(link.get('relation'), LABEL_MAX, long)} → <strong>{_hc(link.get('target'), LABEL_MAX, long)}"
            f"</strong> <span class=\"muted\">(relationship {_h(link.get('relationship_id'), LABEL_MAX)}; evidence "
            f"{_h(', '.join(map(str, link.get('text_unit_ids') or [])), LABEL_MAX)})</span>"
            + "".join(f"<blockquote><mark>{_hc(x, TEXT_MAX, long)}</mark></blockquote>" for x in supports(t, link))
            + "</li>" for link in chain)
        parts.append(f"<h3>Chain {ci}{' (used for the answer)' if ci == used else ''}</h3><ol>{items}</ol>")
    if chains:
        parts.append(_frame(chains_html(t, height="420px"), 420))
    else:
        parts.append("<p class=\"muted\">No chains.</p>")
    if t.get("diagnosis"):
        parts.append("<h2>Why not …?</h2>")
        parts += [f"<p>{_hc(long.inside(diagnosis_text([d])), TEXT_MAX, long)}</p>" for d in t["diagnosis"]]
    parts.append("<h2>Search</h2>")
    parts.append(_frame(frontier_html(t, height="560px", marks=t.get("diagnosis") or ()), 560))
    evidence = evidence_of(t)
    if evidence:
        parts.append("<h2>Source text</h2>")
        for uid, ev in evidence.items():
            text, said = str(ev.get("text") or ""), str(ev.get("support") or "")
            body = _passage(text, said, long)
            parts.append(f"<details><summary>{_h(uid, 80)}: {_h(said or text, 160)}</summary>"
                         f"<p class=\"passage\">{body}</p></details>")
    parts.append("<h2>Steps</h2>")
    parts.append(_html_table(STEP_COLUMNS, step_rows(t.get("steps") or [])))
    parts.append("<h2>Configuration</h2>")
    rows, unused = config_split(t.get("config"))
    parts.append(_html_table(["setting", "value"], rows))
    if unused:  # recorded in the trace (the JSON export keeps them), read by no step of a run without an LLM
        parts.append(f"<p class=\"muted\">Without an LLM these settings were not used: {_h(', '.join(unused))}.</p>")
    if t.get("stats"):
        parts.append("<h2>Stats</h2>")
        parts.append(_html_table(["stat", "value"], [[k, v] for k, v in t["stats"].items()]))
    if long.ids:
        parts.append("<h2>Full texts</h2>")
        parts += [f"<details><summary>[{k}] {len(text):,} characters: {_h(text, 80)}</summary>"
                  f"<p class=\"passage\" id=\"full-{k}\">{_breakable(text)}</p></details>"
                  for text, k in long.ids.items()]
    return ("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>ToG trace: {_h(t.get('question'), 120)}</title><style>{_PAGE_CSS}</style></head>\n<body>\n"
            + "\n".join(parts) + "\n</body></html>\n")
