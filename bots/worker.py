"""`croupier bots`: worker processes that take bot seats and play them over gRPC.

A worker is an ordinary client of the public API, like any frontend: it polls the lobby for
tables waiting for a bot, claims a seat with JoinTable, follows the table's event stream with
the seat token and submits a move whenever its seat is to act. Search is CPU-bound, so the
command starts several processes; each one plays many tables concurrently on one event loop.

Workers outlive server restarts: every RPC that fails with UNAVAILABLE is retried with backoff,
the stream resumes from the last version seen, and seat tokens are kept (a durable store keeps
them valid). SIGTERM/SIGINT stop a worker cleanly: the decision in hand is finished and the
seats of unfinished tables are given back with LeaveTable so other workers can take them.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import errno
import functools
import multiprocessing
import os
import random
import secrets
import shutil
import signal
import socket
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field

import grpc
import structlog
from croupier.v1 import croupier_pb2, croupier_pb2_grpc

from bots import logging as bot_logging
from bots.channel import check_tls_files, open_channel
from bots.policy import DEFAULT_LEVEL, LEVELS, Policy, get_policy
from bots.resend import resend
from service import metrics

log = structlog.get_logger("croupier.bots")

DEFAULT_SERVER = "127.0.0.1:50051"
DEFAULT_POLL = 1.0
RPC_TIMEOUT = 15.0
STOP_GRACE = 30.0  # seconds a stopping worker waits for decisions in hand
LIST_LIMIT = 500  # tables per lobby poll (the server's maximum)
CRASH_COOLDOWN = 30.0  # seconds before re-claiming a seat whose player crashed
LEAVE_SECONDS = 8.0  # how long a seat being given back tries while the server is away

# Codes that mean "the server is (momentarily) not there": retry with backoff.
TRANSIENT = frozenset(
    {
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.DEADLINE_EXCEEDED,
        grpc.StatusCode.CANCELLED,
        grpc.StatusCode.UNKNOWN,
        grpc.StatusCode.INTERNAL,
        grpc.StatusCode.RESOURCE_EXHAUSTED,
    }
)
# Codes after which a move is sent again as it was (the server recognises a repeat; a move
# rate limit says "wait and resend").
RESUBMIT = frozenset(
    {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED,
     grpc.StatusCode.RESOURCE_EXHAUSTED}
)
REFUSALS_BEFORE_FALLBACK = 3  # refused moves after which a seat plays a legal move unsearched
SUBMIT_ATTEMPTS = 8  # with the backoff below, about 15 s of a server away
CLAIM_ATTEMPTS = 4  # a JoinTable whose reply was lost, asked again with the same token
# ... and one that raced another change of the table (another replica, a stale attempt of
# its own still landing): asked again, it gets the seat its token holds or a free one
CLAIM_AGAIN = RESUBMIT | {grpc.StatusCode.ABORTED}
# Codes that mean the seat is no longer ours to play (table gone, token refused).
SEAT_LOST = frozenset(
    {
        grpc.StatusCode.NOT_FOUND,
        grpc.StatusCode.UNAUTHENTICATED,
        grpc.StatusCode.PERMISSION_DENIED,
    }
)
# Reconnect quickly after a server restart instead of grpc's default backoff (up to 2 min).
# round_robin: with a target naming several servers (dns:///croupier-headless:50051 in
# Kubernetes) calls spread over all of them, and a stream resumes on a live one.
# Keepalive pings: a connection that died silently (a lost node, a balancer's idle timeout)
# fails its streams within about 40 s instead of leaving a seat waiting forever on a stream
# that will never speak (the server accepts pings this often: service.server).
KEEPALIVE_MS = 30_000
CHANNEL_OPTIONS = (
    ("grpc.lb_policy_name", "round_robin"),
    ("grpc.initial_reconnect_backoff_ms", 200),
    ("grpc.min_reconnect_backoff_ms", 200),
    ("grpc.max_reconnect_backoff_ms", 2000),
    ("grpc.keepalive_time_ms", KEEPALIVE_MS),
    ("grpc.keepalive_timeout_ms", 10_000),
    ("grpc.http2.max_pings_without_data", 0),  # a stream may stay quiet for hours
)


@dataclass(frozen=True)
class Settings:
    """What every worker process needs; picklable so it crosses into spawned processes."""

    server: str
    workers: int = 1
    levels: frozenset[str] | None = None  # None: any level (unknown ones play random)
    poll: float = DEFAULT_POLL
    name: str = ""
    api_key: str = ""  # sent as x-api-key when claiming seats (servers with --api-keys)
    tls_ca: str = ""  # set: TLS, trusting this CA for the server's certificate
    tls_cert: str = ""  # with tls_key: the worker's client certificate (mutual TLS)
    tls_key: str = ""

    def channel(self) -> grpc.aio.Channel:
        """A channel to the server: TLS when a CA is given, else plaintext. (The API key goes
        on the seat claims and lobby looks only, not through the channel.)"""
        return open_channel(self.server, self.tls_ca, self.tls_cert, self.tls_key,
                            options=CHANNEL_OPTIONS)

    def serves(self, level: str) -> bool:
        return self.levels is None or (level or DEFAULT_LEVEL) in self.levels


@dataclass
class Backoff:
    """Exponential backoff with jitter, so restarted servers are not stampeded."""

    initial: float = 0.2
    maximum: float = 3.0
    current: float = field(default=0.0, init=False)

    def next(self) -> float:
        self.current = self.initial if self.current == 0 else min(self.current * 2, self.maximum)
        return self.current * random.uniform(0.5, 1.0)

    def reset(self) -> None:
        self.current = 0.0


def _code(error: grpc.aio.AioRpcError) -> grpc.StatusCode:
    return error.code()


class SeatPlayer:
    """Plays one seat of one table until the match ends, the seat is lost, or the worker stops."""

    def __init__(
        self,
        stub: croupier_pb2_grpc.CroupierStub,
        table_id: str,
        seat: int,
        token: str,
        level: str,
        version: int,
        stop: asyncio.Event,
        game: str = "",
        search_slot: asyncio.Semaphore | None = None,
    ) -> None:
        self.stub = stub
        self.game = game
        self.table_id = table_id
        self.seat = seat
        self.level = level or DEFAULT_LEVEL
        self.policy: Policy = get_policy(self.level)
        self.metadata = (("authorization", f"Bearer {token}"),)
        self.stop = stop
        self.rng = random.Random()
        self.last_seen = version  # highest event version received: where a stream resumes
        self.known = version  # highest version known from any answer: older views are stale
        self.decisions = 0
        # one search at a time per process (shared by its seats): threads of one process share
        # one core, so concurrent searches would each get a fraction of their time budget
        self.search_slot = search_slot or asyncio.Semaphore(1)
        self.log = log.bind(table=table_id, seat=seat, bot_level=self.level)

    async def run(self) -> None:
        finished = False
        try:
            finished = await self._follow()
        except asyncio.CancelledError:
            self.log.warning("seat_cancelled")
            raise
        finally:
            if not finished:
                await self._leave()
        self.log.info("seat_done", finished=finished, decisions=self.decisions)

    async def _follow(self) -> bool:
        """True once there is nothing more to play: the match ended or the seat was lost."""
        backoff = Backoff()
        while not self.stop.is_set():
            try:
                view = await self._get_view()
                if self._over(view):
                    return True
                await self._act(view)
                if await self._stream(backoff):
                    return True
                if self.stop.is_set():
                    return False
                self.log.info("stream_ended_early", last_version=self.last_seen)
            except grpc.aio.AioRpcError as error:
                code = _code(error)
                if code in SEAT_LOST:
                    self.log.warning("seat_lost", code=code.name, details=error.details())
                    return True
                level = "info" if code in TRANSIENT else "warning"
                getattr(self.log, level)(
                    "rpc_retry", code=code.name, details=error.details(), last_version=self.last_seen
                )
            await self._sleep(backoff.next())
        return False

    async def _stream(self, backoff: Backoff) -> bool:
        """Follow events from the last version seen; True after the END event."""
        call = self.stub.StreamTable(
            croupier_pb2.StreamTableRequest(table_id=self.table_id, from_version=self.last_seen),
            metadata=self.metadata,
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
                if event.kind == croupier_pb2.EVENT_KIND_END:
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
        again: str | None = None  # a decided move to send again at the table's new version
        resends = 0  # of the move in hand, in a row
        thought = 0.0
        while not self.stop.is_set() and self._my_turn(view):
            started = time.perf_counter()
            if again is not None:
                move, again = again, None
            elif refusals >= REFUSALS_BEFORE_FALLBACK:
                # the server keeps refusing what this seat decides: a legal move as the server
                # lists it, so the table never waits on this seat for good
                move, thought = self.rng.choice(list(view.legal_moves)), 0.0
            else:
                move = await self._choose(view)
                thought = time.perf_counter() - started
                metrics.DECISION_SECONDS.labels(self.level, self.game).observe(thought)
            try:
                answer = await self._submit(move, view.version)
            except grpc.aio.AioRpcError as error:
                code = _code(error)
                if code == grpc.StatusCode.ABORTED:
                    # Someone moved first (or our earlier submit went through): look again.
                    self.log.info("version_conflict", version=view.version, details=error.details())
                    fresh = await self._get_view()
                    if resend(move, view, fresh, resends):
                        # another seat's out-of-turn move (a declined announcement, a call)
                        # moved the table on while this seat thought: its move still stands,
                        # so it is sent again rather than searched again (bots.resend)
                        again = move
                        resends += 1
                    else:
                        resends = 0
                    view = fresh
                    continue
                if code in (grpc.StatusCode.FAILED_PRECONDITION, grpc.StatusCode.INVALID_ARGUMENT):
                    refusals += 1
                    # neither the move nor the server's reason: either may show this seat's cards
                    self.log.warning("move_refused", version=view.version, code=code.name)
                    if refusals > REFUSALS_BEFORE_FALLBACK:
                        return  # not even a listed move: wait for the next event, do not spin
                    resends = 0
                    view = await self._get_view()
                    continue
                raise
            resends = 0
            self.decisions += 1
            self.log.info(
                "decision",
                version=view.version,
                move=answer.public_move,  # as spectators see it: logs show no hidden card
                duration_ms=round(thought * 1000, 3),
                iterations=getattr(self.policy, "last_iterations", None),
                rpc_ms=round((time.perf_counter() - started - thought) * 1000, 3),
                legal=len(view.legal_moves),
            )
            self.known = max(self.known, answer.version)
            if not answer.HasField("view") or answer.view.version < answer.version:
                return  # no fresh view in the answer: the stream will bring it
            view = answer.view

    async def _submit(self, move: str, version: int) -> croupier_pb2.SubmitMoveResponse:
        """SubmitMove, sent again with the same move and version while the server is away.

        The server answers a repeat of the move that moved the table on from `version` as it
        answered the first, so a reply lost to a restart costs neither a second search nor a
        second move; if the table moved on otherwise, the repeat gets ABORTED as usual.
        """
        backoff = Backoff()
        for attempt in range(1, SUBMIT_ATTEMPTS + 1):
            try:
                return await self.stub.SubmitMove(
                    croupier_pb2.SubmitMoveRequest(
                        table_id=self.table_id, move=move, expected_version=version
                    ),
                    metadata=self.metadata,
                    timeout=RPC_TIMEOUT,
                )
            except grpc.aio.AioRpcError as error:
                code = _code(error)
                if code not in RESUBMIT or attempt == SUBMIT_ATTEMPTS or self.stop.is_set():
                    raise
                self.log.info("submit_retry", code=code.name, version=version, attempt=attempt)
            await self._sleep(backoff.next())
        raise AssertionError("unreachable")

    async def _choose(self, view: croupier_pb2.TableView) -> str:
        """The policy's move; a legal move at random if the policy fails (a bug, or a worker
        and a server of different versions), so that a table is never left waiting."""
        try:
            if getattr(self.policy, "cpu_bound", False):
                # Keep the loop responsive (streams of other tables) while searching.
                async with self.search_slot:
                    return await asyncio.to_thread(self.policy.choose, view, self.rng)
            return self.policy.choose(view, self.rng)
        except Exception as error:  # noqa: BLE001 - any failure of the policy, by design
            frames = traceback.extract_tb(error.__traceback__)
            # where, not the message: it might quote this seat's cards
            self.log.error("decision_failed", error=type(error).__name__,
                           where=[f"{f.filename}:{f.lineno} in {f.name}" for f in frames[-6:]])
            return self.rng.choice(list(view.legal_moves))

    def _my_turn(self, view: croupier_pb2.TableView) -> bool:
        return (
            self.seat in view.to_act
            and bool(view.legal_moves)
            and view.version >= self.known
            and not self._over(view)
        )

    @staticmethod
    def _over(view: croupier_pb2.TableView) -> bool:
        return view.result.finished or view.table.status == croupier_pb2.TABLE_STATUS_FINISHED

    async def _get_view(self) -> croupier_pb2.TableView:
        view = await self.stub.GetView(
            croupier_pb2.GetViewRequest(table_id=self.table_id),
            metadata=self.metadata,
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

    async def _leave(self) -> None:
        """Give the seat back so another worker can finish the table (tried again while the
        server is momentarily away: the token lives only in this process)."""
        backoff = Backoff()
        deadline = time.monotonic() + LEAVE_SECONDS
        while True:
            try:
                await self.stub.LeaveTable(
                    croupier_pb2.LeaveTableRequest(table_id=self.table_id),
                    metadata=self.metadata,
                    timeout=5.0,
                )
                self.log.info("seat_left", last_version=self.last_seen)
                return
            except grpc.aio.AioRpcError as error:
                code = _code(error)
                pause = backoff.next()
                if code not in RESUBMIT or time.monotonic() + pause > deadline:
                    self.log.warning("leave_failed", code=code.name, details=error.details())
                    return
            await asyncio.sleep(pause)

    async def _sleep(self, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.stop.wait(), seconds)


class Worker:
    """One process: polls the lobby, claims seats, runs a SeatPlayer task per claimed seat."""

    def __init__(self, settings: Settings, index: int = 0) -> None:
        self.settings = settings
        self.index = index
        self.ident = f"{socket.gethostname()}:{os.getpid()}"
        self.stop = asyncio.Event()
        self.players: dict[tuple[str, int], asyncio.Task[None]] = {}
        self.cooldown: dict[tuple[str, int], float] = {}
        self.search_slot = asyncio.Semaphore(1)  # this process's seats search one at a time
        self.log = log

    def request_stop(self, reason: str = "") -> None:
        if not self.stop.is_set():
            self.log.info("worker_stopping", reason=reason, seats=len(self.players))
            self.stop.set()

    async def run(self) -> int:
        # Every event of this process (seat tasks copy the context) says which worker it is.
        structlog.contextvars.bind_contextvars(worker=self.index, pid=os.getpid())
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, self.request_stop, sig.name)
        self.log.info(
            "worker_started",
            server=self.settings.server,
            levels=sorted(self.settings.levels) if self.settings.levels else "any",
            poll=self.settings.poll,
        )
        async with self.settings.channel() as ch:
            stub = croupier_pb2_grpc.CroupierStub(ch)
            await self._poll(stub)
            await self._drain()
        self.log.info("worker_stopped")
        return 0

    async def _poll(self, stub: croupier_pb2_grpc.CroupierStub) -> None:
        backoff = Backoff(maximum=max(self.settings.poll, 3.0))
        down_since: float | None = None
        # a worker serving some levels asks for their tables only, so that a page full of
        # other levels' tables never hides its own (the server lists the longest-waiting first)
        served = sorted(set(self.settings.levels) & set(LEVELS)) if self.settings.levels else []
        request = croupier_pb2.ListTablesRequest(
            waiting_for_bot=True, limit=LIST_LIMIT, bot_levels=served
        )
        while not self.stop.is_set():
            try:
                answer = await stub.ListTables(
                    request, timeout=RPC_TIMEOUT, metadata=self._key_metadata()
                )
            except grpc.aio.AioRpcError as error:
                if down_since is None:
                    down_since = time.monotonic()
                    self.log.warning("lobby_unreachable", code=_code(error).name,
                                     details=error.details())
                await self._sleep(backoff.next())
                continue
            if down_since is not None:
                self.log.info("lobby_reachable", down_s=round(time.monotonic() - down_since, 2))
                down_since = None
            backoff.reset()
            claimed = 0
            tables = list(answer.tables)
            random.shuffle(tables)  # several workers: spread the claims
            for table in tables:
                if self.stop.is_set():
                    break
                seat = self._pick_seat(table)
                if seat is not None and await self._claim(stub, table, seat):
                    claimed += 1
            # After a claim, look again soon for the table's other seats, but later the busier
            # this process is, so idle processes of the same command take their share.
            busy = min(self.settings.poll, 0.05 + 0.05 * len(self.players))
            await self._sleep(busy * random.uniform(0.5, 1.5) if claimed else self.settings.poll)

    def _key_metadata(self) -> tuple[tuple[str, str], ...] | None:
        """The API key, on the calls that need the bots role: seat claims, and the lobby
        (where it also shows the private tables' bot seats)."""
        return (("x-api-key", self.settings.api_key),) if self.settings.api_key else None

    def _pick_seat(self, table: croupier_pb2.Table) -> int | None:
        """A free bot seat of this table at a level this worker serves.

        Human seats are never tried: once their fill delay passes the server turns them into
        bot seats of the table's fill level, so they show up here as bot seats.
        """
        now = time.monotonic()
        self.cooldown = {k: t for k, t in self.cooldown.items() if t > now}
        free = [
            info.seat
            for info in table.seats
            if info.kind == croupier_pb2.SEAT_KIND_BOT
            and not info.occupied
            and (table.table_id, info.seat) not in self.players
            and (table.table_id, info.seat) not in self.cooldown
            and self.settings.serves(info.bot_level)
        ]
        return random.choice(free) if free else None

    async def _claim(
        self, stub: croupier_pb2_grpc.CroupierStub, table: croupier_pb2.Table, seat: int
    ) -> bool:
        level = next((s.bot_level for s in table.seats if s.seat == seat), "") or DEFAULT_LEVEL
        name = self.settings.name or f"{level} bot"
        # The worker makes the seat token itself, so that a claim whose reply was lost (the
        # server took the seat, then the connection dropped) can be asked again and gets the
        # same seat back rather than leaving it held by a token nobody has.
        token = secrets.token_urlsafe(24)
        request = croupier_pb2.JoinTableRequest(
            table_id=table.table_id, seat=seat, name=name, bot=True, token=token
        )
        metadata = self._key_metadata()
        backoff = Backoff()
        for attempt in range(1, CLAIM_ATTEMPTS + 1):
            try:
                joined = await stub.JoinTable(request, timeout=RPC_TIMEOUT, metadata=metadata)
                break
            except grpc.aio.AioRpcError as error:
                code = _code(error)
                if code in CLAIM_AGAIN and attempt < CLAIM_ATTEMPTS and not self.stop.is_set():
                    self.log.info("claim_retried", table=table.table_id, seat=seat,
                                  code=code.name, attempt=attempt)
                    await asyncio.sleep(backoff.next())
                    continue
                # Usually another worker won the race: skip the seat for a while.
                self.cooldown[(table.table_id, seat)] = (
                    time.monotonic() + max(self.settings.poll, 1.0)
                )
                self.log.debug(
                    "claim_refused", table=table.table_id, seat=seat, code=code.name,
                    details=error.details(),
                )
                if code in CLAIM_AGAIN:  # the seat may be ours after all: give it back
                    with contextlib.suppress(grpc.aio.AioRpcError):
                        await stub.LeaveTable(
                            croupier_pb2.LeaveTableRequest(table_id=table.table_id),
                            timeout=RPC_TIMEOUT, metadata=(("authorization", f"Bearer {token}"),),
                        )
                return False
        got = joined.seat
        level = (
            next((s.bot_level for s in joined.table.seats if s.seat == got), "") or level
        )
        key = (table.table_id, got)
        player = SeatPlayer(
            stub, table.table_id, got, joined.token, level, joined.table.version, self.stop,
            game=table.game, search_slot=self.search_slot,
        )
        task = asyncio.create_task(player.run(), name=f"seat-{table.table_id}-{got}")
        self.players[key] = task
        task.add_done_callback(functools.partial(self._seat_done, key))
        self.log.info("seat_claimed", table=table.table_id, seat=got, bot_level=level,
                      game=table.game, version=joined.table.version)
        return True

    def _seat_done(self, key: tuple[str, int], task: asyncio.Task[None]) -> None:
        self.players.pop(key, None)
        if not task.cancelled() and task.exception() is not None:
            # The seat was given back; do not take it again at once only to crash again.
            self.cooldown[key] = time.monotonic() + CRASH_COOLDOWN
            error = task.exception()
            # where it happened, not the message: an engine's or the server's refusal may
            # quote the seat's cards, and no log line shows a hand
            frames = traceback.extract_tb(error.__traceback__ if error else None)
            self.log.error(
                "seat_crashed", table=key[0], seat=key[1], error=type(error).__name__,
                code=_code(error).name if isinstance(error, grpc.aio.AioRpcError) else None,
                where=[f"{f.filename}:{f.lineno} in {f.name}" for f in frames[-8:]],
            )

    async def _drain(self) -> None:
        """Let every seat finish its decision in hand and leave; cancel stragglers."""
        tasks = list(self.players.values())
        if not tasks:
            return
        _, pending = await asyncio.wait(tasks, timeout=STOP_GRACE)
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.wait(pending, timeout=5.0)

    async def _sleep(self, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.stop.wait(), seconds)


def _process_main(settings: Settings, index: int) -> None:
    """Entry point of a spawned worker process."""
    bot_logging.configure()
    try:
        code = asyncio.run(Worker(settings, index).run())
    except KeyboardInterrupt:  # a signal before the loop's handlers were installed
        code = 0
    except Exception:  # logged as one event, not as multiprocessing's plain traceback
        log.exception("worker_crashed", worker=index)
        code = 1
    sys.exit(code)


def _supervise(settings: Settings) -> int:
    """Run `settings.workers` processes; restart any that dies; stop them all on a signal."""
    ctx = multiprocessing.get_context("spawn")  # no grpc state crosses a fork
    stopping = False

    def on_signal(signum: int, _frame: object) -> None:
        nonlocal stopping
        if not stopping:
            log.info("supervisor_stopping", signal=signal.Signals(signum).name)
        stopping = True
        for proc in procs:
            if proc.is_alive() and proc.pid is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(proc.pid, signal.SIGTERM)

    def start(index: int) -> multiprocessing.process.BaseProcess:
        proc = ctx.Process(target=_process_main, args=(settings, index), name=f"croupier-bot-{index}")
        proc.start()
        return proc

    procs: list[multiprocessing.process.BaseProcess] = []
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    procs.extend(start(i) for i in range(settings.workers))
    log.info("supervisor_started", workers=settings.workers, server=settings.server)
    restarts: dict[int, float] = {}
    while not stopping:
        time.sleep(0.5)
        for index, proc in enumerate(procs):
            if stopping or proc.is_alive():
                continue
            # A crashed worker is replaced, at most once per few seconds per slot.
            if time.monotonic() - restarts.get(index, 0.0) < 5.0:
                continue
            log.warning("worker_died", worker=index, exitcode=proc.exitcode)
            restarts[index] = time.monotonic()
            procs[index] = start(index)
    deadline = time.monotonic() + STOP_GRACE + 10
    for proc in procs:
        proc.join(max(0.1, deadline - time.monotonic()))
        if proc.is_alive():
            log.warning("worker_killed", pid=proc.pid)
            proc.kill()
            proc.join(5)
    log.info("supervisor_stopped")
    return 0


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _positive_float(text: str) -> float:
    value = float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {value}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="croupier bots",
        description="Bot workers: take the bot seats of Croupier tables and play them over gRPC.",
    )
    parser.add_argument(
        "--server",
        default=os.environ.get("CROUPIER_SERVER", DEFAULT_SERVER),
        help="server address host:port (env CROUPIER_SERVER; default %(default)s)",
    )
    parser.add_argument(
        "--workers",
        type=_positive_int,
        default=os.environ.get("CROUPIER_BOT_WORKERS", "1"),
        help="worker processes (env CROUPIER_BOT_WORKERS; default %(default)s)",
    )
    parser.add_argument(
        "--levels",
        default=os.environ.get("CROUPIER_BOT_LEVELS", ""),
        help=(
            "comma-separated bot levels to serve (env CROUPIER_BOT_LEVELS; default: any level, "
            f"unknown ones play random); known: {', '.join(sorted(LEVELS))}"
        ),
    )
    parser.add_argument(
        "--poll",
        type=_positive_float,
        default=os.environ.get("CROUPIER_BOT_POLL", str(DEFAULT_POLL)),
        help="seconds between lobby polls (env CROUPIER_BOT_POLL; default %(default)s)",
    )
    parser.add_argument(
        "--name",
        default=os.environ.get("CROUPIER_BOT_NAME", ""),
        help="player name shown at the table (default: '<level> bot')",
    )
    parser.add_argument(
        "--metrics-port",
        type=int,
        default=int(os.environ.get("CROUPIER_BOT_METRICS_PORT", "0")),
        help="serve Prometheus metrics (decision latency) at http://0.0.0.0:PORT/metrics; "
        "0 = off (env CROUPIER_BOT_METRICS_PORT; default %(default)s)",
    )
    parser.add_argument(
        "--api-key",
        default=os.environ.get("CROUPIER_API_KEY", ""),
        help="API key with the 'bots' role, for servers run with --api-keys "
        "(env CROUPIER_API_KEY)",
    )
    parser.add_argument(
        "--tls-ca",
        default=os.environ.get("CROUPIER_TLS_CA", ""),
        help="connect with TLS, trusting this CA certificate (PEM) (env CROUPIER_TLS_CA)",
    )
    parser.add_argument(
        "--tls-cert",
        default=os.environ.get("CROUPIER_BOT_TLS_CERT", ""),
        help="client certificate for mutual TLS (PEM; with --tls-key) (env CROUPIER_BOT_TLS_CERT)",
    )
    parser.add_argument(
        "--tls-key",
        default=os.environ.get("CROUPIER_BOT_TLS_KEY", ""),
        help="the client certificate's private key (env CROUPIER_BOT_TLS_KEY)",
    )
    parser.add_argument(
        "--log-level",
        default=os.environ.get("CROUPIER_LOG_LEVEL", "info"),
        choices=bot_logging.LEVELS,
        help="the console's (stderr's) level; on a terminal, per-decision and per-seat events "
        "count as debug (env CROUPIER_LOG_LEVEL; default %(default)s)",
    )
    parser.add_argument(
        "--log-file",
        metavar="PATH",
        default=os.environ.get("CROUPIER_LOG_FILE", ""),
        help="also append every event, debug included, to PATH as JSON lines "
        "(env CROUPIER_LOG_FILE; default none)",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    """`croupier bots`: exits 0 after a clean stop."""
    args = build_parser().parse_args(argv)
    try:
        bot_logging.configure(args.log_level, log_file=args.log_file)
    except OSError as e:
        print(f"croupier bots: cannot open the log file {args.log_file}: {e}", file=sys.stderr)
        return 2
    # spawned workers log the same way
    os.environ["CROUPIER_LOG_LEVEL"] = args.log_level
    os.environ["CROUPIER_LOG_FILE"] = args.log_file
    levels = frozenset(part.strip() for part in args.levels.split(",") if part.strip()) or None
    if levels:
        unknown = sorted(levels - set(LEVELS))
        if unknown:
            log.warning("unknown_levels_served_as_random", levels=unknown)
    problem = check_tls_files(args.tls_ca, args.tls_cert, args.tls_key)
    if problem:
        print(f"croupier bots: {problem}", file=sys.stderr)
        return 2
    settings = Settings(
        server=args.server, workers=args.workers, levels=levels, poll=args.poll, name=args.name,
        api_key=args.api_key, tls_ca=args.tls_ca, tls_cert=args.tls_cert, tls_key=args.tls_key,
    )
    if settings.workers == 1:
        if args.metrics_port:
            try:
                metrics.serve_http(args.metrics_port)
            except OSError as e:
                return _no_metrics(args.metrics_port, e)
        return asyncio.run(Worker(settings).run())
    if not args.metrics_port:
        return _supervise(settings)
    # several processes: each writes its samples to files the supervisor's endpoint sums
    path = tempfile.mkdtemp(prefix="croupier-bot-metrics-")
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = path  # inherited by the spawned workers
    try:
        try:
            metrics.serve_multiprocess(args.metrics_port, "", path)
        except OSError as e:
            return _no_metrics(args.metrics_port, e)
        return _supervise(settings)
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _no_metrics(port: int, error: OSError) -> int:
    """One error event naming the setting to change, not a traceback; exit code 1."""
    what = "it is in use" if error.errno == errno.EADDRINUSE else str(error)
    log.error(
        "cannot_serve_metrics",
        reason=f"cannot listen on port {port} (bot metrics): {what}; choose another with "
        "--metrics-port or CROUPIER_BOT_METRICS_PORT",
    )
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
