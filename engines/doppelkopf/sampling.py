"""Uniform dealing of hidden cards under "seat s cannot hold card c" constraints.

Cards are grouped into classes by the set of seats allowed to hold them (few classes: voids
and party knowledge make at most a handful). The number of deals is a sum over how each class
splits among its seats, a product of multinomials; we count with memoisation and draw a split
class by class with probability proportional to its count, which is exactly uniform over the
arrangements of physical cards.
"""

from __future__ import annotations

import random
from functools import lru_cache
from math import comb


def _splits(n: int, seats: tuple[int, ...], caps: tuple[int, ...]):
    """Every way to give n cards to `seats` (indices into caps) within capacities."""
    if len(seats) == 1:
        if n <= caps[seats[0]]:
            yield ((seats[0], n),)
        return
    first, rest = seats[0], seats[1:]
    room = sum(caps[s] for s in rest)
    for take in range(max(0, n - room), min(n, caps[first]) + 1):
        for tail in _splits(n - take, rest, caps):
            yield ((first, take),) + tail


def _ways(n: int, split) -> int:
    w, left = 1, n
    for _, take in split:
        w *= comb(left, take)
        left -= take
    return w


@lru_cache(maxsize=20000)
def _count(classes: tuple[tuple[tuple[int, ...], int], ...], caps: tuple[int, ...]) -> int:
    if not classes:
        return 1 if not any(caps) else 0
    (seats, n), rest = classes[0], classes[1:]
    total = 0
    for split in _splits(n, seats, caps):
        new = list(caps)
        for s, take in split:
            new[s] -= take
        total += _ways(n, split) * _count(rest, tuple(new))
    return total


def deal(cards: list[int], allowed: list[int], caps: list[int], rng: random.Random) -> list[list[int]] | None:
    """Deal `cards` (allowed[i]: bitmask of seats that may take card i) so that seat s gets
    exactly caps[s]; uniformly among the possible deals. None if no deal is possible."""
    groups: dict[int, list[int]] = {}
    for c, a in zip(cards, allowed, strict=True):
        groups.setdefault(a, []).append(c)
    order = sorted(groups, key=lambda a: (a.bit_count(), a))
    classes = tuple(
        (tuple(s for s in range(len(caps)) if a >> s & 1), len(groups[a])) for a in order
    )
    capst = tuple(caps)
    if any(not seats and n for seats, n in classes) or _count(classes, capst) == 0:
        return None
    hands: list[list[int]] = [[] for _ in caps]
    for i, a in enumerate(order):
        seats, n = classes[i]
        rest = classes[i + 1:]
        options = []
        weights = []
        for split in _splits(n, seats, capst):
            new = list(capst)
            for s, take in split:
                new[s] -= take
            w = _ways(n, split) * _count(rest, tuple(new))
            if w:
                options.append((split, tuple(new)))
                weights.append(w)
        pick = rng.choices(range(len(options)), weights=weights)[0] if len(options) > 1 else 0
        split, capst = options[pick]
        group = groups[a][:]
        rng.shuffle(group)
        pos = 0
        for s, take in split:
            hands[s].extend(group[pos:pos + take])
            pos += take
    return hands
