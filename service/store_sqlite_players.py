"""The SQLite store's index from players to their tables and its presence maps.

`player_tables` rows are written by the statements of `index_statements`, which the store runs
in the transaction of the record's own write (only when the write won its compare-and-set), so
the index never names a table the record does not. `presence` holds one row per seat of a table
whose person was ever seen, its time only ever raised.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from service.model import Event, TableRecord
from service.player_index import belongs, closed_at, players_of

T = TypeVar("T")
Statements = tuple[tuple[str, tuple[Any, ...]], ...]

PLAYERS_SCHEMA = """
CREATE TABLE IF NOT EXISTS player_tables (
    player TEXT NOT NULL,
    table_id TEXT NOT NULL,
    game TEXT NOT NULL,
    created_at REAL NOT NULL,
    closed_at REAL,
    PRIMARY KEY (player, table_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS player_tables_newest ON player_tables (player, created_at, table_id);
CREATE TABLE IF NOT EXISTS presence (
    table_id TEXT NOT NULL,
    seat INTEGER NOT NULL,
    seen_at REAL NOT NULL,
    PRIMARY KEY (table_id, seat)
) WITHOUT ROWID;
"""
# a table's closing time is written once: the first write that closes it
INDEX_PLAYER = (
    "INSERT INTO player_tables (player, table_id, game, created_at, closed_at)"
    " VALUES (?, ?, ?, ?, ?) ON CONFLICT (player, table_id) DO UPDATE"
    " SET closed_at = COALESCE(player_tables.closed_at, excluded.closed_at)"
)
MARK_PRESENT = (
    "INSERT INTO presence (table_id, seat, seen_at) VALUES (?, ?, ?)"
    " ON CONFLICT (table_id, seat) DO UPDATE SET seen_at = MAX(seen_at, excluded.seen_at)"
)
SELECT_PRESENCE = "SELECT seat, seen_at FROM presence WHERE table_id = ?"
# rows read per round while a listing fills its page (entries of seats given up are skipped)
CHUNK = 100


def index_statements(record: TableRecord, events: Sequence[Event]) -> Statements:
    """The index rows of one record write: none when its seats name no player."""
    players = players_of(record)
    if not players:
        return ()
    at = closed_at(record, events)
    return tuple(
        (INDEX_PLAYER, (p, record.table_id, record.game, record.created_at, at)) for p in players
    )


class SQLitePlayers:
    """Mixed into SQLiteStore: reads through its `_read`, writes through its queue."""

    _read: Callable[..., Awaitable[Any]]
    _queue_statement: Callable[[str, str, tuple[Any, ...]], Awaitable[None]]
    _record_columns: str  # the store's record columns, each prefixed "t."

    @staticmethod
    def _decode_record(row: Any) -> TableRecord:
        """A record from its row (the store's decoder)."""
        raise NotImplementedError

    async def player_tables(
        self,
        player_id: str,
        after: tuple[float, str] | None = None,
        limit: int = 100,
        closed_since: float | None = None,
        game: str = "",
    ) -> list[TableRecord]:
        decode = self._decode_record

        def run(conn: sqlite3.Connection) -> list[TableRecord]:
            found: list[TableRecord] = []
            cursor = after
            while len(found) < limit:
                where = ["p.player = ?"]
                args: list[Any] = [player_id]
                if closed_since is None:
                    where.append("p.closed_at IS NULL")
                else:
                    where.append("(p.closed_at IS NULL OR p.closed_at >= ?)")
                    args.append(closed_since)
                if game:
                    where.append("p.game = ?")
                    args.append(game)
                if cursor is not None:
                    where.append("(p.created_at, p.table_id) < (?, ?)")
                    args.extend(cursor)
                rows = conn.execute(
                    f"SELECT {self._record_columns}, p.closed_at, p.created_at, p.table_id"
                    " FROM player_tables p JOIN tables t ON t.table_id = p.table_id"
                    f" WHERE {' AND '.join(where)}"
                    " ORDER BY p.created_at DESC, p.table_id DESC LIMIT ?",
                    (*args, CHUNK),
                ).fetchall()
                for row in rows:
                    record = decode(row[:-3])
                    if belongs(record, player_id, after, game, row[-3], closed_since):
                        found.append(record)
                if len(rows) < CHUNK:
                    break
                cursor = (rows[-1][-2], rows[-1][-1])
            return found[:limit]

        result: list[TableRecord] = await self._read(run)
        return result

    async def mark_present(self, table_id: str, seat: int, at: float) -> None:
        await self._queue_statement(table_id, MARK_PRESENT, (table_id, seat, at))

    async def presence(self, table_id: str) -> dict[int, float]:
        def run(conn: sqlite3.Connection) -> dict[int, float]:
            return {int(s): float(t) for s, t in conn.execute(SELECT_PRESENCE, (table_id,))}

        result: dict[int, float] = await self._read(run)
        return result
