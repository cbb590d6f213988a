"""What the rules bound in a Doppelkopf session (seeds/doppelkopf.md), as learning and search
code needs it, and its fixed deal for duplicate play (tournaments).

>>> bounds(4, {"deals": 1, "bistro": False})
Bounds(deals=1, lowest=-63.0, highest=63.0, moves=66)
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from engines.contract import Bounds
from engines.doppelkopf.cards import N_KINDS, NINES, TEXT

# A game value is at most 1 (won) + 3 (under 90, 60, 30) + 1 (schwarz) + 2 x 2 (re and kontra
# announced) + 2 x 4 (each party's no 90 .. schwarz) + 4 (reached against them) = 21, x3 for a
# soloist (solos count no special points); a normal game adds at most 1 (against the club
# queens) and 9 special points (6 tricks of 40 or more of the 240 card points, 2 foxes,
# Charlie), 31 < 63.
DEAL = 3 * 21
# Moves: 4 reservations (healthy or not), at most 4 declarations, at most 10 announcements
# (each raises its party's level, 1..5, at least one step) and the 48 cards (40 in Bistro).
OTHER_MOVES = 4 + 4 + 10


def bounds(players: int, options: Mapping[str, Any]) -> Bounds:
    deals = int(options["deals"])
    cards = 40 if options["bistro"] else 48
    return Bounds(deals, -float(DEAL * deals), float(DEAL * deals), (OTHER_MOVES + cards) * deals)


def duplicate_deal(players: int, options: Mapping[str, Any], rng: random.Random) -> dict[str, Any]:
    """The options with every card (no nines in Bistro) and the dealer fixed from `rng`."""
    kinds = [k for k in range(N_KINDS) if not (options.get("bistro") and k in NINES)]
    deck = [TEXT[k] for k in kinds for _ in range(2)]
    rng.shuffle(deck)
    out = {**options, "deck": " ".join(deck)}
    out.setdefault("dealer", rng.randrange(players))
    return out
