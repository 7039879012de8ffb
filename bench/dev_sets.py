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
