"""What a GraphRAG project's questions embed that no question decides, embedded before anyone asks: the app runs
`warm_project` in the background when a project is opened (explorer/projects.py), the CLI's `warm` command before
a deployment starts.

A question the LLM-free search has not met before makes new e5 passages (docs/benchmarks.md, "A new question
without an LLM, cold"). Most of them are the same whatever is asked, because they are read off the graph at one entity:

- what the answer ranking reads of every candidate (`candidates.text_features`): its title with its description's
  first sentence, its type, and the sentences of the source text naming both ends of the link that reached it;
- the one-hop chains the entity beam reads from a topic entity (`fusion.beam_scores`), and a topic entity's
  relations as `fusion.relation_ties` reads them when several tie at the cut-off;
- what the second search's relation stage reads at each entity (`agreement.warm`).

Only the question's own vector and the chains of two hops or more are left to embed when it is asked. Each text is
built by the function the search calls, so a change there cannot leave the warm embedding something else
(tests/test_prewarm.py asks a question after the warm and checks that nothing of the first hop is embedded again).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from tog_core.policy import agreement, ranking
from tog_core.policy.candidates import chain_text, entity_passage, link_passages, type_passage
from tog_core.policy.fusion import tie_text
from tog_core.tog.state import BeamPath, Hop

FIRST_HOP_LIMIT = 12_000  # passages: e5 reads about 28 a second on two quiet cores, so about seven minutes at most
BATCH = 64  # passages handed to the embedder at a time (a background thread encodes them 8 at a time)


def first_hop_texts(graph: Any, idx: int) -> list[str]:
    """The passages a question reads at entity `idx` and its links whatever it asks: the entity as a candidate, then
    for each link, the one-hop chain leaving `idx` by it, the relation as a tie at `idx`, and the sentences naming
    both ends as the link's evidence for the neighbour. Each once, in that order."""
    ent = graph.entity(idx)
    texts = [entity_passage(ent), type_passage(ent)]
    rels, others, _outs = graph.neighbors(idx)
    here = BeamPath(start=idx)
    for r, o, label in zip(rels.tolist(), others.tolist(), graph.labels(rels)):
        hop = Hop(ridx=r, src=idx, dst=o, score=0.0, label=label)
        texts.append(chain_text(graph, BeamPath(start=idx, hops=(hop,))))
        texts.append(tie_text(graph, here, label))
        texts += link_passages(graph, r, idx, o, label)
    return list(dict.fromkeys(texts))


async def warm_project(graph: Any, *, limit: int = FIRST_HOP_LIMIT,
                       progress: Callable[[int], None] | None = None) -> int:
    """Embed into the packaged e5's on-disk cache the first-hop passages of every entity, the best connected first
    (they are met most often, on the way to other answers too), up to `limit` passages, then what the second search
    reads (`agreement.warm`). Returns how many texts were embedded or found cached; 0 where the LLM-free search reads
    nothing with e5 (a typed graph, no e5). `progress` is told the running count after each batch."""
    e5 = ranking.ranking_embedder()
    if e5 is None or graph.has_relation_labels:
        return 0
    done = 0
    pending: list[str] = []
    for idx in np.argsort(-np.asarray(graph.degrees_of(np.arange(graph.n_entities))), kind="stable").tolist():
        if done + len(pending) >= limit:
            break
        pending += first_hop_texts(graph, idx)
        while len(pending) >= BATCH:
            e5.embed(pending[:BATCH], kind="passage")
            done += BATCH
            pending = pending[BATCH:]
            if progress:
                progress(done)
    if pending:
        e5.embed(pending, kind="passage")
        done += len(pending)
    done += await agreement.warm(graph)
    if progress:
        progress(done)
    return done
