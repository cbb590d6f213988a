"""The grpc.aio server: croupier.v1.Croupier plus health checking and reflection.

Handlers only translate: messages in, `service.tables` does the work, `service.views` renders
the answer for the caller. Every RPC logs one line (method, table, seat, version, code,
duration); tokens and hidden cards never appear in a message or a log line.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import gc
import math
import signal
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from typing import Any, TypeVar

import grpc
from croupier.v1 import croupier_pb2 as pb
from croupier.v1 import croupier_pb2_grpc as pb_grpc
from google.protobuf import json_format
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_health.v1._async import HealthServicer
from grpc_reflection.v1alpha import reflection

from common.logging import get_logger
from common.masking import masked
from engines.contract import Game
from service import ratings, server_metrics, views
from service.config import ServeConfig
from service.export_record import export_record
from service.guest_keys import GuestKeys
from service.guest_keys import for_store as guest_keys_for
from service.identity import Identities, IdentitySettings, Player, is_identity_token
from service.identity_rpc import IdentityRpc
from service.limits import Guard, Limits, SharedCounts, client_key
from service.matchmaking import Matchmaker, run_matchmaker
from service.matchmaking_rpc import MatchmakingRpc
from service.model import RATED_OPTION, TIMER_OPTION, EventKind, Rating, SeatKind, Status
from service.my_tables_rpc import MyTablesRpc
from service.people_ratings import PeopleRater
from service.players_rpc import PlayersRpc
from service.reasons import Reason
from service.rpc import bearer_token, log, status_details, streaming, unary
from service.seats import Credential, hash_token, holds
from service.security import ApiKeys, api_key, certified
from service.store import Store, StoreUnavailable, open_store
from service.store_health import StoreWatch
from service.store_redis import RedisStore
from service.tables import Code, SeatRequest, TableError, Tables
from service.tickets import open_tickets
from service.validation import check_table_id, outside_entrant

SERVICE_NAME = pb.DESCRIPTOR.services_by_name["Croupier"].full_name
MAX_PING_BYTES = 64 * 1024
STREAM_BATCH = 256

Req = TypeVar("Req")
Resp = TypeVar("Resp")


def default_catalog() -> Iterable[Game]:
    from engines.registry import GAMES

    return GAMES.values()


class CroupierServicer(
    MatchmakingRpc, MyTablesRpc, PlayersRpc, IdentityRpc, pb_grpc.CroupierServicer
):
    def __init__(
        self,
        tables: Tables,
        catalog: Callable[[], Iterable[Game]] = default_catalog,
        poll_seconds: float = 1.0,
        guard: Guard | None = None,
        keys: ApiKeys | None = None,
        identities: Identities | None = None,
    ) -> None:
        self.tables = tables
        self.identities = identities or Identities(IdentitySettings(), GuestKeys.generate())
        self.catalog = catalog
        self.guard = guard or Guard(Limits())
        self.keys = keys or ApiKeys()
        # streams re-read the store this often even without a local signal: that is how they
        # see moves written by another process sharing the store
        self.poll_seconds = poll_seconds

    async def credential(self, context: Any) -> Credential:
        """What the call presents for a seat: a verified player (an identity token), a seat
        token, or None."""
        token = bearer_token(context)
        if token and is_identity_token(token):
            return await self.identities.verify(token)
        return token

    async def caller(self, context: Any) -> Player | None:
        """The caller's player: None for a seat token or no token; UNAUTHENTICATED for an
        identity token that does not verify."""
        found = await self.credential(context)
        return found if isinstance(found, Player) else None

    async def require_player(self, context: Any) -> Player:
        player = await self.caller(context)
        if player is None:
            raise TableError(
                Code.UNAUTHENTICATED,
                "this call needs a player's identity token: send 'authorization: Bearer "
                "<identity token>' metadata (CreateGuest gives guests one)",
                reason=Reason.IDENTITY_REQUIRED,
            )
        return player

    @unary
    async def ListGames(
        self, request: pb.ListGamesRequest, context: Any, f: dict[str, Any]
    ) -> pb.ListGamesResponse:
        return pb.ListGamesResponse(games=[views.game_info(g) for g in self.catalog()])

    @unary
    async def CreateTable(
        self, request: pb.CreateTableRequest, context: Any, f: dict[str, Any]
    ) -> pb.Table:
        f["game"] = request.game
        if not request.game:
            names = ", ".join(sorted(g.info.name for g in self.catalog()))
            raise TableError(
                Code.INVALID_ARGUMENT, f"game is required; known games: {names}",
                reason=Reason.INVALID_ARGUMENT_GAME,
            )
        seats = []
        for i, spec in enumerate(request.seats):
            if spec.kind == pb.SEAT_KIND_BOT:
                seats.append(SeatRequest(SeatKind.BOT, spec.bot_level, spec.entrant))
            elif spec.kind in (pb.SEAT_KIND_HUMAN, pb.SEAT_KIND_UNSPECIFIED):
                seats.append(SeatRequest(SeatKind.HUMAN, entrant=spec.entrant))
            else:
                raise TableError(
                    Code.INVALID_ARGUMENT, f"seat {i} has an unknown kind {spec.kind}",
                    reason=Reason.INVALID_ARGUMENT_SEAT, meta={"seat": i},
                )
        # Struct numbers are doubles: give integral ones back their integer type
        try:
            raw = json_format.MessageToDict(request.options)
        except ValueError as e:  # NaN or infinity: no JSON value, no option value either
            raise TableError(
                Code.INVALID_ARGUMENT, f"options are not valid JSON: {e}",
                reason=Reason.INVALID_ARGUMENT_OPTION,
            ) from None
        options = {
            k: int(v) if isinstance(v, float) and v.is_integer() else v for k, v in raw.items()
        }
        if RATED_OPTION in options:
            raise TableError(
                Code.INVALID_ARGUMENT,
                f"table option {RATED_OPTION!r} is the server's: rated tables come from rated "
                "matchmaking (FindMatch)",
                reason=Reason.INVALID_ARGUMENT_OPTION, meta={"option": RATED_OPTION},
            )
        key = api_key(context)
        self.keys.require(key, "tables", "Creating tables")
        client = client_key(context.peer(), key if self.keys.enabled else None)
        await self.guard.check_create(client, self.tables.store.get)
        record = await self.tables.create(
            request.game,
            request.players,
            options,
            seats,
            request.fill_with_bots_after_seconds,
            request.fill_level,
            player_ids=list(request.player_ids),
        )
        await self.guard.created(client, record.table_id)
        f.update(table=record.table_id, version=record.version)
        return views.table_summary(self.tables.game(record.game), record)

    @unary
    async def JoinTable(
        self, request: pb.JoinTableRequest, context: Any, f: dict[str, Any]
    ) -> pb.JoinTableResponse:
        f.update(table=request.table_id, bot=request.bot)
        if request.entrant and not request.bot:
            raise TableError(
                Code.INVALID_ARGUMENT, "entrant is for bots: set bot too, or leave entrant empty",
                reason=Reason.INVALID_ARGUMENT_FIELD, meta={"field": "entrant"},
            )
        entrant = outside_entrant(request.entrant)
        if entrant:
            f["entrant"] = entrant
            self.keys.require_entrant(api_key(context), entrant)
        elif request.bot:
            self.keys.require(api_key(context), "bots", "Taking bot seats", certified(context))
        seat = request.seat if request.HasField("seat") else None
        player = await self.caller(context)
        if player is not None:
            f["player"] = True  # whether, never who: ids stay out of the log
        seat, token, record = await self.tables.join(
            request.table_id, seat, request.name, request.bot, request.token, entrant, player
        )
        f.update(seat=seat, version=record.version)
        table = views.table_summary(self.tables.game(record.game), record)
        return pb.JoinTableResponse(seat=seat, token=token, table=table)

    @unary
    async def LeaveTable(
        self, request: pb.LeaveTableRequest, context: Any, f: dict[str, Any]
    ) -> pb.LeaveTableResponse:
        f["table"] = request.table_id
        record = await self.tables.leave(request.table_id, await self.credential(context))
        f["version"] = record.version
        return pb.LeaveTableResponse(
            table=views.table_summary(self.tables.game(record.game), record)
        )

    @unary
    async def ListTables(
        self, request: pb.ListTablesRequest, context: Any, f: dict[str, Any]
    ) -> pb.ListTablesResponse:
        status = None
        if request.status != pb.TABLE_STATUS_UNSPECIFIED:
            if request.status not in views.STATUS_FROM_PB:
                raise TableError(
                    Code.INVALID_ARGUMENT, f"unknown table status {request.status}",
                    reason=Reason.INVALID_ARGUMENT_FIELD, meta={"field": "status"},
                )
            status = views.STATUS_FROM_PB[request.status]
        # private tables are joined by id: listed only to bots looking for seats (bot
        # workers, or an entrant's key asking for its own seats alone)
        key = api_key(context)
        workers = request.waiting_for_bot and (
            self.keys.allows(key, "bots", certified(context))
            or (
                bool(request.entrants)
                and not request.bot_levels
                and set(request.entrants) <= self.keys.entrants(key)
            )
        )
        records, next_page = await self.tables.list(
            request.game, status, request.waiting_for_bot, request.limit, request.bot_levels,
            include_private=workers, page_token=request.page_token,
            include_abandoned=request.include_abandoned, entrants=request.entrants,
        )
        f["count"] = len(records)
        return pb.ListTablesResponse(
            tables=[views.table_summary(self.tables.game(r.game), r) for r in records],
            next_page_token=next_page,
        )

    @unary
    async def ReadyForNextDeal(
        self, request: pb.ReadyForNextDealRequest, context: Any, f: dict[str, Any]
    ) -> pb.ReadyForNextDealResponse:
        f["table"] = request.table_id
        token = await self.credential(context)
        record = await self.tables.ready_for_next_deal(request.table_id, token)
        seat = self.tables.authenticate(record, token)
        f.update(seat=seat, version=record.version)
        reply = pb.ReadyForNextDealResponse(version=record.version)
        presence = self.tables.presence.as_known(record.table_id, record.seats)
        # a call that ended the pause made the table's last event just now: the turn counts
        # from it
        last_time = None if record.paused else self.tables.clock()
        views.table_view(self.tables.game(record.game), record, seat, reply.view,
                         last_time=last_time, presence=presence)
        return reply

    @unary
    async def GetView(
        self, request: pb.GetViewRequest, context: Any, f: dict[str, Any]
    ) -> pb.TableView:
        f["table"] = request.table_id
        token = await self.credential(context)
        record = await self.tables.get(request.table_id)
        seat = self.tables.authenticate(record, token)
        await self.tables.present(record, seat)
        if seat is not None and record.seats[seat].away:
            record = await self.tables.come_back(record, seat)
        f.update(seat=seat, version=record.version)
        last_time = None
        if seat is not None and record.status == Status.PLAYING and record.options.get(
            TIMER_OPTION
        ):  # the deadline counts from the last event: read only where there is one
            last = await self.tables.store.events_after(record.table_id, record.version - 1, 1)
            last_time = last[0].time if last else None
        presence = await self.tables.presence.current(record.table_id, record.seats)
        return views.table_view(self.tables.game(record.game), record, seat, last_time=last_time,
                                presence=presence)

    @unary
    async def SubmitMove(
        self, request: pb.SubmitMoveRequest, context: Any, f: dict[str, Any]
    ) -> pb.SubmitMoveResponse:
        f.update(table=request.table_id, expected_version=request.expected_version)
        token = await self.credential(context)
        check_table_id(request.table_id)  # before it keys the seat's rate window
        await self.guard.check_move(
            request.table_id, f"player:{token.player_id}" if isinstance(token, Player) else token
        )
        out = await self.tables.move(
            request.table_id, token, request.move, request.expected_version, request.fallback,
            request.rejected,
        )
        f.update(seat=out.seat, version=out.record.version, move=out.public)
        if request.fallback:
            f["fallback"] = request.fallback
        if out.replayed:
            f["replayed"] = True
        else:
            server_metrics.count_move(out.record.game)
        reply = pb.SubmitMoveResponse(
            version=out.record.version, move=out.move, public_move=out.public
        )
        views.table_view(
            self.tables.game(out.record.game), out.record, out.seat, reply.view,
            last_time=out.events[-1].time,
            # what this process knows: no store read on a move's path
            presence=self.tables.presence.as_known(out.record.table_id, out.record.seats),
        )
        return reply

    @streaming
    async def StreamTable(
        self, request: pb.StreamTableRequest, context: Any, f: dict[str, Any]
    ) -> AsyncIterator[pb.TableEvent]:
        table_id = request.table_id
        f.update(table=table_id, from_version=request.from_version)
        token = await self.credential(context)
        if request.from_version < 0:
            raise TableError(
                Code.INVALID_ARGUMENT, "from_version may not be negative",
                reason=Reason.INVALID_ARGUMENT_VERSION,
            )
        record = await self.tables.get(table_id)
        seat = self.tables.authenticate(record, token)
        f["seat"] = seat
        if request.from_version > record.version:
            raise TableError(
                Code.INVALID_ARGUMENT,
                f"from_version {request.from_version} is past the table's version "
                f"{record.version}: resume from the last version received",
                reason=Reason.INVALID_ARGUMENT_VERSION, meta={"version": record.version},
            )
        async with self.guard.stream(table_id):  # a refusal for too many streams changes nothing
            await self.tables.present(record, seat)
            if seat is not None and record.seats[seat].away:
                record = await self.tables.come_back(record, seat)
            if request.presence:
                f["presence"] = True
            async for event in self._stream(
                record, seat, token, request.from_version, f, context.done, request.presence
            ):
                yield event

    async def _stream(
        self,
        record: Any,
        seat: int | None,
        token: Credential,
        from_version: int,
        f: dict[str, Any],
        client_gone: Callable[[], bool],
        presence: bool = False,
    ) -> AsyncIterator[pb.TableEvent]:
        """The table's events after `from_version`, then each as it comes; with `presence`,
        also a PRESENCE event (not of the log: the last event's version) whenever a seat's
        presence changes from what the subscriber was last shown."""
        table_id = record.table_id
        digest = hash_token(token) if isinstance(token, str) and seat is not None else ""
        start_version = record.version
        game = self.tables.game(record.game)
        store: Store = self.tables.store
        last = from_version
        before: bytes | None = None
        tip: Any = None  # the last event sent (or the one resumed after): presence shows it
        if last >= 1:
            # the state before the next event, to show its move as this subscriber may see it
            prev = await store.events_after(table_id, last - 1, limit=1)
            before = prev[0].state if prev else None
            tip = prev[0] if prev else None
        seats_presence = self.tables.presence
        shown: list[Any] | None = None  # the presence the subscriber was last shown
        # a seat's stream writes its presence, a presence stream looks at it: once a heartbeat
        poll = self.poll_seconds
        if presence or seat is not None:
            poll = min(poll, seats_presence.policy.heartbeat)
        sent = 0
        while True:
            if client_gone():
                # the handler's cancellation can be lost inside a store command (redis-py
                # swallows some): a stream whose client left ends here, not polls on
                raise asyncio.CancelledError(f"the client of {table_id}'s stream left")
            signal_ = self.tables.hub.signal(table_id)
            if self.tables.hub.closed:
                f["sent"] = sent
                raise TableError(
                    Code.UNAVAILABLE, f"server is shutting down; resume with from_version={last}",
                    reason=Reason.SHUTTING_DOWN, meta={"from_version": last},
                )
            events = await store.events_after(table_id, last, limit=STREAM_BATCH)
            seen = await seats_presence.read(table_id) if presence else None
            for event in events:
                if event.version != last + 1:
                    raise RuntimeError(
                        f"event log of {table_id} skips from {last} to {event.version}"
                    )
                observer = seat
                if seat is not None and not holds(event.seats[seat], token, digest):
                    # before this holder joined: an earlier holder's view is not theirs
                    observer = None
                    if event.version > start_version:
                        seat = None  # the seat was given up: from here on, the public view only
                        f["seat_given_up_at"] = event.version
                if seen is not None:
                    shown = seats_presence.states(event.seats, seen)
                yield views.table_event(game, record, event, before, observer, shown)
                sent += 1
                before, last, tip = event.state, event.version, event
                f.update(version=last, sent=sent)
                if event.kind == EventKind.END:
                    return
            if seat is not None:  # an open stream of a seated person is presence
                await self.tables.present(record, seat)
            if seen is not None and tip is not None:
                now_shown = seats_presence.states(tip.seats, seen)
                if now_shown != shown:
                    shown = now_shown
                    observer = seat if seat is not None and holds(
                        tip.seats[seat], token, digest) else None
                    yield views.presence_event(
                        game, record, tip, observer, now_shown, self.tables.clock()
                    )
            if events:
                continue
            if record.status.closed and last >= record.version:
                return  # asked to resume after the end: nothing will ever follow
            if store.notifies_changes:
                change = store.wait_for_change(table_id, last, poll)
                await _wait_either(signal_, change)
            else:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(signal_.wait(), poll)
            if not signal_.is_set():
                fresh = await store.get(table_id)
                if fresh is not None:
                    record = record.with_(
                        status=fresh.status, version=fresh.version, seen_at=fresh.seen_at
                    )

    @unary
    async def Ping(
        self, request: pb.PingRequest, context: Any, f: dict[str, Any]
    ) -> pb.PingResponse:
        if len(request.payload) > MAX_PING_BYTES:
            raise TableError(
                Code.RESOURCE_EXHAUSTED, f"ping payload is at most {MAX_PING_BYTES} bytes",
                reason=Reason.TOO_LARGE, meta={"field": "payload", "max": MAX_PING_BYTES},
            )
        return pb.PingResponse(payload=request.payload)

    @unary
    async def ExportRecord(
        self, request: pb.ExportRecordRequest, context: Any, f: dict[str, Any]
    ) -> pb.GameRecord:
        f["table"] = request.table_id
        out = await export_record(self.tables, request.table_id, await self.credential(context))
        f.update(version=out.version, moves=len(out.moves))
        return out


    @unary
    async def RateMatch(
        self, request: pb.RateMatchRequest, context: Any, f: dict[str, Any]
    ) -> pb.RateMatchResponse:
        f.update(ladder=request.ladder[:64], match=request.match_id[:64],
                 tables=len(request.table_ids))
        self.keys.require(api_key(context), "tables", "Rating ladder matches")
        out = await ratings.rate_match(
            self.tables, request.ladder, request.match_id, list(request.table_ids)
        )
        f["already_rated"] = out.already_rated
        return pb.RateMatchResponse(
            ratings=[_rating(r) for r in out.ratings], already_rated=out.already_rated
        )

    @unary
    async def ListRatings(
        self, request: pb.ListRatingsRequest, context: Any, f: dict[str, Any]
    ) -> pb.ListRatingsResponse:
        f.update(ladder=request.ladder[:64], game=request.game[:64])
        standings = await ratings.list_ratings(self.tables, request.ladder, request.game)
        f["count"] = len(standings)
        return pb.ListRatingsResponse(ratings=[_rating(r) for r in standings])


def _rating(r: Rating) -> pb.Rating:
    return pb.Rating(game=r.game, entrant=r.entrant, mu=r.mu, sigma=r.sigma,
                     ordinal=ratings.ordinal(r.mu, r.sigma), matches=r.matches,
                     updated_at=r.updated_at)


_UNPARSEABLE = object()


class RejectUnparseable(grpc.aio.ServerInterceptor):
    """Bytes that are no valid request message get INVALID_ARGUMENT with a message saying so;
    without this, grpc answers UNKNOWN with a protobuf exception as its text."""

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(details)
        method = details.method or ""
        if handler is None or not method.startswith(f"/{SERVICE_NAME}/"):
            return handler
        parse = handler.request_deserializer
        name = method.rsplit("/", 1)[-1]
        message = f"the request is not a valid {name} request message"
        unparseable = status_details(
            grpc.StatusCode.INVALID_ARGUMENT, message, Reason.INVALID_ARGUMENT_REQUEST
        )

        def safe_parse(data: bytes) -> Any:
            try:
                return parse(data)
            except Exception:
                return _UNPARSEABLE

        if handler.unary_unary is not None:
            unary_fn = handler.unary_unary

            async def unary_checked(request: Any, context: grpc.aio.ServicerContext) -> Any:
                if request is _UNPARSEABLE:
                    log.info("rpc", method=name, code="INVALID_ARGUMENT", error=message)
                    await context.abort(grpc.StatusCode.INVALID_ARGUMENT, message, unparseable)
                return await unary_fn(request, context)

            return handler._replace(request_deserializer=safe_parse, unary_unary=unary_checked)
        if handler.unary_stream is not None:
            stream_fn = handler.unary_stream

            async def stream_checked(
                request: Any, context: grpc.aio.ServicerContext
            ) -> AsyncIterator[Any]:
                if request is _UNPARSEABLE:
                    log.info("rpc", method=name, code="INVALID_ARGUMENT", error=message)
                    await context.abort(grpc.StatusCode.INVALID_ARGUMENT, message, unparseable)
                async for item in stream_fn(request, context):
                    yield item

            return handler._replace(request_deserializer=safe_parse, unary_stream=stream_checked)
        return handler


async def _wait_either(signal_: asyncio.Event, change: Awaitable[None]) -> None:
    """Waits for the local wake-up (a write through this process, or shutting down) or the
    store's (a write through another replica), whichever comes first."""
    tasks = [asyncio.ensure_future(signal_.wait()), asyncio.ensure_future(change)]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def _together(*jobs: Awaitable[None]) -> None:
    """The server's background loops as one task: cancelling it cancels each."""
    await asyncio.gather(*jobs)


async def run_table_clock(
    tables: Tables, interval: float, rater: PeopleRater | None = None
) -> None:
    """The tables' clock, one round every `interval` seconds of its jobs: hands empty
    human seats to bots once their table's fill delay has passed (`fill`), plays for seats
    whose turn timer ran out with the game's heuristic player (`turn_timer`), ends the pauses
    between deals whose time ran out (`deal_pause`, service.pacing), closes
    tables no person came back to (`abandon`), and, with a `rater`, rates finished rated
    tables nobody rated (`rate`, every few rounds). Every replica runs it: each change is a
    compare-and-set (a rating: `Store.rate`), one wins."""
    from bots.heuristics import get_heuristic  # pure rule-based players, no bot machinery

    bg = get_logger("croupier.fill")
    # (name, round, log event and field for what it did)
    jobs: tuple[tuple[str, Callable[[], Awaitable[int]], str, str], ...] = (
        ("fill", tables.open_due_seats, "seats_opened_to_bots", "tables"),
        ("turn_timer", lambda: tables.play_overdue(get_heuristic), "turns_timed_out", "moves"),
        ("deal_pause", tables.start_due_deals, "pauses_between_deals_ended", "tables"),
        ("abandon", tables.close_abandoned, "tables_closed_as_abandoned", "tables"),
    )
    if rater is not None:
        jobs += (("rate", rater.sweep, "finished_tables_rated", "tables"),)
    store_down = False  # a store outage (Redis restarting) is logged once, not every round
    while True:
        # the outage ends when a whole round reaches the store: a job that happens not to
        # touch it (nothing to rate) must not announce a recovery the next job contradicts
        unreachable: StoreUnavailable | None = None
        for name, job, event, field_ in jobs:
            try:
                done = await job()
            except StoreUnavailable as exc:
                unreachable = unreachable or exc
                continue
            except Exception as exc:  # keep going even if one round fails
                bg.error(f"{name}_failed", error=type(exc).__name__)
                continue
            if done:
                bg.info(event, **{field_: done})
        if unreachable is not None and not store_down:
            bg.warning("background_paused_store_unreachable", error=str(unreachable))
            store_down = True
        elif unreachable is None and store_down:
            bg.info("background_resumed")
            store_down = False
        await asyncio.sleep(interval)


class Server:
    """A running server: the gRPC server, its store and its background task."""

    def __init__(
        self,
        server: grpc.aio.Server,
        store: Store,
        tables: Tables,
        health: HealthServicer,
        port: int,
        fill_task: asyncio.Task[None],
        web: Any = None,
        guard: Guard | None = None,
        rater: PeopleRater | None = None,
    ) -> None:
        self.server = server
        self.store = store
        self.tables = tables
        self.health = health
        self.port = port
        self._fill_task = fill_task
        self.web = web  # service.web.WebServer when browsers are served
        self.guard = guard
        self.rater = rater

    async def stop(self, grace: float = 5.0, drain: float = 0.0) -> None:
        """Health says NOT_SERVING at once (readiness probes fail, balancers move away),
        streams end with UNAVAILABLE and where to resume; other calls are still answered for
        `drain` s, while the news spreads; then new calls are refused and in-flight ones get
        `grace` s to finish."""
        await self.health.enter_graceful_shutdown()
        self.tables.hub.close()  # ends open streams with a "resume from" message
        if drain > 0:
            await asyncio.sleep(drain)
        # both ports refuse new calls from now on and give in-flight ones the same grace
        stopping = [self.server.stop(grace)]
        if self.web is not None:
            stopping.append(self.web.stop(grace))
        await asyncio.gather(*stopping)
        self._fill_task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._fill_task
        if self.guard is not None:
            await self.guard.close()
        if self.rater is not None:
            await self.rater.drain()  # a rating cut short here is the next sweep's
        await self.store.close()


class AddressInUse(OSError):
    """Another process listens where this server would; `port` says which of its ports:
    "grpc", "web" or "metrics" (the command line names the setting to change)."""

    def __init__(self, address: str, port: str) -> None:
        super().__init__(errno.EADDRINUSE, f"{address} is in use")
        self.address = address
        self.port = port


def address_in_use(listen: str) -> bool:
    """Whether something listens on host:port now, by a probe bind that fails as gRPC's and
    hypercorn's would (gRPC's own failure is a bare "Failed to bind" plus a line of C log on
    stderr). False when the probe cannot tell (port 0, a unix socket): their errors then say."""
    host, _, port_text = listen.rpartition(":")
    host = host.strip("[]") or "0.0.0.0"
    try:
        port = int(port_text)
    except ValueError:
        return False
    if port <= 0:
        return False
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (OSError, UnicodeError):
        return False
    for family, kind, proto, _, sockaddr in found:
        with contextlib.closing(socket.socket(family, kind, proto)) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as both servers do
            try:
                probe.bind(sockaddr)
            except OSError as e:
                if e.errno == errno.EADDRINUSE:
                    return True
    return False


# Clients may ping to keep long quiet streams (a table waiting for a person) alive and to find
# dead connections (bot workers ping every 30 s): accepted down to every 4 s, with or without
# calls in flight, where gRPC's default closes a quiet connection (too_many_pings) that pings
# more often than every 5 minutes. (The first argument is gRPC core's
# GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, whose string lacks the "recv".)
KEEPALIVE_POLICY = (
    ("grpc.http2.min_ping_interval_without_data_ms", 4_000),
    ("grpc.keepalive_permit_without_calls", 1),
)


async def start(config: ServeConfig | None = None) -> Server:
    """Starts serving `config` (its defaults without one); ValueError for a wrong setting,
    AddressInUse or OSError for a port it cannot take. `config.metrics_port`, `drain` and the
    log settings are `serve`'s and the command line's."""
    config = config or ServeConfig()
    listen, web_listen, grace = config.listen, config.web_listen, config.grace
    limits, keys, tls, abandon = config.limits(), config.keys(), config.tls(), config.abandon()
    match = config.match_settings()
    identity = config.identity()
    credentials = tls.credentials() if tls.enabled else None  # unreadable files: ValueError now
    if not 0 <= config.deal_pause_seconds < math.inf:
        raise ValueError("--deal-pause-seconds must be 0 or more seconds, got "
                         f"{config.deal_pause_seconds}")
    for address, port_name in ((listen, "grpc"), (web_listen, "web")):
        if address and address_in_use(address):
            raise AddressInUse(address, port_name)
    store = open_store(config.store)
    tables = Tables(store, abandon=abandon, presence=config.presence(),
                    deal_pause=config.deal_pause_seconds)
    server = grpc.aio.server(
        interceptors=[RejectUnparseable()],
        options=[
            ("grpc.max_receive_message_length", limits.max_message_bytes),
            ("grpc.so_reuseport", 0),
            *KEEPALIVE_POLICY,
        ],
    )
    # on Redis the limits count in Redis, once for every replica on the store
    shared = SharedCounts(config.store) if isinstance(store, RedisStore) else None
    guard = Guard(limits, shared)
    guest_keys = GuestKeys.load(config.guest_key_file) if config.guest_key_file else None
    identities = Identities(
        identity,
        guest_keys,
        lambda: guest_keys_for(store, config.store, config.guest_key_file),
    )
    servicer = CroupierServicer(
        tables, poll_seconds=config.poll_seconds, guard=guard, keys=keys, identities=identities
    )
    servicer.finished_within = config.finished_within()
    pb_grpc.add_CroupierServicer_to_server(servicer, server)
    health = HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health, server)
    reflection.enable_server_reflection(
        (
            SERVICE_NAME,
            health_pb2.DESCRIPTOR.services_by_name["Health"].full_name,
            reflection.SERVICE_NAME,
        ),
        server,
    )
    try:
        if credentials is not None:
            port = server.add_secure_port(listen, credentials)
        else:
            port = server.add_insecure_port(listen)
    except RuntimeError as e:
        await guard.close()
        await store.close()
        raise OSError(f"cannot listen on {listen}: {e}") from None
    web = None
    if web_listen:
        from service.web import start_web  # Connect / gRPC-Web for browsers, same servicer

        try:
            web = await start_web(
                servicer, web_listen, config.origins(), config.web_root, grace,
                limits.max_message_bytes,
            )
        except OSError:
            await guard.close()
            await store.close()
            if address_in_use(web_listen):  # taken since the check above
                raise AddressInUse(web_listen, "web") from None
            raise
    await server.start()
    # liveness ("") is the process's; readiness (the service's) follows the store's answers
    await health.set("", health_pb2.HealthCheckResponse.SERVING)
    watch = StoreWatch(store, health, SERVICE_NAME, interval=config.store_check_seconds)
    await watch.check(at_start=True)
    servicer.matchmaker = Matchmaker(tables, open_tickets(store), match)
    rater = PeopleRater(tables)
    tables.on_finished = rater.table_finished  # rated tables are rated as they finish
    fill_task = asyncio.create_task(
        _together(run_table_clock(tables, config.fill_interval, rater),
                  run_matchmaker(servicer.matchmaker), watch.run())
    )
    return Server(server, store, tables, health, port, fill_task, web, guard, rater)


