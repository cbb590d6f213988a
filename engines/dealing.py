"""Uniform deals of hidden cards under "place p cannot hold card c" constraints.

A seat that failed to follow suit, or a party that is known, rules cards out of some hands;
a seat known to hold some cards of a kind (it opened with one of them, say) rules out deals
giving it fewer. Bots sample the cards they cannot see uniformly among the deals the public
facts allow. The cards are grouped into classes by the set of constrained places allowed to hold them (a
handful: voids and party knowledge make few); the deals are counted exactly, class by class,
over how many cards of a class each place takes, and one is drawn class by class with
probability proportional to the deals each choice leaves. Cards no constrained place takes
are free: the caller places them (uniformly, as any place may hold them).

The count depends only on the shape of the problem (the classes' masks and sizes, and the
places' sizes), so one `ConstrainedDeal` serves every draw of a view, and of every view of
that shape.
"""

from __future__ import annotations

import bisect
import random
from collections.abc import Sequence
from math import factorial

_FACT = [factorial(n) for n in range(129)]


class ConstrainedDeal:
    """The deals of a problem of shape `classes` ((mask of the places that may hold its
    cards, number of cards) per class, in the order drawn) into places of sizes `caps`;
    `least` (optional, per class) the fewest cards of that class each place must get.
    `count`: the number of deals (which cards each place gets; the free rest unordered)."""

    def __init__(self, classes: Sequence[tuple[int, int]], caps: tuple[int, ...],
                 least: Sequence[tuple[int, ...]] | None = None) -> None:
        self.classes = tuple(classes)
        self.caps = caps
        self.least = tuple(least) if least else tuple((0,) * len(caps) for _ in self.classes)
        self._before = [0]  # cards in the classes before class i
        for _, n in self.classes:
            self._before.append(self._before[-1] + n)
        self._free = self._before[-1] - sum(caps)  # cards no place takes, in every deal
        self._memo: dict[tuple[int, tuple[int, ...]], tuple[list[int], list[tuple[int, ...]]]] = {}
        self.count = self._count(0, caps)

    def _allocations(self, i: int, caps: tuple[int, ...]) -> tuple[int, list[tuple[int, ...]]]:
        """Class i's size and every way to give some of its cards to the places, leaving no
        more cards free than the deal has (the others lead nowhere)."""
        allowed, n = self.classes[i]
        fewest = self.least[i]
        out: list[tuple[int, ...]] = [()]
        for j in range(len(caps)):
            top = min(caps[j], n) if allowed >> j & 1 else 0
            out = [a + (x,) for a in out for x in range(fewest[j], top + 1) if sum(a) + x <= n]
        free_so_far = self._before[i] - (sum(self.caps) - sum(caps))
        placed = n - (self._free - free_so_far)  # at least this many of its cards find a place
        return n, [a for a in out if sum(a) >= placed] if placed > 0 else out

    def _count(self, i: int, caps: tuple[int, ...]) -> int:
        if i == len(self.classes):
            return 1 if not any(caps) else 0
        key = (i, caps)
        hit = self._memo.get(key)
        if hit is not None:
            return hit[0][-1] if hit[0] else 0
        n, allocs = self._allocations(i, caps)
        cum: list[int] = []
        kept: list[tuple[int, ...]] = []
        total = 0
        for a in allocs:
            rest = tuple(c - x for c, x in zip(caps, a, strict=True))
            sub = self._count(i + 1, rest)
            if not sub:
                continue
            ways = _FACT[n] // _FACT[n - sum(a)]
            for x in a:
                ways //= _FACT[x]
            total += ways * sub
            cum.append(total)
            kept.append(a)
        self._memo[key] = (cum, kept)
        return total

    def draw(
        self, cards: Sequence[Sequence[int]], rng: random.Random
    ) -> tuple[list[list[int]], list[int]]:
        """One deal, uniformly, of `cards` (the cards of each class, as in `classes`): the
        cards of each place, and the free cards (not shuffled when a whole class is free).
        Only for a problem with deals (`count` > 0)."""
        hands: list[list[int]] = [[] for _ in self.caps]
        free: list[int] = []
        caps = self.caps
        for i, group in enumerate(cards):
            cum, allocs = self._memo[(i, caps)]
            a = allocs[0] if len(allocs) == 1 else allocs[
                bisect.bisect_right(cum, rng.randrange(cum[-1]))]
            if any(a):
                shuffled = list(group)
                rng.shuffle(shuffled)
                pos = 0
                for j, x in enumerate(a):
                    hands[j].extend(shuffled[pos:pos + x])
                    pos += x
                free.extend(shuffled[pos:])
                caps = tuple(c - x for c, x in zip(caps, a, strict=True))
            else:
                free.extend(group)
        return hands, free
