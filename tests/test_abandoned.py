"""Tables nobody comes back to are closed as abandoned.

In-process first, on every store (memory, SQLite, Redis) with a clock the test moves: which
tables close and when, what presence keeps open, what bots do not, what a closed table answers,
and two replicas racing to close one table. Then through real server processes with small
configured times (polling until a condition, never sleeping and then asserting): a table
everybody left, presence through an open stream, two replicas on one Redis.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from croupier.v1 import croupier_pb2 as pb

from bots.heuristics import get_heuristic
from service.export_record import export_record
from service.model import EventKind, SeatKind, Status
from service.store import Store
from service.store_memory import MemoryStore
from service.store_redis import RedisStore
from service.store_sqlite import SQLiteStore
from service.tables import AbandonPolicy, Code, SeatRequest, TableError, Tables
from tests.store_support import REDIS_URL, redis_cleanup, redis_prefix
from tests.support import Client, Clock, ServerProcess, bearer, rpc_code, run

WAITING, PLAYING = 300.0, 1800.0


@pytest.fixture(params=["memory", "sqlite", "redis"])
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[], Store]]:
    """Stores sharing one backing: each one made is another replica's view of it."""
    if request.param == "memory":
        shared = MemoryStore()
        yield lambda: shared
    elif request.param == "redis":
        prefix = redis_prefix()
        yield lambda: RedisStore(f"{REDIS_URL}?prefix={prefix}")
        redis_cleanup(prefix)
    else:
        yield lambda: SQLiteStore(tmp_path / "croupier.db")


def tables(store: Store, clock: Clock) -> Tables:
    return Tables(store, clock=clock, abandon=AbandonPolicy(WAITING, PLAYING))


async def refused(code: Code, coro: Awaitable[Any]) -> str:
    with pytest.raises(TableError) as info:
        await coro
    assert info.value.code == code, info.value.message
    return info.value.message


def test_abandon_settings_are_checked() -> None:
    for bad in (-1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="abandoned"):
            AbandonPolicy(waiting_seconds=bad)
    assert AbandonPolicy(0, 0).presence_every == 30.0  # never closed: presence still cheap
    assert AbandonPolicy(2.0, 10.0).presence_every == 0.4  # well inside the shortest limit


def test_a_waiting_table_nobody_came_back_to_is_closed(make_store: Callable[[], Store]) -> None:
    async def go() -> None:
        clock = Clock()
        t = tables(make_store(), clock)
        tid = (await t.create("dou_dizhu", 3, {})).table_id
        _, token, _ = await t.join(tid, None, "ann", bot=False)
        clock.now += 200
        _, gone, _ = await t.join(tid, None, "bob", bot=False)  # a person sat: seen now
        await t.leave(tid, gone)
        clock.now += WAITING - 1
        assert await t.close_abandoned() == 0  # bob sat down 299 s ago
        clock.now += 2
        assert await t.close_abandoned() == 1
        assert await t.close_abandoned() == 0
        record = await t.get(tid)
        assert record.status == Status.ABANDONED and not record.dealt
        end = (await t.store.events_after(tid, record.version - 1))[0]
        assert end.kind == EventKind.END and end.abandoned and end.status == Status.ABANDONED
        # the lobby leaves it out unless asked
        assert tid not in [r.table_id for r in (await t.list())[0]]
        assert tid in [r.table_id for r in (await t.list(include_abandoned=True))[0]]
        assert tid in [r.table_id for r in (await t.list(status=Status.ABANDONED))[0]]
        assert tid not in [r.table_id for r in (await t.list(waiting_for_bot=True))[0]]
        for call in (t.move(tid, token, "pass", 0), t.join(tid, None, "carl", bot=False),
                     t.leave(tid, token)):
            assert "table was closed as abandoned" in await refused(Code.FAILED_PRECONDITION,
                                                                     call)
        # its record says so: no deal was made, so no initial state, no seed, no moves
        out = await export_record(t, tid)
        assert out.end_reason == pb.END_REASON_ABANDONED
        assert not out.initial_state and not out.seed and not out.moves
        assert list(out.result.totals) == [0, 0, 0] and out.finished_at == clock.now
        await t.store.close()

    run(go())


