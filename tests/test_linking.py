"""Linking a question to topic entities, on its own: exact title spans, fuzzy titles, the embedder, the LLM, and
what the LLM's linking call costs (it used to count tokens on cache hits and never add its cost)."""
from __future__ import annotations

import asyncio
import json
import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import pyarrow as pa  # noqa: E402
import pytest  # noqa: E402

from builders import graph_tables  # noqa: E402
from tog_core.graphrag.graph import KnowledgeGraph  # noqa: E402
from tog_core.llm.client import LLMClient, LLMConfig  # noqa: E402
from tog_core.testing.scripted import ScriptedLLM  # noqa: E402
from tog_core.testing.server import FakeOpenAIServer  # noqa: E402
from tog_core.tog.engine import ToGEngine  # noqa: E402
from tog_core.tog.linking import (link_exact, link_fuzzy, link_named, link_question, link_with_llm,  # noqa: E402
                                  search_entities)
from tog_core.tog.state import EngineConfig  # noqa: E402

EDGES = [("Mara Quell", "Lanternwright Guild", "Mara Quell founded the Lanternwright Guild"),
         ("Mara Quell", "Tarnby", "Mara Quell was born in Tarnby"),
         ("Lanternwright Guild", "Guild Hall", "The Lanternwright Guild meets in the Guild Hall"),
         ("tarnby", "Coast", "the tag tarnby names the coast")]


@pytest.fixture(scope="module")
def graph() -> KnowledgeGraph:
    _, ent, rel, tu = graph_tables(EDGES)
    return KnowledgeGraph.from_tables(ent, rel, tu)


def titles(seeds):
    return [s.title for s in seeds]


def test_exact_spans_prefer_the_longest_title_and_the_exact_case(graph):
    seeds = link_exact("Who founded the Lanternwright Guild?", graph)
    assert titles(seeds) == ["Lanternwright Guild"] and seeds[0].how == "exact" and seeds[0].score == 1.0
    # "Tarnby" and the tag "tarnby" are different entities: the written case wins
    assert titles(link_exact("Who was born in Tarnby?", graph)) == ["Tarnby"]
    assert titles(link_exact("what is tarnby", graph)) == ["tarnby"]
    # possessives and punctuation around a title are not part of it
    assert titles(link_exact("Where is Mara Quell's birthplace?", graph)) == ["Mara Quell"]


def test_on_a_typed_graph_a_common_noun_with_its_article_gives_way_to_a_name():
    # link_exact, the typed graphs' linker (MetaQA: "drama", "war" are titles): "the grave" in a question is a
    # description, "Jacob Marley" the topic; with nothing else to link, the common noun is still taken
    _, ent, rel, tu = graph_tables([("JACOB MARLEY", "THE GRAVE", "Marley lies in the grave"),
                                    ("THE SHOP", "PRIZE TURKEY", "The shop sold the prize turkey")])
    g = KnowledgeGraph.from_tables(ent, rel, tu)
    assert titles(link_exact("Who dug the grave of Jacob Marley?", g)) == ["JACOB MARLEY"]
    assert titles(link_exact("On which street is the shop that sold the prize turkey?", g)) == ["PRIZE TURKEY"]
    assert titles(link_exact("Where is the shop?", g)) == ["THE SHOP"]
    assert titles(link_exact("The grave of Jacob Marley was dug by whom?", g)) == ["JACOB MARLEY"]  # sentence start


def free_text_graph() -> KnowledgeGraph:
    _, ent, rel, tu = graph_tables([("JACOB MARLEY", "THE GRAVE", "Marley lies in the grave"),
                                    ("JACOB MARLEY", "SCROOGE", "Marley was Scrooge's partner"),
                                    ("SCROOGE", "THE FIDDLER", "Scrooge watched the fiddler play"),
                                    ("SCROOGE", "SPIRIT", "The Spirit guided Scrooge"),
                                    ("SCROOGE", "COPPER", "The pudding came out of the copper"),
                                    ("SCROOGE", "BOB", "Bob is Scrooge's clerk"),
                                    ("SPIRIT", "MIDNIGHT", "The Spirit's life ends at midnight")])
    return KnowledgeGraph.from_tables(ent, rel, tu)


