"""The store contract, run against every backend with the same test functions."""

from __future__ import annotations

import asyncio
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from engines.commitments import Sealed
from service.model import (
    FALLBACKS,
    EventKind,
    Seat,
    SeatKind,
    Status,
    TableFilter,
    event_flags,
    flags_fields,
)
from service.store import Store, TableExists, TableMissing, VersionConflict, open_store
from service.store_memory import MemoryStore
from service.store_redis import RedisStore
from service.store_sqlite import CHECKPOINT_AFTER, SQLiteStore
from tests.store_support import (
    HOUR,
    REDIS_KINDS,
    REDIS_URL,
    HeldWriter,
    event,
    reader_covers,
    record,
    redis_cleanup,
    redis_kind_url,
    seed_table,
    woken,
)
from tests.support import run, run_async


def new_memory(tmp: Path) -> Store:
    return MemoryStore()


def new_sqlite(tmp: Path) -> Store:
    return SQLiteStore(tmp / "nested" / "dir" / "croupier.db")


BACKENDS: dict[str, Callable[[Path], Store]] = {"memory": new_memory, "sqlite": new_sqlite}


@pytest.fixture(params=REDIS_KINDS)
def redis_url(request: pytest.FixtureRequest) -> Iterator[str]:
    """A store URL with a fresh prefix (plain, bucketed, cluster); its keys are deleted
    after the test."""
    url, prefix = redis_kind_url(request, request.param)
    yield url
    redis_cleanup(prefix)


@pytest.fixture(params=[*sorted(BACKENDS), *REDIS_KINDS])
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[], Store]]:
    """A factory: stores it makes share one backing (the same SQLite file, the same memory,
    the same Redis prefix)."""
    if request.param == "memory":
        shared = MemoryStore()
        yield lambda: shared
    elif request.param in REDIS_KINDS:
        url, prefix = redis_kind_url(request, request.param)
        yield lambda: RedisStore(url)
        redis_cleanup(prefix)
    else:
        yield lambda: BACKENDS["sqlite"](tmp_path)


@run_async
async def test_create_get_round_trip(make_store: Callable[[], Store]) -> None:
    store = make_store()
    rec = await seed_table(store)
    assert await store.get("t1") == rec
    assert await store.get("nope") is None
    events = await store.events_after("t1", 0)
    assert events == [event("t1", 1, EventKind.CREATED, seat=-1, move="")]
    await store.close()


@run_async
async def test_fallbacks_and_match_budgets_round_trip(make_store: Callable[[], Store]) -> None:
    """A move's fallback rides in the event flags' upper bits and a seat's budget in its JSON:
    both come back from every backend, beside the older flags, unchanged."""
    store = make_store()
    await seed_table(store)
    spent = (Seat(occupied=True, name="ann", is_bot=True, budget_used=1.25),)
    moves = [event("t1", 2 + i, fallback=reason, auto=i % 2 == 1, seats=spent)
             for i, reason in enumerate(FALLBACKS)]
    moves.append(event("t1", 6, deal_over=True))
    new = record("t1", version=6, status=Status.PLAYING, seats=spent)
    await store.commit(new, moves, 1)
    assert await store.get("t1") == new
    back = await store.events_after("t1", 1)
    assert back == moves
    assert [e.fallback for e in back] == [*FALLBACKS, ""]
    assert back[0].seats[0].budget_used == 1.25
    await store.close()


def _sealed(index: int) -> Sealed:
    return Sealed(index, index, 2 + index, f"{index:064x}", f"{index:032x}", f"seat 0: {index}")


@run_async
async def test_deal_commitments_round_trip(make_store: Callable[[], Store]) -> None:
    """A table's commitments (salts and cards included) come back from every backend, also
    after a move that changes nothing else but the state (SQLite's short UPDATE) and after
    one that adds a commitment beside the state."""
    store = make_store()
    await seed_table(store)
    dealt = record("t1", version=2, state=b"dealt", deals=(_sealed(0),))
    await store.commit(dealt, [event("t1", 2)], 1)
    moved = dealt.with_(version=3, state=b"moved")
    await store.commit(moved, [event("t1", 3)], 2)
    redealt = moved.with_(version=4, state=b"redealt", deals=(*moved.deals, _sealed(1)))
    await store.commit(redealt, [event("t1", 4)], 3)
    fresh = make_store()
    assert await fresh.get("t1") == redealt
    for s in {id(store): store, id(fresh): fresh}.values():
        await s.close()


@run_async
async def test_rejected_answers_round_trip(make_store: Callable[[], Store]) -> None:
    """A bot's refused answer rides with its move's event in every backend; a move without
    one is stored as before it existed (Redis: no field; SQLite: the column's default), so
    older events read back with none."""
    store = make_store()
    await seed_table(store)
    moves = [event("t1", 2, fallback="illegal", rejected="7♥ 7♦ ≠ pair"),
             event("t1", 3, fallback="garbage", rejected='{"mvoe": "33"'),
             event("t1", 4)]
    await store.commit(record("t1", version=4, status=Status.PLAYING), moves, 1)
    back = await store.events_after("t1", 1)
    assert back == moves
    assert [e.rejected for e in back] == ["7♥ 7♦ ≠ pair", '{"mvoe": "33"', ""]
    await store.close()


