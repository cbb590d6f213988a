"""FindMatch, GetTicket, WatchTicket and CancelTicket: a player's matchmaking tickets.

Every call needs the caller's player (an identity token). A ticket is its player's alone:
another player's ticket id is answered NOT_FOUND, as an unknown one is, so ids tell nothing.
"""

from __future__ import annotations

import asyncio
import json
import secrets
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from croupier.v1 import croupier_pb2 as pb
from google.protobuf import json_format

from service.model import LABEL_OPTION, LADDER_OPTION, RATED_OPTION, TIMER_OPTION
from service.reasons import Reason
from service.rpc import streaming, unary
from service.table_errors import Code, TableError
from service.tickets import Mode, Ticket, TicketConflict, TicketStatus, canonical_json
from service.validation import check_create

if TYPE_CHECKING:
    from service.identity import Player
    from service.matchmaking import Matchmaker
    from service.tables import Tables

MODES = {pb.MATCH_MODE_UNSPECIFIED: Mode.QUICK, pb.MATCH_MODE_QUICK: Mode.QUICK,
         pb.MATCH_MODE_RATED: Mode.RATED}
MODE_PB = {Mode.QUICK: pb.MATCH_MODE_QUICK, Mode.RATED: pb.MATCH_MODE_RATED}
STATUS_PB = {
    TicketStatus.WAITING: pb.TICKET_STATUS_WAITING,
    TicketStatus.MATCHED: pb.TICKET_STATUS_MATCHED,
    TicketStatus.CANCELLED: pb.TICKET_STATUS_CANCELLED,
    TicketStatus.EXPIRED: pb.TICKET_STATUS_EXPIRED,
}
# table options a wish may not set: matchmaking's own (rated), or another kind of table's
NOT_FOR_MATCHES = (RATED_OPTION, LADDER_OPTION, LABEL_OPTION)
MAX_TICKET_ID_CHARS = 64
# WatchTicket looks at its ticket this often, and sends it at least every second
WATCH_POLL_SECONDS = 0.25
WATCH_EVERY_SECONDS = 1.0


def request_options(options: Any) -> dict[str, Any]:
    """A request's Struct as options: integral numbers back to ints (as CreateTable does)."""
    try:
        raw = json_format.MessageToDict(options)
    except ValueError as e:  # NaN or infinity
        raise TableError(
            Code.INVALID_ARGUMENT, f"options are not valid JSON: {e}",
            reason=Reason.INVALID_ARGUMENT_OPTION,
        ) from None
    return {k: int(v) if isinstance(v, float) and v.is_integer() else v for k, v in raw.items()}


