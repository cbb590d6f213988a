"""Request validation for tables: the limits every request is held to, entrant names, table
options, table ids and `rejected` answers, checked before anything is read or written."""

from __future__ import annotations

import json
import math
import re
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from common.level_names import LEVEL_NAMES
from engines.contract import Game, canonical_options
from service.model import (
    BOT_PLAYER_PREFIX,
    BUDGET_OPTION,
    LABEL_OPTION,
    LADDER_NAME,
    LADDER_OPTION,
    PLAYERS_LADDER,
    PRIVATE_OPTION,
    RATED_OPTION,
    TABLE_LABEL,
    TIMER_OPTION,
    Seat,
    SeatKind,
)
from service.reasons import Reason
from service.table_errors import Code, TableError

# Limits: beyond them a request is refused with RESOURCE_EXHAUSTED.
MAX_NAME_CHARS = 64
MAX_BOT_LEVEL_CHARS = 32
MAX_OPTIONS_JSON_CHARS = 4096
MAX_MOVE_CHARS = 256
# SubmitMove's `rejected`: the bot's refused answer, kept in the record (cut by the client)
MAX_REJECTED_CHARS = 200
# the fallbacks that stand in for an answer the bot gave (the others had none to keep)
ANSWERED_FALLBACKS = ("illegal", "garbage")
# A seat token chosen by the client (JoinTable): URL-safe base64 of at least 16 random bytes.
CLIENT_TOKEN = re.compile(r"[A-Za-z0-9_-]{22,128}")
MAX_TABLE_ID_CHARS = 64
MAX_FILL_SECONDS = 7 * 24 * 3600.0
DEFAULT_BOT_LEVEL = "random"
# An entrant: a named bot player. The built-in levels are entrants the bot workers serve;
# any other name is an outside entrant (a bot of its own, through a bot SDK).
ENTRANT_NAME = re.compile(r"[a-z0-9][a-z0-9_.-]{0,39}")
# Options of the table rather than the game: kept in the table's options, never given to the
# engine. private: spectators (calls without a seat token) are refused and the lobby does not
# list the table (it is joined by id); turn_seconds: a seat
# that has not moved this long after the table's last event is played for (auto moves).
# match_seconds: a budget per seat for the whole match (needs turn_seconds): thinking past
# turn_seconds draws on it, and the timer waits for what is left of it too.
# ladder: the ladder whose matches the table is played for (only such tables are rated).
# label: a public name its creator gives the table (a tournament finds its match by it).
# rated: made by rated matchmaking, its end rates its players; the server's to set, never a
# client's (CreateTable refuses it: a table rated at will is a way to farm ratings).
TABLE_OPTIONS: dict[str, type | tuple[type, ...]] = {
    PRIVATE_OPTION: bool, TIMER_OPTION: (int, float), BUDGET_OPTION: (int, float),
    LADDER_OPTION: str, LABEL_OPTION: str, RATED_OPTION: bool,
}
MAX_TURN_SECONDS = 24 * 3600.0
MAX_MATCH_SECONDS = 7 * 24 * 3600.0


def check_entrant(name: str, what: str = "entrant") -> None:
    """INVALID_ARGUMENT for a name no entrant can have (quoted only when short)."""
    if not ENTRANT_NAME.fullmatch(name):
        shown = repr(name) if len(name) <= 2 * MAX_BOT_LEVEL_CHARS else f"of {len(name)} characters"
        raise TableError(
            Code.INVALID_ARGUMENT,
            f"{what} name {shown} is malformed: entrant names are 1 to 40 of a-z, 0-9, '_', "
            "'.' and '-', starting with a letter or digit",
            reason=Reason.INVALID_ARGUMENT_NAME,
        )


def outside_entrant(name: str, what: str = "entrant") -> str:
    """The outside entrant `name` names, checked; "" for none or a built-in level's name."""
    if not name:
        return ""
    check_entrant(name, what)
    return "" if name in LEVEL_NAMES else name


@dataclass(frozen=True)
class SeatRequest:
    kind: SeatKind = SeatKind.HUMAN
    bot_level: str = ""
    entrant: str = ""  # bot seats: a named entrant (a level's name: that level)


def game_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """The options the engine is given: the table's own (TABLE_OPTIONS) left out."""
    return {k: v for k, v in options.items() if k not in TABLE_OPTIONS}


