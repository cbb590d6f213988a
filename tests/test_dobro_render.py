"""The Dobro terminal layout: what a player and a spectator read at each stage."""

from __future__ import annotations

from croupier.v1 import croupier_pb2 as pb

from clients.render import renderer_for
from engines.dobro import GAME
from tests.dobro_support import by, new, play, with_hand

TABLE = pb.Table(seats=[pb.SeatInfo(seat=s, kind=pb.SEAT_KIND_BOT, is_bot=True, occupied=True)
                        for s in range(4)])
R = renderer_for("dobro")


def test_the_auction_value_and_hand_are_shown_on_the_players_turn() -> None:
    s = new(4, ["9 2 2 3 3 4", "9 4 4 5 5 6", "J J 6 7 7 7", "8 2 3 5 6 6"], opener=3)
    s = play(s, "8", "9", "9")
    view = GAME.view(s, 2)
    public = "\n".join(R.public(view, TABLE, 2))
    assert "round 1 of 3, play goes in seat order" in public
    assert "Auction at 18: seat 3 (bot) 8 → 8, seat 0 (bot) 9 → 9, seat 1 (bot) 9 → 18 Dobro!" in public
    turn = [text for text, _ in R.turn(view, TABLE, 2)]
    assert turn[0].startswith("Value in play: 18 (3 cards to take if you pass)")
    assert turn[1] == "Your hand (6 cards): 6 7 7 7 J J"
    summary = R.summary(GAME.view(s, None), TABLE)
    assert summary.startswith("Dobro! The value is now 18.") and "value 18, 3 cards in play" in summary


def test_opening_drawing_calls_and_the_round_end_read_clearly() -> None:
    s = new(3, ["9 2 2 3 3 4", "10 4 4 5 5 6", "8 8 6 7 9 11"], pile="12 11 10", manual_draw=True)
    assert R.turn(GAME.view(s, 0), TABLE, 0)[0][0] == "You open the auction: play a card or a pair."
    s = play(s, "9")
    assert R.turn(GAME.view(s, 0), TABLE, 0)[0][0].startswith("Draw to refill")
    s = play(s, "end")
    view = GAME.view(s, 2)
    # not seat 2's turn: the call is offered beside the turn, never asked for
    assert R.optional(view, [GAME.format_move(m) for m in GAME.legal_moves(s, 2)]) == ["call 0"]
    assert R.also(view, TABLE, 2, ["call 0"]).startswith(
        "Also: call 0 — seat 0 (bot) forgot to draw: calling it gives them the Oubli card")
    assert "Forgot to draw (may be called): seat 0 (bot)" in R.public(view, TABLE, 2)
    s = by(s, 2, "call 0")
    assert "Oubli card (+1 point): seat 0 (bot)" in R.public(GAME.view(s, 1), TABLE, 1)
    t = s.copy()
    t.collected = (t.collected[0], t.collected[1], t.collected[2] + sum(1 << (4 * k) for k in t.pile[t.pos:]))
    t.pile, t.pos = (), 0
    t = with_hand(t, 1, "12")
    t = play(t, "12")
    lines = R.deal_over(GAME.view(t, None), TABLE, None)
    assert lines[0] == "  seat 1 (bot) played its last card"
    assert "  seat 0 (bot): 0 cards collected, 2 points (with the Oubli card)" in lines
