"""The mill graph of tests/test_retrieval.py, also read by tests/test_textunits.py: Ann's neighbours, two of whom
lead on to Carl the miller (`EDGES`, the entities' descriptions `ABOUT`, the `QUESTION` about the miller), and
`one_hop_state`, a search stopped with one chain kept, Ann -> Bob."""
from __future__ import annotations

from tog_core.tog.engine import ToGEngine
from tog_core.tog.state import BeamPath, Hop, Search

# Ann knows three people; two of them lead on to Carl, the miller; Zed is three hops out
EDGES = [("Ann", "Bob", "Ann and Bob are neighbours"), ("Ann", "Dan", "Ann hired Dan"),
         ("Ann", "Eve", "Ann writes to Eve"), ("Bob", "Carl", "Bob buys flour from Carl"),
         ("Dan", "Carl", "Dan carries sacks for Carl"), ("Carl", "Zed", "Carl owes Zed money")]
ABOUT = {"Ann": "Ann is a weaver.", "Bob": "Bob is a farmer.",
         "Dan": "Dan is a boatman who works on the river by the mill.",
         "Eve": "Eve is a teacher in the town.",
         "Carl": "Carl is the miller who grinds rye in the old water mill by the river.",
         "Zed": "Zed is a miller too, far away, who grinds rye and wheat by another river."}
QUESTION = "Which miller grinds rye by the river?"


def one_hop_state(eng: ToGEngine, question: str = QUESTION):
    """The search kept one chain, Ann -> Bob, and tried no other depth."""
    g = eng.graph
    ann, bob = g.find_title("Ann"), g.find_title("Bob")
    path = BeamPath(start=ann, hops=(Hop(ridx=0, src=ann, dst=bob, score=1.0, label=EDGES[0][2]),), score=1.0)
    st = eng.start(question, ["Ann"])
    return st.with_(paths=(path,), depth=2, stage="done", other_searches=(Search(depth=2, paths=(path,)),))
