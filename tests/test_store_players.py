"""Every backend's index from players to their tables and its presence maps (Store's
player_tables, mark_present, presence), with the same test functions."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import redis

from service.model import EventKind, Seat, Status, TableRecord
from service.store import Store, VersionConflict
from service.store_memory import MemoryStore
from service.store_redis import RedisStore
from service.store_sqlite import SQLiteStore
from tests.store_support import (
    REDIS_KINDS,
    REDIS_URL,
    event,
    record,
    redis_cleanup,
    redis_kind_url,
    redis_prefix,
)
from tests.support import run_async


@pytest.fixture(params=["memory", "sqlite", *REDIS_KINDS])
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[], Store]]:
    """A factory: the stores it makes share one backing."""
    if request.param == "memory":
        shared = MemoryStore()
        yield lambda: shared
    elif request.param in REDIS_KINDS:
        url, prefix = redis_kind_url(request, request.param)
        yield lambda: RedisStore(url)
        redis_cleanup(prefix)
    else:
        yield lambda: SQLiteStore(tmp_path / "croupier.db")


def seats(*players: str) -> tuple[Seat, ...]:
    """One seat per entry: a player's ("" : a person without an identity), taken."""
    return tuple(Seat(occupied=True, name=p or "anon", player=p) for p in players)


async def put(store: Store, table_id: str, created: float, *players: str, game: str = "dou_dizhu"
              ) -> TableRecord:
    rec = record(table_id, created_at=created, seats=seats(*players), game=game)
    await store.create(rec, [event(table_id, 1, EventKind.CREATED, seat=-1, move="")])
    return rec


async def ids(store: Store, player: str, **kw: object) -> list[str]:
    return [r.table_id for r in await store.player_tables(player, **kw)]  # type: ignore[arg-type]


async def finish(store: Store, rec: TableRecord, at: float) -> TableRecord:
    done = rec.with_(version=rec.version + 1, status=Status.FINISHED)
    end = event(rec.table_id, done.version, EventKind.END, time=at, status=Status.FINISHED)
    await store.commit(done, [end], rec.version)
    return done


@run_async
async def test_a_players_tables_newest_first_paged_and_no_one_elses(
    make_store: Callable[[], Store],
) -> None:
    store = make_store()
    await put(store, "a", 100.0, "p1", "p2", "")
    await put(store, "b", 200.0, "p2", "p1", "")
    await put(store, "c", 300.0, "p2", "", "")
    await put(store, "d", 200.0, "p1", "", "")  # same created_at as b: by id, descending
    await put(store, "e", 400.0, "", "", "")
    await put(store, "f", 500.0, "p1", "", "", game="dos")
    assert await ids(store, "p1") == ["f", "d", "b", "a"]
    assert await ids(store, "p2") == ["c", "b", "a"]
    assert await ids(store, "p3") == []
    assert await ids(store, "p1", game="dou_dizhu") == ["d", "b", "a"]
    assert await ids(store, "p1", limit=2) == ["f", "d"]
    assert await ids(store, "p1", limit=2, after=(200.0, "d")) == ["b", "a"]
    assert await ids(store, "p1", after=(200.0, "b")) == ["a"]
    # another store on the same backing (another process, another replica) sees the same
    other = make_store()
    assert await ids(other, "p1") == ["f", "d", "b", "a"]
    if other is not store:
        await other.close()
    await store.close()


@run_async
async def test_closed_tables_listed_only_when_closed_since_the_cutoff(
    make_store: Callable[[], Store],
) -> None:
    store = make_store()
    a = await put(store, "a", 100.0, "p1", "", "")
    b = await put(store, "b", 200.0, "p1", "", "")
    await put(store, "c", 300.0, "p1", "", "")
    await finish(store, a, 5000.0)
    abandoned = b.with_(version=2, status=Status.ABANDONED)
    end = event("b", 2, EventKind.END, time=7000.0, status=Status.ABANDONED, abandoned=True)
    await store.commit(abandoned, [end], 1)
    assert await ids(store, "p1") == ["c"]
    assert await ids(store, "p1", closed_since=4000.0) == ["c", "b", "a"]
    assert await ids(store, "p1", closed_since=6000.0) == ["c", "b"]
    assert await ids(store, "p1", closed_since=8000.0) == ["c"]
    assert await ids(store, "p1", closed_since=4000.0, after=(300.0, "c")) == ["b", "a"]
    assert await ids(store, "p1", closed_since=4000.0, limit=1, after=(200.0, "b")) == ["a"]
    await store.close()


@run_async
async def test_a_seat_given_up_is_no_longer_the_players_and_moves_keep_it(
    make_store: Callable[[], Store],
) -> None:
    store = make_store()
    rec = await put(store, "a", 100.0, "p1", "p2", "")
    moved = rec.with_(version=2, state=b"moved")  # a move: same seats, same status
    await store.commit(moved, [event("a", 2)], 1)
    moved = moved.with_(version=3, state=b"again")
    await store.commit(moved, [event("a", 3)], 2)
    assert await ids(store, "p1") == ["a"] and await ids(store, "p2") == ["a"]
    left = moved.with_(version=4, seats=(Seat(), *moved.seats[1:]))
    await store.commit(left, [event("a", 4, EventKind.LEFT)], 3)
    assert await ids(store, "p1") == [] and await ids(store, "p2") == ["a"]
    # back at it: the player's again
    back = left.with_(version=5, seats=moved.seats)
    await store.commit(back, [event("a", 5, EventKind.JOINED)], 4)
    assert await ids(store, "p1") == ["a"]
    # it ends while p1 is away from it: theirs no more, even among the finished ones
    gone = back.with_(version=6, seats=(Seat(), *back.seats[1:]))
    await store.commit(gone, [event("a", 6, EventKind.LEFT)], 5)
    await finish(store, gone, 900.0)
    assert await ids(store, "p1", closed_since=0.0) == []
    assert await ids(store, "p2", closed_since=0.0) == ["a"]
    await store.close()


