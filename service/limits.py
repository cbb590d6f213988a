"""Limits that keep one client from starving the others.

Each refusal is a TableError with RESOURCE_EXHAUSTED and a message naming the limit, so a
client can tell a limit from a rule. On the Redis store the counts live in Redis, shared by
every replica on that store (a client gets a limit once, whichever replica it reaches); on
SQLite and in memory they live in the server process.

- message size: enforced by gRPC itself (the server's max receive length);
- tables per client: unfinished tables created by one client (its API key, else its address);
- streams per table: open StreamTable calls of one table;
- moves per second per seat: SubmitMove calls per seat token, a moving window (`limits`).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import math
import secrets
import time
from collections import defaultdict
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any

import redis.asyncio as aioredis
from limits import RateLimitItem, parse
from limits.aio.storage import MemoryStorage, RedisClusterStorage, RedisStorage
from limits.aio.strategies import MovingWindowRateLimiter
from limits.errors import StorageError
from redis.exceptions import RedisClusterException, RedisError

from service.model import TableRecord
from service.reasons import Reason
from service.redis_cluster import limits_url
from service.store import StoreUnavailable
from service.tables import Code, TableError

DEFAULT_MAX_MESSAGE_BYTES = 1 << 20
DEFAULT_STREAMS_PER_TABLE = 64


@dataclass(frozen=True)
class Limits:
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    tables_per_client: int = 0  # unfinished tables one client may have created; 0: no limit
    streams_per_table: int = DEFAULT_STREAMS_PER_TABLE  # 0: no limit
    move_rate: str = ""  # SubmitMove calls per seat, e.g. "10/second" or "20 per 2 seconds"

    def __post_init__(self) -> None:
        if self.max_message_bytes < 1024:
            raise ValueError("the message size limit must be at least 1024 bytes")
        if self.tables_per_client < 0 or self.streams_per_table < 0:
            raise ValueError("table and stream limits may not be negative (0: no limit)")
        if self.move_rate:
            rate_item(self.move_rate)


def rate_item(text: str) -> RateLimitItem:
    """'10/second' -> the `limits` item; ValueError saying what is expected."""
    try:
        return parse(text)
    except ValueError:
        raise ValueError(
            f"move rate {text!r} is not a rate; write e.g. '10/second' or '100 per minute'"
        ) from None


def client_key(peer: str, api_key: str | None = None) -> str:
    """Who a request comes from: the API key's digest if it has one, else its address
    without the port (gRPC peers read 'ipv4:1.2.3.4:5678')."""
    if api_key:
        return "key:" + hashlib.sha256(api_key.encode()).hexdigest()[:16]
    host = peer.rsplit(":", 1)[0] if peer.count(":") >= 2 else peer
    return "peer:" + host


class Guard:
    """The counters behind Limits: this process's, or Redis's when `shared` is given."""

    def __init__(self, limits: Limits, shared: SharedCounts | None = None) -> None:
        self.limits = limits
        self.shared = shared
        self._streams: dict[str, int] = defaultdict(int)
        self._created: dict[str, list[str]] = defaultdict(list)
        self._rate = rate_item(limits.move_rate) if limits.move_rate else None
        self._limiter: MovingWindowRateLimiter | None = None
        if self._rate is not None:
            storage = shared.rate_storage() if shared is not None else MemoryStorage()
            self._limiter = MovingWindowRateLimiter(storage)

    async def close(self) -> None:
        if self.shared is not None:
            await self.shared.close()

    # --- moves ----------------------------------------------------------------------------
    async def check_move(self, table_id: str, token: str | None) -> None:
        """Counts one SubmitMove for the seat holding `token` (unknown tokens count too, so
        guessing is throttled the same way); refuses when the seat's window is full."""
        if self._limiter is None or self._rate is None or not token:
            return
        seat_key = hashlib.sha256(token.encode()).hexdigest()[:24]
        with self._reachable():
            allowed = await self._limiter.hit(self._rate, table_id, seat_key)
        if not allowed:
            with self._reachable():
                stats = await self._limiter.get_window_stats(self._rate, table_id, seat_key)
            wait = max(1, math.ceil(stats.reset_time - time.time()))
            raise TableError(
                Code.RESOURCE_EXHAUSTED,
                f"too many moves from this seat: at most {self._rate} per seat; wait and "
                "resend (the table is unchanged)",
                reason=Reason.RATE_LIMITED,
                meta={"retry_after_seconds": wait},
            )

    # --- streams --------------------------------------------------------------------------
    @contextlib.asynccontextmanager
    async def stream(self, table_id: str) -> AsyncIterator[None]:
        """Holds one of the table's stream places while the stream runs."""
        limit = self.limits.streams_per_table
        if self.shared is not None and limit:
            with self._reachable():
                lease = await self.shared.take_stream(table_id, limit)
            if lease is None:
                raise _too_many_streams(table_id, limit)
            try:
                yield
            finally:
                await self.shared.give_back_stream(table_id, lease)
            return
        if limit and self._streams[table_id] >= limit:
            raise _too_many_streams(table_id, limit)
        self._streams[table_id] += 1
        try:
            yield
        finally:
            self._streams[table_id] -= 1
            if not self._streams[table_id]:
                del self._streams[table_id]

    # --- tables ---------------------------------------------------------------------------
    async def check_create(
        self, client: str, get: Callable[[str], Awaitable[TableRecord | None]]
    ) -> None:
        """Refuses a client at its limit of unfinished tables; finished or vanished tables
        are forgotten first (looked up only when the limit is reached)."""
        limit = self.limits.tables_per_client
        if not limit:
            return
        if self.shared is not None:
            with self._reachable():
                created = await self.shared.tables_of(client)
        else:
            created = self._created.get(client, [])
        if len(created) < limit:
            return
        alive, gone = [], []
        for table_id in created:
            record = await get(table_id)
            if record is not None and not record.status.closed:
                alive.append(table_id)
            else:
                gone.append(table_id)
        if self.shared is not None:
            with self._reachable():
                await self.shared.forget_tables(client, gone)
        else:
            self._created[client] = alive
        if len(alive) >= limit:
            raise TableError(
                Code.RESOURCE_EXHAUSTED,
                f"this client already has {len(alive)} unfinished tables (the limit is "
                f"{limit}); finish or abandon one first",
                reason=Reason.TOO_MANY_TABLES, meta={"limit": limit},
            )

    async def created(self, client: str, table_id: str) -> None:
        if not self.limits.tables_per_client:
            return
        if self.shared is not None:
            with self._reachable():
                await self.shared.add_table(client, table_id)
        else:
            self._created[client].append(table_id)

    @staticmethod
    @contextlib.contextmanager
    def _reachable() -> Iterator[None]:
        """A Redis that cannot be reached is the store's outage too: UNAVAILABLE."""
        try:
            yield
        except (RedisError, RedisClusterException, StorageError, OSError) as e:
            raise StoreUnavailable(f"the limits' Redis cannot be reached: {e}") from None


