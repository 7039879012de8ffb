"""The reasoning chains picture draws the chains of the first answer candidates no drawn chain reaches
(render/candidate_chains.py): dashed, never emphasised, each link saying on hover that the search did not score it and
how the candidate was found; a candidate a drawn chain reaches adds no chain. Helpers: test_viz.py."""
from __future__ import annotations

from typing import Any

from builders import make_trace
from vizkit import HOSTILE, assert_safe

from tog_core.render.viz import chains_html, picture_json
from tog_core.tog.choice import CANDIDATES_SHOWN


def link(s: str, rel: str, t: str) -> dict[str, Any]:
    return {"source": s, "source_id": s, "relation": rel, "target": t, "target_id": t, "relationship_id": f"r-{t}"}


def with_candidates(*cands: dict[str, Any]) -> dict[str, Any]:
    """make_trace's A → B → E and A → C → G kept; the answer E (on chain 1), then `cands`."""
    trace = make_trace()
    answer = {"title": "E", "entity_id": "E", "score": 0.5, "chain": [link("A", "A founded B", "B"),
                                                                       link("B", "B lives in E", "E")]}
    trace["answer_entity"] = "E"
    trace["candidates"] = [answer, *cands]
    return trace


def test_a_candidate_found_off_the_kept_chains_has_its_chain_drawn_dashed():
    h = {"title": "H", "entity_id": "H", "chain": [link("A", "A met C", "C"), link("C", "C knows H", "H")],
         "found": "description"}
    b = {"title": "B", "entity_id": "B", "chain": [link("A", "A founded B", "B")]}  # on kept chain 1
    k = {"title": "K", "entity_id": "K", "chain": [link("A", "A hired K", "K")], "found": "text"}  # 4th: not shown
    page = chains_html(with_candidates(h, b, k))
    data = picture_json(page)
    nodes = {n["label"]: n for n in data["nodes"]}
    assert "H" in nodes and "K" not in nodes and CANDIDATES_SHOWN == 3
    assert "candidate 2 of the answer list" in nodes["H"]["title"]
    dashed = [e for e in data["edges"] if e.get("dashes")]
    # A met C is kept chain 2's own link, drawn once, solid; only the hop off the kept chains is the candidate's
    assert [e["label"] for e in dashed] == ["C knows H"]
    assert "not scored by the search: found by its description" in dashed[0]["title"]
    assert "candidate 2's chain, hop 2" in dashed[0]["title"]
    # candidate 3 (B) is on a kept chain: no chain of its own, no duplicate link
    assert "candidate 3" not in page and len(data["edges"]) == 5
    # the answer's chain stays the emphasised one, the candidate's thin
    widths = {e["label"]: e["width"] for e in data["edges"]}
    assert widths["A founded B"] == widths["B lives in E"] == 3 and widths["C knows H"] == 1
    assert "the chain of candidate 2: off the kept chains, not scored by the search" in page


def test_a_candidate_reached_by_another_candidates_chain_adds_none():
    # candidate 3 (J) is on candidate 2's chain; candidate 2 came from a number of hops tried but not kept
    h = {"title": "H", "entity_id": "H", "chain": [link("A", "A taught J", "J"), link("J", "J knows H", "H")]}
    j = {"title": "J", "entity_id": "J", "chain": [link("A", "A taught J", "J")], "found": "path"}
    data = picture_json(chains_html(with_candidates(h, j)))
    dashed = [e for e in data["edges"] if e.get("dashes")]
    assert [e["label"] for e in dashed] == ["A taught J", "J knows H"]
    assert all("not scored by the search: its chain from a number of hops tried but not kept" in e["title"]
               for e in dashed)
    assert not any("candidate 3" in e["title"] for e in data["edges"])


def test_a_hostile_candidates_chain_stays_text():
    for bad in HOSTILE:
        h = {"title": bad, "entity_id": "H", "found": bad,
             "chain": [link("A", bad, "H") | {"target": bad}]}
        page = chains_html(with_candidates(h))
        assert_safe(page)
        data = picture_json(page)
        dashed = [e for e in data["edges"] if e.get("dashes")]
        assert len(dashed) == 1 and "found off the kept chains" in dashed[0]["title"]  # an unknown `found`
        assert all("href" not in (x.get("title") or "").lower() for x in data["nodes"] + data["edges"])


def test_the_candidates_chains_never_take_the_kept_chains_labels_away():
    """make_trace's kept chains have 4 links (all labelled, at most EDGE_LABELS_ALL); two long candidate chains push
    the picture past that: the kept chains keep their labels, the candidates' show theirs on hover only."""
    from tog_core.render.chains import EDGE_LABELS_ALL

    def long(end: str) -> dict[str, Any]:
        hops = [link("A", f"A knew {end}1", f"{end}1")] + [link(f"{end}{i}", f"{end}{i} knew {end}{i + 1}",
                                                                 f"{end}{i + 1}") for i in range(1, 3)]
        return {"title": f"{end}3", "entity_id": f"{end}3", "chain": hops, "found": "description"}

    data = picture_json(chains_html(with_candidates(long("P"), long("Q"))))
    kept = [e for e in data["edges"] if not e.get("dashes")]
    dashed = [e for e in data["edges"] if e.get("dashes")]
    assert len(kept) + len(dashed) > EDGE_LABELS_ALL >= len(kept) and len(dashed) == 6
    assert all(e["label"] for e in kept) and not any(e["label"] for e in dashed)
    assert all("knew" in e["title"] for e in dashed)  # the relation on hover


def test_with_no_kept_chain_the_legend_says_so():
    trace = with_candidates({"title": "H", "entity_id": "H", "chain": [link("A", "A met H", "H")],
                             "found": "description"})
    trace["chains"], trace["answer_entity"] = [], None
    page = chains_html(trace)
    assert "no kept chain" in page and "0 chain(s)" not in page


def test_an_old_traces_candidate_found_by_its_description_says_so_without_the_found_key():
    """A trace written before candidates carried "found" says how one was found only in its `why`: the hover reads it
    from there, not "from a number of hops tried" (which it says of a candidate whose `why` says neither)."""
    why = ("ranked 2 of 5 candidates by chain, text, type and agreement; found by its description, not on a kept chain"
           " (its chain is the shortest to it)")
    h = {"title": "H", "entity_id": "H", "chain": [link("A", "A met C", "C"), link("C", "C knows H", "H")], "why": why}
    t = {"title": "T", "entity_id": "T", "chain": [link("A", "A hired T", "T")], "why": "ranked 3 of 5 candidates"}
    data = picture_json(chains_html(with_candidates(h, t)))
    said = {e["label"]: e["title"] for e in data["edges"] if e.get("dashes")}
    assert "found by its description" in said["C knows H"] and "tried but not kept" not in said["C knows H"]
    assert "tried but not kept" in said["A hired T"]


def test_found_of_reads_the_key_first_then_the_why_and_nothing_else():
    from tog_core.tog.choice import AnswerCandidate, found_of
    text_why = ("ranked 1 of 2 candidates by chain, text, type and agreement; found in the source text, not on a kept"
                " chain")
    assert found_of({"why": text_why}) == "text"
    assert found_of({"why": text_why, "found": ""}) == ""  # a trace with the key is believed
    assert found_of({"why": "found by its description of the house"}) == ""  # the words alone are not the phrase
    assert found_of({"why": "x; found by the words of a whole path to it, not on a kept chain"}) == "path"
    assert found_of("not a candidate") == ""
    old = AnswerCandidate.from_dict({"title": "H", "why": text_why})
    assert old is not None and old.found == "text"
