"""A hand-made KGQA folder whose `bench kgqa` metrics can be checked by eye, for tests/test_bench.py and
test_bench_measures.py: its graph (`EDGES`: a film, its director, actor and year, and another film by the same
director), its questions with the expected outcome of each (`QUESTIONS`), the folder written to disk
(`write_kgqa`) and `bench kgqa ... --json` run in-process and read (`bench_json`)."""
from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from tog_core.cli import main as cli

# Film -directed_by-> Dana ; Film -starred_actors-> Sam ; Film -release_year-> 1999 ;
# Other Film -directed_by-> Dana
EDGES = [("Film", "Dana", "directed_by", "Film was directed by Dana"),
         ("Film", "Sam", "starred_actors", "Film stars Sam (actor)"),
         ("Film", "1999", "release_year", "Film was released in 1999"),
         ("Other Film", "Dana", "directed_by", "Other Film was directed by Dana")]
QUESTIONS = [
    # BM25 (film/movie are stop words): only "direct" matches, on the directed_by edge -> Dana: hit
    {"id": "q1", "question": "who directed Film", "topic_entities": ["Film"], "answers": ["Dana"], "hops": 1},
    # only "releas" matches -> 1999: hit
    {"id": "q2", "question": "which year was Film released", "topic_entities": ["Film"], "answers": ["1999"],
     "hops": 1},
    # the gold answer is not in the graph: miss
    {"id": "q3", "question": "who directed Film", "topic_entities": ["Film"], "answers": ["Nobody"], "hops": 1},
    # the topic entity is not in the graph: miss, no run
    {"id": "q4", "question": "who directed Ghost", "topic_entities": ["Ghost"], "answers": ["Dana"], "hops": 1},
    # Film -> Dana -> Other Film (the only way on from Dana that does not walk back): hit
    {"id": "q5", "question": "what else did the director of Film direct", "topic_entities": ["Film"],
     "answers": ["Other Film"], "hops": 2},
]


def write_kgqa(root: Path, questions=QUESTIONS, split: str = "dev") -> Path:
    names = list(dict.fromkeys([s for s, *_ in EDGES] + [t for _, t, *_ in EDGES]))
    pq.write_table(pa.table({"id": [f"e{i}" for i in range(len(names))], "title": names,
                             "description": [f"{n} is an entity" for n in names]}), root / "entities.parquet")
    pq.write_table(pa.table({"id": [f"r{i}" for i in range(len(EDGES))], "source": [e[0] for e in EDGES],
                             "target": [e[1] for e in EDGES], "relation": [e[2] for e in EDGES],
                             "description": [e[3] for e in EDGES]}), root / "relationships.parquet")
    (root / f"questions_{split}.jsonl").write_text("".join(json.dumps(q) + "\n" for q in questions))
    return root


def bench_json(capsys, *args: str) -> dict:
    code = cli.main(["bench", "kgqa", *args, "--json"])
    out = capsys.readouterr().out
    assert code == 0, out
    return json.loads(out)  # --json prints the JSON object and nothing else
