"""Research: rank of a gold-path edge among a topic entity's edges at the first hop, by scorer (gold seeds)."""
from __future__ import annotations

import json
import os
import sys
from collections import deque
from pathlib import Path

import numpy as np

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).parent))
from dump import SETS  # noqa: E402
from tog_core.graphrag.open import open_graph  # noqa: E402
from tog_core.home import tog_home  # noqa: E402
from tog_core.llm.embed import default_embedder  # noqa: E402
from tog_core.scoring.text import tokens, first_sentence  # noqa: E402
import bm25s  # noqa: E402
from tog_core.scoring.scorers import _as_bm25_tokens  # noqa: E402

EMB = default_embedder(tog_home() / "cache" / "embeddings" / "answer-study")


def dist_to(graph, answers, maxd):
    d = {a: 0 for a in answers}
    dq = deque(answers)
    while dq:
        x = dq.popleft()
        if d[x] >= maxd:
            continue
        _, others, _ = graph.neighbors(x)
        for o in others:
            o = int(o)
            if o not in d:
                d[o] = d[x] + 1
                dq.append(o)
    return d


def bm25(query, texts):
    corpus = [tokens(t) or ["_empty_"] for t in texts]
    r = bm25s.BM25()
    r.index(_as_bm25_tokens(corpus), show_progress=False)
    q = tokens(query)
    return np.asarray(r.get_scores(q), float) if q else np.zeros(len(texts))


def rr(v):
    order = np.argsort(-v, kind="stable")
    r = np.empty(len(v))
    r[order] = np.arange(len(v))
    return r


def main(names):
    res = {}
    for name in names:
        data, qf = SETS[name]
        graph = open_graph(str(data))[1]
        qs = [json.loads(x) for x in Path(qf).read_text().splitlines() if x.strip()]
        for q in qs:
            seeds = [graph.find_title(t) for t in q["topic_entities"]]
            seeds = [s for s in seeds if s is not None]
            ans = [graph.find_title(a) for a in q["answers"]]
            ans = [a for a in ans if a is not None]
            if not seeds or not ans:
                continue
            d = dist_to(graph, ans, q["hops"])
            rels, nbrs, _labels = [], [], []
            for s in seeds[:1]:
                ri, oth, _ = graph.neighbors(s)
                for r_, o in zip(ri, oth):
                    rels.append(int(r_))
                    nbrs.append(int(o))
            if not rels:
                continue
            gold = np.array([d.get(o, 99) <= q["hops"] - 1 for o in nbrs])
            if not gold.any():
                continue
            descs = graph.descriptions(rels)
            " ".join(q["topic_entities"])
            qtext = q["question"]
            ntexts = [f"{de} {graph.title(o)}: {first_sentence(graph.entity(o).description or '', 200)}"
                      for de, o in zip(descs, nbrs)]
            b = bm25(qtext, descs)
            bn = bm25(qtext, ntexts)
            qv = EMB.embed([qtext], kind="query")[0]
            ev = EMB.embed(list(descs), kind="passage") @ qv
            evn = EMB.embed(ntexts, kind="passage") @ qv
            scorers = {"bm25": b, "bm25+nbr": bn, "e5": ev, "e5+nbr": evn,
                       "rrf(bm25,e5)": -(1 / (60 + rr(b)) + 1 / (60 + rr(ev))),
                       "rrf(all4)": -(1/(60+rr(b)) + 1/(60+rr(ev)) + 1/(60+rr(bn)) + 1/(60+rr(evn)))}
            for k, v in scorers.items():
                v = -v if k.startswith("rrf") else v
                order = np.argsort(-v, kind="stable")
                first = int(np.where(gold[order])[0][0])
                res.setdefault((name, k), []).append(first)
    for (name, k), ranks in sorted(res.items()):
        r = np.array(ranks)
        print(f"{name:6} {k:14} n={len(r):3d} hit@3={np.mean(r < 3):.3f} hit@5={np.mean(r < 5):.3f} "
              f"mrr={np.mean(1 / (1 + r)):.3f}")


main(sys.argv[1:] or [n for n in SETS if n not in ('metaqa', 'pq2', 'pq3', 'pql2', 'pql3')])
