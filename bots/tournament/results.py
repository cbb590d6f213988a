"""The tournament's result file: SQLite in the output folder, written as results arrive.

One row per match (deal and seating): its table id as soon as the table is created, its scores
once the table has ended. A tournament restarted on the same file skips finished matches and
follows the tables it had already created instead of creating new ones, so no deal is played
twice. Each shard writes its own file; `merge` reads several.

Per seat of each finished match, `seat_stats` holds how it played (bots.tournament.stats),
written in the same transaction as the scores. Files of versions before it simply lack those
rows (the table is created when such a file is opened): they load, resume and merge, and the
report counts the statistics of the tables that have them.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bots.tournament.schedule import Match
from bots.tournament.stats import SeatStats

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS matches (
  deal INTEGER NOT NULL,
  seating TEXT NOT NULL,          -- entrants by seat, comma-separated
  table_id TEXT NOT NULL DEFAULT '',
  scores TEXT,                    -- JSON list of match totals by seat; NULL until finished
  winners TEXT,                   -- JSON list of winning seats
  finished_at REAL,
  PRIMARY KEY (deal, seating)
);
CREATE TABLE IF NOT EXISTS seat_stats (
  deal INTEGER NOT NULL,
  seating TEXT NOT NULL,
  seat INTEGER NOT NULL,
  decisions INTEGER NOT NULL,
  timeouts INTEGER NOT NULL,      -- auto moves and fallback 'late'
  illegal INTEGER NOT NULL,       -- fallback 'illegal' or 'garbage'
  crashes INTEGER NOT NULL,       -- fallback 'crashed'
  think_seconds REAL NOT NULL,    -- summed over `thinks` own (not auto) moves
  thinks INTEGER NOT NULL,
  PRIMARY KEY (deal, seating, seat)
);
"""

# settings added after the first result files: what a file without them was played with
META_DEFAULTS: dict[str, Any] = {"move_seconds": 0, "match_seconds": 0, "filler": "",
                                 "shared_seats": False, "seed_drawn": False}
# kept in the meta but no setting: a run resumed keeps its own (the public name of its tables)
NOT_SETTINGS = frozenset({"run"})


@dataclass(frozen=True)
class Outcome:
    deal: int
    seating: tuple[str, ...]
    scores: tuple[int, ...]
    winners: tuple[int, ...]
    table_id: str = ""
    stats: tuple[SeatStats, ...] = ()  # per seat; () for tables of older result files


