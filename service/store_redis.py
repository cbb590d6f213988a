"""Redis store: what several server replicas share.

URL: `redis://host:port/db?prefix=croupier:&retention=86400` (`rediss://` for TLS), or the
primary that Redis Sentinel names, `redis+sentinel://host:26379,host:26379/service/db?...`
(clients: `service.redis_connect`; writes acknowledged once replicas hold them, with
`wait_replicas`: `service.redis_acks`). Every key starts with the prefix, so several
deployments (or test runs) can share one Redis.

Layout, per table `<id>`:
- `<prefix>t:<id>`: a hash, the record (the engine state as bytes in one field).
- `<prefix>e:<id>`: a Stream, the event log; the entry id of version v is `0-v`, so
  "events after v" is one XRANGE from `0-(v+1)`, and a blocking XREAD from `0-v` wakes on the
  next event whichever replica wrote it.
- Lobby indexes, sorted sets of table ids: `idx:created` and `idx:game:<game>` (score:
  created_at), `idx:status:<status>` (created_at), `idx:bot_open` (bot_open_at) and
  `idx:fill_due` (fill_due_at), so ListTables and "tables waiting for a bot" read a range of
  one index instead of scanning every table. `idx:idle:waiting` and `idx:idle:playing`
  (score: seen_at) hold the watched open tables, for the round that closes abandoned ones.
- A person's presence (`touch`) is a script of its own: it raises the record's `seen_at` and
  its score in the idle index, never the version.
- Players' tables (a sorted set per player, written by the record's own script) and seats'
  presence (a hash per table): `service.store_redis_players`.
- Ladders (never expire): `lad:r:<ladder>`, a hash `<game>/<entrant>` -> the rating as JSON;
  `lad:m:<ladder>`, a hash match id -> the rated match as JSON; `lad:t`, a hash table id ->
  the match id it was rated under. A rating is one WATCH/MULTI/EXEC over the three: of two
  replicas racing to rate one match, the second's EXEC fails, it reads again and finds the
  match rated. Rated tables of people add their history and names in the same EXEC
  (`service.rating_history_redis`).

Every write is one Lua script, atomic in Redis: check the version (the compare-and-set), write
the record, XADD the events, update the indexes, and, when the table finishes and a retention is
set, EXPIRE its record and stream. Bot-seat claims need nothing more: JoinTable commits with the
version it read, so of two racing joins of one seat exactly one lands.

Ids of expired tables stay in the indexes until a listing meets them and drops them.

Waiting for a change: one reader task per store holds a dedicated connection blocked in one
XREAD over the streams of every table some stream subscriber waits on, and wakes those waiters
when their table's stream moves. A subscriber for a table not yet in the XREAD unblocks the
reader (CLIENT UNBLOCK, through the ordinary pool) so that it blocks again with the new key
set. One connection per replica whatever the number of subscribers, rather than one blocked
connection per subscriber.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import time
from collections.abc import Iterator, Sequence
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError, ResponseError, WatchError
from redis.exceptions import TimeoutError as RedisTimeoutError

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
from service.redis_connect import dedicated, parse_store_url, pooled, refused_by_primary
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
    except (RedisConnectionError, RedisTimeoutError) as e:
        raise StoreUnavailable(f"Redis: {type(e).__name__}: {e}") from None
    except ResponseError as e:
        if not refused_by_primary(e):
            raise
        raise StoreUnavailable(f"Redis: {e}") from None


def _num(value: float | None) -> str:
    return "" if value is None else repr(float(value))


class _Reader:
    """One blocked XREAD over every watched stream, fanning wake-ups out to the waiters."""

    def __init__(self, store: RedisStore) -> None:
        self._store = store
        # table id -> {future: the version its waiter has seen}
        self._waiters: dict[str, dict[asyncio.Future[None], int]] = {}
        self._task: asyncio.Task[None] | None = None
        self._conn: aioredis.Redis | None = None
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
        with contextlib.suppress(RedisConnectionError, RedisTimeoutError):
            await self._store._redis.client_unblock(client_id)

    def _streams(self) -> dict[str, int]:
        """Table -> the lowest version a waiter still waiting on it has seen."""
        out: dict[str, int] = {}
        for table_id, waiters in self._waiters.items():
            pending = [after for fut, after in waiters.items() if not fut.done()]
            if pending:
                out[table_id] = min(pending)
        return out

    async def _run(self) -> None:
        if self._conn is None:
            self._conn = self._store._new_connection(socket_timeout=READER_SOCKET_TIMEOUT)
        conn = self._conn
        prefix_len = len(self._store._stream_key(""))
        while True:
            reading = self._streams()
            if not reading:
                return
            try:
                if self._client_id is None:
                    self._client_id = int(await conn.client_id())
                    if self._lost is not None:
                        down = round(time.monotonic() - self._lost, 2)
                        log.info("stream_reader_reconnected", down_s=down)
                        self._lost = None
                    continue  # waiters came or went meanwhile: read the key set again
                self._reading = reading
                found = await conn.xread(
                    {self._store._stream_key(t): f"0-{v}" for t, v in reading.items()},
                    count=1,
                    block=READER_BLOCK_MS,
                )
            except RedisError as e:
                # Redis gone (killed, restarting, loading its data) or an unexpected reply:
                # the connection reconnects on the next command, as another client (hence a new
                # client id); waiters fall back on their own timeouts meanwhile
                if self._lost is None:
                    self._lost = time.monotonic()
                    log.warning("stream_reader_lost_redis", error=f"{type(e).__name__}: {e}")
                self._client_id = None
                self._reading = {}
                await asyncio.sleep(READER_RETRY_SECONDS)
                continue
            self._reading = {}
            for key, entries in found or ():
                if not entries:
                    continue
                table_id = (key.decode() if isinstance(key, bytes) else key)[prefix_len:]
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


POOL_CONNECTIONS = 64
POOL_WAIT_SECONDS = 10.0


_Records = list[TableRecord]  # spelt out here: inside the store, `list` is its listing method
_Strings = list[str]
_Ids = list[bytes]


class RedisStore(RedisPlayers, Store):
    def __init__(self, url: str, prefix: str | None = None, retention: float | None = None):
        parsed = parse_store_url(url)
        self._url = parsed.url
        self.prefix = parsed.prefix if prefix is None else prefix
        self.retention = parsed.retention if retention is None else retention
        # a blocking pool: past POOL_CONNECTIONS calls in flight, a call waits for a free
        # connection instead of failing (redis-py 8's default pool refuses the 101st at once,
        # which turned 100 busy tables into UNAVAILABLE answers)
        self._redis: aioredis.Redis = pooled(
            self._url, max_connections=POOL_CONNECTIONS, pool_timeout=POOL_WAIT_SECONDS
        )
        self._acks = Acknowledger(self._redis, parsed.ack)
        self._script = self._redis.register_script(COMMIT_LUA)
        self._touch = self._redis.register_script(TOUCH_LUA)
        self._seats_json = SeatsJson()
        self._reader = _Reader(self)
        p = self.prefix
        self._idx_created = f"{p}idx:created"
        self._idx_bot_open = f"{p}idx:bot_open"
        self._idx_fill_due = f"{p}idx:fill_due"
        self._idx_paused = f"{p}idx:paused"  # tables in a pause between deals, by its end
        self._idx_timed = f"{p}idx:timed"  # timed tables while playing
        self._games = f"{p}idx:games"  # the names of the games with a game index
        # watched open tables by seen_at: what the abandonment round reads
        self._idx_idle = {s: f"{p}idx:idle:{s.value}" for s in (Status.WAITING, Status.PLAYING)}

    @property
    def client(self) -> aioredis.Redis:
        """The store's connection pool, for what lives beside the tables (guest keys)."""
        return self._redis

    def _new_connection(self, **options: Any) -> aioredis.Redis:
        return dedicated(self._url, **options)

    # --- keys ---------------------------------------------------------------------------
    def _record_key(self, table_id: str) -> str:
        return f"{self.prefix}t:{table_id}"

    def _stream_key(self, table_id: str) -> str:
        return f"{self.prefix}e:{table_id}"

    def _status_key(self, status: Status | str) -> str:
        return f"{self.prefix}idx:status:{Status(status).value}"

    def _game_key(self, game: str) -> str:
        return f"{self.prefix}idx:game:{game}"

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
        keys = [
            self._record_key(record.table_id),
            self._stream_key(record.table_id),
            self._idx_created,
            self._idx_bot_open,
            self._idx_fill_due,
            self._status_key(Status.WAITING),
            self._status_key(Status.PLAYING),
            self._status_key(Status.FINISHED),
            self._game_key(record.game),
            self._games,
            self._idx_timed,
            self._status_key(Status.ABANDONED),
            self._idx_idle[Status.WAITING],
            self._idx_idle[Status.PLAYING],
            self._idx_paused,
        ]
        for player in players_of(record):
            keys += self.player_keys(player)
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
        keys = [
            self._record_key(table_id),
            self._idx_idle[Status.WAITING],
            self._idx_idle[Status.PLAYING],
        ]
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
        # the narrowest index answers; the other conditions are checked on the records
        if flt.idle_before is not None:
            statuses = [flt.status] if flt.status is not None else list(self._idx_idle)
            idle: _Ids = []
            for status in statuses:
                if status in self._idx_idle:
                    idle += await self._redis.zrangebyscore(
                        self._idx_idle[status], "-inf", f"({float(flt.idle_before)!r}",
                        start=0, num=flt.limit,
                    )
            return await self._pick(idle, flt, sort=True)
        if flt.pause_due_before is not None:
            ids = await self._redis.zrangebyscore(
                self._idx_paused, "-inf", flt.pause_due_before, start=0, num=flt.limit
            )
            return await self._pick(ids, flt, sort=False)
        if flt.bot_open_before is not None:
            ids = await self._redis.zrangebyscore(self._idx_bot_open, "-inf", flt.bot_open_before)
            return await self._pick(ids, flt, sort=True)
        if flt.fill_due_before is not None:
            ids = await self._redis.zrangebyscore(self._idx_fill_due, "-inf", flt.fill_due_before)
            return await self._pick(ids, flt, sort=True)
        if flt.timed and flt.status == Status.PLAYING:
            key = self._idx_timed
        elif flt.status is not None:
            key = self._status_key(flt.status)
        elif flt.game:
            key = self._game_key(flt.game)
        else:
            key = self._idx_created
        found: _Records = []
        start = 0
        while len(found) < flt.limit:
            # newest first; ties on created_at broken by id, as the other stores do; from the
            # page's cursor on (the cursor's own created_at included: `matches` drops the ids
            # at or before it)
            if flt.after is None:
                ids = await self._redis.zrevrange(key, start, start + LIST_PAGE - 1)
            else:
                ids = await self._redis.zrevrangebyscore(
                    key, flt.after[0], "-inf", start=start, num=LIST_PAGE
                )
            if not ids:
                break
            found.extend(await self._pick(ids, flt, sort=False))
            start += LIST_PAGE
        return found[: flt.limit]

    async def _pick(self, ids: Sequence[bytes], flt: TableFilter, sort: bool) -> _Records:
        """The records of `ids` that match, dropping ids of expired tables from the indexes."""
        if not ids:
            return []
        names = [i.decode() for i in ids]
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
        keys = [self._idx_created, self._idx_bot_open, self._idx_fill_due, self._idx_timed,
                self._idx_paused, *self._idx_idle.values()]
        keys += [self._status_key(s) for s in Status]
        for game in await self._redis.smembers(self._games):
            keys.append(self._game_key(game.decode()))
        async with self._redis.pipeline(transaction=False) as pipe:
            for key in keys:
                pipe.zrem(key, *table_ids)
            await pipe.execute()

    async def count_tables(self) -> dict[tuple[str, str], int]:
        """From the indexes: ZINTERCARD of each game's and each status's (ids of expired
        tables count until a listing drops them)."""
        games = sorted(g.decode() for g in await self._redis.smembers(self._games))
        keys = [(g, s) for g in games for s in Status]
        async with self._redis.pipeline(transaction=False) as pipe:
            for g, s in keys:
                pipe.execute_command("ZINTERCARD", 2, self._game_key(g), self._status_key(s))
            counts = await pipe.execute()
        return {(g, s.value): int(n) for (g, s), n in zip(keys, counts, strict=True) if n}

    # --- ladders ------------------------------------------------------------------------
    def _ladder_keys(self, ladder: str) -> tuple[str, str, str]:
        """(ratings, matches, rated tables) keys."""
        p = self.prefix
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
                        queue_history(pipe, self.prefix, match, new)
                        await pipe.execute()
                        return None
                    except WatchError:
                        continue  # another rating landed meanwhile: read again

    async def rating_history(self, ladder: str, game: str, entrant: str, limit: int = 100
                             ) -> RatingPoints:
        with _reachable():
            return await read_history(self._redis, self.prefix, ladder, game, entrant, limit)

    async def entrant_names(self, ladder: str, entrants: Sequence[str]) -> dict[str, str]:
        with _reachable():
            return await read_names(self._redis, self.prefix, ladder, entrants)

    # --- waiting ------------------------------------------------------------------------
    notifies_changes = True

    async def wait_for_change(self, table_id: str, after_version: int, timeout: float) -> None:
        await self._reader.wait(table_id, after_version, timeout)

    async def ping(self) -> None:
        with _reachable():
            await self._redis.ping()

    async def close(self) -> None:
        await self._reader.close()
        await self._redis.aclose(close_connection_pool=True)
