"""The domain model of a table, as every store keeps it and the server reasons about it: the
record (seats, status, the engine state as bytes, the deals' commitments), its events, the
table options the server itself reads, the filter tables are listed by, and ladder ratings.

The interface that stores these (`Store`, its errors, `open_store`) is `service.store`.
"""

from __future__ import annotations

import enum
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any

from engines.cache import remember
from engines.commitments import Sealed


class SeatKind(enum.StrEnum):
    HUMAN = "human"
    BOT = "bot"


class Status(enum.StrEnum):
    WAITING = "waiting"  # some seat is empty: no moves yet
    PLAYING = "playing"
    FINISHED = "finished"
    ABANDONED = "abandoned"  # closed: no person came back to it in time (see Tables)

    @property
    def closed(self) -> bool:
        """Nothing more happens at the table: finished, or closed as abandoned."""
        return self in (Status.FINISHED, Status.ABANDONED)


class EventKind(enum.StrEnum):
    CREATED = "created"
    JOINED = "joined"
    LEFT = "left"
    MOVE = "move"
    END = "end"
    SEATS_OPENED = "seats_opened"  # empty human seats handed to bots after the fill delay
    READY = "ready"  # a seat is ready for the next deal (the pause between deals goes on)
    DEAL_STARTS = "deal_starts"  # the pause between deals ended: the next deal is played


@dataclass(frozen=True)
class Seat:
    """One seat. `token_hash` is the SHA-256 hex of the seat token; never leaves the server."""

    kind: SeatKind = SeatKind.HUMAN
    bot_level: str = ""
    occupied: bool = False
    name: str = ""
    is_bot: bool = False
    token_hash: str = ""
    joined_at: float = 0.0
    timeouts: int = 0  # turn timers that ran out in a row for this seat
    away: bool = False  # gone: the server plays for it at once, until it comes back
    # seconds of the table's match budget (option match_seconds) this seat has thought past
    # its turn_seconds; kept in the seat JSON only when spent, so older rows read back as 0
    budget_used: float = 0.0
    # the player (`service.identity.Player.player_id`) this seat belongs to: bound when a
    # player took it with an identity token, or reserved for them at the table's creation
    # (`reserved`: it stays theirs when they leave). Only that player takes or plays it.
    player: str = ""
    reserved: bool = False
    # digests of the seat's further tokens: each JoinTable of its player from another device
    # adds one (the oldest dropped beyond MAX_SEAT_TOKENS); `token_hash` is the first
    tokens: tuple[str, ...] = ()

    def back(self) -> Seat:
        """The seat with its person back at it: no timeouts, not away."""
        return replace(self, timeouts=0, away=False)

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind.value,
            "bot_level": self.bot_level,
            "occupied": self.occupied,
            "name": self.name,
            "is_bot": self.is_bot,
            "token_hash": self.token_hash,
            "joined_at": self.joined_at,
            **({"timeouts": self.timeouts} if self.timeouts else {}),
            **({"away": True} if self.away else {}),
            **({"budget_used": self.budget_used} if self.budget_used else {}),
            **({"player": self.player} if self.player else {}),
            **({"reserved": True} if self.reserved else {}),
            **({"tokens": list(self.tokens)} if self.tokens else {}),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Seat:
        return cls(
            kind=SeatKind(data["kind"]),
            bot_level=data.get("bot_level", ""),
            occupied=bool(data.get("occupied", False)),
            name=data.get("name", ""),
            is_bot=bool(data.get("is_bot", False)),
            token_hash=data.get("token_hash", ""),
            joined_at=float(data.get("joined_at", 0.0)),
            timeouts=int(data.get("timeouts", 0)),
            away=bool(data.get("away", False)),
            budget_used=float(data.get("budget_used", 0.0)),
            player=data.get("player", ""),
            reserved=bool(data.get("reserved", False)),
            tokens=tuple(data.get("tokens", ())),
        )


def seats_to_json(seats: Sequence[Seat]) -> str:
    return json.dumps([s.to_json() for s in seats], separators=(",", ":"))


class SeatsJson:
    """seats_to_json remembered per seats tuple: a table's seats change a few times in a
    match, its moves are written hundreds of times. Keyed by identity (tuples of frozen seats
    never change), holding the tuple so that its id cannot be reused while remembered."""

    def __init__(self, size: int = 1024) -> None:
        self._size = size
        self._texts: dict[int, tuple[tuple[Seat, ...], str]] = {}

    def __call__(self, seats: tuple[Seat, ...]) -> str:
        hit = self._texts.get(id(seats))
        if hit is not None and hit[0] is seats:
            return hit[1]
        text = seats_to_json(seats)
        remember(self._texts, self._size, id(seats), (seats, text))
        return text


