"""Matchmaking tickets: the record and the narrow store interface every backend (memory,
SQLite, Redis) fulfils.

A ticket is one player's wish for a table: a game, its number of players, its options (as
canonical JSON, so equal wishes compare equal) and a mode. Tickets of one wish wait in one
queue (`queue_key`). Each write a ticket store makes is atomic against every other writer
(tasks, processes, replicas): a player has at most one open ticket per game, and `claim`
seats a group of tickets all or none, so two matchers never seat one ticket twice.

Times are unix seconds given by the caller (`now`), so that tests and the server share one
clock. A waiting ticket whose `alive_until` has passed counts as expired from that moment,
whether or not a store has written it so yet (`Ticket.seen_at`).
"""

from __future__ import annotations

import enum
import hashlib
import json
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

# finished tickets (matched, cancelled, expired) are kept this long, for their players to read
KEEP_FINISHED_SECONDS = 24 * 3600.0


class TicketStatus(enum.StrEnum):
    WAITING = "waiting"
    MATCHED = "matched"
    CANCELLED = "cancelled"
    EXPIRED = "expired"


class Mode(enum.StrEnum):
    QUICK = "quick"  # any players, first come first seated
    RATED = "rated"  # players of close ratings


def canonical_json(options: dict[str, Any]) -> str:
    """The one text of a set of options: equal options, equal text."""
    return json.dumps(options, sort_keys=True, separators=(",", ":"))


def queue_key(game: str, players: int, options: str, mode: str) -> str:
    """The queue a wish waits in: its game, players and mode, and a digest of its options (so
    the key stays short whatever the options)."""
    digest = hashlib.sha256(options.encode()).hexdigest()[:16]
    return f"{game}:{players}:{mode}:{digest}"


def queue_labels(queue: str) -> tuple[str, str]:
    """(game, mode) of a queue key, for metrics."""
    game, _, mode = queue.split(":", 3)[:3] if queue.count(":") >= 3 else (queue, "", "")
    return game, mode


@dataclass(frozen=True)
class Ticket:
    ticket_id: str
    player_id: str
    name: str  # the player's display name: what their seat shows
    game: str
    players: int
    options: str  # canonical JSON (`canonical_json`)
    mode: str  # Mode value
    status: str  # TicketStatus value
    created_at: float
    alive_until: float  # a waiting ticket nobody asked about by then is expired
    table_id: str = ""
    seat: int = -1
    rating: float = 0.0  # the player's conservative rating in the game when it was opened
    matched_at: float = 0.0

    @property
    def queue(self) -> str:
        return queue_key(self.game, self.players, self.options, self.mode)

    def alive(self, now: float) -> bool:
        return self.status == TicketStatus.WAITING and self.alive_until >= now

    def seen_at(self, now: float) -> Ticket:
        """The ticket as it stands at `now`: a waiting one past its lifetime is expired."""
        if self.status == TicketStatus.WAITING and self.alive_until < now:
            return replace(self, status=TicketStatus.EXPIRED)
        return self

    def same_wish(self, other: Ticket) -> bool:
        return self.queue == other.queue

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Ticket:
        return cls(
            ticket_id=str(data["ticket_id"]), player_id=str(data["player_id"]),
            name=str(data["name"]), game=str(data["game"]), players=int(data["players"]),
            options=str(data["options"]), mode=str(data["mode"]), status=str(data["status"]),
            created_at=float(data["created_at"]), alive_until=float(data["alive_until"]),
            table_id=str(data.get("table_id") or ""), seat=int(data.get("seat", -1)),
            rating=float(data.get("rating", 0.0)), matched_at=float(data.get("matched_at", 0.0)),
        )


class TicketConflict(Exception):
    """The player has another open ticket for this game, for a different wish: it must be
    cancelled first. Nothing was written."""

    def __init__(self, open_ticket: Ticket) -> None:
        super().__init__(f"ticket {open_ticket.ticket_id} is open for this game")
        self.open_ticket = open_ticket


class TicketStore(ABC):
    """Where tickets wait. Every method is one atomic step in its backend."""

    @abstractmethod
    async def open(self, ticket: Ticket) -> tuple[Ticket, bool]:
        """Stores `ticket` (waiting), unless its player has an open ticket (waiting and alive
        at `ticket.created_at`) for its game: for the same wish that one is kept alive until
        `ticket.alive_until` and answered, `(open one, False)`; for another wish
        TicketConflict. A waiting ticket found past its lifetime is expired on the way.
        `(ticket, True)` when stored."""

    @abstractmethod
    async def get(self, ticket_id: str) -> Ticket | None:
        """The ticket as stored (see `Ticket.seen_at` for its status now), or None."""

    @abstractmethod
    async def touch(self, ticket_id: str, alive_until: float, now: float) -> Ticket | None:
        """Keeps a ticket that is waiting and alive at `now` alive until `alive_until` (never
        shortens it); the ticket afterwards, or None when there is none."""

    @abstractmethod
    async def cancel(self, ticket_id: str, now: float) -> Ticket | None:
        """Cancels the ticket if it is waiting and alive (a dead one is expired instead);
        atomic against `claim`: a ticket is either matched or cancelled, never both. The
        ticket afterwards (a matched one unchanged), or None."""

    @abstractmethod
    async def waiting(self, queue: str, limit: int = 10_000) -> list[Ticket]:
        """The queue's waiting tickets, the oldest first (dead ones too: `expire` them)."""

    @abstractmethod
    async def queues(self) -> list[str]:
        """The queues that may have waiting tickets."""

    @abstractmethod
    async def count(self, queue: str) -> int:
        """How many tickets wait in the queue (dead ones not yet expired included)."""

    @abstractmethod
    async def expire(self, ticket_ids: Sequence[str], now: float) -> int:
        """Marks expired those of the tickets still waiting with `alive_until` before `now`;
        how many."""

    @abstractmethod
    async def claim(
        self, ticket_ids: Sequence[str], table_id: str, seats: Sequence[int], now: float
    ) -> bool:
        """Matches the tickets to seats of the table, all or none: only if every one is still
        waiting and alive at `now`. False (nothing written) otherwise."""

    @abstractmethod
    async def lease(self, queue: str, owner: str, seconds: float, now: float) -> bool:
        """Whether `owner` may group the queue now: it holds the queue's lease (taken or
        renewed for `seconds`), and no other owner holds an unexpired one. Only spares the
        replicas work that would lose its claim; `claim` alone keeps tickets safe."""

    @abstractmethod
    async def purge(self, before: float) -> int:
        """Forgets finished tickets (matched, cancelled, expired) created before `before`."""

    async def close(self) -> None:  # noqa: B027 - optional for backends without resources
        """Releases connections and files."""


def open_tickets(store: Any) -> TicketStore:
    """The ticket store beside a table store: in memory beside a memory store, the same
    SQLite file, the same Redis (URL and key prefix)."""
    from service.store_memory import MemoryStore
    from service.store_redis import RedisStore
    from service.store_sqlite import SQLiteStore

    if isinstance(store, RedisStore):
        from service.tickets_redis import RedisTickets

        # the store's own URL, as redis-py reads it (prefix and retention taken out)
        return RedisTickets(store._url, store.prefix)
    if isinstance(store, SQLiteStore):
        from service.tickets_sqlite import SQLiteTickets

        return SQLiteTickets(store.path)
    if isinstance(store, MemoryStore):
        from service.tickets_memory import MemoryTickets

        return MemoryTickets()
    raise ValueError(f"no ticket store for a {type(store).__name__}")
