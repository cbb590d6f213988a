"""The SQLite store's rating history and names (`service.rating_history`): its tables, the
writes `SQLiteStore.rate` makes inside its transaction, and the reads."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from service.model import RatedMatch, Rating
from service.rating_history import MAX_HISTORY, RatingPoint, history_points, match_names

# points in insertion order (rowid) per (ladder, game, entrant); a table adds one point per
# entrant, so (…, table_id) is unique
HISTORY_SCHEMA = """
CREATE TABLE IF NOT EXISTS rating_history (
    ladder TEXT NOT NULL,
    game TEXT NOT NULL,
    entrant TEXT NOT NULL,
    table_id TEXT NOT NULL,
    time REAL NOT NULL,
    mu REAL NOT NULL,
    sigma REAL NOT NULL,
    rank INTEGER NOT NULL,
    PRIMARY KEY (ladder, game, entrant, table_id)
);
CREATE TABLE IF NOT EXISTS entrant_names (
    ladder TEXT NOT NULL,
    entrant TEXT NOT NULL,
    name TEXT NOT NULL,
    PRIMARY KEY (ladder, entrant)
);
"""

_NEWEST = (
    "SELECT rowid FROM rating_history WHERE ladder = ? AND game = ? AND entrant = ?"
    " ORDER BY time DESC, rowid DESC"
)


def write_history(conn: sqlite3.Connection, match: RatedMatch, new: Sequence[Rating]) -> None:
    """The match's points and names, in the caller's open transaction; the oldest points past
    MAX_HISTORY go."""
    for r, p in history_points(match, new):
        conn.execute(
            "INSERT OR REPLACE INTO rating_history"
            " (ladder, game, entrant, table_id, time, mu, sigma, rank)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (r.ladder, r.game, r.entrant, p.table_id, p.time, p.mu, p.sigma, p.rank),
        )
        conn.execute(
            f"DELETE FROM rating_history WHERE rowid IN ({_NEWEST} LIMIT -1 OFFSET ?)",
            (r.ladder, r.game, r.entrant, MAX_HISTORY),
        )
    conn.executemany(
        "INSERT OR REPLACE INTO entrant_names (ladder, entrant, name) VALUES (?, ?, ?)",
        [(match.ladder, e, n) for e, n in match_names(match).items()],
    )


def read_history(conn: sqlite3.Connection, ladder: str, game: str, entrant: str, limit: int
                 ) -> list[RatingPoint]:
    if limit <= 0:
        return []
    rows = conn.execute(
        "SELECT table_id, time, mu, sigma, rank FROM rating_history WHERE ladder = ?"
        " AND game = ? AND entrant = ? ORDER BY time DESC, rowid DESC LIMIT ?",
        (ladder, game, entrant, limit),
    ).fetchall()
    return [RatingPoint(t, time, mu, sigma, rank) for t, time, mu, sigma, rank in reversed(rows)]


def read_names(conn: sqlite3.Connection, ladder: str, entrants: Sequence[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    wanted = list(dict.fromkeys(entrants))
    for i in range(0, len(wanted), 500):  # within SQLite's limit of bound parameters
        chunk = wanted[i : i + 500]
        marks = ", ".join("?" * len(chunk))
        rows = conn.execute(
            f"SELECT entrant, name FROM entrant_names WHERE ladder = ? AND entrant IN ({marks})",
            (ladder, *chunk),
        )
        out.update(rows.fetchall())
    return out
