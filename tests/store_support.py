"""Store test helpers: records and events to write, the test Redis and its per-test key
prefixes, a held SQLite writer, and waits on Redis change notifications."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import uuid
from collections.abc import Awaitable
from typing import Any

import redis

from service.model import Event, EventKind, Seat, SeatKind, Status, TableRecord
from service.store import Store
from service.store_redis import RedisStore
from service.store_sqlite import SQLiteStore


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


REDIS_URL = os.environ.get("CROUPIER_TEST_REDIS", "redis://127.0.0.1:6379/0")


def redis_prefix() -> str:
    """A key prefix of its own per test, so parallel runs sharing one Redis never collide."""
    return f"croupier-test:{uuid.uuid4().hex}:"


def redis_cleanup(prefix: str) -> None:
    """Deletes every key under `prefix` (SCAN + DEL: never FLUSHDB on a shared Redis)."""
    conn = redis.Redis.from_url(REDIS_URL)
    try:
        keys = list(conn.scan_iter(match=f"{prefix}*", count=500))
        if keys:
            conn.delete(*keys)
    finally:
        conn.close()


# the Redis store's forms the contract runs on: a plain Redis as deployments have it, the same
# with its tables spread over buckets (the merged listings without a cluster), a Redis Cluster
REDIS_KINDS = ("redis", "redis-buckets", "redis-cluster")


def redis_kind_url(request: Any, kind: str) -> tuple[str, str]:
    """(store URL with a fresh prefix, the prefix) for one of REDIS_KINDS; the cluster one
    from the session's private cluster (its keys go with it: no cleanup needed there)."""
    prefix = redis_prefix()
    if kind == "redis":
        return f"{REDIS_URL}?prefix={prefix}", prefix
    if kind == "redis-buckets":
        return f"{REDIS_URL}?prefix={prefix}&buckets=4", prefix
    cluster = request.getfixturevalue("redis_cluster")
    return f"{cluster.url}?prefix={prefix}", prefix


async def seed_table(store: Store, table_id: str = "t1") -> TableRecord:
    rec = record(table_id)
    await store.create(rec, [event(table_id, 1, EventKind.CREATED, seat=-1, move="")])
    return rec


class HeldWriter:
    """Another connection holding the write lock (as another process would), so that the
    store's writes queue up meanwhile and go in one transaction once it lets go. Records the
    sizes of the store's transactions."""

    def __init__(self, store: SQLiteStore) -> None:
        self.conn = sqlite3.connect(store.path, isolation_level=None)
        self.batches: list[int] = []
        write = store._write

        def counting(batch: list[Any]) -> list[Any]:
            waiting = write(batch)
            if len(waiting) < len(batch):
                self.batches.append(len(batch))
            return waiting

        store._write = counting  # type: ignore[method-assign]

    def hold(self) -> None:
        self.conn.execute("BEGIN IMMEDIATE")

    def release(self) -> None:
        self.conn.execute("ROLLBACK")


# a waiter's own timeout that no test waits out: what returns sooner was woken by a change
HOUR = 3600.0


async def woken(waiter: Awaitable[None], what: str, guard: float = 10.0) -> None:
    """Awaits a wait_for_change given HOUR: it must return, woken by a change (`guard` only
    bounds a hang; it is no measure of promptness)."""
    task = asyncio.ensure_future(waiter)
    done, _ = await asyncio.wait({task}, timeout=guard)
    if not done:
        task.cancel()
        raise AssertionError(f"{what}: not woken")
    task.result()


async def reader_covers(store: RedisStore, waiting: dict[str, int], guard: float = 10.0) -> None:
    """Returns once the store's blocked XREAD reads every table of `waiting` after that
    version: their waiters are pending, and a write now reaches them only through the reader.
    (`guard` only bounds a hang.)"""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + guard
    while any(store.reader_of(t)._reading.get(t) != v for t, v in waiting.items()):
        assert loop.time() < deadline, f"the reader does not read for {waiting}"
        await asyncio.sleep(0.005)