def check_rejected(rejected: str, fallback: str) -> None:
    """SubmitMove's `rejected`: empty, or with an answered fallback at most MAX_REJECTED_CHARS
    printable characters (it is stored with the move and shown in the record)."""
    if not rejected:
        return
    if fallback not in ANSWERED_FALLBACKS:
        raise TableError(
            Code.INVALID_ARGUMENT,
            f"rejected is the bot's refused answer: only with fallback "
            f"{' or '.join(ANSWERED_FALLBACKS)}",
            reason=Reason.INVALID_ARGUMENT_FIELD, meta={"field": "rejected"},
        )
    if len(rejected) > MAX_REJECTED_CHARS:
        raise TableError(
            Code.INVALID_ARGUMENT,
            f"rejected is at most {MAX_REJECTED_CHARS} characters (cut it), not {len(rejected)}",
            reason=Reason.INVALID_ARGUMENT_FIELD, meta={"field": "rejected"},
        )
    if not rejected.isprintable():
        raise TableError(
            Code.INVALID_ARGUMENT,
            "rejected holds control characters: replace them (e.g. with U+FFFD)",
            reason=Reason.INVALID_ARGUMENT_FIELD, meta={"field": "rejected"},
        )


def check_table_id(table_id: str) -> None:
    """INVALID_ARGUMENT for what cannot be a table id, before it is used as a key anywhere."""
    if not table_id:
        raise TableError(
            Code.INVALID_ARGUMENT, "table_id is required",
            reason=Reason.INVALID_ARGUMENT_FIELD, meta={"field": "table_id"},
        )
    if len(table_id) > MAX_TABLE_ID_CHARS:
        raise TableError(
            Code.INVALID_ARGUMENT, "table_id is too long to be a table id",
            reason=Reason.INVALID_ARGUMENT_FIELD, meta={"field": "table_id"},
        )


@dataclass(frozen=True)
class NewTable:
    """A CreateTable request that passed every check: what its table is created with."""

    players: int
    options: dict[str, Any]  # as stored: the request's, through JSON
    seats: tuple[Seat, ...]
    seed: str  # the deal's, kept secret until the last seat is taken
    fill_level: str


