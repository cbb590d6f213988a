"""The table store: the narrow async interface every backend (memory, SQLite, Redis) fulfils.

A table is one record (seats, status, the engine state as bytes) plus an append-only event log
(`service.model`). Every write is a compare-and-set on the table version, so two writers
(tasks, processes or replicas) can never both win: the loser gets `VersionConflict` and
nothing of its write lands. The record's version is always the version of its last event.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence

from common.masking import masked
from service.model import Event, RatedMatch, Rating, TableFilter, TableRecord
from service.rating_history import RatingPoints


class StoreError(Exception):
    """Base of the errors a store raises on purpose."""


class VersionConflict(StoreError):
    """The table moved on since it was read: the write was refused, nothing changed."""


class TableExists(StoreError):
    """A table with this id is already stored."""


class TableMissing(StoreError):
    """No table with this id is stored."""


class StoreUnavailable(StoreError):
    """The backing service (Redis) cannot be reached now; a write may or may not have landed.
    Clients are told UNAVAILABLE: retry, re-reading the table first."""


class WriteUnconfirmed(StoreUnavailable):
    """The write landed on the primary, but fewer replicas than the store asks for confirmed
    it in time: not acknowledged, since a failover now could lose it. A retry of the same move
    finds it (the version moved on) and is answered as the first once replicas hold it."""


def check_commit(record: TableRecord, events: Sequence[Event], expected_version: int) -> None:
    """The rules every backend enforces: events continue the log without gaps, and the record's
    version is the last event's. A violation is a bug in the caller, not a conflict."""
    if not events:
        raise ValueError("a commit needs at least one event")
    for offset, event in enumerate(events, start=1):
        if event.version != expected_version + offset:
            raise ValueError(
                f"event version {event.version} does not follow {expected_version + offset - 1}"
            )
        if event.table_id != record.table_id:
            raise ValueError("event of another table")
    if record.version != events[-1].version:
        raise ValueError("record version must be its last event's version")


class TableRated(StoreError):
    """A table of the match was rated before under another match: nothing was written."""

    def __init__(self, table_id: str, match_id: str) -> None:
        super().__init__(f"table {table_id} was rated under match {match_id!r}")
        self.table_id = table_id
        self.match_id = match_id


Records = list[TableRecord]  # likewise
Ratings = list[Rating]  # spelt out here: inside the stores, `list` is their listing method


# the new ratings of a match's entrants from their current ones (absent: never rated); run
# by `Store.rate` inside its atomic step, so it must be pure and quick
RatingUpdate = Callable[[Mapping[str, Rating]], Sequence[Rating]]


