"""tog_core.app's answer view without Streamlit: the sentence that supports a link, the answer box (its entity, its
chain, its confidence line), the ranked answer's own chain read alike by the app, the exports and the pictures (a
malformed chain or ranked list included), the depth plan's rows, status lines, and the threshold a guess fell below.
The other views: test_session_views.py."""
from __future__ import annotations

import pytest

from tog_core.tog.trace import Trace


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("TOG_HOME", str(tmp_path))
    return tmp_path


def test_support_span_marks_the_sentence_naming_both_ends():
    from tog_core.app.views import support_span

    text = ("The guild met in spring. Born in Tarnby, Mara Quell founded the Lanternwright Guild! "
            "Later she travelled.")
    a, b = support_span(text, relation="Mara Quell founded the Lanternwright Guild.", source="Mara Quell",
                        target="Lanternwright Guild")
    assert text[a:b] == "Born in Tarnby, Mara Quell founded the Lanternwright Guild!"
    assert support_span("Nothing to see here.", relation="x founded y", source="Xavier", target="Yolanda") is None


def test_support_span_prefers_the_sentence_stating_the_link_over_weak_ones():
    from tog_core.app.views import support_span

    rel = "Bob Cratchit is the devoted father of Tiny Tim."
    text = ("'Well!' said Bob. The goose was eaten to the bone.\n\nAnd in came little Bob, the father, with\n"
            "Tiny Tim upon his shoulder. 'God bless us,' said Tiny Tim.")
    a, b = support_span(text, relation=rel, source="TINY TIM", target="BOB CRATCHIT")  # "Bob", "Tim": short names
    assert text[a:b] == "And in came little Bob, the father, with\nTiny Tim upon his shoulder."  # across a wrap
    # no sentence names both ends: the one with the relation's own words ("father"), never "said Bob."
    text2 = "'Well!' said Bob. He was a good father to all of them."
    a, b = support_span(text2, relation=rel, source="TINY TIM", target="BOB CRATCHIT")
    assert text2[a:b] == "He was a good father to all of them."
    assert support_span("'Well!' said Bob.", relation=rel, source="TINY TIM", target="BOB CRATCHIT") is None
    # a blank line ends a sentence that has no full stop
    text3 = "CHAPTER ONE\n\nScrooge knew Marley was dead."
    a, b = support_span(text3, relation="Scrooge was Marley's partner", source="EBENEZER SCROOGE", target="MARLEY")
    assert text3[a:b] == "Scrooge knew Marley was dead."


def trace_of(d: dict) -> Trace:
    """A trace from the few fields a test names (Trace.from_dict, as a file read from elsewhere comes in)."""
    seeds = [{"title": "", "how": "exact", **s} for s in d.get("seeds", [])]
    chains = [[{"relationship_id": "", **link} for link in c] for c in d.get("chains", [])]
    return Trace.from_dict({"question": "", "project": "", "config": {}, **d, "seeds": seeds, "chains": chains})


