"""SubmitMove latency and throughput beside a bare Ping, on one real server.

`python -m bench.rpc_latency` starts `croupier serve` with a SQLite store in a temp dir, then
for each concurrency (tables played at once) measures for a fixed time:

- SubmitMove: every table is played by one client holding all its seats; per move it fetches
  the acting seat's view (GetView, not timed) and submits the first legal move (timed). A
  finished table is replaced by a new one (set-up not timed).
- Ping: as many concurrent loops of the bare RPC through the same server stack.

The ratio SubmitMove/Ping is the cost of the table logic, the engine and the durable write
over the gRPC floor. Client and server share the machine, so absolute numbers include the
client's own CPU.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import grpc
from croupier.v1 import croupier_pb2 as pb
from croupier.v1 import croupier_pb2_grpc as pb_grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

REPO = Path(__file__).resolve().parent.parent


@dataclass
class Stats:
    rpc: str
    concurrency: int
    latencies: list[float]
    seconds: float

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


async def new_table(stub: pb_grpc.CroupierStub) -> tuple[str, dict[int, list[tuple[str, str]]]]:
    table = await stub.CreateTable(pb.CreateTableRequest(game="dou_dizhu"))
    auth = {}
    for i in range(table.players):
        reply = await stub.JoinTable(pb.JoinTableRequest(table_id=table.table_id, name=f"p{i}"))
        auth[reply.seat] = [("authorization", f"Bearer {reply.token}")]
    return table.table_id, auth


async def play_loop(stub: pb_grpc.CroupierStub, until: float, out: list[float]) -> None:
    table_id, auth = await new_table(stub)
    seat = None
    while time.perf_counter() < until:
        if seat is None:
            public = await stub.GetView(pb.GetViewRequest(table_id=table_id))
            if not public.to_act:
                table_id, auth = await new_table(stub)
                continue
            seat = public.to_act[0]
        view = await stub.GetView(pb.GetViewRequest(table_id=table_id), metadata=auth[seat])
        request = pb.SubmitMoveRequest(
            table_id=table_id, move=view.legal_moves[0], expected_version=view.version
        )
        start = time.perf_counter()
        reply = await stub.SubmitMove(request, metadata=auth[seat])
        out.append(time.perf_counter() - start)
        acting = reply.view.to_act
        seat = acting[0] if acting else None
        if not acting:
            table_id, auth = await new_table(stub)


async def ping_loop(stub: pb_grpc.CroupierStub, until: float, out: list[float]) -> None:
    request = pb.PingRequest(payload=b"x" * 32)
    while time.perf_counter() < until:
        start = time.perf_counter()
        await stub.Ping(request)
        out.append(time.perf_counter() - start)


async def measure(stub: pb_grpc.CroupierStub, rpc: str, concurrency: int, seconds: float) -> Stats:
    loop_fn = play_loop if rpc == "SubmitMove" else ping_loop
    # a short warm-up at the same concurrency, not counted
    await asyncio.gather(
        *(loop_fn(stub, time.perf_counter() + 0.5, []) for _ in range(concurrency))
    )
    samples: list[list[float]] = [[] for _ in range(concurrency)]
    start = time.perf_counter()
    until = start + seconds
    await asyncio.gather(*(loop_fn(stub, until, s) for s in samples))
    elapsed = time.perf_counter() - start
    return Stats(rpc, concurrency, [x for s in samples for x in s], elapsed)


def table(results: list[Stats]) -> str:
    lines = [
        "| tables at once | RPC | calls | p50 ms | p99 ms | calls/s | p50 vs Ping | calls/s vs Ping |",
        "|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    pings = {r.concurrency: r for r in results if r.rpc == "Ping"}
    for r in results:
        base = pings[r.concurrency]
        lines.append(
            f"| {r.concurrency} | {r.rpc} | {len(r.latencies)} | {r.p50:.2f} | {r.p99:.2f} | "
            f"{r.rate:.0f} | {r.p50 / base.p50:.1f}x | {r.rate / base.rate:.2f}x |"
        )
    return "\n".join(lines)


async def run(concurrencies: list[int], seconds: float, keep_log: bool) -> str:
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
                f"sqlite:{tmp / 'croupier.db'}",
                "--log-level",
                "info",
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
            results = []
            for c in concurrencies:
                for rpc in ("Ping", "SubmitMove"):
                    results.append(await measure(stub, rpc, c, seconds))
    finally:
        server.terminate()
        server.wait(30)
    if keep_log:
        print(f"server log: {log_path}", file=sys.stderr)
    return table(results)


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
        default=5.0,
        help="measuring time per RPC and concurrency (default 5)",
    )
    parser.add_argument("--keep-log", action="store_true", help="print where the server log is")
    args = parser.parse_args(argv)
    print(
        f"SubmitMove vs Ping, {args.seconds:.0f} s each, SQLite store, one server process, "
        f"{os.cpu_count()} CPUs shared with the client\n"
    )
    print(asyncio.run(run(args.concurrency, args.seconds, args.keep_log)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
