"""Dou Dizhu test helpers: deals stacked by hand and play by move text."""

from __future__ import annotations

from engines.dou_dizhu import GAME, Move
from engines.dou_dizhu.cards import RANKS, SUITS


def deck_for(hands: list[str], kitty: str) -> str:
    """A `deck` option giving seat s the ranks hands[s] (with dealer=2: card k -> seat k % 3).

    The last hand may be "*" for "every card left over"; suits are assigned in order.
    """
    left = {r: list(SUITS) for r in RANKS[:13]}
    left.update({"B": [""], "R": [""]})

    def take(ranks: str) -> list[str]:
        out = []
        for r in ranks:
            out.append(r + left[r].pop(0))
        return out

    dealt = [take(h) if h != "*" else None for h in hands]
    kit = take(kitty)
    rest = [r + s for r, suits in left.items() for s in suits]
    fixed = [h if h is not None else rest for h in dealt]
    assert all(len(h) == 17 for h in fixed), [len(h) for h in fixed]
    deck = [fixed[k % 3][k // 3] for k in range(51)] + kit
    return " ".join(deck)


def new(hands: list[str], kitty: str, **options):
    opts = {"deck": deck_for(hands, kitty), "dealer": 2, "face_up": 0, **options}
    return GAME.new_game(3, opts, seed="scenario")


def play(state, *moves: str):
    for text in moves:
        seat = state.to_act
        state = GAME.apply(state, seat, Move(text))
    return state


LANDLORD = "4666TTTJJJQQQ99KK"  # + kitty "AAR" = 20 cards


FARMER_1 = "3888" + "3334777BQ22K" + "4"


FARMER_2 = "*"