class Store(ABC):
    """Async and narrow on purpose: a Redis backend needs only get/set-if-version and a stream."""

    @abstractmethod
    async def create(self, record: TableRecord, events: Sequence[Event]) -> None:
        """Stores a new table and its first events; TableExists if the id is taken."""

    @abstractmethod
    async def get(self, table_id: str) -> TableRecord | None:
        """The current record, or None."""

    @abstractmethod
    async def commit(
        self,
        record: TableRecord,
        events: Sequence[Event],
        expected_version: int,
        idle_before: float | None = None,
    ) -> None:
        """Replaces the record and appends the events, atomically, only if the stored version is
        still `expected_version` (and, with `idle_before`, the stored `seen_at` is still before
        it: nobody came back meanwhile): VersionConflict otherwise, TableMissing if there is no
        table. `seen_at` is never lowered: the stored one stays if it is later than the
        record's. Durable once it returns."""

    @abstractmethod
    async def touch(self, table_id: str, seen_at: float) -> None:
        """Raises the stored `seen_at` of an open table to `seen_at` (never lowers it), with no
        new version and no event: a person's presence changes nothing a client can see, so it
        must not make anyone's view stale. Nothing happens for a closed or missing table."""

    @abstractmethod
    async def events_after(self, table_id: str, version: int, limit: int = 1000) -> list[Event]:
        """Events with a version greater than `version`, oldest first, at most `limit`."""

    @abstractmethod
    async def list(self, flt: TableFilter) -> list[TableRecord]:
        """Tables matching the filter in its order (`TableFilter.order_key`: newest first, or
        the longest-waiting first), at most `flt.limit`."""

    async def wait_for_change(self, table_id: str, after_version: int, timeout: float) -> None:
        """Returns once the table may have an event after `after_version`, or after `timeout`
        seconds. Backends that can hear writes of other processes (Redis) override it; this
        one just sleeps, and streams rely on the local wake-up plus a poll."""
        await asyncio.sleep(timeout)

    async def count_tables(self) -> dict[tuple[str, str], int]:
        """(game, status) -> number of stored tables, for the metrics gauge. This default
        lists every table: backends with indexes count cheaper."""
        counts: dict[tuple[str, str], int] = {}
        for r in await self.list(TableFilter(limit=1 << 30)):
            key = (r.game, r.status.value)
            counts[key] = counts.get(key, 0) + 1
        return counts

    # whether wait_for_change hears writes made by other processes
    notifies_changes = False

    # --- ladders ------------------------------------------------------------------------
    @abstractmethod
    async def ratings(self, ladder: str, game: str = "") -> Ratings:
        """The ladder's ratings of one game (empty: every game), in `sort_ratings` order."""

    @abstractmethod
    async def rated_match(self, ladder: str, match_id: str) -> RatedMatch | None:
        """The match rated under this id on the ladder, or None."""

    @abstractmethod
    async def rate(self, match: RatedMatch, update: RatingUpdate) -> RatedMatch | None:
        """Rates a match once, atomically (whatever other writers, processes or replicas do
        meanwhile): if its id is rated already, returns that stored match and writes
        nothing; if one of its tables was rated under another id, raises TableRated and
        writes nothing; else stores `update(current ratings of its entrants)` together with
        the match and its tables as rated (and the match's history points and names,
        `service.rating_history`), and returns None."""

    @abstractmethod
    async def rating_history(self, ladder: str, game: str, entrant: str, limit: int = 100
                             ) -> RatingPoints:
        """The entrant's last `limit` rating points on the ladder in the game, oldest first
        (`service.rating_history`: written by `rate` with the ratings)."""

    @abstractmethod
    async def entrant_names(self, ladder: str, entrants: Sequence[str]) -> dict[str, str]:
        """entrant -> the display name it last played a rated table of the ladder under
        (entrants without one left out)."""

    # --- players' tables and presence (service.player_index, service.presence) ----------
    @abstractmethod
    async def player_tables(
        self,
        player_id: str,
        after: tuple[float, str] | None = None,
        limit: int = 100,
        closed_since: float | None = None,
        game: str = "",
    ) -> Records:
        """The tables a seat of which names `player_id` (Seat.player), newest first (by
        created_at, then table id, both descending), past `after` (the (created_at, table id)
        of the previous page's last table), of `game` when given: the open ones, and those
        that closed at or after `closed_since` (their END event's time; None: no closed
        ones). At most `limit`. Each backend keeps an index from players to tables, written
        in the same atomic step as the record."""

    @abstractmethod
    async def mark_present(self, table_id: str, seat: int, at: float) -> None:
        """Raises `seat`'s last-seen time in the table's presence map to `at` (never lowers
        it). No version, no event, shared by every replica on the store."""

    @abstractmethod
    async def presence(self, table_id: str) -> dict[int, float]:
        """The table's presence map: seat -> when its person was last seen (unix seconds);
        seats never marked are absent."""

    async def ping(self) -> None:
        """Reaches the backend once; StoreUnavailable when it cannot (readiness asks this)."""
        await self.get("health-probe")

    async def confirm(self, table_id: str) -> None:  # noqa: B027 - only replicated stores
        """Returns once everything written for `table_id` so far is as safe as an acknowledged
        write (the replicas a write waits for hold it); WriteUnconfirmed if not in time. A
        retried move found already made is answered only after this."""

    async def close(self) -> None:  # noqa: B027 - optional for backends without resources
        """Releases connections and files."""


def open_store(url: str) -> Store:
    """A store from its URL: `memory`, `sqlite:<path>` (created if absent),
    `redis://host:port/db[?prefix=...&retention=seconds]`,
    `redis+sentinel://host:26379,host:26379/service/db[?...]` or, on a Redis Cluster,
    `redis+cluster://host:port,host:port/[?prefix=...&buckets=n]` (`service.redis_connect`)."""
    if url == "memory":
        from service.store_memory import MemoryStore

        return MemoryStore()
    if url.startswith("sqlite:"):
        from service.store_sqlite import SQLiteStore

        path = url.removeprefix("sqlite:").removeprefix("//") or "./var/croupier.db"
        return SQLiteStore(path)
    if url.lower().startswith(("redis://", "rediss://", "unix://", "redis+sentinel://",
                               "rediss+sentinel://", "redis+cluster://", "rediss+cluster://")):
        from service.store_redis import RedisStore

        return RedisStore(url)
    raise ValueError(
        f"unknown store {masked(url)!r}; use 'memory', 'sqlite:<path>', "
        "'redis://host:port/db', 'redis+sentinel://host:26379,host:26379/service/db' or "
        "'redis+cluster://host:port,host:port/'"
    )
