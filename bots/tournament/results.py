"""The tournament's result file: SQLite in the output folder, written as results arrive.

One row per match (deal and seating): its table id as soon as the table is created, its scores
once the table has ended. A tournament restarted on the same file skips finished matches and
follows the tables it had already created instead of creating new ones, so no deal is played
twice. Each shard writes its own file; `merge` reads several.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bots.tournament.schedule import Match

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
"""


@dataclass(frozen=True)
class Outcome:
    deal: int
    seating: tuple[str, ...]
    scores: tuple[int, ...]
    winners: tuple[int, ...]
    table_id: str = ""


class ResultFile:
    """One shard's results; every write is committed at once (a kill loses nothing written)."""

    def __init__(self, path: Path) -> None:
        self.path = path
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
        if not stored:
            with self.db:
                self.db.executemany(
                    "INSERT INTO meta (key, value) VALUES (?, ?)",
                    [(k, json.dumps(v, sort_keys=True)) for k, v in meta.items()],
                )
            return
        differs = sorted(k for k in meta if stored.get(k) != json.loads(json.dumps(meta[k])))
        if differs:
            raise ValueError(
                f"{self.path} holds a tournament with other settings ({', '.join(differs)}); "
                "use another --out, or the same settings to resume it"
            )

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
                 winners: Iterable[int], at: float) -> None:
        self.db.execute(
            "INSERT INTO matches (deal, seating, table_id, scores, winners, finished_at) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (deal, seating) DO UPDATE SET "
            "table_id = excluded.table_id, scores = excluded.scores, "
            "winners = excluded.winners, finished_at = excluded.finished_at",
            (match.deal, ",".join(match.seating), table_id, json.dumps(list(scores)),
             json.dumps(list(winners)), at),
        )

    def done_keys(self) -> set[str]:
        return {f"{d}:{s}" for d, s in self.db.execute(
            "SELECT deal, seating FROM matches WHERE scores IS NOT NULL")}

    def outcomes(self) -> list[Outcome]:
        rows = self.db.execute(
            "SELECT deal, seating, scores, winners, table_id FROM matches "
            "WHERE scores IS NOT NULL ORDER BY deal, seating"
        )
        return [Outcome(d, tuple(s.split(",")), tuple(json.loads(sc)), tuple(json.loads(w)), t)
                for d, s, sc, w, t in rows]


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
    seen: dict[tuple[int, tuple[str, ...]], Outcome] = {}
    common = ("game", "entrants", "players", "options", "deals", "seed")
    for path in result_files(paths):
        f = ResultFile(path)
        try:
            m = f.meta()
            if not m:
                continue
            if meta and any(meta.get(k) != m.get(k) for k in common):
                raise ValueError(f"{path} belongs to another tournament")
            meta = meta or m
            for o in f.outcomes():
                seen.setdefault((o.deal, o.seating), o)
        finally:
            f.close()
    return meta, sorted(seen.values(), key=lambda o: (o.deal, o.seating))
