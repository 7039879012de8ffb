#!/usr/bin/env python
"""Check a hand-written question set against the GraphRAG output it was written for.

Every line of a questions file is one JSON object with `id`, `question`, `topic_entities`, `answers`, `hops`,
`qtype`, `answer_type` and `evidence` (optional: `answer_min_hops`). The check, per question:

- the fields are there and have the right types; ids and question texts are unique;
- every topic entity and every answer is an entity title of entities.parquet (exact, case-sensitive);
- every answer is reached from some topic entity by a simple path of exactly `hops` relationships (relationships
  are undirected here, as the search walks them; endpoints missing from entities still count as nodes);
- `evidence` holds `hops` strings, each the description of a relationship of relationships.parquet, and those
  relationships, in order, form a walk from a topic entity to an answer;
- `answer_type` is the GraphRAG `type` of at least one answer; `answer_min_hops`, when given, is the shortest
  distance from the topic entities to the nearest answer;
- `quotes`, when given, holds one phrase per hop, each found (case and spacing aside) in a text unit of that hop's
  evidence relationship: the book's own passage supports the hop.

GraphRAG 1.x outputs name their tables `create_final_entities.parquet`, ... ; both names are read.

Run:  python bench/data/check_questions.py QUESTIONS.jsonl GRAPHRAG_OUTPUT_DIR
      python bench/data/check_questions.py --all        (every questions file under bench/data)
Prints one line per problem and exits 1 if there is any; prints a one-line summary per file when all is well.
"""
from __future__ import annotations

import json
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow.parquet as pq

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
# question sets whose graph is not kept in this folder: set name -> output folder, relative to the repository
EXTERNAL_OUTPUTS = {"christmas-carol": "../shared/data/graphrag/christmas-carol-v3/output",
                    "christmas-carol-v1.2": "../shared/data/graphrag/christmas-carol-v1.2/output",
                    "operation-dulce": "../shared/data/graphrag/operation-dulce-v3/output"}
MAX_HOPS = 6  # the exact-length path search is exponential in the number of hops

REQUIRED: dict[str, type | tuple[type, ...]] = {
    "id": str, "question": str, "topic_entities": list, "answers": list, "hops": int, "qtype": str,
    "answer_type": str, "evidence": list,
}


@dataclass(kw_only=True)
class Graph:
    """What the check needs of a GraphRAG output: entity types, undirected adjacency, relationships by text."""

    types: dict[str, str | None]  # entity title -> GraphRAG type
    adjacency: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    by_description: dict[str, list[tuple[str, str]]] = field(default_factory=lambda: defaultdict(list))
    passages: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))  # description -> unit texts

    @classmethod
    def load(cls, output_dir: Path) -> Graph:
        ent = pq.read_table(table_path(output_dir, "entities"), columns=["title", "type"]).to_pydict()
        rel_path = table_path(output_dir, "relationships")
        rel_cols = ["source", "target", "description"]
        with_units = ("text_unit_ids" in pq.read_schema(rel_path).names
                      and table_path(output_dir, "text_units").is_file())
        rel = pq.read_table(rel_path, columns=rel_cols + (["text_unit_ids"] if with_units else [])).to_pydict()
        units = {}
        if with_units:
            tu = pq.read_table(table_path(output_dir, "text_units"), columns=["id", "text"]).to_pydict()
            units = dict(zip(tu["id"], tu["text"]))
        g = cls(types=dict(zip(ent["title"], ent["type"])))
        for n, (s, t, d) in enumerate(zip(rel["source"], rel["target"], rel["description"])):
            if s is None or t is None:
                continue
            g.adjacency[s].add(t)
            g.adjacency[t].add(s)
            if d is not None:
                g.by_description[d].append((s, t))
                for u in (rel["text_unit_ids"][n] or []) if with_units else []:
                    if units.get(u):
                        g.passages[d].append(units[u])
        return g

    def distances(self, sources: Iterable[str]) -> dict[str, int]:
        dist = {s: 0 for s in sources}
        frontier = list(dist)
        while frontier:
            nxt = []
            for u in frontier:
                for v in self.adjacency.get(u, ()):
                    if v not in dist:
                        dist[v] = dist[u] + 1
                        nxt.append(v)
            frontier = nxt
        return dist

    def exact_reach(self, sources: Iterable[str], hops: int) -> set[str]:
        """Entities at the end of a simple path (no entity twice) of exactly `hops` relationships."""
        out: set[str] = set()

        def walk(u: str, seen: set[str], left: int) -> None:
            if left == 0:
                out.add(u)
                return
            for v in self.adjacency.get(u, ()):
                if v not in seen:
                    seen.add(v)
                    walk(v, seen, left - 1)
                    seen.remove(v)

        for s in sources:
            walk(s, {s}, hops)
        return out

    def evidence_walks(self, starts: Iterable[str], evidence: list[str]) -> set[tuple[str, frozenset[frozenset[str]]]]:
        """Each walk following the evidence relationships in order from `starts` (either direction): the entity it
        ends at, and the relationships it took (unordered pairs of titles)."""
        walks: set[tuple[str, frozenset[frozenset[str]]]] = {(s, frozenset()) for s in starts}
        for text in evidence:
            walks = {(b if a == at else a, used | {frozenset((a, b))}) for at, used in walks
                     for a, b in self.by_description.get(text, ()) if at in (a, b)}
        return walks

    def evidence_ends(self, starts: Iterable[str], evidence: list[str]) -> set[str]:
        """Entities reached by following the evidence relationships in order from `starts` (either direction)."""
        return {end for end, _ in self.evidence_walks(starts, evidence)}