def check_create(
    game: Game,
    players: int,
    options: Mapping[str, Any],
    seats: Sequence[SeatRequest],
    fill_with_bots_after_seconds: float,
    fill_level: str,
) -> NewTable:
    """A CreateTable request checked whole (sizes, players, seats, entrants, levels, table
    options, and the game's own options by dealing once), before anything is written: a
    TableError saying what is wrong, or what the table is created with."""
    info = game.info
    options_json = json.dumps(dict(options), separators=(",", ":"), sort_keys=True)
    if len(options_json) > MAX_OPTIONS_JSON_CHARS:
        raise TableError(
            Code.RESOURCE_EXHAUSTED,
            f"options take {len(options_json)} characters as JSON; the limit is "
            f"{MAX_OPTIONS_JSON_CHARS}",
            reason=Reason.TOO_LARGE, meta={"field": "options", "max": MAX_OPTIONS_JSON_CHARS},
        )
    players = players or info.min_players
    if not info.min_players <= players <= info.max_players:
        span = (
            f"exactly {info.min_players}"
            if info.min_players == info.max_players
            else f"{info.min_players} to {info.max_players}"
        )
        raise TableError(
            Code.INVALID_ARGUMENT, f"{info.name} is played by {span} players, not {players}",
            reason=Reason.INVALID_ARGUMENT_PLAYERS,
            meta={"min": info.min_players, "max": info.max_players},
        )
    if seats and len(seats) != players:
        raise TableError(
            Code.INVALID_ARGUMENT,
            f"seats lists {len(seats)} seat(s) for {players} players: give one per player, "
            "or none for all open to people",
            reason=Reason.INVALID_ARGUMENT_SEAT,
        )
    if not math.isfinite(fill_with_bots_after_seconds) or not (
        0 <= fill_with_bots_after_seconds <= MAX_FILL_SECONDS
    ):
        raise TableError(
            Code.INVALID_ARGUMENT,
            f"fill_with_bots_after_seconds must be between 0 and {MAX_FILL_SECONDS:.0f}",
            reason=Reason.INVALID_ARGUMENT_OPTION,
            meta={"option": "fill_with_bots_after_seconds", "max": MAX_FILL_SECONDS},
        )
    resolved = []
    for i, s in enumerate(seats):
        if s.entrant and s.kind != SeatKind.BOT:
            raise TableError(
                Code.INVALID_ARGUMENT,
                f"seat {i} names an entrant but is not a bot seat: give it kind "
                "SEAT_KIND_BOT",
                reason=Reason.INVALID_ARGUMENT_SEAT, meta={"seat": i},
            )
        if s.entrant:
            check_entrant(s.entrant, f"seat {i}'s entrant")
            if s.bot_level and s.bot_level != s.entrant:
                raise TableError(
                    Code.INVALID_ARGUMENT,
                    f"seat {i} names both bot_level {s.bot_level[:MAX_BOT_LEVEL_CHARS]!r} "
                    f"and entrant {s.entrant!r}: give one (a level's name is that level)",
                    reason=Reason.INVALID_ARGUMENT_SEAT, meta={"seat": i},
                )
            s = SeatRequest(s.kind, "", s.entrant)
        resolved.append(s)
    seats = resolved
    levels = [s.bot_level for s in seats] + [fill_level]
    if any(len(level) > MAX_BOT_LEVEL_CHARS for level in levels):
        raise TableError(
            Code.RESOURCE_EXHAUSTED, f"bot levels are at most {MAX_BOT_LEVEL_CHARS} characters",
            reason=Reason.TOO_LARGE, meta={"field": "bot_level", "max": MAX_BOT_LEVEL_CHARS},
        )
    unknown = [level for level in levels if level and level not in LEVEL_NAMES]
    if unknown:
        raise TableError(
            Code.INVALID_ARGUMENT,
            f"unknown bot level {unknown[0]!r}; levels: {', '.join(LEVEL_NAMES)} "
            f"(empty: {DEFAULT_BOT_LEVEL})",
            reason=Reason.INVALID_ARGUMENT_BOT_LEVEL,
        )
    for name, kind in TABLE_OPTIONS.items():
        value = options.get(name)
        if name in options and (
            not isinstance(value, kind) or (kind is not bool and isinstance(value, bool))
        ):
            what = ("true or false" if kind is bool else "a string" if kind is str
                    else "a number of seconds")
            raise TableError(
                Code.INVALID_ARGUMENT, f"table option {name!r} must be {what}, got {value!r}",
                reason=Reason.INVALID_ARGUMENT_OPTION, meta={"option": name},
            )
    turn = options.get("turn_seconds", 0)
    if not (math.isfinite(turn) and 0 <= turn <= MAX_TURN_SECONDS):
        raise TableError(
            Code.INVALID_ARGUMENT,
            f"turn_seconds must be between 0 (no timer) and {MAX_TURN_SECONDS:.0f}",
            reason=Reason.INVALID_ARGUMENT_OPTION,
            meta={"option": "turn_seconds", "max": MAX_TURN_SECONDS},
        )
    ladder = options.get(LADDER_OPTION)
    if ladder is not None and LADDER_NAME.fullmatch(ladder) is None:
        raise TableError(
            Code.INVALID_ARGUMENT,
            f"table option {LADDER_OPTION!r} must be 1 to 40 of a-z, 0-9, '_', '.', '-', "
            "starting with a letter or digit",
            reason=Reason.INVALID_ARGUMENT_OPTION, meta={"option": LADDER_OPTION},
        )
    if ladder == PLAYERS_LADDER:  # rated tables' ladder: RateMatch may not write to it
        raise TableError(
            Code.INVALID_ARGUMENT,
            f"the ladder {PLAYERS_LADDER!r} is the rated tables' own: name another ladder",
            reason=Reason.INVALID_ARGUMENT_OPTION, meta={"option": LADDER_OPTION},
        )
    label = options.get(LABEL_OPTION)
    if label is not None and TABLE_LABEL.fullmatch(label) is None:
        raise TableError(
            Code.INVALID_ARGUMENT,
            f"table option {LABEL_OPTION!r} must be 1 to 64 of a-z, 0-9, '_', '.', '-', "
            "starting with a letter or digit",
            reason=Reason.INVALID_ARGUMENT_OPTION, meta={"option": LABEL_OPTION},
        )
    if BUDGET_OPTION in options:
        budget = options[BUDGET_OPTION]
        if not (math.isfinite(budget) and 0 <= budget <= MAX_MATCH_SECONDS):
            raise TableError(
                Code.INVALID_ARGUMENT,
                f"match_seconds must be between 0 and {MAX_MATCH_SECONDS:.0f} (7 days)",
                reason=Reason.INVALID_ARGUMENT_OPTION,
                meta={"option": BUDGET_OPTION, "max": MAX_MATCH_SECONDS},
            )
        if not turn > 0:
            raise TableError(
                Code.INVALID_ARGUMENT,
                "match_seconds is a budget beyond each move's turn_seconds: set "
                "turn_seconds above 0 too",
                reason=Reason.INVALID_ARGUMENT_OPTION, meta={"option": BUDGET_OPTION},
            )
    seed = secrets.token_hex(16)
    stored_options = json.loads(options_json)
    engine_options = game_options(stored_options)
    try:
        # the deal itself waits for the last seat (`_deal`, from this seed); made here it
        # checks the options now, and is dropped
        game.new_game(players, engine_options, seed)
    except ValueError as e:
        raise TableError(
            Code.INVALID_ARGUMENT, f"bad options for {info.name}: {e}",
            reason=Reason.INVALID_ARGUMENT_OPTION,
        ) from None
    # an option given under an older name (an alias) is kept under its name
    stored_options = canonical_options(info.options, stored_options)
    engine_options = game_options(stored_options)
    required = game.seat_kinds(players, engine_options)
    if required is not None:
        if not seats:
            seats = [SeatRequest(SeatKind(kind)) for kind in required]
        # a computer's seat must be a bot's; a person's seat may be a bot's too (a bot can
        # play a person's part, e.g. in bot-only test or tournament tables)
        wrong = [
            i
            for i, (s, kind) in enumerate(zip(seats, required, strict=True))
            if kind == "bot" and s.kind != SeatKind.BOT
        ]
        if wrong:
            bots = ", ".join(str(i) for i, kind in enumerate(required) if kind == "bot")
            raise TableError(
                Code.INVALID_ARGUMENT,
                f"{info.name} with these options keeps seat(s) {bots} for computers: "
                f"seat {wrong[0]} must be a bot seat",
                reason=Reason.INVALID_ARGUMENT_SEAT, meta={"seat": wrong[0]},
            )
    seat_records = tuple(
        Seat(kind=SeatKind.BOT, bot_level=s.entrant or s.bot_level or DEFAULT_BOT_LEVEL)
        if s.kind == SeatKind.BOT
        else Seat(kind=SeatKind.HUMAN)
        for s in (seats or [SeatRequest()] * players)
    )
    return NewTable(
        players=players,
        options=stored_options,
        seats=seat_records,
        seed=seed,
        fill_level=(fill_level or DEFAULT_BOT_LEVEL) if fill_with_bots_after_seconds else "",
    )