def test_a_free_text_graph_links_every_title_named_the_most_specific_first():
    # GraphRAG writes every title in capitals: a lower-case word of the question may well be the topic
    g = free_text_graph()
    assert not g.has_relation_labels
    assert titles(link_named("Who dug the grave of Jacob Marley?", g)) == ["THE GRAVE", "JACOB MARLEY"]
    # with or without its article, on either side: "a fiddler" is THE FIDDLER
    assert titles(link_named("A fiddler came in; who hired him?", g)) == ["THE FIDDLER"]
    assert titles(link_named("What came out of the copper at Scrooge's?", g)) == ["COPPER", "SCROOGE"]
    # at most `limit`, the fewest relationships first (SCROOGE, the hub, goes last)
    assert titles(link_named("Did the fiddler, the copper and Jacob Marley meet Scrooge?", g, limit=2)) == [
        "THE FIDDLER", "COPPER"]
    # link_question takes this linker on a free-text graph
    assert titles(link_question("What came out of the copper?", g)) == ["COPPER"]


def test_what_the_question_asks_for_is_not_a_topic():
    g = free_text_graph()
    # "which spirit" asks for a spirit: not where to start
    assert titles(link_named("Which spirit guided Scrooge?", g)) == ["SCROOGE"]
    # written as a name (a capital inside the sentence), the asked noun is still taken
    assert titles(link_named("Which Spirit guided Scrooge?", g)) == ["SPIRIT", "SCROOGE"]


def test_free_text_linking_skips_stop_word_titles_and_puts_isolated_entities_last():
    _, ent, rel, tu = graph_tables([("WHO", "GENEVA", "The WHO sits in Geneva"), ("THE", "SCROOGE", "x"),
                                    ("SCROOGE", "BOB", "Bob is Scrooge's clerk"), ("SCROOGE", "CLERK", "y")],
                                   extra_entities=["TIM"])
    g = KnowledgeGraph.from_tables(ent, rel, tu)
    assert g.degree(g.find_title("TIM")) == 0
    # "who" and "the" are stop words: the titles WHO and THE are not named by them; written as a name, WHO is
    assert titles(link_named("Who dug the grave of Scrooge?", g)) == ["SCROOGE"]
    assert titles(link_named("Where does the WHO sit?", g)) == ["WHO"]
    # TIM has no relationship: however specific, it goes after the entities a path can start from
    assert titles(link_named("Did Tim know Scrooge's clerk?", g, limit=2)) == ["CLERK", "SCROOGE"]
    assert titles(link_named("Did Tim know Scrooge's clerk?", g)) == ["CLERK", "SCROOGE", "TIM"]


def test_free_text_linking_finds_a_title_written_with_its_article_and_works_without_spaces():
    _, ent, rel, tu = graph_tables([("THE FIDDLER", "FEZZIWIG", "The fiddler played at Fezziwig's ball"),
                                    ("老王", "茶园", "老王在茶园工作")])
    g = KnowledgeGraph.from_tables(ent, rel, tu)
    assert titles(link_named("Who hired fiddler?", g)) == ["THE FIDDLER"]
    assert titles(link_named("老王在哪里工作？", g)) == ["老王"]


def test_a_typed_graph_keeps_names_first():
    _, ent, rel, tu = graph_tables([("Blade Runner", "drama", "x"), ("Blade Runner", "Ridley Scott", "y")])
    rel = rel.append_column("relation", pa.array(["has_genre", "directed_by"]))
    g = KnowledgeGraph.from_tables(ent, rel, tu)
    assert g.has_relation_labels
    # "drama" equals a title, but a lower-case word is rarely a typed graph's topic when a name is there
    assert titles(link_question("who directed the drama Blade Runner", g)) == ["Blade Runner"]
    assert titles(link_named("who directed the drama Blade Runner", g)) == ["drama", "Blade Runner"]


