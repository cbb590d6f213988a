"""Moves: a seat's move validated by the engine and committed with its event, a retried move
recognised (REPLAY_WINDOW), and the match budget a move draws on."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from common.logging import get_logger
from engines.contract import Game, IllegalMove, MoveRule
from service import decode_cache
from service.model import (
    BUDGET_OPTION,
    FALLBACKS,
    TIMER_OPTION,
    Event,
    EventKind,
    Seat,
    Status,
    TableRecord,
)
from service.pause import pause_until, paused_refusal
from service.reasons import Reason
from service.seats import Credential, TableSeats
from service.table_errors import Code, TableError, closed_as_abandoned
from service.validation import MAX_BOT_LEVEL_CHARS, MAX_MOVE_CHARS, check_rejected

log = get_logger("croupier.tables")  # a table's start and end: the console's lines per table


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


class TableMoves(TableSeats):
    """Moves, on seats (a move needs its seat's token)."""

    # --- moves --------------------------------------------------------------------------
    async def move(
        self,
        table_id: str,
        token: Credential,
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
                reason=Reason.INVALID_ARGUMENT_FIELD, meta={"field": "fallback"},
            )
        check_rejected(rejected, fallback)
        if len(text) > MAX_MOVE_CHARS:
            raise TableError(
                Code.RESOURCE_EXHAUSTED, f"move text is at most {MAX_MOVE_CHARS} characters",
                reason=Reason.TOO_LARGE, meta={"field": "move", "max": MAX_MOVE_CHARS},
            )
        if expected_version < 0:
            raise TableError(
                Code.INVALID_ARGUMENT, "expected_version may not be negative",
                reason=Reason.INVALID_ARGUMENT_VERSION,
            )
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
                    Code.INVALID_ARGUMENT, f"malformed move {text!r}: {e}", "malformed move",
                    reason=Reason.INVALID_ARGUMENT_MOVE,
                ) from None
            if expected_version > record.version:
                raise TableError(
                    Code.INVALID_ARGUMENT,
                    f"expected_version {expected_version} is past table {table_id}'s version "
                    f"{record.version}: send the version of the view you decided on",
                    reason=Reason.INVALID_ARGUMENT_VERSION, meta={"version": record.version},
                )
            if expected_version and expected_version != record.version:
                replay = await self._replay(record, game, seat, move, expected_version)
                if replay is not None:
                    return replay
                raise TableError(
                    Code.ABORTED,
                    f"table {table_id} is at version {record.version}, not {expected_version}: "
                    "your view is stale; fetch it and decide again",
                    reason=Reason.STALE_VERSION, meta={"version": record.version},
                )
            if record.status == Status.FINISHED:
                raise TableError(
                    Code.FAILED_PRECONDITION, "the match is over",
                    reason=Reason.TABLE_FINISHED,
                )
            if record.paused:
                raise paused_refusal(record, self.clock())
            if record.status == Status.WAITING:
                empty = [str(i) for i, s in enumerate(record.seats) if not s.occupied]
                raise TableError(
                    Code.FAILED_PRECONDITION,
                    f"the game has not started: waiting for seat(s) {', '.join(empty)} to be taken",
                    reason=Reason.TABLE_NOT_STARTED, meta={"waiting_seats": ",".join(empty)},
                )
            state = decode_cache.decode(game, record.state)
            to_act = game.to_act(state)
            if seat not in to_act:
                waiting = ", ".join(str(s) for s in sorted(to_act))
                raise TableError(
                    Code.FAILED_PRECONDITION,
                    f"not your turn: seat {waiting} is to act",
                    reason=MoveRule.NOT_YOUR_TURN,
                    meta={"to_act": waiting.replace(" ", "")},
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
            state=last.state, seats=last.seats, status=last.status, version=last.version,
            next_deal_at=last.next_deal_at, ready=last.ready,
        )
        # answered as acknowledged only once it is as safe as one: the first try may have
        # failed because too few replicas confirmed it (service.redis_acks)
        await self.store.confirm(record.table_id)
        public = game.redact(decode_cache.decode(game, before.state), seat, move, None)
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
                reason=e.rule,
                meta=e.params,
            ) from None
        canonical = game.format_move(move)
        public = game.redact(state, seat, move, None)
        over = game.is_over(after)
        deal_over = over or game.deal_number(after) != game.deal_number(state)
        now = self.clock()
        data = game.encode(after)
        decode_cache.remember(game, data, after)
        status = Status.FINISHED if over else record.status
        new = record.with_(
            state=data,
            status=status,
            version=record.version + 1,
            seats=seats or record.seats,
            deals=self._sealed(game, state, after, record.deals, record.version + 1),
        )
        if deal_over and not over:  # the next deal is dealt: it waits out the pause
            pause = pause_until(new, now, self.deal_pause)
            if pause:
                new = new.with_(next_deal_at=pause, ready=())
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
