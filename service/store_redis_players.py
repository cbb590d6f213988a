"""The Redis store's index from players to their tables, and its presence maps.

Per player, two sorted sets of table ids named with the player in a hash tag (so that a
cluster keeps one player's keys together): `<prefix>pl:{<player>}:open` (score: created_at),
the open tables whose seats named the player when written, and `<prefix>pl:{<player>}:closed`
(score: when the table closed), the closed ones. The record's write script
(`service.store_redis.COMMIT_LUA`) updates both in its atomic step; a table that closes moves
from the first to the second. With a retention, closed entries older than it are dropped as
new ones come (their records have expired). Entries of tables that expired or closed without
naming the player are dropped when a listing meets them.

Per table, `<prefix>pr:{<table id>}`: a hash seat -> last seen (unix seconds), only ever raised
(a small script), expiring a day after its last write: a seat unseen that long is gone anyway.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator
from typing import Any

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from service.model import TableRecord
from service.player_index import belongs
from service.redis_connect import refused_by_primary
from service.store import StoreUnavailable

# ids read per round from a player's set of open tables while a listing fills its page
CHUNK = 100
# most recently closed tables a listing looks at (more finished within the window are left out)
MAX_RECENT_CLOSED = 1000
PRESENCE_TTL_SECONDS = 86_400

# the players' part of COMMIT_LUA, at its end: KEYS[16], KEYS[17], ... are pairs (open, closed)
# per player the record names; the record's `closed_at` field is set when it is closed
PLAYERS_LUA = """
if #KEYS > 15 then
  local closed = redis.call('HGET', KEYS[1], 'closed_at')
  for k = 16, #KEYS, 2 do
    if closed then
      redis.call('ZREM', KEYS[k], id)
      redis.call('ZADD', KEYS[k + 1], closed, id)
      if retention > 0 then
        redis.call('ZREMRANGEBYSCORE', KEYS[k + 1], '-inf', '(' .. (tonumber(closed) - retention))
      end
    else
      redis.call('ZADD', KEYS[k], created, id)
    end
  end
end
"""

# KEYS: the table's presence hash; ARGV: seat, seen at, time to live (s)
MARK_PRESENT_LUA = """
local stored = redis.call('HGET', KEYS[1], ARGV[1])
if (not stored) or tonumber(stored) < tonumber(ARGV[2]) then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
end
redis.call('EXPIRE', KEYS[1], ARGV[3])
"""


@contextlib.contextmanager
def _reachable() -> Iterator[None]:
    """As service.store_redis's: connection failures are StoreUnavailable."""
    try:
        yield
    except (RedisConnectionError, RedisTimeoutError) as e:
        raise StoreUnavailable(f"Redis: {type(e).__name__}: {e}") from None
    except ResponseError as e:
        if not refused_by_primary(e):
            raise
        raise StoreUnavailable(f"Redis: {e}") from None


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


