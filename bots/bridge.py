"""`croupier bot-bridge`: a bot of the SDK that asks a program in any language for its moves.

The program runs as a child process and speaks one JSON object per line on stdin/stdout
(docs/bots.md has the schema): it says hello, then answers each `decide` line with a move.
Its stderr goes to the bridge's log. Whatever the program does, the table goes on: an answer
that is not a move, a move that is not legal, no answer in time, or a program that died are
each answered with a legal default move, with the SDK's fallback reason set, and a program
that died is started again (backoff, at most once a second). Seat tokens and API keys stay in
the bridge's process: the program sees only its seat's view. By default the program runs
confined (bots.sandbox: bubblewrap, no view of the host's files, no network) with memory and
CPU-time limits.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import math
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson
import structlog
from croupier.v1 import croupier_pb2
from google.protobuf import json_format

from bots import sdk
from bots.sandbox import DEFAULT_MEMORY_MB, Sandbox, SandboxError
from common.channel import add_key_flags, api_key_of

log = structlog.get_logger("croupier.bridge")

PROTOCOL = "croupier-bot/1"
MODES = ("per-seat", "shared")
HELLO_SECONDS = 10.0  # a program that has not said hello by then is treated as crashed
MAX_LINE = 1 << 20  # bytes of one line from the program; a longer one is garbage
TEXT_BYTES = 1000  # of an answer line kept to show (the record keeps at most 200 characters)
STDERR_CHARS = 500  # a stderr line is logged cut to this
MAX_NAME = 80
RESTART_MIN = 1.0  # seconds between two starts of one program, at least
RESTART_MAX = 30.0  # the backoff of a program that keeps dying without answering stops here
STOP_SECONDS = 3.0  # a program whose stdin was closed has this long to exit before SIGTERM
# variables the program's environment does not inherit: the bridge's own credentials
PRIVATE_ENV = ("CROUPIER_API_KEY", "CROUPIER_API_KEY_FILE", "CROUPIER_BOT_TLS_KEY")

GARBAGE, LATE, CRASHED = sdk.GARBAGE, sdk.LATE, sdk.CRASHED

SeatKey = tuple[str, int]
# what a decision of the program ends in when it gives no move: the SDK's Fallback, whose
# reason the runner sends with the default move it plays instead
BadAnswer = sdk.Fallback


@dataclass(frozen=True)
class Hello:
    name: str
    mode: str


def parse_hello(line: bytes) -> Hello:
    """The program's first line; ValueError saying what is wrong with it."""
    try:
        data = orjson.loads(line)
    except orjson.JSONDecodeError:
        raise ValueError("the hello line is not JSON") from None
    if not isinstance(data, dict):
        raise ValueError("the hello line is not a JSON object")
    if data.get("hello") != PROTOCOL:
        raise ValueError(f'the hello line has no "hello": "{PROTOCOL}"')
    name = data.get("name", "")
    if not isinstance(name, str):
        raise ValueError('"name" is not a string')
    mode = data.get("mode", "per-seat")
    if mode not in MODES:
        raise ValueError(f'"mode" is not one of {", ".join(MODES)}')
    return Hello(name=name[:MAX_NAME], mode=mode)


@dataclass(frozen=True)
class Answer:
    """One answer line: the decision it names (None: not said), its move (None: garbage, and
    `problem` says why) and the line's text (cut: what the record keeps of a bad answer)."""

    id: int | None
    move: str | None
    problem: str = ""
    text: str = ""


def parse_answer(line: bytes) -> Answer:
    text = line[:TEXT_BYTES].decode("utf-8", "replace").rstrip("\r\n")
    try:
        data = orjson.loads(line)
    except orjson.JSONDecodeError:
        return Answer(None, None, "the answer is not JSON", text)
    if not isinstance(data, dict):
        return Answer(None, None, "the answer is not a JSON object", text)
    raw_id = data.get("id")
    ident = raw_id if isinstance(raw_id, int) and not isinstance(raw_id, bool) else None
    move = data.get("move")
    if not isinstance(move, str):
        return Answer(ident, None, 'the answer has no string "move"', text)
    return Answer(ident, move, "", text)