def test_answer_view_states_the_entity_its_chain_and_confidence():
    from tog_core.app.views import answer_view as view_of, confidence_line

    answer_view = lambda d: view_of(trace_of(d))  # noqa: E731

    link = lambda s, t, r: {"source": s, "source_id": s, "target": t, "target_id": t, "relation": r,  # noqa: E731
                            "score": 0.5}
    t = {"seeds": [{"id": "Acme"}], "answer_by": "chains",
         "chains": [[link("Alice", "Acme", "Alice founded Acme"), link("Alice", "Paris", "Alice was born in Paris")],
                    [link("Bob", "Acme", "Bob works at Acme")]]}
    v = answer_view(t)
    assert v["entity"] == "Paris" and v["others"] == ["Bob"] and v["confidence"] is None
    assert v["hops"] == [("Acme", "Alice founded Acme", "Alice"), ("Alice", "Alice was born in Paris", "Paris")]
    assert confidence_line(v) == ""
    v = answer_view({**t, "answer_entity": "Bob", "confidence": {"value": 0.3, "low": True, "reason": "close call"}})
    assert v["entity"] == "Bob" and v["chain_index"] == 1 and v["hops"][0][2] == "Bob"
    assert confidence_line(v) == "confidence 0.30 (low: treat it as a guess): close call"
    assert confidence_line(answer_view({**t, "confidence": 0.91})) == "confidence 0.91"
    assert confidence_line(answer_view({**t, "confidence": 0.87, "low_confidence": 0.4})) == "confidence 0.87"
    assert confidence_line(answer_view({**t, "confidence": 0.2, "low_confidence": 0.4})) == \
        "confidence 0.20 (low: treat it as a guess)"
    # a search changed from the one the confidence was fitted on says its number may be too high
    narrow = answer_view({**t, "confidence": 0.94, "low_confidence": 0.66,
                          "config": {"width": 1, "depth": 1, "model": "none"}})
    assert confidence_line(narrow) == ("confidence 0.94; fitted on searches left as set by default, and this one was "
                                       "changed (width 1, depth 1): it may be too high")
    step = {"depth": 1, "stage": "entities", "candidates": [],
            "overrides": [{"id": "e|0|x", "label": "x", "auto_kept": True, "kept": False}]}
    by_hand = answer_view({**t, "confidence": 0.96, "config": {"width": 3, "depth": 3, "model_kind": "none"},
                           "steps": [step]})
    assert by_hand["changed"] == "your choices at a step" and "(your choices at a step)" in confidence_line(by_hand)
    assert answer_view({**t, "confidence": 0.9, "config": {"width": 3, "depth": 3, "model": "none"}})["changed"] == ""
    # with an LLM the confidence is the rule choice's formula, fitted on nothing: no such caveat
    assert answer_view({**t, "confidence": 0.6, "config": {"width": 1, "model": "openai/x",
                                                           "model_kind": "litellm"}})["changed"] == ""
    v = answer_view({**t, "answer_entity": "Alice"})  # an answer on a chain's prefix: its chain stops there
    assert v["hops"] == [("Acme", "Alice founded Acme", "Alice")] and v["chain_index"] == 0
    assert v["answer_hop"] == 1 and answer_view(t)["answer_hop"] == 2  # part way along its chain / at its end
    assert answer_view({**t, "answer_entity": "Nobody"})["answer_hop"] is None


def own_chain_trace() -> dict:
    """Two chains from Acme; the ranked answer Bob carries its own chain: one hop along chain 2 (Bob went on to
    Rome), links as the engine writes them (source/target in walking order)."""
    link = lambda s, t, r, rid: {"source": s, "source_id": s, "target": t, "target_id": t,  # noqa: E731
                                 "relation": r, "relationship_id": rid, "score": 0.5}
    chains = [[link("Acme", "Alice", "Alice founded Acme", "r1"), link("Alice", "Paris", "Alice was born in Paris",
                                                                      "r2")],
              [link("Acme", "Bob", "Bob works at Acme", "r3"), link("Bob", "Rome", "Bob lives in Rome", "r4")]]
    return {"question": "", "project": "", "config": {}, "seeds": [{"id": "Acme", "title": "Acme", "how": "exact"}],
            "chains": chains, "answer_entity": "Bob", "answer_by": "chains",
            "candidates": [{"title": "Bob", "entity_id": "Bob", "score": 0.7, "chain": [dict(chains[1][0])]},
                           {"title": "Paris", "entity_id": "Paris", "score": 0.2, "chain": chains[0]}]}


def test_answer_view_and_the_exports_read_the_ranked_answers_own_chain_alike():
    """The answer box (views.answer_view), the exports and the chains picture read the ranked answer's own chain
    one way (render/chains.py): the same hops, the same chain marked as the one the answer came along."""
    from tog_core.app.views import answer_view
    from tog_core.render.chains import answer_own_chain, with_answer_chain
    from tog_core.render.export_common import public_trace, used_chain
    from tog_core.render.export_md import export_markdown

    def export_hops(d: dict) -> list[tuple[str, str, str]]:
        own = answer_own_chain(public_trace(d))
        return [(x["source"], x["relation"], x["target"]) for x in own]

    d = own_chain_trace()
    v = answer_view(Trace.from_dict(d))
    assert v["entity"] == "Bob" and v["hops"] == [("Acme", "Bob works at Acme", "Bob")] == export_hops(d)
    # the chain it came along: chain 2 in the app, the export and the picture
    assert v["chain_index"] + 1 == used_chain(public_trace(d)) == 2 and with_answer_chain(d)[1] == 1
    assert not v["from_trial"] and v["answer_hop"] == 1
    page = export_markdown(d)
    assert "### Chain 2 (used for the answer)" in page and "### Chain 1 (used" not in page
    assert "1. **Acme** → Bob works at Acme → **Bob**" in page.split("### Chain 2 (used for the answer)")[1]
    # an answer from a number of hops tried but not kept: its own chain in the app, none of the run's in the export
    tried = {"source": "Acme", "source_id": "Acme", "target": "Bob", "target_id": "Bob",
             "relation": "Acme hired Bob", "relationship_id": "r9"}
    d["candidates"][0]["chain"] = [tried]
    v = answer_view(Trace.from_dict(d))
    assert v["hops"] == [("Acme", "Acme hired Bob", "Bob")] == export_hops(d)
    assert v["from_trial"] and used_chain(public_trace(d)) is None and "(used for the answer)" not in \
        export_markdown(d)
    assert with_answer_chain(d) == ([[tried], *d["chains"]], 0)


