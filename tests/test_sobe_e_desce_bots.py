"""The Sobe e Desce heuristic player and search candidates: legal, lossless, and better than
random."""

from __future__ import annotations

import random
import statistics

import pytest

from bots.heuristics.sobe_e_desce import candidates, choose
from bots.levels import get_level
from engines.sobe_e_desce import GAME, Move
from engines.sobe_e_desce.game import DECIDE, PLAY
from tests.test_sobe_e_desce_rules import new, play


def test_heuristic_and_candidates_stay_legal_in_every_phase() -> None:
    rng = random.Random(3)
    for g in range(20):
        s = GAME.new_game(4, {"start_score": 8}, seed=f"h{g}")
        while not GAME.is_over(s):
            seat = s.to_act
            legal = GAME.legal_moves(s, seat)
            cands = candidates(GAME, s, seat, legal)
            assert cands and set(cands) <= set(legal)
            if s.phase == DECIDE:
                assert Move("play") in cands
            move = choose(GAME, s, seat, legal, rng)
            assert move in legal
            s = GAME.apply(s, seat, move)


def test_candidates_keep_one_card_of_each_equivalent_run() -> None:
    s = play(new({0: "2c 3c 5c 7c Ac"}), "trump s", "play", "play", "play", "play")
    assert s.phase == PLAY
    legal = GAME.legal_moves(s, 0)
    assert [m.text for m in candidates(GAME, s, 0, legal)] == ["2c", "5c", "7c"]


def test_the_heuristic_chooses_trumps_from_its_strength() -> None:
    s = new({0: "As 7s Ks 2c 3d"})
    assert choose(GAME, s, 0, GAME.legal_moves(s, 0), random.Random(1)) == Move("trump s")
    s = new({0: "2c 3d 4s 5h 6c"})
    assert choose(GAME, s, 0, GAME.legal_moves(s, 0), random.Random(1)) == Move("turn")


def test_the_heuristic_passes_hopeless_hands_and_plays_strong_ones() -> None:
    # with three players in already, five fresh cards are not worth the risk of +5
    s = play(new({3: "2c 3d 4h 2d 3c"}), "trump s", "play", "play", "play")
    assert choose(GAME, s, 3, GAME.legal_moves(s, 3), random.Random(1)) == Move("pass")
    s = play(new({1: "As 7s Ks 2c 3c"}), "trump s", "play")
    assert choose(GAME, s, 1, GAME.legal_moves(s, 1), random.Random(1)) == Move("exchange 2c 3c")


def _match(seed: str, heuristic_seats: set[int]) -> tuple[int, ...]:
    s = GAME.new_game(4, {"start_score": 6}, seed)
    rng = random.Random(seed)
    while not GAME.is_over(s):
        seat = s.to_act
        legal = GAME.legal_moves(s, seat)
        move = choose(GAME, s, seat, legal, rng) if seat in heuristic_seats else rng.choice(legal)
        s = GAME.apply(s, seat, move)
    return GAME.result(s).totals


def test_the_heuristic_beats_random_play() -> None:
    diffs = []
    for d in range(40):
        a = _match(f"duel{d}", {0, 2})
        b = _match(f"duel{d}", {1, 3})
        diffs.append((a[0] + a[2] + b[1] + b[3] - a[1] - a[3] - b[0] - b[2]) / 4)
    assert statistics.fmean(diffs) > 5


def test_every_search_level_takes_a_root_prior_in_proportion_to_its_budget(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import bots.levels

    seen: list[float] = []
    real = bots.levels.search

    def spy(*args: object, **kwargs: object) -> object:
        seen.append(kwargs["prior"])  # type: ignore[arg-type]
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(bots.levels, "search", spy)
    s = GAME.new_game(4, {"start_score": 8}, seed="prior")
    for name in ("easy", "medium"):
        move, _ = get_level(name).choose(GAME, GAME.view(s, s.to_act), s.to_act, random.Random(1))
        assert move in GAME.legal_moves(s, s.to_act)
    assert seen == [10.0, 40.0]  # 50 and 200 iterations: a fifth of the budget