@run_async
async def test_the_pause_between_deals_round_trips_and_is_listed_when_due(
    make_store: Callable[[], Store],
) -> None:
    """A table's pause (when the next deal may start, the seats ready) comes back from every
    backend with the record and with its events; the pacing round's filter lists the tables
    whose pause is due by a time, and no longer once the pause ended."""
    store = make_store()
    await seed_table(store)
    await seed_table(store, "t2")
    paused = record("t1", version=2, status=Status.PLAYING, next_deal_at=1500.25, ready=(0, 2))
    over = event("t1", 2, deal_over=True, next_deal_at=1500.25, ready=(0, 2))
    await store.commit(paused, [over], 1)
    later = record("t2", version=2, status=Status.PLAYING, next_deal_at=1600.0)
    await store.commit(later, [event("t2", 2, next_deal_at=1600.0)], 1)
    assert await store.get("t1") == paused
    assert await store.events_after("t1", 1) == [over]
    due = await store.list(TableFilter(pause_due_before=1550.0))
    assert [r.table_id for r in due] == ["t1"]
    both = await store.list(TableFilter(pause_due_before=1600.0))
    assert sorted(r.table_id for r in both) == ["t1", "t2"]
    started = paused.with_(version=3, next_deal_at=0.0, ready=())
    await store.commit(started, [event("t1", 3, kind=EventKind.DEAL_STARTS)], 2)
    assert await store.get("t1") == started
    assert [e.kind for e in await store.events_after("t1", 2)] == [EventKind.DEAL_STARTS]
    assert (await store.events_after("t1", 2))[0].next_deal_at == 0.0
    due = await store.list(TableFilter(pause_due_before=1600.0))
    assert [r.table_id for r in due] == ["t2"]
    await store.close()


def test_sqlite_files_made_before_the_pause_open_without_one(tmp_path: Path) -> None:
    """A file without the pause's columns (tables and events) gains them when opened; its
    tables and events read back with no pause."""
    path = tmp_path / "old.sqlite"

    async def seed() -> None:
        store = SQLiteStore(path)
        await seed_table(store)
        await store.commit(record("t1", version=2), [event("t1", 2)], 1)
        await store.close()

    run(seed())
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("DROP INDEX tables_paused")
        for table, column in (("tables", "next_deal_at"), ("tables", "ready"),
                              ("events", "pause")):
            conn.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
        conn.commit()

    async def reopen() -> None:
        store = SQLiteStore(path)
        assert await store.get("t1") == record("t1", version=2)
        assert await store.events_after("t1", 1) == [event("t1", 2)]
        await store.close()

    run(reopen())


@run_async
async def test_tables_stored_before_commitments_read_back_without_any(
    tmp_path: Path, redis_url: str
) -> None:
    """A SQLite file without the `deals` column (gained when opened) and a Redis hash without
    the field read back with no commitments."""
    path = tmp_path / "old.sqlite"
    store = SQLiteStore(path)
    await seed_table(store)
    await store.close()
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("ALTER TABLE tables DROP COLUMN deals")
        conn.commit()
    reopened = SQLiteStore(path)
    assert await reopened.get("t1") == record("t1")
    await reopened.close()
    red = RedisStore(redis_url)
    await seed_table(red)
    assert await red._redis.hdel(red._record_key("t1"), "deals") == 1
    back = await red.get("t1")
    assert back is not None and back.deals == () and back == record("t1")
    await red.close()


def test_sqlite_events_of_a_file_without_rejected_answers_read_back(tmp_path: Path) -> None:
    """A file made before moves kept a refused answer (no `rejected` column) opens with the
    column added, its events read back with none, and takes new ones with it."""
    path = tmp_path / "old.sqlite"

    async def seed() -> None:
        store = SQLiteStore(path)
        await seed_table(store)
        await store.commit(record("t1", version=2), [event("t1", 2, fallback="late")], 1)
        await store.close()

    run(seed())
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("ALTER TABLE events DROP COLUMN rejected")
        conn.commit()

    async def reopen() -> None:
        store = SQLiteStore(path)
        assert (await store.events_after("t1", 1)) == [event("t1", 2, fallback="late")]
        kept = event("t1", 3, fallback="illegal", rejected="no such move")
        await store.commit(record("t1", version=3), [kept], 2)
        assert (await store.events_after("t1", 2)) == [kept]
        await store.close()

    run(reopen())


def test_old_event_flags_and_seats_read_back_unchanged() -> None:
    for flags in range(8):  # what tables written before fallbacks existed hold
        fields = flags_fields(flags)
        assert fields["fallback"] == ""
        assert event_flags(event("t", 2, **fields)) == flags
    assert Seat.from_json({"kind": "bot", "bot_level": "hard"}).budget_used == 0.0
    assert "budget_used" not in Seat().to_json()


@run_async
async def test_create_twice_is_refused(make_store: Callable[[], Store]) -> None:
    store = make_store()
    rec = await seed_table(store)
    with pytest.raises(TableExists):
        await store.create(record("t1", game="other"), [event("t1", 1)])
    assert await store.get("t1") == rec
    assert len(await store.events_after("t1", 0)) == 1
    await store.close()


@run_async
async def test_commit_advances_version(make_store: Callable[[], Store]) -> None:
    store = make_store()
    await seed_table(store)
    new = record("t1", version=3, status=Status.PLAYING)
    await store.commit(new, [event("t1", 2), event("t1", 3, EventKind.END)], 1)
    assert await store.get("t1") == new
    assert [e.version for e in await store.events_after("t1", 0)] == [1, 2, 3]
    assert [e.kind for e in await store.events_after("t1", 1)] == [
        EventKind.MOVE,
        EventKind.END,
    ]
    await store.close()


@run_async
async def test_stale_commit_is_refused_and_changes_nothing(make_store: Callable[[], Store]) -> None:
    store = make_store()
    await seed_table(store)
    v2 = record("t1", version=2)
    await store.commit(v2, [event("t1", 2)], 1)
    with pytest.raises(VersionConflict):
        await store.commit(record("t1", version=2, game="x"), [event("t1", 2, name="late")], 1)
    assert await store.get("t1") == v2
    assert [e.name for e in await store.events_after("t1", 0)] == ["ann", "ann"]
    await store.close()


@run_async
async def test_commit_to_missing_table(make_store: Callable[[], Store]) -> None:
    store = make_store()
    with pytest.raises(TableMissing):
        await store.commit(record("ghost", version=2), [event("ghost", 2)], 1)
    await store.close()


@run_async
async def test_commit_must_continue_the_log(make_store: Callable[[], Store]) -> None:
    store = make_store()
    await seed_table(store)
    with pytest.raises(ValueError):  # a gap
        await store.commit(record("t1", version=3), [event("t1", 3)], 1)
    with pytest.raises(ValueError):  # record and last event disagree
        await store.commit(record("t1", version=5), [event("t1", 2)], 1)
    with pytest.raises(ValueError):  # nothing to commit
        await store.commit(record("t1", version=1), [], 1)
    assert (await store.get("t1")).version == 1  # type: ignore[union-attr]
    await store.close()