@pytest.mark.parametrize("chain", [[{"source": "Acme", "relation": "Bob works at Acme", "target": "Bob"}, "junk"],
                                   ["junk", 3, None], [[]], "Acme to Bob", 7, True, {"source": "Acme"}, None, []])
def test_a_malformed_own_chain_is_no_chain_in_the_app_and_the_exports(chain):
    """A trace read from elsewhere whose ranked answer's chain is not a list of links (entries that are not dicts,
    not a list at all): no crash, and the app, the exports and the picture all fall back to the run's chain that
    names the answer."""
    from tog_core.app.views import answer_view
    from tog_core.render.chains import answer_own_chain, chains_html, with_answer_chain
    from tog_core.render.export_common import public_trace, used_chain
    from tog_core.render.export_html import export_html
    from tog_core.render.export_md import export_markdown

    d = own_chain_trace()
    d["candidates"][0]["chain"] = chain
    v = answer_view(Trace.from_dict(d))
    assert answer_own_chain(d) == [] and not v["from_trial"]
    # the chain that names the answer (chain 2, through Bob), cut at the answer
    assert v["hops"] == [("Acme", "Bob works at Acme", "Bob")] and v["chain_index"] == 1
    # the exports and the picture mark the same chain as the one the answer came along
    assert used_chain(public_trace(d)) == v["chain_index"] + 1 == 2 and with_answer_chain(d) == (d["chains"], 1)
    assert "### Chain 2 (used for the answer)" in export_markdown(d) and export_html(d) and chains_html(d)
    d["candidates"] = [chain, *d["candidates"]]  # a ranked list whose first entry is no candidate at all
    v = answer_view(Trace.from_dict(d))
    assert answer_own_chain(d) == [] and v["hops"] == [("Acme", "Bob works at Acme", "Bob")]
    assert v["chain_index"] == 1 and not v["from_trial"] and used_chain(public_trace(d)) == 2


def test_entries_before_the_ranked_answer_that_are_no_candidates_are_skipped_alike():
    """A hand-edited ranked list with a non-object first: the app (Trace.from_dict drops it) and the exports and
    picture (answer_own_chain skips it) read the same ranked answer and its own chain."""
    from tog_core.app.views import answer_view
    from tog_core.render.chains import answer_own_chain, with_answer_chain
    from tog_core.render.export_common import public_trace, used_chain

    d = own_chain_trace()
    tried = {"source": "Acme", "source_id": "Acme", "target": "Bob", "target_id": "Bob",
             "relation": "Acme hired Bob", "relationship_id": "r9"}
    d["candidates"] = ["junk", 3, {**d["candidates"][0], "chain": [tried]}, *d["candidates"][1:]]
    v = answer_view(Trace.from_dict(d))
    assert v["hops"] == [("Acme", "Acme hired Bob", "Bob")] and v["from_trial"]
    assert answer_own_chain(public_trace(d)) == [tried] and used_chain(public_trace(d)) is None
    assert with_answer_chain(d) == ([[tried], *d["chains"]], 0)


@pytest.mark.parametrize("candidates", [7, "Bob", {"title": "Bob"}, None, ["junk", 3]])
def test_a_ranked_list_that_is_no_list_of_candidates_is_read_as_none(candidates):
    """A hand-edited trace whose `candidates` is not a list of objects: the trace reads it as no ranked list (entries
    that are not objects dropped), and the answer box falls back to the run's chains instead of failing."""
    from tog_core.app.views import answer_view

    d = own_chain_trace()
    d["candidates"] = candidates
    t = Trace.from_dict(d)
    assert t.candidates == []
    v = answer_view(t)
    assert v["entity"] == "Bob" and v["hops"] == [("Acme", "Bob works at Acme", "Bob")] and not v["from_trial"]
    d["candidates"] = ["junk", *own_chain_trace()["candidates"]]  # the objects among them are kept, in order
    assert [c["title"] for c in Trace.from_dict(d).candidates] == ["Bob", "Paris"]


