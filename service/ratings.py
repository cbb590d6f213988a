"""The standing rating ladder: RateMatch and ListRatings, independent of gRPC.

A ladder match is one deal played in every seating by bot entrants, each seating on a table
of its own carrying the table option `ladder`. Rating it ranks the entrants by the sum of
their seats' match totals over those tables (ties share a rank) and makes one OpenSkill
Plackett-Luce update. The store writes the new ratings in one atomic step with the match id
and its tables marked rated, so a match is rated once however often, and by however many
replicas at once, it is asked for.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from openskill.models import PlackettLuce

from service import decode_cache
from service.model import (
    LADDER_NAME,
    LADDER_OPTION,
    RatedMatch,
    Rating,
    SeatKind,
    Status,
    TableRecord,
)
from service.reasons import Reason
from service.store import TableRated
from service.tables import Code, TableError, Tables
from service.validation import DEFAULT_BOT_LEVEL, check_table_id

DEFAULT_LADDER = "main"
MAX_MATCH_ID_CHARS = 128
# a deal of four seats among four entrants is played in 24 seatings; far beyond that is a
# mistake, not a match
MAX_MATCH_TABLES = 256

_MODEL = PlackettLuce()


def check_ladder(name: str, what: str = "ladder") -> str:
    """INVALID_ARGUMENT unless `name` can name a ladder."""
    if not name:
        raise TableError(
            Code.INVALID_ARGUMENT, f"{what} is required",
            reason=Reason.INVALID_ARGUMENT_NAME,
        )
    if len(name) > 40 or LADDER_NAME.fullmatch(name) is None:
        raise TableError(
            Code.INVALID_ARGUMENT,
            f"{what} must be 1 to 40 of a-z, 0-9, '_', '.', '-', starting with a letter or "
            f"digit, got {_quote(name)}",
            reason=Reason.INVALID_ARGUMENT_NAME,
        )
    return name


def _quote(text: str, limit: int = 48) -> str:
    """A client's string for a message: shortened, never more than `limit` characters."""
    return repr(text) if len(text) <= limit else f"{text[:limit]!r}... ({len(text)} characters)"


def check_match_id(match_id: str) -> None:
    if not match_id:
        raise TableError(
            Code.INVALID_ARGUMENT, "match_id is required",
            reason=Reason.INVALID_ARGUMENT_FIELD, meta={"field": "match_id"},
        )
    if len(match_id) > MAX_MATCH_ID_CHARS:
        raise TableError(
            Code.INVALID_ARGUMENT, f"match_id is at most {MAX_MATCH_ID_CHARS} characters",
            reason=Reason.INVALID_ARGUMENT_FIELD, meta={"field": "match_id"},
        )
    if not match_id.isprintable():
        raise TableError(
            Code.INVALID_ARGUMENT, "match_id may hold printable characters only",
            reason=Reason.INVALID_ARGUMENT_FIELD, meta={"field": "match_id"},
        )


def check_table_ids(table_ids: Sequence[str]) -> tuple[str, ...]:
    if not table_ids:
        raise TableError(
            Code.INVALID_ARGUMENT, "table_ids is required: the match's tables",
            reason=Reason.INVALID_ARGUMENT_FIELD, meta={"field": "table_ids"},
        )
    if len(table_ids) > MAX_MATCH_TABLES:
        raise TableError(
            Code.INVALID_ARGUMENT, f"a match has at most {MAX_MATCH_TABLES} tables",
            reason=Reason.INVALID_ARGUMENT_FIELD, meta={"field": "table_ids"},
        )
    for table_id in table_ids:
        check_table_id(table_id)
    if len(set(table_ids)) != len(table_ids):
        raise TableError(
            Code.INVALID_ARGUMENT, "table_ids lists a table twice",
            reason=Reason.INVALID_ARGUMENT_FIELD, meta={"field": "table_ids"},
        )
    return tuple(table_ids)


def ordinal(mu: float, sigma: float) -> float:
    """The conservative rating standings are ordered by (mu - 3 sigma, as OpenSkill has it)."""
    return float(_MODEL.rating(mu=mu, sigma=sigma).ordinal())


def competition_ranks(points: Sequence[float]) -> list[float]:
    """1 for the most points; equal points share a rank and the next ranks are skipped."""
    return [1.0 + sum(1 for q in points if q > p) for p in points]


def updated(ladder: str, game: str, entrants: Sequence[str], points: Sequence[float],
            current: Mapping[str, Rating], now: float) -> list[Rating]:
    """One Plackett-Luce update of the entrants (each a team of one) ranked by points."""
    before = [
        _MODEL.rating(mu=current[e].mu, sigma=current[e].sigma, name=e) if e in current
        else _MODEL.rating(name=e)
        for e in entrants
    ]
    after = _MODEL.rate([[r] for r in before], ranks=competition_ranks(points))
    return [
        Rating(ladder, game, e, float(team[0].mu), float(team[0].sigma),
               (current[e].matches if e in current else 0) + 1, now)
        for e, team in zip(entrants, after, strict=True)
    ]


@dataclass(frozen=True)
class MatchPoints:
    game: str
    entrants: tuple[str, ...]  # in order of first appearance (table order, then seat)
    points: tuple[int, ...]  # each entrant's summed seat totals over the tables