class ResultFile:
    """One shard's results; every write is committed at once (a kill loses nothing written)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        if not path.exists():
            # it keeps the run's secret seed: readable by its owner only (SQLite gives its
            # journal files the same permissions)
            path.touch(mode=0o600)
        self.db = sqlite3.connect(path, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.executescript(SCHEMA)

    def close(self) -> None:
        self.db.close()

    def meta(self) -> dict[str, Any]:
        return {k: json.loads(v) for k, v in self.db.execute("SELECT key, value FROM meta")}

    def claim_meta(self, meta: dict[str, Any]) -> None:
        """Stores the tournament's settings, or checks them against those already stored:
        resuming with other settings would mix two tournaments in one file."""
        stored = self.meta()
        if stored:
            def value(d: dict[str, Any], k: str) -> Any:
                return json.loads(json.dumps(d.get(k, META_DEFAULTS.get(k))))

            differs = sorted(k for k in (meta.keys() | stored.keys()) - NOT_SETTINGS
                             if value(stored, k) != value(meta, k))
            if differs:
                raise ValueError(
                    f"{self.path} holds a tournament with other settings "
                    f"({', '.join(differs)}); use another --out, or the same settings to "
                    "resume it"
                )
        missing = [(k, json.dumps(v, sort_keys=True)) for k, v in meta.items() if k not in stored]
        if missing:  # a new file, or an older one gaining the settings added since (defaults)
            with self._transaction():
                self.db.executemany("INSERT INTO meta (key, value) VALUES (?, ?)", missing)

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        """All or nothing (the connection autocommits each statement otherwise)."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    def table_of(self, match: Match) -> str | None:
        """The match's table id; '' if a creation was begun but its answer never stored (a
        kill in between), None if the match was never begun."""
        row = self.db.execute(
            "SELECT table_id FROM matches WHERE deal = ? AND seating = ?",
            (match.deal, ",".join(match.seating)),
        ).fetchone()
        return row[0] if row else None

    def known_tables(self) -> set[str]:
        return {t for (t,) in self.db.execute("SELECT table_id FROM matches") if t}

    def started(self, match: Match, table_id: str) -> None:
        self.db.execute(
            "INSERT INTO matches (deal, seating, table_id) VALUES (?, ?, ?) "
            "ON CONFLICT (deal, seating) DO UPDATE SET table_id = excluded.table_id",
            (match.deal, ",".join(match.seating), table_id),
        )

    def finished(self, match: Match, table_id: str, scores: Iterable[int],
                 winners: Iterable[int], at: float, stats: Iterable[SeatStats] = ()) -> None:
        """The match's result and its seats' statistics, in one transaction."""
        seating = ",".join(match.seating)
        with self._transaction():
            self.db.execute(
                "INSERT INTO matches (deal, seating, table_id, scores, winners, finished_at) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (deal, seating) DO UPDATE SET "
                "table_id = excluded.table_id, scores = excluded.scores, "
                "winners = excluded.winners, finished_at = excluded.finished_at",
                (match.deal, seating, table_id, json.dumps(list(scores)),
                 json.dumps(list(winners)), at),
            )
            self.db.execute("DELETE FROM seat_stats WHERE deal = ? AND seating = ?",
                            (match.deal, seating))
            self.db.executemany(
                "INSERT INTO seat_stats (deal, seating, seat, decisions, timeouts, illegal, "
                "crashes, think_seconds, thinks) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(match.deal, seating, seat, c.decisions, c.timeouts, c.illegal, c.crashes,
                  c.think_seconds, c.thinks) for seat, c in enumerate(stats)],
            )

    def done_keys(self) -> set[str]:
        return {f"{d}:{s}" for d, s in self.db.execute(
            "SELECT deal, seating FROM matches WHERE scores IS NOT NULL")}

    def outcomes(self) -> list[Outcome]:
        seats: dict[tuple[int, str], dict[int, SeatStats]] = {}
        for d, s, seat, *counts in self.db.execute(
            "SELECT deal, seating, seat, decisions, timeouts, illegal, crashes, think_seconds, "
            "thinks FROM seat_stats"
        ):
            seats.setdefault((d, s), {})[seat] = SeatStats(*counts)
        rows = self.db.execute(
            "SELECT deal, seating, scores, winners, table_id FROM matches "
            "WHERE scores IS NOT NULL ORDER BY deal, seating"
        )
        out = []
        for d, s, sc, w, t in rows:
            seating = tuple(s.split(","))
            by_seat = seats.get((d, s), {})
            stats = (tuple(by_seat[i] for i in range(len(seating)))
                     if set(by_seat) == set(range(len(seating))) else ())
            out.append(Outcome(d, seating, tuple(json.loads(sc)), tuple(json.loads(w)), t,
                               stats))
        return out


def result_files(paths: Iterable[Path]) -> list[Path]:
    """The result files among `paths`: files as given, folders searched (with their
    subfolders, one per shard) for results*.sqlite."""
    found: list[Path] = []
    for p in paths:
        if p.is_dir():
            found.extend(sorted(p.rglob("results*.sqlite")))
        elif p.is_file():
            found.append(p)
        else:
            raise ValueError(f"{p}: no such file or folder")
    if not found:
        raise ValueError("no result files (results*.sqlite) found")
    return found


def merge(paths: Iterable[Path]) -> tuple[dict[str, Any], list[Outcome]]:
    """Settings and outcomes of several shards of one tournament; a match present in two
    files is counted once, and files of different tournaments are refused."""
    meta: dict[str, Any] = {}
    seeds: list[str] = []
    seen: dict[tuple[int, tuple[str, ...]], Outcome] = {}
    common = ("game", "entrants", "players", "options", "deals", *META_DEFAULTS)
    for path in result_files(paths):
        f = ResultFile(path)
        try:
            m = {**META_DEFAULTS, **f.meta()}
            if m == META_DEFAULTS:
                continue
            # shards share a seed given to them all, or each drew its own secret one
            other_seed = meta and m["seed"] != meta["seed"] and not (
                m["seed_drawn"] and meta["seed_drawn"])
            if meta and (other_seed or any(meta.get(k) != m.get(k) for k in common)):
                raise ValueError(f"{path} belongs to another tournament")
            meta = meta or m
            if m["seed"] not in seeds:
                seeds.append(m["seed"])
            for o in f.outcomes():
                known = seen.get((o.deal, o.seating))
                if known is None or (o.stats and not known.stats):
                    seen[(o.deal, o.seating)] = o
        finally:
            f.close()
    if meta:
        meta["seed"] = ", ".join(seeds)  # one per shard where each drew its own
    return meta, sorted(seen.values(), key=lambda o: (o.deal, o.seating))
