"""The Doppelkopf heuristic player: legal, cheap, and clearly better than random."""

from __future__ import annotations

import random

from bots.heuristics import get_candidates, get_heuristic
from engines.doppelkopf import GAME
from tests.doppelkopf_support import healthy, new


def test_heuristic_and_candidates_are_found_by_game_name() -> None:
    assert get_heuristic("doppelkopf").__module__ == "bots.heuristics.doppelkopf"
    assert get_candidates("doppelkopf") is not None


def test_candidates_keep_every_card_pass_and_the_lowest_announcement() -> None:
    prune = get_candidates("doppelkopf")
    s = healthy(new({0: "Qc", 2: "Qc"}))
    legal = GAME.legal_moves(s, 0)
    kept = prune(GAME, s, 0, legal)
    assert [m.text for m in kept if m.kind != 0] == ["re"]
    assert [m for m in kept if m.kind == 0] == [m for m in legal if m.kind == 0]
    assert [m.text for m in prune(GAME, s, 1, GAME.legal_moves(s, 1))] == ["pass", "kontra"]


def test_heuristic_beats_random() -> None:
    choose = get_heuristic("doppelkopf")
    rng = random.Random(4)
    totals = [0, 0]  # heuristic seats (0, 2), random seats (1, 3)
    for deal in range(40):
        s = GAME.new_game(4, {"deals": 1}, f"arena-{deal}")
        while not GAME.is_over(s):
            acting = sorted(GAME.to_act(s))
            seat = acting[0] if len(acting) == 1 else rng.choice(acting)
            legal = GAME.legal_moves(s, seat)
            move = choose(GAME, s, seat, legal, rng) if seat % 2 == 0 else rng.choice(legal)
            assert move in legal
            s = GAME.apply(s, seat, move)
        scores = GAME.result(s).totals
        totals[0] += scores[0] + scores[2]
        totals[1] += scores[1] + scores[3]
    assert totals[0] > totals[1] + 100, totals
