"""Who plays a tournament: built-in bot levels and outside entrants, and how their seats are
reserved.

A built-in level (`bots.levels.LEVELS`) is played by the bot workers (`croupier bots`); any
other name is an outside entrant, a program of its own playing through the bot SDK or the
bridge, which takes only the seats reserved for its name. `ext:NAME` spells an outside entrant
explicitly; a plain name that is not a level means the same. Names are stored plain (no
`ext:`), so result rows and record file names never hold a ':'.
"""

from __future__ import annotations

import difflib
import re

from croupier.v1 import croupier_pb2 as pb

from bots.levels import LEVELS

NAME = re.compile(r"[a-z0-9][a-z0-9_.-]{0,39}")  # the server's rule for entrant names
PREFIX = "ext:"
# the turn timer of tournaments and ladders with outside entrants unless one is given: a
# program that died holds its seats, and only a timer then finishes its tables (the built-in
# workers give their seats back, or are replaced)
OUTSIDE_MOVE_SECONDS = 30.0


def parse_one(text: str) -> str:
    """One `--entrants` item as its stored name; ValueError saying what is wrong."""
    item = text.strip()
    outside = item.startswith(PREFIX)
    name = item[len(PREFIX):] if outside else item
    if not NAME.fullmatch(name):
        raise ValueError(
            f"bad entrant name {item!r}: a name is 1 to 40 of a-z, 0-9, '_', '.', '-', "
            f"starting with a letter or digit (built-in levels: {', '.join(LEVELS)}; "
            "anything else, or ext:NAME, is an outside entrant)"
        )
    if outside and name in LEVELS:
        raise ValueError(f"{item!r}: {name} is a built-in level, an outside entrant cannot "
                         f"be named like one (write {name} for the level)")
    near = difflib.get_close_matches(name, LEVELS, n=1, cutoff=0.75)
    if not outside and name not in LEVELS and near:
        # a mistyped level would make tables that wait for a program nobody runs
        raise ValueError(f"{item!r} is no built-in level: did you mean {near[0]}? (write "
                         f"{PREFIX}{name} for an outside entrant of that name)")
    return name


def parse(text: str) -> list[str]:
    """`--entrants hard,ext:alice,bob` -> ['hard', 'alice', 'bob'] (at least two, no repeats)."""
    names = [parse_one(item) for item in text.split(",") if item.strip()]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ValueError(f"--entrants names {', '.join(repeated)} more than once")
    if len(names) < 2:
        raise ValueError("--entrants needs at least two different entrants")
    return names


def is_outside(name: str) -> bool:
    return name not in LEVELS


def outside(names: list[str]) -> list[str]:
    return [n for n in names if is_outside(n)]


def move_seconds(given: float | None, names: list[str], timer_option: bool) -> float:
    """The seconds per decision: as given; else OUTSIDE_MOVE_SECONDS when outside entrants
    play and no `turn_seconds` table option is set; else 0 (no timer)."""
    if given is not None:
        return given
    return OUTSIDE_MOVE_SECONDS if outside(names) and not timer_option else 0.0


def seat_spec(name: str) -> pb.SeatSpec:
    """A bot seat reserved for the entrant: `bot_level` for a level (as servers before
    entrants understand it), `entrant` for an outside program."""
    if is_outside(name):
        return pb.SeatSpec(kind=pb.SEAT_KIND_BOT, entrant=name)
    return pb.SeatSpec(kind=pb.SEAT_KIND_BOT, bot_level=name)


def seat_entrant(seat: pb.SeatInfo) -> str:
    """Whom a listed seat is reserved for: `entrant` where the server fills it, else its
    level (servers before entrants)."""
    return seat.entrant or seat.bot_level
