"""The pause between deals: after a move that ends a deal of a match that goes on, at a table
where a person sits, the next deal waits `deal_pause` seconds (so the players see the end of
the deal) or until every person seated said ReadyForNextDeal. The engines deal the next deal
inside the move that ends one, so the pause is only a gate: moves are refused while it holds,
and a DEAL_STARTS event ends it (the clock's round for pauses run out, or the last person's
ReadyForNextDeal). Every change is a versioned compare-and-set like any other: of replicas
racing to end one pause, one wins."""

from __future__ import annotations

from service.model import EventKind, Status, TableFilter, TableRecord
from service.moves import TableMoves
from service.pause import PAUSE_BATCH, people
from service.reasons import Reason
from service.seats import Credential
from service.table_errors import Code, TableError, closed_as_abandoned


class TablePacing(TableMoves):
    """ReadyForNextDeal and the end of pauses, on moves (whose `_play` opens a pause)."""

    async def ready_for_next_deal(self, table_id: str, token: Credential) -> TableRecord:
        """The token's seat is ready for the next deal: a READY event, or, when every person
        seated is ready now, DEAL_STARTS. A seat ready already changes nothing."""
        async with self.lock(table_id):
            record = await self.get(table_id)
            seat = self.require_seat(record, token)
            if record.status == Status.ABANDONED:
                raise closed_as_abandoned(table_id, "no deal starts there any more")
            await self.present(record, seat)
            if not record.paused:
                raise TableError(
                    Code.FAILED_PRECONDITION,
                    f"table {table_id} is not in a pause between deals: nothing to be ready "
                    "for (the pause follows a move that ends a deal, while the match goes on)",
                    reason=Reason.NOT_IN_PAUSE,
                )
            if seat in record.ready:
                return record
            ready = tuple(sorted((*record.ready, seat)))
            now = self.clock()
            if set(people(record)) <= set(ready):
                new = record.with_(next_deal_at=0.0, ready=(), version=record.version + 1)
                event = self._event(new, EventKind.DEAL_STARTS, -1, "", now)
            else:
                new = record.with_(ready=ready, version=record.version + 1)
                event = self._event(
                    new, EventKind.READY, seat, record.seats[seat].name, now
                )
            await self._commit(record, new, [event])
            return new

    async def start_due_deals(self) -> int:
        """Ends the pauses whose time has run out with a DEAL_STARTS event each (every
        replica runs it; each end is a compare-and-set, one wins). Returns how many ended."""
        now = self.clock()
        started = 0
        # no status in the filter: the tables in a pause come from its index alone (a table
        # whose seat was given back meanwhile is left out below, as it waits for a seat)
        flt = TableFilter(pause_due_before=now, limit=PAUSE_BATCH)
        for candidate in await self.store.list(flt):
            async with self.lock(candidate.table_id):
                record = await self.store.get(candidate.table_id)
                if record is None or not record.paused or record.next_deal_at > now:
                    continue
                new = record.with_(next_deal_at=0.0, ready=(), version=record.version + 1)
                event = self._event(new, EventKind.DEAL_STARTS, -1, "", now)
                try:
                    await self._commit(record, new, [event])
                except TableError:
                    continue  # another replica (or the last ready) ended it first
                started += 1
        return started
