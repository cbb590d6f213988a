"""The agreement benchmark: where two levels choose differently, valued by play-outs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.agreement import main, play_match, report, unhurried

SHORT = {"start_score": 2}  # Sobe e Desce matches of one or two deals


def test_levels_are_compared_without_their_time_limits() -> None:
    assert unhurried("hard").seconds is None
    assert unhurried("hard").iterations == 1000


def test_a_level_agrees_with_itself() -> None:
    decisions = []
    for match in range(3):
        _, out = play_match(("sobe_e_desce", 4, SHORT, "t", match, "heuristic", "heuristic", 1.0, 2, False))
        decisions += out
    assert len(decisions) > 10
    assert all(same and gain == 0.0 for _, same, gain in decisions)


def test_the_heuristic_gains_where_random_play_chooses_otherwise() -> None:
    """Played out from the true position and from worlds dealt from the view alike."""
    for worlds in (False, True):
        decisions = []
        for match in range(4):
            _, out = play_match(
                ("sobe_e_desce", 4, SHORT, "t", match, "heuristic", "random", 1.0, 4, worlds))
            decisions += out
        differ = [gain for _, same, gain in decisions if not same]
        assert len(differ) > 10
        assert sum(differ) > 0


def test_the_report_counts_agreement_and_averages_the_gains() -> None:
    rows = [{"deal": 0, "decisions": [["cards", True, 0.0], ["add", False, 2.0]]},
            {"deal": 1, "decisions": [["end", False, -1.0], ["cards", True, 0.0]]}]
    line = report(rows, "expert", "hard")[-1]
    # 4 decisions, 2 the same; where they differ +0.5 on average, +0.25 per decision compared
    assert line.startswith("| expert vs hard | 2 | 4 | 0.50 | 2 | +0.500 |")
    assert line.endswith("| +0.250 |")


def test_a_run_goes_on_where_the_last_one_stopped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "agreement.jsonl"
    args = ["sobe_e_desce", "--option", "start_score=2", "--high", "heuristic", "--low", "random",
            "--rollouts", "1", "--share", "0.5", "--results", str(path)]
    main([*args, "--matches", "2"])
    main([*args, "--matches", "3"])
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["deal"] for r in rows] == [0, 1, 2]
    assert "| heuristic vs random | 3 |" in capsys.readouterr().out.strip().splitlines()[-1]
