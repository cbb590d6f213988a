"""The constrained dealer (engines.dealing) counts the deals exactly and draws them uniformly:
both checked against every deal of small problems, written out by brute force."""

from __future__ import annotations

import itertools
import random
from collections import Counter

import pytest

from engines.dealing import ConstrainedDeal


def every_deal(cards: list[int], allowed: dict[int, int], caps: tuple[int, ...]) -> set[tuple]:
    """Every deal by brute force: each card to a place that may hold it or to the free rest
    (-1), each place getting exactly its size; as (the sorted cards of each place)."""
    out = set()
    for where in itertools.product(range(-1, len(caps)), repeat=len(cards)):
        if any(p >= 0 and not allowed[c] >> p & 1 for c, p in zip(cards, where, strict=True)):
            continue
        hands = tuple(tuple(sorted(c for c, p in zip(cards, where, strict=True) if p == j))
                      for j in range(len(caps)))
        if tuple(len(h) for h in hands) == caps:
            out.add(hands)
    return out


def problem(seed: int) -> tuple[list[int], dict[int, int], tuple[int, ...], ConstrainedDeal,
                                 list[list[int]]]:
    rng = random.Random(seed)
    places = rng.randint(1, 3)
    cards = list(range(rng.randint(1, 6)))
    allowed = {c: rng.randrange(1 << places) for c in cards}
    caps = [0] * places
    for _ in range(rng.randint(0, len(cards))):
        caps[rng.randrange(places)] += 1
    masks = sorted(set(allowed.values()), key=lambda a: (a.bit_count(), a))
    groups = [[c for c in cards if allowed[c] == a] for a in masks]
    deal = ConstrainedDeal([(a, len(g)) for a, g in zip(masks, groups, strict=True)], tuple(caps))
    return cards, allowed, tuple(caps), deal, groups


@pytest.mark.parametrize("seed", range(40))
def test_the_count_is_the_number_of_deals(seed: int) -> None:
    cards, allowed, caps, deal, _ = problem(seed)
    assert deal.count == len(every_deal(cards, allowed, caps))


@pytest.mark.parametrize("seed", [s for s in range(40) if problem(s)[3].count > 1][:6])
def test_draws_are_uniform_over_the_deals(seed: int) -> None:
    cards, allowed, caps, deal, groups = problem(seed)
    rng = random.Random(seed)
    draws = 400 * deal.count
    seen: Counter[tuple] = Counter()
    for _ in range(draws):
        hands, free = deal.draw(groups, rng)
        assert sorted([*(c for h in hands for c in h), *free]) == cards
        seen[tuple(tuple(sorted(h)) for h in hands)] += 1
    assert set(seen) == every_deal(cards, allowed, caps)
    assert max(seen.values()) < 1.3 * 400 and min(seen.values()) > 0.7 * 400, seen


@pytest.mark.parametrize("seed", range(12))
def test_places_holding_at_least_some_cards_of_a_class(seed: int) -> None:
    """`least`: each place gets at least so many cards of a class (Dobro: a seat known to
    hold special cards); counted and drawn as the brute force over the deals that honour it."""
    rng = random.Random(seed)
    places = rng.randint(2, 3)
    special, plain = list(range(rng.randint(1, 3))), list(range(10, 10 + rng.randint(1, 3)))
    caps = [0] * places
    for _ in range(len(special) + len(plain)):
        caps[rng.randrange(places)] += 1
    need = tuple(min(rng.randint(0, 1), c) for c in caps)
    everywhere = (1 << places) - 1
    deal = ConstrainedDeal([(everywhere, len(special)), (everywhere, len(plain))], tuple(caps),
                           [need, (0,) * places])
    cards = special + plain
    honoured = {d for d in every_deal(cards, dict.fromkeys(cards, everywhere), tuple(caps))
                if all(sum(c in special for c in h) >= k for h, k in zip(d, need, strict=True))}
    assert deal.count == len(honoured)
    if deal.count:
        seen: Counter[tuple] = Counter()
        for _ in range(200 * deal.count):
            hands, free = deal.draw([special, plain], rng)
            assert not free
            seen[tuple(tuple(sorted(h)) for h in hands)] += 1
        assert set(seen) == honoured
        assert max(seen.values()) < 2 * min(seen.values())
