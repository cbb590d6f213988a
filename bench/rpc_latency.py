"""SubmitMove latency and throughput beside a bare Ping, on one real server.

`python -m bench.rpc_latency` starts `croupier serve` with a SQLite store in a temp dir (a
separate process: this one is only the load client), then for each concurrency (tables played
at once) measures for a fixed time:

- Ping: as many concurrent loops of the bare RPC through the same server stack.
- SubmitMove: every loop replays a recorded Dou Dizhu deal on a table of its own, one
  SubmitMove after the other, so only SubmitMove is on the wire, as only Ping is in the Ping
  loops. The deal is recorded once at start-up on a table whose options fix the deck, the
  dealer and the face-up card (one deal; an all-pass bidding makes the first bidder landlord
  instead of redealing), so nothing depends on the table's secret seed and every replay is
  accepted. Each replay table is a new table: the server does all the work of a real move.
  The tables a loop goes through are created and joined before the clock starts (enough for
  the rate of a short trial run), so that only moves are measured.
- SubmitMove after GetView: how a client that is not following the table's stream plays:
  per move it fetches the acting seat's view (GetView) and submits the first legal move. Both
  RPCs are timed and shown on their own rows; calls/s here are moves per second.

calls/s counts calls per second of wall clock. "server CPU" is the server process's CPU time
(all its threads, from /proc where there is one) per call while the clock ran, which other load
on the machine disturbs less than times do; on the two played rows it is per move (GetView and
SubmitMove together). Each configuration runs `--repeat` times, the
three measurements back to back, and the table shows medians over the runs; "vs Ping" is the
median of each run's ratio to the Ping measured just before it, so that load from elsewhere on
a shared machine hits both sides alike. SubmitMove/Ping is the cost of the table logic, the
engine and the durable write over the gRPC floor. Client and server share the machine, so
absolute numbers include the client's own CPU.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import grpc
from croupier.v1 import croupier_pb2 as pb
from croupier.v1 import croupier_pb2_grpc as pb_grpc
from google.protobuf import struct_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc

REPO = Path(__file__).resolve().parent.parent

Auth = dict[int, list[tuple[str, str]]]  # seat -> metadata carrying its token
Samples = dict[str, list[float]]  # row name -> latencies
Script = list[tuple[int, str]]  # (seat, move) of a recorded deal

PING = "Ping"
SUBMIT = "SubmitMove"
PLAYED = "SubmitMove after GetView"
GETVIEW = "GetView before each move"


def fixed_deal_options() -> struct_pb2.Struct:
    """Dou Dizhu options under which a deal depends only on the moves, not on the seed."""
    cards = [r + s for r in "3456789TJQKA2" for s in "shdc"] + ["B", "R"]
    random.Random(20240601).shuffle(cards)
    options = struct_pb2.Struct()
    options.update(
        {"deals": 1, "max_redeals": 1, "dealer": 0, "face_up": 0, "deck": " ".join(cards)}
    )
    return options


@dataclass
class Stats:
    """One row's calls in one measurement."""

    rpc: str
    concurrency: int
    latencies: list[float]
    seconds: float
    server_cpu: float | None = None  # seconds of server CPU while measured, None: unknown

    @property
    def cpu_per_call(self) -> float | None:
        """Server CPU microseconds per call of this row (None: unknown)."""
        if self.server_cpu is None or not self.latencies:
            return None
        return self.server_cpu / len(self.latencies) * 1e6

    @property
    def p50(self) -> float:
        return statistics.median(self.latencies) * 1000

    @property
    def p99(self) -> float:
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000

    @property
    def rate(self) -> float:
        return len(self.latencies) / self.seconds