def test_presence_keeps_a_table_open_and_bots_are_no_presence(
    make_store: Callable[[], Store],
) -> None:
    async def go() -> None:
        clock = Clock()
        t = tables(make_store(), clock)
        seats = [SeatRequest(), SeatRequest(SeatKind.BOT, "random"), SeatRequest()]
        tid = (await t.create("dou_dizhu", 3, {}, seats)).table_id
        held = {}
        for name, bot in (("ann", False), ("bot", True), ("bob", False)):
            seat, held[name], _ = await t.join(tid, None, name, bot=bot)
        record = await t.get(tid)
        assert record.status == Status.PLAYING
        ann = 0
        # ann calls now and then (GetView, a stream): hours go by, the table stays
        for _ in range(40):
            clock.now += PLAYING / 4
            await t.present(await t.get(tid), ann)
            assert await t.close_abandoned() == 0
        # ann and bob are gone; the bot keeps calling, which is no person's presence
        for _ in range(3):
            clock.now += PLAYING / 3
            await t.present(await t.get(tid), 1)
        assert await t.close_abandoned() == 0  # ann was there just PLAYING seconds ago
        clock.now += 1
        await t.present(await t.get(tid), 1)
        assert await t.close_abandoned() == 1
        record = await t.get(tid)
        assert record.status == Status.ABANDONED and record.dealt
        # a person coming back is too late now: told so, and nothing changes
        msg = await refused(Code.FAILED_PRECONDITION, t.move(tid, held["ann"], "pass", 0))
        assert msg.startswith("table was closed as abandoned")
        assert (await t.get(tid)).version == record.version
        out = await export_record(t, tid)
        assert out.end_reason == pb.END_REASON_ABANDONED and out.initial_state and out.seed
        await t.store.close()

    run(go())


def test_tables_of_bots_alone_are_left_to_the_bots(make_store: Callable[[], Store]) -> None:
    async def go() -> None:
        clock = Clock()
        t = tables(make_store(), clock)
        bots = [SeatRequest(SeatKind.BOT, "random")] * 3
        tournament = (await t.create("dou_dizhu", 3, {}, bots)).table_id
        filled = (await t.create("dou_dizhu", 3, {}, fill_with_bots_after_seconds=5)).table_id
        for tid in (tournament, filled):
            clock.now += 6  # past the fill delay: bots may take the people's seats
            for _ in range(3):
                await t.join(tid, None, "bot", bot=True)
            assert (await t.get(tid)).status == Status.PLAYING
        clock.now += 10 * PLAYING
        assert await t.close_abandoned() == 0
        # the turn timer and the bots go on there; the round never touches them
        assert {(await t.get(tid)).status for tid in (tournament, filled)} == {Status.PLAYING}
        await t.store.close()

    run(go())


def test_the_turn_timer_is_no_presence(make_store: Callable[[], Store]) -> None:
    async def go() -> None:
        clock = Clock()
        t = Tables(make_store(), clock=clock, abandon=AbandonPolicy(WAITING, 100.0))
        tid = (await t.create("dou_dizhu", 3, {"turn_seconds": 10, "deals": 5})).table_id
        for name in "abc":
            await t.join(tid, None, name, bot=False)
        start = clock.now
        played = 0
        while clock.now + 11 < start + 100:  # the server plays for the gone people meanwhile
            clock.now += 11
            played += await t.play_overdue(get_heuristic)
            assert await t.close_abandoned() == 0
        assert played >= 8 and (await t.get(tid)).status == Status.PLAYING
        clock.now = start + 101
        assert await t.close_abandoned() == 1
        assert (await t.get(tid)).status == Status.ABANDONED
        await t.store.close()

    run(go())


