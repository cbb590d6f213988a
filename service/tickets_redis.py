"""Tickets in the table store's Redis (same URL, same key prefix), shared by every replica.

Layout, under the prefix:
- `mm:t:<id>`: a hash, the ticket (one field per `Ticket` field, plus `queue`).
- `mm:q:<queue>`: a sorted set of the queue's waiting ticket ids (score: created_at).
- `mm:queues`: the set of queues that may have waiting tickets.
- `mm:open`: a hash `<game>/<player>` -> the player's waiting ticket of that game.
- `mm:l:<queue>`: the queue's lease (owner, with an expiry).

Every write is one Lua script, atomic in Redis: opening (one open ticket per player and game),
claiming a group (all waiting and alive, or nothing written), cancelling, expiring. Two
replicas racing on one ticket: the second script finds it matched and writes nothing. Finished
tickets expire from Redis after KEEP_FINISHED_SECONDS. The scripts name the keys they touch
from the base they are given (a ticket's queue is known only once its hash is read).

On a Redis Cluster every key above carries the hash tag `{mm}` after the prefix
(`<prefix>{mm}mm:t:<id>`, ...): all of matchmaking lives in one slot, so that a script may
touch any of its keys (a cluster refuses a script whose keys span slots). Each script names
`mm:queues` as its one declared key, which routes it to that slot's primary. Matchmaking is
small (tickets live minutes), one slot carries it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

from redis.exceptions import ResponseError

from service.redis_connect import (
    OUTAGES,
    Client,
    close_client,
    is_cluster,
    pooled,
    refused_by_primary,
)
from service.store import StoreUnavailable
from service.store_redis import POOL_CONNECTIONS, POOL_WAIT_SECONDS
from service.tickets import (
    KEEP_FINISHED_SECONDS,
    Ticket,
    TicketConflict,
    TicketStatus,
    TicketStore,
)

FIELDS = ("ticket_id", "player_id", "name", "game", "players", "options", "mode", "status",
          "created_at", "alive_until", "table_id", "seat", "rating", "matched_at")

# a finished ticket leaves its queue and the player's open slot, and expires later
# (ARGV of the caller: the keys' base first; `finish(key, id, status, keep)`)
FINISH = """
local function finish(key, id, status, keep)
  local queue = redis.call('HGET', key, 'queue')
  local slot = redis.call('HGET', key, 'game') .. '/' .. redis.call('HGET', key, 'player_id')
  redis.call('HSET', key, 'status', status)
  redis.call('ZREM', ARGV[1] .. 'mm:q:' .. queue, id)
  if redis.call('ZCARD', ARGV[1] .. 'mm:q:' .. queue) == 0 then
    redis.call('SREM', ARGV[1] .. 'mm:queues', queue)
  end
  if redis.call('HGET', ARGV[1] .. 'mm:open', slot) == id then
    redis.call('HDEL', ARGV[1] .. 'mm:open', slot)
  end
  redis.call('EXPIRE', key, keep)
end
local function alive(key, now)
  return redis.call('HGET', key, 'status') == 'waiting'
    and tonumber(redis.call('HGET', key, 'alive_until')) >= now
end
"""

# ARGV: the keys' base, keep, now (the new ticket's created_at), slot, id, queue, alive_until,
#       then field/value pairs of the new ticket
OPEN_LUA = FINISH + """
local now = tonumber(ARGV[3])
local found = redis.call('HGET', ARGV[1] .. 'mm:open', ARGV[4])
if found then
  local key = ARGV[1] .. 'mm:t:' .. found
  if redis.call('HGET', key, 'status') == 'waiting' then
    if alive(key, now) then
      if redis.call('HGET', key, 'queue') ~= ARGV[6] then return {'other', found} end
      if tonumber(redis.call('HGET', key, 'alive_until')) < tonumber(ARGV[7]) then
        redis.call('HSET', key, 'alive_until', ARGV[7])
      end
      return {'same', found}
    end
    finish(key, found, 'expired', tonumber(ARGV[2]))
  end
