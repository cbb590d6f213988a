"""Helpers for the bot-worker and terminal end-to-end tests: real `croupier serve` and
`croupier bots` processes, and a test client that plays a seat through the public API.

The processes are started from the same virtualenv as the test run (next to sys.executable),
each with its own log file so a failure can show what the server and the workers said.
"""

from __future__ import annotations

import os
import random
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import grpc
from croupier.v1 import croupier_pb2 as pb
from croupier.v1 import croupier_pb2_grpc as pb_grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from tests.support import StructValue

BIN = Path(sys.executable).parent
CROUPIER = str(BIN / "croupier")
REPO = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# the pacing settings tests/conftest.py sets (full speed): children keep them
FULL_SPEED = frozenset({
    "CROUPIER_DEAL_PAUSE_SECONDS", "CROUPIER_BOT_THINK_SECONDS", "CROUPIER_BOT_FORCED_THINK_SECONDS",
})


def child_env(**extra: str) -> dict[str, str]:
    """The test's environment without CROUPIER_* settings that could leak in (but the
    full-speed pacing of tests/conftest.py), plus `extra`.
    COLUMNS and LINES are left out too: a runner's own (pytest-xdist's workers set 80) would
    win over the size of a pseudo-terminal the child is given."""
    env = {k: v for k, v in os.environ.items()
           if (not k.startswith("CROUPIER_") or k in FULL_SPEED) and k not in ("COLUMNS", "LINES")}
    env.update(extra)
    return env


def tail(path: Path, lines: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


class Proc:
    """A child process with its output in a log file; stopped by its own pid only."""

    def __init__(self, name: str, argv: list[str], log: Path,
                 env: dict[str, str] | None = None) -> None:
        self.name = name
        self.argv = argv
        self.log = log
        self._out = log.open("ab")
        self.popen = subprocess.Popen(
            argv, stdout=self._out, stderr=subprocess.STDOUT, cwd=REPO,
            env=child_env() if env is None else env,
        )

    def alive(self) -> bool:
        return self.popen.poll() is None

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30.0) -> int:
        if self.alive():
            self.popen.send_signal(sig)
            try:
                self.popen.wait(timeout)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait(10)
        self._out.close()
        return self.popen.returncode

    def describe(self) -> str:
        return f"--- {self.name} ({' '.join(self.argv[1:])}) log tail:\n{tail(self.log)}"


class Server(Proc):
    """`croupier serve` on a free local port with a SQLite store."""

    def __init__(self, db: Path, log: Path, port: int | None = None) -> None:
        self.port = port or free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.db = db
        super().__init__(
            "server",
            [CROUPIER, "serve", "--listen", self.address, "--store", f"sqlite:{db}"],
            log,
        )
        wait_serving(self.address, self)

    def restart(self) -> Server:
        """A new server on the same port and SQLite file (call after stopping this one)."""
        return Server(self.db, self.log, self.port)


class Bots(Proc):
    """`croupier bots` polling fast, so tests do not wait for seats to be claimed."""

    def __init__(
        self, address: str, log: Path, workers: int = 1, poll: float = 0.2, levels: str = ""
    ) -> None:
        argv = [CROUPIER, "bots", "--server", address, "--workers", str(workers)]
        argv += ["--poll", str(poll)] + (["--levels", levels] if levels else [])
        super().__init__("bots", argv, log)


def wait_serving(address: str, proc: Proc, timeout: float = 30.0) -> None:
    """Waits for grpc.health.v1 to answer SERVING; fails with the server's log otherwise."""
    deadline = time.monotonic() + timeout
    with grpc.insecure_channel(address) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        while time.monotonic() < deadline:
            if not proc.alive():
                raise RuntimeError(f"server exited with {proc.popen.returncode}\n{proc.describe()}")
            try:
                reply = health.Check(health_pb2.HealthCheckRequest(), timeout=1.0)
                if reply.status == health_pb2.HealthCheckResponse.SERVING:
                    return
            except grpc.RpcError:
                pass
            time.sleep(0.1)
    raise RuntimeError(f"server not SERVING after {timeout} s\n{proc.describe()}")


