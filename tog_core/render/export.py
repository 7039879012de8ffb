"""What the app's export buttons and `python -m tog_core export` write: JSON, Markdown, standalone HTML.

Every export starts from `public_trace`, which drops any secret-looking field (traces carry none by
design; this is a second line of defence). Data text is escaped for the target format: Markdown
writes `&<>` as entities and backslash-escapes every other character that could start a link, image,
emphasis, code span or table cell, and breaks bare URLs; HTML uses `html.escape` and embeds pictures as
sandboxed iframes. A trace that carries `evidence` (app/views.with_evidence: text-unit id → text and its supporting
sentence) exports the source text of every link: the supporting sentence under each link, the passages in full in
a "Source text" section. A trace with `diagnosis` ("why not X?") exports it in words.

Long data text is capped where it is shown (titles and relation texts at LABEL_MAX characters, answers, passages and
supporting sentences at TEXT_MAX) and each cut text is written in full once, in a "Full texts" section at the end, one
click away (HTML: a link to it inside a closed <details>, which a browser does not lay out until it is opened;
Markdown: "full text [k] below"). A long title inside the answer is shown capped there too, so a 1 MB title costs the
export 1 MB, not one copy per place it appears. JSON exports keep the data as it is.
"""
from __future__ import annotations

import html as _html
import json
import re
from typing import Any

from tog_core.render.chains import answer_chain_index, answer_own_chain, chains_html
from tog_core.render.frontier import frontier_html, overridden_ids
from tog_core.tog.choice import PersonAnswer
from tog_core.tog.diagnosis import diagnosis_text
from tog_core.tog.trace import outcome_change

FORMATS = ("json", "md", "html")
_SECRET_KEY = re.compile(r"(?i)^(?:.*[_-])?(?:api[_-]?key|apikey|secret|password|passwd|authorization|"
                         r"access[_-]?token|auth[_-]?token|bearer|credentials?)$")
_SECRET_VALUE = re.compile(r"\b(?:sk|pk|rk)-[A-Za-z0-9_-]{16,}|\bBearer\s+\S{12,}")
_INVISIBLE = re.compile("[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]")
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#!|~$])")
LABEL_MAX = 200  # a title or relation text as shown in an export
TEXT_MAX = 4_000  # an answer, a passage or a supporting sentence as shown
QUESTION_MAX = 500
_ANSWER_BY = {"llm": "Written by the LLM", "chains": "Composed from the reasoning chains, without an LLM"}
PERSON_NOTE = ("Chosen by a person (“This is the answer”), not by the search: kept apart from the search's answer "
               "and never counted as it.")


def _scrub(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _scrub(v) for k, v in obj.items() if not (isinstance(k, str) and _SECRET_KEY.match(k))}
    if isinstance(obj, list):
        return [_scrub(v) for v in obj]
    if isinstance(obj, str) and _SECRET_VALUE.search(obj):
        return _SECRET_VALUE.sub("[redacted]", obj)
    return obj


def _text(x: Any) -> str:
    return "" if x is None else (json.dumps(x, ensure_ascii=False) if isinstance(x, (dict, list)) else str(x))


class _Long:
    """The texts one export shows cut: each numbered once, written in full once in the "Full texts" section."""

    def __init__(self, trace: dict[str, Any]) -> None:
        self.ids: dict[str, int] = {}
        names = {_text(link.get(k)) for c in trace.get("chains") or [] for link in c or [] if isinstance(link, dict)
                 for k in ("source", "target", "relation")}
        names |= {_text(s.get("title")) for s in trace.get("seeds") or [] if isinstance(s, dict)}
        self._names = sorted((n for n in names if len(n) > LABEL_MAX), key=len, reverse=True)

    def ref(self, text: str) -> int:
        return self.ids.setdefault(text, len(self.ids) + 1)

    def inside(self, text: str) -> str:
        """Text (an answer, a diagnosis) with every long entity title or relation text in it shown capped: those
        are one click away where the chains show them."""
        for name in self._names:
            if name in text:
                text = text.replace(name, name[: LABEL_MAX - 1] + "…")
        return text


def public_trace(trace: dict[str, Any]) -> dict[str, Any]:
    """A copy of the trace without api_key-like fields or key-looking values (anywhere, config included)."""
    return _scrub(trace)


