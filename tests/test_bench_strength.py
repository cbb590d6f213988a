"""The strength benchmarks' bookkeeping: who won, which sides, and runs that resume."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench.strength import Results, club_queen_parties, main, parse_sides, side_score
from engines.doppelkopf.cards import CLUB_QUEEN, count
from engines.registry import get_game


def test_equal_sides_are_scored_by_their_points_together() -> None:
    # a lost solo by seat 0: -3x for him, +x for each other seat
    assert side_score((0, 2), (-9, 3, 3, 3), (1, 2, 3)) == 0.0
    assert side_score((1, 3), (-9, 3, 3, 3), (1, 2, 3)) == 1.0
    assert side_score((0,), (5, 5), (0, 1)) == 0.5
    assert side_score((1,), (4, 7), (1,)) == 1.0


def test_one_seat_against_the_others_gets_its_share_of_the_winners() -> None:
    assert side_score((2,), (9, 9, 0, 9), (2,)) == 1.0
    assert side_score((2,), (0, 9, 0, 9), (0, 2)) == 0.5
    assert side_score((1,), (0, 9, 9, 9), (0,)) == 0.0


def test_sides_are_parsed_and_checked() -> None:
    assert parse_sides("0,2/1,3", 4) == [(0, 2), (1, 3)]
    assert parse_sides("", 3) == [(0,), (1,), (2,)]
    with pytest.raises(ValueError, match="at most once"):
        parse_sides("0,1/1,2", 4)
    with pytest.raises(ValueError, match="at most once"):
        parse_sides("0/4", 4)


def test_doppelkopf_parties_are_the_club_queen_holders() -> None:
    game = get_game("doppelkopf")
    found = 0
    for deal in range(12):
        seed = f"t/{deal}"
        parties = club_queen_parties(game, 4, {"deals": 1}, seed)
        hands = game.new_game(4, {"deals": 1}, seed).hands
        holders = [seat for seat in range(4) if count(hands[seat], CLUB_QUEEN)]
        if len(holders) == 1:
            assert parties == []
        else:
            found += 1
            assert parties[0] == tuple(holders)
            assert sorted(parties[0] + parties[1]) == [0, 1, 2, 3]
    assert found


def test_results_keep_other_keys_and_skip_done_deals(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    first = Results(str(path), {"game": "dos", "seed": "a"})
    first.add(0, diff=1.5)
    first.add(2, diff=-1.0)
    Results(str(path), {"game": "dos", "seed": "b"}).add(1, diff=9.0)
    again = Results(str(path), {"game": "dos", "seed": "a"})
    assert again.todo(4) == [1, 3]
    assert [r["diff"] for r in again.rows(4)] == [1.5, -1.0]
    assert [r["diff"] for r in again.rows(1)] == [1.5]


def test_rows_of_another_level_definition_are_not_counted(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    Results(str(path), {"seed": "a", "levels": "easy at 50 iterations"}).add(0, diff=1.0)
    Results(str(path), {"seed": "a"}).add(1, diff=2.0)  # says nothing of its levels
    Results(str(path), {"seed": "a", "levels": "easy at 80 iterations"}).add(2, diff=3.0)
    now = Results(str(path), {"seed": "a", "levels": "easy at 80 iterations"})
    assert now.todo(4) == [0, 1, 3]
    assert [r["diff"] for r in now.rows(4)] == [3.0]


def test_a_sides_run_goes_on_where_the_last_one_stopped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "sides.jsonl"
    args = ["sides", "dobro", "--players", "2", "--level", "heuristic", "--opponent", "random",
            "--option", "rounds=1", "--results", str(path)]
    main([*args, "--deals", "3"])
    main([*args, "--deals", "5"])
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["deal"] for r in rows] == [0, 1, 2, 3, 4]
    assert all(len(r["scores"]) == 2 for r in rows)
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert "| 5 | 10 |" in last


def test_rows_without_a_needed_outcome_are_played_again(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    Results(str(path), {"seed": "a"}).add(0, diff=1.0)  # from before win rates were kept
    Results(str(path), {"seed": "a"}).add(1, diff=2.0, wins=0.5)
    now = Results(str(path), {"seed": "a"}, needs=("diff", "wins"))
    assert now.todo(2) == [0]
    now.add(0, diff=1.0, wins=-0.25)
    again = Results(str(path), {"seed": "a"}, needs=("diff", "wins"))
    assert [r["wins"] for r in again.rows(2)] == [-0.25, 0.5]


def test_a_ladder_step_reports_points_and_win_rates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "ladder.jsonl"
    main(["ladder", "dou_dizhu", "--steps", "heuristic>random", "--deals", "3", "--jobs", "1",
          "--results", str(path)])
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["deal"] for r in rows] == [0, 1, 2]
    # three seats, two levels: six seatings with each level in nine seats, so steps of 1/9
    assert all(-1 <= r["wins"] <= 1 and round(r["wins"] * 9, 6).is_integer() for r in rows)
    assert any(r["wins"] != 0 for r in rows)
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last.startswith("| heuristic > random | 3 | 18 |") and last.count("|") == 10


def test_a_levels_own_game_options_are_part_of_its_print(monkeypatch: pytest.MonkeyPatch) -> None:
    import bots.heuristics.sobe_e_desce as module
    from bench.strength import level_print
    from bots.heuristics import get_search_options

    before = level_print("sobe_e_desce", "hard", "medium")
    monkeypatch.setattr(module, "LEVEL_OPTIONS", {"hard": {"prior": 1.0}}, raising=False)
    assert get_search_options("sobe_e_desce", "hard") == {"prior": 1.0}
    assert get_search_options("sobe_e_desce", "medium") == get_search_options("sobe_e_desce")
    assert get_search_options("sobe_e_desce") == {"prior": 10.0}
    # rows measured before the level had its own options do not count as this level's
    assert level_print("sobe_e_desce", "hard", "medium") != before
    assert "{'hard': {'prior': 1.0}}" not in level_print("sobe_e_desce", "medium", "easy")


def test_the_bistro_benchmarks_blind_twin_decides_without_the_uncut_deck(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import random

    from bench.bistro_knowledge import register
    from bots.levels import LEVELS, Level

    game = get_game("doppelkopf")
    rng = random.Random(3)
    s = game.new_game(4, {"bistro": True, "deals": 2}, "blind")
    while s.deal_number == 0:
        seat = rng.choice(sorted(game.to_act(s)))
        s = game.apply(s, seat, rng.choice(list(game.legal_moves(s, seat))))
    seat = sorted(game.to_act(s))[0]
    v = game.view(s, seat)
    assert v.uncut_deck
    seen: list[str] = []

    def record(self: Level, g: object, view: Any, st: int, r: random.Random) -> None:
        seen.append(view.uncut_deck)

    monkeypatch.setattr(Level, "choose", record)
    name = register("easy")
    try:
        LEVELS[name].choose(game, v, seat, rng)
        LEVELS["easy"].choose(game, v, seat, rng)
    finally:
        del LEVELS[name]
    assert seen == ["", v.uncut_deck] and v.uncut_deck  # the caller's view is left whole


def test_a_levels_benchmark_key_is_the_one_its_recorded_rows_carry() -> None:
    """Rows in bench results files are keyed by these texts: changing one silently drops every
    measurement of the level. An option added later is left out while it keeps its default."""
    import dataclasses

    from bots.levels import benchmark_key, get_level

    hard = get_level("hard")
    assert benchmark_key(hard) == (
        "Level(name='hard', kind='ismcts', iterations=1000, seconds=1.0, "
        "heuristic_playouts=True, pruned=True, prior=0.0, policy_opponents=None)"
    )
    inferring = dataclasses.replace(hard, inference=0.5)
    assert benchmark_key(inferring).endswith("policy_opponents=None, inference=0.5)")
    assert "inference" in repr(hard)  # the repr is the dataclass's own again
