"""Leaderboards and profiles of the players' ladder (`service.people_ratings`), independent
of gRPC.

A game's leaderboard orders its players and bot levels by their conservative rating
(ordinal = mu - 3 sigma; equal ordinals share a rank): the top, or the entries around one
player. A profile shows a player's rating per game with its history (a point per rated table,
the newest 100, oldest first), how many tables they played to the end and their recent
finished tables. Ratings are public, so anyone may read any player's; what is hidden stays
so: another player's private tables are left out, and a table's summary shows no card.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from service.model import (
    BOT_PLAYER_PREFIX,
    PLAYERS_LADDER,
    PRIVATE_OPTION,
    Rating,
    Status,
    TableRecord,
)
from service.people_ratings import is_bot_entrant
from service.rating_history import RatingPoint
from service.ratings import competition_ranks
from service.reasons import Reason
from service.tables import Code, TableError, Tables

DEFAULT_LIMIT = 20
MAX_LIMIT = 100
HISTORY_POINTS = 100
RECENT_TABLES = 10
MAX_PLAYER_ID_CHARS = 256
ME = "me"
GUEST_PREFIX = "guest:"


@dataclass(frozen=True)
class Standing:
    """A leaderboard entry: a player or a bot level ("bot:<level>")."""

    rank: int
    entrant: str
    name: str
    mu: float
    sigma: float
    ordinal: float
    games: int

    @property
    def bot(self) -> bool:
        return is_bot_entrant(self.entrant)


def check_player_id(text: str, what: str) -> str:
    """INVALID_ARGUMENT unless `text` can be a player id (or a level's "bot:<level>")."""
    if len(text) > MAX_PLAYER_ID_CHARS:
        raise TableError(
            Code.INVALID_ARGUMENT, f"{what} is at most {MAX_PLAYER_ID_CHARS} characters",
            reason=Reason.INVALID_ARGUMENT_FIELD, meta={"field": what},
        )
    if not text.isprintable():
        raise TableError(
            Code.INVALID_ARGUMENT, f"{what} may hold printable characters only",
            reason=Reason.INVALID_ARGUMENT_FIELD, meta={"field": what},
        )
    return text


def _ordinal(r: Rating) -> float:
    return r.mu - 3 * r.sigma


async def _board(tables: Tables, game: str) -> list[Rating]:
    """The game's ratings on the players' ladder, best ordinal first."""
    return await tables.store.ratings(PLAYERS_LADDER, game)


async def _standings(tables: Tables, board: Sequence[Rating], start: int, stop: int
                     ) -> list[Standing]:
    """Entries start..stop of the board, ranked and named."""
    ranks = competition_ranks([_ordinal(r) for r in board])
    shown = board[start:stop]
    names = await tables.store.entrant_names(
        PLAYERS_LADDER, [r.entrant for r in shown if not is_bot_entrant(r.entrant)])
    return [
        Standing(int(ranks[start + i]), r.entrant,
                 r.entrant.removeprefix(BOT_PLAYER_PREFIX) if is_bot_entrant(r.entrant)
                 else names.get(r.entrant, ""),
                 r.mu, r.sigma, _ordinal(r), r.matches)
        for i, r in enumerate(shown)
    ]


async def leaderboard(tables: Tables, game: str, limit: int, around: str = ""
                      ) -> tuple[list[Standing], int]:
    """The top `limit` (0: DEFAULT_LIMIT) of the game, or the `limit` around the entrant
    `around` (half above, half below; NOT_FOUND if it has no rating there), and how many
    the board holds."""
    if not game:
        raise TableError(
            Code.INVALID_ARGUMENT, "game is required",
            reason=Reason.INVALID_ARGUMENT_GAME,
        )
    tables.game(game)  # INVALID_ARGUMENT for an unknown game
    if limit < 0:
        raise TableError(
            Code.INVALID_ARGUMENT, "limit may not be negative",
            reason=Reason.INVALID_ARGUMENT_FIELD, meta={"field": "limit"},
        )
    if limit > MAX_LIMIT:
        raise TableError(
            Code.RESOURCE_EXHAUSTED, f"at most {MAX_LIMIT} entries per request; asked for {limit}",
            reason=Reason.TOO_LARGE, meta={"field": "limit", "max": MAX_LIMIT},
        )
    limit = limit or DEFAULT_LIMIT
    board = await _board(tables, game)
    start = 0
    if around:
        at = next((i for i, r in enumerate(board) if r.entrant == around), None)
        if at is None:
            raise TableError(
                Code.NOT_FOUND, f"{around[:64]!r} has no rating in {game} yet",
                reason=Reason.PLAYER_NOT_FOUND,
            )
        start = max(0, min(at - limit // 2, len(board) - limit))
    return await _standings(tables, board, start, start + limit), len(board)


@dataclass(frozen=True)
class GameStanding:
    game: str
    standing: Standing | None  # None: never rated in this game
    history: list[RatingPoint]  # oldest first, the newest HISTORY_POINTS
    games_played: int  # tables played to the end (rated ones: `_played`)


@dataclass(frozen=True)
class PlayerProfile:
    player_id: str
    name: str
    guest: bool
    games: list[GameStanding]
    recent: list[TableRecord]  # finished tables, newest first


async def profile(tables: Tables, player_id: str, name: str = "", guest: bool | None = None,
                  own: bool = False) -> PlayerProfile:
    """The player's profile. `name` and `guest`: what the caller's identity says, when the
    player is the caller (`own`: their private tables are shown too); else the name comes
    from the ladder and NOT_FOUND answers a player never seen at a rated table."""
    if is_bot_entrant(player_id):
        raise TableError(
            Code.INVALID_ARGUMENT,
            "bot levels have no profile: their ratings are on the leaderboards",
            reason=Reason.INVALID_ARGUMENT_FIELD, meta={"field": "player_id"},
        )
    store = tables.store
    mine = {r.game: r for r in await store.ratings(PLAYERS_LADDER) if r.entrant == player_id}
    if not name:
        name = (await store.entrant_names(PLAYERS_LADDER, [player_id])).get(player_id, "")
    counts, recent = await _played(tables, player_id, mine, own)
    if not own and not mine and not name and not counts:
        raise TableError(
            Code.NOT_FOUND, f"no player {player_id[:64]!r} is known here",
            reason=Reason.PLAYER_NOT_FOUND,
        )
    games = []
    for game in sorted(mine.keys() | counts.keys()):
        standing = None
        if game in mine:
            board = await _board(tables, game)
            at = next(i for i, r in enumerate(board) if r.entrant == player_id)
            standing = (await _standings(tables, board, at, at + 1))[0]
        history = await store.rating_history(PLAYERS_LADDER, game, player_id, HISTORY_POINTS)
        games.append(GameStanding(game, standing, history, counts.get(game, 0)))
    return PlayerProfile(player_id, name,
                         player_id.startswith(GUEST_PREFIX) if guest is None else guest,
                         games, recent)


async def _played(tables: Tables, player_id: str, rated: Mapping[str, Rating], own: bool
                  ) -> tuple[dict[str, int], list[TableRecord]]:
    """Tables played to the end per game, and the newest of them still stored (another
    player's private ones left out), newest first. From the rated tables alone: unrated ones
    need the store's index of players' tables."""
    counts = {game: r.matches for game, r in rated.items()}
    ids: list[tuple[float, str]] = []
    for game in rated:
        points = await tables.store.rating_history(PLAYERS_LADDER, game, player_id,
                                                   RECENT_TABLES)
        ids.extend((p.time, p.table_id) for p in points)
    recent = []
    for _, table_id in sorted(ids, reverse=True)[:RECENT_TABLES]:
        record = await tables.store.get(table_id)
        if (record is not None and record.status == Status.FINISHED
                and (own or not record.options.get(PRIVATE_OPTION))):
            recent.append(record)
    return counts, recent
