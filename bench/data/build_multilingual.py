#!/usr/bin/env python
"""Build the two small multilingual GraphRAG 3.x projects of bench/data from their hand-written sources.

    bench/data/fr-atelier/world.yaml   Vézenay, a French village of clockmakers (French prose and relations)
    bench/data/zh-chayuan/world.yaml   青山茶园, a Chinese tea garden and its valley (Chinese prose and relations)

Each world.yaml holds the text units (original prose), the entities (title, type, description, aliases used
only for checking) and one line per relationship ("source | target | weight | text units | description").
This script turns them into the tables GraphRAG 3.x writes (entities, relationships, text_units, documents; same
columns and Arrow types as a real index run) in <world>/output/. Ids are uuid5 values of the titles; text unit
and document ids are SHA-512 hashes of their text, as GraphRAG makes them. Nothing is random: two runs write
identical files.

The build refuses a world whose sources disagree: a relationship endpoint that is not an entity, a relationship
whose text units do not mention both of its endpoints, a text unit or entity that no relationship uses, an
unknown entity type, a duplicate title or relationship.

Run:  python bench/data/build_multilingual.py            (write both output/ folders)
      python bench/data/build_multilingual.py --check    (build in memory; fail if the committed files differ)
"""
from __future__ import annotations

import hashlib
import re
import sys
import uuid
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import yaml

