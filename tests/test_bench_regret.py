"""The regret benchmark: departures from the heuristic player, valued by play-outs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.regret import kind, main, play_match, report

SHORT = {"start_score": 2}  # Sobe e Desce matches of one or two deals


def test_moves_are_grouped_by_keyword_and_card_plays_together() -> None:
    assert kind("exchange 2c Qd") == "exchange"
    assert kind("trump h") == "trump"
    assert kind("pass") == "pass"
    assert kind("7h") == "cards"
    assert kind("KKK") == "cards"
    assert kind("33344 5") == "cards"


def test_the_heuristic_player_never_departs_from_itself() -> None:
    for match in range(3):
        _, departures = play_match(("sobe_e_desce", 4, SHORT, "t", match, "heuristic", 2))
        assert departures == []


def test_random_play_departs_and_costs_points() -> None:
    gains = []
    for match in range(4):
        _, departures = play_match(("sobe_e_desce", 4, SHORT, "t", match, "random", 3))
        gains += [gain for _, gain in departures]
    assert len(gains) > 10
    assert sum(gains) < 0


def test_the_total_is_per_level_seat() -> None:
    rows = [{"deal": 0, "departures": [["pass -> play", -3.0], ["cards -> cards", 1.0]]},
            {"deal": 1, "departures": []}]
    lines = report(rows, 4)
    assert lines[2].startswith("| pass -> play | 1 | -3.000 |")
    assert lines[3].startswith("| cards -> cards | 1 | +1.000 |")
    # match 0: seats 0 and 2, -2 in all: -1 a seat; match 1: nothing departed
    assert lines[-1].startswith("| **per level seat and match** (2 matches) | 2 | -0.500 |")


def test_a_regret_run_goes_on_where_the_last_one_stopped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "regret.jsonl"
    args = ["sobe_e_desce", "--level", "random", "--option", "start_score=2", "--rollouts", "1",
            "--results", str(path)]
    main([*args, "--matches", "2"])
    main([*args, "--matches", "3"])
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["deal"] for r in rows] == [0, 1, 2]
    assert "(3 matches)" in capsys.readouterr().out.strip().splitlines()[-1]