def stub_for(address: str) -> tuple[grpc.Channel, pb_grpc.CroupierStub]:
    channel = grpc.insecure_channel(address)
    return channel, pb_grpc.CroupierStub(channel)


def auth(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


def bot_seats(n: int, level: str = "random") -> list[pb.SeatSpec]:
    return [pb.SeatSpec(kind=pb.SEAT_KIND_BOT, bot_level=level) for _ in range(n)]


def human_seat() -> pb.SeatSpec:
    return pb.SeatSpec(kind=pb.SEAT_KIND_HUMAN)


def create_table(
    stub: pb_grpc.CroupierStub, seats: list[pb.SeatSpec], game: str = "dou_dizhu",
    **options: StructValue,
) -> str:
    from google.protobuf import struct_pb2

    opts = struct_pb2.Struct()
    opts.update(options)
    table = stub.CreateTable(
        pb.CreateTableRequest(game=game, players=len(seats), options=opts, seats=seats),
        timeout=10,
    )
    return table.table_id


@contextmanager
def server_and_bots(tmp: Path, workers: int = 1) -> Iterator[tuple[Server, Bots]]:
    """A server on a fresh SQLite file and a bot worker serving it, stopped cleanly after."""
    server = Server(tmp / "c.db", tmp / "server.log")
    bots = Bots(server.address, tmp / "bots.log", workers=workers)
    try:
        yield server, bots
    finally:
        code = bots.stop()
        server.stop()
    assert code == 0, bots.describe()


def events_to_end(
    stub: pb_grpc.CroupierStub, table_id: str, timeout: float = 60.0, from_version: int = 0
) -> list[pb.TableEvent]:
    """Every event of the table (as a spectator) up to and including END."""
    events = list(
        stub.StreamTable(
            pb.StreamTableRequest(table_id=table_id, from_version=from_version), timeout=timeout
        )
    )
    assert events, "the stream ended without any event"
    return events


def wait_until(check: Callable[[], bool], timeout: float = 30.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def _my_turn(view: pb.TableView, seat: int, known: int) -> bool:
    return seat in view.to_act and bool(view.legal_moves) and view.version >= known


def play_seat(
    stub: pb_grpc.CroupierStub,
    table_id: str,
    token: str,
    rng: random.Random,
    stop_when: Callable[[pb.TableView], bool] | None = None,
    timeout: float = 60.0,
) -> pb.TableView:
    """Plays uniformly random legal moves for the token's seat through the API, following the
    stream, until the END event (or until `stop_when(view)`); answers the last view seen."""
    md = auth(token)
    view = stub.GetView(pb.GetViewRequest(table_id=table_id), metadata=md, timeout=10)
    seat = view.seat
    known = view.version

    def act(view: pb.TableView) -> pb.TableView:
        nonlocal known
        while _my_turn(view, seat, known):
            move = rng.choice(list(view.legal_moves))
            try:
                answer = stub.SubmitMove(
                    pb.SubmitMoveRequest(table_id=table_id, move=move, expected_version=view.version),
                    metadata=md,
                    timeout=10,
                )
            except grpc.RpcError as error:
                if error.code() != grpc.StatusCode.ABORTED:
                    raise
                view = stub.GetView(pb.GetViewRequest(table_id=table_id), metadata=md, timeout=10)
                known = max(known, view.version)
                continue
            known = max(known, answer.version)
            view = answer.view
        return view

    if view.result.finished or (stop_when and stop_when(view)):
        return view
    view = act(view)
    call = stub.StreamTable(
        pb.StreamTableRequest(table_id=table_id, from_version=view.version),
        metadata=md,
        timeout=timeout,
    )
    try:
        for event in call:
            if event.version < known:
                continue
            known = event.version
            view = event.view
            if event.kind == pb.EVENT_KIND_END or (stop_when and stop_when(view)):
                return view
            view = act(view)
    finally:
        call.cancel()
    return view
