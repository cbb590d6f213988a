"""The inference benchmark: a world's hidden cards scored against the truth, one row per epsilon."""

from __future__ import annotations

import random

import pytest

from bench.inference import hidden_overlap, main, measure
from engines.dou_dizhu import GAME as DD


def test_the_truth_places_every_card_and_a_uniform_world_some() -> None:
    state = DD.new_game(3, {}, seed="overlap")
    view = DD.view(state, 0)
    assert hidden_overlap(DD, state, state, 0) == 1.0
    shares = [hidden_overlap(DD, state, DD.sample(view, random.Random(k)), 0) for k in range(30)]
    assert all(0.0 <= x <= 1.0 for x in shares)
    assert 0.2 < sum(shares) / len(shares) < 0.8  # two hidden hands of 17 from 37 cards
    assert min(shares) < 1.0


def test_rows_per_epsilon_and_the_model_helps_against_itself() -> None:
    rows = measure("dou_dizhu", "heuristic", 30, 60, [1.0, 0.1], "test")
    cells = [row.strip("| ").split(" | ") for row in rows]
    assert [c[:5] for c in cells] == [["dou_dizhu", "heuristic", "30", "60", "1"],
                                      ["dou_dizhu", "heuristic", "30", "60", "0.1"]]
    uniform, weighted = float(cells[0][5]), float(cells[1][5])
    assert cells[0][6].startswith("+0.0000") and float(cells[0][7]) == 60.0
    # against the very player the model describes, weighing places more cards right
    assert weighted > uniform
    assert float(cells[1][7]) < 60.0


def test_a_game_without_a_model_is_refused() -> None:
    with pytest.raises(SystemExit, match="no model"):
        main(["--games", "dos", "--positions", "1"])
