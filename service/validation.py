"""Request validation for tables: the limits every request is held to, entrant names, table
options, table ids and `rejected` answers, checked before anything is read or written."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from common.level_names import LEVEL_NAMES
from service.model import (
    BUDGET_OPTION,
    LABEL_OPTION,
    LADDER_OPTION,
    PRIVATE_OPTION,
    TIMER_OPTION,
    SeatKind,
)
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
TABLE_OPTIONS: dict[str, type | tuple[type, ...]] = {
    PRIVATE_OPTION: bool, TIMER_OPTION: (int, float), BUDGET_OPTION: (int, float),
    LADDER_OPTION: str, LABEL_OPTION: str,
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
        )
    if len(rejected) > MAX_REJECTED_CHARS:
        raise TableError(
            Code.INVALID_ARGUMENT,
            f"rejected is at most {MAX_REJECTED_CHARS} characters (cut it), not {len(rejected)}",
        )
    if not rejected.isprintable():
        raise TableError(
            Code.INVALID_ARGUMENT,
            "rejected holds control characters: replace them (e.g. with U+FFFD)",
        )


def check_table_id(table_id: str) -> None:
    """INVALID_ARGUMENT for what cannot be a table id, before it is used as a key anywhere."""
    if not table_id:
        raise TableError(Code.INVALID_ARGUMENT, "table_id is required")
    if len(table_id) > MAX_TABLE_ID_CHARS:
        raise TableError(Code.INVALID_ARGUMENT, "table_id is too long to be a table id")
