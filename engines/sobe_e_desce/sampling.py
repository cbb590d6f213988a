"""Uniform deals of the hidden cards under what the table has shown.

A seat that failed to follow suit, to trump or to over-trump, or that led something other
than the ace of trumps, is publicly known not to hold some cards (its `absent` mask). The
cards a viewer cannot see are dealt uniformly among all arrangements that respect those
masks: hands with exclusions are filled by an exact count over card classes (cards grouped by
which of those hands may hold them: engines.dealing), the rest is shuffled freely into the
other places.
Plans are cached per view: a search samples the same view thousands of times.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from math import factorial

from engines.dealing import ConstrainedDeal


@dataclass(frozen=True)
class Places:
    """Where hidden cards go: hand and discard sizes per hidden seat, then ordered piles."""

    hands: dict[int, int]  # seat -> hidden cards in hand (fixed cards excluded)
    discards: dict[int, int]  # seat -> hidden discarded cards
    ordered: int  # pending deal cards + stock, ordered places


@dataclass
class Deal:
    hands: dict[int, list[int]]
    discards: dict[int, list[int]]
    ordered: list[int]


class _Scenario:
    """One placement problem: constrained hands counted exactly, the rest free."""

    def __init__(self, pool: Sequence[int], places: Places, absent: dict[int, int]) -> None:
        self.places = places
        self.constrained = [s for s, n in sorted(places.hands.items())
                            if n and any(absent.get(s, 0) >> c & 1 for c in pool)]
        classes: dict[int, list[int]] = {}
        for c in pool:
            allowed = 0
            for j, s in enumerate(self.constrained):
                if not absent.get(s, 0) >> c & 1:
                    allowed |= 1 << j
            classes.setdefault(allowed, []).append(c)
        self.classes = sorted(classes.items())
        self.caps = tuple(places.hands[s] for s in self.constrained)
        self.free_hands = [s for s, n in sorted(places.hands.items()) if s not in self.constrained]
        free = len(pool) - sum(self.caps)
        unordered = [places.hands[s] for s in self.free_hands] + list(places.discards.values())
        if free < 0 or free != sum(unordered) + places.ordered:
            self.count = 0
            return
        arrangements = factorial(free)
        for n in unordered:
            arrangements //= factorial(n)
        self.deal = ConstrainedDeal([(a, len(cards)) for a, cards in self.classes], self.caps)
        self.count = self.deal.count * arrangements

    def draw(self, rng: random.Random) -> Deal:
        dealt, free = self.deal.draw([cards for _, cards in self.classes], rng)
        hands: dict[int, list[int]] = {s: [] for s in self.places.hands}
        for j, s in enumerate(self.constrained):
            hands[s] = dealt[j]
        rng.shuffle(free)
        pos = 0
        for s in self.free_hands:
            n = self.places.hands[s]
            hands[s].extend(free[pos:pos + n])
            pos += n
        discards: dict[int, list[int]] = {}
        for s, n in sorted(self.places.discards.items()):
            discards[s] = free[pos:pos + n]
            pos += n
        return Deal(hands, discards, free[pos:])


class Plan:
    """The hidden-card problem of one view; `draw` deals one uniform arrangement.

    `turned` is a card known to be in `turned_seat`'s hand or among its discards (the turned
    trump card after its holder exchanged): both cases are weighed by their arrangement counts.
    """

    def __init__(
        self,
        pool: Sequence[int],
        places: Places,
        absent: dict[int, int],
        turned: int = -1,
        turned_seat: int = -1,
    ) -> None:
        self.turned, self.turned_seat = turned, turned_seat
        self.scenarios: list[tuple[int, _Scenario]] = []
        if turned < 0:
            self.scenarios.append((0, _Scenario(pool, places, absent)))
        else:
            hand_n = places.hands.get(turned_seat, 0)
            disc_n = places.discards.get(turned_seat, 0)
            if hand_n and not absent.get(turned_seat, 0) >> turned & 1:
                p = Places({**places.hands, turned_seat: hand_n - 1}, places.discards, places.ordered)
                self.scenarios.append((1, _Scenario(pool, p, absent)))
            if disc_n:
                p = Places(places.hands, {**places.discards, turned_seat: disc_n - 1}, places.ordered)
                self.scenarios.append((2, _Scenario(pool, p, absent)))
        self.scenarios = [(w, sc) for w, sc in self.scenarios if sc.count]
        if not self.scenarios:
            raise ValueError("the view is inconsistent: no deal of the hidden cards fits it")
        self.total = sum(sc.count for _, sc in self.scenarios)

    def draw(self, rng: random.Random) -> Deal:
        where, scenario = self.scenarios[0]
        if len(self.scenarios) > 1:
            r = rng.randrange(self.total)
            if r >= scenario.count:
                where, scenario = self.scenarios[1]
        deal = scenario.draw(rng)
        if where == 1:
            deal.hands[self.turned_seat].append(self.turned)
        elif where == 2:
            deal.discards[self.turned_seat].append(self.turned)
        return deal
