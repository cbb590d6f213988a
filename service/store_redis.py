"""Redis store: what several server replicas share, on one Redis or a Redis Cluster.

URL (`service.redis_connect` reads it and builds every client): `redis://host:port/db?prefix=
croupier:&retention=86400` (`rediss://` for TLS), the primary that Redis Sentinel names,
`redis+sentinel://host:26379,host:26379/service/db?...`, or a Redis Cluster,
`redis+cluster://host:port,host:port/?prefix=croupier:&buckets=16` (`service.redis_cluster`).
With `wait_replicas=N&wait_timeout_ms=T`, on any of them, table writes are acknowledged only
once N replicas hold them (`service.redis_acks`). Every key starts with the prefix, so several
deployments (or test runs) can share one Redis.

Buckets and hash tags. A cluster runs a script, a MULTI/EXEC or a multi-key XREAD only on keys
of one hash slot, and a key's slot is the hash of its first `{...}` (its hash tag). Tables are
spread over `buckets` (`buckets=`; 16 on a cluster, 1 on a plain Redis unless asked): a table's
bucket is the CRC-32 of its id modulo that count, and every key of bucket k is `<prefix>{bk}...`
(`<tag>` below). So a table's write script still touches only keys of one slot: its record and
events, its bucket's lobby indexes and its players' sets of that bucket, and every
compare-and-set stays one atomic step. What spans tables reads every bucket and merges
(pipelined): the listings (newest first: a merge of the buckets' sorted sets, in ZREVRANGE's
order), the players' tables, the bots' and rounds' indexes, the counts. Waiting for changes
takes one reader per bucket on a cluster (below). The alternatives were worse: one slot for
all the indexes would put every write on one primary (no sharding of writes); indexes kept
apart from the records would need two writes per move and lose the atomic step; per-table
slots with a separate index write would let a crash between the two leave a table unlisted.
Buckets keep the atomic step and still spread writes over the primaries. A plain Redis with
one bucket has no tag (`<tag>` empty): its keys stay those of the layout before buckets.

Layout, per table `<id>`:
- `<prefix><tag>t:<id>`: a hash, the record (the engine state as bytes in one field).
- `<prefix><tag>e:<id>`: a Stream, the event log; the entry id of version v is `0-v`, so
  "events after v" is one XRANGE from `0-(v+1)`, and a blocking XREAD from `0-v` wakes on the
  next event whichever replica wrote it.
- Lobby indexes of the bucket, sorted sets of table ids: `<tag>idx:created` and
  `<tag>idx:game:<game>` (score: created_at), `<tag>idx:status:<status>` (created_at),
  `<tag>idx:bot_open` (bot_open_at) and `<tag>idx:fill_due` (fill_due_at), so ListTables and
  "tables waiting for a bot" read a range of each bucket's index instead of scanning every
  table. `<tag>idx:idle:waiting` and `<tag>idx:idle:playing` (score: seen_at) hold the watched
  open tables, for the round that closes abandoned ones; `<tag>idx:timed`, `<tag>idx:paused`
  serve the timer and pacing rounds; `<tag>idx:games` names the games with an index.
- A person's presence (`touch`) is a script of its own: it raises the record's `seen_at` and
  its score in the idle index, never the version.
- Players' tables (sorted sets per player and bucket, written by the record's own script) and
  seats' presence (a hash per table): `service.store_redis_players`.
- Ladders (never expire), in one slot of their own on a cluster (`<lt>` = `{lad}` there, empty
  on a plain Redis): `<prefix><lt>lad:r:<ladder>`, a hash `<game>/<entrant>` -> the rating as
  JSON; `<prefix><lt>lad:m:<ladder>`, a hash match id -> the rated match as JSON;
  `<prefix><lt>lad:t`, a hash table id -> the match id it was rated under. A rating is one
  WATCH/MULTI/EXEC over the three: of two replicas racing to rate one match, the second's EXEC
  fails, it reads again and finds the match rated. Rated tables of people add their history and
  names in the same EXEC (`service.rating_history_redis`, keys under the same `<lt>`).

Every write is one Lua script, atomic in Redis: check the version (the compare-and-set), write
the record, XADD the events, update the indexes, and, when the table finishes and a retention is
set, EXPIRE its record and stream. Bot-seat claims need nothing more: JoinTable commits with the
version it read, so of two racing joins of one seat exactly one lands. With `wait_replicas=N`,
the script is followed by WAIT on the same connection (on a cluster: to the table's slot's
primary): the write is acknowledged once N replicas have it, and fails UNAVAILABLE when they do
not confirm it in time (`service.redis_acks`).

Ids of expired tables stay in the indexes until a listing meets them and drops them.

Waiting for a change: one reader task holds a dedicated connection blocked in one XREAD over
the streams of every table some stream subscriber waits on, and wakes those waiters when their
table's stream moves; on a plain Redis one reader per store, on a cluster one per bucket with
waiters (a multi-key XREAD must stay in one slot), each connected to its bucket's primary and
reconnecting to the new one after a failover. A subscriber for a table not yet in the XREAD
unblocks the reader (CLIENT UNBLOCK, through the ordinary pool, on a cluster sent to that
node) so that it blocks again with the new key set. One connection per replica (per bucket on
a cluster) whatever the number of subscribers, rather than one blocked connection per
subscriber.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import time
import zlib
from collections import deque
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import RedisClusterException, RedisError, ResponseError, WatchError

from common.logging import get_logger
from service.model import (
    TIMER_OPTION,
    Event,
    EventKind,
    RatedMatch,
    Rating,
    SeatsJson,
    Status,
    TableFilter,
    TableRecord,
    deals_from_json,
    deals_to_json,
    event_flags,
    flags_fields,
    matches,
    pause_fields,
    pause_text,
    ready_from_text,
    ready_text,
    seats_from_json,
    sort_ratings,
)
from service.player_index import closed_at, players_of
from service.rating_history import RatingPoints
from service.rating_history_redis import queue_history, read_history, read_names
from service.redis_acks import Acknowledger
from service.redis_connect import (
    OUTAGES,
    Client,
    close_client,
    dedicated,
    node_client,
    parse_store_url,
    pooled,
    refused_by_primary,
)
from service.store import (
    Ratings,
    RatingUpdate,
    Store,
    StoreUnavailable,
    TableExists,
    TableMissing,
    TableRated,
    VersionConflict,
    check_commit,
)
from service.store_redis_players import PLAYERS_LUA, RedisPlayers

Redis = Client
# the pool of a store's (and tickets') client on one Redis or the Sentinel-named primary
POOL_CONNECTIONS = 64
POOL_WAIT_SECONDS = 10.0
# longest a blocked XREAD waits before it looks at its waiters again (ms)
READER_BLOCK_MS = 5000
# the reader's socket timeout (s): beyond its XREAD's block, or a read timed out on the client
# at the moment Redis answered "nothing new" (redis-py's default is 5 s, as long as the block),
# and the reader reconnected every few seconds
READER_SOCKET_TIMEOUT = READER_BLOCK_MS / 1000 + 10
# pause before the reader tries again after losing Redis (s); its waiters meanwhile fall back
# on their own timeouts
READER_RETRY_SECONDS = 0.2

log = get_logger("croupier.store")

# ids read from an index per round while a filtered listing fills its page
LIST_PAGE = 200
# ids read per bucket and round when the buckets' indexes are merged
MIN_BUCKET_PAGE = 32

# KEYS: record, stream, idx:created, idx:bot_open, idx:fill_due, idx:status:waiting,
#       idx:status:playing, idx:status:finished, idx:game:<game>, idx:games, idx:timed,
#       idx:status:abandoned, idx:idle:waiting, idx:idle:playing, idx:paused (then the
#       players' keys, service.store_redis_players)
# ARGV: expected (-1: create), table id, created_at, status, bot_open_at ('' none),
#       fill_due_at ('' none), retention seconds (0 none), timed ('1' when the table has a
#       turn timer, else ''), watched ('1' when the abandonment round looks at it, else ''),
#       seen_at (the stored one stays if later), idle_before ('' none: else refused unless
#       the stored seen_at is before it), record field count n, n field/value pairs, then
#       per event: its version, its field count m, m field/value pairs
COMMIT_LUA = """
local expected = tonumber(ARGV[1])
local current = redis.call('HGET', KEYS[1], 'version')
if expected < 0 then
  if current then return {'exists'} end