def table_path(output_dir: Path, name: str) -> Path:
    """`NAME.parquet` (GraphRAG 2.x/3.x) or `create_final_NAME.parquet` (1.x), whichever the folder has."""
    plain = Path(output_dir) / f"{name}.parquet"
    old = Path(output_dir) / f"create_final_{name}.parquet"
    return old if not plain.is_file() and old.is_file() else plain


def _fold(text: str) -> str:
    return " ".join(text.split()).casefold()


def read_questions(path: Path) -> tuple[list[tuple[int, dict]], list[str]]:
    rows, problems = [], []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as err:
            problems.append(f"{path}:{n}: not JSON ({err.msg}); each line must be one JSON object")
            continue
        if not isinstance(obj, dict):
            problems.append(f"{path}:{n}: a line must be a JSON object, got {type(obj).__name__}")
            continue
        rows.append((n, obj))
    return rows, problems


def check_question(q: dict, g: Graph, where: str) -> list[str]:
    """Problems of one question (an empty list when it is right)."""
    out = []
    for name, kind in REQUIRED.items():
        value = q.get(name)
        if value is None or not isinstance(value, kind) or isinstance(value, bool) or value in ("", []):
            out.append(f"{where}: field '{name}' missing, empty or not a {getattr(kind, '__name__', kind)}")
    if out:
        return out
    topics, answers, evidence, hops = q["topic_entities"], q["answers"], q["evidence"], q["hops"]
    for name in ("topic_entities", "answers", "evidence"):
        if not all(isinstance(x, str) and x.strip() for x in q[name]):
            out.append(f"{where}: '{name}' must be a list of non-empty strings")
    if out:
        return out
    if not 1 <= hops <= MAX_HOPS:
        return [f"{where}: hops={hops} is outside 1..{MAX_HOPS}"]
    folded = {t.casefold(): t for t in g.types}
    for name, titles in (("topic entity", topics), ("answer", answers)):
        for t in titles:
            if t not in g.types:
                hint = f" (did you mean '{folded[t.casefold()]}'?)" if t.casefold() in folded else ""
                out.append(f"{where}: {name} '{t}' is not an entity title in entities.parquet{hint}")
    for t in sorted(set(topics) & set(answers)):
        out.append(f"{where}: '{t}' is both a topic entity and an answer")
    if out:
        return out
    reach = g.exact_reach(topics, hops)
    for a in answers:
        if a not in reach:
            d = g.distances(topics).get(a)
            found = f"shortest distance {d}" if d is not None else "not connected"
            out.append(f"{where}: answer '{a}' has no simple path of exactly {hops} hops from {topics} ({found})")
    types = {g.types[a] for a in answers}
    if q["answer_type"] not in types:
        out.append(f"{where}: answer_type '{q['answer_type']}' is not the type of any answer "
                   f"({sorted(map(str, types))})")
    if len(evidence) != hops:
        out.append(f"{where}: {len(evidence)} evidence strings for {hops} hops; give one relationship description "
                   "per hop, in order")
    missing = [e for e in evidence if e not in g.by_description]
    for e in missing:
        out.append(f"{where}: evidence is not a relationship description: {e[:90]!r}")
    if not missing and len(evidence) == hops and not (g.evidence_ends(topics, evidence) & set(answers)):
        out.append(f"{where}: the evidence relationships do not lead, in order, from a topic entity to an answer")
    quotes = q.get("quotes")
    if quotes is not None:
        if not isinstance(quotes, list) or len(quotes) != hops or not all(isinstance(x, str) and x for x in quotes):
            out.append(f"{where}: 'quotes' must hold {hops} non-empty strings, one phrase of the book per hop")
        elif not missing:
            for n, (text, quote) in enumerate(zip(evidence, quotes), 1):
                if not any(_fold(quote) in _fold(p) for p in g.passages.get(text, ())):
                    out.append(f"{where}: quote {n} {quote[:60]!r} is in no text unit of that hop's relationship")
    if "answer_min_hops" in q:
        dist = g.distances(topics)
        nearest = min((dist[a] for a in answers if a in dist), default=None)
        if q["answer_min_hops"] != nearest:
            out.append(f"{where}: answer_min_hops={q['answer_min_hops']} but the nearest answer is {nearest} hops away")
    return out