class MatchmakingRpc:
    """Handlers of the servicer (service.server.CroupierServicer) about matchmaking."""

    tables: Tables
    matchmaker: Matchmaker

    async def require_player(self, context: Any) -> Player:  # the servicer's
        raise NotImplementedError

    def ticket_message(self, ticket: Ticket, now: float, found: int = 0) -> pb.Ticket:
        t = ticket.seen_at(now)
        end = t.matched_at if t.status == TicketStatus.MATCHED else now
        msg = pb.Ticket(
            ticket_id=t.ticket_id, game=t.game, players=t.players, mode=MODE_PB[Mode(t.mode)],
            status=STATUS_PB[TicketStatus(t.status)], created_at=t.created_at,
            waited_seconds=max(0.0, end - t.created_at), players_found=found,
            bots_at=self.matchmaker.bots_at(t), table_id=t.table_id,
            seat=max(t.seat, 0), rating=t.rating,
        )
        msg.options.update(json.loads(t.options))
        return msg

    async def _message(self, ticket: Ticket) -> pb.Ticket:
        now = self.matchmaker.clock()
        found = 0
        if ticket.alive(now):
            found = await self.matchmaker.tickets.count(ticket.queue)
        return self.ticket_message(ticket, now, found)

    async def _own(self, ticket_id: str, player: Player) -> Ticket:
        if not ticket_id:
            raise TableError(
                Code.INVALID_ARGUMENT, "ticket_id is required",
                reason=Reason.INVALID_ARGUMENT_FIELD, meta={"field": "ticket_id"},
            )
        if len(ticket_id) > MAX_TICKET_ID_CHARS:
            raise TableError(
                Code.INVALID_ARGUMENT, "ticket_id is too long to be a ticket id",
                reason=Reason.INVALID_ARGUMENT_FIELD, meta={"field": "ticket_id"},
            )
        found = await self.matchmaker.tickets.get(ticket_id)
        if found is None or found.player_id != player.player_id:
            raise TableError(
                Code.NOT_FOUND, f"you have no ticket {ticket_id}",
                reason=Reason.TICKET_NOT_FOUND,
            )
        return found

    async def _keep_alive(self, ticket: Ticket) -> Ticket:
        mm = self.matchmaker
        now = mm.clock()
        kept = await mm.tickets.touch(ticket.ticket_id, now + mm.settings.ticket_seconds, now)
        return kept or ticket

    @unary
    async def FindMatch(
        self, request: pb.FindMatchRequest, context: Any, f: dict[str, Any]
    ) -> pb.Ticket:
        player = await self.require_player(context)
        f.update(game=request.game[:64], mode=request.mode)
        if not request.game:
            raise TableError(
                Code.INVALID_ARGUMENT, "game is required",
                reason=Reason.INVALID_ARGUMENT_GAME,
            )
        game = self.tables.game(request.game)
        if request.mode not in MODES:
            raise TableError(
                Code.INVALID_ARGUMENT, f"unknown match mode {request.mode}",
                reason=Reason.INVALID_ARGUMENT_FIELD, meta={"field": "mode"},
            )
        mode = MODES[request.mode]
        options = request_options(request.options)
        refused = [name for name in NOT_FOR_MATCHES if name in options]
        if refused:
            raise TableError(Code.INVALID_ARGUMENT,
                             f"table option {refused[0]!r} is not for matchmaking tables",
                             reason=Reason.INVALID_ARGUMENT_OPTION, meta={"option": refused[0]})
        mm = self.matchmaker
        options.setdefault(TIMER_OPTION, mm.settings.turn_seconds)
        new = check_create(game, request.players, options, (), 0.0, "")
        now = mm.clock()
        rating = await mm.rating(game.info.name, player.player_id)
        ticket = Ticket(
            ticket_id=secrets.token_hex(12), player_id=player.player_id, name=player.name,
            game=game.info.name, players=new.players, options=canonical_json(new.options),
            mode=mode.value, status=TicketStatus.WAITING.value, created_at=now,
            alive_until=now + mm.settings.ticket_seconds, rating=rating,
        )
        try:
            ticket, made = await mm.tickets.open(ticket)
        except TicketConflict as e:
            raise TableError(
                Code.FAILED_PRECONDITION,
                f"ticket {e.open_ticket.ticket_id} is open for {game.info.name} with another "
                "request: CancelTicket it first",
                reason=Reason.TICKET_OPEN,
            ) from None
        f.update(ticket=ticket.ticket_id, new=made)
        return await self._message(ticket)

    @unary
    async def GetTicket(
        self, request: pb.GetTicketRequest, context: Any, f: dict[str, Any]
    ) -> pb.Ticket:
        player = await self.require_player(context)
        f["ticket"] = request.ticket_id[:MAX_TICKET_ID_CHARS]
        ticket = await self._keep_alive(await self._own(request.ticket_id, player))
        return await self._message(ticket)

    @streaming
    async def WatchTicket(
        self, request: pb.GetTicketRequest, context: Any, f: dict[str, Any]
    ) -> AsyncIterator[pb.Ticket]:
        player = await self.require_player(context)
        f["ticket"] = request.ticket_id[:MAX_TICKET_ID_CHARS]
        ticket = await self._own(request.ticket_id, player)
        mm = self.matchmaker
        last_sent = -1.0
        last: tuple[str, str] | None = None
        while True:
            if context.done() or self.tables.hub.closed:
                return
            now = mm.clock()
            if now - last_sent >= WATCH_EVERY_SECONDS:
                ticket = await self._keep_alive(ticket)
            else:
                ticket = await mm.tickets.get(ticket.ticket_id) or ticket
            seen = ticket.seen_at(now)
            state = (seen.status, seen.table_id)
            if state != last or now - last_sent >= WATCH_EVERY_SECONDS:
                yield await self._message(ticket)
                last, last_sent = state, now
            if seen.status != TicketStatus.WAITING:
                f["status"] = seen.status
                return
            await asyncio.sleep(WATCH_POLL_SECONDS)

    @unary
    async def CancelTicket(
        self, request: pb.GetTicketRequest, context: Any, f: dict[str, Any]
    ) -> pb.Ticket:
        player = await self.require_player(context)
        f["ticket"] = request.ticket_id[:MAX_TICKET_ID_CHARS]
        ticket = await self._own(request.ticket_id, player)
        mm = self.matchmaker
        ticket = await mm.tickets.cancel(ticket.ticket_id, mm.clock()) or ticket
        if ticket.status == TicketStatus.MATCHED:
            raise TableError(
                Code.FAILED_PRECONDITION,
                f"ticket {ticket.ticket_id} is matched already: table {ticket.table_id}, "
                f"seat {ticket.seat}",
                reason=Reason.TICKET_MATCHED,
            )
        return await self._message(ticket)
