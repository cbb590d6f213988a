"""The think-time benchmark: positions with a choice, one row per level, ordered times."""

from __future__ import annotations

import random

import pytest

from bench.think_time import main, measure, positions
from engines.registry import get_game


def test_positions_give_the_acting_seat_a_choice() -> None:
    game = get_game("sobe_e_desce")
    found = positions("sobe_e_desce", 6)
    assert len(found) == 6
    for view, seat in found:
        state = game.sample(view, random.Random(0))
        assert seat in game.to_act(state)
        assert len(game.legal_moves(state, seat)) > 1


def test_one_row_per_level_with_the_searches_iterations() -> None:
    rows = measure("dou_dizhu", ["random", "easy"], 3)
    assert len(rows) == 2
    cells = [row.strip("| ").split(" | ") for row in rows]
    assert [c[:4] for c in cells] == [["dou_dizhu", "3", "random", "3"],
                                      ["dou_dizhu", "3", "easy", "3"]]
    for c in cells:
        median, p90, most = (float(x.replace(",", "")) for x in c[4:7])
        assert 0 <= median <= p90 <= most
    assert cells[0][-1] == "0"  # random searches nothing
    assert 0 < float(cells[1][-1]) <= 50  # easy: 50 iterations unless a move wins outright


def test_an_unknown_level_fails_before_any_game(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ValueError, match="unknown bot level 'genius'"):
        main(["--levels", "easy,genius", "--games", "dou_dizhu"])
    assert capsys.readouterr().out == ""
