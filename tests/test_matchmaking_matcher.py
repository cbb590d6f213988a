"""The matcher on real tables (the memory and SQLite stores): reserved seats, bots at the
closest level, rated tables, expiry, a lost claim's table closed, and two matchers on one
SQLite file seating every ticket once."""

from __future__ import annotations

import asyncio
from pathlib import Path

from service.matchmaking import Group, Matchmaker, MatchSettings
from service.model import (
    BOT_PLAYER_PREFIX,
    PLAYERS_LADDER,
    RATED_OPTION,
    RatedMatch,
    Rating,
    SeatKind,
    Status,
    TableFilter,
)
from service.store_memory import MemoryStore
from service.store_sqlite import SQLiteStore
from service.tables import Tables
from service.tickets import Mode, TicketStatus
from service.tickets_memory import MemoryTickets
from service.tickets_sqlite import SQLiteTickets
from tests.matchmaking_support import present, ticket
from tests.support import run_async


class Clock:
    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def matcher(clock: Clock, **settings: float) -> Matchmaker:
    store = MemoryStore()
    return Matchmaker(Tables(store, clock=clock), MemoryTickets(),
                      MatchSettings(**settings), clock=clock)  # type: ignore[arg-type]


@run_async
async def test_a_full_table_reserves_its_seats_for_the_tickets_players() -> None:
    clock = Clock()
    mm = matcher(clock)
    opened = [(await mm.tickets.open(ticket(f"p{i}", clock.now + i)))[0] for i in range(4)]
    clock.now += 5
    assert await mm.round() == 3
    got = [present(await mm.tickets.get(t.ticket_id)) for t in opened]
    assert [t.status for t in got] == ["matched"] * 3 + ["waiting"]
    record = await mm.tables.get(got[0].table_id)
    assert record.status == Status.WAITING and not record.options.get(RATED_OPTION)
    for t in got[:3]:
        seat = record.seats[t.seat]
        assert (seat.kind, seat.player, seat.reserved) == (SeatKind.HUMAN, t.player_id, True)


@run_async
async def test_bots_fill_at_the_level_closest_to_the_players() -> None:
    clock = Clock()
    mm = matcher(clock, bots_after=20.0)
    # the players' ladder: "medium" rated right where the player stands
    await mm.tables.store.rate(
        RatedMatch(PLAYERS_LADDER, "m1", "dou_dizhu", ("t",), ("ann",), clock.now),
        lambda _: [Rating(PLAYERS_LADDER, "dou_dizhu", "ann", 40.0, 2.0, 9, clock.now),
                   Rating(PLAYERS_LADDER, "dou_dizhu", f"{BOT_PLAYER_PREFIX}medium", 40.0,
                          2.0, 9, clock.now)])
    rating = await mm.rating("dou_dizhu", "ann")
    assert rating == 34.0
    t = (await mm.tickets.open(ticket("ann", clock.now, mode=Mode.RATED, rating=rating)))[0]
    clock.now += 19
    assert await mm.round() == 0
    clock.now += 1
    assert await mm.round() == 1
    got = present(await mm.tickets.get(t.ticket_id))
    record = await mm.tables.get(got.table_id)
    assert record.options.get(RATED_OPTION) is True
    bots = [s for i, s in enumerate(record.seats) if i != got.seat]
    assert [(s.kind, s.bot_level) for s in bots] == [(SeatKind.BOT, "medium")] * 2


@run_async
async def test_dead_tickets_expire_and_are_not_seated() -> None:
    clock = Clock()
    mm = matcher(clock)
    opened = [(await mm.tickets.open(ticket(f"p{i}", clock.now, lifetime=10)))[0]
              for i in range(3)]
    await mm.tickets.touch(opened[0].ticket_id, clock.now + 100, clock.now)
    clock.now += 11
    assert await mm.round() == 0
    got = [present(await mm.tickets.get(t.ticket_id)).status for t in opened]
    assert got == ["waiting", "expired", "expired"]


@run_async
async def test_a_lost_claim_closes_its_table() -> None:
    clock = Clock()
    mm = matcher(clock)
    opened = [(await mm.tickets.open(ticket(f"p{i}", clock.now)))[0] for i in range(3)]
    await mm.tickets.cancel(opened[1].ticket_id, clock.now)  # between grouping and claim
    assert not await mm.seat(Group(tuple(opened), False), [0, 1, 2], clock.now)
    tables = await mm.tables.store.list(TableFilter())
    assert [t.status for t in tables] == [Status.ABANDONED]
    assert present(await mm.tickets.get(opened[0].ticket_id)).status == TicketStatus.WAITING


@run_async
async def test_two_matchers_on_one_file_seat_every_ticket_once(tmp_path: Path) -> None:
    clock = Clock()
    db = tmp_path / "croupier.db"
    stores = [SQLiteStore(db), SQLiteStore(db)]
    tickets = [SQLiteTickets(db), SQLiteTickets(db)]
    mms = [Matchmaker(Tables(s, clock=clock), t, MatchSettings(), clock=clock)
           for s, t in zip(stores, tickets, strict=True)]
    # no leases: both race on every group, the claims decide
    for m in mms:
        m.owner = "same"
    try:
        opened = [(await tickets[i % 2].open(ticket(f"p{i}", clock.now + i)))[0]
                  for i in range(30)]
        clock.now += 31
        done = await asyncio.gather(mms[0].round(), mms[1].round())
        assert sum(done) == 30
        got = [present(await tickets[0].get(t.ticket_id)) for t in opened]
        assert all(t.status == TicketStatus.MATCHED for t in got)
        for t in got:
            record = await stores[0].get(t.table_id)
            assert record is not None and record.status == Status.WAITING
            assert record.seats[t.seat].player == t.player_id
        assert len({(t.table_id, t.seat) for t in got}) == 30
    finally:
        for ts in tickets:
            await ts.close()
        for s in stores:
            await s.close()