async def serve(config: ServeConfig, ready: Callable[[], None] | None = None) -> None:
    """Runs until SIGTERM or SIGINT, then stops gracefully (see Server.stop: `config.drain` s
    not ready but answering, then `config.grace` s for in-flight RPCs). With `metrics_port`,
    Prometheus metrics are served at /metrics on the listen host. With `web_listen`, browsers
    reach the same API over Connect / gRPC-Web there, and the built web client. `ready` is
    called once every port of this server listens (`croupier run` learns it so, from this
    process)."""
    slog = get_logger("croupier.server")
    running = await start(config)
    listen, metrics_port, grace, drain = (
        config.listen, config.metrics_port, config.grace, config.drain)
    host = listen.rsplit(":", 1)[0]
    refresh: asyncio.Task[None] | None = None
    if metrics_port:
        try:
            server_metrics.serve_http(metrics_port, host.strip("[]"))
        except OSError as e:
            await running.stop(0)
            if e.errno == errno.EADDRINUSE:
                raise AddressInUse(f"{host}:{metrics_port}", "metrics") from None
            raise OSError(f"cannot serve metrics on port {metrics_port}: {e}") from None
        refresh = asyncio.create_task(server_metrics.refresh_tables_forever(running.store.count_tables))
    address = f"{host}:{running.port}"
    # what start-up made (modules, engines' tables, protobuf classes) lives as long as the
    # process: out of the collector's sight, full collections stop walking it on every round
    gc.freeze()
    left = running.tables.abandon
    slog.info("serving", listen=masked(address), store=masked(config.store),
              metrics_port=metrics_port, web=masked(config.web_listen),
              abandon_waiting_s=left.waiting_seconds, abandon_playing_s=left.playing_seconds)
    if ready is not None:
        ready()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    slog.info("stopping", drain_seconds=drain, grace_seconds=grace)
    if refresh is not None:
        refresh.cancel()
    await running.stop(grace, drain)
    slog.info("stopped")
