"""What a question new to the project costs without an LLM: the passages the packaged e5 encodes for it, by the
search step that asked for them, and its seconds, as the CLI runs it (`query PROJECT "…" --no-save`).

    TOG_HOME=/tmp/h python bench/cold_question.py demo --warm                      # the app's warm first, then
    TOG_HOME=/tmp/h python bench/cold_question.py demo "QUESTION" ["QUESTION" …]   # each question, cold

Compare two warms by copying one TOG_HOME before the warm changes and asking both copies the same new questions
(docs/benchmarks.md, "A new question without an LLM, cold"). A question asked before in that TOG_HOME is warm:
its passages are all cached. Seconds are the machine's: say its load next to them.
"""
from __future__ import annotations

import argparse
import asyncio
import collections
import os
import time
import traceback
from typing import Any

import dev_sets  # noqa: F401  (first: makes tog_core importable)

from tog_core.cli.main import main as cli
from tog_core.graphrag.open import open_graph
from tog_core.llm import embed_cache
from tog_core.policy import prewarm, retrieval


def count_misses() -> collections.Counter[str]:
    """From now on, every text the on-disk cache has to embed is counted under the search step that asked for it."""
    who: collections.Counter[str] = collections.Counter()
    real = embed_cache.CachedEmbedder.embed

    def embed(self: Any, texts: Any, *, kind: Any = "passage") -> Any:
        before = self.misses
        out = real(self, texts, kind=kind)
        if self.misses > before:
            names = [f.name for f in traceback.extract_stack()[:-1]
                     if "tog_core" in f.filename and "embed" not in os.path.basename(f.filename)]
            who[f"{'/'.join(names[-2:])} [{kind}]"] += self.misses - before
        return out

    embed_cache.CachedEmbedder.embed = embed  # type: ignore[method-assign]
    return who


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("project")
    ap.add_argument("questions", nargs="*")
    ap.add_argument("--warm", action="store_true", help="run the app's background warm first (policy/prewarm.py)")
    args = ap.parse_args()
    if args.warm:
        _, graph = open_graph(args.project)
        retrieval.index_of(graph)
        t0 = time.monotonic()
        done = asyncio.run(prewarm.warm_project(graph))
        print(f"warm: {done} texts, {time.monotonic() - t0:.1f} s")
    who = count_misses()
    for q in args.questions:
        who.clear()
        t0 = time.monotonic()
        cli(["query", args.project, q, "--no-save", "--candidates", "0"])
        print(f"== {time.monotonic() - t0:.1f} s, {sum(who.values())} passages embedded, load {os.getloadavg()[0]:.1f}:"
              f" {q}")
        for name, n in who.most_common():
            print(f"   {n:4d} {name}")


if __name__ == "__main__":
    main()
