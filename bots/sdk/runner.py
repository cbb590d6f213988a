"""The runner: finds the seats waiting for a bot, claims them with its own tokens, and plays
each with a SeatPlayer on one event loop, for any Bot (an outside entrant's or a built-in
level's: `croupier bots` is this runner with level bots).

Runners outlive server restarts: every RPC that fails with UNAVAILABLE is retried with
backoff, streams resume from the last version seen, and seat tokens are kept (a durable store
keeps them valid). Stopping is graceful: the decision in hand is finished and the seats of
unfinished tables are given back with LeaveTable, so another runner can take them.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import random
import re
import secrets
import signal
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass

import grpc
import structlog
from croupier.v1 import croupier_pb2, croupier_pb2_grpc

from bots.sdk.bot import Bot, SeatContext
from bots.sdk.decide import MARGIN, where
from bots.sdk.net import (
    DEFAULT_SERVER,
    RESUBMIT,
    RPC_TIMEOUT,
    Backoff,
    channel,
    code,
    sleep_unless,
)
from bots.sdk.pace import Pace
from bots.sdk.seat import SeatPlayer
from common.channel import check_tls_files
from common.level_names import LEVEL_NAMES

log = structlog.get_logger("croupier.bots")

DEFAULT_POLL = 1.0
DEFAULT_LEVEL = "random"
ENTRANT_NAME = re.compile(r"[a-z0-9][a-z0-9_.-]{0,39}")
STOP_GRACE = 30.0  # seconds a stopping runner waits for decisions in hand
LIST_LIMIT = 500  # tables per lobby poll (the server's maximum)
CRASH_COOLDOWN = 30.0  # seconds before re-claiming a seat whose player crashed
CLAIM_ATTEMPTS = 4  # a JoinTable whose reply was lost, asked again with the same token
# ... and one that raced another change of the table (another replica, a stale attempt of
# its own still landing): asked again, it gets the seat its token holds or a free one
CLAIM_AGAIN = RESUBMIT | {grpc.StatusCode.ABORTED}
KEY_REFUSED = frozenset({grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED})
KEY_REFUSALS = 3  # an outside entrant's claims refused for its key in a row: the runner stops


class KeyRefused(Exception):
    """The server refuses the outside entrant's key (or its lack of one): a setting to fix,
    not something to retry forever. The message is the server's, which never quotes a key."""

BotSource = Bot | type[Bot] | Callable[[SeatContext], Bot]


@dataclass(frozen=True)
class RunnerSettings:
    """Where and what a runner plays. `entrant`: an outside entrant's name (its reserved seats
    only), or a built-in level's (that level's seats), or "" for the built-in levels in
    `levels` (None: any level's seats; never an outside entrant's)."""

    server: str = DEFAULT_SERVER
    entrant: str = ""
    levels: frozenset[str] | None = None
    key: str = ""  # sent as x-api-key on lobby looks and seat claims
    tls_ca: str = ""
    tls_cert: str = ""
    tls_key: str = ""
    name: str = ""  # the player name shown at the table (default: the entrant's, "<level> bot")
    poll: float = DEFAULT_POLL
    max_seats: int = 64  # seats played at once; 0: no limit
    threads: int = 1  # blocking decisions at once (threads of one process share a core)
    margin: float = MARGIN
    # think time at tables where a person sits (bots.sdk.pace); none by default
    pace: Pace = Pace()

    @property
    def outside(self) -> bool:
        return bool(self.entrant) and self.entrant not in LEVEL_NAMES

    def check(self) -> str | None:
        """What is wrong with these settings, or None."""
        if self.entrant and not ENTRANT_NAME.fullmatch(self.entrant):
            return (f"entrant names are 1 to 40 of a-z, 0-9, '_', '.', '-', starting with a "
                    f"letter or digit; got {self.entrant!r}")
        if self.threads < 1 or self.max_seats < 0 or self.poll <= 0 or self.margin < 0:
            return "threads must be at least 1, max_seats at least 0, poll and margin positive"
        return check_tls_files(self.tls_ca, self.tls_cert, self.tls_key)

    def served_levels(self) -> frozenset[str] | None:
        if self.entrant in LEVEL_NAMES:
            return frozenset({self.entrant})
        return self.levels

    def serves(self, info: croupier_pb2.SeatInfo) -> bool:
        """Whether a free bot seat is one for this runner."""
        if self.outside:
            return info.entrant == self.entrant
        if info.entrant and info.entrant not in LEVEL_NAMES:
            return False  # an outside entrant's seat: never a built-in level's runner's
        levels = self.served_levels()
        return levels is None or (info.bot_level or DEFAULT_LEVEL) in levels