def export_json(trace: dict[str, Any]) -> str:
    return json.dumps(public_trace(trace), ensure_ascii=False, indent=2) + "\n"


# ---------------------------------------------------------------------------------------------- markdown

def md(text: Any, limit: int | None = None) -> str:
    """Inline Markdown for data: one line; `&<>` as entities (safe in every renderer, including those that
    don't honour `\\<`), other active characters backslash-escaped, bare URLs broken with a zero-width space."""
    s = " ".join(_INVISIBLE.sub("", "" if text is None else str(text)).split())
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


def _mc(x: Any, limit: int, long: _Long) -> str:
    """Inline Markdown for data capped at `limit` characters; a cut text says where it is in full."""
    s = _text(x)
    if len(s) <= limit:
        return md(s)
    return md(s[: limit - 1]) + f"… *(full text [{long.ref(s)}] below)*"


def _mc_block(x: Any, limit: int, long: _Long) -> str:
    s = long.inside(_text(x))
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


def _used_chain(t: dict[str, Any]) -> int | None:
    """The chain (1-based) the answer came along, as the chains picture marks it: the one the ranked answer's own
    chain starts, else the best (1); None when the answer's chain is none of the run's (a number of hops searched
    before the run)."""
    at = answer_chain_index(t)
    if at is not None:
        return at + 1
    return None if answer_own_chain(t) else 1


def _decisions(step: dict[str, Any]) -> int:
    """A person's decisions at a step: at an evaluate step choosing the other outcome is one (both outcomes are
    recorded as changed)."""
    n = len(_overrides(step))
    return min(n, 1) if step.get("stage") == "evaluate" else n


def _overrides(step: dict[str, Any]) -> list[dict[str, Any]]:
    recorded = [o for o in step.get("overrides") or [] if isinstance(o, dict)]
    if recorded:
        return recorded
    ids = overridden_ids(step)
    return [{"id": c.get("id"), "label": c.get("label"), "auto_kept": c.get("auto_kept"), "kept": c.get("kept")}
            for c in step.get("candidates") or [] if str(c.get("id")) in ids]


def _evidence(t: dict[str, Any]) -> dict[str, dict[str, str]]:
    ev = t.get("evidence")
    return {str(k): v for k, v in ev.items() if isinstance(v, dict)} if isinstance(ev, dict) else {}


def _supports(t: dict[str, Any], link: dict[str, Any]) -> list[str]:
    """The supporting sentences of a link's source text (distinct, in order), when the trace carries them."""
    ev = _evidence(t)
    out = [ev[str(u)].get("support") or "" for u in link.get("text_unit_ids") or [] if str(u) in ev]
    return list(dict.fromkeys(x for x in out if x))


def _step_rows(steps: list[dict[str, Any]]) -> list[list[Any]]:
    rows = []
    for i, s in enumerate(steps, start=1):
        cands = s.get("candidates") or []
        verdict = s.get("verdict") or {}
        note = s.get("note") or ""
        if verdict:
            note = (f"sufficient: {'yes' if verdict.get('sufficient') else 'no'}"
                    + (f" ({verdict.get('reason')})" if verdict.get("reason") else "") + (f"; {note}" if note else ""))
        rows.append([i, s.get("depth"), s.get("stage"), len(cands), sum(1 for c in cands if c.get("kept")),
                     s.get("llm_calls", 0), f"{s.get('prompt_tokens', 0)}/{s.get('completion_tokens', 0)}",
                     s.get("cache_hits", 0), len(s.get("fallbacks") or []), _decisions(s),
                     f"{float(s.get('wall_s') or 0):.2f}", note])
    return rows


