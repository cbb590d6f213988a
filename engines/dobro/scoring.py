"""Round points, the next round's opener and the match winners.

>>> rank_points((3, 3, 7, 9))
(1, 1, 3, 4)
>>> round_points((3, 3, 7, 9), oubli=0)
(2, 1, 3, 4)
>>> next_opener((1, 4, 4, 2), ender=0, direction=1)
1
>>> next_opener((1, 4, 4, 2), ender=0, direction=-1)
2
>>> match_winners((5, 5, 7), last_collected=(4, 2, 0))
(1,)
"""

from __future__ import annotations

from collections.abc import Sequence


def rank_points(collected: Sequence[int]) -> tuple[int, ...]:
    """Competition ranking by cards collected, fewest first: ties share the rank and the next
    ranks are skipped (1, 1, 3, 4); rank r scores r points."""
    return tuple(1 + sum(1 for other in collected if other < mine) for mine in collected)


def round_points(collected: Sequence[int], oubli: int) -> tuple[int, ...]:
    """Rank points plus the Oubli card's penalty point for its holder (-1: nobody)."""
    points = list(rank_points(collected))
    if oubli >= 0:
        points[oubli] += 1
    return tuple(points)


def next_opener(points: Sequence[int], ender: int, direction: int) -> int:
    """The seat with the most points in the round; among equals, the nearest one in the
    direction of play counting from the seat that ended the round (itself first)."""
    n = len(points)
    best = max(points)
    for step in range(n):
        seat = (ender + step * direction) % n
        if points[seat] == best:
            return seat
    raise AssertionError("unreachable: some seat has the most points")


def match_winners(totals: Sequence[int], last_collected: Sequence[int]) -> tuple[int, ...]:
    """Lowest total wins; equal totals: fewer cards collected in the last round; then shared."""
    low = min(totals)
    tied = [s for s, t in enumerate(totals) if t == low]
    fewest = min(last_collected[s] for s in tied)
    return tuple(s for s in tied if last_collected[s] == fewest)
