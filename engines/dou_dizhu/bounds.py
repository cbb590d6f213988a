"""What the rules bound in a Dou Dizhu match (seeds/dou_dizhu.md), as learning and search code needs
it, and its fixed deal for duplicate play (tournaments).

>>> bounds(3, {"deals": 1, "max_redeals": 2})
Bounds(deals=1, lowest=-49152.0, highest=49152.0, moves=160)
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from engines.contract import Bounds
from engines.dou_dizhu.cards import card_text

# A deal is worth bid x 2^bombs (x2 for a spring); the landlord wins or loses twice that, each
# farmer once. A deal ends when one hand is empty, so the two others keep a card each: at most
# 52 of the 54 cards are played, hence at most 13 bombs (13 x 4 cards, or 12 and the rocket).
# A spring leaves the farmers silent (at most the landlord's 20 cards: 5 bombs) or the
# landlord after one play (at most 1 + 4 + 4 bombs), so it never beats 13 bombs without one.
MAX_BID = 3
MAX_BOMBS = 13
DEAL = 2 * MAX_BID * 2**MAX_BOMBS  # 49,152: the landlord's most
# Moves: each bidding is at most one call per seat (3), and up to `max_redeals` all-pass
# biddings come before the landlord is forced; then at most 52 plays of one card or more,
# each followed by at most two passes but the last.
PLAYED = 52


def bounds(players: int, options: Mapping[str, Any]) -> Bounds:
    deals = int(options["deals"])
    deal_moves = 3 * int(options["max_redeals"]) + PLAYED + 2 * (PLAYED - 1)
    return Bounds(deals, -float(DEAL * deals), float(DEAL * deals), deal_moves * deals)


def duplicate_deal(players: int, options: Mapping[str, Any], rng: random.Random) -> dict[str, Any]:
    """The options with every card, the dealer and the face-up card fixed from `rng`."""
    deck = [card_text(c) for c in range(54)]
    rng.shuffle(deck)
    out = {**options, "deck": " ".join(deck)}
    out.setdefault("dealer", rng.randrange(players))
    out.setdefault("face_up", rng.randrange(51))
    return out