def export_markdown(trace: dict[str, Any]) -> str:
    t = public_trace(trace)
    long = _Long(t)
    out = [f"# {_mc(t.get('question'), QUESTION_MAX, long)}", ""]
    meta = [["project", t.get("project")], ["run", t.get("run_id")], ["created", t.get("created_at")],
            ["stop reason", t.get("stop_reason")], ["branched from", t.get("parent_run")]]
    out += _table(["field", "value"], [r for r in meta if r[1] not in (None, "")]) + [""]
    if t.get("error"):
        out += [f"**Error:** {_mc(t.get('error'), TEXT_MAX, long)}", ""]
    out += ["## Configuration", ""]
    out += _table(["setting", "value"], [[k, v] for k, v in (t.get("config") or {}).items()]) + [""]

    out += ["## Answer", ""]
    by = t.get("answer_by") or ""
    if by == "chains":
        out += ["*Composed from the reasoning chains without an LLM (answer\\_by = chains).*", ""]
    elif by:
        out += [f"*{md(_ANSWER_BY.get(by, by))}.*", ""]
    out += [_mc_block(t.get("answer"), TEXT_MAX, long) or "*(no answer)*", ""]
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
    used = _used_chain(t)
    for ci, chain in enumerate(chains, start=1):
        out += [f"### Chain {ci}" + (" (used for the answer)" if ci == used else ""), ""]
        for hop, link in enumerate(chain, start=1):
            units = ", ".join(md(u, LABEL_MAX) for u in link.get("text_unit_ids") or []) or "none"
            out.append(f"{hop}. **{_mc(link.get('source'), LABEL_MAX, long)}** → "
                       f"{_mc(link.get('relation'), LABEL_MAX, long)} → "
                       f"**{_mc(link.get('target'), LABEL_MAX, long)}** (score {_cell(link.get('score', ''))}; "
                       f"relationship {md(link.get('relationship_id'), LABEL_MAX)}; evidence text units: {units})")
            for said in _supports(t, link):
                out.append(f"   > “{_mc(said, TEXT_MAX, long)}”")
        out.append("")
    if t.get("diagnosis"):
        out += ["## Why not …?", ""] + [_mc_block(diagnosis_text([d]), TEXT_MAX, long) + "\n" for d in t["diagnosis"]]
    evidence = _evidence(t)
    if evidence:
        out += ["## Source text", ""]
        for uid, ev in evidence.items():
            out += [f"### {md(uid, LABEL_MAX)}", ""]
            if ev.get("support"):
                out += [f"Supporting sentence: **{_mc(ev['support'], TEXT_MAX, long)}**", ""]
            out += [_mc_block(ev.get("text"), TEXT_MAX, long), ""]

    steps = t.get("steps") or []
    out += ["## Steps", ""]
    out += _table(["#", "depth", "stage", "candidates", "kept", "LLM calls", "tokens (prompt/completion)",
                   "cache hits", "fallbacks", "overrides", "wall s", "note"], _step_rows(steps)) + [""]
    details = []
    for i, s in enumerate(steps, start=1):
        where = f"step {i} (depth {md(s.get('depth'))}, {md(s.get('stage'))})"
        for f in s.get("fallbacks") or []:
            details.append(f"- {where}: fallback {md(f.get('name'))}: {md(f.get('detail'), 300)}")
        done = _overrides(s)
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


# ---------------------------------------------------------------------------------------------- html

_PAGE_CSS = """body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;max-width:1100px;margin:24px auto;
padding:0 16px;color:#212529;line-height:1.45;overflow-wrap:anywhere}
table{border-collapse:collapse;margin:8px 0 16px;font-size:14px}td,th{border:1px solid #dee2e6;padding:3px 8px;
text-align:left;vertical-align:top}th{background:#f8f9fa}.muted{color:#868e96}.answer{white-space:pre-wrap;
background:#f8f9fa;padding:10px 14px;border-left:4px solid #4263eb}iframe{width:100%;border:1px solid #dee2e6}
ol li{margin-bottom:4px}blockquote{margin:4px 0 4px 12px;color:#495057}mark{background:#fff3bf}
.passage{white-space:pre-wrap}details{margin:6px 0}a.more{font-size:90%}"""


def _h(x: Any, limit: int | None = None) -> str:
    raw = "" if x is None else (json.dumps(x, ensure_ascii=False) if isinstance(x, (dict, list)) else str(x))
    s = _INVISIBLE.sub("", raw)
    if limit is not None and len(s) > limit:
        s = s[: limit - 1] + "…"
    return _html.escape(s)


def _hc(x: Any, limit: int, long: _Long) -> str:
    """Escaped data text capped at `limit` characters; a cut text links to its full text (in a closed <details>)."""
    s = _INVISIBLE.sub("", _text(x))
    if len(s) <= limit:
        return _html.escape(s)
    return (_html.escape(s[: limit - 1]) + f'… <a class="more" href="#full-{long.ref(s)}">full text '
            f"({len(s):,} characters)</a>")