HERE = Path(__file__).resolve().parent
WORLDS = ("fr-atelier", "zh-chayuan")
TYPES = frozenset({"PERSON", "ORGANIZATION", "GEO", "EVENT", "OBJECT"})
CREATION_DATE = "2025-06-01 09:00:00 +0000"
_CJK = re.compile(r"[\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a script from anywhere
from tog_core.testing.schemas import SCHEMAS  # noqa: E402  (the GraphRAG 3.x tables)


class WorldError(ValueError):
    """The sources of a world disagree with each other; the message lists every problem."""


@dataclass(frozen=True, kw_only=True)
class Relationship:
    source: str
    target: str
    weight: float
    units: tuple[str, ...]
    description: str


@dataclass(frozen=True, kw_only=True)
class World:
    name: str
    document: str
    namespace: uuid.UUID
    units: dict[str, str]  # key -> prose, in document order
    entities: list[dict]  # title, type, description, aliases
    relationships: list[Relationship]


def load_world(folder: Path) -> World:
    """Read and validate <folder>/world.yaml. Raises WorldError naming every problem."""
    path = folder / "world.yaml"
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    problems: list[str] = []
    units = {str(k): " ".join(str(v).split()) for k, v in raw["text_units"].items()}
    entities = [dict(e, aliases=list(e.get("aliases", []))) for e in raw["entities"]]
    rels = []
    for n, line in enumerate(raw["relationships"].splitlines(), 1):
        if not line.strip():
            continue
        parts = [p.strip() for p in line.split("|", 4)]
        if len(parts) != 5:
            problems.append(f"{path}: relationship line {n} needs 5 fields separated by '|': {line[:60]!r}")
            continue
        src, dst, weight, keys, desc = parts
        rels.append(Relationship(source=src, target=dst, weight=float(weight),
                                 units=tuple(k.strip() for k in keys.split(";")), description=desc))
    world = World(name=folder.name, document=raw["document"],
                  namespace=uuid.uuid5(uuid.NAMESPACE_DNS, raw["namespace"]), units=units, entities=entities,
                  relationships=rels)
    problems += validate(world)
    if problems:
        raise WorldError(f"{path}: {len(problems)} problems\n" + "\n".join(problems))
    return world


def mentions(text: str, entity: dict) -> bool:
    low = text.casefold()
    return any(name.casefold() in low for name in [entity["title"], *entity["aliases"]])


def validate(w: World) -> list[str]:
    out = []
    by_title = {}
    for e in w.entities:
        if e["title"] in by_title:
            out.append(f"duplicate entity title {e['title']!r}")
        by_title[e["title"]] = e
        if e.get("type") not in TYPES:
            out.append(f"{e['title']!r}: type {e.get('type')!r} is not one of {sorted(TYPES)}")
        if not str(e.get("description", "")).strip():
            out.append(f"{e['title']!r}: empty description")
    seen: set[tuple[str, str]] = set()
    used_units: set[str] = set()
    used_entities: set[str] = set()
    for r in w.relationships:
        for t in (r.source, r.target):
            if t not in by_title:
                out.append(f"relationship {r.source!r} -> {r.target!r}: {t!r} is not an entity")
        if r.source == r.target:
            out.append(f"relationship {r.source!r} is a self-loop")
        if (r.source, r.target) in seen:
            out.append(f"relationship {r.source!r} -> {r.target!r} is listed twice")
        seen.add((r.source, r.target))
        used_entities.update((r.source, r.target))
        for k in r.units:
            used_units.add(k)
            if k not in w.units:
                out.append(f"relationship {r.source!r} -> {r.target!r}: no text unit {k!r}")
            elif r.source in by_title and r.target in by_title and not (
                    mentions(w.units[k], by_title[r.source]) and mentions(w.units[k], by_title[r.target])):
                out.append(f"relationship {r.source!r} -> {r.target!r}: text unit {k} does not mention both")
    out += [f"text unit {k} supports no relationship" for k in w.units if k not in used_units]
    out += [f"entity {t!r} has no relationship" for t in by_title if t not in used_entities]
    return out


def n_tokens(text: str) -> int:
    """Rough cl100k-like count: one token per CJK character, about four characters per token otherwise."""
    cjk = len(_CJK.findall(text))
    return max(1, cjk + round((len(text) - cjk) / 4))


def build_tables(w: World) -> dict[str, pa.Table]:
    sha = {k: hashlib.sha512(t.encode("utf-8")).hexdigest() for k, t in w.units.items()}
    order = {k: i for i, k in enumerate(w.units)}
    ent_id = {e["title"]: str(uuid.uuid5(w.namespace, "entity:" + e["title"])) for e in w.entities}
    rel_id = [str(uuid.uuid5(w.namespace, f"relationship:{r.source}->{r.target}")) for r in w.relationships]
    degree = Counter()
    ent_units: dict[str, set[str]] = defaultdict(set)
    unit_ents: dict[str, list[str]] = defaultdict(list)
    unit_rels: dict[str, list[str]] = defaultdict(list)
    for k, r in enumerate(w.relationships):
        degree[r.source] += 1
        degree[r.target] += 1
        for u in r.units:
            unit_rels[u].append(rel_id[k])
            for t in (r.source, r.target):
                ent_units[t].add(u)
                if ent_id[t] not in unit_ents[u]:
                    unit_ents[u].append(ent_id[t])
    doc_text = "\n\n".join(w.units.values())
    doc_id = hashlib.sha512(doc_text.encode("utf-8")).hexdigest()
    rows = {
        "entities": [dict(id=ent_id[e["title"]], human_readable_id=i, title=e["title"], type=e["type"],
                          description=e["description"],
                          text_unit_ids=[sha[u] for u in sorted(ent_units[e["title"]], key=order.get)],
                          frequency=len(ent_units[e["title"]]), degree=degree[e["title"]])
                     for i, e in enumerate(w.entities)],
        "relationships": [dict(id=rel_id[k], human_readable_id=k, source=r.source, target=r.target,
                               description=r.description, weight=r.weight,
                               combined_degree=degree[r.source] + degree[r.target],
                               text_unit_ids=[sha[u] for u in sorted(r.units, key=order.get)])
                          for k, r in enumerate(w.relationships)],
        "text_units": [dict(id=sha[k], human_readable_id=i, text=t, n_tokens=n_tokens(t), document_id=doc_id,
                            entity_ids=unit_ents[k], relationship_ids=unit_rels[k], covariate_ids=[])
                       for i, (k, t) in enumerate(w.units.items())],
        "documents": [dict(id=doc_id, human_readable_id=1, title=w.document, text=doc_text,
                           text_unit_ids=[sha[k] for k in w.units], creation_date=CREATION_DATE, metadata=None)],
    }
    return {name: pa.Table.from_pylist(r, schema=SCHEMAS[name]) for name, r in rows.items()}


def describe(w: World, tables: dict[str, pa.Table]) -> str:
    ent = tables["entities"].to_pydict()
    types = Counter(ent["type"])
    top = sorted(zip(ent["degree"], ent["title"]), reverse=True)[:4]
    pairs = {(r.source, r.target) for r in w.relationships}
    reversed_pairs = sum(1 for s, t in pairs if (t, s) in pairs) // 2
    kinds = ", ".join(f"{k} {v}" for k, v in sorted(types.items()))
    return (f"{w.name}: {tables['entities'].num_rows} entities ({kinds}), "
            f"{tables['relationships'].num_rows} relationships ({reversed_pairs} reversed pairs), "
            f"{tables['text_units'].num_rows} text units; hubs: {', '.join(f'{t} ({d})' for d, t in top)}")


def main(argv: list[str]) -> int:
    check = argv == ["--check"]
    if argv and not check:
        print(__doc__.split("Run:")[1].rstrip(), file=sys.stderr)
        return 2
    stale = 0
    for name in WORLDS:
        folder = HERE / name
        try:
            world = load_world(folder)
        except WorldError as err:
            print(err)
            return 1
        tables = build_tables(world)
        print(describe(world, tables))
        out = folder / "output"
        for table_name, table in tables.items():
            path = out / f"{table_name}.parquet"
            if check:
                if not path.is_file() or not pq.read_table(path).equals(table):
                    print(f"{path} is missing or out of date; run python bench/data/build_multilingual.py")
                    stale += 1
            else:
                out.mkdir(parents=True, exist_ok=True)
                pq.write_table(table, path)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
