"""Bots at a Dobro table: the heuristic and the ISMCTS levels pick legal moves in every stage,
including the calls that several seats may make at once under manual_draw."""

from __future__ import annotations

import random

from bots.heuristics.dobro import candidates, choose
from bots.levels import LEVELS
from engines.dobro import GAME
from engines.dobro.game import DRAW_STAGE, END_TURN, PLAY


def _states(seed: int):
    """States of a random manual_draw game, tagged by what the seat to judge faces."""
    rng = random.Random(seed)
    state = GAME.new_game(3, {"manual_draw": True, "rounds": 1}, f"bots{seed}")
    while not GAME.is_over(state):
        acting = sorted(GAME.to_act(state))
        for seat in acting:
            if seat != state.turn:
                yield "call", state, seat
            elif state.stage == PLAY:
                yield ("open" if not state.auction else "follow"), state, seat
            elif state.stage in (DRAW_STAGE, END_TURN):
                yield "draw", state, seat
        seat = rng.choice(acting)
        legal = GAME.legal_moves(state, seat)
        state = GAME.apply(state, seat, legal[rng.randrange(len(legal))])


def test_easy_and_the_heuristic_pick_legal_moves_in_every_stage() -> None:
    easy = LEVELS["easy"]
    rng = random.Random(1)
    seen: dict[str, int] = {}
    for seed in range(6):
        for what, state, seat in _states(seed):
            if seen.get(what, 0) >= 2:
                continue
            legal = GAME.legal_moves(state, seat)
            assert choose(GAME, state, seat, legal, rng) in legal
            pruned = candidates(GAME, state, seat, legal)
            assert pruned and set(pruned) <= set(legal)
            move, _ = easy.choose(GAME, GAME.view(state, seat), seat, rng)
            assert move in legal, (what, move, legal)
            seen[what] = seen.get(what, 0) + 1
        if all(seen.get(k, 0) >= 2 for k in ("open", "follow", "draw", "call")):
            break
    assert set(seen) == {"open", "follow", "draw", "call"}


def test_the_heuristic_calls_a_forgetting_and_never_forgets_to_draw() -> None:
    from tests.dobro_support import by, legal, new, play

    s = new(3, ["9 2 2 3 3 4", "10 4 4 5 5 6", "8 8 6 7 9 11"], pile="12 11 10", manual_draw=True)
    s = play(s, "9")
    rng = random.Random(0)
    assert choose(GAME, s, 0, GAME.legal_moves(s, 0), rng).text == "draw"
    s = play(s, "end")
    assert legal(s, 2) == ["call 0"]
    assert choose(GAME, s, 1, GAME.legal_moves(s, 1), rng).text == "call 0"
    assert by(s, 1, "call 0").oubli == 0


def test_the_heuristic_beats_random_play() -> None:
    from bots.arena import play_deal

    wins = {"heuristic": 0.0, "random": 0.0}
    for deal in range(12):
        seating = ("heuristic", "random", "random") if deal % 2 else ("random", "heuristic", "random")
        totals, winners = play_deal("dobro", 3, {"rounds": 1}, f"arena{deal}", seating)
        for w in winners:
            wins[seating[w]] += 1 / len(winners)
    assert wins["heuristic"] > 12 / 3  # better than its fair share of the wins
