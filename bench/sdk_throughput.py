"""Decisions per second one SDK runner process handles: a trivial bot against the built-in
random level, both through the same runner (bots.sdk.runner).

`python -m bench.sdk_throughput` starts `croupier serve` with an in-memory store (a separate
process, a new one per run), then per variant creates `--tables` all-bot tables of a fast game (Dou Dizhu with
1,000 deals, so that no table ends while the clock runs) whose seats this process's runner
takes, and times `--decisions` decisions after `--warmup` ones:

- trivial: an `sdk.Bot` answering a random legal move on the event loop (blocking=False);
- level random: `bots.worker.LevelBot` of the random level (what `croupier bots` plays),
  also on the loop: the policy is not CPU-bound.

Both variants decide alike (a random legal move); what differs is the bot's wrapper, so the
ratio shows what the SDK's bot interface costs over the worker's own level bot (near 1: the
runner's loop, the RPCs and the server dominate). Per variant it prints decisions/s of wall
clock, this process's CPU per decision (the runner: streams, views, submits, logging off) and
the server's CPU per decision, medians over `--rounds` runs of each (which goes first alternates), and
the trivial/level ratios. Client and server share the machine.
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

from bench.rpc_latency import free_port, process_cpu, wait_serving
from bots import sdk
from bots.policy import get_policy
from bots.sdk.runner import Runner, RunnerSettings
from bots.worker import LevelBot

REPO = Path(__file__).resolve().parent.parent
LEVEL = "random"


class Count:
    """Decisions made so far, by every bot of a variant."""

    n = 0


class Trivial(sdk.Bot):
    blocking = False

    def choose(self, view: pb.TableView, legal_moves: list[str], time_left: float) -> str:
        Count.n += 1
        return random.choice(legal_moves)


class CountedLevel(LevelBot):
    def choose(self, view: pb.TableView, legal_moves: list[str], time_left: float) -> str:
        Count.n += 1
        return super().choose(view, legal_moves, time_left)


def counted_level(seat: sdk.SeatContext) -> sdk.Bot:
    return CountedLevel(get_policy(seat.entrant))


@dataclass
class Run:
    variant: str
    rate: float  # decisions per second of wall clock
    client_ms: float  # this process's CPU per decision
    server_ms: float | None  # the server's CPU per decision


async def measure(address: str, variant: str, bot: sdk.BotSource, tables: int, decisions: int,
                  warmup: int, server_cpu: Callable[[], float | None]) -> Run:
    options = struct_pb2.Struct()
    options.update({"deals": 1000})
    seats = [pb.SeatSpec(kind=pb.SEAT_KIND_BOT, bot_level=LEVEL)] * 3
    async with grpc.aio.insecure_channel(address) as channel:
        stub = pb_grpc.CroupierStub(channel)
        for _ in range(tables):
            await stub.CreateTable(
                pb.CreateTableRequest(game="dou_dizhu", players=3, seats=seats, options=options),
                timeout=10)
    Count.n = 0
    stop = asyncio.Event()
    runner = Runner(bot, RunnerSettings(server=address, entrant=LEVEL, poll=0.05))
    task = asyncio.create_task(runner.run(stop=stop, signals=False))
    while Count.n < warmup:
        await asyncio.sleep(0.01)
    start, start_n = time.perf_counter(), Count.n
    cpu0, server0 = time.process_time(), server_cpu()
    while Count.n < start_n + decisions:
        await asyncio.sleep(0.01)
    seconds, made = time.perf_counter() - start, Count.n - start_n
    cpu, server = time.process_time() - cpu0, server_cpu()
    stop.set()
    await task
    server_ms = None if server is None or server0 is None else (server - server0) / made * 1e3
    return Run(variant, made / seconds, cpu / made * 1e3, server_ms)


def table(runs: list[Run]) -> str:
    rows = ["| variant | decisions/s | runner CPU ms/decision | server CPU ms/decision |",
            "|---|---:|---:|---:|"]
    medians: dict[str, tuple[float, float, float | None]] = {}
    for variant in dict.fromkeys(r.variant for r in runs):
        mine = [r for r in runs if r.variant == variant]
        servers = [r.server_ms for r in mine if r.server_ms is not None]
        medians[variant] = (statistics.median(r.rate for r in mine),
                            statistics.median(r.client_ms for r in mine),
                            statistics.median(servers) if servers else None)
        rate, client, server = medians[variant]
        rows.append(f"| {variant} | {rate:.0f} | {client:.3f} | "
                    f"{'-' if server is None else f'{server:.3f}'} |")
    (t_rate, t_client, _), (l_rate, l_client, _) = medians["trivial"], medians["level random"]
    rows.append("")
    rows.append(f"trivial / level random: decisions/s x{t_rate / l_rate:.2f}, "
                f"runner CPU per decision x{t_client / l_client:.2f}")
    return "\n".join(rows)


async def with_server(run: Callable[[str, Callable[[], float | None]], Awaitable[Run]]) -> Run:
    """`run(address, server_cpu)` against a server of its own (in memory): no run meets the
    tables an earlier one gave back."""
    tmp = Path(tempfile.mkdtemp(prefix="croupier-bench-"))
    address = f"127.0.0.1:{free_port()}"
    with open(tmp / "server.log", "wb") as log:
        server = subprocess.Popen(
            [sys.executable, "-m", "service.cli", "serve", "--listen", address, "--store",
             "memory", "--log-level", "warning", "--deal-pause-seconds", "0"],
            cwd=REPO, stdout=log, stderr=log, env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
    try:
        async with grpc.aio.insecure_channel(address) as channel:
            await wait_serving(channel)
        return await run(address, process_cpu(server.pid))
    finally:
        server.terminate()
        server.wait(30)


async def main_async(args: argparse.Namespace) -> str:
    variants: list[tuple[str, sdk.BotSource]] = [("trivial", Trivial),
                                                 ("level random", counted_level)]
    runs: list[Run] = []
    for n in range(args.rounds):
        for name, bot in variants if n % 2 == 0 else variants[::-1]:  # neither always first
            runs.append(await with_server(
                lambda address, cpu, name=name, bot=bot: measure(  # type: ignore[misc]
                    address, name, bot, args.tables, args.decisions, args.warmup, cpu)))
    return table(runs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--tables", type=int, default=8, help="all-bot tables at once")
    parser.add_argument("--decisions", type=int, default=3000, help="timed per run")
    parser.add_argument("--warmup", type=int, default=300, help="untimed first decisions")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each variant")
    args = parser.parse_args(argv)
    from common import logging as bot_logging

    bot_logging.configure("warning")  # per-decision events are not what is measured
    print(f"{args.tables} Dou Dizhu tables, {args.decisions} decisions per run, "
          f"{args.rounds} rounds")
    print(asyncio.run(main_async(args)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