def test_fuzzy_titles_catch_a_misspelling_and_question_words_never_link(graph):
    assert link_exact("Who founded the Lanternwrite Guild?", graph) == []
    seeds = link_fuzzy("Who founded the Lanternwrite Guild?", graph)
    assert titles(seeds)[0] == "Lanternwright Guild" and seeds[0].how == "fuzzy" and 0.88 <= seeds[0].score < 1
    assert link_question("Who founded the Lanternwrite Guild?", graph)[0].title == "Lanternwright Guild"
    assert link_question("what is the weather like", graph) == []


def test_entity_search_puts_an_exact_title_first(graph):
    hits = search_entities(graph, "Tarnby")
    assert hits[0][1] == "Tarnby" and hits[0][2] == 100.0


def test_llm_linking_resolves_names_and_records_a_bad_reply(graph):
    llm = ScriptedLLM(lambda msgs: json.dumps({"entities": ["Lanternwrite Guild", "Nobody At All"]}))
    seeds, usage = asyncio.run(link_with_llm("who founded it?", graph, llm))
    assert titles(seeds) == ["Lanternwright Guild"] and seeds[0].how == "llm"
    assert usage["llm_calls"] == 1 and usage["fallback"] is None
    seeds, usage = asyncio.run(link_with_llm("who founded it?", graph, ScriptedLLM(lambda msgs: "{\"entities\": []}")))
    assert seeds == [] and usage["fallback"] == "no_entities_found"


def test_llm_linking_cost_is_part_of_the_run_and_a_cache_hit_costs_nothing(graph, tmp_path):
    # a priced model name (in LiteLLM's bundled price list) served by the loopback server
    def reply(req):
        text = req["messages"][-1]["content"]
        if "entities" in text.lower() and "Question:" in text and "Candidates" not in text:
            return json.dumps({"entities": ["Lanternwright Guild"]})
        return json.dumps({"scores": [{"i": 0, "score": 0.9, "reason": "r"}]})

    with FakeOpenAIServer(reply) as srv:
        def engine():
            llm = LLMClient(LLMConfig(model="openai/gpt-4o-mini", api_base=srv.base_url, api_key="sk-test-0000000000",
                                      cache_dir=tmp_path / "cache", timeout_s=10, max_retries=0))
            return ToGEngine(graph, llm=llm, config=EngineConfig(width=1, depth=1))

        eng = engine()
        st = asyncio.run(eng.start_async("who set up the thing?"))  # no title in the question: the LLM links
        assert titles(st.seeds) == ["Lanternwright Guild"]
        link = next(u for u in st.extra_usage if u["stage"] == "link")
        assert link["llm_calls"] == 1 and link["prompt_tokens"] > 0 and link["cost_usd"] > 0
        assert eng.stats(st)["cost_usd"] == pytest.approx(link["cost_usd"], abs=1e-6)
        again = asyncio.run(engine().start_async("who set up the thing?"))  # the disk cache answers
        cached = next(u for u in again.extra_usage if u["stage"] == "link")
        assert (cached["llm_calls"], cached["cache_hits"], cached["prompt_tokens"], cached["cost_usd"]) == \
            (0, 1, 0, 0.0)


def test_bench_linking_counts_gold_topics_among_the_seeds_per_linker():
    from bench_scripts import load

    bench = load("linking")
    g = free_text_graph()
    qs = [{"question": "What came out of the copper at Scrooge's?", "topic_entities": ["COPPER"]},
          {"question": "A fiddler came in; who hired him?", "topic_entities": ["THE FIDDLER"]},
          {"question": "Who was Jacob Marley's partner?", "topic_entities": ["SCROOGE"]}]
    # the app's linker on a free-text graph: every title named; COPPER first (fewer relationships than SCROOGE)
    assert bench.link_set(g, qs) == {"n": 3, "linked": 2, "first": 2, "seeds_per_q": 4 / 3}
    # names first: "copper" gives way to the name Scrooge's, "a fiddler" finds nothing (not even fuzzily)
    assert bench.link_set(g, qs, "exact") == {"n": 3, "linked": 0, "first": 0, "seeds_per_q": 2 / 3}
