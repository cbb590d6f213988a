"""The core every table job shares: the store, the per-table locks, the hub that wakes streams,
and the one way a change is written (`_commit`: a compare-and-set with its events).

The jobs are layered on it, each a module (service.seats, service.moves, service.clock),
and `service.tables.Tables` is the one entry the server uses."""

from __future__ import annotations

import asyncio
import time
import weakref
from collections.abc import Callable, Sequence
from typing import Any

from engines.commitments import Sealed, shuffled
from engines.contract import Game
from service import decode_cache
from service.abandon_policy import AbandonPolicy
from service.model import (
    Event,
    EventKind,
    Seat,
    Status,
    TableRecord,
)
from service.presence import PresencePolicy, SeatPresence
from service.reasons import Reason
from service.store import Store, TableMissing, VersionConflict
from service.table_errors import Code, TableError
from service.validation import check_table_id, game_options


def default_games(name: str) -> Game:
    """engines.registry.get_game, imported late so this module loads without every engine."""
    global _get_game
    if _get_game is None:
        from engines.registry import get_game

        _get_game = get_game
    return _get_game(name)


_get_game: Callable[[str], Game] | None = None


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


class TableBase:
    """The state every table job shares; `service.tables.Tables` is built on it."""

    def __init__(
        self,
        store: Store,
        games: Callable[[str], Game] = default_games,
        clock: Callable[[], float] = time.time,
        abandon: AbandonPolicy | None = None,
        presence: PresencePolicy | None = None,
        deal_pause: float = 0.0,
    ) -> None:
        self.store = store
        # seconds between a deal's end and the next deal at tables with a person (service.pacing)
        self.deal_pause = deal_pause
        self.games = games
        self.clock = clock
        self.abandon = abandon or AbandonPolicy()
        self.presence = SeatPresence(store, presence, clock)  # each seat's (service.presence)
        self.hub = Hub()
        self._locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()
        # table -> when this process last wrote a person's presence there
        self._seen: dict[str, float] = {}
        # told of every table a commit of this process finishes (the server rates rated
        # tables then); it must return at once: the commit's caller is waiting
        self.on_finished: Callable[[TableRecord], None] | None = None
    # --- helpers ------------------------------------------------------------------------
    def game(self, name: str) -> Game:
        try:
            return self.games(name)
        except ValueError as e:
            raise TableError(
                Code.INVALID_ARGUMENT, str(e),
                reason=Reason.INVALID_ARGUMENT_GAME,
            ) from None
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
            raise TableError(
                Code.NOT_FOUND, f"no table {table_id!r}",
                reason=Reason.TABLE_NOT_FOUND,
            )
        return record
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
                reason=Reason.STALE_VERSION, meta={"version": old.version},
            ) from None
        except TableMissing:
            raise TableError(
                Code.NOT_FOUND, f"no table {old.table_id!r}",
                reason=Reason.TABLE_NOT_FOUND,
            ) from None
        self.hub.publish(old.table_id)
        if new.status == Status.FINISHED != old.status and self.on_finished is not None:
            self.on_finished(new)
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
        decode_cache.remember(game, data, state)
        return record.with_(state=data, seed="", deals=TableBase._sealed(game, None, state,
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
            next_deal_at=record.next_deal_at,
            ready=record.ready,
        )
    def snapshot(self, record: TableRecord, event: Event) -> TableRecord:
        """The table as it was right after `event`."""
        return record.with_(
            seats=event.seats, status=event.status, version=event.version, state=event.state,
            next_deal_at=event.next_deal_at, ready=event.ready,
        )