def test_replicas_racing_to_close_a_table_close_it_once(make_store: Callable[[], Store]) -> None:
    async def go() -> None:
        clock = Clock()
        a, b = tables(make_store(), clock), tables(make_store(), clock)
        tid = (await a.create("dou_dizhu", 3, {})).table_id
        clock.now += WAITING + 1
        closed = await asyncio.gather(a.close_abandoned(), b.close_abandoned())
        assert sorted(closed) == [0, 1]
        log = await a.store.events_after(tid, 0)
        assert [e.kind for e in log] == [EventKind.CREATED, EventKind.END]
        for t in {id(a.store): a, id(b.store): b}.values():
            await t.store.close()

    run(go())


def test_a_person_seen_on_another_replica_keeps_the_table(
    make_store: Callable[[], Store],
) -> None:
    """The closing round of one replica read the table while a person's presence landed
    through another: the compare-and-set on the last-seen time refuses the close."""

    async def go() -> None:
        clock = Clock()
        a, b = tables(make_store(), clock), tables(make_store(), clock)
        tid = (await a.create("dou_dizhu", 3, {})).table_id
        _, token, _ = await a.join(tid, None, "ann", bot=False)
        clock.now += WAITING + 1
        store = a.store
        read = store.get

        async def read_then_ann_comes_back(table_id: str) -> Any:
            found = await read(table_id)
            await b.store.touch(tid, clock.now)  # on replica b, between a's read and write
            return found

        store.get = read_then_ann_comes_back  # type: ignore[method-assign]
        assert await a.close_abandoned() == 0
        store.get = read  # type: ignore[method-assign]
        assert (await a.get(tid)).status == Status.WAITING
        clock.now += WAITING + 1
        assert await a.close_abandoned() == 1
        for t in {id(a.store): a, id(b.store): b}.values():
            await t.store.close()

    run(go())


# --- through real servers -------------------------------------------------------------------
SHORT = ("--fill-interval", "0.05", "--poll-seconds", "0.2",
         "--abandon-waiting-after", "2", "--abandon-playing-after", "3")