def process_cpu(pid: int) -> Callable[[], float | None]:
    """A reader of the CPU seconds (user and system, all threads) process `pid` has used;
    it reads None where /proc is not there."""
    path = Path(f"/proc/{pid}/stat")
    ticks = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100

    def read() -> float | None:
        try:
            fields = path.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            return None
        return (int(fields[11]) + int(fields[12])) / ticks

    return read


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def wait_serving(channel: grpc.aio.Channel, timeout: float = 30.0) -> None:
    stub = health_pb2_grpc.HealthStub(channel)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            reply = await stub.Check(health_pb2.HealthCheckRequest(), timeout=1)
            if reply.status == health_pb2.HealthCheckResponse.SERVING:
                return
        except grpc.aio.AioRpcError:
            pass
        await asyncio.sleep(0.1)
    raise TimeoutError("server did not become ready")


async def new_table(
    stub: pb_grpc.CroupierStub, options: struct_pb2.Struct | None = None
) -> tuple[str, Auth, int]:
    """A Dou Dizhu table with every seat joined: its id, the seats' tokens, its version."""
    table = await stub.CreateTable(pb.CreateTableRequest(game="dou_dizhu", options=options))
    auth = {}
    version = table.version
    for i in range(table.players):
        reply = await stub.JoinTable(pb.JoinTableRequest(table_id=table.table_id, name=f"p{i}"))
        auth[reply.seat] = [("authorization", f"Bearer {reply.token}")]
        version = reply.table.version
    return table.table_id, auth, version


async def record_deal(stub: pb_grpc.CroupierStub) -> Script:
    """Plays one deal under the fixed options (first legal move each time) and returns it."""
    table_id, auth, _ = await new_table(stub, fixed_deal_options())
    script: Script = []
    acting = list((await stub.GetView(pb.GetViewRequest(table_id=table_id))).to_act)
    while acting:
        seat = acting[0]
        view = await stub.GetView(pb.GetViewRequest(table_id=table_id), metadata=auth[seat])
        move = view.legal_moves[0]
        reply = await stub.SubmitMove(
            pb.SubmitMoveRequest(table_id=table_id, move=move, expected_version=view.version),
            metadata=auth[seat],
        )
        script.append((seat, move))
        acting = list(reply.view.to_act)
    return script


Table = tuple[str, Auth, int]


async def replay_loop(
    stub: pb_grpc.CroupierStub, script: Script, until: float, out: Samples, ready: list[Table]
) -> None:
    """Replays `script` on table after table, taken from `ready` (made before the clock
    started) while it lasts."""
    options = fixed_deal_options()

    async def next_table() -> Table:
        return ready.pop() if ready else await new_table(stub, options)

    table_id, auth, version = await next_table()
    step = 0
    while time.perf_counter() < until:
        if step == len(script):
            table_id, auth, version = await next_table()
            step = 0
        seat, move = script[step]
        request = pb.SubmitMoveRequest(table_id=table_id, move=move, expected_version=version)
        start = time.perf_counter()
        reply = await stub.SubmitMove(request, metadata=auth[seat])
        out[SUBMIT].append(time.perf_counter() - start)
        version = reply.version
        step += 1


async def replay_tables(
    stub: pb_grpc.CroupierStub, script: Script, concurrency: int, seconds: float
) -> list[list[Table]]:
    """Tables for each replay loop, enough for `seconds` at the rate of a short trial, so that
    creating and joining them is not measured with the moves."""
    trial: Samples = {SUBMIT: []}
    await asyncio.gather(
        *(
            replay_loop(stub, script, time.perf_counter() + 0.5, trial, [])
            for _ in range(concurrency)
        )
    )
    moves = len(trial[SUBMIT]) / 0.5 / concurrency * seconds * 1.5
    count = int(moves / len(script)) + 1
    options = fixed_deal_options()
    sem = asyncio.Semaphore(32)

    async def make() -> Table:
        async with sem:
            return await new_table(stub, options)

    made = await asyncio.gather(*(make() for _ in range(count * concurrency)))
    return [list(made[i * count : (i + 1) * count]) for i in range(concurrency)]


