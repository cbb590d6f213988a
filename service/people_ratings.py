"""Ratings of people and bot levels on one scale, from rated tables; independent of gRPC.

A rated table (table option `rated`, set only by rated matchmaking) is rated once it is
played to the end: its seats are ranked by their match totals (equal totals share a rank) and
one OpenSkill Plackett-Luce update moves the ratings of the ladder "players" in its game. A
person's seat stands for its player (`Seat.player`), a built-in level's bot seat (or a
person's seat a bot worker took, as the table's fill level) for "bot:<level>", so people and
levels share one scale. Seats of neither (a person without an identity, an outside entrant)
are left out. Tables closed as abandoned are never rated: nobody played them to the end.

The match id is the table id and `Store.rate` writes the ratings, the table marked rated and
each entrant's history point in one atomic step: a table is rated once, however many tasks,
processes or replicas try. The server rates a table as soon as its END is committed (a task,
off the mover's reply) and, in its clock loop, sweeps the recently finished rated tables for
ones nobody rated (the replica that committed the END died first).
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from openskill.models import PlackettLuce

from common.level_names import LEVEL_NAMES
from common.logging import get_logger
from service import decode_cache
from service.model import (
    BOT_PLAYER_PREFIX,
    PLAYERS_LADDER,
    RATED_OPTION,
    RatedMatch,
    Rating,
    SeatKind,
    Status,
    TableFilter,
    TableRecord,
)
from service.ratings import competition_ranks
from service.store import RatingUpdate, TableRated
from service.tables import Tables
from service.validation import DEFAULT_BOT_LEVEL

log = get_logger("croupier.ratings")

_MODEL = PlackettLuce()

# the sweep runs every this many rounds of the clock, over the newest finished tables
SWEEP_EVERY_ROUNDS = 10
SWEEP_TABLES = 200
# tables a process remembers as settled (rated, or nothing to rate), so sweeps skip them
SETTLED_MEMORY = 4096


def is_bot_entrant(entrant: str) -> bool:
    return entrant.startswith(BOT_PLAYER_PREFIX)


def seat_entrant(record: TableRecord, seat: int) -> str:
    """Who a seat's result rates on the players' ladder: its player, "bot:<level>" for a
    built-in level, or "" for neither (left out of the rating)."""
    s = record.seats[seat]
    if s.kind == SeatKind.BOT:
        level = s.bot_level or DEFAULT_BOT_LEVEL
        return BOT_PLAYER_PREFIX + level if level in LEVEL_NAMES else ""
    if s.is_bot:  # a person's seat a bot worker took: it plays as the table's fill level
        return BOT_PLAYER_PREFIX + record.fill_level if record.fill_level in LEVEL_NAMES else ""
    return s.player


@dataclass(frozen=True)
class TablePlan:
    """What rating a finished table means: the rated seats, their entrants and totals."""

    game: str
    seat_entrants: tuple[str, ...]  # one per rated seat, in seat order (repeats: one level)
    points: tuple[int, ...]  # those seats' match totals
    entrants: tuple[str, ...]  # distinct, in seat order
    ranks: tuple[int, ...]  # each entrant's best place (1: first)
    names: tuple[str, ...]  # each person's seat name ("" for a level)

    @property
    def ratable(self) -> bool:
        """A rating needs a person and someone else to be ranked against."""
        return len(self.entrants) >= 2 and any(not is_bot_entrant(e) for e in self.entrants)


def plan(tables: Tables, record: TableRecord) -> TablePlan:
    game = tables.game(record.game)
    totals = game.result(decode_cache.decode(game, record.state)).totals
    seats = [(i, e) for i in range(len(record.seats)) if (e := seat_entrant(record, i))]
    seat_entrants = tuple(e for _, e in seats)
    points = tuple(int(totals[i]) for i, _ in seats)
    places = competition_ranks(points)
    best: dict[str, int] = {}
    names: dict[str, str] = {}
    for (i, e), place in zip(seats, places, strict=True):
        best[e] = min(best.get(e, len(seats)), int(place))
        names.setdefault(e, "" if is_bot_entrant(e) else record.seats[i].name)
    return TablePlan(record.game, seat_entrants, points, tuple(best), tuple(best.values()),
                     tuple(names[e] for e in best))


def seat_update(ladder: str, p: TablePlan, now: float) -> RatingUpdate:
    """One Plackett-Luce update with each rated seat a team of one. An entrant in several
    seats (two bots of one level) is a copy of its rating in each; it moves by the mean of
    its copies' moves, and counts the table once."""

    def update(current: Mapping[str, Rating]) -> list[Rating]:
        before = [
            _MODEL.rating(mu=current[e].mu, sigma=current[e].sigma) if e in current
            else _MODEL.rating()
            for e in p.seat_entrants
        ]
        after = _MODEL.rate([[r] for r in before], ranks=[float(x) for x in
                                                          competition_ranks(p.points)])
        moved: dict[str, list[tuple[float, float]]] = {}
        for e, team in zip(p.seat_entrants, after, strict=True):
            moved.setdefault(e, []).append((float(team[0].mu), float(team[0].sigma)))
        return [
            Rating(ladder, p.game, e, sum(m for m, _ in ms) / len(ms),
                   sum(s for _, s in ms) / len(ms),
                   (current[e].matches if e in current else 0) + 1, now)
            for e, ms in moved.items()
        ]

    return update


