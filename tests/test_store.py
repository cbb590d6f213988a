"""The store contract, run against every backend with the same test functions."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from service.store import (
    Event,
    EventKind,
    Seat,
    SeatKind,
    Status,
    Store,
    TableExists,
    TableFilter,
    TableMissing,
    TableRecord,
    VersionConflict,
    open_store,
)
from service.store_memory import MemoryStore
from service.store_sqlite import SQLiteStore

T = TypeVar("T")


def run(coro: Awaitable[T]) -> T:
    async def main() -> T:
        return await coro

    return asyncio.run(main())


def record(table_id: str = "t1", version: int = 1, **kw: Any) -> TableRecord:
    base: dict[str, Any] = dict(
        table_id=table_id,
        game="dou_dizhu",
        players=3,
        options={"deals": 2},
        seats=(Seat(), Seat(kind=SeatKind.BOT, bot_level="random"), Seat()),
        status=Status.WAITING,
        version=version,
        state=b"state-%d" % version,
        created_at=1000.0,
    )
    base.update(kw)
    return TableRecord(**base)


def event(table_id: str, version: int, kind: EventKind = EventKind.MOVE, **kw: Any) -> Event:
    base: dict[str, Any] = dict(
        table_id=table_id,
        version=version,
        kind=kind,
        seat=0,
        move="pass",
        name="ann",
        time=1000.0 + version,
        state=b"state-%d" % version,
        seats=(Seat(occupied=True, name="ann", token_hash="ab" * 32, joined_at=3.5),),
        status=Status.PLAYING,
        deal_over=version % 2 == 0,
    )
    base.update(kw)
    return Event(**base)


def new_memory(tmp: Path) -> Store:
    return MemoryStore()


def new_sqlite(tmp: Path) -> Store:
    return SQLiteStore(tmp / "nested" / "dir" / "croupier.db")


BACKENDS: dict[str, Callable[[Path], Store]] = {"memory": new_memory, "sqlite": new_sqlite}


@pytest.fixture(params=sorted(BACKENDS))
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[], Store]]:
    """A factory: stores it makes share one backing (the same SQLite file, the same memory)."""
    if request.param == "memory":
        shared = MemoryStore()
        yield lambda: shared
    else:
        yield lambda: BACKENDS["sqlite"](tmp_path)


async def _seed(store: Store, table_id: str = "t1") -> TableRecord:
    rec = record(table_id)
    await store.create(rec, [event(table_id, 1, EventKind.CREATED, seat=-1, move="")])
    return rec


def test_create_get_round_trip(make_store: Callable[[], Store]) -> None:
    async def go() -> None:
        store = make_store()
        rec = await _seed(store)
        assert await store.get("t1") == rec
        assert await store.get("nope") is None
        events = await store.events_after("t1", 0)
        assert events == [event("t1", 1, EventKind.CREATED, seat=-1, move="")]
        await store.close()

    run(go())


def test_create_twice_is_refused(make_store: Callable[[], Store]) -> None:
    async def go() -> None:
        store = make_store()
        rec = await _seed(store)
        with pytest.raises(TableExists):
            await store.create(record("t1", game="other"), [event("t1", 1)])
        assert await store.get("t1") == rec
        assert len(await store.events_after("t1", 0)) == 1
        await store.close()

    run(go())


def test_commit_advances_version(make_store: Callable[[], Store]) -> None:
    async def go() -> None:
        store = make_store()
        await _seed(store)
        new = record("t1", version=3, status=Status.PLAYING)
        await store.commit(new, [event("t1", 2), event("t1", 3, EventKind.END)], 1)
        assert await store.get("t1") == new
        assert [e.version for e in await store.events_after("t1", 0)] == [1, 2, 3]
        assert [e.kind for e in await store.events_after("t1", 1)] == [EventKind.MOVE, EventKind.END]
        await store.close()

    run(go())


def test_stale_commit_is_refused_and_changes_nothing(make_store: Callable[[], Store]) -> None:
    async def go() -> None:
        store = make_store()
        await _seed(store)
        v2 = record("t1", version=2)
        await store.commit(v2, [event("t1", 2)], 1)
        with pytest.raises(VersionConflict):
            await store.commit(record("t1", version=2, game="x"), [event("t1", 2, name="late")], 1)
        assert await store.get("t1") == v2
        assert [e.name for e in await store.events_after("t1", 0)] == ["ann", "ann"]
        await store.close()

    run(go())


def test_commit_to_missing_table(make_store: Callable[[], Store]) -> None:
    async def go() -> None:
        store = make_store()
        with pytest.raises(TableMissing):
            await store.commit(record("ghost", version=2), [event("ghost", 2)], 1)
        await store.close()

    run(go())


def test_commit_must_continue_the_log(make_store: Callable[[], Store]) -> None:
    async def go() -> None:
        store = make_store()
        await _seed(store)
        with pytest.raises(ValueError):  # a gap
            await store.commit(record("t1", version=3), [event("t1", 3)], 1)
        with pytest.raises(ValueError):  # record and last event disagree
            await store.commit(record("t1", version=5), [event("t1", 2)], 1)
        with pytest.raises(ValueError):  # nothing to commit
            await store.commit(record("t1", version=1), [], 1)
        assert (await store.get("t1")).version == 1  # type: ignore[union-attr]
        await store.close()

    run(go())


def test_events_after_pages(make_store: Callable[[], Store]) -> None:
    async def go() -> None:
        store = make_store()
        await _seed(store)
        for v in range(2, 11):
            await store.commit(record("t1", version=v), [event("t1", v)], v - 1)
        assert [e.version for e in await store.events_after("t1", 4, limit=3)] == [5, 6, 7]
        assert [e.version for e in await store.events_after("t1", 9)] == [10]
        assert await store.events_after("t1", 10) == []
        assert await store.events_after("nope", 0) == []
        got = (await store.events_after("t1", 7, limit=1))[0]
        assert got == event("t1", 8)  # every field survives the round trip
        await store.close()

    run(go())


def test_list_filters(make_store: Callable[[], Store]) -> None:
    async def go() -> None:
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
            rec = record(tid, game=game, status=status, seats=seats, created_at=created,
                         fill_with_bots_after_seconds=fill, fill_level="random" if fill else "")
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
        assert await ids(bot_open_before=100.0) == ["d", "b"]
        assert await ids(fill_due_before=100.0) == ["b"]
        assert await ids(fill_due_before=24.9) == []
        # a change of seats moves a table in and out of the bot filter
        b = await store.get("b")
        assert b is not None
        taken = b.with_(seats=(Seat(occupied=True), Seat(occupied=True)), version=2,
                        status=Status.PLAYING)
        await store.commit(taken, [event("b", 2)], 1)
        assert await ids(bot_open_before=100.0) == ["d"]
        assert await ids(fill_due_before=100.0) == []
        await store.close()

    run(go())


def test_concurrent_writers_lose_no_update(make_store: Callable[[], Store]) -> None:
    """Writers race read-modify-write loops, retrying on conflict: every increment lands once,
    the log has no gap and no duplicate. SQLite writers use separate connections."""
    writers, increments = 6, 15

    async def go() -> None:
        stores = [make_store() for _ in range(3)]
        await _seed(stores[0])
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


def test_sqlite_survives_reopen(tmp_path: Path) -> None:
    async def go() -> None:
        path = tmp_path / "db.sqlite"
        store = SQLiteStore(path)
        await _seed(store)
        await store.commit(record("t1", version=2), [event("t1", 2)], 1)
        await store.close()
        again = SQLiteStore(path)
        assert (await again.get("t1")) == record("t1", version=2)
        assert len(await again.events_after("t1", 0)) == 2
        await again.close()

    run(go())


def test_open_store_urls(tmp_path: Path) -> None:
    assert isinstance(open_store("memory"), MemoryStore)
    store = open_store(f"sqlite:{tmp_path}/x/y.db")
    assert isinstance(store, SQLiteStore)
    assert (tmp_path / "x" / "y.db").exists()
    run(store.close())
    with pytest.raises(ValueError, match="unknown store"):
        open_store("postgres://nope")