async def play_loop(stub: pb_grpc.CroupierStub, until: float, out: Samples) -> None:
    table_id, auth, _ = await new_table(stub)
    seat = None
    while time.perf_counter() < until:
        if seat is None:
            public = await stub.GetView(pb.GetViewRequest(table_id=table_id))
            if not public.to_act:
                table_id, auth, _ = await new_table(stub)
                continue
            seat = public.to_act[0]
        start = time.perf_counter()
        view = await stub.GetView(pb.GetViewRequest(table_id=table_id), metadata=auth[seat])
        out[GETVIEW].append(time.perf_counter() - start)
        request = pb.SubmitMoveRequest(
            table_id=table_id, move=view.legal_moves[0], expected_version=view.version
        )
        start = time.perf_counter()
        reply = await stub.SubmitMove(request, metadata=auth[seat])
        out[PLAYED].append(time.perf_counter() - start)
        acting = reply.view.to_act
        seat = acting[0] if acting else None
        if not acting:
            table_id, auth, _ = await new_table(stub)


async def ping_loop(stub: pb_grpc.CroupierStub, until: float, out: Samples) -> None:
    request = pb.PingRequest(payload=b"x" * 32)
    while time.perf_counter() < until:
        start = time.perf_counter()
        await stub.Ping(request)
        out[PING].append(time.perf_counter() - start)


Loop = Callable[[pb_grpc.CroupierStub, float, Samples], Awaitable[None]]


async def timed(
    stub: pb_grpc.CroupierStub,
    loops: list[Loop],
    rows: list[str],
    seconds: float,
    cpu: Callable[[], float | None],
) -> list[Stats]:
    """Runs the loops together for `seconds`; one Stats per row."""
    per_loop: list[Samples] = [{name: [] for name in rows} for _ in loops]
    cpu_before = cpu()
    start = time.perf_counter()
    until = start + seconds
    await asyncio.gather(*(fn(stub, until, s) for fn, s in zip(loops, per_loop, strict=True)))
    elapsed = time.perf_counter() - start
    cpu_after = cpu()
    used = None if cpu_before is None or cpu_after is None else cpu_after - cpu_before
    return [
        Stats(name, len(loops), [x for s in per_loop for x in s[name]], elapsed, used)
        for name in rows
    ]


async def warm_up(stub: pb_grpc.CroupierStub, loop_fn: Loop, rows: list[str], n: int) -> None:
    """Half a second of the same loops, not counted."""
    until = time.perf_counter() + 0.5
    await asyncio.gather(*(loop_fn(stub, until, {r: [] for r in rows}) for _ in range(n)))


async def measure_ping(
    stub: pb_grpc.CroupierStub, concurrency: int, seconds: float, cpu: Callable[[], float | None]
) -> list[Stats]:
    await warm_up(stub, ping_loop, [PING], concurrency)
    return await timed(stub, [ping_loop] * concurrency, [PING], seconds, cpu)


async def measure_replay(
    stub: pb_grpc.CroupierStub,
    script: Script,
    concurrency: int,
    seconds: float,
    cpu: Callable[[], float | None],
) -> list[Stats]:
    pools = await replay_tables(stub, script, concurrency, seconds)  # warms up too

    def loop(ready: list[Table]) -> Loop:
        async def run(stub: pb_grpc.CroupierStub, until: float, out: Samples) -> None:
            await replay_loop(stub, script, until, out, ready)

        return run

    return await timed(stub, [loop(ready) for ready in pools], [SUBMIT], seconds, cpu)


async def measure_played(
    stub: pb_grpc.CroupierStub, concurrency: int, seconds: float, cpu: Callable[[], float | None]
) -> list[Stats]:
    await warm_up(stub, play_loop, [PLAYED, GETVIEW], concurrency)
    return await timed(stub, [play_loop] * concurrency, [PLAYED, GETVIEW], seconds, cpu)