def _maker(bot: BotSource) -> tuple[Callable[[SeatContext], Bot], bool]:
    """How to get the bot of a seat, and whether it is the seat's own (closed with it)."""
    if isinstance(bot, Bot):
        return (lambda _seat: bot), False
    if isinstance(bot, type):
        cls = bot
        return (lambda _seat: cls()), True
    return bot, True


class Runner:
    """One process's runner: polls the lobby, claims seats, a SeatPlayer task per seat."""

    def __init__(self, bot: BotSource, settings: RunnerSettings, index: int = 0) -> None:
        self.settings = settings
        self.shared = bot if isinstance(bot, Bot) else None
        self.make_bot, self.per_seat = _maker(bot)
        self.index = index
        self.ident = f"{socket.gethostname()}:{os.getpid()}"
        self.stop = asyncio.Event()
        self.players: dict[tuple[str, int], asyncio.Task[None]] = {}
        self._seats: dict[tuple[str, int], SeatPlayer] = {}  # holds the tokens: never shown
        self.cooldown: dict[tuple[str, int], float] = {}
        self._said: set[grpc.StatusCode] = set()  # refusals of claims already warned of
        self._key_refusals = 0  # in a row
        self.refused: KeyRefused | None = None  # why an outside entrant's runner gave up
        # this process's blocking decisions, `threads` at a time
        self.search_slot = asyncio.Semaphore(settings.threads)
        self.log = log

    def request_stop(self, reason: str = "") -> None:
        if not self.stop.is_set():
            self.log.info("worker_stopping", reason=reason, seats=len(self.players))
            self.stop.set()

    async def run(self, stop: asyncio.Event | None = None, signals: bool = True) -> int:
        """Plays until stopped: by SIGTERM/SIGINT (with `signals`), by `stop`, by
        request_stop or by cancelling; gives the unfinished seats back; answers 0. An outside
        entrant's runner whose key the server refuses KEY_REFUSALS times in a row stops and
        raises KeyRefused."""
        # Every event of this process (seat tasks copy the context) says which runner it is.
        structlog.contextvars.bind_contextvars(worker=self.index, pid=os.getpid())
        loop = asyncio.get_running_loop()
        if signals:
            for sig in (signal.SIGTERM, signal.SIGINT):
                with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                    loop.add_signal_handler(sig, self.request_stop, sig.name)
        watcher = asyncio.ensure_future(self._watch(stop)) if stop is not None else None
        levels = self.settings.served_levels()
        self.log.info(
            "worker_started",
            server=self.settings.server,
            **({"entrant": self.settings.entrant} if self.settings.outside else
               {"levels": sorted(levels) if levels else "any"}),
            poll=self.settings.poll,
        )
        try:
            async with channel(self.settings.server, self.settings.tls_ca,
                               self.settings.tls_cert, self.settings.tls_key) as ch:
                stub = croupier_pb2_grpc.CroupierStub(ch)
                try:
                    await self._poll(stub)
                except asyncio.CancelledError:
                    self.request_stop("cancelled")
                    await self._drain()
                    raise
                await self._drain()
        finally:
            if watcher is not None:
                watcher.cancel()
            if signals:
                for sig in (signal.SIGTERM, signal.SIGINT):
                    with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                        loop.remove_signal_handler(sig)
            if self.shared is not None:
                with contextlib.suppress(Exception):
                    await self.shared.close()
        self.log.info("worker_stopped")
        if self.refused is not None:
            raise self.refused
        return 0

    async def _watch(self, stop: asyncio.Event) -> None:
        await stop.wait()
        self.request_stop("asked")

    def _lobby_request(self) -> croupier_pb2.ListTablesRequest:
        if self.settings.outside:
            return croupier_pb2.ListTablesRequest(
                waiting_for_bot=True, limit=LIST_LIMIT, entrants=[self.settings.entrant]
            )
        # a runner serving some levels asks for their tables only, so that a page full of
        # other levels' tables never hides its own (the server lists the longest-waiting first)
        levels = self.settings.served_levels()
        served = sorted(set(levels).intersection(LEVEL_NAMES)) if levels else []
        return croupier_pb2.ListTablesRequest(
            waiting_for_bot=True, limit=LIST_LIMIT, bot_levels=served
        )

    async def _poll(self, stub: croupier_pb2_grpc.CroupierStub) -> None:
        backoff = Backoff(maximum=max(self.settings.poll, 3.0))
        down_since: float | None = None
        request = self._lobby_request()
        while not self.stop.is_set():
            try:
                answer = await stub.ListTables(
                    request, timeout=RPC_TIMEOUT, metadata=self._key_metadata()
                )
            except grpc.aio.AioRpcError as error:
                if down_since is None:
                    down_since = time.monotonic()
                    self.log.warning("lobby_unreachable", code=code(error).name,
                                     details=error.details())
                await sleep_unless(self.stop, backoff.next())
                continue
            if down_since is not None:
                self.log.info("lobby_reachable", down_s=round(time.monotonic() - down_since, 2))
                down_since = None
            backoff.reset()
            claimed = 0
            tables = list(answer.tables)
            random.shuffle(tables)  # several runners: spread the claims
            for table in tables:
                if self.stop.is_set() or self._full():
                    break
                seat = self._pick_seat(table)
                if seat is not None and await self._claim(stub, table, seat):
                    claimed += 1
            # After a claim, look again soon for the table's other seats, but later the busier
            # this process is, so idle processes of the same command take their share.
            busy = min(self.settings.poll, 0.05 + 0.05 * len(self.players))
            await sleep_unless(
                self.stop, busy * random.uniform(0.5, 1.5) if claimed else self.settings.poll
            )

    def _full(self) -> bool:
        return bool(self.settings.max_seats) and len(self.players) >= self.settings.max_seats

    def _key_metadata(self) -> tuple[tuple[str, str], ...] | None:
        """The API key, on the calls that need a role: seat claims, and the lobby (where it
        also shows the private tables' bot seats)."""
        return (("x-api-key", self.settings.key),) if self.settings.key else None

    def _pick_seat(self, table: croupier_pb2.Table) -> int | None:
        """A free bot seat of this table for this runner.

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
            and self.settings.serves(info)
        ]
        return random.choice(free) if free else None

    def _level(self, table: croupier_pb2.Table, seat: int) -> str:
        info = next((s for s in table.seats if s.seat == seat), None)
        return (info.bot_level if info is not None else "") or DEFAULT_LEVEL

    async def _claim(
        self, stub: croupier_pb2_grpc.CroupierStub, table: croupier_pb2.Table, seat: int
    ) -> bool:
        outside = self.settings.outside
        level = self._level(table, seat)
        name = self.settings.name or (self.settings.entrant if outside else f"{level} bot")
        # The runner makes the seat token itself, so that a claim whose reply was lost (the
        # server took the seat, then the connection dropped) can be asked again and gets the
        # same seat back rather than leaving it held by a token nobody has.
        token = secrets.token_urlsafe(24)
        request = croupier_pb2.JoinTableRequest(
            table_id=table.table_id, seat=seat, name=name, bot=True, token=token,
            entrant=self.settings.entrant if outside else "",
        )
        metadata = self._key_metadata()
        backoff = Backoff()
        for attempt in range(1, CLAIM_ATTEMPTS + 1):
            try:
                joined = await stub.JoinTable(request, timeout=RPC_TIMEOUT, metadata=metadata)
                break
            except grpc.aio.AioRpcError as error:
                status = code(error)
                if status in CLAIM_AGAIN and attempt < CLAIM_ATTEMPTS and not self.stop.is_set():
                    self.log.info("claim_retried", table=table.table_id, seat=seat,
                                  code=status.name, attempt=attempt)
                    await asyncio.sleep(backoff.next())
                    continue
                # Usually another runner won the race: skip the seat for a while.
                self.cooldown[(table.table_id, seat)] = (
                    time.monotonic() + max(self.settings.poll, 1.0)
                )
                # a key the server does not take is a setting to fix: said once, loudly
                loud = status in KEY_REFUSED and status not in self._said
                self._said.add(status)
                (self.log.warning if loud else self.log.debug)(
                    "claim_refused", table=table.table_id, seat=seat, code=status.name,
                    details=error.details(),
                )
                self._key_refused(status, error.details() or "")
                if status in CLAIM_AGAIN:  # the seat may be ours after all: give it back
                    with contextlib.suppress(grpc.aio.AioRpcError):
                        await stub.LeaveTable(
                            croupier_pb2.LeaveTableRequest(table_id=table.table_id),
                            timeout=RPC_TIMEOUT, metadata=(("authorization", f"Bearer {token}"),),
                        )
                return False
        self._key_refusals = 0
        got = joined.seat
        level = self._level(joined.table, got) if got != seat else level
        entrant = self.settings.entrant if outside else level
        context = SeatContext(table_id=table.table_id, seat=got, game=table.game,
                              entrant=entrant, players=joined.table.players or table.players)
        key = (table.table_id, got)
        try:
            bot = self.make_bot(context)
        except Exception as error:  # noqa: BLE001 - a bot that cannot be made: give it back
            self.log.error("bot_not_made", table=table.table_id, seat=got,
                           error=type(error).__name__, where=where(error))
            self.cooldown[key] = time.monotonic() + CRASH_COOLDOWN
            with contextlib.suppress(grpc.aio.AioRpcError):
                await stub.LeaveTable(
                    croupier_pb2.LeaveTableRequest(table_id=table.table_id),
                    timeout=RPC_TIMEOUT, metadata=(("authorization", f"Bearer {joined.token}"),),
                )
            return False
        player = SeatPlayer(
            stub, context, joined.token, bot, joined.table.version, self.stop,
            search_slot=self.search_slot, margin=self.settings.margin, owns_bot=self.per_seat,
            pace=self.settings.pace,
            labels={"entrant": entrant} if outside else {"bot_level": level},
            explain_refusals=outside,
        )
        task = asyncio.create_task(player.run(), name=f"seat-{table.table_id}-{got}")
        self.players[key] = task
        self._seats[key] = player
        task.add_done_callback(functools.partial(self._seat_done, key))
        self.log.info("seat_claimed", table=table.table_id, seat=got, game=table.game,
                      version=joined.table.version,
                      **({"entrant": entrant} if outside else {"bot_level": level}))
        return True

    def _key_refused(self, status: grpc.StatusCode, details: str) -> None:
        """Counts an outside entrant's claims refused for its key, and stops the runner at
        KEY_REFUSALS in a row (a built-in worker's runner keeps trying: its operator may be
        rolling keys out)."""
        if status not in KEY_REFUSED or not self.settings.outside:
            return
        self._key_refusals += 1
        if self._key_refusals >= KEY_REFUSALS and self.refused is None:
            self.refused = KeyRefused(
                f"the server refuses the key for entrant {self.settings.entrant} "
                f"({status.name}: {details}); stopping after {self._key_refusals} refusals")
            self.log.error("key_refused", code=status.name, details=details,
                           refusals=self._key_refusals)
            self.request_stop("key refused")

    def _seat_done(self, key: tuple[str, int], task: asyncio.Task[None]) -> None:
        self.players.pop(key, None)
        self._seats.pop(key, None)
        if not task.cancelled() and task.exception() is not None:
            # The seat was given back; do not take it again at once only to crash again.
            self.cooldown[key] = time.monotonic() + CRASH_COOLDOWN
            error = task.exception()
            # where it happened, not the message: an engine's or the server's refusal may
            # quote the seat's cards, and no log line shows a hand
            self.log.error(
                "seat_crashed", table=key[0], seat=key[1], error=type(error).__name__,
                code=code(error).name if isinstance(error, grpc.aio.AioRpcError) else None,
                where=where(error, 8) if error is not None else [],
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
        await sleep_unless(self.stop, seconds)