@run_async
async def test_events_after_pages(make_store: Callable[[], Store]) -> None:
    store = make_store()
    await seed_table(store)
    for v in range(2, 11):
        await store.commit(record("t1", version=v), [event("t1", v)], v - 1)
    assert [e.version for e in await store.events_after("t1", 4, limit=3)] == [5, 6, 7]
    assert [e.version for e in await store.events_after("t1", 9)] == [10]
    assert await store.events_after("t1", 10) == []
    assert await store.events_after("nope", 0) == []
    got = (await store.events_after("t1", 7, limit=1))[0]
    assert got == event("t1", 8)  # every field survives the round trip
    await store.close()


@run_async
async def test_list_filters(make_store: Callable[[], Store]) -> None:
    store = make_store()
    human = (Seat(), Seat())
    full = (Seat(occupied=True), Seat(occupied=True))
    tables = [
        # id, game, status, seats, created_at, fill delay
        ("a", "dou_dizhu", Status.WAITING, human, 10.0, 0.0),  # people only
        ("b", "dou_dizhu", Status.WAITING, human, 20.0, 5.0),  # bots from 25
        ("c", "dou_dizhu", Status.PLAYING, full, 30.0, 5.0),  # full
        ("d", "other", Status.WAITING, (Seat(kind=SeatKind.BOT), Seat()), 40.0, 0.0),
        ("e", "dou_dizhu", Status.FINISHED, human, 50.0, 5.0),  # over: no bots
    ]
    for tid, game, status, seats, created, fill in tables:
        rec = record(
            tid,
            game=game,
            status=status,
            seats=seats,
            created_at=created,
            fill_with_bots_after_seconds=fill,
            fill_level="random" if fill else "",
        )
        await store.create(rec, [event(tid, 1)])

    async def ids(**kw: Any) -> list[str]:
        return [r.table_id for r in await store.list(TableFilter(**kw))]

    assert await ids() == ["e", "d", "c", "b", "a"]  # newest first
    assert await ids(limit=2) == ["e", "d"]
    assert await ids(game="other") == ["d"]
    assert await ids(status=Status.WAITING) == ["d", "b", "a"]
    assert await ids(game="dou_dizhu", status=Status.WAITING) == ["b", "a"]
    assert await ids(bot_open_before=24.0) == []  # d was created at 40
    assert await ids(bot_open_before=25.0) == ["b"]
    assert await ids(bot_open_before=100.0) == ["b", "d"]  # the longest-waiting first
    assert await ids(bot_open_before=100.0, limit=1) == ["b"]
    assert await ids(fill_due_before=100.0) == ["b"]
    assert await ids(fill_due_before=24.9) == []
    # a change of seats moves a table in and out of the bot filter
    b = await store.get("b")
    assert b is not None
    taken = b.with_(
        seats=(Seat(occupied=True), Seat(occupied=True)), version=2, status=Status.PLAYING
    )
    await store.commit(taken, [event("b", 2)], 1)
    assert await ids(bot_open_before=100.0) == ["d"]
    assert await ids(fill_due_before=100.0) == []
    # by the levels of the seats a bot may take (a worker serving some levels only)
    for tid, seats, created, fill, fill_level in [
        ("f", (Seat(kind=SeatKind.BOT, bot_level="hard"),
               Seat(kind=SeatKind.BOT, bot_level="easy", occupied=True)), 15.0, 0.0, ""),
        ("g", (Seat(kind=SeatKind.BOT, bot_level="easy"), Seat()), 5.0, 0.0, ""),
        ("h", human, 12.0, 5.0, "expert"),  # people's seats go to expert bots from 17
    ]:
        rec = record(tid, seats=seats, created_at=created, fill_with_bots_after_seconds=fill,
                     fill_level=fill_level)
        await store.create(rec, [event(tid, 1)])

    def levels(*names: str) -> frozenset[str]:
        return frozenset(names)

    assert await ids(bot_open_before=100.0) == ["g", "f", "h", "d"]
    assert await ids(bot_open_before=100.0, bot_levels=levels("hard")) == ["f"]
    assert await ids(bot_open_before=100.0, bot_levels=levels("easy")) == ["g"]  # f's is taken
    assert await ids(bot_open_before=100.0, bot_levels=levels("easy", "hard"),
                     limit=1) == ["g"]
    assert await ids(bot_open_before=16.0, bot_levels=levels("expert")) == []
    assert await ids(bot_open_before=100.0, bot_levels=levels("expert", "medium")) == ["h"]
    assert await ids(bot_open_before=100.0, bot_levels=levels("medium")) == []
    # pages: from a cursor (the last table's place in the filter's order) on
    for kw in ({}, {"status": Status.WAITING}, {"bot_open_before": 100.0}):
        whole = await store.list(TableFilter(**kw))
        flt = TableFilter(limit=2, **kw)
        paged: list[str] = []
        while True:
            page = await store.list(flt)
            paged += [r.table_id for r in page]
            if len(page) < 2:
                break
            flt = TableFilter(limit=2, after=flt.order_key(page[-1]), **kw)
        assert paged == [r.table_id for r in whole], kw
    # a private table: for the lobby it is not there, for bot workers and timers it is
    secret = record("p", seats=(Seat(kind=SeatKind.BOT, bot_level="hard"), Seat()),
                    created_at=14.0, options={"private": True})
    await store.create(secret, [event("p", 1)])
    assert "p" in await ids() and "p" not in await ids(public_only=True)
    assert await ids(bot_open_before=100.0, bot_levels=levels("hard")) == ["p", "f"]
    assert await ids(bot_open_before=100.0, bot_levels=levels("hard"),
                     public_only=True) == ["f"]
    assert "g" in await ids(public_only=True)  # options without the key are public
    gone = await store.get("p")
    assert gone is not None
    await store.commit(gone.with_(version=2, status=Status.FINISHED), [event("p", 2)], 1)
    for tid in "fgh":
        gone = await store.get(tid)
        assert gone is not None
        await store.commit(gone.with_(version=2, status=Status.FINISHED), [event(tid, 2)], 1)
    assert await ids(bot_open_before=100.0, bot_levels=levels("easy", "hard", "expert")) == []
    # the turn timer's filter: tables with option turn_seconds, in and out as they play
    assert await ids(timed=True) == []
    for tid, status, options, created in [
        ("t", Status.WAITING, {"turn_seconds": 30}, 60.0),
        ("u", Status.PLAYING, {"turn_seconds": 2.5, "deals": 1}, 70.0),
        ("v", Status.PLAYING, {"turn_seconds": 0}, 80.0),  # 0: no timer
    ]:
        rec = record(tid, status=status, options=options, created_at=created)
        await store.create(rec, [event(tid, 1)])
    assert await ids(timed=True) == ["u", "t"]
    assert await ids(timed=True, status=Status.PLAYING) == ["u"]
    assert await ids(timed=True, status=Status.WAITING) == ["t"]
    assert "c" in await ids(status=Status.PLAYING)  # untimed tables still list
    t = await store.get("t")
    assert t is not None
    await store.commit(t.with_(version=2, status=Status.PLAYING), [event("t", 2)], 1)
    u = await store.get("u")
    assert u is not None
    await store.commit(u.with_(version=2, status=Status.FINISHED), [event("u", 2)], 1)
    assert await ids(timed=True, status=Status.PLAYING) == ["t"]
    assert await ids(timed=True, status=Status.FINISHED) == ["u"]
    await store.close()


