"""The Doppelkopf heuristic player: legal, cheap, and clearly better than random."""

from __future__ import annotations

import random

from bots.heuristics import get_candidates, get_heuristic
from engines.doppelkopf import GAME
from tests.doppelkopf_support import healthy, new, play


def test_heuristic_and_candidates_are_found_by_game_name() -> None:
    assert get_heuristic("doppelkopf").__module__ == "bots.heuristics.doppelkopf"
    assert get_candidates("doppelkopf") is not None


def test_candidates_keep_every_card_pass_and_the_announcement_the_player_would_make() -> None:
    prune = get_candidates("doppelkopf")
    assert prune is not None
    strong = healthy(new({0: "Qc Th Th Qs Qs Qh Qh Jc Jc Ad Ac As", 2: "Qc"}))
    legal = GAME.legal_moves(strong, 0)
    kept = prune(GAME, strong, 0, legal)
    assert [m.text for m in kept if m.kind != 0] == ["re"]
    assert [m for m in kept if m.kind == 0] == [m for m in legal if m.kind == 0]
    assert [m.text for m in prune(GAME, strong, 1, GAME.legal_moves(strong, 1))] == ["pass"]
    weak = healthy(new({0: "Qc 9c 9c 9s 9s 9h 9h Kc Kc Ks Ks Kh", 2: "Qc"}))
    assert [m.text for m in prune(GAME, weak, 0, GAME.legal_moves(weak, 0)) if m.kind != 0] == []


def test_candidates_before_the_play_follow_the_reservation_rule() -> None:
    prune = get_candidates("doppelkopf")
    assert prune is not None
    plain = new({0: "Td Td Qd Qd Jh Jh Jd Ad Kd Ac As 9h"})
    assert [m.text for m in prune(GAME, plain, 0, GAME.legal_moves(plain, 0))] == ["healthy"]
    queens = new({0: "Qc Qc Ac As Ah Th Kd Kd 9c Kh Ks Js"})
    assert [m.text for m in prune(GAME, queens, 0, GAME.legal_moves(queens, 0))] == [
        "healthy", "reservation"]
    named = play(queens, "reservation", "healthy", "healthy", "healthy")
    assert [m.text for m in prune(GAME, named, 0, GAME.legal_moves(named, 0))] == ["marriage"]
    solo = play(new({0: "Th Th Qc Qs Qs Qh Jc Ad Td Kd 9d Ac"}),
                "reservation", "healthy", "healthy", "healthy")
    assert [m.text for m in prune(GAME, solo, 0, GAME.legal_moves(solo, 0))] == ["solo diamonds"]


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


def _choice(state, seat: int) -> str:
    choose = get_heuristic("doppelkopf")
    return choose(GAME, state, seat, GAME.legal_moves(state, seat), random.Random(0)).text


def test_heuristic_keeps_a_trump_rich_hand_without_the_top_trumps_healthy() -> None:
    # nine trumps and two side aces: a solo under the old rule, a loss as this player plays it
    s = new({0: "Td Td Qd Qd Jh Jh Jd Ad Kd Ac As 9h"})
    assert _choice(s, 0) == "healthy"


def test_heuristic_plays_a_solo_with_nearly_all_trumps_and_the_top_ones() -> None:
    s = new({0: "Th Th Qc Qs Qs Qh Jc Ad Td Kd 9d Ac"})
    assert _choice(s, 0) == "reservation"
    s = play(s, "reservation", "healthy", "healthy", "healthy")
    assert _choice(s, 0) == "solo diamonds"


def test_heuristic_announces_a_marriage_with_both_club_queens() -> None:
    s = new({0: "Qc Qc Ac As Ah Th Kd Kd 9c Kh Ks Js"})
    assert _choice(s, 0) == "reservation"
    s = play(s, "reservation", "healthy", "healthy", "healthy")
    assert _choice(s, 0) == "marriage"


def test_heuristic_names_its_strongest_solo_when_it_must_name_one() -> None:
    # a reserving seat without both club queens has to name a solo (a search may reserve)
    s = play(new({0: "Ac Ac Tc Tc Kc Kc Qc Jc 9c 9c As Ah"}),
             "reservation", "healthy", "healthy", "healthy")
    assert _choice(s, 0) == "solo clubs"
