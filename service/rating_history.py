"""Rating history: what a rated table of people adds beside the new ratings.

Every store writes it inside `Store.rate`, in the same atomic step as the ratings, so a table
rated once adds exactly one point per entrant however many replicas race to rate it. A point
says where the entrant stood after that table (mu, sigma) and its place there; the names map
keeps the display name each entrant last played a rated table under, for leaderboards.
Ladder matches of entrants (RateMatch) carry no ranks and add neither.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from service.model import RatedMatch, Rating

# points kept per entrant and game (the oldest go): a profile shows the last 100, and a bot
# level rated at every table it plays would grow without end
MAX_HISTORY = 1000


@dataclass(frozen=True)
class RatingPoint:
    """An entrant's rating right after one rated table, and its place there (1: first)."""

    table_id: str
    time: float
    mu: float
    sigma: float
    rank: int

    @property
    def ordinal(self) -> float:
        """The conservative rating (mu - 3 sigma), as the leaderboard orders by."""
        return self.mu - 3 * self.sigma

    def to_json(self) -> dict[str, Any]:
        return {"table_id": self.table_id, "time": self.time, "mu": self.mu,
                "sigma": self.sigma, "rank": self.rank}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RatingPoint:
        return cls(str(data["table_id"]), float(data["time"]), float(data["mu"]),
                   float(data["sigma"]), int(data["rank"]))


RatingPoints = list[RatingPoint]  # spelt out: inside the stores, `list` is their listing method


def history_points(match: RatedMatch, new: Sequence[Rating]) -> list[tuple[Rating, RatingPoint]]:
    """The point each new rating adds (with the rating it belongs to): one per entrant of a
    match that carries ranks, none for a ladder match."""
    if not match.ranks:
        return []
    rank = dict(zip(match.entrants, match.ranks, strict=True))
    return [(r, RatingPoint(match.match_id, match.rated_at, r.mu, r.sigma, rank[r.entrant]))
            for r in new if r.entrant in rank]


def match_names(match: RatedMatch) -> dict[str, str]:
    """entrant -> the display name it played the match under (those with one)."""
    return {e: n for e, n in zip(match.entrants, match.names, strict=False) if n}
