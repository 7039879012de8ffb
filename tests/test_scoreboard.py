"""bench/scoreboard.py: issue #21's goals applied to the right sets, and the demo row read from `bench kgqa`."""
from __future__ import annotations

import json

from bench_scripts import ROOT, load
from tog_core.bench.kgqa import KGQAConfig, run_kgqa


def _scoreboard():
    return load("scoreboard")


ROW = {"hits1": 0.5, "hits3": 0.6, "auroc": 0.81, "wrong_flagged": 0.7, "right_flagged": 0.3, "s_per_q": 0.1,
       "gold_recall": 0.75, "per_hop": {"1": 0.9, "2": 0.7}}


def test_unseen_sets_carry_every_goal_and_typed_sets_only_their_floor():
    sb = _scoreboard()
    blind = {g: (v, ok) for g, v, b, hi in sb.goals("blind", ROW) for ok in [sb.met(v, b, hi)]}
    assert set(blind) == {"Hits@1", "Hits@3", "AUROC", "wrong flagged", "right flagged", "gold beam recall", "s/q"}
    assert blind["Hits@1"][1] and not blind["Hits@3"][1] and blind["AUROC"][1] and blind["wrong flagged"][1]
    assert not blind["right flagged"][1] and blind["gold beam recall"][1] and blind["s/q"][1]
    cc = {g for g, *_ in sb.goals("cc", ROW)}
    assert cc == {"gold beam recall", "s/q"}  # a dev set: no quality goal, it was tuned on
    metaqa = {g: sb.met(v, b, hi) for g, v, b, hi in sb.goals("metaqa", ROW)}
    assert metaqa == {"Hits@1": False, "1-hop Hits@1": True, "2-hop Hits@1": False, "s/q": True}
    assert not sb.met(None, 0.5, True) and sb.met(0.25, 0.25, False)


