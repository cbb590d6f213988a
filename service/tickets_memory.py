"""Tickets in memory, beside the memory table store (tests, one process): every method runs
without an await, so each is atomic on the event loop."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from service.tickets import Ticket, TicketConflict, TicketStatus, TicketStore


class MemoryTickets(TicketStore):
    def __init__(self) -> None:
        self._tickets: dict[str, Ticket] = {}
        self._open: dict[tuple[str, str], str] = {}  # (player, game) -> waiting ticket id
        self._queues: dict[str, dict[str, None]] = {}  # queue -> waiting ids, oldest first
        self._leases: dict[str, tuple[str, float]] = {}  # queue -> (owner, until)

    def _finish(self, ticket: Ticket, **changes: object) -> Ticket:
        done = replace(ticket, **changes)  # type: ignore[arg-type]
        self._tickets[ticket.ticket_id] = done
        key = (ticket.player_id, ticket.game)
        if self._open.get(key) == ticket.ticket_id:
            del self._open[key]
        waiting = self._queues.get(ticket.queue)
        if waiting is not None:
            waiting.pop(ticket.ticket_id, None)
            if not waiting:
                del self._queues[ticket.queue]
        return done

    async def open(self, ticket: Ticket) -> tuple[Ticket, bool]:
        key = (ticket.player_id, ticket.game)
        found = self._tickets.get(self._open.get(key, ""))
        if found is not None:
            if found.alive(ticket.created_at):
                if not found.same_wish(ticket):
                    raise TicketConflict(found)
                kept = replace(found, alive_until=max(found.alive_until, ticket.alive_until))
                self._tickets[found.ticket_id] = kept
                return kept, False
            self._finish(found, status=TicketStatus.EXPIRED)
        self._tickets[ticket.ticket_id] = ticket
        self._open[key] = ticket.ticket_id
        self._queues.setdefault(ticket.queue, {})[ticket.ticket_id] = None
        return ticket, True

    async def get(self, ticket_id: str) -> Ticket | None:
        return self._tickets.get(ticket_id)

    async def touch(self, ticket_id: str, alive_until: float, now: float) -> Ticket | None:
        found = self._tickets.get(ticket_id)
        if found is not None and found.alive(now) and alive_until > found.alive_until:
            found = self._tickets[ticket_id] = replace(found, alive_until=alive_until)
        return found

    async def cancel(self, ticket_id: str, now: float) -> Ticket | None:
        found = self._tickets.get(ticket_id)
        if found is None or found.status != TicketStatus.WAITING:
            return found
        status = TicketStatus.CANCELLED if found.alive(now) else TicketStatus.EXPIRED
        return self._finish(found, status=status)

    async def waiting(self, queue: str, limit: int = 10_000) -> list[Ticket]:
        ids = list(self._queues.get(queue, {}))[:limit]
        return [self._tickets[i] for i in ids]

    async def queues(self) -> list[str]:
        return list(self._queues)

    async def count(self, queue: str) -> int:
        return len(self._queues.get(queue, {}))

    async def expire(self, ticket_ids: Sequence[str], now: float) -> int:
        done = 0
        for ticket_id in ticket_ids:
            found = self._tickets.get(ticket_id)
            if found is not None and found.status == TicketStatus.WAITING and (
                found.alive_until < now
            ):
                self._finish(found, status=TicketStatus.EXPIRED)
                done += 1
        return done

    async def claim(
        self, ticket_ids: Sequence[str], table_id: str, seats: Sequence[int], now: float
    ) -> bool:
        if len(ticket_ids) != len(seats) or len(set(ticket_ids)) != len(ticket_ids):
            raise ValueError("one seat per ticket, each ticket once")
        found = [self._tickets.get(t) for t in ticket_ids]
        if any(t is None or not t.alive(now) for t in found):
            return False
        for ticket, seat in zip(found, seats, strict=True):
            assert ticket is not None
            self._finish(ticket, status=TicketStatus.MATCHED, table_id=table_id, seat=seat,
                         matched_at=now)
        return True

    async def lease(self, queue: str, owner: str, seconds: float, now: float) -> bool:
        holder = self._leases.get(queue)
        if holder is not None and holder[0] != owner and holder[1] > now:
            return False
        self._leases[queue] = (owner, now + seconds)
        return True

    async def purge(self, before: float) -> int:
        gone = [t.ticket_id for t in self._tickets.values()
                if t.status != TicketStatus.WAITING and t.created_at < before]
        for ticket_id in gone:
            del self._tickets[ticket_id]
        return len(gone)
