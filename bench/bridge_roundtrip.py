"""What the bridge costs per decision: a program's round trip beside an in-process bot.

`python -m bench.bridge_roundtrip` starts `croupier serve` (memory store), plays a few Dou
Dizhu tables with random moves and keeps every decision's real TableView (GetView of the seat
to act) and legal moves. Then, with no server in the loop, each peer answers every kept
decision in turn, `--decisions` times in all after a warm-up:

- in-process: an SDK bot whose `choose` returns the first legal move: called bare (the
  floor), and asked as the SDK's runner asks it (bots.sdk.decide.Asker), on the event loop
  (`blocking = False`) and in a thread of its own (`blocking = True`, the default for bots
  that search: the peer a bridged bot is best compared with);
- Python line bot / Node.js bot: `BridgeBot.choose` over `examples/line_bot.py --first` /
  `examples/node_bot.js --first` (skipped without `node`): the view turned into protobuf JSON,
  the decide line written to the program's stdin, the program parsing it and answering, the
  answer read back and checked. That is the round trip a bridged bot adds to every decision.

Printed per peer: median and p99 in microseconds, and the median's ratio to the bare call and
to the SDK's thread hop. "encode only" is the part of the bridge's round trip spent turning
the view into the decide line.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import grpc
import structlog
from croupier.v1 import croupier_pb2 as pb
from croupier.v1 import croupier_pb2_grpc as pb_grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from bots import sdk
from bots.bridge import BridgeBot, decide_message, encode
from bots.sdk.decide import MARGIN, Asker
from common import logging as bot_logging

REPO = Path(__file__).resolve().parent.parent
Decision = tuple[pb.TableView, list[str]]
CALL = "in-process Bot call"
THREAD = "SDK ask, blocking (thread hop)"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_serving(stub: health_pb2_grpc.HealthStub, timeout: float = 30.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            reply = stub.Check(health_pb2.HealthCheckRequest(), timeout=1.0)
            if reply.status == health_pb2.HealthCheckResponse.SERVING:
                return
        except grpc.RpcError:
            time.sleep(0.1)
    raise TimeoutError("the server did not start")


def record_decisions(tables: int, seed: int) -> list[Decision]:
    """Every decision of `tables` random Dou Dizhu matches, as the acting seat saw it."""
    port = free_port()
    address = f"127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as tmp, open(Path(tmp) / "server.log", "wb") as out:
        server = subprocess.Popen(
            [sys.executable, "-m", "service.cli", "serve", "--listen", address,
             "--store", "memory", "--log-level", "warning", "--deal-pause-seconds", "0"],
            cwd=REPO, stdout=out, stderr=out,
        )
        try:
            with grpc.insecure_channel(address) as channel:
                wait_serving(health_pb2_grpc.HealthStub(channel))
                return _play(pb_grpc.CroupierStub(channel), tables, random.Random(seed))
        finally:
            server.terminate()
            server.wait(15)


def _play(stub: pb_grpc.CroupierStub, tables: int, rng: random.Random) -> list[Decision]:
    kept: list[Decision] = []
    for _ in range(tables):
        table = stub.CreateTable(pb.CreateTableRequest(game="dou_dizhu"), timeout=10)
        tokens = {}
        for seat in range(table.players):
            reply = stub.JoinTable(pb.JoinTableRequest(table_id=table.table_id, name=f"p{seat}"),
                                   timeout=10)
            tokens[reply.seat] = [("authorization", f"Bearer {reply.token}")]
        while True:
            public = stub.GetView(pb.GetViewRequest(table_id=table.table_id), timeout=10)
            if not public.to_act:
                break
            seat = public.to_act[0]
            view = stub.GetView(pb.GetViewRequest(table_id=table.table_id),
                                metadata=tokens[seat], timeout=10)
            legal = list(view.legal_moves)
            kept.append((view, legal))
            stub.SubmitMove(pb.SubmitMoveRequest(table_id=table.table_id,
                                                 move=rng.choice(legal),
                                                 expected_version=view.version),
                            metadata=tokens[seat], timeout=10)
    return kept


class FirstMove(sdk.Bot):
    """The in-process peer: as cheap as a bot gets."""

    blocking = False

    def choose(self, view: pb.TableView, legal_moves: list[str], time_left: float) -> str:
        return legal_moves[0]


async def timed(
    answer: Callable[[pb.TableView, list[str]], Awaitable[str] | str],
    decisions: list[Decision], count: int, warm: int,
) -> list[float]:
    samples = []
    for n in range(warm + count):
        view, legal = decisions[n % len(decisions)]
        start = time.perf_counter()
        move = answer(view, legal)
        if not isinstance(move, str):
            move = await move
        elapsed = time.perf_counter() - start
        if move != legal[0]:
            raise AssertionError(f"the peer answered {move!r}, not the first legal move")
        if n >= warm:
            samples.append(elapsed)
    return samples


async def measure(decisions: list[Decision], count: int, warm: int) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    inprocess = FirstMove()
    out[CALL] = await timed(
        lambda v, legal: inprocess.choose(v, legal, math.inf), decisions, count, warm)
    for blocking, name in ((False, "SDK ask, on the loop"), (True, THREAD)):
        peer = FirstMove()
        peer.blocking = blocking
        asker = Asker(peer, asyncio.Semaphore(1), MARGIN, structlog.get_logger("bench"),
                      random.Random(1))

        async def asked(view: pb.TableView, legal: list[str], asker: Asker = asker) -> str:
            return (await asker.ask(view)).move

        out[name] = await timed(asked, decisions, count, warm)

    def encode_only(view: pb.TableView, legal: list[str]) -> str:
        encode(decide_message(1, view, legal, 5.0))
        return legal[0]

    out["encode only (view to decide line)"] = await timed(encode_only, decisions, count, warm)
    peers = {"Python line bot": [sys.executable, str(REPO / "examples" / "line_bot.py")]}
    node = shutil.which("node")
    if node:
        peers["Node.js bot"] = [node, str(REPO / "examples" / "node_bot.js")]
    else:
        print("node not found: the Node.js bot is skipped", file=sys.stderr)
    for name, command in peers.items():
        bot = BridgeBot([*command, "--first"])

        def bridged(view: pb.TableView, legal: list[str], bot: BridgeBot = bot) -> Awaitable[str]:
            return bot.choose(view, legal, 30.0)

        try:
            out[f"bridge: {name}"] = await timed(bridged, decisions, count, warm)
        finally:
            await bot.close()
    return out


def report(samples: dict[str, list[float]]) -> str:
    call = statistics.median(samples[CALL])
    thread = statistics.median(samples[THREAD])
    lines = [f"{'peer':36} {'median µs':>10} {'p99 µs':>10} {'/ call':>9} {'/ thread':>9}"]
    for name, values in samples.items():
        ordered = sorted(values)
        median = statistics.median(ordered)
        p99 = ordered[min(len(ordered) - 1, math.ceil(0.99 * len(ordered)) - 1)]
        lines.append(f"{name:36} {median * 1e6:10.1f} {p99 * 1e6:10.1f} "
                     f"{median / call:8.0f}x {median / thread:8.2f}x")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--tables", type=int, default=3, help="matches recorded (default 3)")
    parser.add_argument("--decisions", type=int, default=2000,
                        help="timed decisions per peer (default %(default)s)")
    parser.add_argument("--warm", type=int, default=100, help="untimed first decisions")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    bot_logging.configure("warning")  # the programs' start and stop are info events
    decisions = record_decisions(args.tables, args.seed)
    print(f"{len(decisions)} recorded decisions of {args.tables} Dou Dizhu matches; "
          f"{args.decisions} timed per peer after {args.warm}")
    print(report(asyncio.run(measure(decisions, args.decisions, args.warm))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