def test_concurrent_writers_lose_no_update(make_store: Callable[[], Store]) -> None:
    """Writers race read-modify-write loops, retrying on conflict: every increment lands once,
    the log has no gap and no duplicate. SQLite writers use separate connections."""
    writers, increments = 6, 15

    async def go() -> None:
        stores = [make_store() for _ in range(3)]
        await seed_table(stores[0])
        conflicts = 0

        async def writer(w: int) -> None:
            nonlocal conflicts
            store = stores[w % len(stores)]
            done = 0
            while done < increments:
                cur = await store.get("t1")
                assert cur is not None
                await asyncio.sleep(0)  # let the others read the same version
                new = cur.with_(version=cur.version + 1)
                try:
                    await store.commit(new, [event("t1", new.version, name=f"w{w}")], cur.version)
                except VersionConflict:
                    conflicts += 1
                    continue
                done += 1

        await asyncio.gather(*(writer(w) for w in range(writers)))
        final = await stores[0].get("t1")
        assert final is not None and final.version == 1 + writers * increments
        log = await stores[0].events_after("t1", 0, limit=10_000)
        assert [e.version for e in log] == list(range(1, final.version + 1))
        names = [e.name for e in log[1:]]
        assert all(names.count(f"w{w}") == increments for w in range(writers))
        assert conflicts > 0  # the race really happened
        for s in stores:
            await s.close()

    run(go())


