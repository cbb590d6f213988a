"""Helpers for the Doppelkopf scenario tests: fixed deals and scripted play."""

from __future__ import annotations

from engines.doppelkopf import GAME, Move, deck_from_hands
from engines.doppelkopf.cards import FULL_40, FULL_48, TEXT, cards_of, parse_hand


def hands_from(spec: dict[int, str], bistro: bool = False) -> list[str]:
    """Four hands: seat s gets the cards spec[s]; the rest go round-robin to seats with room."""
    n = 10 if bistro else 12
    left = cards_of(FULL_40 if bistro else FULL_48)
    hands: list[list[int]] = [[], [], [], []]
    for seat, text in spec.items():
        for k in cards_of(parse_hand(text)):
            left.remove(k)
            hands[seat].append(k)
    seat = 0
    for k in left:
        while len(hands[seat]) >= n:
            seat = (seat + 1) % 4
        hands[seat].append(k)
        seat = (seat + 1) % 4
    assert all(len(h) == n for h in hands), [len(h) for h in hands]
    return [" ".join(TEXT[k] for k in h) for h in hands]


def new(spec: dict[int, str] | list[str], **options):
    """A session whose first deal gives these hands; dealer 3, so seat 0 speaks and leads."""
    bistro = bool(options.get("bistro"))
    hands = spec if isinstance(spec, list) else hands_from(spec, bistro)
    opts = {"deck": deck_from_hands(hands, dealer=3, bistro=bistro), "dealer": 3, **options}
    return GAME.new_game(4, opts, seed="scenario")


def play(state, *moves: str):
    """Apply moves; 'N:move' names the seat, otherwise the seat to play or the only one acting."""
    for text in moves:
        if ":" in text:
            seat_text, text = text.split(":", 1)
            seat = int(seat_text)
        elif state.turn >= 0:
            seat = state.turn
        else:
            (seat,) = GAME.to_act(state)
        state = GAME.apply(state, seat, Move(text))
    return state


def healthy(state):
    return play(state, "healthy", "healthy", "healthy", "healthy")


def autoplay(state, deal: int | None = None):
    """Play the rest of the deal with each seat's first legal card (no announcements)."""
    deal = state.deal_number if deal is None else deal
    while not GAME.is_over(state) and state.deal_number == deal:
        seat = state.turn
        card = next(m for m in GAME.legal_moves(state, seat) if m.kind == 0)
        state = GAME.apply(state, seat, card)
    return state


def hand(state, seat: int) -> list[str]:
    return sorted(TEXT[k] for k in cards_of(state.hands[seat]))


# A fully specified deal (seat 0 holds both club queens; seat 3 holds only trumps):
DEAL_A = [
    "Qc Qc Ac Ac As As Ah Ah Th Th Kd Kd",
    "Tc Tc Ts Ts Kh Kh 9h 9h Qs Qs Jc Jc",
    "Kc Kc Ks Ks 9c 9c 9s 9s Qh Qh Js Js",
    "Td Td Qd Qd Jh Jh Jd Jd Ad Ad 9d 9d",
]
