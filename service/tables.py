"""Table logic, independent of gRPC: seats, tokens, moves, events.

Every change is validated completely before anything is written, then committed as one
compare-and-set on the table version together with its events; so an error never changes a
table, and two writers (in this process or another one sharing the store) never both win.
Inside a process a per-table lock serialises writers, so conflicts there only come from
clients holding a stale version or from other processes.

Nothing is dealt until every seat is taken: a table keeps its secret seed and deals from it
when the last seat is taken, so no seat (and no client hopping from seat to seat) sees a card
before play starts. A table no person has been at for a while is closed as abandoned
(`close_abandoned`); presence is kept as a last-seen time that calls with a person's seat
token raise, written at most every `Abandon.presence_every` seconds and without a new version.
"""

from __future__ import annotations

import asyncio
import base64
import enum
import hashlib
import hmac
import json
import math
import random
import re
import secrets
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from bots.levels import LEVELS
from engines.commitments import Sealed, shuffled
from engines.contract import Game, IllegalMove, canonical_options
from service import states
from service.logging import get_logger
from service.store import (
    BUDGET_OPTION,
    FALLBACKS,
    LABEL_OPTION,
    LADDER_NAME,
    LADDER_OPTION,
    PRIVATE_OPTION,
    TABLE_LABEL,
    TIMER_OPTION,
    Event,
    EventKind,
    Seat,
    SeatKind,
    Status,
    Store,
    TableExists,
    TableFilter,
    TableMissing,
    TableRecord,
    VersionConflict,
)

log = get_logger("croupier.tables")  # a table's start and end: the console's lines per table

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
MAX_LIST_LIMIT = 500
# timed tables one server's timer round looks at (each only reads a record; far beyond what
# one process plays at once)
MAX_TIMED_TABLES = 100_000
DEFAULT_LIST_LIMIT = 100
MAX_PAGE_TOKEN_CHARS = 512
PAGE_TOKEN_VERSION = 1
MAX_TABLE_ID_CHARS = 64
MAX_FILL_SECONDS = 7 * 24 * 3600.0
DEFAULT_BOT_LEVEL = "random"
# An entrant: a named bot player. The built-in levels are entrants the bot workers serve;
# any other name is an outside entrant (a bot of its own, through a bot SDK).
ENTRANT_NAME = re.compile(r"[a-z0-9][a-z0-9_.-]{0,39}")
MAX_LIST_ENTRANTS = 16
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
# turn timers that run out in a row before a seat counts as gone: from then on the server plays
# for it as soon as it is to act, until its person calls again with the seat token
AWAY_AFTER_TIMEOUTS = 2
# longest a person's presence waits before it is written again (shorter for short limits)
PRESENCE_EVERY = 30.0
# tables remembered per process as recently seen (beyond: forgotten, and written again)
MAX_SEEN_REMEMBERED = 100_000
# tables one abandonment round closes at most per status (the next round takes the rest)
ABANDON_BATCH = 100


@dataclass(frozen=True)
class Abandon:
    """When a table no person has sat at or come back to is closed as abandoned: a waiting
    table after `waiting_seconds`, a playing one after `playing_seconds` (0: never)."""

    waiting_seconds: float = 300.0
    playing_seconds: float = 1800.0

    def __post_init__(self) -> None:
        for name in ("waiting_seconds", "playing_seconds"):
            value = getattr(self, name)
            if not math.isfinite(value) or value < 0:
                raise ValueError(
                    f"the time before a table is closed as abandoned ({name}) must be 0 "
                    f"(never) or a positive number of seconds, got {value!r}"
                )

    @property
    def presence_every(self) -> float:
        """How stale a table's last-seen time may get while a person is there: well inside
        the shortest limit, so presence never lags into a closing."""
        limits = [s / 5 for s in (self.waiting_seconds, self.playing_seconds) if s > 0]
        return min([PRESENCE_EVERY, *limits])

    def limit(self, status: Status) -> float:
        if status == Status.WAITING:
            return self.waiting_seconds
        if status == Status.PLAYING:
            return self.playing_seconds
        return 0.0


class Code(enum.Enum):
    """The error classes of the API; the server maps them to gRPC status codes one to one."""

    INVALID_ARGUMENT = "invalid_argument"
    FAILED_PRECONDITION = "failed_precondition"
    ABORTED = "aborted"
    NOT_FOUND = "not_found"
    UNAUTHENTICATED = "unauthenticated"
    PERMISSION_DENIED = "permission_denied"
    RESOURCE_EXHAUSTED = "resource_exhausted"
    UNAVAILABLE = "unavailable"  # shutting down: retry elsewhere or later


class TableError(Exception):
    """A refused request: the table is unchanged. The message says what and why, and never
    carries a hidden card or a token."""

    def __init__(self, code: Code, message: str, log_message: str | None = None):
        super().__init__(message)
        self.code = code
        self.message = message
        # what logs may say: a refused move's reason can tell what its mover holds
        self.log_message = message if log_message is None else log_message


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def default_games(name: str) -> Game:
    """engines.registry.get_game, imported late so this module loads without every engine."""
    global _get_game
    if _get_game is None:
        from engines.registry import get_game

        _get_game = get_game
    return _get_game(name)


_get_game: Callable[[str], Game] | None = None


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
    return "" if name in LEVELS else name


def reserved_for(index: int, seat: Seat) -> str:
    """Why a bot may not take `seat`: whose it is (Seat.bot_level holds a bot seat's entrant,
    a level's or an outside one's)."""
    entrant = seat.bot_level
    level = " (a built-in level, served by the bot workers)" if entrant in LEVELS else ""
    return f"seat {index} is reserved for entrant {entrant}{level}"


