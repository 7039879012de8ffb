"""Research: candidate features for every dumped question (every entity on a kept chain, topics excluded)."""
from __future__ import annotations

import json
import math
import os
import re
import sys
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
from tog_core.scoring.question import asked_type, type_matches  # noqa: E402
from tog_core.scoring.text import first_sentence  # noqa: E402
from tog_core.policy.coverage import covered  # noqa: E402
from tog_core.reading.readers import question_words  # noqa: E402

EMB = default_embedder(tog_home() / "cache" / "embeddings" / "answer-study")
SENT = re.compile(r"(?<=[.!?。！？])\s+|\n+")
WORD = re.compile(r"\w+", re.UNICODE)


def emb(texts, kind):
    if not texts:
        return np.zeros((0, 384))
    return EMB.embed(list(texts), kind=kind)


def sentences_naming(text: str, a: str, b: str) -> list[str]:
    out = []
    al, bl = a.lower(), b.lower()
    for s in SENT.split(text):
        sl = s.lower()
        if al in sl and bl in sl:
            out.append(s.strip()[:400])
    return out


def words(t: str) -> set[str]:
    return {w.lower() for w in WORD.findall(t)}


def features_for(rows, graph):
    out = []
    for q in rows:
        paths = q["paths"]
        topics = set(q["topics"])
        cands: dict[int, dict] = {}
        if not paths:
            out.append({"q": q, "cands": []})
            continue
        tops = {}
        for p in paths:
            t = p.get("trial", 0)
            tops[t] = max(tops.get(t, 0.0), p["score"])
        for rank_all, p in enumerate(paths):
            t = p.get("trial", 0)
            rank = p.get("trial_rank", rank_all)
            rel = p["score"] / (tops[t] or 1.0)
            for k, h in enumerate(p["hops"], 1):
                e = h["dst"]
                if e in topics or e == p["start"]:
                    continue
                c = cands.get(e)
                if c is None:
                    c = cands[e] = {"e": e, "best_rank": rank, "path_rel": rel, "k": k, "trial": t,
                                    "is_end": k == len(p["hops"]), "n_in": 0, "n_end": 0, "trials": set(),
                                    "path": p, "upto": k}
                c["n_in"] += 1
                c["n_end"] += int(k == len(p["hops"]))
                c["trials"].add(t)
                if (rank, -rel) < (c["best_rank"], -c["path_rel"]):
                    c.update(best_rank=rank, path_rel=rel, k=k, is_end=k == len(p["hops"]), path=p, upto=k, trial=t)
        cl = list(cands.values())
        asked, _ = asked_type(q["question"])
        want = question_words(q["question"], q["topic_entities"])
        for c in cl:
            ent = graph.entity(c["e"])
            c["title"] = ent.title
            c["type"] = ent.type
            c["desc"] = first_sentence(ent.description or "", limit=300)
            hops = c["path"]["hops"][:c["upto"]]
            c["chain_text"] = " ; ".join(f"{graph.title(h['src'])} {h['label'][:200]} {graph.title(h['dst'])}"
                                         for h in hops)
            last = hops[-1]
            sents = []
            for tu in graph.evidence(last["ridx"])[:4]:
                sents += sentences_naming(tu.text, graph.title(last["src"]), ent.title)
            c["sents"] = sents[:6] or [last["label"][:400]]
            fit = type_matches(asked, ent.type)
            c["type_rule"] = 0.0 if fit is None else (1.0 if fit else -1.0)
            c["cov"] = covered(want, [h["label"] for h in hops]).total() / max(1, want.total())
            qw = words(q["question"]) - words(" ".join(q["topic_entities"]))
            c["overlap"] = len(qw & words(c["chain_text"])) / max(1, len(qw))
            c["log_deg"] = math.log1p(len(graph.neighbors(c["e"])[0]))
            c["is_pick"] = float(ent.title == q["answer_entity"])
            c["gold"] = ent.title in set(q["answers"])
        # embeddings
        qv = emb([q["question"]], "query")[0]
        if cl:
            ev = emb([f"{c['title']}: {c['desc']}" for c in cl], "passage")
            chv = emb([c["chain_text"] for c in cl], "passage")
            tv = emb([c["type"] or "thing" for c in cl], "passage")
            flat = [s for c in cl for s in c["sents"]]
            sv = emb(flat, "passage")
            i = 0
            for j, c in enumerate(cl):
                n = len(c["sents"])
                c["sim_ent"] = float(ev[j] @ qv)
                c["sim_chain"] = float(chv[j] @ qv)
                c["sim_type"] = float(tv[j] @ qv)
                c["sim_sent"] = float(max(sv[i:i + n] @ qv))
                c["sentence"] = c["sents"][int(np.argmax(sv[i:i + n] @ qv))]
                i += n
        for c in cl:
            c.pop("path")
            c["n_trials"] = len(c.pop("trials"))
        out.append({"q": {k: v for k, v in q.items() if k != "paths"}, "cands": cl})
    return out


if __name__ == "__main__":
    src = Path(sys.argv[1])
    dst = Path(sys.argv[2])
    dst.mkdir(parents=True, exist_ok=True)
    for name in sys.argv[3:] or list(SETS):
        f = src / f"{name}.jsonl"
        if not f.exists():
            continue
        rows = [json.loads(x) for x in f.read_text().splitlines()]
        graph = open_graph(str(SETS[name][0]))[1]
        feats = features_for(rows, graph)
        (dst / f"{name}.json").write_text(json.dumps(feats, ensure_ascii=False))
        n_c = sum(len(x["cands"]) for x in feats)
        print(name, len(feats), "questions", n_c, "candidates", flush=True)
