"""Dos test helpers: decks stacked for the hands asked for, and play by move text."""

from __future__ import annotations

from collections import Counter

from engines.dos import GAME, parse_move
from engines.dos.cards import (
    code,
    full_deck,
    parse_card,
)
from engines.dos.game import DosState


def deck_for(hands: list[str], row: str, pile: str = "") -> str:
    """A deck order (top first) dealing `hands` (7 codes each) with dealer = last seat."""
    n = len(hands)
    parsed = [h.split() for h in hands]
    assert all(len(h) == 7 for h in parsed), "each hand is 7 cards"
    rest = Counter(code(t) for t in full_deck())
    order: list[str] = []
    for k in range(7 * n):
        order.append(parsed[k % n][k // n])
    order += row.split() + pile.split()
    rest.subtract(order)
    assert min(rest.values()) >= 0, f"more copies than the deck holds: {-rest}"
    order += sorted(rest.elements(), key=parse_card)
    return " ".join(order)


def table(hands: list[str], row: str, pile: str = "", **options: object) -> DosState:
    opts = {"deck": deck_for(hands, row, pile), "dealer": len(hands) - 1, **options}
    return GAME.new_game(len(hands), opts, "test")


def play(state: DosState, seat: int, *texts: str) -> DosState:
    for text in texts:
        state = GAME.apply(state, seat, parse_move(text))
    return state


def legal(state: DosState, seat: int) -> list[str]:
    return [m.text for m in GAME.legal_moves(state, seat)]


def hand(state: DosState, seat: int) -> str:
    return " ".join(code(t) for t in state.hands[seat])


def row(state: DosState) -> str:
    return " ".join(code(t) for t in state.row)


FILLER = "g8 g8 g10 g10 r8 r8 y8"  # hands that match no 1 to 7 in the row, alone or in pairs


OTHER = "y8 y10 y10 r10 r10 b8 b8"


def two_left() -> DosState:
    """Seat 0 of three sheds five cards and holds exactly two (b9 b10), its turn not ended."""
    hands = ["r3 r4 g4 y5 g6 b9 b10", FILLER, OTHER]
    s = table(hands, "r7 b9", "b1 b3 b4 b5 b6 r1")
    s = play(s, 0, "r3+r4 on r7")  # double colour match: one card owed, the others draw one
    s = play(s, 0, "g4+y5 on b9")  # plain double
    assert legal(s, 0) == ["add b9", "add b10", "add g6"]
    s = play(s, 0, "add g6")
    assert hand(s, 0) == "b9 b10" and s.current == 0
    return s