def _too_many_streams(table_id: str, limit: int) -> TableError:
    return TableError(
        Code.RESOURCE_EXHAUSTED,
        f"table {table_id} already has {limit} open streams (the limit per table); "
        "close one or retry later",
        reason=Reason.TOO_MANY_STREAMS, meta={"limit": limit},
    )


# KEYS: the table's stream leases (a sorted set: lease id -> expiry time)
# ARGV: now, the limit, the new lease id, its expiry
TAKE_STREAM_LUA = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[4], ARGV[3])
redis.call('PEXPIREAT', KEYS[1], math.ceil(tonumber(ARGV[4]) * 1000))
return 1
"""


class SharedCounts:
    """Counts in Redis, shared by every replica on one store (same URL and prefix).

    Stream places are leases that this server renews while its streams run: a server that
    dies without giving its places back frees them within `lease_seconds`. Tables per client
    are a set of table ids per client, pruned of finished tables when the limit is reached
    (two replicas creating at the same instant may let one table past the limit).

    `clock` (wall-clock seconds, compared across replicas) dates the leases; the renewer runs
    every `renew_every` seconds (a third of the lease unless given)."""

    def __init__(
        self,
        url: str,
        lease_seconds: float = 30.0,
        clock: Callable[[], float] = time.time,
        renew_every: float | None = None,
    ) -> None:
        from service.redis_connect import parse_store_url, pooled

        parsed = parse_store_url(url)
        self.url, self.prefix = parsed.url, parsed.prefix
        self.lease_seconds = lease_seconds
        self.clock = clock
        self.renew_every = lease_seconds / 3 if renew_every is None else renew_every
        self._redis = pooled(self.url)  # the primary, after a failover too; or a cluster's
        self._take = self._redis.register_script(TAKE_STREAM_LUA)
        self._leases: dict[str, str] = {}  # lease id -> table id, this server's open streams
        self._server = secrets.token_hex(6)
        self._serial = 0
        self._renewer: asyncio.Task[None] | None = None

    def rate_storage(self) -> Any:
        from service.redis_connect import connection_options, is_cluster

        if is_cluster(self.url):
            # the limits library builds a cluster client of its own from the same nodes (it
            # takes no client nor pool of ours for a cluster)
            return RedisClusterStorage(
                limits_url(self.url), implementation="redispy",
                key_prefix=f"{self.prefix}limits", **connection_options(),
            )
        # the counts' own client's pool: one Redis or the Sentinel-named primary alike (the
        # URL only says which kind of storage; the pool decides where it connects)
        assert isinstance(self._redis, aioredis.Redis)
        return RedisStorage(
            "async+redis://", implementation="redispy", key_prefix=f"{self.prefix}limits",
            connection_pool=self._redis.connection_pool,
        )

    def _streams_key(self, table_id: str) -> str:
        return f"{self.prefix}streams:{table_id}"

    def _client_key(self, client: str) -> str:
        return f"{self.prefix}client:{client}"

    async def take_stream(self, table_id: str, limit: int) -> str | None:
        self._serial += 1
        lease = f"{self._server}:{self._serial}"
        now = self.clock()
        taken = await self._take(
            keys=[self._streams_key(table_id)],
            args=[repr(now), limit, lease, repr(now + self.lease_seconds)],
        )
        if not taken:
            return None
        self._leases[lease] = table_id
        if self._renewer is None or self._renewer.done():
            self._renewer = asyncio.get_running_loop().create_task(self._renew_forever())
        return lease

    async def give_back_stream(self, table_id: str, lease: str) -> None:
        self._leases.pop(lease, None)
        with contextlib.suppress(RedisError, OSError):  # unreachable: it expires by itself
            await self._redis.zrem(self._streams_key(table_id), lease)

    async def _renew_forever(self) -> None:
        while self._leases:
            await asyncio.sleep(self.renew_every)
            until = repr(self.clock() + self.lease_seconds)
            with contextlib.suppress(RedisError, OSError):  # the next round tries again
                async with self._redis.pipeline(transaction=False) as pipe:
                    for lease, table_id in list(self._leases.items()):
                        key = self._streams_key(table_id)
                        pipe.zadd(key, {lease: until}, xx=True)
                        pipe.expire(key, math.ceil(self.lease_seconds))
                    await pipe.execute()

    async def tables_of(self, client: str) -> list[str]:
        return [t.decode() for t in await self._redis.smembers(self._client_key(client))]

    async def add_table(self, client: str, table_id: str) -> None:
        await self._redis.sadd(self._client_key(client), table_id)

    async def forget_tables(self, client: str, table_ids: list[str]) -> None:
        if table_ids:
            await self._redis.srem(self._client_key(client), *table_ids)

    async def close(self) -> None:
        if self._renewer is not None:
            self._renewer.cancel()
        from service.redis_connect import close_client

        await close_client(self._redis)
