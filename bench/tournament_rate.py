"""Tournament deals per minute with 1 and 2 bot worker processes, on one real server.

`python -m bench.tournament_rate` starts `croupier serve` (SQLite in a temp dir) and, for each
worker count, `croupier bots --workers W`, then times `croupier tournament` (a real client
process, through the API, duplicate format) over `--deals` deals with a fresh output folder.
Each worker count runs `--repeat` times, alternating (1, 2, 1, 2...) so that load from
elsewhere on a shared machine falls on both alike; the table shows each run and the median
ratio of 2 workers to the 1-worker run just before it. Deals per minute count whole deals
(every seating played); tables per minute count single tables.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bots.arena import seatings

CROUPIER = [sys.executable, "-m", "service.cli"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_serving(address: str, proc: subprocess.Popen[bytes]) -> None:
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    with grpc.insecure_channel(address) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        for _ in range(300):
            if proc.poll() is not None:
                raise RuntimeError("the server exited")
            try:
                if stub.Check(health_pb2.HealthCheckRequest(), timeout=1).status == 1:
                    return
            except grpc.RpcError:
                time.sleep(0.1)
    raise RuntimeError("the server did not start")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _trial(args: argparse.Namespace, address: str, workers: int, tmp: Path, run: int) -> float:
    """Seconds for one tournament of `args.deals` deals with `workers` bot processes."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CROUPIER_")}
    env["CROUPIER_LOG_LEVEL"] = "warning"
    bots = subprocess.Popen(
        [*CROUPIER, "bots", "--server", address, "--workers", str(workers), "--poll", "0.1",
         "--log-level", "warning"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
    )
    try:
        time.sleep(2)  # workers started and polling before the clock starts
        out = tmp / f"w{workers}-r{run}"
        start = time.perf_counter()
        subprocess.run(
            [*CROUPIER, "tournament", args.game, "--entrants", args.entrants, "--deals",
             str(args.deals), "--server", address, "--out", str(out), "--parallel",
             str(args.parallel), "--seed", f"bench-{run}", "--no-progress"],
            check=True, stdout=subprocess.DEVNULL, env=env,
        )
        return time.perf_counter() - start
    finally:
        _stop(bots)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--game", default="dou_dizhu")
    p.add_argument("--entrants", default="medium,heuristic")
    p.add_argument("--deals", type=int, default=4)
    p.add_argument("--parallel", type=int, default=6, help="tables in flight")
    p.add_argument("--repeat", type=int, default=2)
    args = p.parse_args(argv)
    from engines.registry import get_game

    players = get_game(args.game).info.min_players
    tables = args.deals * len(seatings(args.entrants.split(","), players))
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        address = f"127.0.0.1:{_free_port()}"
        server = subprocess.Popen(
            [*CROUPIER, "serve", "--listen", address, "--store", f"sqlite:{tmp / 's.db'}",
             "--log-level", "warning"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        try:
            _wait_serving(address, server)
            rows, ratios = [], []
            for run in range(args.repeat):
                one = _trial(args, address, 1, tmp, run)
                two = _trial(args, address, 2, tmp, run)
                rows += [(run, 1, one), (run, 2, two)]
                ratios.append(one / two)
        finally:
            _stop(server)
    load = os.getloadavg()[0]
    print(f"{args.game}, entrants {args.entrants}, {args.deals} deals x "
          f"{tables // args.deals} seatings = {tables} tables per run, --parallel "
          f"{args.parallel}; load average {load:.2f}, {os.cpu_count()} cores\n")
    print("| run | bot worker processes | seconds | deals/min | tables/min |")
    print("|---:|---:|---:|---:|---:|")
    for run, workers, secs in rows:
        print(f"| {run} | {workers} | {secs:.1f} | {args.deals * 60 / secs:.2f} | "
              f"{tables * 60 / secs:.1f} |")
    print(f"\nmedian speed-up of 2 worker processes over 1: {statistics.median(ratios):.2f}x")


if __name__ == "__main__":
    main()