def seats_from_json(text: str) -> tuple[Seat, ...]:
    return tuple(Seat.from_json(d) for d in json.loads(text))


def deals_to_json(deals: Sequence[Sealed]) -> str:
    """A table's commitments as the stores keep them; '' for none (as rows written before
    commitments read back)."""
    if not deals:
        return ""
    return json.dumps([d.to_json() for d in deals], separators=(",", ":"))


def deals_from_json(text: str | bytes | None) -> tuple[Sealed, ...]:
    return tuple(Sealed.from_json(d) for d in json.loads(text)) if text else ()


@dataclass(frozen=True)
class TableRecord:
    """A table as stored: everything needed to serve it after a restart.

    Until every seat is taken nothing is dealt: `state` is empty and `seed` holds the table's
    secret seed, from which the deal is made when the last seat is taken (then `seed` is
    cleared: the state holds what the engine keeps of it). So no view of a waiting table can
    show a card, however often one client takes and gives back its seats.
    """

    table_id: str
    game: str
    players: int
    options: dict[str, Any]
    seats: tuple[Seat, ...]
    status: Status
    version: int
    state: bytes
    created_at: float
    fill_with_bots_after_seconds: float = 0.0
    fill_level: str = ""
    seed: str = ""  # never leaves the server; empty once dealt
    # when a person last sat at the table or called with a seat token (unix seconds): stores
    # only ever raise it, and raising it makes no new version (presence is no change)
    seen_at: float = 0.0
    # the table's deal commitments so far (engines.commitments), oldest first: their digests
    # are public from their version on; salts and cards leave the server only in the record
    deals: tuple[Sealed, ...] = ()
    # the pause between deals (service.pacing): the unix time from which the next deal may be
    # played, 0 when there is no pause; and the seats that said they are ready (ascending)
    next_deal_at: float = 0.0
    ready: tuple[int, ...] = ()

    @property
    def dealt(self) -> bool:
        return bool(self.state)

    @property
    def paused(self) -> bool:
        """In the pause between deals: no move is taken until it ends."""
        return self.next_deal_at > 0 and self.status == Status.PLAYING

    def watched(self) -> bool:
        """Whether the table is closed as abandoned when no person comes back to it: an open
        table with a seat for a person. Tables whose every seat is a bot's (or held by a bot)
        are left to the bots."""
        return not self.status.closed and any(
            s.kind == SeatKind.HUMAN and not s.is_bot for s in self.seats
        )

    def with_(self, **changes: Any) -> TableRecord:
        """A copy with some fields changed (dataclasses.replace, without its per-call field
        introspection: every move copies its table's record)."""
        unknown = changes.keys() - _RECORD_FIELDS
        if unknown:
            raise TypeError(f"TableRecord has no field {sorted(unknown)[0]!r}")
        new = object.__new__(TableRecord)
        new.__dict__.update(self.__dict__, **changes)
        return new

    def budget_left(self, seat: int) -> float | None:
        """What `seat` has left of its match budget (option match_seconds); None: no budget."""
        budget = self.options.get(BUDGET_OPTION)
        if budget is None:
            return None
        return max(0.0, float(budget) - self.seats[seat].budget_used)

    def fill_due_at(self) -> float | None:
        """When empty human seats are handed to bots (None: never, or none is empty)."""
        if self.status.closed or self.fill_with_bots_after_seconds <= 0:
            return None
        if any(s.kind == SeatKind.HUMAN and not s.occupied for s in self.seats):
            return self.created_at + self.fill_with_bots_after_seconds
        return None

    def bot_open_at(self) -> float | None:
        """From when a bot may take some free seat (None: no seat is ever free for a bot).

        Stored beside the record so that "tables waiting for a bot" is one indexed query.
        """
        if self.status.closed:
            return None
        if any(s.kind == SeatKind.BOT and not s.occupied for s in self.seats):
            return self.created_at
        return self.fill_due_at()

    def bot_levels_open(self, now: float) -> set[str]:
        """The levels of the free seats a bot may take at `now`: free bot seats, and free
        human seats (as the fill level) once the fill delay has passed."""
        if self.status.closed:
            return set()
        levels = {s.bot_level for s in self.seats if s.kind == SeatKind.BOT and not s.occupied}
        due = self.fill_due_at()
        if due is not None and due <= now:
            levels.add(self.fill_level)
        return levels


_RECORD_FIELDS = frozenset(f.name for f in fields(TableRecord))