end
local key = ARGV[1] .. 'mm:t:' .. ARGV[5]
local fields = {}
for i = 8, #ARGV do fields[#fields + 1] = ARGV[i] end
redis.call('HSET', key, 'queue', ARGV[6], unpack(fields))
redis.call('ZADD', ARGV[1] .. 'mm:q:' .. ARGV[6], now, ARGV[5])
redis.call('SADD', ARGV[1] .. 'mm:queues', ARGV[6])
redis.call('HSET', ARGV[1] .. 'mm:open', ARGV[4], ARGV[5])
return {'new', ARGV[5]}
"""

# ARGV: the keys' base, keep, now, table id, n, n ids, n seats
CLAIM_LUA = FINISH + """
local now = tonumber(ARGV[3])
local n = tonumber(ARGV[5])
for i = 1, n do
  if not alive(ARGV[1] .. 'mm:t:' .. ARGV[5 + i], now) then return 0 end
end
for i = 1, n do
  local key = ARGV[1] .. 'mm:t:' .. ARGV[5 + i]
  redis.call('HSET', key, 'table_id', ARGV[4], 'seat', ARGV[5 + n + i], 'matched_at', ARGV[3])
  finish(key, ARGV[5 + i], 'matched', tonumber(ARGV[2]))
end
return 1
"""

# ARGV: the keys' base, keep, now, id
CANCEL_LUA = FINISH + """
local key = ARGV[1] .. 'mm:t:' .. ARGV[4]
if redis.call('HGET', key, 'status') ~= 'waiting' then return 0 end
if alive(key, tonumber(ARGV[3])) then
  finish(key, ARGV[4], 'cancelled', tonumber(ARGV[2]))
else
  finish(key, ARGV[4], 'expired', tonumber(ARGV[2]))
end
return 1
"""

# ARGV: the keys' base, keep, now, ids...
EXPIRE_LUA = FINISH + """
local now = tonumber(ARGV[3])
local done = 0
for i = 4, #ARGV do
  local key = ARGV[1] .. 'mm:t:' .. ARGV[i]
  if redis.call('HGET', key, 'status') == 'waiting'
      and tonumber(redis.call('HGET', key, 'alive_until')) < now then
    finish(key, ARGV[i], 'expired', tonumber(ARGV[2]))
    done = done + 1
  end
