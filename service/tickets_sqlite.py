"""Tickets in the table store's SQLite file, on a connection of their own (WAL).

Each method is one transaction (BEGIN IMMEDIATE for writes) run on the event loop without an
await between BEGIN and COMMIT, so it is atomic against this process's other tasks and, by
SQLite's write lock, against every other process on the file. As the table store does, the
connection never blocks the loop on another process's lock: the task sleeps and tries again.
A partial unique index keeps one waiting ticket per player and game whatever writes race.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from service.tickets import Ticket, TicketConflict, TicketStatus, TicketStore

T = TypeVar("T")

FIRST_RETRY_S = 0.0005
LAST_RETRY_S = 0.05

COLUMNS = ("ticket_id, player_id, name, game, players, options, mode, status, created_at, "
           "alive_until, table_id, seat, rating, matched_at")
SCHEMA = """
CREATE TABLE IF NOT EXISTS mm_tickets (
    ticket_id TEXT PRIMARY KEY,
    player_id TEXT NOT NULL,
    name TEXT NOT NULL,
    game TEXT NOT NULL,
    players INTEGER NOT NULL,
    options TEXT NOT NULL,
    mode TEXT NOT NULL,
    status TEXT NOT NULL,
    created_at REAL NOT NULL,
    alive_until REAL NOT NULL,
    table_id TEXT NOT NULL,
    seat INTEGER NOT NULL,
    rating REAL NOT NULL,
    matched_at REAL NOT NULL,
    queue TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS mm_tickets_queue ON mm_tickets (queue, created_at)
    WHERE status = 'waiting';
CREATE UNIQUE INDEX IF NOT EXISTS mm_tickets_open ON mm_tickets (player_id, game)
    WHERE status = 'waiting';
CREATE INDEX IF NOT EXISTS mm_tickets_created ON mm_tickets (created_at);
CREATE TABLE IF NOT EXISTS mm_leases (
    queue TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    until REAL NOT NULL
);
"""


def _ticket(row: Sequence[Any]) -> Ticket:
    return Ticket(*row)


def _row(t: Ticket) -> tuple[Any, ...]:
    return (t.ticket_id, t.player_id, t.name, t.game, t.players, t.options, t.mode, t.status,
            t.created_at, t.alive_until, t.table_id, t.seat, t.rating, t.matched_at, t.queue)


def _is_busy(e: sqlite3.Error) -> bool:
    code = getattr(e, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
    return isinstance(e, sqlite3.OperationalError) and ("locked" in str(e) or "busy" in str(e))


class SQLiteTickets(TicketStore):
    def __init__(self, path: str | Path, busy_timeout_ms: int = 10_000) -> None:
        self.path = Path(path)
        self._busy_timeout = busy_timeout_ms / 1000
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        try:
            conn.execute(f"PRAGMA busy_timeout={int(busy_timeout_ms)}")  # setting up may wait
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.executescript(SCHEMA)
            conn.execute("PRAGMA busy_timeout=0")  # from now on it runs on the event loop
        except BaseException:
            conn.close()
            raise
        self._conn: sqlite3.Connection | None = conn

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            raise RuntimeError("ticket store is closed")
        return self._conn

    async def _run(self, fn: Callable[[sqlite3.Connection], T], write: bool = True) -> T:
        """`fn` in one transaction (IMMEDIATE when it writes), tried again while another
        connection holds the lock."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._busy_timeout
        delay = FIRST_RETRY_S
        while True:
            conn = self._connection()
            try:
                if not write:
                    return fn(conn)
                conn.execute("BEGIN IMMEDIATE")
                try:
                    out = fn(conn)
                    conn.execute("COMMIT")
                    return out
                except BaseException:
                    if conn.in_transaction:
                        with contextlib.suppress(sqlite3.Error):
                            conn.execute("ROLLBACK")
                    raise
            except sqlite3.OperationalError as e:
                if not _is_busy(e) or loop.time() >= deadline:
                    raise
            await asyncio.sleep(delay)
            delay = min(delay * 2, LAST_RETRY_S)

    @staticmethod
    def _select(conn: sqlite3.Connection, ticket_id: str) -> Ticket | None:
        row = conn.execute(f"SELECT {COLUMNS} FROM mm_tickets WHERE ticket_id = ?",
                           (ticket_id,)).fetchone()
        return _ticket(row) if row else None

    @staticmethod
    def _set_status(conn: sqlite3.Connection, ticket_id: str, status: str) -> None:
        conn.execute("UPDATE mm_tickets SET status = ? WHERE ticket_id = ?", (status, ticket_id))

    async def open(self, ticket: Ticket) -> tuple[Ticket, bool]:
        def run(conn: sqlite3.Connection) -> tuple[Ticket, bool]:
            row = conn.execute(
                f"SELECT {COLUMNS} FROM mm_tickets WHERE player_id = ? AND game = ?"
                " AND status = 'waiting'", (ticket.player_id, ticket.game)).fetchone()
            if row is not None:
                found = _ticket(row)
                if found.alive(ticket.created_at):
                    if not found.same_wish(ticket):
                        raise TicketConflict(found)
                    if ticket.alive_until > found.alive_until:
                        conn.execute("UPDATE mm_tickets SET alive_until = ? WHERE ticket_id = ?",
                                     (ticket.alive_until, found.ticket_id))
                        found = self._select(conn, found.ticket_id) or found
                    return found, False
                self._set_status(conn, found.ticket_id, TicketStatus.EXPIRED)
            conn.execute(f"INSERT INTO mm_tickets ({COLUMNS}, queue) VALUES"
                         f" ({', '.join('?' * 15)})", _row(ticket))
            return ticket, True

        return await self._run(run)

    async def get(self, ticket_id: str) -> Ticket | None:
        return await self._run(lambda conn: self._select(conn, ticket_id), write=False)

    async def touch(self, ticket_id: str, alive_until: float, now: float) -> Ticket | None:
        def run(conn: sqlite3.Connection) -> Ticket | None:
            conn.execute(
                "UPDATE mm_tickets SET alive_until = ? WHERE ticket_id = ? AND status ="
                " 'waiting' AND alive_until >= ? AND alive_until < ?",
                (alive_until, ticket_id, now, alive_until))
            return self._select(conn, ticket_id)

        return await self._run(run)

    async def cancel(self, ticket_id: str, now: float) -> Ticket | None:
        def run(conn: sqlite3.Connection) -> Ticket | None:
            found = self._select(conn, ticket_id)
            if found is None or found.status != TicketStatus.WAITING:
                return found
            status = TicketStatus.CANCELLED if found.alive(now) else TicketStatus.EXPIRED
            self._set_status(conn, ticket_id, status)
            return self._select(conn, ticket_id)

        return await self._run(run)

    async def waiting(self, queue: str, limit: int = 10_000) -> list[Ticket]:
        def run(conn: sqlite3.Connection) -> list[Ticket]:
            rows = conn.execute(
                f"SELECT {COLUMNS} FROM mm_tickets WHERE queue = ? AND status = 'waiting'"
                " ORDER BY created_at, ticket_id LIMIT ?", (queue, limit)).fetchall()
            return [_ticket(r) for r in rows]

        return await self._run(run, write=False)

    async def queues(self) -> list[str]:
        def run(conn: sqlite3.Connection) -> list[str]:
            rows = conn.execute(
                "SELECT DISTINCT queue FROM mm_tickets WHERE status = 'waiting'").fetchall()
            return [r[0] for r in rows]

        return await self._run(run, write=False)

    async def count(self, queue: str) -> int:
        def run(conn: sqlite3.Connection) -> int:
            return int(conn.execute(
                "SELECT count(*) FROM mm_tickets WHERE queue = ? AND status = 'waiting'",
                (queue,)).fetchone()[0])

        return await self._run(run, write=False)

    async def expire(self, ticket_ids: Sequence[str], now: float) -> int:
        if not ticket_ids:
            return 0

        def run(conn: sqlite3.Connection) -> int:
            marks = ", ".join("?" * len(ticket_ids))
            cur = conn.execute(
                f"UPDATE mm_tickets SET status = 'expired' WHERE ticket_id IN ({marks})"
                " AND status = 'waiting' AND alive_until < ?", (*ticket_ids, now))
            return cur.rowcount

        return await self._run(run)

    async def claim(
        self, ticket_ids: Sequence[str], table_id: str, seats: Sequence[int], now: float
    ) -> bool:
        if len(ticket_ids) != len(seats) or len(set(ticket_ids)) != len(ticket_ids):
            raise ValueError("one seat per ticket, each ticket once")

        def run(conn: sqlite3.Connection) -> bool:
            marks = ", ".join("?" * len(ticket_ids))
            ready = conn.execute(
                f"SELECT count(*) FROM mm_tickets WHERE ticket_id IN ({marks})"
                " AND status = 'waiting' AND alive_until >= ?", (*ticket_ids, now)).fetchone()[0]
            if ready != len(ticket_ids):
                return False
            conn.executemany(
                "UPDATE mm_tickets SET status = 'matched', table_id = ?, seat = ?,"
                " matched_at = ? WHERE ticket_id = ?",
                [(table_id, seat, now, t) for t, seat in zip(ticket_ids, seats, strict=True)])
            return True

        return await self._run(run)

    async def lease(self, queue: str, owner: str, seconds: float, now: float) -> bool:
        def run(conn: sqlite3.Connection) -> bool:
            cur = conn.execute(
                "INSERT INTO mm_leases (queue, owner, until) VALUES (?, ?, ?)"
                " ON CONFLICT (queue) DO UPDATE SET owner = excluded.owner,"
                " until = excluded.until WHERE mm_leases.owner = excluded.owner"
                " OR mm_leases.until <= ?", (queue, owner, now + seconds, now))
            return cur.rowcount > 0

        return await self._run(run)

    async def purge(self, before: float) -> int:
        def run(conn: sqlite3.Connection) -> int:
            cur = conn.execute("DELETE FROM mm_tickets WHERE created_at < ? AND status !="
                               " 'waiting'", (before,))
            conn.execute("DELETE FROM mm_leases WHERE until < ?", (before,))
            return cur.rowcount

        return await self._run(run)

    async def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