@dataclass(frozen=True)
class Event:
    """One change of a table. `state` is the engine state after it, so that any old event can
    be rendered again as any subscriber's view; `seats` and `status` likewise."""

    table_id: str
    version: int
    kind: EventKind
    seat: int  # who joined, left or moved; -1 when none
    move: str  # the full canonical move text (MOVE only); redacted per subscriber on the way out
    name: str
    time: float
    state: bytes
    seats: tuple[Seat, ...] = field(default=())
    status: Status = Status.WAITING
    deal_over: bool = False
    auto: bool = False  # played by the server for a seat whose turn timer ran out
    abandoned: bool = False  # END only: the table was closed as abandoned, not played out
    # MOVE only: why the mover's client played this in place of its bot's answer (FALLBACKS)
    fallback: str = ""
    # MOVE only, with a fallback: the bot's own answer that was refused (its author's to
    # read in the record; no view or event of the table shows it)
    rejected: str = ""
    # the pause between deals after this event, as the record had it (TableRecord)
    next_deal_at: float = 0.0
    ready: tuple[int, ...] = ()


def pause_text(next_deal_at: float, ready: Sequence[int]) -> str:
    """An event's pause as the stores keep it: '' for none, else "<unix time>;<seats>"."""
    if not next_deal_at:
        return ""
    return f"{next_deal_at!r};{','.join(str(s) for s in ready)}"


def pause_fields(text: str | bytes | None) -> dict[str, Any]:
    """pause_text read back, as Event's keyword arguments ('' or absent: no pause)."""
    if isinstance(text, bytes):
        text = text.decode()
    if not text:
        return {}
    at, _, seats = text.partition(";")
    return {"next_deal_at": float(at), "ready": ready_from_text(seats)}


def ready_text(ready: Sequence[int]) -> str:
    return ",".join(str(s) for s in ready)


def ready_from_text(text: str | bytes | None) -> tuple[int, ...]:
    if isinstance(text, bytes):
        text = text.decode()
    return tuple(int(s) for s in text.split(",")) if text else ()


# the reasons a bot client may give for a move that stands in for its bot's answer
FALLBACKS = ("illegal", "garbage", "late", "crashed")


FALLBACK_SHIFT = 3  # event_flags bits 3-5: 0 none, else 1 + the reason's index in FALLBACKS


def event_flags(e: Event) -> int:
    """deal_over, auto and abandoned packed into one integer (bits 0, 1, 2), and the move's
    fallback in bits 3-5: the stores keep it where deal_over alone was, so tables written
    before the others existed read back unchanged."""
    flags = int(e.deal_over) | (2 if e.auto else 0) | (4 if e.abandoned else 0)
    if e.fallback:
        flags |= (FALLBACKS.index(e.fallback) + 1) << FALLBACK_SHIFT
    return flags


def flags_fields(flags: int) -> dict[str, Any]:
    """event_flags read back, as Event's keyword arguments."""
    reason = (flags >> FALLBACK_SHIFT) & 7
    return {
        "deal_over": bool(flags & 1),
        "auto": bool(flags & 2),
        "abandoned": bool(flags & 4),
        "fallback": FALLBACKS[reason - 1] if 0 < reason <= len(FALLBACKS) else "",
    }


# the table option that turns the turn timer on (seconds a seat may think; 0 or absent: none)
TIMER_OPTION = "turn_seconds"


# the table option that gives each seat a budget for the whole match past its turn_seconds
BUDGET_OPTION = "match_seconds"


# the table option that makes a table private: no spectators, not listed in the lobby
PRIVATE_OPTION = "private"


# the table option of tables made by rated matchmaking: their end rates their players
RATED_OPTION = "rated"

# the ladder rated tables' players and bot levels stand on (`Store.rate`), apart from the
# entrants' ladders; a built-in level stands on it as "bot:<level>"
PLAYERS_LADDER = "players"
BOT_PLAYER_PREFIX = "bot:"

# a seat's tokens: the first and the newest of the others (one per device of its player)
MAX_SEAT_TOKENS = 8


# the table option naming the ladder a table is played for (RateMatch rates only its tables)
LADDER_OPTION = "ladder"


# what a ladder may be called: the characters and length of an entrant's name
LADDER_NAME = re.compile(r"[a-z0-9][a-z0-9_.-]{0,39}")


# the table option naming the table for its creator (a tournament's match): public, never
# given to the engine; a tournament finds its tables by it after a restart
LABEL_OPTION = "label"


TABLE_LABEL = re.compile(r"[a-z0-9][a-z0-9_.-]{0,63}")


