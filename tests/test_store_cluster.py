"""The Redis store on a Redis Cluster of its own (three primaries, a replica each).

A soak: tables spread over buckets land on every primary; writers play them while one
primary is killed (SIGKILL), its replica takes over and the killed node rejoins as a replica;
afterwards every acknowledged write is
there (the store WAITs for a replica before it acknowledges), the listings are complete, a
waiter on the failed shard's stream is woken again, and play goes on. Then real `croupier
serve` replicas on the cluster URL: tables created, played and listed through them, a
spectator on the other replica following by its stream reader. And the parts beside the
tables (rate limits, stream places, the guest key) and a bucket's reader widening its XREAD.
"""

from __future__ import annotations

import asyncio
import random
import threading
from collections.abc import Awaitable, Callable, Iterator
from functools import partial
from pathlib import Path
from typing import TypeVar

import pytest
from croupier.v1 import croupier_pb2 as pb

from service.model import EventKind, Status, TableFilter
from service.redis_connect import parse_store_url
from service.store import StoreUnavailable, VersionConflict, WriteUnconfirmed
from service.store_redis import RedisStore
from tests.cluster_support import PrivateCluster, cluster_fixture
from tests.store_support import HOUR, event, record, seed_table, woken
from tests.support import Client, ServerProcess, run_async

pytestmark = pytest.mark.e2e

T = TypeVar("T")
TABLES = 48
BUCKETS = 16


@pytest.fixture
def own_cluster() -> Iterator[PrivateCluster]:
    """A cluster of this test alone: it kills one of its nodes."""
    yield from cluster_fixture()


async def _retrying(what: Callable[[], Awaitable[T]], tries: int = 200) -> T:
    """Awaits a store call made by `what()` again while the store is unavailable (a failover
    under way), as a client retrying UNAVAILABLE does."""
    for _ in range(tries):
        try:
            return await what()
        except StoreUnavailable:
            await asyncio.sleep(0.1)
    raise AssertionError("the store stayed unavailable")


@run_async
async def test_tables_on_every_primary_survive_a_failover(own_cluster: PrivateCluster) -> None:
    url = f"{own_cluster.url}?prefix=soak:&buckets={BUCKETS}&wait_replicas=1&wait_timeout_ms=300"
    store, watcher = RedisStore(url), RedisStore(url)
    ids = [f"soak-{i}" for i in range(TABLES)]
    acked: dict[str, int] = {}  # table -> the highest version a commit of it was acked at
    try:
        for i, t in enumerate(ids):
            await store.create(record(t, created_at=1000.0 + i),
                               [event(t, 1, EventKind.CREATED, seat=-1, move="")])
            acked[t] = 1
        # the buckets, hence the tables, are on all three primaries
        homes = {t: own_cluster.primary_of(store._record_key(t)) for t in ids}
        assert set(homes.values()) == set(own_cluster.primaries())
        assert len(set(homes.values())) == 3
        victim = homes[ids[0]]
        on_victim = [t for t in ids if homes[t] == victim]

        stop = asyncio.Event()
        unavailable = 0

        async def play(tables: list[str]) -> None:
            nonlocal unavailable
            while not stop.is_set():
                for t in tables:
                    v = acked[t]
                    try:
                        await store.commit(record(t, version=v + 1, status=Status.PLAYING,
                                                  created_at=1000.0 + ids.index(t)),
                                           [event(t, v + 1)], v)
                        acked[t] = v + 1
                    except StoreUnavailable:
                        # the failover, or a write its primary's replica did not confirm (no
                        # replica while the victim is down): the next round retries it
                        unavailable += 1
                        await asyncio.sleep(0.05)
                    except VersionConflict:
                        # landed, though the reply was lost in the failover: on at the stored
                        # version (what was acked stays what the check counts)
                        stored = await _retrying(partial(store.get, t))
                        assert stored is not None
                        acked[t] = stored.version
                await asyncio.sleep(0)

        writers = [asyncio.ensure_future(play(ids[k::4])) for k in range(4)]
        await asyncio.sleep(1.0)
        # a waiter on the victim's shard, through another store's reader
        t0 = on_victim[0]
        promoted = await asyncio.to_thread(own_cluster.fail_over, victim)
        await asyncio.sleep(0.5)  # writers go on against the new primary, without a replica
        # the killed node comes back as the new primary's replica: writes wait on it again
        await asyncio.to_thread(own_cluster.rejoin, victim, promoted)
        await asyncio.sleep(0.5)
        stop.set()
        await asyncio.gather(*writers)

        waiter = asyncio.ensure_future(watcher.wait_for_change(t0, acked[t0], HOUR))
        await asyncio.sleep(0.3)
        v = acked[t0]
        await _retrying(lambda: store.commit(record(t0, version=v + 1, status=Status.PLAYING,
                                                    created_at=1000.0),
                                             [event(t0, v + 1)], v))
        acked[t0] = v + 1
        await woken(waiter, "a waiter on the failed-over shard")

        # every acknowledged write is there, events and all
        for t in ids:
            stored = await _retrying(partial(store.get, t))
            assert stored is not None and stored.version >= acked[t], t
            versions = [e.version for e in await store.events_after(t, 0)]
            assert versions == list(range(1, stored.version + 1)), t
        # the listings are complete: every bucket merged, newest first
        listed = await store.list(TableFilter(limit=1000))
        assert [r.table_id for r in listed] == list(reversed(ids))
        playing = await store.list(TableFilter(status=Status.PLAYING, limit=1000))
        assert {r.table_id for r in playing} == set(ids)
        counts = await store.count_tables()
        assert sum(counts.values()) == TABLES
        # play goes on, on every shard; a write that landed unconfirmed (its last try before
        # the writers stopped) is taken up as a client's retry would: once confirmed
        for t in ids:
            stored = await store.get(t)
            assert stored is not None
            if stored.version > acked[t]:
                await _retrying(partial(store.confirm, t))
            v = acked[t] = stored.version
            await store.commit(record(t, version=v + 1, status=Status.FINISHED,
                                      created_at=1000.0 + ids.index(t)),
                               [event(t, v + 1, EventKind.END, status=Status.FINISHED)], v)
        assert sum(n for (_, s), n in (await store.count_tables()).items()
                   if s == "finished") == TABLES
        # the writes went on while a shard failed over: most of them acked
        assert sum(acked.values()) > 3 * TABLES
        print(f"acked versions {sum(acked.values())}, unavailable answers {unavailable}")
    finally:
        await store.close()
        await watcher.close()