@run_async
async def test_sqlite_survives_reopen(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite"
    store = SQLiteStore(path)
    await seed_table(store)
    await store.commit(record("t1", version=2), [event("t1", 2)], 1)
    await store.close()
    again = SQLiteStore(path)
    assert (await again.get("t1")) == record("t1", version=2)
    assert len(await again.events_after("t1", 0)) == 2
    await again.close()


def test_sqlite_moves_events_of_an_older_file_to_the_rowid_table(tmp_path: Path) -> None:
    """A file whose events table is WITHOUT ROWID (before events became a rowid table) opens
    with every event in the new table, read back the same, and takes new writes."""
    path = tmp_path / "old.sqlite"

    async def seed() -> None:
        store = SQLiteStore(path)
        await seed_table(store)
        await store.commit(record("t1", version=2), [event("t1", 2)], 1)
        await store.close()

    run(seed())
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("ALTER TABLE events RENAME TO events_new")
        ddl = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'events_new'").fetchone()[0]
        conn.execute(ddl.replace("events_new", "events").rstrip() + " WITHOUT ROWID")
        conn.execute("INSERT INTO events SELECT * FROM events_new")
        conn.execute("DROP TABLE events_new")
        conn.commit()
        assert (
            "WITHOUT ROWID"
            in conn.execute("SELECT sql FROM sqlite_master WHERE name = 'events'").fetchone()[0]
        )

    async def reopen() -> None:
        store = SQLiteStore(path)
        assert [e.version for e in await store.events_after("t1", 0)] == [1, 2]
        assert (await store.events_after("t1", 1))[0] == event("t1", 2)
        await store.commit(record("t1", version=3), [event("t1", 3)], 2)
        assert [e.version for e in await store.events_after("t1", 0)] == [1, 2, 3]
        await store.close()

    run(reopen())
    with closing(sqlite3.connect(path)) as conn:
        tables = [r[0] for r in conn.execute("SELECT name, sql FROM sqlite_master")]
        ddl = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'events'").fetchone()[0]
    assert "WITHOUT ROWID" not in ddl.upper()
    assert "events_without_rowid" not in tables


def test_open_store_urls(tmp_path: Path) -> None:
    assert isinstance(open_store("memory"), MemoryStore)
    store = open_store(f"sqlite:{tmp_path}/x/y.db")
    assert isinstance(store, SQLiteStore)
    assert (tmp_path / "x" / "y.db").exists()
    run(store.close())
    with pytest.raises(ValueError, match="unknown store"):
        open_store("postgres://nope")


# --- SQLite: group commit, the record cache, waiting for another process's lock -----------


@run_async
async def test_sqlite_group_commit_same_table_twice_in_one_batch(tmp_path: Path) -> None:
    """Two writers of one table queued while the writer was held share a transaction; each
    keeps its own version check, so exactly one wins and nothing of the other lands."""
    store = SQLiteStore(tmp_path / "db.sqlite")
    await seed_table(store)
    held = HeldWriter(store)
    held.hold()
    first = store.commit(record("t1", version=2, game="a"), [event("t1", 2, name="a")], 1)
    second = store.commit(record("t1", version=2, game="b"), [event("t1", 2, name="b")], 1)
    both = asyncio.gather(first, second, return_exceptions=True)
    await asyncio.sleep(0.01)
    held.release()
    outcomes = await both
    assert held.batches == [2]
    assert outcomes[0] is None and isinstance(outcomes[1], VersionConflict)
    assert "version 2, not 1" in str(outcomes[1])
    assert await store.get("t1") == record("t1", version=2, game="a")
    assert [e.name for e in await store.events_after("t1", 1)] == ["a"]
    await store.close()
    again = SQLiteStore(tmp_path / "db.sqlite")  # what is on disk, not in the cache
    assert await again.get("t1") == record("t1", version=2, game="a")
    await again.close()


@run_async
async def test_sqlite_group_commit_chains_and_mixes_outcomes(tmp_path: Path) -> None:
    """One batch with a create, a clash on that id, a chain of two commits of one table, a
    commit to a missing table and a stale one: each gets its own answer."""
    store = SQLiteStore(tmp_path / "db.sqlite")
    await seed_table(store, "t1")
    await seed_table(store, "t2")
    held = HeldWriter(store)
    held.hold()
    writes = asyncio.gather(
        store.create(record("t3"), [event("t3", 1, EventKind.CREATED)]),
        store.create(record("t3", game="x"), [event("t3", 1, EventKind.CREATED)]),
        store.commit(record("t1", version=2), [event("t1", 2)], 1),
        store.commit(record("t1", version=3), [event("t1", 3)], 2),
        store.commit(record("ghost", version=2), [event("ghost", 2)], 1),
        store.commit(record("t2", version=6), [event("t2", 6)], 5),
        return_exceptions=True,
    )
    await asyncio.sleep(0.01)
    held.release()
    outcomes = await writes
    assert held.batches == [6]
    assert [type(o).__name__ for o in outcomes] == [
        "NoneType",
        "TableExists",
        "NoneType",
        "NoneType",
        "TableMissing",
        "VersionConflict",
    ]
    assert await store.get("t3") == record("t3")
    assert (await store.get("t1")).version == 3  # type: ignore[union-attr]
    assert (await store.get("t2")).version == 1  # type: ignore[union-attr]
    assert [e.version for e in await store.events_after("t1", 0)] == [1, 2, 3]
    await store.close()


@run_async
async def test_sqlite_one_broken_write_fails_alone(tmp_path: Path) -> None:
    """A write that SQLite itself refuses (here: an event version already in the log) rolls
    its batch back; the others are committed again one by one and only it fails."""
    path = tmp_path / "db.sqlite"
    store = SQLiteStore(path)
    for tid in ("t1", "t2", "t3"):
        await seed_table(store, tid)
    with closing(sqlite3.connect(path)) as raw:  # a log that runs ahead of its record
        raw.execute(
            "INSERT INTO events SELECT table_id, 2, kind, seat, move, name, time, state,"
            " seats, status, deal_over, rejected, pause FROM events WHERE table_id = 't2'"
        )
        raw.commit()
    held = HeldWriter(store)
    held.hold()
    writes = asyncio.gather(
        *(
            store.commit(record(tid, version=2), [event(tid, 2, name="new")], 1)
            for tid in ("t1", "t2", "t3")
        ),
        return_exceptions=True,
    )
    await asyncio.sleep(0.01)
    held.release()
    outcomes = await writes
    assert held.batches == [1, 1, 1, 3]  # the batch of 3 failed, went again one by one
    assert outcomes[0] is None and outcomes[2] is None
    assert isinstance(outcomes[1], sqlite3.IntegrityError)
    again = SQLiteStore(path)
    assert [(await again.get(t)).version for t in ("t1", "t2", "t3")] == [2, 1, 2]  # type: ignore[union-attr]
    assert (await again.events_after("t3", 1))[0].name == "new"
    await again.close()
    await store.close()


def test_sqlite_batched_commits_of_many_tables_are_all_durable(tmp_path: Path) -> None:
    """Commits of many tables answered together (one batch) are all on disk when answered: a
    process killed right after (no close, no checkpoint) loses none of them."""
    path = tmp_path / "db.sqlite"
    script = f"""
import asyncio, os, signal, sqlite3, sys
sys.path.insert(0, {str(Path(__file__).resolve().parent.parent)!r})
from tests.store_support import HeldWriter, event, record, seed_table
from service.store_sqlite import SQLiteStore

async def main():
    store = SQLiteStore({str(path)!r})
    await asyncio.gather(*(seed_table(store, f"t{{i}}") for i in range(40)))
    held = HeldWriter(store)
    held.hold()
    commits = asyncio.gather(*(
        store.commit(record(f"t{{i}}", version=2), [event(f"t{{i}}", 2)], 1) for i in range(40)
    ))
    await asyncio.sleep(0.01)
    held.release()
    await commits
    print("acked", held.batches, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)

asyncio.run(main())
"""
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert proc.stdout.strip() == "acked [40]", proc.stderr
    assert proc.returncode == -signal.SIGKILL

    async def check() -> None:
        store = SQLiteStore(path)
        for i in range(40):
            assert (await store.get(f"t{i}")) == record(f"t{i}", version=2)
            assert [e.version for e in await store.events_after(f"t{i}", 0)] == [1, 2]
        await store.close()

    run(check())


@run_async
async def test_sqlite_cache_sees_writes_of_another_connection(tmp_path: Path) -> None:
    """Records are cached, but another store on the file (as another process would) is seen
    at once, and a write based on a record it made stale loses its compare-and-set."""
    mine, theirs = SQLiteStore(tmp_path / "db.sqlite"), SQLiteStore(tmp_path / "db.sqlite")
    await seed_table(mine)
    assert (await mine.get("t1")).version == 1  # type: ignore[union-attr]  # now cached
    await theirs.commit(record("t1", version=2, game="theirs"), [event("t1", 2)], 1)
    assert await mine.get("t1") == record("t1", version=2, game="theirs")
    stale = record("t1", version=2, game="mine")
    with pytest.raises(VersionConflict):
        await mine.commit(stale, [event("t1", 2)], 1)
    # and the other way round, on a record both have cached
    assert (await theirs.get("t1")).version == 2  # type: ignore[union-attr]
    await mine.commit(record("t1", version=3, game="mine"), [event("t1", 3)], 2)
    with pytest.raises(VersionConflict):
        await theirs.commit(record("t1", version=3, game="theirs"), [event("t1", 3)], 2)
    assert await theirs.get("t1") == record("t1", version=3, game="mine")
    for s in (mine, theirs):
        await s.close()


@run_async
async def test_sqlite_move_commits_write_only_what_changed(tmp_path: Path) -> None:
    """A commit that changes only the state and version (a move) takes a shorter UPDATE; the
    record on disk is still exactly the committed one, before and after a seat change."""
    path = tmp_path / "db.sqlite"
    store = SQLiteStore(path)
    rec = await seed_table(store)
    current = await store.get("t1")
    assert current is not None
    moved = current.with_(version=2, state=b"after a move")
    await store.commit(moved, [event("t1", 2)], 1)
    seated = moved.with_(version=3, seats=(Seat(occupied=True, name="z"),) * 3)
    await store.commit(seated, [event("t1", 3)], 2)
    moved_again = seated.with_(version=4, state=b"again")
    await store.commit(moved_again, [event("t1", 4)], 3)
    fresh = SQLiteStore(path)
    assert (
        await fresh.get("t1")
        == moved_again
        == rec.with_(version=4, state=b"again", seats=(Seat(occupied=True, name="z"),) * 3)
    )
    await fresh.close()
    await store.close()


@run_async
async def test_sqlite_waits_for_another_process_lock_without_blocking_the_loop(tmp_path: Path) -> None:
    """While another connection holds the write lock, a commit waits (the event loop keeps
    running), lands once the lock is free, and gives up after the busy timeout."""
    path = tmp_path / "db.sqlite"
    store = SQLiteStore(path, busy_timeout_ms=2000)
    await seed_table(store)
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    commit = asyncio.ensure_future(store.commit(record("t1", version=2), [event("t1", 2)], 1))
    ticks = 0
    for _ in range(20):  # the loop is free while the commit waits
        await asyncio.sleep(0.01)
        ticks += 1
    assert not commit.done() and ticks == 20
    other.execute("COMMIT")
    await asyncio.wait_for(commit, 2)
    assert (await store.get("t1")).version == 2  # type: ignore[union-attr]

    impatient = SQLiteStore(path, busy_timeout_ms=100)
    other.execute("BEGIN IMMEDIATE")
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        await impatient.commit(record("t1", version=3), [event("t1", 3)], 2)
    other.execute("ROLLBACK")
    other.close()
    assert (await impatient.get("t1")).version == 2  # type: ignore[union-attr]
    for s in (store, impatient):
        await s.close()


@run_async
async def test_sqlite_a_cancelled_caller_leaves_a_consistent_store(tmp_path: Path) -> None:
    """A caller cancelled while its write is queued (the writer waits for another process's
    lock): the write still commits or fails as a whole, and the cache agrees with the file."""
    path = tmp_path / "db.sqlite"
    store = SQLiteStore(path)
    await seed_table(store)
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    task = asyncio.ensure_future(store.commit(record("t1", version=2), [event("t1", 2)], 1))
    await asyncio.sleep(0.01)  # queued behind the lock
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    other.execute("ROLLBACK")
    other.close()
    for _ in range(100):
        await asyncio.sleep(0.01)
        if (await store.get("t1")).version == 2:  # type: ignore[union-attr]
            break
    assert (await store.get("t1")).version == 2  # type: ignore[union-attr]
    with pytest.raises(VersionConflict):
        await store.commit(record("t1", version=2), [event("t1", 2)], 1)
    await store.close()
    again = SQLiteStore(path)
    assert (await again.get("t1")).version == 2  # type: ignore[union-attr]
    await again.close()


@run_async
async def test_sqlite_checkpoints_keep_the_wal_small(tmp_path: Path) -> None:
    """The WAL is copied into the database (on the worker thread, between two batches) as
    writes go on, so that it starts over instead of growing with every write."""
    path = tmp_path / "db.sqlite"
    wal = Path(f"{path}-wal")
    store = SQLiteStore(path)
    await seed_table(store)
    version = 1

    async def writes(n: int) -> None:
        nonlocal version
        for _ in range(n):
            version += 1
            await store.commit(
                record("t1", version=version), [event("t1", version)], version - 1
            )

    await writes(CHECKPOINT_AFTER - 2)
    before_any = wal.stat().st_size
    await writes(4 * CHECKPOINT_AFTER)
    assert wal.stat().st_size < 1.5 * before_any  # not 5 times as much: it started over
    await store.close()
    with closing(sqlite3.connect(path)) as raw:
        count = raw.execute("SELECT count(*) FROM events").fetchone()[0]
    assert count == version


# --- Redis: waiting for other replicas' writes, seat races, expiry, URLs -------------------


@run_async
async def test_redis_wait_for_change_hears_another_store(redis_url: str) -> None:
    """A waiter on one store (one replica) is woken by a commit through another, and only by
    one on its own table."""
    a, b = RedisStore(redis_url), RedisStore(redis_url)
    await seed_table(a)
    await seed_table(a, "t2")
    # already past: it returns at once, not after its hour
    await woken(b.wait_for_change("t1", 0, HOUR), "a change already in the log")
    # nothing new: it returns after its own timeout
    await asyncio.wait_for(b.wait_for_change("t1", 1, 0.05), 10)

    # two waiters on different tables share the reader: each wakes on its own table's write
    for version, (first, second) in ((1, ("t1", "t2")), (2, ("t2", "t1"))):
        waiters = {t: asyncio.ensure_future(b.wait_for_change(t, version, HOUR))
                   for t in (first, second)}
        await reader_covers(b, {first: version, second: version})
        await a.commit(record(first, version=version + 1), [event(first, version + 1)],
                       version)
        await woken(waiters[first], f"the waiter on {first}")
        # the other one is still waiting: the reader's next XREAD still reads for it
        await reader_covers(b, {second: version})
        assert not waiters[second].done()
        await a.commit(record(second, version=version + 1), [event(second, version + 1)],
                       version)
        await woken(waiters[second], f"the waiter on {second}")
    await a.close()
    await b.close()


@run_async
async def test_redis_cancelled_waiter_ends_at_once(redis_url: str) -> None:
    """A waiter cancelled at any point of its start (while it asks the reader to widen its
    XREAD, too) ends with CancelledError instead of waiting out its hour: a StreamTable whose
    client left must not go on polling. Each waiter is cancelled after a different number of
    loop turns, so the cancellation lands before, during and after the reader's unblock."""
    a, b = RedisStore(redis_url), RedisStore(redis_url)
    for t in ("t1", "t2"):
        await seed_table(a, t)
    keeper = asyncio.ensure_future(b.wait_for_change("t1", 1, HOUR))
    await reader_covers(b, {"t1": 1})
    for turns in range(40):
        waiter = asyncio.ensure_future(b.wait_for_change("t2", 1, HOUR))
        for _ in range(turns):
            await asyncio.sleep(0)
        waiter.cancel()
        done, _ = await asyncio.wait({waiter}, timeout=10.0)  # bounds a hang only
        assert done, f"cancelled after {turns} loop turns, the waiter kept waiting"
        assert waiter.cancelled(), f"after {turns} turns: {waiter!r}"
    # the reader still serves the waiter that stayed, and nothing was left behind
    await reader_covers(b, {"t1": 1})
    await a.commit(record("t1", version=2), [event("t1", 2)], 1)
    await woken(keeper, "the waiter that stayed")
    assert "t2" not in b.reader_of("t2")._waiters
    await a.close()
    await b.close()


def test_redis_racing_seat_claims_one_wins(redis_url: str) -> None:
    """Bots on two replicas claim the same bot seat at once: exactly one gets it."""
    from service.tables import SeatRequest, TableError, Tables

    async def go() -> None:
        stores = [RedisStore(redis_url) for _ in range(2)]
        replicas = [Tables(s) for s in stores]
        for _ in range(10):
            rec = await replicas[0].create(
                "dou_dizhu",
                3,
                {},
                [SeatRequest(SeatKind.BOT, "random"), SeatRequest(), SeatRequest()],
            )
            outcomes = await asyncio.gather(
                *(r.join(rec.table_id, 0, f"bot{i}", True) for i, r in enumerate(replicas)),
                return_exceptions=True,
            )
            won = [o for o in outcomes if not isinstance(o, BaseException)]
            lost = [o for o in outcomes if isinstance(o, TableError)]
            assert len(won) == 1 and len(lost) == 1, outcomes
            final = await stores[1].get(rec.table_id)
            assert final is not None and final.version == 2 and final.seats[0].occupied
            assert [e.version for e in await stores[1].events_after(rec.table_id, 0)] == [1, 2]
        for s in stores:
            await s.close()

    run(go())


@run_async
async def test_redis_finished_tables_expire(redis_url: str) -> None:
    store = RedisStore(redis_url + "&retention=1")
    await seed_table(store)
    await seed_table(store, "t2")
    over = record("t1", version=2, status=Status.FINISHED)
    await store.commit(over, [event("t1", 2, EventKind.END, status=Status.FINISHED)], 1)
    conn = store._redis
    assert 0 < await conn.ttl(store._record_key("t1")) <= 1
    assert 0 < await conn.ttl(store._stream_key("t1")) <= 1
    assert await conn.ttl(store._record_key("t2")) == -1  # still playing: kept
    assert [r.table_id for r in await store.list(TableFilter(status=Status.FINISHED))] == ["t1"]
    # a table closed as abandoned expires alike, and leaves the abandonment round's index
    await seed_table(store, "t3")
    idle = store._bucket_keys("t3").idle[Status.WAITING]
    assert await conn.zscore(idle, "t3") is not None
    closed = record("t3", version=2, status=Status.ABANDONED)
    end = event("t3", 2, EventKind.END, status=Status.ABANDONED, abandoned=True)
    await store.commit(closed, [end], 1)
    assert 0 < await conn.ttl(store._record_key("t3")) <= 1
    assert 0 < await conn.ttl(store._stream_key("t3")) <= 1
    assert await conn.zscore(idle, "t3") is None
    await asyncio.sleep(1.2)
    assert await store.get("t1") is None
    assert await store.events_after("t1", 0) == []
    assert [r.table_id for r in await store.list(TableFilter())] == ["t2"]
    assert await store.get("t3") is None
    # the listing dropped the expired id from every index
    b = store._bucket_keys("t1")
    for key in (b.created, b.status(Status.FINISHED), b.game("dou_dizhu")):
        assert await conn.zscore(key, "t1") is None
    await store.close()


def test_redis_urls() -> None:
    from service.store_redis import parse_url

    assert parse_url("redis://h:1/2") == ("redis://h:1/2", "croupier:", 0.0)
    assert parse_url("redis://h:1/2?prefix=a:&retention=60&socket_timeout=5") == (
        "redis://h:1/2?socket_timeout=5",
        "a:",
        60.0,
    )
    with pytest.raises(ValueError, match="retention"):
        parse_url("redis://h/0?retention=soon")
    # a socket path keeps its //, which redis-py's own parser (8.x) insists on
    url, prefix, _ = parse_url("unix:///run/redis.sock?db=3&prefix=s:")
    assert (url, prefix) == ("unix:///run/redis.sock?db=3", "s:")
    from redis.connection import parse_url as redis_parse_url

    assert redis_parse_url(url)["path"] == "/run/redis.sock"
    assert redis_parse_url(parse_url("rediss://:pw@h:1/0?prefix=p:")[0])["password"] == "pw"
    store = open_store(f"{REDIS_URL}?prefix=x:")
    assert isinstance(store, RedisStore) and store.prefix == "x:"
    run(store.close())


@run_async
async def test_count_tables(make_store: Callable[[], Store]) -> None:
    store = make_store()
    assert await store.count_tables() == {}
    await seed_table(store, "a")
    await seed_table(store, "b")
    await store.create(record("c", game="other"), [event("c", 1)])
    await store.commit(record("b", version=2, status=Status.PLAYING), [event("b", 2)], 1)
    assert await store.count_tables() == {
        ("dou_dizhu", "waiting"): 1,
        ("dou_dizhu", "playing"): 1,
        ("other", "waiting"): 1,
    }
    await store.close()


def test_redis_unreachable_is_store_unavailable() -> None:
    """No Redis on the port: every call fails with StoreUnavailable (UNAVAILABLE to clients,
    which retry), not with an internal error."""
    from service.store import StoreUnavailable
    from tests.support import free_port

    async def go() -> None:
        store = RedisStore(f"redis://127.0.0.1:{free_port()}/0?socket_connect_timeout=1")
        with pytest.raises(StoreUnavailable):
            await store.get("t1")
        with pytest.raises(StoreUnavailable):
            await store.create(record("t1"), [event("t1", 1)])
        with pytest.raises(StoreUnavailable):
            await store.events_after("t1", 0)
        with pytest.raises(StoreUnavailable):
            await store.list(TableFilter())
        await store.close()

    run(go())


@run_async
async def test_presence_raises_seen_at_without_a_version_and_holds_off_closing(
    make_store: Callable[[], Store],
) -> None:
    """touch raises seen_at (never lowers it, never makes a version or an event); commits keep
    the later seen_at; a commit that requires nobody seen since a time is refused when
    someone was; watched open tables list by how long nobody was seen."""
    store = make_store()
    people = (Seat(occupied=True, name="ann"), Seat())
    rec = record("t1", seats=people, seen_at=100.0)
    await store.create(rec, [event("t1", 1, EventKind.CREATED)])
    bots = record("b1", seats=(Seat(kind=SeatKind.BOT), Seat(is_bot=True, occupied=True)),
                  seen_at=0.0)
    await store.create(bots, [event("b1", 1, EventKind.CREATED)])

    async def idle(before: float, **kw: Any) -> list[str]:
        flt = TableFilter(idle_before=before, **kw)
        return [r.table_id for r in await store.list(flt)]

    assert await idle(1000.0) == ["t1"]  # the bots' table is never watched
    assert await idle(1000.0, status=Status.WAITING) == ["t1"]
    assert await idle(1000.0, status=Status.PLAYING) == []
    assert await idle(100.0) == []  # seen at 100: not before it
    await store.touch("t1", 50.0)  # never lowered
    assert (await store.get("t1")).seen_at == 100.0  # type: ignore[union-attr]
    await store.touch("t1", 200.0)
    got = await store.get("t1")
    assert got is not None and got.seen_at == 200.0 and got.version == 1
    assert len(await store.events_after("t1", 0)) == 1
    assert await idle(150.0) == [] and await idle(250.0) == ["t1"]
    # a writer that read the record before the touch does not take the presence back
    await store.commit(rec.with_(version=2, status=Status.PLAYING,
                                 seats=(Seat(occupied=True), Seat(occupied=True))),
                       [event("t1", 2)], 1)
    got = await store.get("t1")
    assert got is not None and got.seen_at == 200.0 and got.status == Status.PLAYING
    assert await idle(250.0, status=Status.PLAYING) == ["t1"]
    assert await idle(250.0, status=Status.WAITING) == []
    # closing needs nobody seen since the cutoff: seen at 200, a cutoff of 150 is refused
    closing = got.with_(version=3, status=Status.ABANDONED)
    end = event("t1", 3, EventKind.END, status=Status.ABANDONED, abandoned=True)
    with pytest.raises(VersionConflict):
        await store.commit(closing, [end], 2, idle_before=150.0)
    assert (await store.get("t1")).version == 2  # type: ignore[union-attr]
    await store.commit(closing, [end], 2, idle_before=250.0)
    got = await store.get("t1")
    assert got is not None and got.status == Status.ABANDONED and got.version == 3
    assert (await store.events_after("t1", 2))[0] == end  # the flag survives the trip
    # a closed table takes no presence and is watched no more
    await store.touch("t1", 900.0)
    assert (await store.get("t1")).seen_at == 200.0  # type: ignore[union-attr]
    assert await idle(1000.0) == []
    await store.touch("missing", 900.0)  # nothing there: nothing happens
    # the lobby leaves closed-as-abandoned tables out when asked to
    ids = [r.table_id for r in await store.list(TableFilter(hide_abandoned=True))]
    assert ids == ["b1"]
    ids = [r.table_id for r in await store.list(TableFilter(status=Status.ABANDONED))]
    assert ids == ["t1"]
    await store.close()


def test_sqlite_adds_the_presence_columns_to_an_older_file(tmp_path: Path) -> None:
    """A file from before tables had a seed, a last-seen time and a watched flag opens with
    those columns added: its open tables count as seen at the upgrade, and are watched."""
    path = tmp_path / "old.sqlite"

    async def seed() -> None:
        store = SQLiteStore(path)
        await store.create(record("w", seats=(Seat(),)), [event("w", 1)])
        await store.create(record("f", seats=(Seat(),), status=Status.FINISHED), [event("f", 1)])
        await store.close()

    run(seed())
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("DROP INDEX tables_idle")
        for column in ("seed", "seen_at", "watched"):
            conn.execute(f"ALTER TABLE tables DROP COLUMN {column}")
        conn.commit()
    before = time.time()

    async def reopen() -> None:
        store = SQLiteStore(path)
        waiting, finished = await store.get("w"), await store.get("f")
        assert waiting is not None and finished is not None
        assert waiting.seen_at >= before and finished.seen_at == 0.0
        assert waiting.seed == ""
        assert [r.table_id for r in await store.list(TableFilter(idle_before=before))] == []
        later = TableFilter(idle_before=time.time() + 1)
        assert [r.table_id for r in await store.list(later)] == ["w"]
        await store.close()

    run(reopen())
