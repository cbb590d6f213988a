"""The tables' clock: empty seats handed to bots after the fill delay, turns whose timer ran
out played for their seat (and seats gone away after AWAY_AFTER_TIMEOUTS), and tables no
person came back to closed as abandoned (`AbandonPolicy`)."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from common.logging import get_logger
from service import decode_cache
from service.model import (
    EventKind,
    Seat,
    SeatKind,
    Status,
    TableFilter,
)
from service.pacing import TablePacing
from service.table_errors import TableError
from service.validation import DEFAULT_BOT_LEVEL

log = get_logger("croupier.tables")  # a table's start and end: the console's lines per table


# timed tables one server's timer round looks at (each only reads a record; far beyond what
# one process plays at once)
MAX_TIMED_TABLES = 100_000
# turn timers that run out in a row before a seat counts as gone: from then on the server plays
# for it as soon as it is to act, until its person calls again with the seat token
AWAY_AFTER_TIMEOUTS = 2




# tables one abandonment round closes at most per status (the next round takes the rest)
ABANDON_BATCH = 100


class TableClock(TablePacing):
    """The clock's jobs, on pacing and moves (a timed-out turn is played as a move)."""

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
                if (
                    record is None
                    or record.status != Status.PLAYING
                    or not record.dealt
                    or record.paused  # no turn runs in the pause between deals
                ):
                    continue
                game = self.game(record.game)
                state = decode_cache.decode(game, record.state)
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
    async def close_abandoned(self) -> int:
        """Closes the watched tables (`TableRecord.watched`) no person has sat at or come back
        to for the waiting or playing limit (`AbandonPolicy`): status ABANDONED, and an END event
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
