"""Sobe e Desce test helpers: deals stacked by hand and play by move text."""

from __future__ import annotations

from engines.sobe_e_desce import GAME, Move
from engines.sobe_e_desce.cards import CARD_TEXT

ALL = [CARD_TEXT[c] for c in range(40)]


def make_deck(hands: dict[int, str], stock: str = "", dealer: int = 3) -> str:
    """A `deck` option dealing seat s the five cards hands[s] (first three in the first packet,
    the last two in the second); other seats and the stock get the rest in order."""
    used = [c for h in hands.values() for c in h.split()] + stock.split()
    assert len(used) == len(set(used)), "a card is used twice"
    rest = [c for c in ALL if c not in used]
    full = {s: (hands[s].split() if s in hands else [rest.pop(0) for _ in range(5)])
            for s in range(4)}
    assert all(len(h) == 5 for h in full.values())
    first = (dealer + 1) % 4
    order = [(first + i) % 4 for i in range(4)]
    deck = [c for s in order for c in full[s][:3]] + [c for s in order for c in full[s][3:]]
    deck += stock.split() + rest
    assert len(deck) == 40
    return " ".join(deck)


def new(hands: dict[int, str], stock: str = "", dealer: int = 3, **options):
    return GAME.new_game(4, {"deck": make_deck(hands, stock, dealer), "dealer": dealer,
                             **options}, seed="scenario")


def play(state, *moves: str):
    for text in moves:
        state = GAME.apply(state, state.to_act, Move(text))
    return state
