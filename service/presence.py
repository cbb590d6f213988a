"""Whether each seat's person is here: connected (an open stream of the seat, or a call, in
the last heartbeats), away (not connected now but seen within the `gone` time, or played for
by the server since its turn timer ran out: Seat.away) or gone (not seen for longer).

A seat's presence is a last-seen time in the store's per-table presence map (shared by every
replica), written by the seat's own calls and open streams through `SeatPresence.seen`, at most
once a heartbeat per seat and process, with no version and no event: nobody's view goes stale.
Views read the map through `SeatPresence.read` (one store read per table and process every
fraction of a heartbeat, however many streams ask) or, on the hot path of a move's reply, take
what this process already knows (`known`): no store read per call.
"""

from __future__ import annotations

import enum
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from engines.cache import remember
from service.model import Seat, SeatKind
from service.store import Store

# tables whose presence a process keeps in memory (beyond: forgotten, read again)
MAX_TABLES_KNOWN = 100_000


class Presence(enum.IntEnum):
    """A seat's presence; the numbers are croupier.v1.Presence's."""

    UNSPECIFIED = 0  # an empty seat, or a bot's
    CONNECTED = 1
    AWAY = 2
    GONE = 3


@dataclass(frozen=True)
class PresencePolicy:
    """`heartbeat`: how often an open stream writes its seat's presence (seconds; a seat's
    stream wakes at least this often); `gone_seconds`: unseen this long, a seat is gone."""

    heartbeat: float = 5.0
    gone_seconds: float = 60.0

    def __post_init__(self) -> None:
        for name in ("heartbeat", "gone_seconds"):
            value = getattr(self, name)
            if not math.isfinite(value) or value <= 0:
                raise ValueError(f"presence: {name} must be a positive number of seconds, "
                                 f"got {value!r}")
        if self.gone_seconds <= self.connected_within:
            raise ValueError(
                f"presence: the gone time ({self.gone_seconds:g} s) must be longer than a "
                f"connected seat's two heartbeats ({self.connected_within:g} s)"
            )

    @property
    def connected_within(self) -> float:
        """Seen this recently, a seat is connected: two of its stream's writes."""
        return 2 * self.heartbeat

    @property
    def read_every(self) -> float:
        """How long a read of a table's presence map serves this process's views."""
        return min(self.heartbeat, 5.0) / 5


def seat_presence(seat: Seat, last_seen: float | None, now: float, policy: PresencePolicy
                  ) -> Presence:
    """One seat's presence at `now`; taking the seat counts as being seen then."""
    if not seat.occupied or seat.is_bot or seat.kind == SeatKind.BOT:
        return Presence.UNSPECIFIED
    seen = max(last_seen or 0.0, seat.joined_at)
    if now - seen > policy.gone_seconds:
        return Presence.GONE
    if seat.away or now - seen > policy.connected_within:
        return Presence.AWAY
    return Presence.CONNECTED


class SeatPresence:
    """One process's writer and reader of the store's presence maps."""

    def __init__(
        self,
        store: Store,
        policy: PresencePolicy | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.policy = policy or PresencePolicy()
        self.clock = clock
        self._known: dict[str, dict[int, float]] = {}  # table -> seat -> last seen
        self._read_at: dict[str, float] = {}  # table -> when its map was last read

    def _note(self, table_id: str, seen: Mapping[int, float]) -> dict[int, float]:
        known = self._known.get(table_id)
        if known is None:
            known = {}
            remember(self._known, MAX_TABLES_KNOWN, table_id, known)
        for seat, at in seen.items():
            if known.get(seat, -math.inf) < at:
                known[seat] = at
        return known

    async def seen(self, table_id: str, seat: int, joined_at: float = 0.0) -> None:
        """A seated person is here (a call, or an open stream's round): written at most once
        a heartbeat per seat and process, and not while the store already has it that fresh
        (another replica wrote it) nor within a heartbeat of taking the seat (`joined_at`,
        which counts as seen)."""
        now = self.clock()
        if joined_at + self.policy.heartbeat > now:
            return
        known = self._known.get(table_id)
        if known is not None and known.get(seat, -math.inf) + self.policy.heartbeat > now:
            return
        self._note(table_id, {seat: now})
        await self.store.mark_present(table_id, seat, now)

    async def read(self, table_id: str) -> dict[int, float]:
        """The table's map, read from the store unless this process read it very recently."""
        now = self.clock()
        at = self._read_at.get(table_id)
        known = self._known.get(table_id)
        if known is not None and at is not None and at + self.policy.read_every > now:
            return known
        stored = await self.store.presence(table_id)
        remember(self._read_at, MAX_TABLES_KNOWN, table_id, now)
        return self._note(table_id, stored)

    def known(self, table_id: str) -> dict[int, float] | None:
        """What this process knows of the table's map, without a store read (None: nothing)."""
        return self._known.get(table_id)

    def states(self, seats: Sequence[Seat], seen: Mapping[int, float] | None
               ) -> list[Presence]:
        """Every seat's presence now from the map `seen`."""
        now = self.clock()
        seen = seen or {}
        return [seat_presence(s, seen.get(i), now, self.policy) for i, s in enumerate(seats)]

    async def current(self, table_id: str, seats: Sequence[Seat]) -> list[Presence]:
        """Every seat's presence now, the map read (or recently read) from the store."""
        return self.states(seats, await self.read(table_id))

    def as_known(self, table_id: str, seats: Sequence[Seat]) -> list[Presence] | None:
        """Every seat's presence as this process knows it, no store read; None when it knows
        nothing of the table (a reply then leaves presence unspecified)."""
        known = self._known.get(table_id)
        return None if known is None else self.states(seats, known)
