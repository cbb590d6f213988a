"""The ticket store contract, run against every backend (memory, SQLite, Redis) with the same
test functions; two stores on one SQLite file or one Redis prefix stand for two replicas."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from service.tickets import TicketConflict, TicketStatus
from tests.matchmaking_support import BACKENDS, present, ticket, ticket_stores
from tests.support import run_async

NOW = 1_000_000.0


@pytest.fixture(params=[*BACKENDS, "redis-cluster"])
def backend(request: pytest.FixtureRequest) -> str:
    """A backend's name, or for the cluster its URL (the session's private cluster)."""
    if request.param == "redis-cluster":
        return str(request.getfixturevalue("redis_cluster").url)
    return str(request.param)


@run_async
async def test_one_open_ticket_per_player_and_game(backend: str, tmp_path: Path) -> None:
    async with ticket_stores(backend, tmp_path) as (a, b):
        first, made = await a.open(ticket("ann", NOW))
        assert made and first.status == TicketStatus.WAITING
        # the same wish again (through another replica): the open ticket, kept alive longer
        again, made = await b.open(ticket("ann", NOW + 5))
        assert not made and again.ticket_id == first.ticket_id
        assert again.alive_until == NOW + 65
        # another wish for the same game: refused, naming the open ticket; nothing written
        with pytest.raises(TicketConflict) as refused:
            await b.open(ticket("ann", NOW + 6, options={"deals": 2}))
        assert refused.value.open_ticket.ticket_id == first.ticket_id
        assert [t.ticket_id for t in await a.waiting(first.queue)] == [first.ticket_id]
        # another game, or another player: tickets of their own
        other_game, made = await a.open(ticket("ann", NOW, game="dos", players=2))
        assert made and other_game.ticket_id != first.ticket_id
        bob, made = await a.open(ticket("bob", NOW + 1))
        assert made
        assert [t.ticket_id for t in await b.waiting(first.queue)] == [
            first.ticket_id, bob.ticket_id]
        assert await b.count(first.queue) == 2
        assert sorted(await a.queues()) == sorted({first.queue, other_game.queue})
        # once cancelled, a new wish opens a new ticket
        assert present(await b.cancel(first.ticket_id, NOW + 7)).status == TicketStatus.CANCELLED
        new, made = await a.open(ticket("ann", NOW + 8, options={"deals": 2}))
        assert made and new.ticket_id != first.ticket_id


@run_async
async def test_racing_opens_leave_one_ticket(backend: str, tmp_path: Path) -> None:
    async with ticket_stores(backend, tmp_path) as (a, b):
        tries = [ticket("ann", NOW + i * 0.001) for i in range(20)]
        outcomes = await asyncio.gather(
            *((a if i % 2 else b).open(t) for i, t in enumerate(tries)))
        made = [t for t, new in outcomes if new]
        assert len(made) == 1
        assert {t.ticket_id for t, _ in outcomes} == {made[0].ticket_id}
        assert len(await a.waiting(made[0].queue)) == 1


@run_async
async def test_claim_is_all_or_nothing(backend: str, tmp_path: Path) -> None:
    async with ticket_stores(backend, tmp_path) as (a, b):
        ts = [(await a.open(ticket(p, NOW + i)))[0] for i, p in enumerate(("ann", "bob", "cy"))]
        ids = [t.ticket_id for t in ts]
        # one of the group cancelled: the claim writes nothing
        await b.cancel(ids[2], NOW + 5)
        assert not await a.claim(ids, "table1", [0, 1, 2], NOW + 6)
        assert [present(await b.get(i)).status for i in ids[:2]] == ["waiting", "waiting"]
        # the rest claimed: matched, seated, out of the queue and of the players' open slot
        assert await a.claim(ids[:2], "table2", [2, 0], NOW + 7)
        got = [present(await b.get(i)) for i in ids[:2]]
        assert [(t.status, t.table_id, t.seat, t.matched_at) for t in got] == [
            ("matched", "table2", 2, NOW + 7), ("matched", "table2", 0, NOW + 7)]
        assert await a.waiting(ts[0].queue) == []
        assert await b.queues() == []
        # matched stays matched: neither cancelled nor claimed again
        assert present(await b.cancel(ids[0], NOW + 8)).status == TicketStatus.MATCHED
        assert not await b.claim(ids[:1], "table3", [1], NOW + 8)
        again, made = await b.open(ticket("ann", NOW + 9))
        assert made and again.ticket_id != ids[0]


@run_async
async def test_two_claimers_racing_on_one_ticket_only_one_wins(backend: str,
                                                               tmp_path: Path) -> None:
    async with ticket_stores(backend, tmp_path) as (a, b):
        for round_ in range(10):
            shared = (await a.open(ticket(f"s{round_}", NOW)))[0]
            left = (await a.open(ticket(f"l{round_}", NOW)))[0]
            right = (await b.open(ticket(f"r{round_}", NOW)))[0]
            won = await asyncio.gather(
                a.claim([left.ticket_id, shared.ticket_id], "A", [0, 1], NOW + 1),
                b.claim([shared.ticket_id, right.ticket_id], "B", [0, 1], NOW + 1),
            )
            assert sorted(won) == [False, True]
            table = "A" if won[0] else "B"
            assert present(await b.get(shared.ticket_id)).table_id == table
            loser = right if won[0] else left
            assert present(await a.get(loser.ticket_id)).status == TicketStatus.WAITING


@run_async
async def test_cancel_racing_claim(backend: str, tmp_path: Path) -> None:
    async with ticket_stores(backend, tmp_path) as (a, b):
        for round_ in range(10):
            one = (await a.open(ticket(f"x{round_}", NOW)))[0]
            two = (await a.open(ticket(f"y{round_}", NOW)))[0]
            claimed, cancelled = await asyncio.gather(
                a.claim([one.ticket_id, two.ticket_id], "T", [0, 1], NOW + 1),
                b.cancel(two.ticket_id, NOW + 1),
            )
            cancelled = present(cancelled)
            after = present(await a.get(two.ticket_id))
            # either the claim landed first (the cancel found it matched) or the cancel did
            if claimed:
                assert after.status == cancelled.status == TicketStatus.MATCHED
            else:
                assert after.status == cancelled.status == TicketStatus.CANCELLED
                assert present(await a.get(one.ticket_id)).status == TicketStatus.WAITING


@run_async
async def test_expiry(backend: str, tmp_path: Path) -> None:
    async with ticket_stores(backend, tmp_path) as (a, b):
        t = (await a.open(ticket("ann", NOW, lifetime=10)))[0]
        # kept alive while alive; never shortened
        assert present(await b.touch(t.ticket_id, NOW + 30, NOW + 5)).alive_until == NOW + 30
        assert present(await b.touch(t.ticket_id, NOW + 20, NOW + 6)).alive_until == NOW + 30
        # past its lifetime: dead as seen, not revived by a touch, not claimable
        dead = present(await b.touch(t.ticket_id, NOW + 90, NOW + 31))
        assert dead.alive_until == NOW + 30
        assert dead.seen_at(NOW + 31).status == TicketStatus.EXPIRED
        assert not await a.claim([t.ticket_id], "T", [0], NOW + 31)
        assert await a.expire([t.ticket_id], NOW + 29) == 0  # not yet at that time
        assert await a.expire([t.ticket_id], NOW + 31) == 1
        assert present(await b.get(t.ticket_id)).status == TicketStatus.EXPIRED
        assert await b.waiting(t.queue) == []
        # a dead ticket does not hold the player's slot, even before it is expired
        u = (await a.open(ticket("bob", NOW, lifetime=10)))[0]
        v, made = await b.open(ticket("bob", NOW + 11, options={"deals": 2}))
        assert made and v.ticket_id != u.ticket_id
        assert present(await a.get(u.ticket_id)).status == TicketStatus.EXPIRED
        # cancelling a dead ticket expires it
        w = (await a.open(ticket("cy", NOW, lifetime=10)))[0]
        assert present(await b.cancel(w.ticket_id, NOW + 11)).status == TicketStatus.EXPIRED


@run_async
async def test_lease_one_owner_at_a_time(backend: str, tmp_path: Path) -> None:
    async with ticket_stores(backend, tmp_path) as (a, b):
        assert await a.lease("q", "A", 0.3, NOW)
        assert await a.lease("q", "A", 0.3, NOW)  # renewed
        assert not await b.lease("q", "B", 0.3, NOW)
        assert await b.lease("other", "B", 0.3, NOW)
        await asyncio.sleep(0.4)  # Redis counts its own time
        assert await b.lease("q", "B", 0.3, NOW + 0.4)
        assert not await a.lease("q", "A", 0.3, NOW + 0.4)


@pytest.mark.parametrize("backend", ("memory", "sqlite"))
@run_async
async def test_purge_forgets_finished_tickets_only(backend: str, tmp_path: Path) -> None:
    async with ticket_stores(backend, tmp_path) as (a, _):
        done = (await a.open(ticket("ann", NOW)))[0]
        await a.cancel(done.ticket_id, NOW + 1)
        waiting = (await a.open(ticket("bob", NOW)))[0]
        assert await a.purge(NOW + 10) == 1
        assert await a.get(done.ticket_id) is None
        assert await a.get(waiting.ticket_id) is not None
