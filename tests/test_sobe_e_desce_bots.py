"""The Sobe e Desce heuristic player and search candidates: legal, lossless, and better than
random."""

from __future__ import annotations

import random
import statistics

import pytest

from bots.heuristics.sobe_e_desce import candidates, choose
from bots.levels import get_level
from engines.sobe_e_desce import GAME, Move
from engines.sobe_e_desce.game import DECIDE, PLAY, TRUMP_PHASE
from tests.sobe_e_desce_support import new, play


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
            # the search's root leans towards this player's choice among the candidates:
            # it is among them, and the move it would make from all the legal moves
            assert choose(GAME, s, seat, cands, rng) == move and move in cands
            s = GAME.apply(s, seat, move)


def test_candidates_keep_one_card_of_each_equivalent_run() -> None:
    # runs 2c 3c, 5c and 7c Ac (4c and Q J K unseen between); the heuristic leads the master
    # ace, which stands for its run
    s = play(new({0: "2c 3c 5c 7c Ac"}), "trump s", "play", "play", "play", "play")
    assert s.phase == PLAY
    legal = GAME.legal_moves(s, 0)
    assert choose(GAME, s, 0, legal, random.Random(1)) == Move("Ac")
    assert [m.text for m in candidates(GAME, s, 0, legal)] == ["2c", "5c", "Ac"]


def test_a_card_in_the_open_trick_separates_two_otherwise_equivalent_cards() -> None:
    # spades trump: over the 7 just led, the ace wins the trick and the king loses it
    s = play(new({0: "7s 2c 3c 4c 5c", 1: "Ks As 2d 3d 4d"}), "trump s", "play", "play", "play",
             "play", "7s")
    legal = GAME.legal_moves(s, 1)
    assert [m.text for m in legal] == ["Ks", "As"]
    assert [m.text for m in candidates(GAME, s, 1, legal)] == ["Ks", "As"]
    assert choose(GAME, s, 1, legal, random.Random(1)) == Move("As")


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


SEARCH_LEVELS = ("easy", "medium", "hard", "expert")


def _spy_search(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, float]]:
    """Records each search's (iterations, prior) and runs it on a budget of 20 to stay quick."""
    import bots.levels

    seen: list[tuple[int, float]] = []
    real = bots.levels.search

    def spy(game: object, view: object, seat: int, rng: random.Random, iterations: int,
            seconds: float | None, **kwargs: object) -> object:
        seen.append((iterations, kwargs["prior"]))  # type: ignore[arg-type]
        return real(game, view, seat, rng, 20, None, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(bots.levels, "search", spy)
    return seen


@pytest.mark.parametrize("name", SEARCH_LEVELS)
def test_every_search_level_plays_the_heuristics_trump_choice_play_pass_and_exchange(
    name: str, monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the decisions where the search's departures were measured to lose: the heuristic's move,
    # no search (a pass of a hopeless hand, an exchange, a named trump)
    seen = _spy_search(monkeypatch)
    spots = [
        (play(new({3: "2c 3d 4h 2d 3c"}), "trump s", "play", "play", "play"), "pass"),
        (play(new({1: "As 7s Ks 2c 3c"}), "trump s", "play"), "exchange 2c 3c"),
        (new({0: "As 7s Ks 2c 3d"}), "trump s"),
    ]
    for s, expected in spots:
        seat = s.to_act
        for r in range(3):
            move, stats = get_level(name).choose(GAME, GAME.view(s, seat), seat, random.Random(r))
            assert move == Move(expected) and stats is not None and stats.iterations == 0
    assert seen == []


def test_every_search_level_searches_the_card_plays_with_its_budget_and_prior(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen = _spy_search(monkeypatch)
    s = play(new({0: "2c 3c 5c 7c Ac"}), "trump s", "play", "play", "play", "play")
    assert s.phase == PLAY
    for name in SEARCH_LEVELS:
        move, _ = get_level(name).choose(GAME, GAME.view(s, 0), 0, random.Random(1))
        assert move in GAME.legal_moves(s, 0)
    # the levels' budgets, and a root prior of a fifth of each
    assert seen == [(50, 10.0), (200, 40.0), (1000, 200.0), (4000, 800.0)]


def test_the_bench_keys_the_levels_by_the_phases_they_leave_to_the_heuristic() -> None:
    from bench.strength import level_print

    assert f"'heuristic_phases': [{int(TRUMP_PHASE)}, {int(DECIDE)}]" in level_print(
        "sobe_e_desce", "easy", "heuristic")
    assert "heuristic_phases" not in level_print("dou_dizhu", "easy", "heuristic")