_LONG_RUN = re.compile(r"(\S{80})(?=\S)")


def _breakable(text: str) -> str:
    """Escaped text with a <wbr> after every 80 characters of an unbroken run: Chromium took 30-120 s to lay out one
    1 MB word (with or without overflow-wrap/word-break), under a second with these break points. The text (and
    what is copied) is unchanged."""
    marked = _LONG_RUN.sub("\\1\x00", _INVISIBLE.sub("", text))  # NUL: removed from data above, so only ours
    return _html.escape(marked).replace("\x00", "<wbr>")


def _passage(text: str, said: str, long: _Long) -> str:
    """A source passage with its supporting sentence marked, cut to TEXT_MAX characters around that sentence."""
    text = _INVISIBLE.sub("", text)
    said = _INVISIBLE.sub("", said)
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
    long = _Long(t)
    by = t.get("answer_by") or ""
    parts = [f"<h1>{_hc(t.get('question'), QUESTION_MAX, long)}</h1>",
             f"<p class=\"muted\">project {_h(t.get('project'), LABEL_MAX)} · run {_h(t.get('run_id') or '–', 80)} · "
             f"stop reason {_h(t.get('stop_reason') or '–', 80)}</p>"]
    if t.get("error"):
        parts.append(f"<p><strong>Error:</strong> {_hc(t.get('error'), TEXT_MAX, long)}</p>")
    parts.append("<h2>Answer</h2>")
    if by:
        parts.append(f"<p class=\"muted\">{_h(_ANSWER_BY.get(by, by))}.</p>")
    parts.append(f"<div class=\"answer\">{_hc(long.inside(_text(t.get('answer') or '(no answer)')), TEXT_MAX, long)}"
                 "</div>")
    if mine := PersonAnswer.from_dict(t.get("person_answer")):
        parts.append(f"<h2>A person's choice of answer</h2><p class=\"muted\">{_h(PERSON_NOTE)}</p>"
                     f"<ul class=\"person-answer\"><li>chosen: <strong>{_hc(mine.title, LABEL_MAX, long)}</strong> "
                     f"(entity {_h(mine.entity_id or '–', LABEL_MAX)}, at {_h(mine.at or '–', 80)})</li>"
                     f"<li>the search's answer: {_hc(t.get('answer_entity') or 'none', LABEL_MAX, long)}</li></ul>")
    chains = [c for c in t.get("chains") or [] if c]
    parts.append("<h2>Reasoning chains</h2>")
    used = _used_chain(t)
    for ci, chain in enumerate(chains, start=1):
        items = "".join(
            f"<li><strong>{_hc(link.get('source'), LABEL_MAX, long)}</strong> → "
            f"{_hc(link.get('relation'), LABEL_MAX, long)} → <strong>{_hc(link.get('target'), LABEL_MAX, long)}"
            f"</strong> <span class=\"muted\">(relationship {_h(link.get('relationship_id'), LABEL_MAX)}; evidence "
            f"{_h(', '.join(map(str, link.get('text_unit_ids') or [])), LABEL_MAX)})</span>"
            + "".join(f"<blockquote><mark>{_hc(x, TEXT_MAX, long)}</mark></blockquote>" for x in _supports(t, link))
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
    evidence = _evidence(t)
    if evidence:
        parts.append("<h2>Source text</h2>")
        for uid, ev in evidence.items():
            text, said = str(ev.get("text") or ""), str(ev.get("support") or "")
            body = _passage(text, said, long)
            parts.append(f"<details><summary>{_h(uid, 80)}: {_h(said or text, 160)}</summary>"
                         f"<p class=\"passage\">{body}</p></details>")
    parts.append("<h2>Steps</h2>")
    parts.append(_html_table(["#", "depth", "stage", "candidates", "kept", "LLM calls", "tokens (prompt/completion)",
                              "cache hits", "fallbacks", "overrides", "wall s", "note"],
                             _step_rows(t.get("steps") or [])))
    parts.append("<h2>Configuration</h2>")
    parts.append(_html_table(["setting", "value"], [[k, v] for k, v in (t.get("config") or {}).items()]))
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


EXPORTERS = {"json": export_json, "md": export_markdown, "html": export_html}
