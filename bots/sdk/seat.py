"""Playing one seat for a bot: the seat's stream with resume, its decisions, and the give-back.

The seat token lives in this object only: it goes on this seat's calls and nowhere else (not
to the bot, its hooks, or a log line).
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Mapping

import grpc
import structlog
from croupier.v1 import croupier_pb2, croupier_pb2_grpc

from bots import metrics
from bots.sdk.bot import Bot, SeatContext
from bots.sdk.decide import ILLEGAL, MARGIN, Answer, Asker, for_record, where
from bots.sdk.net import (
    LEAVE_SECONDS,
    REFUSED,
    RESUBMIT,
    RPC_TIMEOUT,
    SEAT_LOST,
    TRANSIENT,
    Backoff,
    code,
    sleep_unless,
)
from bots.sdk.pace import Pace
from common.resend import resend

log = structlog.get_logger("croupier.bots")

REFUSALS_BEFORE_FALLBACK = 3  # refused moves after which a seat plays a legal move unasked
REASON_CHARS = 300  # of the server's reason for a refusal, in an outside entrant's log
SUBMIT_ATTEMPTS = 8  # with the backoff below, about 15 s of a server away


class SeatPlayer:
    """Plays one seat of one table until the match ends, the seat is lost, or the runner stops."""

    def __init__(
        self,
        stub: croupier_pb2_grpc.CroupierStub,
        seat: SeatContext,
        token: str,
        bot: Bot,
        version: int,
        stop: asyncio.Event,
        *,
        search_slot: asyncio.Semaphore | None = None,
        margin: float = MARGIN,
        owns_bot: bool = False,
        labels: Mapping[str, str] | None = None,
        explain_refusals: bool = False,
        pace: Pace | None = None,
    ) -> None:
        self.stub = stub
        self.context = seat
        self.table_id = seat.table_id
        self.seat = seat.seat
        self.game = seat.game
        self.bot = bot
        self.owns_bot = owns_bot  # made for this seat: closed when the seat is done
        # an outside entrant's runner: its log is its author's, and a refusal's line names the
        # move and the server's reason (a built-in worker's log is the operator's: neither)
        self.explain_refusals = explain_refusals
        self._metadata = (("authorization", f"Bearer {token}"),)
        self.stop = stop
        self.rng = random.Random()
        self.last_seen = version  # highest event version received: where a stream resumes
        self.known = version  # highest version known from any answer: older views are stale
        self.decisions = 0
        self.ended = False
        # one blocking decision at a time per process (shared by its seats): threads of one
        # process share one core, so concurrent searches would each get a fraction of their time
        self.search_slot = search_slot or asyncio.Semaphore(1)
        fields = dict(labels) if labels is not None else {"entrant": seat.entrant}
        self.metric_label = next(iter(fields.values()), seat.entrant)
        self.log = log.bind(table=seat.table_id, seat=seat.seat, **fields)
        self.asker = Asker(bot, self.search_slot, margin, self.log, self.rng)
        self.pace = pace or Pace()  # think time at tables with a person (bots.sdk.pace)

    async def run(self) -> None:
        finished = False
        self._hook("on_seat", self.context)
        try:
            finished = await self._follow()
        except asyncio.CancelledError:
            self.log.warning("seat_cancelled")
            raise
        finally:
            if not finished and not await self._over_meanwhile():
                await self._leave()
            self._hook("on_leave", self.context)
            if self.owns_bot:
                await self._close_bot()
        self.log.info("seat_done", finished=finished, decisions=self.decisions)

    async def _follow(self) -> bool:
        """True once there is nothing more to play: the match ended or the seat was lost."""
        backoff = Backoff()
        while not self.stop.is_set():
            try:
                view = await self._get_view()
                if self._over(view):
                    self._end(view)
                    return True
                await self._act(view)
                if await self._stream(backoff):
                    return True
                if self.stop.is_set():
                    return False
                self.log.info("stream_ended_early", last_version=self.last_seen)
            except grpc.aio.AioRpcError as error:
                status = code(error)
                if status in SEAT_LOST:
                    self.log.warning("seat_lost", code=status.name, details=error.details())
                    return True
                level = "info" if status in TRANSIENT else "warning"
                getattr(self.log, level)(
                    "rpc_retry", code=status.name, details=error.details(),
                    last_version=self.last_seen,
                )
            await sleep_unless(self.stop, backoff.next())
        return False

    async def _stream(self, backoff: Backoff) -> bool:
        """Follow events from the last version seen; True after the END event."""
        call = self.stub.StreamTable(
            croupier_pb2.StreamTableRequest(table_id=self.table_id, from_version=self.last_seen),
            metadata=self._metadata,
        )
        stopping = asyncio.ensure_future(self.stop.wait())
        try:
            while True:
                reading = asyncio.ensure_future(call.read())
                done, _ = await asyncio.wait(
                    {reading, stopping}, return_when=asyncio.FIRST_COMPLETED
                )
                if reading not in done:
                    reading.cancel()
                    return False
                event = reading.result()
                if event is grpc.aio.EOF:
                    return False
                backoff.reset()
                self.last_seen = max(self.last_seen, event.version)
                self._hook("on_event", self.context, event)
                if event.kind == croupier_pb2.EVENT_KIND_END:
                    self._end(event.view)
                    return True
                if event.version >= self.known:
                    self.known = event.version
                    await self._act(event.view)
        finally:
            stopping.cancel()
            call.cancel()

    async def _act(self, view: croupier_pb2.TableView) -> None:
        """Move for as long as the freshest view says this seat is to act."""
        refusals = 0
        refused: set[str] = set()  # moves the server refused in this decision
        again: Answer | None = None  # a move to send at the table's new version
        resends = 0  # of the move in hand, in a row
        while not self.stop.is_set() and self._my_turn(view):
            started = time.perf_counter()
            if again is not None:
                answer, again = again, None
            elif refusals >= REFUSALS_BEFORE_FALLBACK:
                # the server keeps refusing what this seat decides: a legal move as the server
                # lists it (one it has not refused), so the table never waits on this seat
                legal = [m for m in view.legal_moves if m not in refused] or list(view.legal_moves)
                answer = Answer(self.rng.choice(legal), ILLEGAL)
            else:
                answer = await self.asker.ask(view)
                metrics.DECISION_SECONDS.labels(self.metric_label, self.game).observe(
                    answer.thought)
                if answer.fallback:
                    metrics.FALLBACKS.labels(self.metric_label, self.game, answer.fallback).inc()
                # a person's pace at a table with a person: an asyncio sleep, holding nothing
                paced = self.pace.wait(view, time.perf_counter() - started, self.rng)
                if paced > 0:
                    await sleep_unless(self.stop, paced)
            try:
                reply = await self._submit(answer.move, view.version, answer.fallback,
                                           answer.rejected)
            except grpc.aio.AioRpcError as error:
                status = code(error)
                if status == grpc.StatusCode.ABORTED:
                    # Someone moved first (or our earlier submit went through): look again.
                    self.log.info("version_conflict", version=view.version, details=error.details())
                    fresh = await self._get_view()
                    if resend(answer.move, view, fresh, resends):
                        # another seat's out-of-turn move (a declined announcement, a call)
                        # moved the table on while this seat thought: its move still stands,
                        # so it is sent again rather than decided again (common.resend)
                        again = answer
                        resends += 1
                    else:
                        resends = 0
                    view = fresh
                    continue
                if status in REFUSED:
                    refusals += 1
                    refused.add(answer.move)
                    # either may show this seat's cards: only in the entrant's own log
                    told = {"move": for_record(answer.move),
                            "reason": (error.details() or "")[:REASON_CHARS]}
                    self.log.warning("move_refused", version=view.version, code=status.name,
                                     listed=answer.listed,
                                     **(told if self.explain_refusals else {}))
                    if refusals > REFUSALS_BEFORE_FALLBACK:
                        return  # not even a listed move: wait for the next event, do not spin
                    resends = 0
                    view = await self._get_view()
                    if not answer.listed and self._my_turn(view):
                        # the bot's answer is no move the server knows: a legal one in its place
                        self.asker.fell_back(ILLEGAL, refused=status.name)
                        again = self.asker.default(view, ILLEGAL,
                                                   rejected=for_record(answer.move))
                        metrics.FALLBACKS.labels(self.metric_label, self.game, ILLEGAL).inc()
                    continue
                raise
            resends = 0
            self.decisions += 1
            self.log.info(
                "decision",
                version=view.version,
                move=reply.public_move,  # as spectators see it: logs show no hidden card
                duration_ms=round(answer.thought * 1000, 3),
                iterations=getattr(self.bot, "last_iterations", None),
                rpc_ms=round((time.perf_counter() - started - answer.thought) * 1000, 3),
                legal=len(view.legal_moves),
                **({"fallback": answer.fallback} if answer.fallback else {}),
            )
            self.known = max(self.known, reply.version)
            if not reply.HasField("view") or reply.view.version < reply.version:
                return  # no fresh view in the answer: the stream will bring it
            view = reply.view

    async def _submit(self, move: str, version: int, fallback: str = "",
                      rejected: str = "") -> croupier_pb2.SubmitMoveResponse:
        """SubmitMove, sent again with the same move and version while the server is away.

        The server answers a repeat of the move that moved the table on from `version` as it
        answered the first, so a reply lost to a restart costs neither a second decision nor a
        second move; if the table moved on otherwise, the repeat gets ABORTED as usual.
        """
        backoff = Backoff()
        request = croupier_pb2.SubmitMoveRequest(
            table_id=self.table_id, move=move, expected_version=version, fallback=fallback,
            rejected=rejected,
        )
        for attempt in range(1, SUBMIT_ATTEMPTS + 1):
            try:
                return await self.stub.SubmitMove(
                    request, metadata=self._metadata, timeout=RPC_TIMEOUT
                )
            except grpc.aio.AioRpcError as error:
                status = code(error)
                if status not in RESUBMIT or attempt == SUBMIT_ATTEMPTS or self.stop.is_set():
                    raise
                self.log.info("submit_retry", code=status.name, version=version, attempt=attempt)
            await sleep_unless(self.stop, backoff.next())
        raise AssertionError("unreachable")

    def _my_turn(self, view: croupier_pb2.TableView) -> bool:
        return (
            self.seat in view.to_act
            and bool(view.legal_moves)
            and not view.next_deal_at  # the pause between deals: DEAL_STARTS comes
            and view.version >= self.known
            and not self._over(view)
        )

    @staticmethod
    def _over(view: croupier_pb2.TableView) -> bool:
        return view.result.finished or view.table.status == croupier_pb2.TABLE_STATUS_FINISHED

    def _end(self, view: croupier_pb2.TableView) -> None:
        if not self.ended:
            self.ended = True
            self._hook("on_match_end", self.context, view)

    def _hook(self, name: str, *args: object) -> None:
        """A hook of the bot; its failure is logged (type and where) and otherwise ignored."""
        try:
            getattr(self.bot, name)(*args)
        except Exception as error:  # noqa: BLE001 - a bot's bug never stops its seat
            self.log.error("hook_failed", hook=name, error=type(error).__name__,
                           where=where(error))

    async def _close_bot(self) -> None:
        try:
            await self.bot.close()
        except Exception as error:  # noqa: BLE001
            self.log.error("hook_failed", hook="close", error=type(error).__name__,
                           where=where(error))

    async def _get_view(self) -> croupier_pb2.TableView:
        view = await self.stub.GetView(
            croupier_pb2.GetViewRequest(table_id=self.table_id),
            metadata=self._metadata,
            timeout=RPC_TIMEOUT,
        )
        if view.version < self.known:
            # the table went back (a store restored from a backup, a Redis failover losing its
            # last writes): what this seat saw after it never happened; go on from here
            self.log.warning("table_went_back", version=view.version, known=self.known)
            self.known = view.version
            self.last_seen = min(self.last_seen, view.version)
        self.known = max(self.known, view.version)
        return view

    async def _over_meanwhile(self) -> bool:
        """Stopping: whether the match ended before this seat read its END (then the bot
        hears of the end, and there is no seat to give back)."""
        try:
            view = await self.stub.GetView(
                croupier_pb2.GetViewRequest(table_id=self.table_id),
                metadata=self._metadata, timeout=5.0,
            )
        except grpc.aio.AioRpcError:
            return False
        if self._over(view):
            self._end(view)
            return True
        return False

    async def _leave(self) -> None:
        """Give the seat back so another runner can finish the table (tried again while the
        server is momentarily away: the token lives only in this process)."""
        backoff = Backoff()
        deadline = time.monotonic() + LEAVE_SECONDS
        while True:
            try:
                await self.stub.LeaveTable(
                    croupier_pb2.LeaveTableRequest(table_id=self.table_id),
                    metadata=self._metadata,
                    timeout=5.0,
                )
                self.log.info("seat_left", last_version=self.last_seen)
                return
            except grpc.aio.AioRpcError as error:
                status = code(error)
                pause = backoff.next()
                if status not in RESUBMIT or time.monotonic() + pause > deadline:
                    self.log.warning("leave_failed", code=status.name, details=error.details())
                    return
            await asyncio.sleep(pause)
