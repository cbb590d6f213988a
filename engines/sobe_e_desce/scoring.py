"""Scores of a deal, the end of the match and the RISCOS settlement.

Scores start high and go down: tricks are subtracted, a player who played and took nothing
goes up. The first to reach 0 wins and collects what the others still hold.

>>> deal_changes(trump=0, played=(True, True, False, True), won=(3, 2, 0, 0))
(-6, -4, 0, 10)
>>> settle((0, 11, 2, 5), winner=0)
(18, -11, -2, -5)
"""

from __future__ import annotations

from typing import NamedTuple

from engines.sobe_e_desce.cards import CLUBS

PENALTY = 5
"""Added to a player who played and won no trick (doubled when clubs are trumps)."""


class DealRecord(NamedTuple):
    """A finished deal, as the match history keeps it."""

    dealer: int
    chooser: int
    trump: int
    turned: int  # the turned card, -1 when trumps were named
    played: tuple[bool, ...]
    tricks: tuple[int, ...]
    change: tuple[int, ...]
    scores: tuple[int, ...]


def multiplier(trump: int) -> int:
    return 2 if trump == CLUBS else 1


def deal_changes(trump: int, played: tuple[bool, ...], won: tuple[int, ...]) -> tuple[int, ...]:
    """Per seat: minus the tricks (x2 with clubs), +5 (+10) for playing without a trick, 0 for
    a seat that passed."""
    m = multiplier(trump)
    return tuple(
        (-w * m if w else PENALTY * m) if p else 0 for p, w in zip(played, won, strict=True)
    )


def match_winner(scores: tuple[int, ...], chooser: int, bounded: bool = False) -> int:
    """The winner once a score is at 0 or below (or the deal bound is hit): the lowest score,
    ties to the earliest seat in play order from the last deal's trump chooser; -1 if none."""
    if not bounded and min(scores) > 0:
        return -1
    n = len(scores)
    order = [(chooser + i) % n for i in range(n)]
    return min(order, key=lambda s: (scores[s], order.index(s)))


def settle(scores: tuple[int, ...], winner: int) -> tuple[int, ...]:
    """RISCOS: every loser pays what he still holds (never below 0); the winner gets the sum."""
    pay = [0 if s == winner else max(v, 0) for s, v in enumerate(scores)]
    return tuple(sum(pay) if s == winner else -pay[s] for s in range(len(scores)))