def check_file(questions: Path, output_dir: Path, graph: Graph | None = None) -> tuple[list[str], list[dict]]:
    """(problems, questions read) for one questions file against one GraphRAG output folder."""
    g = graph or Graph.load(output_dir)
    rows, problems = read_questions(questions)
    ids, texts = Counter(), Counter()
    for n, q in rows:
        where = f"{questions.name}:{n} [{q.get('id', '?')}]"
        problems += check_question(q, g, where)
        ids[q.get("id")] += 1
        texts[str(q.get("question", "")).strip().casefold()] += 1
    problems += [f"{questions.name}: id {i!r} is used {c} times" for i, c in ids.items() if c > 1]
    problems += [f"{questions.name}: question {t!r} appears {c} times" for t, c in texts.items() if c > 1]
    if not rows and not problems:
        problems.append(f"{questions}: no questions")
    return problems, [q for _, q in rows]


def discover(root: Path = HERE) -> list[tuple[Path, Path]]:
    """(questions file, its GraphRAG output folder) for every questions_*.jsonl under bench/data."""
    pairs = []
    for qfile in sorted(root.glob("*/questions_*.jsonl")):
        name = qfile.parent.name
        out = (REPO / EXTERNAL_OUTPUTS[name]).resolve() if name in EXTERNAL_OUTPUTS else qfile.parent / "output"
        pairs.append((qfile, out))
    return pairs


def summary(questions: list[dict]) -> str:
    by_hops = Counter(q.get("hops") for q in questions)
    return ", ".join(f"{h}-hop {by_hops[h]}" for h in sorted(by_hops, key=str))


def main(argv: list[str]) -> int:
    if argv == ["--all"]:
        pairs = discover()
    elif len(argv) == 2:
        pairs = [(Path(argv[0]), Path(argv[1]))]
    else:
        print(__doc__.split("Run:")[1].split("Prints")[0].rstrip(), file=sys.stderr)
        return 2
    bad = 0
    for qfile, out in pairs:
        if not table_path(out, "entities").is_file() or not table_path(out, "relationships").is_file():
            print(f"{qfile}: GraphRAG output {out} has no entities.parquet/relationships.parquet")
            bad += 1
            continue
        problems, questions = check_file(qfile, out)
        for p in problems:
            print(p)
        bad += len(problems)
        if not problems:
            print(f"ok {qfile.relative_to(REPO) if qfile.is_relative_to(REPO) else qfile}: "
                  f"{len(questions)} questions ({summary(questions)})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