@pytest.fixture(scope="module")
def short(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    proc = ServerProcess(db=tmp_path_factory.mktemp("abandon") / "croupier.db",
                         extra=SHORT).start()
    yield proc
    proc.stop()


def until(what: str, check: Callable[[], bool], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout} s: {what}")
        time.sleep(0.05)


def status(client: Client, tid: str) -> int:
    return client.view(tid).table.status


@pytest.mark.e2e
def test_a_table_everybody_left_is_closed_and_says_so(short: ServerProcess) -> None:
    """As after Ctrl-C in `croupier play`: the people left mid-game. The table does not stay
    in the lobby with an open seat that drops a newcomer into the old game."""
    client = Client(short.address)
    try:
        tid = client.seated_table()
        for _ in range(3):
            client.step(tid)
        tokens = dict(client.tokens)
        for seat in range(3):
            client.stub.LeaveTable(pb.LeaveTableRequest(table_id=tid),
                                   metadata=bearer(tokens[seat]), timeout=10)
        until("the table is closed", lambda: status(client, tid) == pb.TABLE_STATUS_ABANDONED)
        events = list(client.stream(tid, 0))
        end = events[-1]
        assert end.kind == pb.EVENT_KIND_END and end.end_reason == pb.END_REASON_ABANDONED
        assert end.view.table.status == pb.TABLE_STATUS_ABANDONED
        assert [e.end_reason for e in events[:-1]] == [pb.END_REASON_UNSPECIFIED] * (
            len(events) - 1)
        lobby = client.stub.ListTables(pb.ListTablesRequest(limit=500), timeout=10)
        assert tid not in {t.table_id for t in lobby.tables}
        lobby = client.stub.ListTables(pb.ListTablesRequest(limit=500, include_abandoned=True),
                                       timeout=10)
        assert tid in {t.table_id for t in lobby.tables}
        code, details = rpc_code(client.stub.JoinTable,
                                 pb.JoinTableRequest(table_id=tid, name="late"), timeout=10)
        assert code == grpc.StatusCode.FAILED_PRECONDITION
        assert "table was closed as abandoned" in details
        record = client.stub.ExportRecord(pb.ExportRecordRequest(table_id=tid), timeout=10)
        assert record.end_reason == pb.END_REASON_ABANDONED and len(record.moves) == 3
        closed = [line for line in short.log_lines()
                  if line.get("event") == "tables_closed_as_abandoned"]
        assert closed
    finally:
        client.close()


@pytest.mark.e2e
def test_a_closed_table_refuses_moves(short: ServerProcess) -> None:
    client = Client(short.address)
    try:
        tid = client.seated_table()
        public = client.view(tid)
        seat = public.to_act[0]
        mine = client.view(tid, seat)
        # nobody calls with a seat token for longer than the playing limit
        until("the table is closed", lambda: status(client, tid) == pb.TABLE_STATUS_ABANDONED)
        code, details = rpc_code(client.move, tid, seat, mine.legal_moves[0], mine.version)
        assert code == grpc.StatusCode.FAILED_PRECONDITION
        assert details.startswith("table was closed as abandoned")
    finally:
        client.close()


@pytest.mark.e2e
def test_an_open_stream_is_presence(short: ServerProcess) -> None:
    """Tables with one person seated, waiting for the others: one person keeps a stream
    open, one asks for the view now and then, one went away. The last closes; the first two
    are still waiting."""
    client, poller = Client(short.address), Client(short.address)
    try:
        kept, polled, left = (client.create().table_id for _ in range(3))
        client.join(kept, name="stays", seat=0)
        stays = client.tokens[0]
        poller.join(polled, name="polls", seat=0)
        client.join(left, name="went", seat=0)
        stream = client.stub.StreamTable(pb.StreamTableRequest(table_id=kept, from_version=0),
                                         metadata=bearer(stays), timeout=60)

        def closed(tid: str) -> bool:
            poller.view(polled, 0)  # a call with the seat token, every 50 ms
            return status(client, tid) == pb.TABLE_STATUS_ABANDONED

        try:
            assert next(stream).kind == pb.EVENT_KIND_CREATED  # the stream is open
            until("the table nobody watched is closed", lambda: closed(left))
            # longer than the waiting limit again, measured by a second table left alone
            other = client.create().table_id
            until("the second table nobody watched is closed", lambda: closed(other))
            assert status(client, kept) == pb.TABLE_STATUS_WAITING
            assert status(client, polled) == pb.TABLE_STATUS_WAITING
        finally:
            stream.cancel()
        until("the table is closed once its stream is gone",
              lambda: status(client, kept) == pb.TABLE_STATUS_ABANDONED)
        until("the table is closed once its person stopped calling",
              lambda: status(client, polled) == pb.TABLE_STATUS_ABANDONED)
    finally:
        client.close()
        poller.close()


@pytest.mark.e2e
def test_two_replicas_close_a_table_once(tmp_path: Path) -> None:
    prefix = redis_prefix()
    url = f"{REDIS_URL}?prefix={prefix}"
    servers = [ServerProcess(db=tmp_path / f"{name}.db", store=url, extra=SHORT).start()
               for name in "ab"]
    client = Client(servers[0].address)
    other = Client(servers[1].address)
    try:
        tids = [client.create().table_id for _ in range(4)]
        for tid in tids:
            other.join(tid, name="went")  # through the other replica
        until("every table is closed", lambda: all(
            status(client, tid) == pb.TABLE_STATUS_ABANDONED for tid in tids))
        for tid in tids:
            events = list(other.stream(tid, 0))
            assert [e.kind for e in events].count(pb.EVENT_KIND_END) == 1
            assert events[-1].end_reason == pb.END_REASON_ABANDONED
        closed = sum(line.get("tables", 0) for s in servers for line in s.log_lines()
                     if line.get("event") == "tables_closed_as_abandoned")
        assert closed == len(tids)
    finally:
        client.close()
        other.close()
        for server in servers:
            server.stop()
        redis_cleanup(prefix)
