"""The Redis store's index from players to their tables, and its presence maps.

Per player and bucket (`service.store_redis`), two sorted sets of table ids:
`<prefix><tag>pl:{<player>}:open` (score: created_at), the open tables of the bucket whose
seats named the player when written, and `<prefix><tag>pl:{<player>}:closed` (score: when the
table closed), the closed ones. `<tag>` is the bucket's hash tag (`{b<k>}`, none on a plain
Redis with one bucket): the first braces of a key name its slot, so the player's own braces
(kept from the layout before buckets) change nothing on a cluster, and the sets sit in the
slot of the tables they list. The record's write script (`service.store_redis.COMMIT_LUA`)
updates both in its atomic step; a table that closes moves from the first to the second. A
listing merges the player's sets of every bucket. With a retention, closed entries older than it are dropped as
new ones come (their records have expired). Entries of tables that expired or closed without
naming the player are dropped when a listing meets them.

Per table, `<prefix><tag>pr:{<table id>}` (its bucket's tag): a hash seat -> last seen (unix seconds), only ever raised
(a small script), expiring a day after its last write: a seat unseen that long is gone anyway.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

from redis.exceptions import ResponseError

from service.model import TableRecord
from service.player_index import belongs
from service.redis_connect import OUTAGES, refused_by_primary
from service.store import StoreUnavailable

# ids read per round from a player's set of open tables while a listing fills its page
CHUNK = 100
# most recently closed tables a listing looks at (more finished within the window are left out)
MAX_RECENT_CLOSED = 1000
# ids read per bucket and round when a player's sets of several buckets are merged
MIN_PAGE = 16
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
    except OUTAGES as e:
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

    def _table_base(self, table_id: str) -> str:
        raise NotImplementedError

    def _bases(self) -> list[str]:
        raise NotImplementedError

    def newest(
        self, keys: Sequence[str], top: float | str, page: int
    ) -> AsyncIterator[tuple[float, str]]:
        raise NotImplementedError

    @staticmethod
    def player_keys(player_id: str, base: str) -> tuple[str, str]:
        """(open tables, closed tables) of a player in the bucket whose keys start with
        `base` (prefix and hash tag)."""
        return f"{base}pl:{{{player_id}}}:open", f"{base}pl:{{{player_id}}}:closed"

    def presence_key(self, table_id: str) -> str:
        return f"{self._table_base(table_id)}pr:{{{table_id}}}"

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
        sets = [self.player_keys(player_id, base) for base in self._bases()]
        closed_at: dict[str, float] = {}
        if closed_since is not None:  # read first: a table closing meanwhile is not seen twice
            async with self._redis.pipeline(transaction=False) as pipe:
                for _, closed_key in sets:
                    pipe.zrevrangebyscore(closed_key, "+inf", closed_since, start=0,
                                          num=MAX_RECENT_CLOSED, withscores=True)
                rows = await pipe.execute()
            pairs = sorted(((float(s), _text(m)) for row in rows for m, s in row), reverse=True)
            closed_at = {m: s for s, m in pairs[:MAX_RECENT_CLOSED]}
        found: list[TableRecord] = []
        batch: list[tuple[str, bool]] = []  # (table id, whether it came from an open set)
        open_keys = [open_key for open_key, _ in sets]
        async for item in self._candidates(open_keys, closed_at, after):
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
        self, open_keys: list[str], closed_at: dict[str, float], after: tuple[float, str] | None
    ) -> AsyncIterator[tuple[str, bool]]:
        """Ids of the player's open (from every bucket) and recently closed tables, newest
        first (by created_at, then id), past `after`."""
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
        page = CHUNK if len(open_keys) == 1 else max(CHUNK // len(open_keys), MIN_PAGE)
        opened = self.newest(open_keys, top, page)
        head: tuple[float, str] | None = None
        seen: set[str] = set()
        while True:
            if head is None:
                async for o in opened:
                    if after is None or o < after:
                        head = o
                        break
            if head is not None and (not closed or head >= closed[0]):
                key, from_open = head, True
                head = None
            elif closed:
                key, from_open = closed.pop(0), False
            else:
                return
            if key[1] not in seen:
                seen.add(key[1])
                yield key[1], from_open

    async def _keep(
        self,
        batch: list[tuple[str, bool]],
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
        stale: dict[str, list[str]] = {}
        for (table_id, from_open), h in zip(batch, rows, strict=True):
            open_key, closed_key = self.player_keys(player_id, self._table_base(table_id))
            if not h:  # expired
                stale.setdefault(open_key if from_open else closed_key, []).append(table_id)
                continue
            record = self._record(table_id, h)
            if from_open and record.status.closed:
                stale.setdefault(open_key, []).append(table_id)  # closed without the player
                continue
            closed = closed_at.get(table_id)
            if belongs(record, player_id, after, game, closed, closed_since):
                kept.append(record)
        for key, ids in stale.items():
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