else
  if not current then return {'missing'} end
  if tonumber(current) ~= expected then return {'conflict', current} end
end
local stored = redis.call('HGET', KEYS[1], 'seen_at')
if ARGV[11] ~= '' and stored and tonumber(stored) >= tonumber(ARGV[11]) then
  return {'seen', current}
end
local seen = ARGV[10]
if stored and tonumber(stored) > tonumber(seen) then seen = stored end
local id = ARGV[2]
local created = ARGV[3]
local status = ARGV[4]
local n = tonumber(ARGV[12])
local fields = {}
for i = 13, 12 + 2 * n do fields[#fields + 1] = ARGV[i] end
redis.call('HSET', KEYS[1], 'seen_at', seen, unpack(fields))
local i = 13 + 2 * n
while i <= #ARGV do
  local version = ARGV[i]
  local m = tonumber(ARGV[i + 1])
  local entry = {}
  for j = i + 2, i + 1 + 2 * m do entry[#entry + 1] = ARGV[j] end
  redis.call('XADD', KEYS[2], '0-' .. version, unpack(entry))
  i = i + 2 + 2 * m
end
if expected < 0 then
  redis.call('ZADD', KEYS[3], created, id)
  redis.call('ZADD', KEYS[9], created, id)
  redis.call('SADD', KEYS[10], ARGV[14])  -- the first record field is the game
end
local statuses = {waiting = KEYS[6], playing = KEYS[7], finished = KEYS[8], abandoned = KEYS[12]}
for name, key in pairs(statuses) do
  if name == status then
    redis.call('ZADD', key, created, id)
  else
    redis.call('ZREM', key, id)
  end
end
local idle = {waiting = KEYS[13], playing = KEYS[14]}
for name, key in pairs(idle) do
  if ARGV[9] ~= '' and name == status then
    redis.call('ZADD', key, seen, id)
  else
    redis.call('ZREM', key, id)
  end
end
if ARGV[5] == '' then redis.call('ZREM', KEYS[4], id) else redis.call('ZADD', KEYS[4], ARGV[5], id) end
if ARGV[6] == '' then redis.call('ZREM', KEYS[5], id) else redis.call('ZADD', KEYS[5], ARGV[6], id) end
-- the timer round's index: timed tables while they are playing
if ARGV[8] ~= '' and status == 'playing' then
  redis.call('ZADD', KEYS[11], created, id)
else
  redis.call('ZREM', KEYS[11], id)
end
-- the pacing round's index: playing tables in a pause between deals, by when it ends
local pause = tonumber(redis.call('HGET', KEYS[1], 'next_deal_at') or '0')
if pause and pause > 0 and status == 'playing' then
  redis.call('ZADD', KEYS[15], pause, id)
else
  redis.call('ZREM', KEYS[15], id)
end
local retention = tonumber(ARGV[7])
if (status == 'finished' or status == 'abandoned') and retention > 0 then
  redis.call('EXPIRE', KEYS[1], retention)
  redis.call('EXPIRE', KEYS[2], retention)
end
""" + PLAYERS_LUA + """
return {'ok'}
"""

# KEYS: record, idx:idle:waiting, idx:idle:playing; ARGV: table id, seen_at
TOUCH_LUA = """
local status = redis.call('HGET', KEYS[1], 'status')
if status ~= 'waiting' and status ~= 'playing' then return 0 end
local stored = redis.call('HGET', KEYS[1], 'seen_at')
if stored and tonumber(stored) >= tonumber(ARGV[2]) then return 0 end
redis.call('HSET', KEYS[1], 'seen_at', ARGV[2])
if redis.call('HGET', KEYS[1], 'watched') == '1' then
  if status == 'waiting' then
    redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
  else
    redis.call('ZADD', KEYS[3], ARGV[2], ARGV[1])
  end
end
return 1
"""


def parse_url(url: str) -> tuple[str, str, float]:
    """(the connection URL, key prefix, retention seconds) from a store URL."""
    parsed = parse_store_url(url)
    return parsed.url, parsed.prefix, parsed.retention


@contextlib.contextmanager
def _reachable() -> Iterator[None]:
    """Redis connection failures and timeouts as StoreUnavailable (UNAVAILABLE to clients)."""
    try:
        yield
    except OUTAGES as e:
        raise StoreUnavailable(f"Redis: {type(e).__name__}: {e}") from None
    except ResponseError as e:
        if not refused_by_primary(e):
            raise
        raise StoreUnavailable(f"Redis: {e}") from None


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _num(value: float | None) -> str:
    return "" if value is None else repr(float(value))


class _Reader:
    """One blocked XREAD over the watched streams of its part of the store (all of it on a
    plain Redis, one bucket on a cluster), fanning wake-ups out to the waiters."""

    def __init__(self, store: RedisStore, bucket: int | None = None) -> None:
        self._store = store
        self._bucket = bucket  # on a cluster: the bucket whose streams it reads
        # table id -> {future: the version its waiter has seen}
        self._waiters: dict[str, dict[asyncio.Future[None], int]] = {}
        self._task: asyncio.Task[None] | None = None
        self._conn: aioredis.Redis | None = None
        self._node: Any = None  # on a cluster: the node the connection is to
        self._client_id: int | None = None
        self._reading: dict[str, int] = {}  # table -> version the XREAD in flight reads after
        # when the reader lost Redis, until it has it again (kept across reader tasks: a task
        # whose waiters all gave up meanwhile ends, the next one logs the reconnection)
        self._lost: float | None = None
        self._unblocks: set[asyncio.Task[None]] = set()  # CLIENT UNBLOCKs in flight

    async def wait(self, table_id: str, after_version: int, timeout: float) -> None:
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[None] = loop.create_future()
        self._waiters.setdefault(table_id, {})[fut] = after_version
        try:
            if self._task is None or self._task.done():
                self._task = loop.create_task(self._run())
            elif (
                self._client_id is not None
                and self._reading.get(table_id, after_version + 1) > after_version
            ):
                # the XREAD in flight does not cover this waiter: start it again with it (if
                # the unblock overtakes the XREAD, the waiter's own timeout still bounds it).
                # Sent from a task of its own: redis-py can swallow a cancellation that lands
                # in a command, and the waiter must end at once when its client leaves.
                unblock = loop.create_task(self._unblock(self._client_id))
                self._unblocks.add(unblock)
                unblock.add_done_callback(self._unblocks.discard)
            await asyncio.wait_for(fut, timeout)
        except TimeoutError:
            pass
        finally:
            waiters = self._waiters.get(table_id)
            if waiters is not None:
                waiters.pop(fut, None)
                if not waiters:
                    del self._waiters[table_id]

    async def _unblock(self, client_id: int) -> None:
        with contextlib.suppress(RedisError, RedisClusterException):
            if self._node is None:
                await self._store._redis.client_unblock(client_id)
            else:  # the node the reader's connection is to, through the cluster's pool
                await self._store._redis.execute_command(
                    "CLIENT UNBLOCK", client_id, target_nodes=self._node
                )

    def _streams(self) -> dict[str, int]:
        """Table -> the lowest version a waiter still waiting on it has seen."""
        out: dict[str, int] = {}
        for table_id, waiters in self._waiters.items():
            pending = [after for fut, after in waiters.items() if not fut.done()]
            if pending:
                out[table_id] = min(pending)
        return out

    async def _connect(self) -> aioredis.Redis:
        if self._conn is None:
            if self._bucket is None:
                self._conn = self._store._new_connection(socket_timeout=READER_SOCKET_TIMEOUT)
            else:
                # a connection of its own to the primary of the bucket's slot, asked of the
                # cluster client each time (a failover moves it)
                await self._store._redis.initialize()  # at once when it already is
                node = self._store._redis.get_node_from_key(self._store._keys[self._bucket].created)
                self._node = node
                self._conn = node_client(self._store._url, node.host, node.port,
                                         socket_timeout=READER_SOCKET_TIMEOUT)
        return self._conn

    async def _drop(self) -> None:
        """After an error on a cluster: a new connection next time, to the slot's primary as
        the cluster client then knows it (a command of its own on the slot makes it look)."""
        if self._bucket is None or self._conn is None:
            return
        conn, self._conn, self._node = self._conn, None, None
        with contextlib.suppress(Exception):
            await conn.aclose()
        with contextlib.suppress(RedisError, RedisClusterException):
            await self._store._redis.exists(self._store._keys[self._bucket].created)

    async def _run(self) -> None:
        while True:
            reading = self._streams()
            if not reading:
                return
            try:
                conn = await self._connect()
                if self._client_id is None:
                    self._client_id = int(await conn.client_id())
                    if self._lost is not None:
                        down = round(time.monotonic() - self._lost, 2)
                        log.info("stream_reader_reconnected", down_s=down)
                        self._lost = None
                    continue  # waiters came or went meanwhile: read the key set again
                self._reading = reading
                keys = {self._store._stream_key(t): t for t in reading}
                found = await conn.xread(
                    {key: f"0-{reading[t]}" for key, t in keys.items()},
                    count=1,
                    block=READER_BLOCK_MS,
                )
            except (RedisError, RedisClusterException) as e:
                # Redis gone (killed, restarting, loading its data, a failover) or an
                # unexpected reply: the connection reconnects on the next command, as another
                # client (hence a new client id); waiters fall back on their own timeouts
                if self._lost is None:
                    self._lost = time.monotonic()
                    log.warning("stream_reader_lost_redis", error=f"{type(e).__name__}: {e}")
                self._client_id = None
                self._reading = {}
                await self._drop()
                await asyncio.sleep(READER_RETRY_SECONDS)
                continue
            self._reading = {}
            for key, entries in found or ():
                if not entries:
                    continue
                table_id = keys[key.decode() if isinstance(key, bytes) else key]
                entry_id = entries[-1][0]
                if isinstance(entry_id, bytes):
                    entry_id = entry_id.decode()
                version = int(entry_id.split("-", 1)[1])
                for fut, after in list(self._waiters.get(table_id, {}).items()):
                    if version > after and not fut.done():
                        fut.set_result(None)

    async def close(self) -> None:
        for unblock in list(self._unblocks):
            unblock.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await unblock
        if self._task is not None and not self._task.done():
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
        if self._conn is not None:
            with contextlib.suppress(Exception):
                await self._conn.aclose()
            self._conn = None


_Records = list[TableRecord]  # spelt out here: inside the store, `list` is its listing method
_Strings = list[str]
_Ids = list[bytes]
_Scored = list[tuple[float, str]]


class _BucketKeys:
    """The lobby indexes of one bucket (every name under the bucket's hash tag)."""

    def __init__(self, base: str) -> None:
        self.base = base  # prefix and hash tag
        self.created = f"{base}idx:created"
        self.bot_open = f"{base}idx:bot_open"
        self.fill_due = f"{base}idx:fill_due"
        self.paused = f"{base}idx:paused"  # tables in a pause between deals, by its end
        self.timed = f"{base}idx:timed"  # timed tables while playing
        self.games = f"{base}idx:games"  # the names of the games with a game index
        # watched open tables by seen_at: what the abandonment round reads
        self.idle = {s: f"{base}idx:idle:{s.value}" for s in (Status.WAITING, Status.PLAYING)}

    def status(self, status: Status | str) -> str:
        return f"{self.base}idx:status:{Status(status).value}"

    def game(self, game: str) -> str:
        return f"{self.base}idx:game:{game}"


class RedisStore(RedisPlayers, Store):
    def __init__(
        self,
        url: str,
        prefix: str | None = None,
        retention: float | None = None,
        buckets: int | None = None,
    ):
        parsed = parse_store_url(url)
        self._url = parsed.url
        self.prefix = parsed.prefix if prefix is None else prefix
        self.retention = parsed.retention if retention is None else retention
        self.cluster = parsed.cluster
        self.buckets = parsed.buckets if buckets is None else buckets
        # a blocking pool: past POOL_CONNECTIONS calls in flight, a call waits for a free
        # connection instead of failing (redis-py 8's default pool refuses the 101st at once,
        # which turned 100 busy tables into UNAVAILABLE answers); a cluster's own client
        self._redis: Redis = pooled(
            self._url, max_connections=POOL_CONNECTIONS, pool_timeout=POOL_WAIT_SECONDS
        )
        self._acks = Acknowledger(self._redis, parsed.ack)
        self._script = self._redis.register_script(COMMIT_LUA)
        self._touch = self._redis.register_script(TOUCH_LUA)
        self._seats_json = SeatsJson()
        p = self.prefix
        # a plain Redis with one bucket keeps the keys it always had (no tag)
        tagged = self.cluster or self.buckets > 1
        self._keys = [_BucketKeys(f"{p}{{b{b}}}" if tagged else p) for b in range(self.buckets)]
        # ladders, their history and names: one slot of their own on a cluster
        self._ladder_base = f"{p}{{lad}}" if self.cluster else p
        # on a cluster a multi-key XREAD stays in one slot: a reader per bucket
        self._readers: dict[int, _Reader] = {}

    @property
    def client(self) -> Redis:
        """The store's client, for what lives beside the tables (guest keys)."""
        return self._redis

    def _new_connection(self, **options: Any) -> aioredis.Redis:
        return dedicated(self._url, **options)

    # --- keys ---------------------------------------------------------------------------
    def bucket(self, table_id: str) -> int:
        """The table's bucket: a hash of its id that every replica computes alike."""
        return zlib.crc32(table_id.encode()) % self.buckets if self.buckets > 1 else 0

    def _bucket_keys(self, table_id: str) -> _BucketKeys:
        return self._keys[self.bucket(table_id)]

    def _record_key(self, table_id: str) -> str:
        return f"{self._bucket_keys(table_id).base}t:{table_id}"

    def _stream_key(self, table_id: str) -> str:
        return f"{self._bucket_keys(table_id).base}e:{table_id}"

    def _table_base(self, table_id: str) -> str:
        return self._bucket_keys(table_id).base

    def _bases(self) -> list[str]:
        return [k.base for k in self._keys]

    # --- encoding -----------------------------------------------------------------------
    def _record_fields(self, r: TableRecord) -> list[Any]:
        return [
            "game", r.game,
            "players", r.players,
            "options", json.dumps(r.options, separators=(",", ":"), sort_keys=True),
            "seats", self._seats_json(r.seats),
            "status", r.status.value,
            "version", r.version,
            "state", r.state,
            "created_at", repr(float(r.created_at)),
            "fill_after", repr(float(r.fill_with_bots_after_seconds)),
            "fill_level", r.fill_level,
            "seed", r.seed,
            "watched", "1" if r.watched() else "",
            "deals", deals_to_json(r.deals),
            "next_deal_at", repr(float(r.next_deal_at)),
            "ready", ready_text(r.ready),
        ]  # fmt: skip

    @staticmethod
    def _record(table_id: str, h: dict[bytes, bytes]) -> TableRecord:
        return TableRecord(
            table_id=table_id,
            game=h[b"game"].decode(),
            players=int(h[b"players"]),
            options=json.loads(h[b"options"]),
            seats=seats_from_json(h[b"seats"].decode()),
            status=Status(h[b"status"].decode()),
            version=int(h[b"version"]),
            state=bytes(h[b"state"]),
            created_at=float(h[b"created_at"]),
            fill_with_bots_after_seconds=float(h[b"fill_after"]),
            fill_level=h[b"fill_level"].decode(),
            seed=h.get(b"seed", b"").decode(),
            # tables written before presence was kept: seen when created
            seen_at=float(h.get(b"seen_at") or h[b"created_at"]),
            deals=deals_from_json(h.get(b"deals")),  # absent: written before commitments
            # absent: written before the pause between deals
            next_deal_at=float(h.get(b"next_deal_at") or 0),
            ready=ready_from_text(h.get(b"ready")),
        )

    def _event_fields(self, e: Event) -> list[Any]:
        return [
            "k", e.kind.value,
            "s", e.seat,
            "m", e.move,
            "n", e.name,
            "t", repr(float(e.time)),
            "x", e.state,
            "se", self._seats_json(e.seats),
            "st", e.status.value,
            "d", event_flags(e),
            # only where there is one: entries of other moves stay as before
            *(("r", e.rejected) if e.rejected else ()),
            *(("p", pause_text(e.next_deal_at, e.ready)) if e.next_deal_at else ()),
        ]  # fmt: skip

    @staticmethod
    def _event(table_id: str, entry_id: bytes, f: dict[bytes, bytes]) -> Event:
        return Event(
            table_id=table_id,
            version=int(entry_id.split(b"-", 1)[1]),
            kind=EventKind(f[b"k"].decode()),
            seat=int(f[b"s"]),
            move=f[b"m"].decode(),
            name=f[b"n"].decode(),
            time=float(f[b"t"]),
            state=bytes(f[b"x"]),
            seats=seats_from_json(f[b"se"].decode()),
            status=Status(f[b"st"].decode()),
            **flags_fields(int(f[b"d"])),
            rejected=f.get(b"r", b"").decode(),
            **pause_fields(f.get(b"p")),
        )

    # --- writing ------------------------------------------------------------------------
    async def _write(
        self,
        record: TableRecord,
        events: Sequence[Event],
        expected: int,
        idle_before: float | None = None,
    ) -> None:
        fields = self._record_fields(record)
        closed = closed_at(record, events)
        if closed is not None:
            fields += ["closed_at", repr(float(closed))]
        args: list[Any] = [
            expected,
            record.table_id,
            repr(float(record.created_at)),
            record.status.value,
            _num(record.bot_open_at()),
            _num(record.fill_due_at()),
            math.ceil(self.retention),
            "1" if record.options.get(TIMER_OPTION) else "",
            "1" if record.watched() else "",
            repr(float(record.seen_at)),
            _num(idle_before),
            len(fields) // 2,
            *fields,
        ]
        for e in events:
            ef = self._event_fields(e)
            args.extend((e.version, len(ef) // 2, *ef))
        b = self._bucket_keys(record.table_id)
        keys = [
            self._record_key(record.table_id),
            self._stream_key(record.table_id),
            b.created,
            b.bot_open,
            b.fill_due,
            b.status(Status.WAITING),
            b.status(Status.PLAYING),
            b.status(Status.FINISHED),
            b.game(record.game),
            b.games,
            b.timed,
            b.status(Status.ABANDONED),
            b.idle[Status.WAITING],
            b.idle[Status.PLAYING],
            b.paused,
        ]
        for player in players_of(record):
            keys += self.player_keys(player, b.base)
        with _reachable():
            result = await self._acks.write(
                self._script, keys, args, lambda r: r[0] in (b"ok", "ok"),
                f"table {record.table_id} at version {record.version}",
            )
        outcome = result[0].decode() if isinstance(result[0], bytes) else result[0]
        if outcome == "ok":
            return
        if outcome == "exists":
            raise TableExists(record.table_id)
        if outcome == "missing":
            raise TableMissing(record.table_id)
        if outcome == "seen":
            raise VersionConflict(f"a person came back to table {record.table_id}")
        found = result[1].decode() if isinstance(result[1], bytes) else result[1]
        raise VersionConflict(f"table {record.table_id} is at version {found}, not {expected}")

    async def create(self, record: TableRecord, events: Sequence[Event]) -> None:
        check_commit(record, events, 0)
        await self._write(record, events, -1)

    async def commit(
        self,
        record: TableRecord,
        events: Sequence[Event],
        expected_version: int,
        idle_before: float | None = None,
    ) -> None:
        check_commit(record, events, expected_version)
        await self._write(record, events, expected_version, idle_before)

    async def touch(self, table_id: str, seen_at: float) -> None:
        b = self._bucket_keys(table_id)
        keys = [self._record_key(table_id), b.idle[Status.WAITING], b.idle[Status.PLAYING]]
        with _reachable():
            await self._touch(keys=keys, args=[table_id, repr(float(seen_at))])

    async def confirm(self, table_id: str) -> None:
        with _reachable():
            await self._acks.confirm(self._record_key(table_id), f"table {table_id}")

    # --- reading ------------------------------------------------------------------------
    async def get(self, table_id: str) -> TableRecord | None:
        with _reachable():
            h = await self._redis.hgetall(self._record_key(table_id))
        return self._record(table_id, h) if h else None

    async def events_after(self, table_id: str, version: int, limit: int = 1000) -> list[Event]:
        with _reachable():
            entries = await self._redis.xrange(
                self._stream_key(table_id), min=f"0-{max(version, 0) + 1}", max="+", count=limit
            )
        return [self._event(table_id, eid, f) for eid, f in entries]

    async def list(self, flt: TableFilter) -> list[TableRecord]:
        with _reachable():
            return await self._list(flt)

    async def _list(self, flt: TableFilter) -> _Records:
        # the narrowest index answers (each bucket's, merged); the other conditions are
        # checked on the records
        if flt.idle_before is not None:
            statuses = [flt.status] if flt.status is not None else list(self._keys[0].idle)
            idle: _Strings = []
            for status in statuses:
                if status in self._keys[0].idle:
                    idle += await self._lowest(
                        [b.idle[status] for b in self._keys], f"({float(flt.idle_before)!r}",
                        flt.limit,
                    )
            return await self._pick(idle, flt, sort=True)
        if flt.pause_due_before is not None:
            ids = await self._lowest(
                [b.paused for b in self._keys], flt.pause_due_before, flt.limit
            )
            return await self._pick(ids, flt, sort=False)
        if flt.bot_open_before is not None:
            ids = await self._lowest([b.bot_open for b in self._keys], flt.bot_open_before)
            return await self._pick(ids, flt, sort=True)
        if flt.fill_due_before is not None:
            ids = await self._lowest([b.fill_due for b in self._keys], flt.fill_due_before)
            return await self._pick(ids, flt, sort=True)
        if flt.timed and flt.status == Status.PLAYING:
            keys = [b.timed for b in self._keys]
        elif flt.status is not None:
            keys = [b.status(flt.status) for b in self._keys]
        elif flt.game:
            keys = [b.game(flt.game) for b in self._keys]
        else:
            keys = [b.created for b in self._keys]
        # newest first; ties on created_at broken by id, as the other stores do; from the
        # page's cursor on (the cursor's own created_at included: `matches` drops the ids at
        # or before it)
        top = "+inf" if flt.after is None else flt.after[0]
        page = LIST_PAGE if len(keys) == 1 else max(LIST_PAGE // len(keys), MIN_BUCKET_PAGE)
        found: _Records = []
        batch: _Strings = []
        async for _, table_id in self.newest(keys, top, page):
            batch.append(table_id)
            if len(batch) >= LIST_PAGE:
                found.extend(await self._pick(batch, flt, sort=False))
                batch = []
                if len(found) >= flt.limit:
                    break
        if batch and len(found) < flt.limit:
            found.extend(await self._pick(batch, flt, sort=False))
        return found[: flt.limit]

    async def newest(
        self, keys: Sequence[str], top: float | str, page: int
    ) -> AsyncIterator[tuple[float, str]]:
        """(score, member) of the sorted sets `keys` scored at most `top`, highest first and,
        on equal scores, the highest member first (ZREVRANGE's order, so that one set reads
        as before): a merge of the sets, each read `page` members at a time (the reads of a
        round in one pipeline)."""
        queues: list[deque[tuple[float, str]]] = [deque() for _ in keys]
        starts = [0] * len(keys)
        done = [False] * len(keys)
        while True:
            empty = [i for i, q in enumerate(queues) if not q and not done[i]]
            if empty:
                async with self._redis.pipeline(transaction=False) as pipe:
                    for i in empty:
                        pipe.zrevrangebyscore(
                            keys[i], top, "-inf", start=starts[i], num=page, withscores=True
                        )
                    pages = await pipe.execute()
                for i, got in zip(empty, pages, strict=True):
                    starts[i] += page
                    done[i] = len(got) < page
                    # sorted again: members of equal scores must compare as the merge does
                    queues[i].extend(sorted(((float(sc), _text(m)) for m, sc in got),
                                            reverse=True))
            live = [q for q in queues if q]
            if not live:
                return
            yield max(live, key=lambda q: q[0]).popleft()

    async def _lowest(self, keys: Sequence[str], below: float | str,
                      limit: int | None = None) -> _Strings:
        """Ids scored at most `below` in the sets `keys`, lowest first, `limit` of them."""
        async with self._redis.pipeline(transaction=False) as pipe:
            for key in keys:
                if limit is None:
                    pipe.zrangebyscore(key, "-inf", below, withscores=True)
                else:
                    pipe.zrangebyscore(key, "-inf", below, start=0, num=limit, withscores=True)
            rows = await pipe.execute()
        if len(keys) == 1:
            return [_text(m) for m, _ in rows[0]]
        merged = sorted((float(sc), _text(m)) for row in rows for m, sc in row)
        return [m for _, m in merged[:limit]]

    async def _pick(self, names: Sequence[str], flt: TableFilter, sort: bool) -> _Records:
        """The records of `names` that match, dropping ids of expired tables from the
        indexes."""
        if not names:
            return []
        async with self._redis.pipeline(transaction=False) as pipe:
            for name in names:
                pipe.hgetall(self._record_key(name))
            rows = await pipe.execute()
        records: _Records = []
        gone: _Strings = []
        for name, h in zip(names, rows, strict=True):
            if not h:
                gone.append(name)
                continue
            r = self._record(name, h)
            if matches(r, flt):
                records.append(r)
        if gone:
            await self._forget(gone)
        if sort:
            records.sort(key=flt.order_key, reverse=not flt.oldest_first)
            return records[: flt.limit]
        return records

    async def _forget(self, table_ids: Sequence[str]) -> None:
        by_bucket: dict[int, _Strings] = {}
        for t in table_ids:
            by_bucket.setdefault(self.bucket(t), []).append(t)
        for bucket, ids in by_bucket.items():
            b = self._keys[bucket]
            keys = [b.created, b.bot_open, b.fill_due, b.timed, b.paused, *b.idle.values()]
            keys += [b.status(s) for s in Status]
            for game in await self._redis.smembers(b.games):
                keys.append(b.game(game.decode()))
            async with self._redis.pipeline(transaction=False) as pipe:
                for key in keys:
                    pipe.zrem(key, *ids)
                await pipe.execute()

    async def count_tables(self) -> dict[tuple[str, str], int]:
        """From the indexes: ZINTERCARD of each game's and each status's, summed over the
        buckets (ids of expired tables count until a listing drops them)."""
        async with self._redis.pipeline(transaction=False) as pipe:
            for b in self._keys:
                pipe.smembers(b.games)
            named = await pipe.execute()
        games = [sorted(g.decode() for g in found) for found in named]
        keys = [(b, g, s) for b, found in zip(self._keys, games, strict=True)
                for g in found for s in Status]
        async with self._redis.pipeline(transaction=False) as pipe:
            for b, g, s in keys:
                pipe.execute_command("ZINTERCARD", 2, b.game(g), b.status(s))
            counts = await pipe.execute()
        out: dict[tuple[str, str], int] = {}
        for (_, g, s), n in zip(keys, counts, strict=True):
            if n:
                out[(g, s.value)] = out.get((g, s.value), 0) + int(n)
        return out

    # --- ladders ------------------------------------------------------------------------
    def _ladder_keys(self, ladder: str) -> tuple[str, str, str]:
        """(ratings, matches, rated tables) keys."""
        p = self._ladder_base
        return f"{p}lad:r:{ladder}", f"{p}lad:m:{ladder}", f"{p}lad:t"

    async def ratings(self, ladder: str, game: str = "") -> Ratings:
        with _reachable():
            found = await self._redis.hgetall(self._ladder_keys(ladder)[0])
        out: Ratings = []
        for name, value in found.items():
            g, _, entrant = name.decode().partition("/")
            if not game or g == game:
                out.append(Rating.from_json(ladder, g, entrant, json.loads(value)))
        return sort_ratings(out)

    async def rated_match(self, ladder: str, match_id: str) -> RatedMatch | None:
        with _reachable():
            found = await self._redis.hget(self._ladder_keys(ladder)[1], match_id)
        return None if found is None else RatedMatch.from_json(ladder, match_id, json.loads(found))

    async def rate(self, match: RatedMatch, update: RatingUpdate) -> RatedMatch | None:
        ratings_key, matches_key, tables_key = self._ladder_keys(match.ladder)
        fields = [f"{match.game}/{e}" for e in match.entrants]
        with _reachable():
            async with self._redis.pipeline(transaction=True) as pipe:
                while True:
                    try:
                        await pipe.watch(ratings_key, matches_key, tables_key)
                        stored = await pipe.hget(matches_key, match.match_id)
                        if stored is not None:
                            return RatedMatch.from_json(match.ladder, match.match_id,
                                                        json.loads(stored))
                        taken = await pipe.hmget(tables_key, list(match.table_ids))
                        refused = [(t, o.decode()) for t, o in zip(match.table_ids, taken,
                                                                   strict=True) if o is not None]
                        if refused:
                            # the reads are not one snapshot: a rating landing between them
                            # (this very match's, by another replica) makes this empty EXEC
                            # fail, and the loop reads again
                            pipe.multi()
                            await pipe.execute()
                            raise TableRated(*refused[0])
                        values = await pipe.hmget(ratings_key, fields)
                        current = {
                            e: Rating.from_json(match.ladder, match.game, e, json.loads(v))
                            for e, v in zip(match.entrants, values, strict=True) if v is not None
                        }
                        new = update(current)
                        pipe.multi()
                        pipe.hset(ratings_key, mapping={
                            f"{r.game}/{r.entrant}": json.dumps(r.to_json()) for r in new
                        })
                        pipe.hset(matches_key, match.match_id, json.dumps(match.to_json()))
                        pipe.hset(tables_key, mapping={t: match.match_id
                                                       for t in match.table_ids})
                        queue_history(pipe, self._ladder_base, match, new)
                        await pipe.execute()
                        return None
                    except WatchError:
                        continue  # another rating landed meanwhile: read again

    async def rating_history(self, ladder: str, game: str, entrant: str, limit: int = 100
                             ) -> RatingPoints:
        with _reachable():
            return await read_history(self._redis, self._ladder_base, ladder, game, entrant, limit)

    async def entrant_names(self, ladder: str, entrants: Sequence[str]) -> dict[str, str]:
        with _reachable():
            return await read_names(self._redis, self._ladder_base, ladder, entrants)

    # --- waiting ------------------------------------------------------------------------
    notifies_changes = True

    async def wait_for_change(self, table_id: str, after_version: int, timeout: float) -> None:
        await self.reader_of(table_id).wait(table_id, after_version, timeout)

    def reader_of(self, table_id: str) -> _Reader:
        """The reader that waits on the table's stream: the store's one on a plain Redis, its
        bucket's on a cluster."""
        bucket = self.bucket(table_id) if self.cluster else None
        reader = self._readers.get(bucket or 0)
        if reader is None:
            reader = self._readers[bucket or 0] = _Reader(self, bucket)
        return reader

    async def ping(self) -> None:
        with _reachable():
            await self._redis.ping()

    async def close(self) -> None:
        for reader in self._readers.values():
            await reader.close()
        await close_client(self._redis)