@dataclass(frozen=True)
class TableRating:
    table_id: str
    entrants: tuple[str, ...]
    already_rated: bool  # rated before (by another task, process or replica)


async def rate_table(tables: Tables, table_id: str,
                     clock: Callable[[], float] = time.time) -> TableRating | None:
    """Rates a finished rated table once; None when there is nothing to rate: no such table,
    not a rated one, not finished (abandoned tables never are), or no person and opponent."""
    store = tables.store
    record = await store.get(table_id)
    if record is None or not record.options.get(RATED_OPTION):
        return None
    if record.status != Status.FINISHED:
        return None
    stored = await store.rated_match(PLAYERS_LADDER, table_id)
    if stored is not None:
        return TableRating(table_id, stored.entrants, already_rated=True)
    p = plan(tables, record)
    if not p.ratable:
        return None
    now = clock()
    match = RatedMatch(PLAYERS_LADDER, table_id, record.game, (table_id,), p.entrants, now,
                       ranks=p.ranks, names=p.names)
    try:
        stored = await store.rate(match, seat_update(PLAYERS_LADDER, p, now))
    except TableRated:  # rated on another ladder: no players' table then
        log.warning("table_rated_elsewhere", table=table_id)
        return None
    if stored is not None:
        return TableRating(table_id, stored.entrants, already_rated=True)
    log.info("table_rated", table=table_id, game=record.game, entrants=len(p.entrants))
    return TableRating(table_id, p.entrants, already_rated=False)


class PeopleRater:
    """Rates the rated tables this process finishes, as they finish, and sweeps for those
    nobody rated. `table_finished` is `Tables.on_finished`: it only starts a task, so the
    move that ended the table is answered without waiting for the rating."""

    def __init__(self, tables: Tables, clock: Callable[[], float] = time.time) -> None:
        self.tables = tables
        self.clock = clock
        self._tasks: set[asyncio.Task[bool]] = set()
        self._settled: OrderedDict[str, None] = OrderedDict()
        self._rounds = 0

    def table_finished(self, record: TableRecord) -> None:
        if not record.options.get(RATED_OPTION):
            return
        task = asyncio.get_running_loop().create_task(self._rate(record.table_id))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _rate(self, table_id: str) -> bool:
        """Whether this call rated the table; a failure is logged and left to the sweep."""
        try:
            out = await rate_table(self.tables, table_id, self.clock)
        except Exception as exc:
            log.warning("table_rating_failed", table=table_id, error=type(exc).__name__)
            return False
        self._settle(table_id)
        return out is not None and not out.already_rated

    def _settle(self, table_id: str) -> None:
        self._settled[table_id] = None
        while len(self._settled) > SETTLED_MEMORY:
            self._settled.popitem(last=False)

    async def sweep(self) -> int:
        """Every SWEEP_EVERY_ROUNDS-th call: rates the newest finished rated tables not rated
        yet. Returns how many it rated."""
        self._rounds += 1
        if self._rounds % SWEEP_EVERY_ROUNDS != 1:
            return 0
        flt = TableFilter(status=Status.FINISHED, limit=SWEEP_TABLES)
        rated = 0
        for record in await self.tables.store.list(flt):
            if record.options.get(RATED_OPTION) and record.table_id not in self._settled:
                rated += await self._rate(record.table_id)
        return rated

    async def drain(self, timeout: float = 5.0) -> None:
        """Waits (at most `timeout` s) for the ratings under way: before the store closes."""
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=timeout)