@dataclass(frozen=True)
class TableFilter:
    """What ListTables may ask for; `bot_open_before`: tables a bot may join at that time."""

    game: str = ""
    status: Status | None = None
    bot_open_before: float | None = None
    fill_due_before: float | None = None
    # only tables with a turn timer (option turn_seconds): what the timer round scans
    timed: bool = False
    # only tables in a pause between deals due to end by this time: what the pacing round ends
    pause_due_before: float | None = None
    # with bot_open_before: only tables with a seat a bot of one of these levels may take
    bot_levels: frozenset[str] | None = None
    # leave out private tables (option private): they are joined by id, not found in a lobby
    public_only: bool = False
    # leave out tables closed as abandoned (the lobby's default)
    hide_abandoned: bool = False
    # only watched tables (`TableRecord.watched`) no person was seen at since before this
    # time: what the abandonment round closes, the longest unseen first
    idle_before: float | None = None
    # a position in this filter's order (`order_key` of the last table of the previous page):
    # only the tables past it
    after: tuple[float, str] | None = None
    limit: int = 100

    @property
    def oldest_first(self) -> bool:
        """Tables waiting for a bot (or for their fill delay) come longest-waiting first, so
        that none starves behind newer ones when more wait than a page holds."""
        return (
            self.bot_open_before is not None
            or self.fill_due_before is not None
            or self.idle_before is not None
            or self.pause_due_before is not None
        )

    def order_key(self, record: TableRecord) -> tuple[float, str]:
        """The sort key of this filter's order: ascending when `oldest_first` (by when the
        table opened to bots, or its fill is due), else descending (newest first)."""
        if self.bot_open_before is not None:
            return (record.bot_open_at() or 0.0, record.table_id)
        if self.fill_due_before is not None:
            return (record.fill_due_at() or 0.0, record.table_id)
        if self.idle_before is not None:
            return (record.seen_at, record.table_id)
        if self.pause_due_before is not None:
            return (record.next_deal_at, record.table_id)
        return (record.created_at, record.table_id)


def matches(record: TableRecord, flt: TableFilter) -> bool:
    """The filter as a predicate, for backends that scan."""
    if flt.game and record.game != flt.game:
        return False
    if flt.status is not None and record.status != flt.status:
        return False
    if flt.bot_open_before is not None:
        at = record.bot_open_at()
        if at is None or at > flt.bot_open_before:
            return False
        if flt.bot_levels is not None and not (
            record.bot_levels_open(flt.bot_open_before) & flt.bot_levels
        ):
            return False
    if flt.fill_due_before is not None:
        at = record.fill_due_at()
        if at is None or at > flt.fill_due_before:
            return False
    if flt.pause_due_before is not None and not (
        record.paused and record.next_deal_at <= flt.pause_due_before
    ):
        return False
    if flt.idle_before is not None and not (
        record.watched() and record.seen_at < flt.idle_before
    ):
        return False
    if flt.public_only and record.options.get(PRIVATE_OPTION):
        return False
    if flt.hide_abandoned and record.status == Status.ABANDONED:
        return False
    if flt.after is not None:
        key = flt.order_key(record)
        if (key <= flt.after) if flt.oldest_first else (key >= flt.after):
            return False
    return not flt.timed or bool(record.options.get(TIMER_OPTION))


@dataclass(frozen=True)
class Rating:
    """An entrant's standing on one ladder in one game (OpenSkill mu and sigma)."""

    ladder: str
    game: str
    entrant: str
    mu: float
    sigma: float
    matches: int
    updated_at: float

    def to_json(self) -> dict[str, Any]:
        return {"mu": self.mu, "sigma": self.sigma, "matches": self.matches,
                "updated_at": self.updated_at}

    @classmethod
    def from_json(cls, ladder: str, game: str, entrant: str, data: dict[str, Any]) -> Rating:
        return cls(ladder, game, entrant, float(data["mu"]), float(data["sigma"]),
                   int(data["matches"]), float(data["updated_at"]))


@dataclass(frozen=True)
class RatedMatch:
    """A match rated on a ladder: its tables are never rated again, nor is its id."""

    ladder: str
    match_id: str
    game: str
    table_ids: tuple[str, ...]
    entrants: tuple[str, ...]
    rated_at: float
    # a rated table of people (`service.people_ratings`): each entrant's place at it and the
    # name it played under, written beside the ratings (`service.rating_history`) in the same
    # step; not kept with the match itself
    ranks: tuple[int, ...] = ()
    names: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"game": self.game, "table_ids": list(self.table_ids),
                "entrants": list(self.entrants), "rated_at": self.rated_at}

    @classmethod
    def from_json(cls, ladder: str, match_id: str, data: dict[str, Any]) -> RatedMatch:
        return cls(ladder, match_id, data["game"], tuple(data["table_ids"]),
                   tuple(data["entrants"]), float(data["rated_at"]))


def sort_ratings(ratings: Sequence[Rating]) -> list[Rating]:
    """Standings order: per game, the best conservative rating (mu - 3 sigma) first."""
    return sorted(ratings, key=lambda r: (r.game, -(r.mu - 3 * r.sigma), r.entrant))
