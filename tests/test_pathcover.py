"""Paths read whole (policy/pathcover.py): a hub's relation that names nothing of the question still leads to the
answer when the later hops name it; a path's worth is the IDF-weighted share of the question's words its hops name;
the found ends join the answer candidates with their path (`found` "path")."""
from __future__ import annotations


from harbour_graph import QUESTION, graph, searched, walked
from tog_core.graphrag.graph import KnowledgeGraph
from tog_core.policy import pathcover
from tog_core.policy.cheap import CheapPolicy
from tog_core.policy.retrieval import query_words


def features(pol: CheapPolicy, pruner: str = "bm25"):
    """Every answer candidate of searched(pol, pruner), with its features (no embedder: the text ones stay 0)."""
    eng, st = searched(pol, pruner)
    return eng.graph, pol.answer_features(eng, st, eng.best_paths(st), None, None)


def test_the_answer_behind_a_hub_relation_that_names_little_is_found_at_its_hops():
    g = graph()
    w = walked(g)
    [two] = w.found(1, exclude=frozenset(), exact_hops=2)
    assert g.title(two.end) == "Wenna"
    assert [(g.title(h.src), g.title(h.dst)) for h in two.hops] == [("Orla", "Bram"), ("Bram", "Wenna")]
    assert all(h.score == 0.0 for h in two.hops) and two.score == 0.0  # the search scored none of its links
    # the rarest words of the question are on its path: the best share there is
    assert w.cover(g.find_title("Wenna")) == max(w.cover(e) for e in range(len(g.all_titles())))
    assert w.cover(g.find_title("Wenna")) > w.cover(g.find_title("Inn")) > 0


def test_a_rarer_word_weighs_more_and_nothing_unreached_or_a_topic_is_found():
    g = graph()
    w = walked(g, depth=1)
    weights = pathcover.weights(g, query_words(QUESTION, ["Orla"], "en"))
    assert weights["lantern"] > weights["sail"]  # one description says "lantern", twenty-two "sailor"
    ones = w.found(3, exclude=frozenset())
    assert g.title(ones[0].end).startswith("Sailor") and all(len(p.hops) == 1 for p in ones)
    assert w.cover(g.find_title("Bram")) == 0.0 < w.cover(g.find_title("Sailor 3"))  # its relation names nothing
    assert w.cover(g.find_title("Wenna")) == 0.0  # two hops away: unreached at depth 1
    full = walked(g)
    orla = g.find_title("Orla")
    assert all(p.end != orla for p in full.found(50, exclude=frozenset()))
    # no step straight back: Orla -> Bram -> Orla -> … is never a path
    assert all(h.dst != p.hops[k - 1].src for p in full.found(50, exclude=frozenset())
               for k, h in enumerate(p.hops) if k)


def test_excluded_and_refused_ends_are_skipped_and_each_end_is_found_once():
    g = graph()
    w = walked(g)
    wenna = g.find_title("Wenna")
    assert wenna not in {p.end for p in w.found(5, exclude=frozenset({wenna}))}
    assert wenna not in {p.end for p in w.found(5, exclude=frozenset(), allowed=lambda p: p.end != wenna)}
    ends = [p.end for p in w.found(5, exclude=frozenset())]
    assert len(ends) == len(set(ends))


def test_an_empty_query_or_no_topic_walks_nothing():
    g = graph()
    assert pathcover.walk(g, [g.find_title("Orla")], 3, frozenset(), "en").best == {}
    assert pathcover.walk(g, [], 3, frozenset({"lantern"}), "en").found(5, exclude=frozenset()) == []


def test_the_found_ends_join_the_candidates_with_their_path_and_every_candidate_reads_path_cover():
    pol = CheapPolicy(path_found=2, retrieved=0)  # the beam alone (path_beam off) does not reach Wenna
    g, cands = features(pol)
    by = {g.title(c.entity): c for c in cands}
    assert "Wenna" in by and by["Wenna"].features["found_path"] == 1.0 and by["Wenna"].features["beam"] == 0.0
    assert all("path_cover" in c.features for c in cands)
    assert by["Wenna"].features["path_cover"] == max(c.features["path_cover"] for c in cands)
    assert pol.params()["path_found"] == 2 and CheapPolicy().params()["path_found"] == pathcover.PATH_FOUND
    # off: no walk, no feature
    assert all("path_cover" not in c.features for c in features(CheapPolicy(retrieved=0, path_found=0))[1])


def test_a_random_baseline_gets_no_paths_read_whole():
    """The walk reads the question: a search whose stages do not (the random baseline) stays as it searched."""
    _, cands = features(CheapPolicy(path_found=2, retrieved=0), "random")
    assert cands and all("path_cover" not in c.features and not c.features.get("found_path") for c in cands)


def test_a_store_gone_away_finds_no_paths_and_the_chains_still_answer(monkeypatch):
    """A graph store that stops answering while the paths are read back, or while the candidates' source text is
    read, costs those candidates, never the run (tests/test_app_store.py: the same on PostgreSQL, end to end)."""
    from tog_core.graphrag.pg_common import StoreError
    from tog_core.policy import candidates, ranking

    pol = CheapPolicy(path_found=2, retrieved=0)
    eng, st = searched(pol)
    w = pol.path_walk(eng, st, pol.description_query(eng, st))

    def gone(*_a, **_k):
        raise StoreError("store postgresql://db: the server closed the connection")
    monkeypatch.setattr(KnowledgeGraph, "labels", gone)
    assert w is not None and pol._path_found(eng, st, w, frozenset(), False, None) == []
    monkeypatch.setattr(candidates, "text_features", gone)
    monkeypatch.setattr(ranking, "ranking_embedder", lambda: object())  # read by text_features only
    ranked = pol._rank(eng, st, eng.best_paths(st))
    assert ranked and ranked[0].entity == eng.best_paths(st)[0].end  # the chains' ends answer
