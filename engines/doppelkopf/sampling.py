"""Uniform dealing of hidden cards under "seat s cannot hold card c" constraints.

Cards are grouped into classes by the set of seats allowed to hold them (few classes: voids
and party knowledge make at most a handful), most constrained first; engines.dealing counts
the deals exactly and draws one uniformly over the arrangements of physical cards.
"""

from __future__ import annotations

import random

from engines.cache import remember
from engines.dealing import ConstrainedDeal

# the counted problems by shape: a search samples one view thousands of times, and views of
# a deal share shapes; each holds its memo of counts, so the table is bounded
_DEALS: dict[tuple[tuple[tuple[int, int], ...], tuple[int, ...]], ConstrainedDeal] = {}
_DEALS_LIMIT = 4096


def deal(cards: list[int], allowed: list[int], caps: list[int], rng: random.Random) -> list[list[int]] | None:
    """Deal `cards` (allowed[i]: bitmask of seats that may take card i) so that seat s gets
    exactly caps[s]; uniformly among the possible deals. None if no deal is possible."""
    if len(cards) != sum(caps):
        return None
    seats = (1 << len(caps)) - 1
    groups: dict[int, list[int]] = {}
    for c, a in zip(cards, allowed, strict=True):
        groups.setdefault(a & seats, []).append(c)
    if 0 in groups:  # a card no seat may hold
        return None
    order = sorted(groups, key=lambda a: (a.bit_count(), a))
    shape = (tuple((a, len(groups[a])) for a in order), tuple(caps))
    dealer = _DEALS.get(shape)
    if dealer is None:
        dealer = remember(_DEALS, _DEALS_LIMIT, shape, ConstrainedDeal(*shape))
    if not dealer.count:
        return None
    hands, _ = dealer.draw([groups[a] for a in order], rng)  # nothing is free: sum(caps) cards
    return hands
