"""Matchmaking test helpers: ticket stores of each backend (two of them on one SQLite file or
one Redis prefix stand for two replicas), and tickets to open."""

from __future__ import annotations

import secrets
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from croupier.v1 import croupier_pb2 as pb

from service.tickets import Mode, Ticket, TicketStatus, TicketStore, canonical_json
from service.tickets_memory import MemoryTickets
from service.tickets_redis import RedisTickets
from service.tickets_sqlite import SQLiteTickets
from tests.players_support import player_md
from tests.store_support import REDIS_URL, redis_cleanup, redis_prefix
from tests.support import Client

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
    # "redis", or a cluster's URL
    url = backend if backend.startswith("redis+cluster://") else REDIS_URL.split("?")[0]
    stores = [RedisTickets(url, prefix) for _ in range(count)]
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


def find(client: Client, token: str, game: str, players: int = 0,
         options: dict[str, Any] | None = None,
         mode: int = pb.MATCH_MODE_QUICK) -> pb.Ticket:
    """FindMatch as the player of `token`."""
    request = pb.FindMatchRequest(game=game, players=players, mode=mode)  # type: ignore[arg-type]
    if options:
        request.options.update(options)
    return client.stub.FindMatch(request, metadata=player_md(token), timeout=10)


def wait_matched(client: Client, token: str, ticket_id: str, timeout: float = 20.0) -> pb.Ticket:
    """Polls GetTicket (which keeps the ticket alive) until it is matched."""
    deadline = time.monotonic() + timeout
    while True:
        ticket = client.stub.GetTicket(pb.GetTicketRequest(ticket_id=ticket_id),
                                       metadata=player_md(token), timeout=10)
        if ticket.status != pb.TICKET_STATUS_WAITING:
            assert ticket.status == pb.TICKET_STATUS_MATCHED, ticket
            return ticket
        assert time.monotonic() < deadline, f"ticket {ticket_id} not matched in {timeout} s"
        time.sleep(0.1)