def test_plan_rows_say_what_each_number_of_hops_found_and_which_was_kept():
    from tog_core.app.views import plan_rows as rows_of

    plan_rows = lambda d: rows_of(trace_of(d))  # noqa: E731
    assert plan_rows({"plan": None}) == [] and plan_rows({}) == [] and rows_of(None) == []
    rows = plan_rows({"plan": {"depth": 2, "reason": "", "trials": [
        {"depth": 1, "matched": ["met"], "end": "Bob"}, {"depth": 2, "matched": ["met", "mill"], "end": "Carl"},
        {"depth": 3, "matched": [], "end": None}]}})
    assert [r["kept"] for r in rows] == [False, True, False]
    assert rows[1]["question words matched"] == 2 and rows[1]["which"] == "met, mill"
    assert rows[1]["best chain ends at"] == "Carl" and rows[2]["which"] == "none"
    assert rows[2]["best chain ends at"] == "no chain"
    assert [r["not counted"] for r in rows] == ["", "", ""]  # traces written before set_aside read as nothing
    aside = plan_rows({"plan": {"depth": 1, "trials": [{"depth": 2, "matched": ["held"], "set_aside": ["town"]}]}})
    assert aside[0]["not counted"] == "town" and aside[0]["question words matched"] == 1


def test_plan_rows_show_the_question_words_as_written_and_keep_the_answers_depth():
    from tog_core.app.views import plan_rows as rows_of

    plan_rows = lambda d: rows_of(trace_of(d))  # noqa: E731
    link = {"source": "TINY TIM", "source_id": "t", "relation": "Bob Cratchit is Tiny Tim's father",
            "target": "BOB CRATCHIT", "target_id": "b"}
    trace = {"question": "Who is Tiny Tim's father?", "seeds": [{"id": "t", "title": "TINY TIM"}],
             "answer_entity": "BOB CRATCHIT",  # one hop along a two-hop chain
             "chains": [[link, {"source": "BOB CRATCHIT", "source_id": "b", "relation": "works for",
                                "target": "SCROOGE", "target_id": "s"}]],
             "plan": {"depth": 2, "trials": [{"depth": 1, "matched": ["fath"], "end": "BOB CRATCHIT"},
                                             {"depth": 2, "matched": ["fath", "s"], "end": "SCROOGE"}]}}
    rows = plan_rows(trace)
    assert [r["which"] for r in rows] == ["father", "father, Tim's"]  # not the stems "fath", "s"
    assert [r["kept"] for r in rows] == [True, False]  # the answer's own depth, not the 2 the search settled on
    assert [r["the answer"] for r in rows] == ["BOB CRATCHIT", ""]  # said on the kept row
    ranked = {**trace, "plan": {**trace["plan"], "trials": [{"depth": 1, "matched": ["fath"], "end": "MRS CRATCHIT"},
                                                            trace["plan"]["trials"][1]]}}
    row = plan_rows(ranked)[0]  # the answer ranked over every chain's end is not that trial's best chain's end
    assert row["best chain ends at"] == "MRS CRATCHIT" and row["the answer"] == "BOB CRATCHIT"
    assert [r["kept"] for r in plan_rows({**trace, "chains": []})] == [False, True]  # no answer yet: the plan's


def test_status_lines_say_why_a_search_stopped_in_words_and_no_bill_without_an_llm():
    from tog_core.app.views import progress_line

    assert progress_line(1, "sufficient", {"llm_calls": 0}) == "depth 1 · judged enough to answer · no LLM calls"
    assert progress_line(2, "relations", {"llm_calls": 3, "prompt_tokens": 90, "completion_tokens": 10,
                                          "cost_usd": 0.0012}, max_depth=3) == \
        "depth 2 of 3 · relations · 3 LLM calls · 100 tokens · $0.0012"
    assert progress_line(3, "max_depth", {"llm_calls": 1, "prompt_tokens": 5}).endswith("cost unknown")


def test_a_guess_says_which_threshold_it_fell_below():
    """Without an LLM the threshold is the one fitted with the answer ranker; beside an LLM, a fixed one (the two
    differ, 0.66 and 0.40: a person who set a model saw the number change with no word why)."""
    from tog_core.app.run_notes import guess_words

    base = {"confidence": 0.3, "low_confidence": 0.66, "answer_entity": "A", "candidates": [{"title": "A"}]}
    free = guess_words(trace_of({**base, "config": {"model": "none", "model_kind": "none"}}))
    assert "(confidence 0.30, below 0.66, the threshold fitted with the answer ranker)" in free
    llm = guess_words(trace_of({**base, "low_confidence": 0.4,
                                "config": {"model": "openai/x", "model_kind": "litellm"}}))
    assert "below 0.40, the fixed threshold of the confidence used beside an LLM)" in llm
