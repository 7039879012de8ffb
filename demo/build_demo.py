#!/usr/bin/env python
"""Build the "Verdant Isles" demo project from its world file, demo/world.yaml.

The world (entities, relationships, the passages that state them, the questions) is data; this script derives
what GraphRAG 3.x would store beside it (uuid5 and SHA-512 ids, degrees, text-unit links, communities), checks
it, and writes demo/output/*.parquet, demo/input/verdant_isles.txt and demo/questions.jsonl. Same world, same
bytes: every id is derived from titles or text.

Run:  python demo/build_demo.py                  (writes into demo/)
      python demo/build_demo.py --out DIR        (writes DIR/output, DIR/input, DIR/questions.jsonl)
      python demo/build_demo.py --check          (builds in memory and runs the consistency checks only)
"""
from __future__ import annotations

import hashlib
import json
import sys
import uuid
from collections import defaultdict
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import yaml

HERE = Path(__file__).resolve().parent
WORLD = HERE / "world.yaml"
sys.path.insert(0, str(HERE.parent))  # run as a script from anywhere
from tog_core.testing.schemas import SCHEMAS  # noqa: E402  (the GraphRAG 3.x tables)

Rows = list[dict[str, Any]]


def load_world(path: Path = WORLD) -> dict[str, Any]:
    return yaml.load(path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def sha512(text: str) -> str:
    return hashlib.sha512(text.encode("utf-8")).hexdigest()


def build(world: dict[str, Any]) -> tuple[dict[str, Rows], list[dict], str]:
    """The five tables, the questions and the document text."""
    ns = uuid.uuid5(uuid.NAMESPACE_DNS, world["namespace"])

    def uid(kind: str, key: str) -> str:
        return str(uuid.uuid5(ns, f"{kind}:{key}"))

    ents = [dict(zip(("title", "type", "island", "description"), e)) for e in world["entities"]]
    rels = [dict(zip(("source", "kind", "target", "units", "description"), r)) for r in world["relationships"]]
    passages: list[str] = world["passages"]
    unit_ids = [sha512(p) for p in passages]
    doc_text = "\n\n".join(passages)
    doc_id = sha512(doc_text)
    titles = {e["title"] for e in ents}
    degree: dict[str, int] = defaultdict(int)
    for r in rels:
        degree[r["source"]] += 1
        degree[r["target"]] += 1
    ent_ids = {e["title"]: uid("entity", e["title"]) for e in ents}
    rel_ids = [uid("relationship", f"{r['source']}|{r['kind']}|{r['target']}") for r in rels]
    unit_rels, unit_ents, ent_units = defaultdict(list), defaultdict(list), defaultdict(set)
    for k, r in enumerate(rels):
        for g in r["units"]:
            unit_rels[g].append(rel_ids[k])
            for t in (r["source"], r["target"]):
                if t in titles:
                    if ent_ids[t] not in unit_ents[g]:
                        unit_ents[g].append(ent_ids[t])
                    ent_units[t].add(g)

    entities = [dict(id=ent_ids[e["title"]], human_readable_id=i, title=e["title"], type=e["type"],
                     description=e["description"], text_unit_ids=[unit_ids[g] for g in sorted(ent_units[e["title"]])],
                     frequency=len(ent_units[e["title"]]), degree=degree[e["title"]]) for i, e in enumerate(ents)]
    relationships = [dict(id=rel_ids[k], human_readable_id=k, source=r["source"], target=r["target"],
                          description=r["description"], weight=float(world["kinds"][r["kind"]]),
                          combined_degree=degree[r["source"]] + degree[r["target"]],
                          text_unit_ids=[unit_ids[g] for g in sorted(r["units"])]) for k, r in enumerate(rels)]
    text_units = [dict(id=unit_ids[g], human_readable_id=g, text=p, n_tokens=max(1, round(len(p) / 4)),
                       document_id=doc_id, entity_ids=unit_ents[g], relationship_ids=unit_rels[g], covariate_ids=[])
                  for g, p in enumerate(passages)]  # n_tokens: about 4 characters a token, as cl100k roughly
    documents = [dict(id=doc_id, human_readable_id=1, title=world["document"], text=doc_text, text_unit_ids=unit_ids,
                      creation_date=world["creation_date"], metadata=None)]

    def community(num: int, level: int, parent: int, children: list[int], members: list[str]) -> dict:
        inside = set(members)
        return dict(id=uid("community", str(num)), human_readable_id=num, community=num, level=level, parent=parent,
                    children=children, title=f"Community {num}", entity_ids=[ent_ids[t] for t in members],
                    relationship_ids=[rel_ids[k] for k, r in enumerate(rels)
                                      if r["source"] in inside and r["target"] in inside],
                    text_unit_ids=[unit_ids[g] for g in sorted({g for t in members for g in ent_units[t]})],
                    period=world["period"], size=len(members))

    order = list(world["islands"]) + [None]  # None: what belongs to no island
    members = {key: [e["title"] for e in ents if e["island"] == key] for key in order}
    first = order[0]
    n0 = len(order)
    communities = [community(num, 0, -1, [n0, n0 + 1] if key == first else [], members[key])
                   for num, key in enumerate(order)]
    person = {e["title"] for e in ents if e["type"] == "PERSON"}
    communities.append(community(n0, 1, 0, [], [t for t in members[first] if t not in person]))
    communities.append(community(n0 + 1, 1, 0, [], [t for t in members[first] if t in person]))
    tables = dict(entities=entities, relationships=relationships, text_units=text_units, documents=documents,
                  communities=communities)
    return tables, make_questions(world, rels), doc_text


def make_questions(world: dict[str, Any], rels: Rows) -> list[dict]:
    """Walk each question's path of relation kinds from its topic; the ends must be exactly its gold answers."""
    out = []
    for q in world["questions"]:
        paths: list[tuple[list[int], str]] = [([], q["topic"])]
        for kind, direction in q["path"]:
            ends = ("source", "target") if direction == ">" else ("target", "source")
            paths = [(used + [k], r[ends[1]]) for used, node in paths for k, r in enumerate(rels)
                     if r["kind"] == kind and r[ends[0]] == node]
        assert sorted({end for _, end in paths}) == sorted(q["answers"]), (q["question"], paths)
        chain = [[rels[k]["source"], rels[k]["description"], rels[k]["target"]] for k in paths[0][0]]
        out.append({"question": q["question"], "topic_entities": [q["topic"]], "answers": q["answers"],
                    "hops": len(q["path"]), "chain": chain})
    return out


def check(tables: dict[str, Rows], questions: list[dict]) -> dict:
    """What the demo promises (demo/README.md): each fact stated by its passages, two missing endpoints, two
    reversed duplicates, a hub, questions whose chains connect their topic to their answer."""
    ents, rels = tables["entities"], tables["relationships"]
    units = {u["id"]: u for u in tables["text_units"]}
    titles = {e["title"] for e in ents}
    deg: dict[str, int] = defaultdict(int)
    for r in rels:
        deg[r["source"]] += 1
        deg[r["target"]] += 1
    for e in ents:
        assert e["degree"] == deg[e["title"]] >= 1 and e["frequency"] == len(e["text_unit_ids"]) >= 1, e["title"]
        assert e["description"] and e["type"], e["title"]
    for r in rels:
        assert r["combined_degree"] == deg[r["source"]] + deg[r["target"]], r["description"]
        assert 1 <= len(r["text_unit_ids"]) <= 2, r["description"]
        for u in r["text_unit_ids"]:
            assert r["source"] in units[u]["text"] and r["target"] in units[u]["text"], r["description"]
            assert r["id"] in units[u]["relationship_ids"], r["description"]
    missing = sorted({x for r in rels for x in (r["source"], r["target"])} - titles)
    pairs = {(r["source"], r["target"]) for r in rels}
    reversed_dups = sorted((s, t) for s, t in pairs if (t, s) in pairs and s < t)
    assert len(missing) == 2 and len(reversed_dups) == 2 and len(pairs) == len(rels), (missing, reversed_dups)
    assert len({e["id"] for e in ents}) == len(ents) and len({r["id"] for r in rels}) == len(rels)
    edges = {(r["source"], r["description"], r["target"]) for r in rels}
    hops: dict[int, int] = defaultdict(int)
    for q in questions:
        hops[q["hops"]] += 1
        node = q["topic_entities"][0]
        for s, d, t in q["chain"]:
            assert node in (s, t) and (s, d, t) in edges, (q["question"], node, s, d, t)
            node = t if node == s else s
        assert node in q["answers"] and len(q["chain"]) == q["hops"], q["question"]
    assert hops[2] >= 5 and hops[3] >= 3 and deg["Thornholm"] >= 40, (hops, deg["Thornholm"])
    return dict(entities=len(ents), relationships=len(rels), text_units=len(units),
                communities=len(tables["communities"]), questions=len(questions), hops=dict(sorted(hops.items())),
                missing_endpoints=missing, reversed_duplicates=reversed_dups, thornholm_degree=deg["Thornholm"],
                top_degree=sorted(((v, k) for k, v in deg.items()), reverse=True)[:5])


def write(root: Path, tables: dict[str, Rows], questions: list[dict], doc_text: str, document: str) -> None:
    (root / "output").mkdir(parents=True, exist_ok=True)
    for name, rows in tables.items():
        pq.write_table(pa.Table.from_pylist(rows, schema=SCHEMAS[name]), root / "output" / f"{name}.parquet")
    (root / "input").mkdir(exist_ok=True)
    (root / "input" / document).write_text(doc_text + "\n", encoding="utf-8")
    with open(root / "questions.jsonl", "w", encoding="utf-8") as f:
        for q in questions:
            f.write(json.dumps(q, ensure_ascii=False) + "\n")


def main(argv: list[str]) -> int:
    world = load_world()
    tables, questions, doc_text = build(world)
    summary = check(tables, questions)
    if "--check" not in argv:
        root = Path(argv[argv.index("--out") + 1]) if "--out" in argv else HERE
        write(root, tables, questions, doc_text, world["document"])
    print(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