end
return done
"""

# ARGV: the keys' base, now, id, alive_until
TOUCH_LUA = """
local key = ARGV[1] .. 'mm:t:' .. ARGV[3]
if redis.call('HGET', key, 'status') ~= 'waiting' then return 0 end
local until_ = tonumber(redis.call('HGET', key, 'alive_until'))
if until_ < tonumber(ARGV[2]) or until_ >= tonumber(ARGV[4]) then return 0 end
redis.call('HSET', key, 'alive_until', ARGV[4])
return 1
"""

# KEYS: the lease; ARGV: owner, milliseconds
LEASE_LUA = """
local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
"""


@contextlib.contextmanager
def _reachable() -> Iterator[None]:
    try:
        yield
    except OUTAGES as e:
        raise StoreUnavailable(f"Redis: {type(e).__name__}: {e}") from None
    except ResponseError as e:
        if not refused_by_primary(e):
            raise
        raise StoreUnavailable(f"Redis: {e}") from None


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _ticket(h: dict[Any, Any]) -> Ticket | None:
    data = {_text(k): _text(v) for k, v in h.items()}
    if "ticket_id" not in data:
        return None
    return Ticket.from_json(data)


class RedisTickets(TicketStore):
    def __init__(self, url: str, prefix: str, keep: float = KEEP_FINISHED_SECONDS) -> None:
        self.prefix = prefix
        # where every key starts: the prefix, and on a cluster the one slot's hash tag
        self.base = f"{prefix}{{mm}}" if is_cluster(url) else prefix
        self._keep = str(int(keep))
        # as the table store's client: on one Redis a blocking pool, past its size a call
        # waits for a connection rather than failing (a crowd calling FindMatch at once)
        self._redis: Client = pooled(
            url, max_connections=POOL_CONNECTIONS, pool_timeout=POOL_WAIT_SECONDS)
        self._route = [f"{self.base}mm:queues"]  # the scripts' declared key (module docstring)
        self._open = self._redis.register_script(OPEN_LUA)
        self._claim = self._redis.register_script(CLAIM_LUA)
        self._cancel = self._redis.register_script(CANCEL_LUA)
        self._expire = self._redis.register_script(EXPIRE_LUA)
        self._touch = self._redis.register_script(TOUCH_LUA)
        self._lease = self._redis.register_script(LEASE_LUA)

    def _key(self, ticket_id: str) -> str:
        return f"{self.base}mm:t:{ticket_id}"

    async def get(self, ticket_id: str) -> Ticket | None:
        with _reachable():
            return _ticket(await self._redis.hgetall(self._key(ticket_id)))

    async def open(self, ticket: Ticket) -> tuple[Ticket, bool]:
        pairs: list[Any] = []
        for name, value in ticket.to_json().items():
            pairs += [name, repr(value) if isinstance(value, float) else str(value)]
        args = [self.base, self._keep, repr(ticket.created_at),
                f"{ticket.game}/{ticket.player_id}", ticket.ticket_id, ticket.queue,
                repr(ticket.alive_until), *pairs]
        with _reachable():
            outcome, found = await self._open(keys=self._route, args=args)
        outcome, found = _text(outcome), _text(found)
        if outcome == "new":
            return ticket, True
        stored = await self.get(found)
        if stored is None:  # expired from Redis between the two calls: as good as gone
            return await self.open(ticket)
        if outcome == "other":
            raise TicketConflict(stored)
        return stored, False

    async def touch(self, ticket_id: str, alive_until: float, now: float) -> Ticket | None:
        with _reachable():
            await self._touch(keys=self._route,
                              args=[self.base, repr(now), ticket_id, repr(alive_until)])
        return await self.get(ticket_id)

    async def cancel(self, ticket_id: str, now: float) -> Ticket | None:
        with _reachable():
            await self._cancel(keys=self._route, args=[self.base, self._keep, repr(now), ticket_id])
        return await self.get(ticket_id)

    async def waiting(self, queue: str, limit: int = 10_000) -> list[Ticket]:
        with _reachable():
            ids = await self._redis.zrange(f"{self.base}mm:q:{queue}", 0, limit - 1)
            if not ids:
                return []
            async with self._redis.pipeline(transaction=False) as pipe:
                for ticket_id in ids:
                    pipe.hgetall(self._key(_text(ticket_id)))
                rows = await pipe.execute()
        found = [_ticket(h) for h in rows]
        # a ticket finished between the two reads is left out
        return [t for t in found if t is not None and t.status == TicketStatus.WAITING]

    async def queues(self) -> list[str]:
        with _reachable():
            return sorted(_text(q) for q in await self._redis.smembers(f"{self.base}mm:queues"))

    async def count(self, queue: str) -> int:
        with _reachable():
            return int(await self._redis.zcard(f"{self.base}mm:q:{queue}"))

    async def expire(self, ticket_ids: Sequence[str], now: float) -> int:
        if not ticket_ids:
            return 0
        with _reachable():
            return int(await self._expire(keys=self._route,
                                          args=[self.base, self._keep, repr(now), *ticket_ids]))

    async def claim(
        self, ticket_ids: Sequence[str], table_id: str, seats: Sequence[int], now: float
    ) -> bool:
        if len(ticket_ids) != len(seats) or len(set(ticket_ids)) != len(ticket_ids):
            raise ValueError("one seat per ticket, each ticket once")
        args = [self.base, self._keep, repr(now), table_id, str(len(ticket_ids)),
                *ticket_ids, *(str(s) for s in seats)]
        with _reachable():
            return bool(await self._claim(keys=self._route, args=args))

    async def lease(self, queue: str, owner: str, seconds: float, now: float) -> bool:
        key = f"{self.base}mm:l:{queue}"
        with _reachable():
            return bool(await self._lease(keys=[key], args=[owner, str(max(1, int(seconds * 1000)))]))

    async def purge(self, before: float) -> int:
        return 0  # finished tickets expire in Redis by themselves

    async def close(self) -> None:
        await close_client(self._redis)