def encode(message: dict[str, Any]) -> bytes:
    return orjson.dumps(message) + b"\n"


def decide_message(
    ident: int, view: croupier_pb2.TableView, legal_moves: Sequence[str], time_left: float
) -> dict[str, Any]:
    return {
        "type": "decide",
        "id": ident,
        "table": view.table.table_id,
        "seat": view.seat,
        "game": view.table.game,
        "version": view.version,
        "time_left": round(time_left, 3) if math.isfinite(time_left) else None,
        "legal_moves": list(legal_moves),
        "view": json_format.MessageToDict(view),
    }


def seat_message(seat: sdk.SeatContext) -> dict[str, Any]:
    return {"type": "seat", "table": seat.table_id, "seat": seat.seat, "game": seat.game,
            "players": seat.players}


def child_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in PRIVATE_ENV}


def _fail(future: asyncio.Future[Any], error: BaseException) -> None:
    """Fails a future nobody may be waiting for, without asyncio's 'never retrieved' noise."""
    if not future.done():
        future.set_exception(error)
        future.exception()


@dataclass
class Program:
    """One program serving some seats, across its restarts: starts it, writes its lines and
    matches its answer lines to the decisions they were written for.

    An answer with an `id` answers that decision. One without answers the decide line it
    follows in order (the n-th answer line of a start, the n-th decide line), and only while
    that decision is the only one open and the last one sent: an answer written for a
    decision already settled (too late) is dropped, never taken for a later one."""

    command: Sequence[str]
    label: str  # "shared", or the seat's table/seat
    check_hello: Callable[[Hello], str]  # "" if the hello suits the bridge, else why not
    hello_seconds: float = HELLO_SECONDS
    env: dict[str, str] = field(default_factory=child_env)
    seats: dict[SeatKey, sdk.SeatContext] = field(default_factory=dict)
    hello: Hello | None = None
    restarts: int = 0
    _process: asyncio.subprocess.Process | None = None
    _ready: asyncio.Future[Hello] | None = None
    _pending: dict[int, asyncio.Future[Answer]] = field(default_factory=dict)
    # this start's decide lines: how many were sent, the decision of each not yet answered by
    # its number (1, 2, ...), and how many answer lines came
    _lines_sent: int = 0
    _sent: dict[int, int] = field(default_factory=dict)
    _heard: int = 0
    _task: asyncio.Task[None] | None = None
    _stderr: asyncio.Task[None] | None = None
    _closed: bool = False
    _backoff: float = RESTART_MIN
    _answered: bool = False  # this start answered a decision: the backoff starts over
    _down: bool = False  # between a failed start and the next: decisions do not wait
    _stopping: asyncio.Future[None] | None = None

    def start(self) -> None:
        """Starts the supervisor on the running loop (once)."""
        if self._task is None:
            self._ready = asyncio.get_running_loop().create_future()
            self._task = asyncio.create_task(self._supervise(), name=f"bridge {self.label}")

    async def ready(self, timeout: float) -> Hello:
        """The hello of the running start, or of the one under way: BadAnswer crashed if it
        fails or the program is down, late if it does not come within `timeout`."""
        self.start()
        assert self._ready is not None
        if self._down:
            raise BadAnswer(CRASHED, "the program is down until its restart")
        future = self._ready
        try:
            return await asyncio.wait_for(asyncio.shield(future), _finite(timeout))
        except TimeoutError:
            raise BadAnswer(LATE, "the program has not said hello yet") from None

    async def decide(
        self, ident: int, view: croupier_pb2.TableView, legal_moves: Sequence[str],
        time_left: float,
    ) -> Answer:
        """The program's answer to one decision (its move None: garbage); BadAnswer(late or
        crashed)."""
        end = time.monotonic() + time_left
        await self.ready(time_left)
        process = self._process
        assert process is not None and process.stdin is not None
        future: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()
        self._pending[ident] = future
        try:
            try:
                self._lines_sent += 1
                self._sent[self._lines_sent] = ident
                process.stdin.write(encode(decide_message(ident, view, legal_moves, time_left)))
                await asyncio.wait_for(process.stdin.drain(), _finite(end - time.monotonic()))
            except (BrokenPipeError, ConnectionResetError):
                raise BadAnswer(CRASHED, "the program closed its stdin") from None
            except TimeoutError:
                raise BadAnswer(LATE, "the program did not read its input in time") from None
            try:
                answer = await asyncio.wait_for(
                    asyncio.shield(future), _finite(end - time.monotonic())
                )
            except TimeoutError:
                raise BadAnswer(LATE, "no answer in time") from None
            self._answered = True
            return answer
        finally:
            self._pending.pop(ident, None)

    async def send(self, message: dict[str, Any]) -> None:
        """An information line (seat, end): best effort, a program that is down misses it."""
        process = self._process
        if process is None or process.stdin is None or process.returncode is not None:
            return
        if self._ready is None or not self._ready.done() or self._ready.exception():
            return
        with contextlib.suppress(BrokenPipeError, ConnectionResetError, TimeoutError):
            process.stdin.write(encode(message))
            await asyncio.wait_for(process.stdin.drain(), 5.0)

    async def stop(self) -> None:
        """Ends the program: stdin closed (its cue to exit), then SIGTERM, then SIGKILL. Once:
        a second call waits for the first."""
        if self._stopping is None:
            self._stopping = asyncio.ensure_future(self._stop())
        await asyncio.shield(self._stopping)

    async def _stop(self) -> None:
        self._closed = True
        process = self._process
        if process is not None and process.returncode is None:
            if process.stdin is not None:
                with contextlib.suppress(OSError):
                    process.stdin.close()
            for signal_it in (None, process.terminate, process.kill):
                if signal_it is not None:
                    with contextlib.suppress(ProcessLookupError):
                        signal_it()
                try:
                    await asyncio.wait_for(process.wait(), STOP_SECONDS)
                    break
                except TimeoutError:
                    continue
        if process is not None:
            log.info("program_ended", program=self.label, pid=process.pid,
                     code=process.returncode, restarts=self.restarts)
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self._stderr is not None:
            with contextlib.suppress(asyncio.CancelledError, TimeoutError):
                await asyncio.wait_for(self._stderr, 1.0)
        self._fail_pending("the bridge is stopping")
        if self._ready is not None:
            _fail(self._ready, BadAnswer(CRASHED, "the bridge is stopping"))

    async def _supervise(self) -> None:
        last_start = -math.inf
        while not self._closed:
            wait = last_start + self._backoff - time.monotonic()
            if wait > 0:
                log.info("program_restart_in", program=self.label, seconds=round(wait, 2))
                self._down = True
                try:
                    await asyncio.sleep(wait)
                finally:
                    self._down = False
            last_start = time.monotonic()
            self._answered = False
            reason = await self._run_once()
            if self._closed:
                return
            self.restarts += 1
            self._backoff = (
                RESTART_MIN if self._answered else min(self._backoff * 2, RESTART_MAX)
            )
            self._fail_pending(reason)
            assert self._ready is not None
            if self._ready.done():
                self._ready = asyncio.get_running_loop().create_future()
            else:
                # the start that failed before its hello fails those waiting for it
                old, self._ready = self._ready, asyncio.get_running_loop().create_future()
                _fail(old, BadAnswer(CRASHED, reason))

    async def _run_once(self) -> str:
        """One start of the program, until it exits or closes its stdout: why it ended."""
        try:
            process = await asyncio.create_subprocess_exec(
                *self.command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=self.env,
                limit=MAX_LINE,
            )
        except OSError as e:
            log.warning("program_not_started", program=self.label, command=self.command[0],
                        error=type(e).__name__, reason=e.strerror or "")
            return f"the program could not be started ({type(e).__name__})"
        self._process = process
        self._lines_sent, self._heard = 0, 0  # a new start counts its lines afresh
        self._sent.clear()
        assert process.stdout is not None and process.stderr is not None
        self._stderr = asyncio.create_task(self._pass_stderr(process.stderr, process.pid))
        log.info("program_started", program=self.label, pid=process.pid,
                 restarts=self.restarts)
        grace = 0.0
        try:
            why = await self._greet(process)
            if not why:
                grace = 1.0
                why = await self._read_answers(process.stdout)
        finally:
            # a program whose stdout closed is likely exiting: let it, rather than kill a pid
            # asyncio's child watcher is about to reap (signalling it would reap it first)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(process.wait()), grace)
            if process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
            code = await process.wait()
        if not self._closed:
            log.warning("program_crashed", program=self.label, pid=process.pid, code=code,
                        reason=why)
        return why

    async def _greet(self, process: asyncio.subprocess.Process) -> str:
        """Reads the hello: "" once it is good, else why the start failed."""
        assert process.stdout is not None and self._ready is not None
        try:
            line = await asyncio.wait_for(process.stdout.readline(), self.hello_seconds)
        except TimeoutError:
            return f"no hello line within {self.hello_seconds:g} s"
        except ValueError:
            return "the hello line is too long"
        if not line:
            return "the program exited before its hello line"
        try:
            hello = parse_hello(line)
        except ValueError as e:
            return str(e)
        wrong = self.check_hello(hello)
        if wrong:
            return wrong
        self.hello = hello
        if hello.mode == "shared":
            self.label = "shared"
        log.info("program_ready", program=self.label, pid=process.pid, name=hello.name,
                 mode=hello.mode)
        self._ready.set_result(hello)
        for seat in list(self.seats.values()):
            await self.send(seat_message(seat))
        return ""

    async def _read_answers(self, stdout: asyncio.StreamReader) -> str:
        while True:
            try:
                line = await stdout.readline()
            except ValueError:
                self._resolve(Answer(None, None, f"a line longer than {MAX_LINE} bytes",
                                     "(a line too long)"))
                continue
            if not line:
                return "the program closed its stdout or exited"
            if not line.strip():
                continue
            self._resolve(parse_answer(line))

    def _resolve(self, answer: Answer) -> None:
        """Settles the decision this answer line was written for, if it is still open."""
        follows = None  # the decision whose decide line this answer line follows
        if self._heard < self._lines_sent:  # a line while none is unanswered follows none
            self._heard += 1
            follows = self._sent.pop(self._heard, None)
        if answer.id is not None:
            future = self._pending.get(answer.id)
            why = "its id names no open decision (settled already, or never sent)"
        else:
            alone = list(self._pending) == [follows] and self._heard == self._lines_sent
            future = self._pending.get(follows) if alone and follows is not None else None
            why = ("no id, and the decision it follows is settled already (the answer came "
                   "too late)" if follows not in self._pending else
                   "no id, and another decision is open")
        if future is None or future.done():
            log.info("answer_dropped", program=self.label, id=answer.id,
                     follows=follows, why=why)
            return
        future.set_result(answer)

    def _fail_pending(self, reason: str) -> None:
        for future in self._pending.values():
            _fail(future, BadAnswer(CRASHED, reason))

    async def _pass_stderr(self, stderr: asyncio.StreamReader, pid: int) -> None:
        while True:
            try:
                line = await stderr.readline()
            except ValueError:
                log.info("program_stderr", program=self.label, pid=pid, line="(a line too long)")
                continue
            if not line:
                return
            text = line.decode("utf-8", "replace").rstrip("\r\n")
            if len(text) > STDERR_CHARS:
                text = text[:STDERR_CHARS] + "…"
            log.info("program_stderr", program=self.label, pid=pid, line=text)