def test_servers_on_a_cluster_create_play_and_list(
    redis_cluster: PrivateCluster, tmp_path: Path
) -> None:
    url = f"{redis_cluster.url}?prefix=serve:&buckets={BUCKETS}"
    a = ServerProcess(db=tmp_path / "a.db", store=url).start()
    b = ServerProcess(db=tmp_path / "b.db", store=url).start()
    players = [Client(a.address) for _ in range(6)]  # a client holds one table's seats
    cb = Client(b.address)
    try:
        tables = [p.seated_table(options={"deals": 1}) for p in players]
        store = RedisStore(url)
        homes = {redis_cluster.primary_of(store._record_key(t)) for t in tables}
        assert len(homes) >= 2, "six tables over sixteen buckets all on one primary"
        # a spectator on B follows the first table, woken by its stream reader
        seen: list[int] = []

        def follow() -> None:
            for e in cb.stream(tables[0], timeout=60):
                seen.append(e.version)
                if e.kind == pb.EVENT_KIND_END:
                    return

        spectator = threading.Thread(target=follow, daemon=True)
        spectator.start()
        rng = random.Random(7)
        for p, t in zip(players, tables, strict=True):
            p.play_to_end(t, rng)
        spectator.join(60)
        final = cb.view(tables[0])
        assert seen == list(range(1, final.version + 1))
        lobby = cb.stub.ListTables(pb.ListTablesRequest(limit=100), timeout=10)
        assert {t.table_id for t in lobby.tables} >= set(tables)
        done = cb.stub.ListTables(
            pb.ListTablesRequest(status=pb.TABLE_STATUS_FINISHED, limit=100), timeout=10)
        assert {t.table_id for t in done.tables} == set(tables)
    finally:
        for c in [*players, cb]:
            c.close()
        a.stop()
        b.stop()


@run_async
async def test_what_lives_beside_the_tables_works_on_a_cluster(
    redis_cluster: PrivateCluster,
) -> None:
    """The move rate limit (the `limits` library's cluster storage), stream places and tables
    per client (SharedCounts) and the guest key, shared by two replicas through the cluster."""
    from limits.aio.strategies import MovingWindowRateLimiter

    from service.guest_keys import shared_in_redis
    from service.limits import SharedCounts, rate_item

    url = f"{redis_cluster.url}?prefix=beside:{random.getrandbits(32)}:"
    a, b = SharedCounts(url), SharedCounts(url)
    stores = [RedisStore(url), RedisStore(url)]
    try:
        rate = rate_item("3/minute")
        limiters = [MovingWindowRateLimiter(c.rate_storage()) for c in (a, b)]
        hits = [await limiters[i % 2].hit(rate, "seat-1") for i in range(5)]
        assert hits == [True, True, True, False, False]  # one window across both replicas
        assert await a.take_stream("t1", 1) is not None
        assert await b.take_stream("t1", 1) is None
        await a.add_table("client-1", "t1")
        assert await b.tables_of("client-1") == ["t1"]
        keys = [await shared_in_redis(s) for s in stores]
        assert keys[0].signing[0] == keys[1].signing[0]  # the same key, made once
    finally:
        for c in (a, b):
            await c.close()
        for s in stores:
            await s.close()


