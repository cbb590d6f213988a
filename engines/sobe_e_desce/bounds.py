"""What the rules bound in a Sobe e Desce match (seeds/sobe_e_desce.md), as learning and
search code needs it, and its fixed deal for duplicate play (tournaments).

>>> bounds(4, {"start_score": 20, "max_deals": 1})
Bounds(deals=1, lowest=-30.0, highest=90.0, moves=25)
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from engines.contract import Bounds
from engines.sobe_e_desce.cards import CARD_TEXT

# Scores start at `start_score` and a deal moves each by at most 10 (five tricks at clubs, -2
# each, or +10 for playing with clubs and winning none); at the end each loser pays his score
# (never below 0) to the winner.
DEAL_SWING = 10
# Moves per deal: one trump choice, one decision per seat, five tricks of at most 4 cards.
DEAL_MOVES = 1 + 4 + 5 * 4


def bounds(players: int, options: Mapping[str, Any]) -> Bounds:
    deals = int(options["max_deals"])
    most = int(options["start_score"]) + DEAL_SWING * deals
    return Bounds(deals, -float(most), float((players - 1) * most), DEAL_MOVES * deals)


def duplicate_deal(players: int, options: Mapping[str, Any], rng: random.Random) -> dict[str, Any]:
    """The options with every card and the dealer fixed from `rng`."""
    deck = list(CARD_TEXT)
    rng.shuffle(deck)
    out = {**options, "deck": " ".join(deck)}
    out.setdefault("dealer", rng.randrange(players))
    return out