def seat_entrant(record: TableRecord, seat: int) -> str:
    """The entrant of a bot seat (Seat.bot_level holds its name); FAILED_PRECONDITION for a
    seat open to people, which no entrant owns even when a bot filled it."""
    s = record.seats[seat]
    if s.kind != SeatKind.BOT:
        raise TableError(
            Code.FAILED_PRECONDITION,
            f"seat {seat} of table {record.table_id} is not a bot seat: only entrants' seats "
            "are rated",
            reason=Reason.NOT_RATABLE,
        )
    return s.bot_level or DEFAULT_BOT_LEVEL


def match_points(tables: Tables, ladder: str, records: Sequence[TableRecord]) -> MatchPoints:
    """The entrants of the match and their points, or the reason the tables are no match."""
    first = records[0]
    for r in records:
        if r.status != Status.FINISHED:
            why = "was closed as abandoned" if r.status == Status.ABANDONED else (
                f"is still {r.status.value}"
            )
            raise TableError(
                Code.FAILED_PRECONDITION, f"table {r.table_id} {why}: only finished tables are rated",
                reason=Reason.NOT_RATABLE,
            )
        own = r.options.get(LADDER_OPTION)
        if own != ladder:
            has = f"its ladder option is {own!r}" if own else "it has no ladder option"
            raise TableError(
                Code.FAILED_PRECONDITION,
                f"table {r.table_id} is not played for ladder {ladder!r} ({has})",
                reason=Reason.NOT_RATABLE,
            )
        if r.game != first.game:
            raise TableError(
                Code.FAILED_PRECONDITION,
                f"tables {first.table_id} and {r.table_id} are of different games "
                f"({first.game}, {r.game}): a match is of one game",
                reason=Reason.NOT_RATABLE,
            )
        if r.players != first.players or r.options != first.options:
            raise TableError(
                Code.FAILED_PRECONDITION,
                f"tables {first.table_id} and {r.table_id} have different players or options: "
                "a match is one deal, played on the same options in every seating",
                reason=Reason.NOT_RATABLE,
            )
    game = tables.game(first.game)
    totals: dict[str, int] = {}
    for r in records:
        result = game.result(decode_cache.decode(game, r.state))
        for seat, total in enumerate(result.totals):
            entrant = seat_entrant(r, seat)
            totals[entrant] = totals.get(entrant, 0) + int(total)
    if len(totals) < 2:
        raise TableError(
            Code.FAILED_PRECONDITION,
            f"the tables seat one entrant only ({next(iter(totals))}): a rating needs two or more",
            reason=Reason.NOT_RATABLE,
        )
    return MatchPoints(first.game, tuple(totals), tuple(totals.values()))


@dataclass(frozen=True)
class Rated:
    ratings: list[Rating]  # the match's entrants after it
    already_rated: bool


async def rate_match(tables: Tables, ladder: str, match_id: str, table_ids: Sequence[str],
                     clock: Callable[[], float] = time.time) -> Rated:
    """Validates everything, then rates the match in one atomic store step. A refusal
    (TableError) changes nothing."""
    check_ladder(ladder)
    check_match_id(match_id)
    ids = check_table_ids(table_ids)
    store = tables.store
    stored = await store.rated_match(ladder, match_id)
    if stored is not None:
        # a repeat, answered even after the tables expired from the store
        return await _repeat(tables, stored, ids)
    records = [await tables.get(t) for t in ids]
    points = match_points(tables, ladder, records)
    now = clock()
    match = RatedMatch(ladder, match_id, points.game, ids, points.entrants, now)

    def update(current: Mapping[str, Rating]) -> list[Rating]:
        return updated(ladder, points.game, points.entrants, points.points, current, now)

    try:
        stored = await store.rate(match, update)
    except TableRated as e:
        raise TableError(
            Code.FAILED_PRECONDITION,
            f"table {e.table_id} was rated under match {_quote(e.match_id)} already",
            reason=Reason.NOT_RATABLE,
        ) from None
    if stored is not None:  # a racing request rated it first
        return await _repeat(tables, stored, ids)
    mine = set(points.entrants)
    return Rated([r for r in await store.ratings(ladder, points.game) if r.entrant in mine],
                 already_rated=False)


async def _repeat(tables: Tables, stored: RatedMatch, ids: Sequence[str]) -> Rated:
    if set(stored.table_ids) != set(ids):
        raise TableError(
            Code.FAILED_PRECONDITION,
            f"match {_quote(stored.match_id)} was rated with other tables: give each match an "
            "id of its own",
            reason=Reason.NOT_RATABLE,
        )
    mine = set(stored.entrants)
    ratings = await tables.store.ratings(stored.ladder, stored.game)
    return Rated([r for r in ratings if r.entrant in mine], already_rated=True)


async def list_ratings(tables: Tables, ladder: str, game: str) -> list[Rating]:
    """The standings (empty ladder: "main"; empty game: every game)."""
    ladder = check_ladder(ladder or DEFAULT_LADDER)
    if game:
        tables.game(game)  # INVALID_ARGUMENT for an unknown game
    return await tables.store.ratings(ladder, game)