def test_the_demo_row_is_what_bench_kgqa_measures(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("TOG_HOME", str(tmp_path / "home"))
    sb = _scoreboard()
    assert sb.main(["--sets", "demo", "--json"]) == 0
    row = json.loads(capsys.readouterr().out)["demo"]
    base = {"data_dir": str(ROOT / "demo/output"), "questions": str(ROOT / "demo/questions.jsonl")}
    linked = run_kgqa(KGQAConfig(**base, link=True, depth=3))["summary"]["all"]
    gold = run_kgqa(KGQAConfig(**base))["summary"]["all"]
    assert row["n"] == linked["n"] == 17
    assert (row["hits1"], row["hits3"], row["candidate_recall"]) == (
        linked["chain_hits1"], linked["hits3"], linked["candidate_recall"])
    assert (row["gold_recall"], row["gold_hits1"]) == (gold["beam_recall"], gold["chain_hits1"])
    assert [g["goal"] for g in row["goals"]] == ["s/q"]


def _fake_dumps(fr, tmp_path, *, seed: int) -> None:
    """Dumps of two sets "a" and "b" (12 questions, 4 candidates each, random features) as fit_ranker writes them."""
    import numpy as np

    from tog_core.policy import ranking

    names = sorted(set(ranking.FEATURES) | set(fr.SURE))
    rng = np.random.default_rng(seed)
    for s in ("a", "b"):
        rows = []
        for i in range(12):
            cands = [{"title": f"c{j}", "features": {n: float(rng.random()) for n in names}, "gold": j == i % 3}
                     for j in range(4)]
            rows.append({"id": i, "hops": 1, "question": f"q{i}", "answers": [f"c{i % 3}"], "cands": cands,
                         "answer_entity": "c0"})
        (tmp_path / f"{s}.json").write_text(json.dumps(rows))


def test_fit_ranker_refuses_to_write_a_model_fitted_on_fewer_sets_than_the_product(tmp_path, monkeypatch, capsys):
    """Every family fitted but one of its sets not dumped: the fit is printed, the model file is not written."""
    import pytest


    fr = load("fit_ranker")
    _fake_dumps(fr, tmp_path, seed=0)
    model_file = tmp_path / "ranker.json"
    monkeypatch.setattr(fr, "OUT", tmp_path)
    monkeypatch.setattr(fr, "FAMILIES", {"free": (["a", "b", "c"], False)})
    monkeypatch.setattr(fr.ranking, "MODEL_FILE", model_file)
    with pytest.raises(SystemExit, match=r"not written: the sets c are not dumped; run `python bench/fit_ranker.py "
                                         r"dump c` first"):
        fr.main_fit(write=True)
    assert "free graphs" in capsys.readouterr().out and not model_file.exists()


def test_fit_ranker_can_write_one_family_and_keep_the_others_model_as_shipped(tmp_path, monkeypatch, capsys):
    """`fit --write=free`: the free-text model is refitted, the typed one is copied from the shipped file unchanged;
    a set of another family left undumped does not block it, one of the written family does."""
    import pytest


    fr = load("fit_ranker")
    _fake_dumps(fr, tmp_path, seed=1)
    model_file = tmp_path / "ranker.json"
    typed = {"features": ["x"], "weights": [1.0], "note": "the shipped typed model"}
    model_file.write_text(json.dumps({"free": {"note": "old"}, "typed": typed}))
    monkeypatch.setattr(fr, "OUT", tmp_path)
    monkeypatch.setattr(fr, "FAMILIES", {"free": (["a", "b"], False), "typed": (["t1", "t2"], True)})
    monkeypatch.setattr(fr.ranking, "MODEL_FILE", model_file)
    fr.main_fit(write=True, only="free")
    written = json.loads(model_file.read_text())
    assert written["typed"] == typed and written["free"]["note"].startswith("fitted by bench/fit_ranker.py on")
    assert "kept as shipped: typed" in capsys.readouterr().out
    monkeypatch.setattr(fr, "FAMILIES", {"free": (["a", "b", "c"], False), "typed": (["t1", "t2"], True)})
    with pytest.raises(SystemExit, match=r"the sets c are not dumped"):
        fr.main_fit(write=True, only="free")
    with pytest.raises(SystemExit, match=r"unknown family 'tiped'"):
        fr.main_fit(write=True, only="tiped")


def test_fit_ranker_scores_the_sets_outside_the_fit_with_the_model_fitted_on_every_set(tmp_path, monkeypatch, capsys):
    """A set in OUTSIDE is never fitted on: it is scored by the model fitted on all the family's sets, and each table
    ends with the questions' count of first answers and first three and the means over the sets besides the demo."""
    import re

    fr = load("fit_ranker")
    _fake_dumps(fr, tmp_path, seed=4)
    (tmp_path / "o.json").write_text((tmp_path / "a.json").read_text())  # the same questions as "a", outside
    stale = json.loads((tmp_path / "a.json").read_text())
    for q in stale:
        for c in q["cands"]:
            c["features"].pop("beam", None)  # dumped before a feature existed: named, left out, the fit goes on
    (tmp_path / "old.json").write_text(json.dumps(stale))
    monkeypatch.setattr(fr, "OUT", tmp_path)
    monkeypatch.setattr(fr, "FAMILIES", {"free": (["a", "b"], False)})
    monkeypatch.setattr(fr, "OUTSIDE", {"free": ["o", "never-dumped", "old"]})
    fr.main_fit(write=False)
    out = capsys.readouterr().out
    assert "outside the fit, scored by the model fitted on every set above (undumped: never-dumped, old)" in out
    assert "outside the fit, left out: the dump of old has no beam" in out
    features = tuple(f for f in fr.ranking.FEATURES if f not in fr.UNUSED["free"])
    sets = fr.load(["a", "b", "o"], features)
    full = fr.fit({n: sets[n] for n in ("a", "b")}, False, signed=True, features=features)
    want = fr.report("o", full, sets["o"], fr.rule_hits("o"))
    row = next(line for line in out.splitlines() if line.startswith("o "))
    assert row.split()[3:5] == [f"{want['hits1']:.3f}", f"{want['hits3']:.3f}"]
    left_a = fr.report("a", fr.fit({"b": sets["b"]}, False, signed=True, features=features), sets["a"], 0.0)
    totals = re.findall(r"^all +(\d+) first answers (\d+), first three (\d+)", out, re.M)
    assert len(totals) == 2 and totals[1] == ("12", str(round(want["hits1"] * 12)), str(round(want["hits3"] * 12)))
    assert int(totals[0][0]) == 24 and int(totals[0][1]) >= round(left_a["hits1"] * 12)


def test_fit_ranker_calibration_reads_each_band_of_confidence_against_the_share_right():
    """Per band of confidence: how many questions, their mean confidence and the share answered right; a
    confidence of exactly 1 falls in the top band, an empty band is left out."""
    fr = load("fit_ranker")
    rows = [(0.1, False, False), (0.3, True, True), (0.85, True, True), (1.0, True, True), (0.9, False, True)]
    assert fr.calibration(rows) == ("[0.0, 0.4) 2 mean 0.20 right 0.50; "
                                    "[0.8, 1.0] 3 mean 0.92 right 0.67")
    assert fr.calibration([]) == "no question"


def test_fit_ranker_never_lets_a_feature_of_known_direction_count_against_a_candidate():
    """Data where more agreement between searches marks the wrong candidate: the fitted weight of
    `share_searches` stays at zero (it may not go negative), while a feature of open direction (`hop`) takes the
    data's negative weight; unsigned (`--unsigned`, the typed family) both go negative."""
    import numpy as np

    from tog_core.policy import ranking

    fr = load("fit_ranker")
    rng = np.random.default_rng(3)
    qs = []
    for _ in range(40):
        feats = [{f: float(rng.random()) for f in ranking.FEATURES} for _ in range(4)]
        gold = int(rng.integers(4))
        for j, f in enumerate(feats):  # the gold candidate has the least agreement and the fewest hops
            f["share_searches"] = f["hop"] = 0.0 if j == gold else 1.0 + f["share_searches"]
        X = ranking.design(feats, ranking.FEATURES)
        qs.append((X, np.array([j == gold for j in range(4)])))
    sets = {"a": qs[:20], "b": qs[20:]}
    signed = fr.fit_ranking(sets, signed=True, features=ranking.FEATURES)
    w = dict(zip(ranking.FEATURES, signed.weights))
    assert "share_searches" in ranking.AT_LEAST_ZERO and "hop" not in ranking.AT_LEAST_ZERO
    assert w["share_searches"] == 0.0 and w["hop"] < -0.1
    free = dict(zip(ranking.FEATURES, fr.fit_ranking(sets, signed=False, features=ranking.FEATURES).weights))
    assert free["share_searches"] < -0.1
    assert fr.SIGNED == {"free"}  # the typed family's model is fitted without (kept as shipped)
    # the shipped free-text model holds to the same rule
    shipped = ranking.shipped_model()
    assert shipped is not None
    assert all(v >= 0 for f, v in zip(shipped.features, shipped.weights) if f in ranking.AT_LEAST_ZERO)


def test_fit_ranker_options_leave_features_out_per_family_and_refuse_what_they_cannot(monkeypatch):
    """`fit --without=a,b` adds to every family's left-out features; "bias" (what "none of these" is scored against)
    and unknown names are refused, as are unknown options; the typed family keeps `passage_words` out, as its
    shipped model (fitted before the feature) does."""
    import pytest

    from tog_core.policy import ranking

    fr = load("fit_ranker")
    monkeypatch.setattr(fr, "UNUSED", dict(fr.UNUSED))
    assert fr.fit_options(["--without=hop,is_end", "--write=free"]) == (True, "free")
    assert fr.UNUSED["free"] == {"hop", "is_end"} and fr.UNUSED["typed"] >= {"hop", "is_end", "passage_words"}
    for bad, said in (("--without=bias", "unknown feature"), ("--without=nope", "unknown feature"),
                      ("--with=hop", "unknown option")):
        with pytest.raises(SystemExit, match=said):
            fr.fit_options([bad])
    typed = ranking.shipped_model(typed=True)
    assert typed is not None
    assert typed.features == tuple(f for f in ranking.FEATURES if f not in load("fit_ranker").UNUSED["typed"])


def test_fit_ranker_refuses_a_dump_made_before_a_feature_existed(tmp_path, monkeypatch):
    """A dump without a feature the fit reads would fit it a weight of 0 silently: it asks for a new dump."""
    import pytest

    from tog_core.policy import ranking

    fr = load("fit_ranker")
    _fake_dumps(fr, tmp_path, seed=2)
    monkeypatch.setattr(fr, "OUT", tmp_path)
    assert set(fr.load(["a", "b"], ranking.FEATURES)) == {"a", "b"}
    with pytest.raises(SystemExit, match=r"the dump of a has no new_feature .* dump a` again"):
        fr.load(["a", "b"], (*ranking.FEATURES, "new_feature"))


def test_fit_ranker_puts_the_guess_threshold_nearest_the_issues_operating_point(monkeypatch):
    """Two sets whose right answers run 0.30 … 0.95 and wrong ones 0.10 … 0.65: the default threshold is the one
    whose mean shares come nearest "at least 70% of wrong answers flagged, at most 25% of right ones" (the larger
    shortfall smallest, the lower threshold on a tie); `--balanced` is the best mean of wrong flagged and right not
    flagged; `--target-wrong` the lowest flagging that share of wrong answers."""
    import pytest

    fr = load("fit_ranker")
    right = [(0.30 + 0.05 * i, True, True) for i in range(14)]  # 0.30 … 0.95
    wrong = [(0.10 + 0.05 * i, False, False) for i in range(12)]  # 0.10 … 0.65
    per = [right + wrong, right[1:] + wrong[:-1]]

    def shares(t):
        wf = [sum(p < t for p, h, _ in s if not h) / sum(not h for _, h, _ in s) for s in per]
        rf = [sum(p < t for p, h, _ in s if h) / sum(h for _, h, _ in s) for s in per]
        return sum(wf) / 2, sum(rf) / 2

    t = fr.pick_threshold(per)
    wf, rf = shares(t)
    worst = max(fr.GOAL_WRONG - wf, rf - fr.GOAL_RIGHT)
    grid = [round(0.05 + 0.01 * i, 2) for i in range(91)]
    gaps = {g: max(fr.GOAL_WRONG - a, b - fr.GOAL_RIGHT) for g, (a, b) in zip(grid, map(shares, grid))}
    assert all(v >= worst - 1e-12 for v in gaps.values())
    assert t == min(g for g, v in gaps.items() if v <= worst + 1e-12)  # a tie goes to the lower threshold
    assert (fr.GOAL_WRONG, fr.GOAL_RIGHT) == (0.70, 0.25) and 0.45 < t < 0.55
    # a set with no wrong answers says nothing about flagging them; no set with both: the middle
    assert fr.pick_threshold([*per, right]) == t and fr.pick_threshold([right]) == 0.5 == fr.pick_threshold([])
    monkeypatch.setattr(fr, "BALANCED", True)
    balanced = fr.pick_threshold(per)
    assert balanced != t and all((shares(balanced)[0] - shares(balanced)[1]) >= (a - b) - 1e-12
                                 for a, b in map(shares, grid))
    monkeypatch.setattr(fr, "TARGET_WRONG", 0.9)
    target = fr.pick_threshold(per)
    assert shares(target)[0] >= 0.9 > shares(round(target - 0.01, 2))[0]
    with pytest.raises(SystemExit, match="choose one threshold rule"):
        fr.fit_options(["--balanced", "--target-wrong=0.8"])


def test_agreement_gives_each_candidate_the_variants_probability_from_a_model_that_never_saw_the_set(
        tmp_path, monkeypatch, capsys):
    """bench/agreement.py: a variant's candidates are ranked by the ranking fitted without the scored set (on the
    other dev sets; the full fit for a set outside it), each product candidate gets the variant's probability for it
    and whether it is the variant's first answer, a set without a variant dump is named, and `fit` prints the tables
    with the confidence given `top_vp`, leaving fit_ranker as it found it."""
    fr = load("fit_ranker")
    ag = load("agreement")
    assert ag.fr is fr
    _fake_dumps(fr, tmp_path, seed=7)
    (tmp_path / "o.json").write_text((tmp_path / "b.json").read_text())
    monkeypatch.setattr(fr, "OUT", tmp_path / "ranker-features")
    fr.OUT.mkdir()
    for n in ("a", "b", "o"):
        (tmp_path / f"{n}.json").rename(fr.OUT / f"{n}.json")
    variant = tmp_path / "ranker-features-w2"
    variant.mkdir()
    swapped = json.loads((fr.OUT / "a.json").read_text())
    for q in swapped:  # the variant: the same candidates with other features (its own search)
        for c in q["cands"]:
            c["features"] = {k: 1.0 - v for k, v in c["features"].items()}
    (variant / "a.json").write_text(json.dumps(swapped))
    monkeypatch.setattr(fr, "FAMILIES", {"free": (["a", "b"], False)})
    monkeypatch.setattr(fr, "OUTSIDE", {"free": ["o"]})
    into = tmp_path / "with"
    into.mkdir()
    assert ag.with_variant("w2", into) == ["b", "o"]  # no variant dump: named
    features = tuple(f for f in fr.ranking.FEATURES if f not in fr.UNUSED["free"])
    sets = fr.load(["b"], features)
    without_a = fr.fit(sets, False, signed=True, features=features)
    got = json.loads((into / "a.json").read_text())
    for q, theirs in zip(got, swapped):
        probs, first = ag.variant_probs(without_a, theirs["cands"])
        assert [c["features"]["vp"] for c in q["cands"]] == [probs[c["title"]] for c in q["cands"]]
        assert [c["features"]["vsame"] for c in q["cands"]] == [float(c["title"] == first) for c in q["cands"]]
    assert all(c["features"]["vp"] == 0.0 for q in json.loads((into / "o.json").read_text()) for c in q["cands"])
    sure, out_dir = fr.SURE, fr.OUT
    ag.fit("w2", "vp")
    out = capsys.readouterr().out
    assert "not dumped with w2, read as not agreeing: b, o" in out
    assert "confidence features: p_top, margin, top_sim_chain, top_coverage, top_vp" in out
    assert "outside the fit, scored by the model fitted on every set above" in out
    assert (fr.SURE, fr.OUT, fr.ranking.sure_row.__name__) == (sure, out_dir, "sure_row") and "top_vp" not in \
        fr.ranking.sure_row([0.5, 0.2], [{}, {}])


def test_fit_ranker_keeps_the_agreement_confidence_only_over_the_ranking_it_was_fitted_on(tmp_path, monkeypatch,
                                                                                         capsys):
    """A refit that gives the same model keeps the shipped `agree` (bench/agreement.py's); one that changes the
    ranking leaves it out and says how to fit it again."""
    fr = load("fit_ranker")
    _fake_dumps(fr, tmp_path, seed=2)
    model_file = tmp_path / "ranker.json"
    monkeypatch.setattr(fr, "OUT", tmp_path)
    monkeypatch.setattr(fr, "FAMILIES", {"free": (["a", "b"], False)})
    monkeypatch.setattr(fr.ranking, "MODEL_FILE", model_file)
    fr.main_fit(write=True)
    agree = {"sure": {"features": ["top_vp"], "weights": [1.0], "intercept": 0.0, "mean": [0.0], "scale": [1.0]},
             "low": 0.6}
    model_file.write_text(json.dumps({"free": {**json.loads(model_file.read_text())["free"], "agree": agree}}))
    fr.main_fit(write=True)
    assert json.loads(model_file.read_text())["free"]["agree"] == agree
    _fake_dumps(fr, tmp_path, seed=3)  # other dumps: another ranking
    fr.main_fit(write=True)
    assert "agree" not in json.loads(model_file.read_text())["free"]
    assert "fit it again with `python bench/agreement.py fit erel --write`" in capsys.readouterr().out


def test_agreement_fits_its_confidence_on_rankings_that_never_saw_the_set_unless_told(tmp_path, monkeypatch):
    """bench/agreement.py `fit` (and `--write`, inside it) reads the confidence's inputs off rankings fitted without
    the set, as the variant's probability is made (fit_ranker's CROSSFIT on); `--in-sample` off; fit_ranker's own
    setting is left as it was."""
    fr = load("fit_ranker")
    ag = load("agreement")
    seen = []
    monkeypatch.setattr(ag, "with_variant", lambda variant, into: [])
    monkeypatch.setattr(fr, "main_fit", lambda write: seen.append(("tables", fr.CROSSFIT)))
    monkeypatch.setattr(ag, "write_agree", lambda variant, feature: seen.append(("write", fr.CROSSFIT)))
    monkeypatch.setattr(fr, "OUT", tmp_path / "ranker-features")
    ag.fit("erel", "vp", write=True)
    ag.fit("erel", "vp", crossfit=False)
    assert seen == [("tables", True), ("write", True), ("tables", False)]
    assert fr.CROSSFIT is False
