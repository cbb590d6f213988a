"""What the rules bound in a Dobro match (seeds/dobro.md), as learning and search code needs
it, and its fixed deal for duplicate play (tournaments).

>>> bounds(3, {"deals": 1, "manual_draw": False})
Bounds(deals=1, lowest=-3.0, highest=-1.0, moves=114)
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from engines.contract import Bounds
from engines.dobro.cards import CODES, deck_list

# A round gives each seat its rank by cards collected (1..n) and one more point to the Oubli
# card's holder (manual_draw only); returns are minus the penalty points. Moves per round:
# every play puts at least one card of the deck (57 cards, 55 with two players) into the
# auction, and every pass takes a non-empty auction, so passes never outnumber plays; under
# manual_draw each play is followed by a draw and an end, and a call needs a forgetting (an
# end short of cards).
DECK = {2: 55}
FULL_DECK = 57


def bounds(players: int, options: Mapping[str, Any]) -> Bounds:
    rounds = int(options["deals"]) or players
    worst = players + (1 if options["manual_draw"] else 0)
    per_play = 5 if options["manual_draw"] else 2  # play, pass (+ draw, end, call)
    moves = per_play * DECK.get(players, FULL_DECK) * rounds
    return Bounds(rounds, -float(worst * rounds), -float(rounds), moves)


def duplicate_deal(players: int, options: Mapping[str, Any], rng: random.Random) -> dict[str, Any]:
    """The options with every card and the first opener fixed from `rng`."""
    deck = [CODES[k] for k in deck_list(players)]
    rng.shuffle(deck)
    out = {**options, "deck": " ".join(deck)}
    out.setdefault("opener", rng.randrange(players))
    return out