@dataclass(frozen=True)
class SeatRequest:
    kind: SeatKind = SeatKind.HUMAN
    bot_level: str = ""
    entrant: str = ""  # bot seats: a named entrant (a level's name: that level)


REPLAY_WINDOW = 16
"""A retried SubmitMove is recognised while the table is at most this many versions past it."""


@dataclass(frozen=True)
class MoveOutcome:
    record: TableRecord
    seat: int
    move: str  # canonical
    public: str  # the move as a spectator sees it: what logs may show
    events: tuple[Event, ...]
    replayed: bool = False  # a retry of a move that had already landed: nothing new happened


class Hub:
    """Wakes streams when a table gets new events in this process.

    A waiter takes the table's current signal *before* reading the store, so an event
    committed between its read and its wait still wakes it. Streams also poll the store now
    and then, which covers writers in other processes.
    """

    def __init__(self) -> None:
        self.closed = False
        self._signals: weakref.WeakValueDictionary[str, asyncio.Event] = (
            weakref.WeakValueDictionary()
        )

    def signal(self, table_id: str) -> asyncio.Event:
        ev = self._signals.get(table_id)
        if ev is None:
            ev = asyncio.Event()
            if self.closed:
                ev.set()
            else:
                self._signals[table_id] = ev
        return ev

    def close(self) -> None:
        """Wakes every waiter for good: the server is shutting down."""
        self.closed = True
        for table_id in list(self._signals):
            self.publish(table_id)

    def publish(self, table_id: str) -> None:
        ev = self._signals.pop(table_id, None)
        if ev is not None:
            ev.set()


def closed_as_abandoned(table_id: str, what: str) -> TableError:
    return TableError(
        Code.FAILED_PRECONDITION,
        f"table was closed as abandoned: no person came back to table {table_id} in time; "
        f"{what}",
    )


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