@run_async
async def test_a_refused_write_indexes_nobody(make_store: Callable[[], Store]) -> None:
    store = make_store()
    rec = await put(store, "a", 100.0, "p1", "", "")
    await store.commit(rec.with_(version=2, state=b"moved"), [event("a", 2)], 1)
    taken = rec.with_(version=2, seats=seats("p1", "p9", ""))  # written from version 1: stale
    with pytest.raises(VersionConflict):
        await store.commit(taken, [event("a", 2, EventKind.JOINED)], 1)
    assert await ids(store, "p9") == []
    await store.commit(taken.with_(version=3), [event("a", 3, EventKind.JOINED)], 2)
    assert await ids(store, "p9") == ["a"]
    await store.close()


@run_async
async def test_pages_past_many_tables_given_up(make_store: Callable[[], Store]) -> None:
    """More entries than a backend reads per round, most of them seats given up since: the
    listing reads on until its page is full, and pages cover every table once."""
    store = make_store()
    kept = []
    for i in range(130):
        rec = await put(store, f"t{i:03d}", 1000.0 + i, "p1", "", "")
        if i % 5:
            left = rec.with_(version=2, seats=(Seat(), *rec.seats[1:]))
            await store.commit(left, [event(rec.table_id, 2, EventKind.LEFT)], 1)
        else:
            kept.append(rec.table_id)
    kept.reverse()
    assert await ids(store, "p1", limit=20) == kept[:20]
    pages: list[str] = []
    after = None
    while True:
        page = await store.player_tables("p1", after=after, limit=7)
        if not page:
            break
        pages += [r.table_id for r in page]
        after = (page[-1].created_at, page[-1].table_id)
    assert pages == kept
    await store.close()


@run_async
async def test_presence_maps_only_rise_and_are_shared(make_store: Callable[[], Store]) -> None:
    store = make_store()
    await put(store, "a", 100.0, "p1", "", "")
    assert await store.presence("a") == {}
    await store.mark_present("a", 0, 50.0)
    await store.mark_present("a", 2, 70.0)
    await store.mark_present("a", 0, 40.0)  # never lowered
    assert await store.presence("a") == {0: 50.0, 2: 70.0}
    other = make_store()
    await other.mark_present("a", 0, 60.5)
    assert await store.presence("a") == {0: 60.5, 2: 70.0}
    assert await other.presence("b") == {}
    # no version, no event
    got = await store.get("a")
    assert got is not None and got.version == 1
    assert len(await store.events_after("a", 0)) == 1
    if other is not store:
        await other.close()
    await store.close()


@run_async
async def test_redis_keys_carry_the_prefix_and_expire() -> None:
    prefix = redis_prefix()
    store = RedisStore(f"{REDIS_URL}?prefix={prefix}&retention=60")
    raw = redis.Redis.from_url(REDIS_URL)
    try:
        rec = await put(store, "a", 100.0, "p1", "", "")
        await store.mark_present("a", 0, 10.0)
        open_key, closed_key = store.player_keys("p1", store._table_base("a"))
        assert open_key.startswith(prefix) and "{p1}" in open_key
        assert raw.zscore(open_key, "a") == 100.0
        assert 0 < raw.ttl(store.presence_key("a")) <= 86_400
        await finish(store, rec, 5000.0)
        assert raw.zscore(open_key, "a") is None and raw.zscore(closed_key, "a") == 5000.0
        # a later closing drops entries older than the retention (their records expired)
        b = await put(store, "b", 200.0, "p1", "", "")
        await finish(store, b, 5040.0)
        assert raw.zscore(closed_key, "a") is not None
        c = await put(store, "c", 300.0, "p1", "", "")
        await finish(store, c, 5075.0)
        assert raw.zscore(closed_key, "a") is None
        assert await ids(store, "p1", closed_since=0.0) == ["c", "b"]
    finally:
        raw.close()
        await store.close()
        redis_cleanup(prefix)


@run_async
async def test_redis_drops_entries_of_tables_closed_without_the_player() -> None:
    prefix = redis_prefix()
    store = RedisStore(f"{REDIS_URL}?prefix={prefix}")
    raw = redis.Redis.from_url(REDIS_URL)
    try:
        rec = await put(store, "a", 100.0, "p1", "p2", "")
        left = rec.with_(version=2, seats=(Seat(), *rec.seats[1:]))
        await store.commit(left, [event("a", 2, EventKind.LEFT)], 1)
        await finish(store, left, 500.0)
        assert raw.zscore(store.player_keys("p1", store._table_base("a"))[0], "a") == 100.0
        assert await ids(store, "p1", closed_since=0.0) == []
        assert raw.zscore(store.player_keys("p1", store._table_base("a"))[0], "a") is None
        assert await ids(store, "p2", closed_since=0.0) == ["a"]
    finally:
        raw.close()
        await store.close()
        redis_cleanup(prefix)
