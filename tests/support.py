"""Helpers for tests that talk to a real server process over real gRPC.

`ServerProcess` runs `croupier serve` on a free loopback port with its own SQLite file and
waits for the health service to answer SERVING; `Player` is a small synchronous client that
holds seat tokens. Tests may also read the server's SQLite file directly (read-only, WAL allows
it while the server writes) to compare what clients see with what the engine says.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import random
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterator, Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ParamSpec, Protocol, TypeAlias, TypeVar

import grpc
from croupier.v1 import croupier_pb2 as pb
from croupier.v1 import croupier_pb2_grpc as pb_grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

REPO = Path(__file__).resolve().parent.parent
CROUPIER = [sys.executable, "-m", "service.cli"]

# a value a google.protobuf Struct takes, e.g. a table option (types-protobuf's own alias for it,
# _StructValueArg, is private)
StructValue: TypeAlias = (
    "str | float | bool | None | Mapping[str, StructValue] | Sequence[StructValue]"
)


def free_port() -> int:
    """A loopback port free right now (the OS picks it; tiny race, fine for tests)."""
    with closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_serving(address: str, timeout: float = 20.0, proc: subprocess.Popen | None = None) -> None:
    deadline = time.monotonic() + timeout
    with grpc.insecure_channel(address) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        while time.monotonic() < deadline:
            if proc is not None and proc.poll() is not None:
                raise RuntimeError(f"server exited with code {proc.returncode} before serving")
            try:
                reply = stub.Check(health_pb2.HealthCheckRequest(), timeout=0.5)
                if reply.status == health_pb2.HealthCheckResponse.SERVING:
                    return
            except grpc.RpcError:
                pass
            time.sleep(0.05)
    raise TimeoutError(f"server at {address} not SERVING after {timeout} s")


@dataclass
class ServerProcess:
    """`croupier serve` as a child process on a free port and a given SQLite file (or any
    store URL given as `store`; `db` then only names the log file)."""

    db: Path
    store: str = ""
    port: int = field(default_factory=free_port)
    extra: tuple[str, ...] = ("--fill-interval", "0.1")
    log: Path | None = None
    proc: subprocess.Popen[bytes] | None = None
    web_port: int = 0  # > 0: also serve Connect / gRPC-Web and the web client there

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def web_url(self) -> str:
        return f"http://127.0.0.1:{self.web_port}"

    def start(self) -> ServerProcess:
        log_path = self.log_path
        web = ("--web-listen", f"127.0.0.1:{self.web_port}") if self.web_port else ()
        with open(log_path, "ab") as out:
            self.proc = subprocess.Popen(
                [*CROUPIER, "serve", "--listen", self.address, "--store", self.store or f"sqlite:{self.db}",
                 "--log-level", "info", *web, *self.extra],
                cwd=REPO,
                stdout=out,
                stderr=out,
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
            )
        wait_serving(self.address, proc=self.proc)
        return self

    @property
    def log_path(self) -> Path:
        return self.log or self.db.with_suffix(".log")

    def log_text(self) -> str:
        """Everything the server process wrote (stdout and stderr), so far."""
        return self.log_path.read_text()

    def log_lines(self) -> list[dict[str, Any]]:
        """The server's JSON log lines, so far (other lines, e.g. a traceback, skipped)."""
        out = []
        for line in self.log_text().splitlines():
            with contextlib.suppress(ValueError):
                entry = json.loads(line)
                if isinstance(entry, dict):
                    out.append(entry)
        return out

    def kill(self) -> None:
        """SIGKILL: no shutdown code runs, as in a crash."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> int:
        """SIGTERM and wait: the graceful path."""
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        return self.proc.returncode


class EventStream(Iterator[pb.TableEvent], Protocol):
    """What StreamTable returns: grpc's call object, an iterator of events that can be cancelled
    (grpc has no type hints, so the stub's reply is untyped)."""

    def cancel(self) -> bool: ...


def bearer(token: str) -> list[tuple[str, str]]:
    return [("authorization", f"Bearer {token}")]


class Client:
    """A stub plus the tokens of the seats this client holds."""

    def __init__(self, address: str) -> None:
        self.channel = grpc.insecure_channel(address)
        self.stub = pb_grpc.CroupierStub(self.channel)
        self.tokens: dict[int, str] = {}

    def close(self) -> None:
        self.channel.close()

    def create(self, game: str = "dou_dizhu", **kw: Any) -> pb.Table:
        return self.stub.CreateTable(pb.CreateTableRequest(game=game, **kw), timeout=10)

    def join(self, table_id: str, name: str = "", seat: int | None = None, bot: bool = False,
             token: str = "") -> int:
        req = pb.JoinTableRequest(table_id=table_id, name=name, bot=bot, token=token)
        if seat is not None:
            req.seat = seat
        reply = self.stub.JoinTable(req, timeout=10)
        self.tokens[reply.seat] = reply.token
        return reply.seat

    def seated_table(self, **kw: Any) -> str:
        """A new Dou Dizhu table with every seat held by this client."""
        table = self.create(**kw)
        for i in range(table.players):
            self.join(table.table_id, name=f"p{i}")
        return table.table_id

    def view(self, table_id: str, seat: int | None = None) -> pb.TableView:
        md = bearer(self.tokens[seat]) if seat is not None else None
        return self.stub.GetView(pb.GetViewRequest(table_id=table_id), metadata=md, timeout=10)

    def move(self, table_id: str, seat: int, move: str, expected: int = 0) -> pb.SubmitMoveResponse:
        return self.stub.SubmitMove(
            pb.SubmitMoveRequest(table_id=table_id, move=move, expected_version=expected),
            metadata=bearer(self.tokens[seat]),
            timeout=10,
        )

    def step(self, table_id: str, rng: random.Random | None = None) -> pb.SubmitMoveResponse | None:
        """One move by the seat to act (a uniformly chosen legal move); None once over."""
        public = self.view(table_id)
        if not public.to_act:
            return None
        seat = public.to_act[0]
        mine = self.view(table_id, seat)
        choice = rng.choice(mine.legal_moves) if rng else mine.legal_moves[0]
        return self.move(table_id, seat, choice, mine.version)

    def play_to_end(self, table_id: str, rng: random.Random, limit: int = 5000) -> int:
        for n in range(limit):
            if self.step(table_id, rng) is None:
                return n
        raise AssertionError(f"match not over after {limit} moves")

    def stream(self, table_id: str, from_version: int = 0, seat: int | None = None,
               timeout: float = 30) -> EventStream:
        md = bearer(self.tokens[seat]) if seat is not None else None
        return self.stub.StreamTable(
            pb.StreamTableRequest(table_id=table_id, from_version=from_version),
            metadata=md, timeout=timeout,
        )


def rpc_code(fn, *args: object, **kw: object) -> tuple[grpc.StatusCode, str]:
    """Calls fn expecting an RPC error; returns its code and details."""
    try:
        fn(*args, **kw)
    except grpc.RpcError as e:
        return e.code(), e.details()
    raise AssertionError("expected an RPC error, the call succeeded")


def stored_table(db: Path, table_id: str) -> tuple[int, bytes]:
    """(version, state bytes) of a table, read straight from the server's SQLite file."""
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        row = conn.execute("SELECT version, state FROM tables WHERE table_id = ?",
                           (table_id,)).fetchone()
    assert row is not None, f"table {table_id} not in {db}"
    return row[0], bytes(row[1])


def stored_event_states(db: Path, table_id: str) -> dict[int, bytes]:
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        rows = conn.execute("SELECT version, state FROM events WHERE table_id = ?",
                            (table_id,)).fetchall()
    return {v: bytes(s) for v, s in rows}


def log_lines(text: str) -> list[dict]:
    """The server's JSON log lines (other lines, e.g. a traceback, skipped)."""
    out = []
    for line in text.splitlines():
        with contextlib.suppress(ValueError):
            out.append(json.loads(line))
    return out


T = TypeVar("T")
P = ParamSpec("P")


class Clock:
    """A clock the test sets by hand (`now`), for the server's tables and timers."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def run_async(test: Callable[P, Coroutine[Any, Any, None]]) -> Callable[P, None]:
    """A test written as a coroutine, run in a fresh event loop (asyncio.run) with its
    fixtures: `@run_async async def test_x(tmp_path): ...` instead of a nested `go()`."""

    @functools.wraps(test)
    def sync(*args: P.args, **kwargs: P.kwargs) -> None:
        asyncio.run(test(*args, **kwargs))

    return sync


def run(coro: Awaitable[T]) -> T:
    """Awaits `coro` in a fresh event loop: a synchronous test's way into async code."""

    async def main() -> T:
        return await coro

    return asyncio.run(main())