MAX_PLAYER_ID_CHARS = 200


def reserve_seats(seats: tuple[Seat, ...], player_ids: Sequence[str]) -> tuple[Seat, ...]:
    """The seats with seat i reserved for player_ids[i] where it is not empty (a game among
    friends, or the players matchmaking seated): only a person's seat, each player once."""
    if len(player_ids) > len(seats):
        raise TableError(
            Code.INVALID_ARGUMENT,
            f"player_ids names {len(player_ids)} seats; the table has {len(seats)}",
            reason=Reason.INVALID_ARGUMENT_SEAT,
        )
    named = [p for p in player_ids if p]
    if len(set(named)) != len(named):
        raise TableError(
            Code.INVALID_ARGUMENT, "player_ids names a player twice: one seat each",
            reason=Reason.INVALID_ARGUMENT_SEAT,
        )
    out = list(seats)
    for i, player in enumerate(player_ids):
        if not player:
            continue
        if len(player) > MAX_PLAYER_ID_CHARS or not player.isprintable():
            raise TableError(
                Code.INVALID_ARGUMENT,
                f"player_ids[{i}] is not a player id (1 to {MAX_PLAYER_ID_CHARS} printable "
                "characters)",
                reason=Reason.INVALID_ARGUMENT_SEAT, meta={"seat": i},
            )
        if player.startswith(BOT_PLAYER_PREFIX):
            raise TableError(
                Code.INVALID_ARGUMENT,
                f"player_ids[{i}] names a bot level: reserve a bot seat with seats instead",
                reason=Reason.INVALID_ARGUMENT_SEAT, meta={"seat": i},
            )
        if seats[i].kind != SeatKind.HUMAN:
            raise TableError(
                Code.INVALID_ARGUMENT, f"seat {i} is a bot seat: it cannot be reserved for a player",
                reason=Reason.INVALID_ARGUMENT_SEAT, meta={"seat": i},
            )
        out[i] = replace(seats[i], player=player, reserved=True)
    return tuple(out)