class Tables:
    def __init__(
        self,
        store: Store,
        games: Callable[[str], Game] = default_games,
        clock: Callable[[], float] = time.time,
        abandon: Abandon | None = None,
    ) -> None:
        self.store = store
        self.games = games
        self.clock = clock
        self.abandon = abandon or Abandon()
        self.hub = Hub()
        self._locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()
        # table -> when this process last wrote a person's presence there
        self._seen: dict[str, float] = {}

    # --- helpers ------------------------------------------------------------------------
    def game(self, name: str) -> Game:
        try:
            return self.games(name)
        except ValueError as e:
            raise TableError(Code.INVALID_ARGUMENT, str(e)) from None

    def lock(self, table_id: str) -> asyncio.Lock:
        lock = self._locks.get(table_id)
        if lock is None:
            lock = asyncio.Lock()
            self._locks[table_id] = lock
        return lock

    async def get(self, table_id: str) -> TableRecord:
        check_table_id(table_id)
        record = await self.store.get(table_id)
        if record is None:
            raise TableError(Code.NOT_FOUND, f"no table {table_id!r}")
        return record

    @staticmethod
    def authenticate(record: TableRecord, token: str | None) -> int | None:
        """The seat holding `token`; None without a token (a spectator)."""
        if not token:
            if record.options.get(PRIVATE_OPTION):
                raise TableError(
                    Code.PERMISSION_DENIED,
                    f"table {record.table_id} is private: spectators are not admitted; "
                    "send the seat token of a seat you hold",
                )
            return None
        # every seat is compared, so the time taken says nothing about which matched
        found = Tables._held_by(record, token)
        if found is None:
            raise TableError(
                Code.PERMISSION_DENIED,
                f"the token holds no seat at table {record.table_id} (wrong table, or the seat "
                "was given up)",
            )
        return found

    @staticmethod
    def _held_by(record: TableRecord, token: str) -> int | None:
        """The occupied seat whose token is `token`, comparing every seat in constant time."""
        digest = hash_token(token)
        found = None
        for i, seat in enumerate(record.seats):
            if seat.occupied and hmac.compare_digest(digest, seat.token_hash):
                found = i
        return found

    @staticmethod
    def _odd_characters(token: str) -> str:
        """Says whether a refused token holds characters outside the alphabet, without
        quoting any of them."""
        odd = sum(1 for ch in token if not (ch.isascii() and (ch.isalnum() or ch in "-_")))
        return f", {odd} of them outside that alphabet" if odd else ""

    @staticmethod
    def require_seat(record: TableRecord, token: str | None) -> int:
        if not token:
            raise TableError(
                Code.UNAUTHENTICATED,
                "a seat token is required: send 'authorization: Bearer <token>' metadata "
                "(JoinTable returns the token)",
            )
        seat = Tables.authenticate(record, token)
        assert seat is not None
        return seat

    async def _commit(
        self,
        old: TableRecord,
        new: TableRecord,
        events: Sequence[Event],
        idle_before: float | None = None,
    ) -> None:
        try:
            await self.store.commit(new, events, old.version, idle_before)
        except VersionConflict:
            raise TableError(
                Code.ABORTED,
                f"table {old.table_id} changed while this request ran (it is past version "
                f"{old.version}); fetch the view and try again",
            ) from None
        except TableMissing:
            raise TableError(Code.NOT_FOUND, f"no table {old.table_id!r}") from None
        self.hub.publish(old.table_id)

    @staticmethod
    def _status(seats: Sequence[Seat], game: Game, state: Any | None) -> Status:
        if state is not None and game.is_over(state):
            return Status.FINISHED
        return Status.PLAYING if all(s.occupied for s in seats) else Status.WAITING

    @staticmethod
    def _deal(game: Game, record: TableRecord, version: int) -> TableRecord:
        """`record` dealt, from its seed and options, at `version`: made when its last seat is
        taken, and the same deal as the one CreateTable checked the options with. The seed
        goes (the state keeps what the engine needs of it); the deal's commitment comes."""
        if not record.seed:
            raise RuntimeError(f"table {record.table_id} has neither a deal nor a seed")
        state = game.new_game(record.players, game_options(record.options), record.seed)
        data = game.encode(state)
        states.remember(game, data, state)
        return record.with_(state=data, seed="", deals=Tables._sealed(game, None, state,
                                                                       (), version))

    @staticmethod
    def _sealed(
        game: Game, before: Any | None, after: Any, deals: tuple[Sealed, ...], version: int
    ) -> tuple[Sealed, ...]:
        """`deals` with a commitment to the cards of `after` when they are freshly shuffled
        (engines.commitments), made at `version`; else `deals` itself."""
        if not shuffled(game, before, after):
            return deals
        return (*deals, Sealed.seal(game, after, len(deals), version))

    async def present(self, record: TableRecord, seat: int | None) -> None:
        """A seated person called (or keeps a stream open): the table's last-seen time is
        raised, at most every `presence_every` seconds per table and process, and with no new
        version (nobody's view goes stale). Bots are not people: their calls do not count."""
        if seat is None or record.seats[seat].is_bot or record.status.closed:
            return
        now = self.clock()
        every = self.abandon.presence_every
        if record.seen_at + every > now:
            return
        last = self._seen.get(record.table_id)
        if last is not None and last + every > now:
            return
        if len(self._seen) >= MAX_SEEN_REMEMBERED:
            self._seen.clear()
        self._seen[record.table_id] = now
        await self.store.touch(record.table_id, now)

    def _bot_may_take(
        self, record: TableRecord, seat: Seat, now: float, entrant: str = ""
    ) -> bool:
        """Whether a bot joining as `entrant` ("" : a worker of the built-in levels) may take
        `seat`: a free bot seat reserved for it, or (workers only) a free person's seat past
        the fill delay."""
        if seat.occupied:
            return False
        if seat.kind == SeatKind.BOT:
            return seat.bot_level == entrant if entrant else seat.bot_level in LEVELS
        if entrant:
            return False
        due = record.fill_due_at()
        return due is not None and due <= now

    # --- create -------------------------------------------------------------------------
    async def create(
        self,
        game_name: str,
        players: int,
        options: Mapping[str, Any],
        seats: Sequence[SeatRequest] = (),
        fill_with_bots_after_seconds: float = 0.0,
        fill_level: str = "",
    ) -> TableRecord:
        game = self.game(game_name)
        info = game.info
        options_json = json.dumps(dict(options), separators=(",", ":"), sort_keys=True)
        if len(options_json) > MAX_OPTIONS_JSON_CHARS:
            raise TableError(
                Code.RESOURCE_EXHAUSTED,
                f"options take {len(options_json)} characters as JSON; the limit is "
                f"{MAX_OPTIONS_JSON_CHARS}",
            )
        players = players or info.min_players
        if not info.min_players <= players <= info.max_players:
            span = (
                f"exactly {info.min_players}"
                if info.min_players == info.max_players
                else f"{info.min_players} to {info.max_players}"
            )
            raise TableError(
                Code.INVALID_ARGUMENT, f"{info.name} is played by {span} players, not {players}"
            )
        if seats and len(seats) != players:
            raise TableError(
                Code.INVALID_ARGUMENT,
                f"seats lists {len(seats)} seat(s) for {players} players: give one per player, "
                "or none for all open to people",
            )
        if not math.isfinite(fill_with_bots_after_seconds) or not (
            0 <= fill_with_bots_after_seconds <= MAX_FILL_SECONDS
        ):
            raise TableError(
                Code.INVALID_ARGUMENT,
                f"fill_with_bots_after_seconds must be between 0 and {MAX_FILL_SECONDS:.0f}",
            )
        resolved = []
        for i, s in enumerate(seats):
            if s.entrant and s.kind != SeatKind.BOT:
                raise TableError(
                    Code.INVALID_ARGUMENT,
                    f"seat {i} names an entrant but is not a bot seat: give it kind "
                    "SEAT_KIND_BOT",
                )
            if s.entrant:
                check_entrant(s.entrant, f"seat {i}'s entrant")
                if s.bot_level and s.bot_level != s.entrant:
                    raise TableError(
                        Code.INVALID_ARGUMENT,
                        f"seat {i} names both bot_level {s.bot_level[:MAX_BOT_LEVEL_CHARS]!r} "
                        f"and entrant {s.entrant!r}: give one (a level's name is that level)",
                    )
                s = SeatRequest(s.kind, "", s.entrant)
            resolved.append(s)
        seats = resolved
        levels = [s.bot_level for s in seats] + [fill_level]
        if any(len(level) > MAX_BOT_LEVEL_CHARS for level in levels):
            raise TableError(
                Code.RESOURCE_EXHAUSTED, f"bot levels are at most {MAX_BOT_LEVEL_CHARS} characters"
            )
        unknown = [level for level in levels if level and level not in LEVELS]
        if unknown:
            raise TableError(
                Code.INVALID_ARGUMENT,
                f"unknown bot level {unknown[0]!r}; levels: {', '.join(LEVELS)} "
                f"(empty: {DEFAULT_BOT_LEVEL})",
            )
        for name, kind in TABLE_OPTIONS.items():
            value = options.get(name)
            if name in options and (
                not isinstance(value, kind) or (kind is not bool and isinstance(value, bool))
            ):
                what = ("true or false" if kind is bool else "a string" if kind is str
                        else "a number of seconds")
                raise TableError(
                    Code.INVALID_ARGUMENT, f"table option {name!r} must be {what}, got {value!r}"
                )
        turn = options.get("turn_seconds", 0)
        if not (math.isfinite(turn) and 0 <= turn <= MAX_TURN_SECONDS):
            raise TableError(
                Code.INVALID_ARGUMENT,
                f"turn_seconds must be between 0 (no timer) and {MAX_TURN_SECONDS:.0f}",
            )
        ladder = options.get(LADDER_OPTION)
        if ladder is not None and LADDER_NAME.fullmatch(ladder) is None:
            raise TableError(
                Code.INVALID_ARGUMENT,
                f"table option {LADDER_OPTION!r} must be 1 to 40 of a-z, 0-9, '_', '.', '-', "
                "starting with a letter or digit",
            )
        label = options.get(LABEL_OPTION)
        if label is not None and TABLE_LABEL.fullmatch(label) is None:
            raise TableError(
                Code.INVALID_ARGUMENT,
                f"table option {LABEL_OPTION!r} must be 1 to 64 of a-z, 0-9, '_', '.', '-', "
                "starting with a letter or digit",
            )
        if BUDGET_OPTION in options:
            budget = options[BUDGET_OPTION]
            if not (math.isfinite(budget) and 0 <= budget <= MAX_MATCH_SECONDS):
                raise TableError(
                    Code.INVALID_ARGUMENT,
                    f"match_seconds must be between 0 and {MAX_MATCH_SECONDS:.0f} (7 days)",
                )
            if not turn > 0:
                raise TableError(
                    Code.INVALID_ARGUMENT,
                    "match_seconds is a budget beyond each move's turn_seconds: set "
                    "turn_seconds above 0 too",
                )
        seed = secrets.token_hex(16)
        stored_options = json.loads(options_json)
        engine_options = game_options(stored_options)
        try:
            # the deal itself waits for the last seat (`_deal`, from this seed); made here it
            # checks the options now, and is dropped
            game.new_game(players, engine_options, seed)
        except ValueError as e:
            raise TableError(Code.INVALID_ARGUMENT, f"bad options for {info.name}: {e}") from None
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
                )
        seat_records = tuple(
            Seat(kind=SeatKind.BOT, bot_level=s.entrant or s.bot_level or DEFAULT_BOT_LEVEL)
            if s.kind == SeatKind.BOT
            else Seat(kind=SeatKind.HUMAN)
            for s in (seats or [SeatRequest()] * players)
        )
        now = self.clock()
        for _ in range(5):
            record = TableRecord(
                table_id=secrets.token_hex(8),
                game=info.name,
                players=players,
                options=stored_options,
                seats=seat_records,
                status=Status.WAITING,
                version=1,
                state=b"",  # dealt when the last seat is taken
                created_at=now,
                fill_with_bots_after_seconds=fill_with_bots_after_seconds,
                fill_level=(fill_level or DEFAULT_BOT_LEVEL)
                if fill_with_bots_after_seconds
                else "",
                seed=seed,
                seen_at=now,
            )
            event = Event(
                table_id=record.table_id,
                version=1,
                kind=EventKind.CREATED,
                seat=-1,
                move="",
                name="",
                time=now,
                state=record.state,
                seats=record.seats,
                status=record.status,
            )
            try:
                await self.store.create(record, [event])
            except TableExists:
                continue  # 64 random bits collided; draw again
            log.info(
                "table_created",
                table=record.table_id,
                game=record.game,
                seats=[s.kind.value for s in record.seats],
            )
            return record
        raise RuntimeError("could not draw a free table id")

    # --- seats --------------------------------------------------------------------------
    async def join(
        self,
        table_id: str,
        seat: int | None,
        name: str,
        bot: bool,
        token: str = "",
        entrant: str = "",
    ) -> tuple[int, str, TableRecord]:
        """Takes a free seat. With a client's own `token` the call is idempotent: sent again
        (its reply lost), it returns the seat that token already holds, table unchanged.
        A bot joining as an outside `entrant` takes only seats reserved for it; without one
        (a level's name counts as none) only seats of built-in levels, and person's seats past
        the fill delay."""
        if entrant and not bot:
            raise TableError(
                Code.INVALID_ARGUMENT, "entrant is for bots: set bot too, or leave entrant empty"
            )
        entrant = outside_entrant(entrant)
        name = name.strip()
        if len(name) > MAX_NAME_CHARS:
            raise TableError(
                Code.RESOURCE_EXHAUSTED, f"names are at most {MAX_NAME_CHARS} characters"
            )
        if any(not ch.isprintable() for ch in name):
            raise TableError(Code.INVALID_ARGUMENT, "names may not contain control characters")
        if token and not CLIENT_TOKEN.fullmatch(token):
            # never quote the token: it is a secret, even a malformed one
            raise TableError(
                Code.INVALID_ARGUMENT,
                f"a token of your own must be 22 to 128 characters of A-Z, a-z, 0-9, '-' and "
                f"'_' (this one has {len(token)} characters{self._odd_characters(token)})",
            )
        async with self.lock(table_id):
            record = await self.get(table_id)
            held = self._held_by(record, token) if token else None
            if held is not None:
                mine = record.seats[held]
                if mine.kind == SeatKind.BOT and bot and (
                    mine.bot_level != entrant if entrant else mine.bot_level not in LEVELS
                ):
                    raise TableError(Code.FAILED_PRECONDITION, reserved_for(held, mine))
                if (seat is not None and seat != held) or record.seats[held].is_bot != bot:
                    raise TableError(
                        Code.FAILED_PRECONDITION,
                        f"this token already holds seat {held} at table {table_id} (as "
                        f"{'a bot' if record.seats[held].is_bot else 'a person'}); join with "
                        "another token for another seat",
                    )
                await self.present(record, held)
                return held, token, record
            if record.status == Status.ABANDONED:
                raise closed_as_abandoned(table_id, "nothing to join")
            if record.status == Status.FINISHED:
                raise TableError(
                    Code.FAILED_PRECONDITION, f"table {table_id} is finished; nothing to join"
                )
            now = self.clock()
            who = (f"entrant {entrant}" if entrant else "a bot") if bot else "a person"
            if seat is None:
                free = [i for i, s in enumerate(record.seats) if not s.occupied]
                if bot:
                    # reserved bot seats first, then human seats past their fill delay
                    ranked = [
                        i
                        for kind in (SeatKind.BOT, SeatKind.HUMAN)
                        for i in free
                        if record.seats[i].kind == kind
                        and self._bot_may_take(record, record.seats[i], now, entrant)
                    ]
                else:
                    ranked = [i for i in free if record.seats[i].kind == SeatKind.HUMAN]
                if not ranked:
                    raise TableError(
                        Code.FAILED_PRECONDITION,
                        f"table {table_id} has no free seat for {who}",
                    )
                seat = ranked[0]
            else:
                if not 0 <= seat < record.players:
                    raise TableError(
                        Code.INVALID_ARGUMENT,
                        f"seat {seat} does not exist: table {table_id} has seats 0 to "
                        f"{record.players - 1}",
                    )
                target = record.seats[seat]
                if target.occupied:
                    raise TableError(Code.FAILED_PRECONDITION, f"seat {seat} is taken")
                if bot and target.kind == SeatKind.BOT and not self._bot_may_take(
                    record, target, now, entrant
                ):
                    raise TableError(Code.FAILED_PRECONDITION, reserved_for(seat, target))
                if bot and entrant and target.kind == SeatKind.HUMAN:
                    raise TableError(
                        Code.FAILED_PRECONDITION,
                        f"seat {seat} is open to people, not reserved for entrant {entrant}",
                    )
                if bot and not self._bot_may_take(record, target, now, entrant):
                    due = record.fill_due_at()
                    why = (
                        "this table does not fill seats with bots"
                        if due is None
                        else f"bots may take it in {due - now:.0f} s, when the fill delay ends"
                    )
                    raise TableError(
                        Code.FAILED_PRECONDITION, f"seat {seat} is open to people; {why}"
                    )
                if not bot and target.kind == SeatKind.BOT:
                    raise TableError(
                        Code.FAILED_PRECONDITION,
                        f"seat {seat} is reserved for a bot (entrant {target.bot_level})",
                    )
            token = token or secrets.token_urlsafe(24)
            old = record.seats[seat]
            taken = Seat(
                kind=old.kind,
                bot_level=old.bot_level,
                occupied=True,
                name=name or (f"bot {seat}" if bot else f"player {seat}"),
                is_bot=bot,
                token_hash=hash_token(token),
                joined_at=now,
            )
            seats = record.seats[:seat] + (taken,) + record.seats[seat + 1 :]
            game = self.game(record.game)
            state = states.decode(game, record.state) if record.dealt else None
            status = self._status(seats, game, state)
            new = record.with_(seats=seats, status=status, version=record.version + 1)
            if status == Status.PLAYING and not record.dealt:
                # the last seat is taken: only now are the cards dealt (this event is the
                # first to carry them, and the record's initial state)
                new = self._deal(game, new, new.version)
            if not bot:
                new = new.with_(seen_at=max(now, record.seen_at))
            event = self._event(new, EventKind.JOINED, seat, taken.name, now)
            await self._commit(record, new, [event])
            return seat, token, new

    async def leave(self, table_id: str, token: str | None) -> TableRecord:
        async with self.lock(table_id):
            record = await self.get(table_id)
            seat = self.require_seat(record, token)
            if record.status == Status.ABANDONED:
                raise closed_as_abandoned(table_id, "there is nothing to leave")
            if record.status == Status.FINISHED:
                raise TableError(
                    Code.FAILED_PRECONDITION,
                    f"table {table_id} is finished; there is nothing to leave",
                )
            old = record.seats[seat]
            seats = (
                record.seats[:seat]
                + (Seat(kind=old.kind, bot_level=old.bot_level),)
                + record.seats[seat + 1 :]
            )
            now = self.clock()
            new = record.with_(seats=seats, status=Status.WAITING, version=record.version + 1)
            await self._commit(record, new, [self._event(new, EventKind.LEFT, seat, old.name, now)])
            return new

    async def open_due_seats(self) -> int:
        """Hands the empty human seats of tables whose fill delay has passed to bots: they
        become bot seats of the table's fill level, which bot workers find and claim through
        JoinTable. Returns how many tables changed."""
        now = self.clock()
        changed = 0
        for candidate in await self.store.list(TableFilter(fill_due_before=now, limit=100)):
            async with self.lock(candidate.table_id):
                record = await self.store.get(candidate.table_id)
                if record is None:
                    continue
                due = record.fill_due_at()
                if due is None or due > now:
                    continue
                seats = tuple(
                    Seat(kind=SeatKind.BOT, bot_level=record.fill_level or DEFAULT_BOT_LEVEL)
                    if s.kind == SeatKind.HUMAN and not s.occupied
                    else s
                    for s in record.seats
                )
                new = record.with_(seats=seats, version=record.version + 1)
                event = self._event(new, EventKind.SEATS_OPENED, -1, "", now)
                try:
                    await self._commit(record, new, [event])
                except TableError:
                    continue  # another writer got there first; the next round looks again
                changed += 1
        return changed

    # --- moves --------------------------------------------------------------------------
    async def move(
        self,
        table_id: str,
        token: str | None,
        text: str,
        expected_version: int,
        fallback: str = "",
        rejected: str = "",
    ) -> MoveOutcome:
        """Plays `text` for the token's seat. `expected_version` 0 skips the version check.
        `fallback`: why a bot client plays this in place of its bot's answer (recorded);
        `rejected`: that answer, where the bot gave one (recorded, shown in the record only)."""
        if fallback and fallback not in FALLBACKS:
            shown = repr(fallback) if len(fallback) <= MAX_BOT_LEVEL_CHARS else "this one"
            raise TableError(
                Code.INVALID_ARGUMENT,
                f"fallback must be empty or one of {', '.join(FALLBACKS)}; not {shown}",
            )
        check_rejected(rejected, fallback)
        if len(text) > MAX_MOVE_CHARS:
            raise TableError(
                Code.RESOURCE_EXHAUSTED, f"move text is at most {MAX_MOVE_CHARS} characters"
            )
        if expected_version < 0:
            raise TableError(Code.INVALID_ARGUMENT, "expected_version may not be negative")
        async with self.lock(table_id):
            record = await self.get(table_id)
            seat = self.require_seat(record, token)
            if record.status == Status.ABANDONED:
                raise closed_as_abandoned(table_id, "no more moves are played there")
            await self.present(record, seat)
            game = self.game(record.game)
            try:
                move = game.parse_move(text)
            except ValueError as e:
                raise TableError(
                    Code.INVALID_ARGUMENT, f"malformed move {text!r}: {e}", "malformed move"
                ) from None
            if expected_version > record.version:
                raise TableError(
                    Code.INVALID_ARGUMENT,
                    f"expected_version {expected_version} is past table {table_id}'s version "
                    f"{record.version}: send the version of the view you decided on",
                )
            if expected_version and expected_version != record.version:
                replay = await self._replay(record, game, seat, move, expected_version)
                if replay is not None:
                    return replay
                raise TableError(
                    Code.ABORTED,
                    f"table {table_id} is at version {record.version}, not {expected_version}: "
                    "your view is stale; fetch it and decide again",
                )
            if record.status == Status.FINISHED:
                raise TableError(Code.FAILED_PRECONDITION, "the match is over")
            if record.status == Status.WAITING:
                empty = [str(i) for i, s in enumerate(record.seats) if not s.occupied]
                raise TableError(
                    Code.FAILED_PRECONDITION,
                    f"the game has not started: waiting for seat(s) {', '.join(empty)} to be taken",
                )
            state = states.decode(game, record.state)
            to_act = game.to_act(state)
            if seat not in to_act:
                waiting = ", ".join(str(s) for s in sorted(to_act))
                raise TableError(
                    Code.FAILED_PRECONDITION, f"not your turn: seat {waiting} is to act"
                )
            mover = record.seats[seat]
            moved = mover.back() if mover.timeouts or mover.away else mover  # the count restarts
            if BUDGET_OPTION in record.options and seat in game.on_turn(state):
                moved = await self._spend(record, moved, self.clock())
            seats = None
            if moved != mover:
                seats = record.seats[:seat] + (moved,) + record.seats[seat + 1 :]
            try:
                return await self._play(
                    record, game, state, seat, move, seats=seats, fallback=fallback,
                    rejected=rejected,
                )
            except TableError as e:
                if e.code != Code.ABORTED or not expected_version:
                    raise
                fresh = await self.get(table_id)
                replay = await self._replay(fresh, game, seat, move, expected_version)
                if replay is None:
                    raise
                return replay

    async def _spend(self, record: TableRecord, mover: Seat, now: float) -> Seat:
        """`mover` with what it thought past turn_seconds since the table's last event drawn
        from its match budget (never more than the budget)."""
        last = await self.store.events_after(record.table_id, record.version - 1, 1)
        if not last:
            return mover
        return self._spent(record, mover, now - last[0].time)

    @staticmethod
    def _spent(record: TableRecord, mover: Seat, waited: float) -> Seat:
        budget = float(record.options.get(BUDGET_OPTION) or 0)
        excess = waited - float(record.options.get(TIMER_OPTION) or 0)
        if excess <= 0 or mover.budget_used >= budget:
            return mover
        return replace(mover, budget_used=min(budget, mover.budget_used + excess))

    async def _replay(
        self, record: TableRecord, game: Game, seat: int, move: Any, expected_version: int
    ) -> MoveOutcome | None:
        """The answer a move already made got, when this request repeats it.

        A client whose reply was lost (UNAVAILABLE, a deadline) retries with the same move and
        expected version; if that very move of its seat, by the same occupant, is what moved
        the table on from that version, the retry is told so instead of ABORTED. Only moves
        the seat made itself count (not the turn timer's), and only while they are recent.
        """
        if not expected_version < record.version <= expected_version + REPLAY_WINDOW:
            return None
        events = await self.store.events_after(record.table_id, expected_version - 1, 3)
        if len(events) < 2 or events[0].version != expected_version:
            return None
        before, made = events[0], events[1]
        occupant = record.seats[seat].token_hash
        if (
            made.kind != EventKind.MOVE
            or made.auto
            or made.seat != seat
            or made.move != game.format_move(move)
            or made.seats[seat].token_hash != occupant
        ):
            return None
        done = [made]
        if len(events) > 2 and events[2].kind == EventKind.END:
            done.append(events[2])
        last = done[-1]
        after = record.with_(
            state=last.state, seats=last.seats, status=last.status, version=last.version
        )
        public = game.redact(states.decode(game, before.state), seat, move, None)
        return MoveOutcome(after, seat, made.move, public, tuple(done), replayed=True)

    async def _play(
        self,
        record: TableRecord,
        game: Game,
        state: Any,
        seat: int,
        move: Any,
        auto: bool = False,
        seats: tuple[Seat, ...] | None = None,
        fallback: str = "",
        rejected: str = "",
    ) -> MoveOutcome:
        """Applies and commits one move of `seat` (the caller holds the table's lock)."""
        try:
            after = game.apply(state, seat, move)
        except IllegalMove as e:
            raise TableError(
                Code.FAILED_PRECONDITION,
                f"illegal move {game.format_move(move)!r}: {e}",
                "illegal move",
            ) from None
        canonical = game.format_move(move)
        public = game.redact(state, seat, move, None)
        over = game.is_over(after)
        deal_over = over or game.deal_number(after) != game.deal_number(state)
        now = self.clock()
        data = game.encode(after)
        states.remember(game, data, after)
        status = Status.FINISHED if over else record.status
        new = record.with_(
            state=data,
            status=status,
            version=record.version + 1,
            seats=seats or record.seats,
            deals=self._sealed(game, state, after, record.deals, record.version + 1),
        )
        events = [
            self._event(
                new,
                EventKind.MOVE,
                seat,
                record.seats[seat].name,
                now,
                canonical,
                deal_over,
                auto,
                fallback=fallback,
                rejected=rejected,
            )
        ]
        if over:
            new = new.with_(version=new.version + 1)
            events.append(self._event(new, EventKind.END, -1, "", now))
        await self._commit(record, new, events)
        if over:
            ended = {"by_turn_timer": True} if auto else {}
            log.info("table_finished", table=record.table_id, game=record.game,
                     version=new.version, **ended)
        return MoveOutcome(new, seat, canonical, public, tuple(events))

    @staticmethod
    def _event(
        record: TableRecord,
        kind: EventKind,
        seat: int,
        name: str,
        now: float,
        move: str = "",
        deal_over: bool = False,
        auto: bool = False,
        abandoned: bool = False,
        fallback: str = "",
        rejected: str = "",
    ) -> Event:
        return Event(
            table_id=record.table_id,
            version=record.version,
            kind=kind,
            seat=seat,
            move=move,
            name=name,
            time=now,
            state=record.state,
            seats=record.seats,
            status=record.status,
            deal_over=deal_over,
            auto=auto,
            abandoned=abandoned,
            fallback=fallback,
            rejected=rejected,
        )

    async def play_overdue(self, choose: Callable[[str], Callable[..., Any]]) -> int:
        """Plays for the seat the table waits for (the engine's `on_turn`) at every playing
        table whose `turn_seconds` (plus what is left of that seat's match budget, option
        match_seconds) have passed since its last event, with
        `choose(game_name)(game, state, seat, legal, rng)` (the game's heuristic player); the
        event says `auto`. Seats that may act out of turn (announcements, calls) are never
        played for: they need not act. Returns how many moves were played."""
        played = 0
        # every timed table, not a page of them: a table left out would never time out
        flt = TableFilter(status=Status.PLAYING, timed=True, limit=MAX_TIMED_TABLES)
        for candidate in await self.store.list(flt):
            limit = candidate.options.get("turn_seconds") or 0
            if not limit:
                continue
            async with self.lock(candidate.table_id):
                record = await self.store.get(candidate.table_id)
                if record is None or record.status != Status.PLAYING or not record.dealt:
                    continue
                game = self.game(record.game)
                state = states.decode(game, record.state)
                # the seats the table waits for; those that may only announce or call are
                # never played for (an away one among the waited-for goes first)
                waited = sorted(game.on_turn(state), key=lambda s: not record.seats[s].away)
                if not waited:
                    continue
                seat = waited[0]
                mover = record.seats[seat]
                spent = mover
                if not mover.away:
                    last = await self.store.events_after(record.table_id, record.version - 1, 1)
                    now = self.clock()
                    if not last or last[0].time + limit + (record.budget_left(seat) or 0) > now:
                        continue
                    # it waited through the whole budget: spent, down to rounding
                    spent = self._spent(record, mover, now - last[0].time)
                count = mover.timeouts + 1
                gone = replace(spent, timeouts=count, away=count >= AWAY_AFTER_TIMEOUTS)
                seats = record.seats[:seat] + (gone,) + record.seats[seat + 1 :]
                legal = list(game.legal_moves(state, seat))
                move = choose(record.game)(game, state, seat, legal, random.Random())
                try:
                    await self._play(record, game, state, seat, move, auto=True, seats=seats)
                except TableError:
                    continue  # another writer moved first: the timer starts again
                played += 1
        return played

    async def come_back(self, record: TableRecord, seat: int) -> TableRecord:
        """Hands an away seat back to its person (who just called with its token): the
        server stops playing for it; a JOINED event tells the table."""
        async with self.lock(record.table_id):
            fresh = await self.get(record.table_id)
            mover = fresh.seats[seat]
            if (
                not mover.away
                or mover.token_hash != record.seats[seat].token_hash
                or fresh.status.closed  # nothing follows the END event
            ):
                return fresh
            seats = fresh.seats[:seat] + (mover.back(),) + fresh.seats[seat + 1 :]
            new = fresh.with_(seats=seats, version=fresh.version + 1)
            event = self._event(new, EventKind.JOINED, seat, mover.name, self.clock())
            await self._commit(fresh, new, [event])
            return new

    async def close_abandoned(self) -> int:
        """Closes the watched tables (`TableRecord.watched`) no person has sat at or come back
        to for the waiting or playing limit (`Abandon`): status ABANDONED, and an END event
        saying so. Each close is a compare-and-set that also requires that nobody was seen
        since the limit began, so a person coming back at that moment (on any replica) keeps
        the table; of replicas racing to close one, one wins. Returns how many it closed."""
        now = self.clock()
        closed = 0
        for status in (Status.WAITING, Status.PLAYING):
            limit = self.abandon.limit(status)
            if limit <= 0:
                continue
            cutoff = now - limit
            flt = TableFilter(status=status, idle_before=cutoff, limit=ABANDON_BATCH)
            for candidate in await self.store.list(flt):
                async with self.lock(candidate.table_id):
                    record = await self.store.get(candidate.table_id)
                    if (
                        record is None
                        or record.status != status
                        or not record.watched()
                        or record.seen_at >= cutoff
                    ):
                        continue
                    new = record.with_(status=Status.ABANDONED, version=record.version + 1)
                    event = self._event(new, EventKind.END, -1, "", now, abandoned=True)
                    try:
                        await self._commit(record, new, [event], idle_before=cutoff)
                    except TableError:
                        continue  # someone came back, or moved, first: looked at again later
                    self._seen.pop(record.table_id, None)
                    log.info("table_abandoned", table=record.table_id, game=record.game,
                             was=status.value, version=new.version)
                    closed += 1
        return closed

    # --- reading ------------------------------------------------------------------------
    async def list(
        self,
        game: str = "",
        status: Status | None = None,
        waiting_for_bot: bool = False,
        limit: int = 0,
        bot_levels: Sequence[str] = (),
        include_private: bool = False,
        page_token: str = "",
        include_abandoned: bool = False,
        entrants: Sequence[str] = (),
    ) -> tuple[list[TableRecord], str]:
        """Tables by filter, one page, and the token of the next page ("" after the last);
        private ones only with `include_private` (the server grants it to bot workers looking
        for seats: a private table's bot seats need players too); tables closed as abandoned
        only with `include_abandoned` or when `status` asks for them. Waiting for a bot with
        neither `bot_levels` nor `entrants`: a seat of any built-in level (what a bot worker
        may take), never an outside entrant's."""
        if limit < 0:
            raise TableError(Code.INVALID_ARGUMENT, "limit may not be negative")
        if limit > MAX_LIST_LIMIT:
            raise TableError(
                Code.RESOURCE_EXHAUSTED,
                f"at most {MAX_LIST_LIMIT} tables per request; asked for {limit}",
            )
        if bot_levels and not waiting_for_bot:
            raise TableError(
                Code.INVALID_ARGUMENT, "bot_levels filters the tables waiting for a bot: "
                "set waiting_for_bot too"
            )
        if len(bot_levels) > len(LEVELS):
            raise TableError(
                Code.RESOURCE_EXHAUSTED, f"at most {len(LEVELS)} bot levels; got {len(bot_levels)}"
            )
        unknown = [level for level in bot_levels if level not in LEVELS]
        if unknown:
            raise TableError(
                Code.INVALID_ARGUMENT,
                f"unknown bot level {unknown[0][:MAX_BOT_LEVEL_CHARS]!r}; levels: "
                f"{', '.join(LEVELS)}",
            )
        if entrants and not waiting_for_bot:
            raise TableError(
                Code.INVALID_ARGUMENT, "entrants filters the tables waiting for a bot: "
                "set waiting_for_bot too"
            )
        if len(entrants) > MAX_LIST_ENTRANTS:
            raise TableError(
                Code.RESOURCE_EXHAUSTED,
                f"at most {MAX_LIST_ENTRANTS} entrants; got {len(entrants)}",
            )
        for entrant in entrants:
            check_entrant(entrant)
        wanted = set(bot_levels) | set(entrants)
        if game:
            self.game(game)  # an unknown game is a mistake worth saying, not an empty list
        # a page token holds the last table's place in the order, and says which filters it
        # was given for: a token used with other filters would skip tables silently
        filters = [game, status.value if status else "", waiting_for_bot,
                   sorted(set(bot_levels)), include_private]
        if include_abandoned:  # (tokens given before this filter existed still serve)
            filters.append(True)
        if entrants:
            filters.append(sorted(set(entrants)))
        scope = hashlib.sha256(json.dumps(filters).encode()).hexdigest()[:16]
        page = limit or DEFAULT_LIST_LIMIT
        flt = TableFilter(
            game=game,
            status=status,
            bot_open_before=self.clock() if waiting_for_bot else None,
            bot_levels=frozenset(wanted or LEVELS) if waiting_for_bot else None,
            public_only=not include_private,
            hide_abandoned=status is None and not include_abandoned,
            after=self._read_page_token(page_token, scope) if page_token else None,
            limit=page + 1,  # one more than asked: is there a next page?
        )
        records = await self.store.list(flt)
        if len(records) <= page:
            return records, ""
        records = records[:page]
        at, last = flt.order_key(records[-1])
        token = json.dumps([PAGE_TOKEN_VERSION, scope, at, last], separators=(",", ":"))
        return records, base64.urlsafe_b64encode(token.encode()).decode()

    @staticmethod
    def _read_page_token(token: str, scope: str) -> tuple[float, str]:
        wrong = TableError(
            Code.INVALID_ARGUMENT,
            "page_token is not one this server gave for these filters: send the "
            "next_page_token of the previous reply, with the same game, status, "
            "waiting_for_bot, bot_levels, entrants and include_abandoned",
        )
        if len(token) > MAX_PAGE_TOKEN_CHARS:
            raise wrong
        try:
            version, given, at, last = json.loads(base64.urlsafe_b64decode(token.encode()))
        except (ValueError, TypeError):
            raise wrong from None
        if (version != PAGE_TOKEN_VERSION or given != scope or not isinstance(last, str)
                or not isinstance(at, int | float) or isinstance(at, bool)
                or not math.isfinite(at)):
            raise wrong
        return float(at), last

    def snapshot(self, record: TableRecord, event: Event) -> TableRecord:
        """The table as it was right after `event`."""
        return record.with_(
            seats=event.seats, status=event.status, version=event.version, state=event.state
        )
