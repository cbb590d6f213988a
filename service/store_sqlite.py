"""SQLite store: the embedded default, durable against a killed process.

WAL with synchronous=NORMAL: a commit is in the WAL file before `commit` returns, which survives
the process being killed at any moment (only a power loss can drop the last commits). Each
commit is one transaction whose UPDATE ... WHERE version=? is the compare-and-set, so several
server processes may share one file safely.

Writes may wait for another process's write lock, so they run on one worker thread owning the
writer connection. Reads never wait for writers under WAL and take microseconds, less than a
hop to a thread, so they run on the event loop with their own connection; in the rare case
that one is told "busy" (a checkpoint or recovery elsewhere) it is retried on the worker.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from service.store import (
    Event,
    EventKind,
    Status,
    Store,
    TableExists,
    TableFilter,
    TableMissing,
    TableRecord,
    VersionConflict,
    check_commit,
    seats_from_json,
    seats_to_json,
)

T = TypeVar("T")

SCHEMA = """
CREATE TABLE IF NOT EXISTS tables (
    table_id TEXT PRIMARY KEY,
    game TEXT NOT NULL,
    players INTEGER NOT NULL,
    options TEXT NOT NULL,
    seats TEXT NOT NULL,
    status TEXT NOT NULL,
    version INTEGER NOT NULL,
    state BLOB NOT NULL,
    created_at REAL NOT NULL,
    fill_after REAL NOT NULL,
    fill_level TEXT NOT NULL,
    bot_open_at REAL,
    fill_due_at REAL
);
CREATE INDEX IF NOT EXISTS tables_status ON tables (status, created_at);
CREATE INDEX IF NOT EXISTS tables_bot_open ON tables (bot_open_at);
CREATE INDEX IF NOT EXISTS tables_fill_due ON tables (fill_due_at);
CREATE TABLE IF NOT EXISTS events (
    table_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    kind TEXT NOT NULL,
    seat INTEGER NOT NULL,
    move TEXT NOT NULL,
    name TEXT NOT NULL,
    time REAL NOT NULL,
    state BLOB NOT NULL,
    seats TEXT NOT NULL,
    status TEXT NOT NULL,
    deal_over INTEGER NOT NULL,
    PRIMARY KEY (table_id, version)
) WITHOUT ROWID;
"""

TABLE_COLUMNS = (
    "table_id, game, players, options, seats, status, version, state, created_at, "
    "fill_after, fill_level, bot_open_at, fill_due_at"
)
EVENT_COLUMNS = "table_id, version, kind, seat, move, name, time, state, seats, status, deal_over"


def _table_row(r: TableRecord) -> tuple[Any, ...]:
    return (
        r.table_id,
        r.game,
        r.players,
        json.dumps(r.options, separators=(",", ":"), sort_keys=True),
        seats_to_json(r.seats),
        r.status.value,
        r.version,
        r.state,
        r.created_at,
        r.fill_with_bots_after_seconds,
        r.fill_level,
        r.bot_open_at(),
        r.fill_due_at(),
    )


def _record(row: sqlite3.Row | tuple[Any, ...]) -> TableRecord:
    return TableRecord(
        table_id=row[0],
        game=row[1],
        players=row[2],
        options=json.loads(row[3]),
        seats=seats_from_json(row[4]),
        status=Status(row[5]),
        version=row[6],
        state=bytes(row[7]),
        created_at=row[8],
        fill_with_bots_after_seconds=row[9],
        fill_level=row[10],
    )


def _event_row(e: Event) -> tuple[Any, ...]:
    return (
        e.table_id,
        e.version,
        e.kind.value,
        e.seat,
        e.move,
        e.name,
        e.time,
        e.state,
        seats_to_json(e.seats),
        e.status.value,
        int(e.deal_over),
    )


def _event(row: tuple[Any, ...]) -> Event:
    return Event(
        table_id=row[0],
        version=row[1],
        kind=EventKind(row[2]),
        seat=row[3],
        move=row[4],
        name=row[5],
        time=row[6],
        state=bytes(row[7]),
        seats=seats_from_json(row[8]),
        status=Status(row[9]),
        deal_over=bool(row[10]),
    )


class SQLiteStore(Store):
    def __init__(self, path: str | Path = "./var/croupier.db", busy_timeout_ms: int = 10_000):
        self.path = Path(path)
        self._busy_timeout_ms = busy_timeout_ms
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sqlite-store")
        self._conn: sqlite3.Connection | None = None
        self._reader: sqlite3.Connection | None = None
        # open synchronously so that a bad path fails at start-up, not on the first RPC
        try:
            self._executor.submit(self._open).result()
        except (sqlite3.Error, OSError) as e:
            self._executor.shutdown(wait=False)
            raise OSError(f"cannot open the SQLite store at {self.path}: {e}") from None

    def _open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        conn.execute(f"PRAGMA busy_timeout={int(self._busy_timeout_ms)}")
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.executescript(SCHEMA)
        self._conn = conn
        reader = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        reader.execute("PRAGMA busy_timeout=20")  # it runs on the event loop: never wait long
        self._reader = reader

    async def _run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        conn = self._conn
        if conn is None:
            raise RuntimeError("store is closed")
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, fn, conn)

    async def _read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        reader = self._reader
        if reader is None:
            raise RuntimeError("store is closed")
        try:
            return fn(reader)
        except sqlite3.OperationalError as e:
            if "locked" not in str(e) and "busy" not in str(e):
                raise
            return await self._run(fn)  # the worker's connection may wait its full timeout

    async def create(self, record: TableRecord, events: Sequence[Event]) -> None:
        check_commit(record, events, 0)

        def run(conn: sqlite3.Connection) -> None:
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.execute(
                    f"INSERT INTO tables ({TABLE_COLUMNS}) VALUES ({', '.join('?' * 13)})",
                    _table_row(record),
                )
            except sqlite3.IntegrityError:
                conn.execute("ROLLBACK")
                raise TableExists(record.table_id) from None
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            self._append(conn, events)

        await self._run(run)

    @staticmethod
    def _append(conn: sqlite3.Connection, events: Sequence[Event]) -> None:
        """Inserts the events and commits the open transaction (or rolls it back)."""
        try:
            conn.executemany(
                f"INSERT INTO events ({EVENT_COLUMNS}) VALUES ({', '.join('?' * 11)})",
                [_event_row(e) for e in events],
            )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    async def get(self, table_id: str) -> TableRecord | None:
        def run(conn: sqlite3.Connection) -> TableRecord | None:
            row = conn.execute(
                f"SELECT {TABLE_COLUMNS} FROM tables WHERE table_id = ?", (table_id,)
            ).fetchone()
            return None if row is None else _record(row)

        return await self._read(run)

    async def commit(
        self, record: TableRecord, events: Sequence[Event], expected_version: int
    ) -> None:
        check_commit(record, events, expected_version)
        row = _table_row(record)

        def run(conn: sqlite3.Connection) -> None:
            conn.execute("BEGIN IMMEDIATE")
            try:
                cur = conn.execute(
                    "UPDATE tables SET game=?, players=?, options=?, seats=?, status=?, version=?,"
                    " state=?, created_at=?, fill_after=?, fill_level=?, bot_open_at=?,"
                    " fill_due_at=? WHERE table_id=? AND version=?",
                    (*row[1:], record.table_id, expected_version),
                )
                if cur.rowcount != 1:
                    found = conn.execute(
                        "SELECT version FROM tables WHERE table_id = ?", (record.table_id,)
                    ).fetchone()
                    conn.execute("ROLLBACK")
                    if found is None:
                        raise TableMissing(record.table_id)
                    raise VersionConflict(
                        f"table {record.table_id} is at version {found[0]}, not {expected_version}"
                    )
            except sqlite3.Error:
                conn.execute("ROLLBACK")
                raise
            self._append(conn, events)

        await self._run(run)

    async def events_after(self, table_id: str, version: int, limit: int = 1000) -> list[Event]:
        def run(conn: sqlite3.Connection) -> list[Event]:
            rows = conn.execute(
                f"SELECT {EVENT_COLUMNS} FROM events WHERE table_id = ? AND version > ?"
                " ORDER BY version LIMIT ?",
                (table_id, version, limit),
            ).fetchall()
            return [_event(r) for r in rows]

        return await self._read(run)

    async def list(self, flt: TableFilter) -> list[TableRecord]:
        where: list[str] = []
        args: list[Any] = []
        if flt.game:
            where.append("game = ?")
            args.append(flt.game)
        if flt.status is not None:
            where.append("status = ?")
            args.append(flt.status.value)
        if flt.bot_open_before is not None:
            where.append("bot_open_at IS NOT NULL AND bot_open_at <= ?")
            args.append(flt.bot_open_before)
        if flt.fill_due_before is not None:
            where.append("fill_due_at IS NOT NULL AND fill_due_at <= ?")
            args.append(flt.fill_due_before)
        sql = f"SELECT {TABLE_COLUMNS} FROM tables"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY created_at DESC, table_id DESC LIMIT ?"
        args.append(flt.limit)

        def run(conn: sqlite3.Connection) -> list[TableRecord]:
            return [_record(r) for r in conn.execute(sql, args).fetchall()]

        return await self._read(run)

    async def close(self) -> None:
        def run(conn: sqlite3.Connection) -> None:
            conn.close()

        if self._reader is not None:
            self._reader.close()
            self._reader = None
        if self._conn is not None:
            await self._run(run)
            self._conn = None
        self._executor.shutdown(wait=True)