def _finite(seconds: float) -> float | None:
    """asyncio's timeout for `seconds` (None: wait as long as it takes)."""
    return max(0.0, seconds) if math.isfinite(seconds) else None


class BridgeBot(sdk.Bot):
    """A bot whose decisions come from a program over the line protocol: one process per seat,
    or one for all seats, as the program's hello says."""

    blocking = False

    def __init__(self, command: Sequence[str], *, hello_seconds: float = HELLO_SECONDS,
                 env: dict[str, str] | None = None, sandbox: Sandbox | None = None) -> None:
        """`sandbox`: how the program is confined and limited (default: confined, with the
        default limits; SandboxError if this host cannot confine it)."""
        if not command:
            raise ValueError("the bridge needs a command to run")
        self.sandbox = Sandbox() if sandbox is None else sandbox
        self.sandbox.check()
        self.program = list(command)
        self.command = self.sandbox.command(command)
        self.hello_seconds = hello_seconds
        self.env = child_env() if env is None else env
        self.mode: str | None = None  # known from the first program's hello
        self.programs: dict[SeatKey, Program] = {}
        self._first: Program | None = None
        self._ids = itertools.count(1)
        self._tasks: set[asyncio.Task[None]] = set()
        self._live: dict[int, Program] = {}  # every program not yet ended, by id()

    # -- the SDK's hooks ------------------------------------------------------------------

    def on_seat(self, seat: sdk.SeatContext) -> None:
        self._spawn(self._attach(seat))

    def on_match_end(self, seat: sdk.SeatContext, view: croupier_pb2.TableView) -> None:
        self._spawn(self._send_end(seat, view))

    def on_leave(self, seat: sdk.SeatContext) -> None:
        self._spawn(self._detach(seat))

    async def choose(
        self, view: croupier_pb2.TableView, legal_moves: list[str], time_left: float
    ) -> str:
        key = (view.table.table_id, view.seat)
        ident = next(self._ids)
        end = time.monotonic() + time_left
        try:
            program = await self._program(self._context(view), time_left)
            answer = await program.decide(ident, view, legal_moves, end - time.monotonic())
            if answer.move is None:
                raise BadAnswer(GARBAGE, answer.problem, rejected=answer.text)
        except BadAnswer as bad:
            self._log_bad(key, ident, bad)
            raise
        # a move not among legal_moves goes to the SDK as any bot's would: matched as given,
        # else sent for the server to judge (another spelling of a legal move passes), and
        # replaced by the default with fallback `illegal` if the server refuses it
        return answer.move

    async def close(self) -> None:
        """Ends every program: the hooks' work in flight first (end lines, seats' programs
        ending), then whatever still runs."""
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=3 * STOP_SECONDS + 2)
        live = list(self._live.values())
        await asyncio.gather(*(p.stop() for p in live), return_exceptions=True)
        self.programs.clear()
        self._first = None
        for task in list(self._tasks):
            task.cancel()

    # -- programs -------------------------------------------------------------------------

    def _spawn(self, coroutine: Any) -> None:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _context(self, view: croupier_pb2.TableView) -> sdk.SeatContext:
        key = (view.table.table_id, view.seat)
        program = self.programs.get(key)
        if program is not None and key in program.seats:
            return program.seats[key]
        entrant = ""
        for info in view.table.seats:
            if info.seat == view.seat:
                entrant = info.entrant
        return sdk.SeatContext(table_id=key[0], seat=key[1], game=view.table.game,
                               entrant=entrant, players=view.table.players)

    def _new_program(self, seat: sdk.SeatContext | None) -> Program:
        label = f"{seat.table_id}/{seat.seat}" if seat is not None else "shared"
        program = Program(self.command, label, self._check_hello, self.hello_seconds,
                          dict(self.env))
        program.start()
        self._live[id(program)] = program
        return program

    def _check_hello(self, hello: Hello) -> str:
        if self.mode is None:
            self.mode = hello.mode
        elif hello.mode != self.mode:
            return f"the program said mode {hello.mode} after {self.mode}"
        return ""

    async def _program(self, seat: sdk.SeatContext, timeout: float) -> Program:
        """The program that serves this seat, started if it is the seat's first need."""
        key = (seat.table_id, seat.seat)
        program = self.programs.get(key)
        if program is None and self.mode is None:
            if self._first is None:
                # the first program: its hello says whether it is this seat's or everyone's
                self._first = program = self._new_program(seat)
            else:
                await self._first.ready(timeout)
                program = self.programs.get(key)
        if program is None:
            if self.mode == "shared":
                assert self._first is not None
                program = self._first
            else:
                program = self._new_program(seat)
        if key not in self.programs:
            self.programs[key] = program
            program.seats[key] = seat
            await program.send(seat_message(seat))
        return program

    async def _attach(self, seat: sdk.SeatContext) -> None:
        with contextlib.suppress(BadAnswer):
            await self._program(seat, math.inf)

    async def _send_end(self, seat: sdk.SeatContext, view: croupier_pb2.TableView) -> None:
        program = self.programs.get((seat.table_id, seat.seat))
        if program is not None:
            await program.send({"type": "end", "table": seat.table_id, "seat": seat.seat,
                                "result": json_format.MessageToDict(view.result)})

    async def _detach(self, seat: sdk.SeatContext) -> None:
        """The seat is done (its match ended, it was lost or given back): a per-seat program
        ends with it."""
        key = (seat.table_id, seat.seat)
        program = self.programs.pop(key, None)
        if program is None:
            return
        program.seats.pop(key, None)
        if self.mode != "shared":
            if program is self._first:
                self._first = None
            await program.stop()
            self._live.pop(id(program), None)

    def _log_bad(self, key: SeatKey, ident: int, bad: BadAnswer) -> None:
        log.warning("bad_answer", table=key[0], seat=key[1], id=ident, reason=bad.reason,
                    detail=bad.detail)