@run_async
async def test_a_bucket_reader_widens_its_xread_at_once(redis_cluster: PrivateCluster) -> None:
    """Two tables of one bucket share its reader: a waiter on the second one unblocks the
    XREAD in flight (CLIENT UNBLOCK sent to the bucket's node), which reads for both well
    before its block would have ended by itself."""
    from service.store_redis import READER_BLOCK_MS
    from tests.store_support import reader_covers, seed_table

    url = f"{redis_cluster.url}?prefix=widen:{random.getrandbits(32)}:"
    a, b = RedisStore(url), RedisStore(url)
    try:
        first = "x0"
        second = next(f"x{i}" for i in range(1, 1000) if b.bucket(f"x{i}") == b.bucket(first))
        for t in (first, second):
            await seed_table(a, t)
        keeper = asyncio.ensure_future(b.wait_for_change(first, 1, HOUR))
        await reader_covers(b, {first: 1})
        loop = asyncio.get_running_loop()
        started = loop.time()
        other = asyncio.ensure_future(b.wait_for_change(second, 1, HOUR))
        await reader_covers(b, {first: 1, second: 1})
        assert loop.time() - started < READER_BLOCK_MS / 1000 / 2
        assert b.reader_of(first) is b.reader_of(second)
        await a.commit(record(second, version=2), [event(second, 2)], 1)
        await woken(other, "the waiter on the second table")
        assert not keeper.done()
        keeper.cancel()
    finally:
        await a.close()
        await b.close()


@run_async
async def test_writes_wait_for_the_replica_of_their_slot(redis_cluster: PrivateCluster) -> None:
    """The one WAIT setting on a cluster: WAIT goes to the primary of the table's slot, after
    the script on the same connection. With wait_replicas=1 (each primary has one replica)
    writes and `confirm` are acknowledged and the replica holds the record; asked for two, a
    write lands on its primary yet fails WriteUnconfirmed (UNAVAILABLE), never applied twice,
    and `confirm` fails the same way until enough replicas hold it."""
    base = f"{redis_cluster.url}?prefix=ack:{random.getrandbits(32)}:&buckets={BUCKETS}"
    one = RedisStore(f"{base}&wait_replicas=1&wait_timeout_ms=2000")
    two = RedisStore(f"{base}&wait_replicas=2&wait_timeout_ms=100")
    try:
        ids = [f"ack-{i}" for i in range(6)]
        for t in ids:
            await seed_table(one, t)
            await one.confirm(t)
        homes = {t: redis_cluster.primary_of(one._record_key(t)) for t in ids}
        assert len(set(homes.values())) >= 2, "six tables over sixteen buckets on one primary"
        for t, primary in homes.items():  # the replica of the table's primary holds it
            with redis_cluster.conn(redis_cluster.replica_of(primary)) as replica:
                replica.execute_command("READONLY")  # a replica answers reads of its slots
                assert replica.hget(one._record_key(t), "version") == b"1", t

        t = ids[0]
        with pytest.raises(WriteUnconfirmed, match="0 of the 2|1 of the 2"):
            await two.commit(record(t, version=2, status=Status.PLAYING), [event(t, 2)], 1)
        stored = await two.get(t)
        assert stored is not None and stored.version == 2  # on the primary, not acknowledged
        with pytest.raises(VersionConflict):  # a second write at the old version is refused
            await two.commit(record(t, version=2, status=Status.PLAYING), [event(t, 2)], 1)
        with pytest.raises(WriteUnconfirmed):
            await two.confirm(t)
        await one.confirm(t)  # the one replica there is holds it
        with pytest.raises(WriteUnconfirmed):  # a new table too: written, not acknowledged
            await seed_table(two, "ack-new")
        assert await one.get("ack-new") is not None
    finally:
        await one.close()
        await two.close()


def test_cluster_urls_take_the_one_wait_setting() -> None:
    parsed = parse_store_url(
        "redis+cluster://:pw@n1:7000,n2:7001/?prefix=p:&wait_replicas=1&wait_timeout_ms=800")
    assert parsed.cluster and not parsed.sentinel and parsed.buckets == 16
    assert (parsed.ack.replicas, parsed.ack.timeout_ms) == (1, 800)
    assert "wait" not in parsed.url and "prefix" not in parsed.url
    assert parse_store_url("redis://h/0?buckets=4").buckets == 4
    assert parse_store_url("redis://h/0").buckets == 1
    # the names before the one setting are refused, not silently ignored
    with pytest.raises(ValueError, match="unknown setting 'wait'"):
        parse_store_url("redis+cluster://n1:7000/?wait=1&wait_ms=500")
    with pytest.raises(ValueError, match="buckets must be a whole number"):
        parse_store_url("redis+cluster://n1:7000/?buckets=0")
    with pytest.raises(ValueError, match="no databases"):
        parse_store_url("redis+cluster://n1:7000/2")
