"""Where the bench scripts find the repository and the shared data. Imported first by a bench script run as
`python bench/NAME.py`: it makes `tog_core` importable from the repository root and keeps LiteLLM from fetching its
price list at import."""
from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

DATA = ROOT.parent / "shared" / "data"  # ../shared/data: the GraphRAG samples, MetaQA and PathQuestion
GR = DATA / "graphrag"
PQ = DATA / "kgqa" / "pathquestion"
KGQA = DATA / "kgqa"

# every dev set a bench script runs by name: (graph or data folder, its dev questions)
DEV: dict[str, tuple[Path, Path]] = {
    "cc": (GR / "christmas-carol-v3/output", ROOT / "bench/data/christmas-carol/questions_dev.jsonl"),
    "cc2": (GR / "christmas-carol-v3/output", ROOT / "bench/data/christmas-carol/questions_dev2.jsonl"),
    # a third, written blind to the search like cc2 (bench/data/README.md)
    "cc3": (GR / "christmas-carol-v3/output", ROOT / "bench/data/christmas-carol/questions_dev3.jsonl"),
    "dulce": (GR / "operation-dulce-v3/output", ROOT / "bench/data/operation-dulce/questions_dev.jsonl"),
    # on the GraphRAG 1.2 output of the book (the blind set's graph): written later, never tuned on yet
    "cc12": (GR / "christmas-carol-v1.2/output", ROOT / "bench/data/christmas-carol-v1.2/questions_dev.jsonl"),
    # a second dev set on the 1.2 output, written blind to the search (bench/data/README.md)
    "cc12b": (GR / "christmas-carol-v1.2/output", ROOT / "bench/data/christmas-carol-v1.2/questions_dev2.jsonl"),
    # a third, every path through a hub (SCROOGE, CHRISTMAS, BOB CRATCHIT): for the relation stage at hubs, where
    # the blind 1.2 sets are lost; scored outside the answer ranker's fit, never in it (bench/fit_ranker.py OUTSIDE)
    "cc12hub": (GR / "christmas-carol-v1.2/output", ROOT / "bench/data/christmas-carol-v1.2/questions_dev_hub.jsonl"),
    # the 3.x counterpart, every path through a hub (SCROOGE, EBENEZER SCROOGE, BOB CRATCHIT, CHRISTMAS), written blind
    # to the search (bench/data/README.md); outside the answer ranker's fit too
    "cchub": (GR / "christmas-carol-v3/output", ROOT / "bench/data/christmas-carol/questions_dev_hub.jsonl"),
    "demo": (ROOT / "demo/output", ROOT / "demo/questions.jsonl"),
    "fr": (ROOT / "bench/data/fr-atelier/output", ROOT / "bench/data/fr-atelier/questions_dev.jsonl"),
    "zh": (ROOT / "bench/data/zh-chayuan/output", ROOT / "bench/data/zh-chayuan/questions_dev.jsonl"),
    "metaqa": (KGQA / "metaqa", KGQA / "metaqa/questions_dev.jsonl"),
    **{key: (PQ / n, PQ / n / "questions_dev.jsonl")
       for key, n in (("pq2", "PQ-2H"), ("pq3", "PQ-3H"), ("pql2", "PQL-2H"), ("pql3", "PQL-3H"))},
}
# the blind sets read at the end of earlier stops (bench/data/README.md), each at several: spent as blind sets. Since
# the thirteenth stop they are the answer ranker's check outside its fit (bench/fit_ranker.py OUTSIDE), with the two
# hub sets; the held-out split, the first blind set and the unread ones stay unseen (bench/scoreboard.py UNSEEN)
SPENT: dict[str, tuple[Path, Path]] = {
    "blind2": (GR / "christmas-carol-v3/output", ROOT / "bench/data/christmas-carol/questions_blind2.jsonl"),
    "blind3": (GR / "christmas-carol-v1.2/output", ROOT / "bench/data/christmas-carol-v1.2/questions_blind3.jsonl"),
    "dulce-blind": (GR / "operation-dulce-v3/output", ROOT / "bench/data/operation-dulce/questions_blind.jsonl"),
    "blind4": (GR / "christmas-carol-v3/output", ROOT / "bench/data/christmas-carol/questions_blind4.jsonl"),
    "blind5": (GR / "christmas-carol-v1.2/output", ROOT / "bench/data/christmas-carol-v1.2/questions_blind5.jsonl"),
    "blind6": (GR / "christmas-carol-v1.2/output", ROOT / "bench/data/christmas-carol-v1.2/questions_blind6.jsonl"),
    "blind7": (GR / "christmas-carol-v3/output", ROOT / "bench/data/christmas-carol/questions_blind7.jsonl"),
    "blind8": (GR / "christmas-carol-v3/output", ROOT / "bench/data/christmas-carol/questions_blind8.jsonl"),
    "blind9": (GR / "christmas-carol-v3/output", ROOT / "bench/data/christmas-carol/questions_blind9.jsonl"),
    "blind10": (GR / "christmas-carol-v3/output", ROOT / "bench/data/christmas-carol/questions_blind10.jsonl"),
    "blind11": (GR / "christmas-carol-v3/output", ROOT / "bench/data/christmas-carol/questions_blind11.jsonl"),
    "blind12": (GR / "christmas-carol-v3/output", ROOT / "bench/data/christmas-carol/questions_blind12.jsonl"),
}
# the free-text (GraphRAG) dev sets
GRAPHRAG_DEV = ("cc", "cc2", "cc3", "dulce", "cc12", "cc12b", "cc12hub", "cchub", "demo", "fr", "zh")