# -- the command ------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="croupier bot-bridge",
        description="Play an outside entrant's seats with a program in any language that "
        "speaks JSON lines on stdin/stdout (see docs/bots.md).",
        usage="croupier bot-bridge --entrant NAME [options] -- COMMAND [ARGS...]",
    )
    parser.add_argument("--entrant", required=True,
                        help="the entrant whose seats to take (a-z, 0-9, '_', '.', '-')")
    parser.add_argument(
        "--server", default=os.environ.get("CROUPIER_SERVER", "127.0.0.1:50051"),
        help="server address host:port (env CROUPIER_SERVER; default %(default)s)",
    )
    add_key_flags(parser, "with the role entrant:NAME; never shown to the program")
    parser.add_argument("--tls-ca", default=os.environ.get("CROUPIER_TLS_CA", ""),
                        help="connect with TLS, trusting this CA certificate (PEM)")
    parser.add_argument("--tls-cert", default=os.environ.get("CROUPIER_BOT_TLS_CERT", ""),
                        help="client certificate for mutual TLS (PEM; with --tls-key)")
    parser.add_argument("--tls-key", default=os.environ.get("CROUPIER_BOT_TLS_KEY", ""),
                        help="the client certificate's private key")
    parser.add_argument("--name", default="",
                        help="player name shown at the table (default: the entrant's)")
    parser.add_argument("--poll", type=float, default=1.0,
                        help="seconds between lobby looks for seats (default %(default)s)")
    parser.add_argument("--max-seats", type=int, default=64,
                        help="seats played at once, at most (default %(default)s)")
    parser.add_argument("--hello-seconds", type=float, default=HELLO_SECONDS,
                        help="how long a program may take to say hello (default %(default)s)")
    parser.add_argument("--log-level", default=os.environ.get("CROUPIER_LOG_LEVEL", "info"),
                        choices=("debug", "info", "warning", "error"),
                        help="the console's (stderr's) level (default %(default)s)")
    parser.add_argument("--log-file", metavar="PATH",
                        default=os.environ.get("CROUPIER_LOG_FILE", ""),
                        help="also append every event to PATH as JSON lines")
    box = parser.add_argument_group(
        "the program's sandbox", "by default the program runs confined with bubblewrap (bwrap): "
        "a read-only view of the system, its own directory and interpreter, a private /tmp, "
        "its own processes only, no network")
    box.add_argument("--no-sandbox", action="store_true",
                     help="run the program unconfined (hosts without bwrap or user "
                     "namespaces): it may read whatever this user may; the limits still apply")
    box.add_argument("--sandbox-network", action="store_true",
                     help="let the confined program use the network")
    box.add_argument("--sandbox-bind", action="append", default=[], metavar="PATH",
                     help="a further path the confined program may read (repeatable)")
    box.add_argument("--sandbox-write", action="append", default=[], metavar="DIR",
                     help="a directory the confined program may also write (repeatable): "
                     "what it keeps across its restarts")
    box.add_argument("--memory-mb", type=int, default=DEFAULT_MEMORY_MB, metavar="MB",
                     help="the program's address space, at most (0: no limit; default "
                     "%(default)s); over it, its allocations fail and it dies: a crash")
    box.add_argument("--cpu-seconds", type=int, default=0, metavar="S",
                     help="CPU time of one start of the program, at most (0: no limit, the "
                     "default); over it, the kernel kills it: a crash")
    parser.add_argument("command", nargs=argparse.REMAINDER,
                        help="after --: the program and its arguments")
    return parser