class RedisPlayers:
    """Mixed into RedisStore: its connection, prefix and record decoder."""

    _redis: Any
    prefix: str

    @staticmethod
    def _record(table_id: str, h: dict[bytes, bytes]) -> TableRecord:
        raise NotImplementedError

    def _record_key(self, table_id: str) -> str:
        raise NotImplementedError

    def player_keys(self, player_id: str) -> tuple[str, str]:
        """(open tables, closed tables) of a player."""
        return (f"{self.prefix}pl:{{{player_id}}}:open", f"{self.prefix}pl:{{{player_id}}}:closed")

    def presence_key(self, table_id: str) -> str:
        return f"{self.prefix}pr:{{{table_id}}}"

    async def player_tables(
        self,
        player_id: str,
        after: tuple[float, str] | None = None,
        limit: int = 100,
        closed_since: float | None = None,
        game: str = "",
    ) -> list[TableRecord]:
        with _reachable():
            return await self._player_tables(player_id, after, limit, closed_since, game)

    async def _player_tables(
        self,
        player_id: str,
        after: tuple[float, str] | None,
        limit: int,
        closed_since: float | None,
        game: str,
    ) -> list[TableRecord]:
        open_key, closed_key = self.player_keys(player_id)
        closed_at: dict[str, float] = {}
        if closed_since is not None:  # read first: a table closing meanwhile is not seen twice
            pairs = await self._redis.zrevrangebyscore(
                closed_key, "+inf", closed_since, start=0, num=MAX_RECENT_CLOSED, withscores=True
            )
            closed_at = {_text(m): float(s) for m, s in pairs}
        found: list[TableRecord] = []
        batch: list[tuple[str, str]] = []  # (table id, the set it came from)
        async for item in self._candidates(open_key, closed_at, after):
            batch.append(item)
            if len(batch) >= limit - len(found) + 8:
                found += await self._keep(batch, player_id, after, game, closed_at, closed_since)
                batch = []
                if len(found) >= limit:
                    break
        if batch and len(found) < limit:
            found += await self._keep(batch, player_id, after, game, closed_at, closed_since)
        return found[:limit]

    async def _candidates(
        self, open_key: str, closed_at: dict[str, float], after: tuple[float, str] | None
    ) -> AsyncIterator[tuple[str, str]]:
        """Ids of the player's open and recently closed tables, newest first (by created_at,
        then id), past `after`."""
        closed: list[tuple[float, str]] = []
        if closed_at:
            async with self._redis.pipeline(transaction=False) as pipe:
                for t in closed_at:
                    pipe.hget(self._record_key(t), "created_at")
                made = await pipe.execute()
            closed = sorted(
                ((float(c), t) for t, c in zip(closed_at, made, strict=True) if c is not None),
                reverse=True,
            )
            closed = [c for c in closed if after is None or c < after]
        top = "+inf" if after is None else repr(float(after[0]))
        start, done = 0, False
        opened: list[tuple[float, str]] = []
        seen: set[str] = set()
        while True:
            if not opened and not done:
                page = await self._redis.zrevrangebyscore(
                    open_key, top, "-inf", start=start, num=CHUNK, withscores=True
                )
                start += CHUNK
                done = len(page) < CHUNK
                opened = sorted(((float(s), _text(m)) for m, s in page), reverse=True)
                opened = [o for o in opened if after is None or o < after]
                if not opened and not done:
                    continue
            if opened and (not closed or opened[0] >= closed[0]):
                key, where = opened.pop(0), open_key
            elif closed:
                key, where = closed.pop(0), ""
            else:
                return
            if key[1] not in seen:
                seen.add(key[1])
                yield key[1], where

    async def _keep(
        self,
        batch: list[tuple[str, str]],
        player_id: str,
        after: tuple[float, str] | None,
        game: str,
        closed_at: dict[str, float],
        closed_since: float | None,
    ) -> list[TableRecord]:
        """The records of `batch` that stay in the listing, in its order; open-set entries of
        tables gone or closed are dropped from that set."""
        async with self._redis.pipeline(transaction=False) as pipe:
            for table_id, _ in batch:
                pipe.hgetall(self._record_key(table_id))
            rows = await pipe.execute()
        kept: list[TableRecord] = []
        open_key, closed_key = self.player_keys(player_id)
        stale: dict[str, list[str]] = {open_key: [], closed_key: []}
        for (table_id, where), h in zip(batch, rows, strict=True):
            if not h:  # expired
                stale[where or closed_key].append(table_id)
                continue
            record = self._record(table_id, h)
            if where and record.status.closed:
                stale[open_key].append(table_id)  # it closed without naming the player
                continue
            closed = closed_at.get(table_id)
            if belongs(record, player_id, after, game, closed, closed_since):
                kept.append(record)
        for key, ids in stale.items():
            if ids:
                await self._redis.zrem(key, *ids)
        return kept

    async def mark_present(self, table_id: str, seat: int, at: float) -> None:
        script = self.__dict__.get("_mark_present")
        if script is None:
            script = self.__dict__["_mark_present"] = self._redis.register_script(
                MARK_PRESENT_LUA
            )
        with _reachable():
            await script(
                keys=[self.presence_key(table_id)],
                args=[seat, repr(float(at)), PRESENCE_TTL_SECONDS],
            )

    async def presence(self, table_id: str) -> dict[int, float]:
        with _reachable():
            found = await self._redis.hgetall(self.presence_key(table_id))
        return {int(s): float(t) for s, t in found.items()}