def table(runs: list[list[Stats]]) -> str:
    """Medians over runs; each run holds every row measured in it, Ping among them."""
    lines = [
        "| tables at once | RPC | calls | p50 ms | p99 ms | calls/s | p50 vs Ping "
        "| calls/s vs Ping | server CPU µs/call | CPU vs Ping |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    rows: dict[tuple[int, str], list[tuple[Stats, Stats]]] = {}
    for run in runs:
        ping = next(r for r in run if r.rpc == PING)
        for r in run:
            rows.setdefault((r.concurrency, r.rpc), []).append((r, ping))
    med = statistics.median
    for (concurrency, rpc), pairs in rows.items():
        cpus = [(r.cpu_per_call, p.cpu_per_call) for r, p in pairs]
        known = [(c, b) for c, b in cpus if c is not None and b]
        cpu_text = (
            f"{med(c for c, _ in known):.0f} | {med(c / b for c, b in known):.1f}x"
            if known
            else "- | -"
        )
        lines.append(
            f"| {concurrency} | {rpc} | {med(len(r.latencies) for r, _ in pairs):.0f} "
            f"| {med(r.p50 for r, _ in pairs):.2f} | {med(r.p99 for r, _ in pairs):.2f} "
            f"| {med(r.rate for r, _ in pairs):.0f} "
            f"| {med(r.p50 / p.p50 for r, p in pairs):.1f}x "
            f"| {med(r.rate / p.rate for r, p in pairs):.2f}x | {cpu_text} |"
        )
    return "\n".join(lines)


async def run(
    concurrencies: list[int], seconds: float, repeat: int, keep_log: bool, store: str = ""
) -> str:
    tmp = Path(tempfile.mkdtemp(prefix="croupier-bench-"))
    port = free_port()
    address = f"127.0.0.1:{port}"
    log_path = tmp / "server.log"
    with open(log_path, "wb") as log:
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "service.cli",
                "serve",
                "--listen",
                address,
                "--store",
                store or f"sqlite:{tmp / 'croupier.db'}",
                "--log-level",
                "info",
                "--deal-pause-seconds",  # full speed: no pause between deals
                "0",
            ],
            cwd=REPO,
            stdout=log,
            stderr=log,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
    try:
        async with grpc.aio.insecure_channel(address) as channel:
            await wait_serving(channel)
            stub = pb_grpc.CroupierStub(channel)
            script = await record_deal(stub)
            cpu = process_cpu(server.pid)
            runs: list[list[Stats]] = []
            for _ in range(repeat):
                for c in concurrencies:
                    runs.append(
                        await measure_ping(stub, c, seconds, cpu)
                        + await measure_replay(stub, script, c, seconds, cpu)
                        + await measure_played(stub, c, seconds, cpu)
                    )
    finally:
        server.terminate()
        server.wait(30)
    if keep_log:
        print(f"server log: {log_path}", file=sys.stderr)
    return f"(the replayed deal has {len(script)} moves)\n\n" + table(runs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.rpc_latency", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "--concurrency",
        type=int,
        nargs="+",
        default=[1, 32],
        help="tables (and Ping loops) at once (default: 1 32)",
    )
    parser.add_argument(
        "--seconds",
        type=float,
        default=10.0,
        help="measuring time per measurement, concurrency and run (default 10)",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=3,
        help="runs of every configuration; the table shows medians (default 3)",
    )
    parser.add_argument("--keep-log", action="store_true", help="print where the server log is")
    parser.add_argument(
        "--store",
        default="",
        help="the server's store URL, e.g. redis://127.0.0.1:6379/0?prefix=bench: (its keys "
        "are left behind); default: SQLite in a temp dir",
    )
    args = parser.parse_args(argv)
    kind = args.store.split(":", 1)[0] if args.store else "sqlite"
    print(
        f"SubmitMove vs Ping, {args.seconds:.0f} s each, medians of {args.repeat} runs, {kind} "
        f"store, one server process, {os.cpu_count()} CPUs shared with this client process; "
        f"load average {os.getloadavg()[0]:.2f} before"
    )
    report = asyncio.run(
        run(args.concurrency, args.seconds, args.repeat, args.keep_log, args.store)
    )
    print(report)
    print(f"\nload average {os.getloadavg()[0]:.2f} after")
    return 0


if __name__ == "__main__":
    sys.exit(main())