def main(argv: list[str] | None = None) -> int:
    """`croupier bot-bridge`: runs until SIGINT/SIGTERM (exit 0); 2 for bad settings (or a
    host that cannot confine the program), 3 when the server refuses the key."""
    from common import logging as bot_logging

    args = build_parser().parse_args(sys.argv[1:] if argv is None else argv)
    command = list(args.command)
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        print("croupier bot-bridge: give the program after --, e.g. "
              "croupier bot-bridge --entrant alice -- node bot.js", file=sys.stderr)
        return 2
    if args.memory_mb < 0 or args.cpu_seconds < 0:
        print("croupier bot-bridge: --memory-mb and --cpu-seconds are 0 (no limit) or more",
              file=sys.stderr)
        return 2
    sandbox = Sandbox(enabled=not args.no_sandbox, network=args.sandbox_network,
                      cpu_seconds=args.cpu_seconds, memory_mb=args.memory_mb,
                      binds=tuple(args.sandbox_bind), writable=tuple(args.sandbox_write))
    try:
        key = api_key_of(args)
        key_file = args.key_file or os.environ.get("CROUPIER_API_KEY_FILE", "")
        if key_file and sandbox.enabled and sandbox.shows(command, key_file):
            raise ValueError(f"the key file {key_file} lies where the confined program may "
                             "read it (its own directory, a --sandbox-bind or "
                             "--sandbox-write): move it")
        bot_logging.configure(args.log_level, log_file=args.log_file)
    except OSError as e:
        print(f"croupier bot-bridge: cannot open the log file {args.log_file}: {e}",
              file=sys.stderr)
        return 2
    except ValueError as e:
        print(f"croupier bot-bridge: {e}", file=sys.stderr)
        return 2
    try:
        bot = BridgeBot(command, hello_seconds=args.hello_seconds, sandbox=sandbox)
    except SandboxError as e:
        print(f"croupier bot-bridge: {e}", file=sys.stderr)
        return 2
    if not sandbox.enabled:
        log.warning("sandbox_off", why="--no-sandbox: the program runs unconfined, and may "
                    "read whatever this user may (key files, a store on this host, other "
                    "processes' command lines)")
    else:
        log.info("sandbox_on", network=sandbox.network, visible=sandbox.visible(command),
                 writable=sandbox.written(),
                 memory_mb=sandbox.memory_mb or None, cpu_seconds=sandbox.cpu_seconds or None)
    try:
        # serve, not run: run would set up logging again, without the log file
        asyncio.run(sdk.serve(bot, args.server, args.entrant, key, tls_ca=args.tls_ca,
                              tls_cert=args.tls_cert, tls_key=args.tls_key, name=args.name,
                              poll=args.poll, max_seats=args.max_seats))
    except ValueError as e:
        print(f"croupier bot-bridge: {e}", file=sys.stderr)
        return 2
    except sdk.KeyRefused as e:
        print(f"croupier bot-bridge: {e}", file=sys.stderr)
        return 3
    except KeyboardInterrupt:  # before the runner's signal handlers were in place
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
