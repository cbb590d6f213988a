"""How each seat played a table, from its game record: decisions, timeouts, bad answers,
crashes and think time. These are public facts of the record's moves (`auto`, `fallback`,
`seconds`), so any client could count them; the tournament sums them per entrant.

- a decision: any move of the seat;
- a timeout: a move the server's timer played (`auto`), or one the seat's client played in
  place of an answer that came too late (fallback `late`);
- an illegal answer: fallback `illegal` or `garbage` (not a legal move / not a move at all);
- a crash: fallback `crashed` (the bot raised, or its program died);
- think time: the `seconds` of the seat's own moves (not the timer's).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from croupier.v1 import croupier_pb2 as pb

TIMEOUT_FALLBACKS = frozenset({"late"})
ILLEGAL_FALLBACKS = frozenset({"illegal", "garbage"})
CRASH_FALLBACKS = frozenset({"crashed"})


@dataclass(frozen=True)
class SeatStats:
    """One seat's counts at one table (or, summed, an entrant's over many)."""

    decisions: int = 0
    timeouts: int = 0
    illegal: int = 0
    crashes: int = 0
    think_seconds: float = 0.0  # summed over `thinks` moves
    thinks: int = 0

    def __add__(self, other: SeatStats) -> SeatStats:
        return SeatStats(
            self.decisions + other.decisions, self.timeouts + other.timeouts,
            self.illegal + other.illegal, self.crashes + other.crashes,
            self.think_seconds + other.think_seconds, self.thinks + other.thinks,
        )

    @property
    def mean_think(self) -> float | None:
        return self.think_seconds / self.thinks if self.thinks else None


def of_record(record: pb.GameRecord) -> tuple[SeatStats, ...]:
    """Per seat (0 .. players-1) of the record's table."""
    counts = [[0, 0, 0, 0, 0.0, 0] for _ in range(record.players)]
    for move in record.moves:
        if not 0 <= move.seat < record.players:
            continue
        c = counts[move.seat]
        c[0] += 1
        if move.auto or move.fallback in TIMEOUT_FALLBACKS:
            c[1] += 1
        if move.fallback in ILLEGAL_FALLBACKS:
            c[2] += 1
        if move.fallback in CRASH_FALLBACKS:
            c[3] += 1
        if not move.auto:
            c[4] += move.seconds
            c[5] += 1
    return tuple(SeatStats(int(d), int(t), int(i), int(k), float(s), int(n))
                 for d, t, i, k, s, n in counts)


def per_entrant(tables: Iterable[tuple[tuple[str, ...], tuple[SeatStats, ...]]]
                ) -> dict[str, tuple[int, SeatStats]]:
    """entrant -> (tables counted, summed stats) over (seating, per-seat stats) pairs;
    tables without counts (an empty tuple: results of older versions) are left out."""
    out: dict[str, tuple[int, SeatStats]] = {}
    for seating, seats in tables:
        if not seats:
            continue
        mine: dict[str, SeatStats] = {}
        for name, c in zip(seating, seats, strict=True):
            mine[name] = mine.get(name, SeatStats()) + c
        for name, c in mine.items():
            n, total = out.get(name, (0, SeatStats()))
            out[name] = (n + 1, total + c)
    return out
