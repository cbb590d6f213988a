"""What the rules bound in a Dos match (seeds/dos.md), as learning and search code needs
it, and its fixed deal for duplicate play (tournaments).

>>> bounds(2, {"target": 1, "max_turns": 200})
Bounds(deals=1, lowest=0.0, highest=1036.0, moves=22000)
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from engines.contract import Bounds
from engines.dos.cards import COPIES, DECK_SIZE, POINTS, codes, full_deck

# The round's winner scores the points of the cards in the other hands: at most the whole
# deck's. Moves per turn: a catch (before its first move), a draw, the matches and added cards
# (each takes at least one card from the hand, which holds at most the deck but one card of
# each other hand), and the end.
DECK_POINTS = sum(p * c for p, c in zip(POINTS, COPIES, strict=True))  # 1036


def bounds(players: int, options: Mapping[str, Any]) -> Bounds:
    target = int(options["target"])
    rounds = players * (target - 1) + 1  # each round scores at least a point
    turn = 1 + 1 + (DECK_SIZE - (players - 1)) + 1
    # the others stay under the target; the winner had at most target - 1 before its last
    # round; each round lasts at most max_turns turns
    return Bounds(rounds, 0.0, float(target - 1 + DECK_POINTS),
                  turn * int(options["max_turns"]) * rounds)


def duplicate_deal(players: int, options: Mapping[str, Any], rng: random.Random) -> dict[str, Any]:
    """The options with every card and the dealer fixed from `rng`."""
    deck = codes(full_deck()).split()
    rng.shuffle(deck)
    out = {**options, "deck": " ".join(deck)}
    out.setdefault("dealer", rng.randrange(players))
    return out
