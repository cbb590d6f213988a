"""SQLite store: the embedded default, durable against a killed process.

WAL with synchronous=NORMAL: a commit is in the WAL file before `commit` returns, which survives
the process being killed at any moment (only a power loss can drop the last commits). Each
write is an UPDATE ... WHERE version=? (the compare-and-set) inside a transaction, so several
server processes may share one file safely.

SQLite answers in microseconds, less than a hop to a thread costs (and under load a thread
waits milliseconds for the GIL each time it comes back from SQLite), so the store works on the
event loop with one connection and never lets it block:

- Writes (group commit). A write is queued and the queue is committed on the next turn of the
  event loop, in one transaction for every write that came meanwhile: under load the requests
  of one turn share a transaction (measured in-process: about 13% less store time per move at 32 tables; one more
  loop turn of latency for a lone write). Writes that come while the writer is held (waiting
  for another process's lock, or for a checkpoint) queue up the same way. Each write keeps its
  own version check: a loser gets VersionConflict and nothing of its
  write lands, the others still commit. A caller is answered only after COMMIT returned, so an
  acknowledged write is durable.
- No waiting on the loop. The connection's busy timeout is zero: while another process holds
  the write lock, a task sleeps (asyncio) and tries again, up to `busy_timeout_ms`.
  Checkpoints (copying the WAL into the database, with an fsync) run on a worker thread with
  their own connection, between two of our transactions, never inside a commit.
- Write-through record cache. `get` answers from memory after asking SQLite whether any other
  connection (another process, another store on the file) committed since the cache was last
  known good (PRAGMA data_version, a few microseconds); if one did, the whole cache is dropped
  and records are read again. Writes never trust the cache: the stored version decides.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import sqlite3
import time
from collections import OrderedDict
from collections.abc import Callable, Coroutine, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from service.model import (
    PRIVATE_OPTION,
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
    seats_to_json,
    sort_ratings,
)
from service.rating_history import RatingPoints
from service.rating_history_sqlite import HISTORY_SCHEMA, read_history, read_names, write_history
from service.store import (
    Ratings,
    RatingUpdate,
    Store,
    StoreError,
    TableExists,
    TableMissing,
    TableRated,
    VersionConflict,
    check_commit,
)
from service.store_sqlite_players import PLAYERS_SCHEMA, SQLitePlayers, Statements, index_statements

T = TypeVar("T")

# records kept in memory (least recently used dropped first)
MAX_CACHED_TABLES = 4096
# writes committed between checkpoints (a move writes two or three pages: SQLite's own
# automatic checkpoint comes after 1000)
CHECKPOINT_AFTER = 250
# waits between tries while another process holds a lock: doubling from the first to the last
FIRST_RETRY_S = 0.0005
LAST_RETRY_S = 0.05

# the tables with a turn timer: the timer round reads these alone, through a partial index
TIMED = f"json_extract(options, '$.{TIMER_OPTION}') > 0"
TABLES_SCHEMA = """
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
    fill_due_at REAL{added}
);
CREATE INDEX IF NOT EXISTS tables_status ON tables (status, created_at);
CREATE INDEX IF NOT EXISTS tables_bot_open ON tables (bot_open_at);
CREATE INDEX IF NOT EXISTS tables_fill_due ON tables (fill_due_at);
CREATE INDEX IF NOT EXISTS tables_timed ON tables (status, created_at) WHERE {timed};
"""
# Columns added after the first layout: `_open` adds them to older files (ALTER TABLE).
# seed: the secret seed of a table not dealt yet; seen_at: when a person was last there;
# watched: 1 while the abandonment round looks at the table (TableRecord.watched); deals: its
# deal commitments as JSON ('' none, as in rows written before them); next_deal_at and ready:
# the pause between deals (0 and '' none; service.pacing)
ADDED_COLUMNS = (
    ("seed", "TEXT NOT NULL DEFAULT ''"),
    ("seen_at", "REAL NOT NULL DEFAULT 0"),
    ("watched", "INTEGER NOT NULL DEFAULT 0"),
    ("deals", "TEXT NOT NULL DEFAULT ''"),
    ("next_deal_at", "REAL NOT NULL DEFAULT 0"),
    ("ready", "TEXT NOT NULL DEFAULT ''"),
)
# the abandonment round reads the watched tables unseen the longest, through a partial index
IDLE_INDEX = (
    "CREATE INDEX IF NOT EXISTS tables_idle ON tables (status, seen_at) WHERE watched = 1"
)
# the pacing round reads the tables in a pause between deals through a partial index
PAUSE_INDEX = (
    "CREATE INDEX IF NOT EXISTS tables_paused ON tables (next_deal_at) WHERE next_deal_at > 0"
)
# Events are a rowid table: each row carries a state blob of several hundred bytes, and rows
# appended in rowid order fill the last page, where a WITHOUT ROWID table keyed by table id
# scatters them over the whole tree (measured: a move's write 26 µs against 70 µs at 32
# tables a transaction). Files made before hold the WITHOUT ROWID table; `_open` copies it
# over once.
EVENTS_SCHEMA = """
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
    rejected TEXT NOT NULL DEFAULT '',
    pause TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (table_id, version)
);
"""
# Ladders: ratings per (ladder, game, entrant), the matches rated (their tables and entrants
# as JSON lists) and each rated table with the match it was rated under. Written only by
# `rate`, in one transaction.
LADDER_SCHEMA = """
CREATE TABLE IF NOT EXISTS ratings (
    ladder TEXT NOT NULL,
    game TEXT NOT NULL,
    entrant TEXT NOT NULL,
    mu REAL NOT NULL,
    sigma REAL NOT NULL,
    matches INTEGER NOT NULL,
    updated_at REAL NOT NULL,
    PRIMARY KEY (ladder, game, entrant)
);
CREATE TABLE IF NOT EXISTS rated_matches (
    ladder TEXT NOT NULL,
    match_id TEXT NOT NULL,
    game TEXT NOT NULL,
    table_ids TEXT NOT NULL,
    entrants TEXT NOT NULL,
    rated_at REAL NOT NULL,
    PRIMARY KEY (ladder, match_id)
);
CREATE TABLE IF NOT EXISTS rated_tables (
    table_id TEXT PRIMARY KEY,
    ladder TEXT NOT NULL,
    match_id TEXT NOT NULL
);
"""
SCHEMA = (
    TABLES_SCHEMA.format(
        timed=TIMED, added="".join(f",\n    {name} {kind}" for name, kind in ADDED_COLUMNS)
    )
    + EVENTS_SCHEMA
    + LADDER_SCHEMA
    + PLAYERS_SCHEMA
    + HISTORY_SCHEMA
)
RATING_COLUMNS = "ladder, game, entrant, mu, sigma, matches, updated_at"
SELECT_MATCH = (
    "SELECT game, table_ids, entrants, rated_at FROM rated_matches"
    " WHERE ladder = ? AND match_id = ?"
)

TABLE_COLUMNS = (
    "table_id, game, players, options, seats, status, version, state, created_at, "
    "fill_after, fill_level, bot_open_at, fill_due_at, seed, seen_at, watched, deals, "
    "next_deal_at, ready"
)
# the events' columns of the first layout (what a WITHOUT ROWID file holds), and all of them
BASE_EVENT_COLUMNS = (
    "table_id, version, kind, seat, move, name, time, state, seats, status, deal_over"
)
EVENT_COLUMNS = BASE_EVENT_COLUMNS + ", rejected, pause"
# Columns added to events after the first layout (`_add_event_columns`, for older files).
# pause: the pause between deals after the event (model.pause_text; '' none)
ADDED_EVENT_COLUMNS = (
    ("rejected", "TEXT NOT NULL DEFAULT ''"),
    ("pause", "TEXT NOT NULL DEFAULT ''"),
)


def _migrate_events(conn: sqlite3.Connection) -> None:
    """Copies a WITHOUT ROWID events table (files made before the change) into the rowid
    table, in one transaction: another process opening the file at once waits, then finds
    the work done."""

    def old_layout() -> bool:
        row = conn.execute(
            "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'events'"
        ).fetchone()
        return row is not None and "WITHOUT ROWID" in row[0].upper()

    if not old_layout():
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        if old_layout():
            conn.execute("ALTER TABLE events RENAME TO events_without_rowid")
            conn.execute(EVENTS_SCHEMA)
            conn.execute(
                f"INSERT INTO events ({BASE_EVENT_COLUMNS}) SELECT {BASE_EVENT_COLUMNS} "
                "FROM events_without_rowid ORDER BY table_id, version"
            )
            conn.execute("DROP TABLE events_without_rowid")
        conn.execute("COMMIT")
    except BaseException:
        _rollback(conn)
        raise


def _add_event_columns(conn: sqlite3.Connection) -> None:
    """Adds the columns of ADDED_EVENT_COLUMNS that an older file's events lack (their rows
    read back with the default), in one transaction."""

    def missing() -> list[tuple[str, str]]:
        have = {row[1] for row in conn.execute("PRAGMA table_info(events)")}
        return [(name, kind) for name, kind in ADDED_EVENT_COLUMNS if name not in have]

    if not missing():
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        for name, kind in missing():
            conn.execute(f"ALTER TABLE events ADD COLUMN {name} {kind}")
        conn.execute("COMMIT")
    except BaseException:
        _rollback(conn)
        raise


def _add_columns(conn: sqlite3.Connection) -> None:
    """Adds the columns of ADDED_COLUMNS that a file made by an earlier version lacks, in one
    transaction. Its open tables count as seen now: the abandonment clock starts at the
    upgrade, not at some time nobody recorded."""

    def missing() -> list[tuple[str, str]]:
        have = {row[1] for row in conn.execute("PRAGMA table_info(tables)")}
        return [(name, kind) for name, kind in ADDED_COLUMNS if name not in have]

    if not missing():
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        added = missing()
        for name, kind in added:
            conn.execute(f"ALTER TABLE tables ADD COLUMN {name} {kind}")
        if any(name == "seen_at" for name, _ in added):
            rows = conn.execute(f"SELECT {TABLE_COLUMNS} FROM tables WHERE status IN "
                                "('waiting', 'playing')").fetchall()
            now = time.time()
            conn.executemany(
                "UPDATE tables SET seen_at = ?, watched = ? WHERE table_id = ?",
                [(now, int(_record(r).watched()), r[0]) for r in rows],
            )
        conn.execute("COMMIT")
    except BaseException:
        _rollback(conn)
        raise


def _table_row(r: TableRecord, seats_json: str | None = None) -> tuple[Any, ...]:
    return (
        r.table_id,
        r.game,
        r.players,
        json.dumps(r.options, separators=(",", ":"), sort_keys=True),
        seats_to_json(r.seats) if seats_json is None else seats_json,
        r.status.value,
        r.version,
        r.state,
        r.created_at,
        r.fill_with_bots_after_seconds,
        r.fill_level,
        r.bot_open_at(),
        r.fill_due_at(),
        r.seed,
        r.seen_at,
        int(r.watched()),
        deals_to_json(r.deals),
        r.next_deal_at,
        ready_text(r.ready),
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
        seed=row[13],
        seen_at=row[14],
        deals=deals_from_json(row[16]),
        next_deal_at=row[17],
        ready=ready_from_text(row[18]),
    )


def _event_row(e: Event, seats_json: str | None = None) -> tuple[Any, ...]:
    return (
        e.table_id,
        e.version,
        e.kind.value,
        e.seat,
        e.move,
        e.name,
        e.time,
        e.state,
        seats_to_json(e.seats) if seats_json is None else seats_json,
        e.status.value,
        event_flags(e),
        e.rejected,
        pause_text(e.next_deal_at, e.ready),
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
        **flags_fields(row[10]),
        rejected=row[11],
        **pause_fields(row[12]),
    )


INSERT_TABLE = f"INSERT INTO tables ({TABLE_COLUMNS}) VALUES ({', '.join('?' * 19)})"
INSERT_EVENT = f"INSERT INTO events ({EVENT_COLUMNS}) VALUES ({', '.join('?' * 13)})"
# seen_at is only ever raised: a touch that landed after the writer read the record stays
UPDATE_TABLE = (
    "UPDATE tables SET game=?, players=?, options=?, seats=?, status=?, version=?, state=?,"
    " created_at=?, fill_after=?, fill_level=?, bot_open_at=?, fill_due_at=?, seed=?,"
    " seen_at=MAX(seen_at, ?), watched=?, deals=?, next_deal_at=?, ready=?"
    " WHERE table_id=? AND version=?"
)
# the same, only if no person was seen since the given time (closing as abandoned)
UPDATE_IDLE_TABLE = UPDATE_TABLE + " AND seen_at < ?"
# a person's presence: no new version, and nothing for a closed table
TOUCH = (
    "UPDATE tables SET seen_at=? WHERE table_id=? AND seen_at < ?"
    " AND status IN ('waiting', 'playing')"
)
SELECT_TABLE = f"SELECT {TABLE_COLUMNS} FROM tables WHERE table_id = ?"
# a move changes only these; the other columns (and their indexes) are left alone
UPDATE_STATE = "UPDATE tables SET version=?, state=? WHERE table_id=? AND version=?"


def _only_state_changed(old: TableRecord, new: TableRecord) -> bool:
    """Whether `new` differs from `old` in its version and state only (a move that neither
    seats anyone nor ends the match)."""
    return (
        old.seats is new.seats
        and old.status == new.status
        and old.options is new.options
        and old.game == new.game
        and old.players == new.players
        and old.created_at == new.created_at
        and old.fill_with_bots_after_seconds == new.fill_with_bots_after_seconds
        and old.fill_level == new.fill_level
        and old.seed == new.seed
        and old.seen_at == new.seen_at
        and old.deals is new.deals
        and old.next_deal_at == new.next_deal_at
        and old.ready == new.ready
    )


def _is_busy(e: sqlite3.Error) -> bool:
    """Another connection holds a lock we need (SQLITE_BUSY or SQLITE_LOCKED)."""
    code = getattr(e, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
    return isinstance(e, sqlite3.OperationalError) and ("locked" in str(e) or "busy" in str(e))


def _rollback(conn: sqlite3.Connection) -> None:
    if conn.in_transaction:
        with contextlib.suppress(sqlite3.Error):  # SQLite may have rolled back already
            conn.execute("ROLLBACK")


@dataclass(eq=False)
class _Write:
    """One queued create (expected None), compare-and-set commit or touch (`touched`: the
    seen_at it raises to; no record, no events), with its rows ready."""

    table_id: str
    expected: int | None
    record: TableRecord | None
    sql: str  # INSERT_TABLE, UPDATE_TABLE, UPDATE_IDLE_TABLE, UPDATE_STATE or TOUCH
    args: tuple[Any, ...]
    event_rows: list[tuple[Any, ...]]
    future: asyncio.Future[None]
    deadline: float  # loop time after which waiting for another process's lock gives up
    touched: float | None = None
    # run after the write's own statement when it won: the players' index rows
    then: Statements = ()


_Batch = list[_Write]  # spelt out here: inside the stores, `list` is their listing method


# `touched` of a plain statement beside the records (presence): no version check, no seen_at
PLAIN = float("-inf")


class SQLiteStore(SQLitePlayers, Store):
    _record_columns = ", ".join(f"t.{c.strip()}" for c in TABLE_COLUMNS.split(","))
    _decode_record = staticmethod(_record)

    def __init__(self, path: str | Path = "./var/croupier.db", busy_timeout_ms: int = 10_000):
        self.path = Path(path)
        self._busy_timeout = busy_timeout_ms / 1000
        self._conn: sqlite3.Connection | None = None  # the event loop's: reads and writes
        self._checkpointer: sqlite3.Connection | None = None  # the worker thread's
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sqlite-checkpoint")
        self._checkpoint: Future[None] | None = None
        self._since_checkpoint = 0  # writes committed since the last checkpoint
        self._records: OrderedDict[str, TableRecord] = OrderedDict()
        self._data_version = -1  # PRAGMA data_version when the cache was last known good
        self._looked = False  # data_version was read in this turn of the loop
        self._loop: asyncio.AbstractEventLoop | None = None
        self._seats_json = SeatsJson()
        self._queue: list[_Write] = []
        self._flush_scheduled = False
        # the task holding the writer: waiting out another process's lock, or a checkpoint
        self._holder: asyncio.Task[None] | None = None
        # open now so that a bad path fails at start-up, not on the first RPC
        try:
            self._open(busy_timeout_ms)
        except (sqlite3.Error, OSError) as e:
            self._executor.shutdown(wait=False)
            raise OSError(f"cannot open the SQLite store at {self.path}: {e}") from None

    def _open(self, busy_timeout_ms: int) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        try:
            # setting up may wait for another process (creating the file, switching to WAL)
            conn.execute(f"PRAGMA busy_timeout={int(busy_timeout_ms)}")
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.executescript(SCHEMA)
            _add_columns(conn)
            conn.execute(IDLE_INDEX)
            conn.execute(PAUSE_INDEX)
            _migrate_events(conn)
            _add_event_columns(conn)
            conn.execute("PRAGMA wal_autocheckpoint=0")  # checkpoints run on the worker
            conn.execute("PRAGMA busy_timeout=0")  # from now on it runs on the event loop
            checkpointer = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        except BaseException:
            conn.close()
            raise
        checkpointer.execute("PRAGMA synchronous=NORMAL")
        self._conn = conn
        self._checkpointer = checkpointer

    def _running_loop(self) -> asyncio.AbstractEventLoop:
        """The loop this store works on. asyncio.get_running_loop() costs a getpid() system
        call, and a move asked for it three times; a store serves one loop at a time (a
        closed loop's successor is looked up again)."""
        loop = self._loop
        if loop is None or loop.is_closed():
            loop = self._loop = asyncio.get_running_loop()
            self._looked = False  # a look of a loop gone by holds for nothing now
        return loop

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            raise RuntimeError("store is closed")
        return self._conn

    # --- reading ------------------------------------------------------------------------
    async def _read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """`fn` on the connection, retried while another connection holds a lock it needs
        (rare under WAL: recovery after a crash elsewhere, an exclusive lock)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._busy_timeout
        delay = FIRST_RETRY_S
        while True:
            try:
                return fn(self._connection())
            except sqlite3.OperationalError as e:
                if not _is_busy(e) or loop.time() >= deadline:
                    raise
            await asyncio.sleep(delay)
            delay = min(delay * 2, LAST_RETRY_S)

    def _cache_is_current(self, conn: sqlite3.Connection) -> None:
        """Drops every cached record if another connection committed since the last look.

        Asked once per turn of the event loop: the reads of one turn run back to back with
        no await between them, so one look serves them all as well as one each would (a
        commit elsewhere can land just after any look). Under load a turn carries many RPCs.
        """
        loop = self._running_loop()
        if self._looked:
            return
        version = conn.execute("PRAGMA data_version").fetchone()[0]
        if version != self._data_version:
            self._records.clear()
            self._data_version = version
        self._looked = True
        loop.call_soon(self._look_again)

    def _look_again(self) -> None:
        self._looked = False

    def _remember(self, record: TableRecord) -> None:
        self._records[record.table_id] = record
        self._records.move_to_end(record.table_id)
        if len(self._records) > MAX_CACHED_TABLES:
            self._records.popitem(last=False)

    @staticmethod
    def _select(conn: sqlite3.Connection, table_id: str) -> TableRecord | None:
        rows = conn.execute(SELECT_TABLE, (table_id,)).fetchall()
        return _record(rows[0]) if rows else None

    async def get(self, table_id: str) -> TableRecord | None:
        conn = self._connection()
        try:
            self._cache_is_current(conn)
            cached = self._records.get(table_id)
            if cached is not None:
                self._records.move_to_end(table_id)
                return cached
            record = self._select(conn, table_id)
        except sqlite3.OperationalError as e:
            if not _is_busy(e):
                raise
            # read after waiting, and not cached: a write of ours may have landed meanwhile
            return await self._read(lambda c: self._select(c, table_id))
        if record is not None:
            self._remember(record)
        return record

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
        if flt.timed:
            where.append(TIMED)  # as the partial index says it, so that the index serves
        if flt.public_only:
            where.append(f"NOT COALESCE(json_extract(options, '$.{PRIVATE_OPTION}'), 0)")
        if flt.hide_abandoned:
            where.append(f"status != '{Status.ABANDONED.value}'")
        if flt.idle_before is not None:
            where.append("watched = 1 AND seen_at < ?")  # as the partial index says it
            args.append(flt.idle_before)
        if flt.pause_due_before is not None:
            where.append("next_deal_at > 0 AND next_deal_at <= ?")  # the partial index's
            args.append(flt.pause_due_before)
        if flt.bot_open_before is not None:
            column, direction, past = "bot_open_at", "", ">"
        elif flt.fill_due_before is not None:
            column, direction, past = "fill_due_at", "", ">"
        elif flt.idle_before is not None:
            column, direction, past = "seen_at", "", ">"
        elif flt.pause_due_before is not None:
            column, direction, past = "next_deal_at", "", ">"
        else:
            column, direction, past = "created_at", " DESC", "<"
        if flt.after is not None:
            where.append(f"({column}, table_id) {past} (?, ?)")
            args.extend(flt.after)
        sql = f"SELECT {TABLE_COLUMNS} FROM tables"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += f" ORDER BY {column}{direction}, table_id{direction}"
        # the seats' levels are checked on the records (few tables wait for a bot at once)
        by_level = flt.bot_open_before is not None and flt.bot_levels is not None
        if not by_level:
            sql += " LIMIT ?"
            args.append(flt.limit)

        def run(conn: sqlite3.Connection) -> list[TableRecord]:
            records = (_record(r) for r in conn.execute(sql, args))
            if by_level:
                records = (r for r in records if matches(r, flt))
            return list(itertools.islice(records, flt.limit))

        return await self._read(run)

    async def count_tables(self) -> dict[tuple[str, str], int]:
        def run(conn: sqlite3.Connection) -> dict[tuple[str, str], int]:
            rows = conn.execute("SELECT game, status, COUNT(*) FROM tables GROUP BY game, status")
            return {(g, s): n for g, s, n in rows.fetchall()}

        return await self._read(run)

    # --- ladders ------------------------------------------------------------------------
    async def ratings(self, ladder: str, game: str = "") -> Ratings:
        sql = f"SELECT {RATING_COLUMNS} FROM ratings WHERE ladder = ?"
        args: tuple[str, ...] = (ladder,)
        if game:
            sql, args = sql + " AND game = ?", (ladder, game)

        def run(conn: sqlite3.Connection) -> Ratings:
            return sort_ratings([Rating(*row) for row in conn.execute(sql, args)])

        return await self._read(run)

    @staticmethod
    def _match(conn: sqlite3.Connection, ladder: str, match_id: str) -> RatedMatch | None:
        row = conn.execute(SELECT_MATCH, (ladder, match_id)).fetchone()
        if row is None:
            return None
        return RatedMatch(ladder, match_id, row[0], tuple(json.loads(row[1])),
                          tuple(json.loads(row[2])), row[3])

    async def rated_match(self, ladder: str, match_id: str) -> RatedMatch | None:
        return await self._read(lambda conn: self._match(conn, ladder, match_id))

    async def rate(self, match: RatedMatch, update: RatingUpdate) -> RatedMatch | None:
        """One IMMEDIATE transaction on the loop's connection, run without an await between
        BEGIN and COMMIT: the queued writes of `commit` go in transactions of their own
        between loop turns, so none is open now; another process holding the write lock is
        waited for (sleeping) as reads do."""
        conn = self._connection()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._busy_timeout
        delay = FIRST_RETRY_S
        while True:
            try:
                conn.execute("BEGIN IMMEDIATE")
                break
            except sqlite3.OperationalError as e:
                if not _is_busy(e) or loop.time() >= deadline:
                    raise
            await asyncio.sleep(delay)
            delay = min(delay * 2, LAST_RETRY_S)
            conn = self._connection()
        try:
            outcome = self._rate_in(conn, match, update)
            if outcome is None:
                conn.execute("COMMIT")
            else:
                conn.execute("ROLLBACK")
        except BaseException:
            _rollback(conn)
            raise
        return outcome

    def _rate_in(self, conn: sqlite3.Connection, match: RatedMatch, update: RatingUpdate
                 ) -> RatedMatch | None:
        stored = self._match(conn, match.ladder, match.match_id)
        if stored is not None:
            return stored
        marks = ", ".join("?" * len(match.table_ids))
        taken = conn.execute(
            f"SELECT table_id, match_id FROM rated_tables WHERE table_id IN ({marks})"
            " ORDER BY table_id", match.table_ids,
        ).fetchone()
        if taken is not None:
            raise TableRated(taken[0], taken[1])
        marks = ", ".join("?" * len(match.entrants))
        rows = conn.execute(
            f"SELECT {RATING_COLUMNS} FROM ratings WHERE ladder = ? AND game = ?"
            f" AND entrant IN ({marks})", (match.ladder, match.game, *match.entrants),
        )
        new = update({row[2]: Rating(*row) for row in rows})
        conn.executemany(
            f"INSERT OR REPLACE INTO ratings ({RATING_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(r.ladder, r.game, r.entrant, r.mu, r.sigma, r.matches, r.updated_at) for r in new],
        )
        conn.execute(
            "INSERT INTO rated_matches (ladder, match_id, game, table_ids, entrants, rated_at)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (match.ladder, match.match_id, match.game, json.dumps(list(match.table_ids)),
             json.dumps(list(match.entrants)), match.rated_at),
        )
        conn.executemany(
            "INSERT INTO rated_tables (table_id, ladder, match_id) VALUES (?, ?, ?)",
            [(t, match.ladder, match.match_id) for t in match.table_ids],
        )
        write_history(conn, match, new)
        return None

    async def rating_history(self, ladder: str, game: str, entrant: str, limit: int = 100
                             ) -> RatingPoints:
        return await self._read(lambda conn: read_history(conn, ladder, game, entrant, limit))

    async def entrant_names(self, ladder: str, entrants: Sequence[str]) -> dict[str, str]:
        return await self._read(lambda conn: read_names(conn, ladder, entrants))

    # --- writing ------------------------------------------------------------------------
    async def create(self, record: TableRecord, events: Sequence[Event]) -> None:
        check_commit(record, events, 0)
        await self._enqueue(record, events, None)

    async def commit(
        self,
        record: TableRecord,
        events: Sequence[Event],
        expected_version: int,
        idle_before: float | None = None,
    ) -> None:
        check_commit(record, events, expected_version)
        await self._enqueue(record, events, expected_version, idle_before)

    async def touch(self, table_id: str, seen_at: float) -> None:
        self._connection()
        loop = self._running_loop()
        write = _Write(
            table_id=table_id,
            expected=None,
            record=None,
            sql=TOUCH,
            args=(seen_at, table_id, seen_at),
            event_rows=[],
            future=loop.create_future(),
            deadline=loop.time() + self._busy_timeout,
            touched=seen_at,
        )
        self._queue.append(write)
        self._wake()
        await write.future

    async def _queue_statement(self, table_id: str, sql: str, args: tuple[Any, ...]) -> None:
        """One statement through the write queue (its batching, its waits for the lock)."""
        self._connection()
        loop = self._running_loop()
        write = _Write(table_id=table_id, expected=None, record=None, sql=sql, args=args,
                       event_rows=[], future=loop.create_future(),
                       deadline=loop.time() + self._busy_timeout, touched=PLAIN)
        self._queue.append(write)
        self._wake()
        await write.future

    def _enqueue(
        self,
        record: TableRecord,
        events: Sequence[Event],
        expected: int | None,
        idle_before: float | None = None,
    ) -> asyncio.Future[None]:
        self._connection()  # refuse at once when closed
        loop = self._running_loop()
        table_id = record.table_id
        if expected is None:
            sql, args = INSERT_TABLE, _table_row(record, self._seats_json(record.seats))
        elif idle_before is not None:
            row = _table_row(record, self._seats_json(record.seats))
            sql, args = UPDATE_IDLE_TABLE, (*row[1:], table_id, expected, idle_before)
        else:
            # the record this write replaces, as this store last saw it at that version: the
            # compare-and-set makes sure the stored row is that one, so the columns that did
            # not change need no writing
            old = self._records.get(table_id)
            if old is not None and old.version == expected and _only_state_changed(old, record):
                sql, args = UPDATE_STATE, (record.version, record.state, table_id, expected)
            else:
                row = _table_row(record, self._seats_json(record.seats))
                sql, args = UPDATE_TABLE, (*row[1:], table_id, expected)
        # a move's short write has the seats and status it had: the index has them already
        then = () if sql is UPDATE_STATE else index_statements(record, events)
        write = _Write(
            table_id=table_id,
            expected=expected,
            record=record,
            sql=sql,
            args=args,
            event_rows=[_event_row(e, self._seats_json(e.seats)) for e in events],
            future=loop.create_future(),
            deadline=loop.time() + self._busy_timeout,
            then=then,
        )
        self._queue.append(write)
        self._wake()
        return write.future

    def _wake(self) -> None:
        """Flushes the queue on the next turn of the loop, unless a task holds the writer."""
        if not self._flush_scheduled and self._holder is None and self._conn is not None:
            self._flush_scheduled = True
            self._running_loop().call_soon(self._flush)

    def _flush(self) -> None:
        """Commits every queued write in one transaction."""
        self._flush_scheduled = False
        if self._holder is not None or not self._queue or self._conn is None:
            return
        batch, self._queue = self._queue, []
        waiting = self._write(batch)
        if waiting:
            self._queue[:0] = waiting
            self._hold(self._wait_for_lock())
        elif self._since_checkpoint >= CHECKPOINT_AFTER:
            self._hold(self._checkpoint_now())

    def _hold(self, work: Coroutine[Any, Any, None]) -> None:
        """Runs `work` as the writer: writes queue up meanwhile, then go in one batch."""

        async def hold() -> None:
            try:
                await work
            finally:
                self._holder = None
                if self._queue:
                    self._wake()

        self._holder = asyncio.get_running_loop().create_task(hold())

    async def _wait_for_lock(self) -> None:
        """Another process holds the write lock: try again after short sleeps, every queued
        write at once, and fail those that waited longer than the busy timeout."""
        loop = asyncio.get_running_loop()
        delay = FIRST_RETRY_S
        while self._queue and self._conn is not None:
            await asyncio.sleep(delay)
            delay = min(delay * 2, LAST_RETRY_S)
            now = loop.time()
            late = [w for w in self._queue if w.deadline <= now]
            batch = [w for w in self._queue if w.deadline > now]
            self._queue = []
            self._settle(late, [sqlite3.OperationalError("database is locked")] * len(late))
            self._queue[:0] = self._write(batch) if batch else []

    async def _checkpoint_now(self) -> None:
        """Copies the WAL into the database on the worker thread while no write of ours runs,
        so that the copy completes and the next write starts the WAL over (a checkpoint
        racing a steady stream of writes never catches up, and the WAL would grow for ever).
        Readers go on meanwhile."""
        self._since_checkpoint = 0
        done = self._executor.submit(self._run_checkpoint)
        self._checkpoint = done
        await asyncio.wrap_future(done)

    def _write(self, batch: _Batch) -> _Batch:
        """Commits `batch` in one transaction and answers each write; returns the writes
        that must wait because another process holds the write lock."""
        conn = self._connection()
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as e:
            if _is_busy(e):
                return batch
            self._settle(batch, [e] * len(batch))
            return []
        try:
            outcomes = [self._apply(conn, w) for w in batch]
            # the events of the writes that won their compare-and-set, in one statement
            rows = [r for w, o in zip(batch, outcomes, strict=True) if o is None for r in w.event_rows]
            conn.executemany(INSERT_EVENT, rows)
            conn.execute("COMMIT")
        except sqlite3.Error as e:
            # not a lost compare-and-set (those are outcomes) but a broken write, a full disk...
            _rollback(conn)
            if len(batch) == 1:
                self._settle(batch, [e])
                return []
            # ... so that one write fails alone: each again in its own transaction
            return [w for one in batch for w in self._write([one])]
        self._settle(batch, outcomes)
        self._since_checkpoint += len(batch)
        return []

    @staticmethod
    def _apply(conn: sqlite3.Connection, w: _Write) -> StoreError | None:
        """One write's table row inside the batch's transaction (its events go in after the
        batch's rows). A refused write changes nothing and returns its error; an unexpected
        SQLite error raises (the batch is rolled back)."""
        if w.touched is not None:
            conn.execute(w.sql, w.args)  # no row changed: closed or gone, nothing to do
            return None
        if w.expected is None:
            try:
                conn.execute(w.sql, w.args)
            except sqlite3.IntegrityError:
                return TableExists(w.table_id)
        else:
            cur = conn.execute(w.sql, w.args)
            if cur.rowcount != 1:
                found = conn.execute(
                    "SELECT version FROM tables WHERE table_id = ?", (w.table_id,)
                ).fetchall()
                if not found:
                    return TableMissing(w.table_id)
                if found[0][0] == w.expected:  # the version held: the seen_at check did not
                    return VersionConflict(f"a person came back to table {w.table_id}")
                return VersionConflict(
                    f"table {w.table_id} is at version {found[0][0]}, not {w.expected}"
                )
        for sql, args in w.then:
            conn.execute(sql, args)
        return None

    def _settle(self, batch: _Batch, outcomes: Sequence[BaseException | None]) -> None:
        """Updates the cache (in batch order) and answers the callers still waiting."""
        for w, outcome in zip(batch, outcomes, strict=True):
            if w.touched is not None:
                cached = self._records.get(w.table_id)
                if (outcome is None and cached is not None and not cached.status.closed
                        and cached.seen_at < w.touched):
                    self._records[w.table_id] = cached.with_(seen_at=w.touched)
                elif outcome is not None:
                    self._records.pop(w.table_id, None)
            elif outcome is None:
                assert w.record is not None
                known = self._records.get(w.table_id)
                if known is not None and known.seen_at > w.record.seen_at:
                    # the row kept the later seen_at (a touch after the writer's read)
                    self._remember(w.record.with_(seen_at=known.seen_at))
                else:
                    self._remember(w.record)
            else:
                self._records.pop(w.table_id, None)
            if w.future.done():  # its caller was cancelled; the write stands or fell anyway
                continue
            if outcome is None:
                w.future.set_result(None)
            else:
                w.future.set_exception(outcome)

    def _run_checkpoint(self) -> None:
        conn = self._checkpointer
        if conn is None:
            return
        # PASSIVE: copies what no reader still needs and never waits for anyone; if another
        # process is checkpointing or writing, the next round catches up
        with contextlib.suppress(sqlite3.Error):
            conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()

    async def close(self) -> None:
        if self._conn is None:
            return
        while self._queue or self._flush_scheduled or self._holder is not None:
            await asyncio.sleep(FIRST_RETRY_S)  # let queued writes land first
        checkpoint = self._checkpoint
        if checkpoint is not None:
            await asyncio.wrap_future(checkpoint)
        self._conn.close()
        self._conn = None
        self._records.clear()
        checkpointer, self._checkpointer = self._checkpointer, None
        if checkpointer is not None:
            checkpointer.close()
        self._executor.shutdown(wait=True)
