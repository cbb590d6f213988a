"""In-process store for tests: same contract as the durable ones, gone when the process ends."""

from __future__ import annotations

from collections.abc import Sequence

from service.model import Event, RatedMatch, Rating, TableFilter, TableRecord, matches, sort_ratings
from service.rating_history import MAX_HISTORY, RatingPoints, history_points, match_names
from service.store import (
    Ratings,
    RatingUpdate,
    Store,
    TableExists,
    TableMissing,
    TableRated,
    VersionConflict,
    check_commit,
)
from service.store_memory_players import MemoryPlayers


class MemoryStore(MemoryPlayers, Store):
    """Every method runs without awaiting, so each is atomic within the event loop."""

    def __init__(self) -> None:
        self._tables: dict[str, TableRecord] = {}
        self._events: dict[str, list[Event]] = {}
        self._ratings: dict[tuple[str, str, str], Rating] = {}  # (ladder, game, entrant)
        self._matches: dict[tuple[str, str], RatedMatch] = {}  # (ladder, match id)
        self._rated_tables: dict[str, str] = {}  # table id -> the match id it was rated under
        self._init_players()
        self._history: dict[tuple[str, str, str], RatingPoints] = {}  # as _ratings
        self._names: dict[tuple[str, str], str] = {}  # (ladder, entrant) -> display name

    async def create(self, record: TableRecord, events: Sequence[Event]) -> None:
        check_commit(record, events, 0)
        if record.table_id in self._tables:
            raise TableExists(record.table_id)
        self._tables[record.table_id] = record
        self._events[record.table_id] = list(events)
        self._index_players(record, events)

    async def get(self, table_id: str) -> TableRecord | None:
        return self._tables.get(table_id)

    async def commit(
        self,
        record: TableRecord,
        events: Sequence[Event],
        expected_version: int,
        idle_before: float | None = None,
    ) -> None:
        check_commit(record, events, expected_version)
        current = self._tables.get(record.table_id)
        if current is None:
            raise TableMissing(record.table_id)
        if current.version != expected_version:
            raise VersionConflict(
                f"table {record.table_id} is at version {current.version}, not {expected_version}"
            )
        if idle_before is not None and current.seen_at >= idle_before:
            raise VersionConflict(f"a person came back to table {record.table_id}")
        if current.seen_at > record.seen_at:
            record = record.with_(seen_at=current.seen_at)
        self._tables[record.table_id] = record
        self._events[record.table_id].extend(events)
        self._index_players(record, events)

    async def touch(self, table_id: str, seen_at: float) -> None:
        current = self._tables.get(table_id)
        if current is not None and not current.status.closed and current.seen_at < seen_at:
            self._tables[table_id] = current.with_(seen_at=seen_at)

    async def events_after(self, table_id: str, version: int, limit: int = 1000) -> list[Event]:
        log = self._events.get(table_id, [])
        # versions are 1, 2, 3, ... so the event of version v sits at index v - 1
        start = max(version, 0)
        return log[start : start + limit]

    async def list(self, flt: TableFilter) -> list[TableRecord]:
        found = [r for r in self._tables.values() if matches(r, flt)]
        found.sort(key=flt.order_key, reverse=not flt.oldest_first)
        return found[: flt.limit]

    async def ratings(self, ladder: str, game: str = "") -> Ratings:
        return sort_ratings([r for (lad, g, _), r in self._ratings.items()
                             if lad == ladder and (not game or g == game)])

    async def rated_match(self, ladder: str, match_id: str) -> RatedMatch | None:
        return self._matches.get((ladder, match_id))

    async def rate(self, match: RatedMatch, update: RatingUpdate) -> RatedMatch | None:
        # no await from the first read to the last write: atomic within the event loop
        stored = self._matches.get((match.ladder, match.match_id))
        if stored is not None:
            return stored
        for table_id in match.table_ids:
            other = self._rated_tables.get(table_id)
            if other is not None:
                raise TableRated(table_id, other)
        current = {e: r for e in match.entrants
                   if (r := self._ratings.get((match.ladder, match.game, e))) is not None}
        new = update(current)
        for r in new:
            self._ratings[(r.ladder, r.game, r.entrant)] = r
        for r, point in history_points(match, new):
            points = self._history.setdefault((r.ladder, r.game, r.entrant), [])
            points.append(point)
            del points[:-MAX_HISTORY]
        for entrant, name in match_names(match).items():
            self._names[(match.ladder, entrant)] = name
        self._matches[(match.ladder, match.match_id)] = match
        for table_id in match.table_ids:
            self._rated_tables[table_id] = match.match_id
        return None

    async def rating_history(self, ladder: str, game: str, entrant: str, limit: int = 100
                             ) -> RatingPoints:
        points = self._history.get((ladder, game, entrant), [])
        return list(points[-limit:]) if limit > 0 else []

    async def entrant_names(self, ladder: str, entrants: Sequence[str]) -> dict[str, str]:
        return {e: n for e in entrants if (n := self._names.get((ladder, e))) is not None}
