"""Matchmaking test helpers: ticket stores of each backend (two of them on one SQLite file or
one Redis prefix stand for two replicas), and tickets to open."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from service.tickets import Mode, Ticket, TicketStatus, TicketStore, canonical_json
from service.tickets_memory import MemoryTickets
from service.tickets_redis import RedisTickets
from service.tickets_sqlite import SQLiteTickets
from tests.store_support import REDIS_URL, redis_cleanup, redis_prefix

BACKENDS = ("memory", "sqlite", "redis")


@asynccontextmanager
async def ticket_stores(backend: str, tmp: Path, count: int = 2) -> AsyncIterator[
        list[TicketStore]]:
    """`count` ticket stores sharing one backing store (memory: one store, `count` times)."""
    if backend == "memory":
        one = MemoryTickets()
        yield [one] * count
        return
    if backend == "sqlite":
        stores: list[TicketStore] = [SQLiteTickets(tmp / "tickets.db") for _ in range(count)]
        try:
            yield stores
        finally:
            for s in stores:
                await s.close()
        return
    prefix = redis_prefix()
    stores = [RedisTickets(REDIS_URL.split("?")[0], prefix) for _ in range(count)]
    try:
        yield stores
    finally:
        for s in stores:
            await s.close()
        redis_cleanup(prefix)


def ticket(player: str, now: float, game: str = "dou_dizhu", players: int = 3,
           options: dict[str, object] | None = None, mode: Mode = Mode.QUICK,
           lifetime: float = 60.0, rating: float = 0.0) -> Ticket:
    return Ticket(
        ticket_id=secrets.token_hex(8), player_id=player, name=player, game=game,
        players=players, options=canonical_json(options or {"deals": 1}), mode=mode.value,
        status=TicketStatus.WAITING.value, created_at=now, alive_until=now + lifetime,
        rating=rating,
    )


def present(found: Ticket | None) -> Ticket:
    """The ticket a store answered, which must be there."""
    assert found is not None, "no such ticket"
    return found
