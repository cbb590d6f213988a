"""A bot worker's resident memory over a long run of bot tables.

`python -m bench.worker_memory [--minutes M] [--level medium] [--tables T] [--every S]`
starts `croupier serve` (SQLite in a temp dir) and one bot worker, `croupier bots --levels L
--workers 1 --metrics-port P`, as separate processes, keeps T Dou Dizhu tables of three bot
seats of level L in play (a new one as soon as one finishes), and every S seconds prints the
minutes elapsed, the tables finished, the worker's decisions (from its own decision-latency
metric), its mean decision time, and the resident memory (VmRSS) of the worker process and of
all its descendants. A cache that grows for the life of a process shows as RSS rising with
the decisions; a bounded one levels off.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import grpc
from croupier.v1 import croupier_pb2 as pb
from croupier.v1 import croupier_pb2_grpc as pb_grpc
from google.protobuf import struct_pb2

from bench.rpc_latency import free_port
from bench.soak import wait_serving

REPO = Path(__file__).resolve().parent.parent
HEADER = ("| minutes | tables finished | decisions | decisions/min | mean decision ms "
          "| worker RSS MB |\n|---:|---:|---:|---:|---:|---:|")


def rss_kb(pid: int) -> int:
    """VmRSS of one process; 0 once it is gone (or a zombie)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def descendants(pid: int) -> list[int]:
    """Every process below `pid`, from the parent ids in /proc/*/stat."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])  # the name may hold spaces
        children.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def tree_rss_mb(pid: int) -> float:
    return sum(rss_kb(p) for p in (pid, *descendants(pid))) / 1024


def decision_totals(metrics_port: int, level: str) -> tuple[int, float]:
    """(decisions, seconds spent choosing) of the worker's Dou Dizhu seats at `level`."""
    url = f"http://127.0.0.1:{metrics_port}/metrics"
    text = urllib.request.urlopen(url, timeout=10).read().decode()
    labels = rf'\{{(?=[^}}]*level="{re.escape(level)}")(?=[^}}]*game="dou_dizhu")[^}}]*\}}'
    count = re.search(rf"^croupier_bot_decision_seconds_count{labels} (\S+)$", text, re.M)
    total = re.search(rf"^croupier_bot_decision_seconds_sum{labels} (\S+)$", text, re.M)
    return (int(float(count.group(1))) if count else 0, float(total.group(1)) if total else 0.0)


@dataclass
class Run:
    finished: int = 0
    failed: int = 0


async def keep_table(stub: pb_grpc.CroupierStub, level: str, until: float, run: Run) -> None:
    """Creates a table of three `level` bot seats, waits for its end, and again, until `until`."""
    seats = [pb.SeatSpec(kind=pb.SEAT_KIND_BOT, bot_level=level)] * 3
    while time.monotonic() < until:
        options = struct_pb2.Struct()
        options.update({"deals": 1})
        table = await stub.CreateTable(
            pb.CreateTableRequest(game="dou_dizhu", options=options, seats=seats), timeout=10)
        while time.monotonic() < until:
            await asyncio.sleep(1.0)
            try:
                view = await stub.GetView(pb.GetViewRequest(table_id=table.table_id), timeout=10)
            except grpc.aio.AioRpcError:
                run.failed += 1
                continue
            if view.table.status == pb.TABLE_STATUS_FINISHED:
                run.finished += 1
                break


async def sample(worker: subprocess.Popen[bytes], metrics_port: int, level: str, start: float,
                 until: float, every: float, run: Run) -> list[tuple[float, int, int, float, float]]:
    rows: list[tuple[float, int, int, float, float]] = []
    print(HEADER, flush=True)
    last = (start, 0)
    while True:
        now = time.monotonic()
        decisions, thought = decision_totals(metrics_port, level)
        rss = tree_rss_mb(worker.pid)
        rate = (decisions - last[1]) / max(1e-9, (now - last[0]) / 60)
        mean_ms = 1000 * thought / decisions if decisions else 0.0
        rows.append(((now - start) / 60, run.finished, decisions, mean_ms, rss))
        print(f"| {(now - start) / 60:.1f} | {run.finished} | {decisions} | {rate:.0f} "
              f"| {mean_ms:.0f} | {rss:.1f} |", flush=True)
        last = (now, decisions)
        if worker.poll() is not None:
            raise RuntimeError(f"the bot worker exited with {worker.returncode}")
        if now >= until:
            return rows
        await asyncio.sleep(min(every, max(0.0, until - time.monotonic())))


async def measure(args: argparse.Namespace, tmp: Path) -> list[tuple[float, int, int, float, float]]:
    address, metrics_port = f"127.0.0.1:{free_port()}", free_port()
    cli = [sys.executable, "-m", "service.cli"]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    with open(tmp / "server.log", "wb") as out:
        server = subprocess.Popen(
            [*cli, "serve", "--listen", address, "--store", f"sqlite:{tmp / 'croupier.db'}",
             "--log-level", "warning"], cwd=REPO, stdout=out, stderr=out, env=env)
    worker = None
    try:
        await wait_serving(address)
        with open(tmp / "bots.log", "wb") as out:
            worker = subprocess.Popen(
                [*cli, "bots", "--server", address, "--levels", args.level, "--workers", "1",
                 "--poll", "0.2", "--metrics-port", str(metrics_port), "--log-level", "warning"],
                cwd=REPO, stdout=out, stderr=out, env=env)
        for _ in range(100):  # the metrics endpoint answers once the worker is up
            try:
                decision_totals(metrics_port, args.level)
                break
            except OSError:
                await asyncio.sleep(0.1)
        start = time.monotonic()
        until = start + 60 * args.minutes
        run = Run()
        async with grpc.aio.insecure_channel(address) as channel:
            stub = pb_grpc.CroupierStub(channel)
            keepers = [asyncio.create_task(keep_table(stub, args.level, until, run))
                       for _ in range(args.tables)]
            rows = await sample(worker, metrics_port, args.level, start, until, args.every, run)
            for task in keepers:
                task.cancel()
            await asyncio.gather(*keepers, return_exceptions=True)
        if run.failed:
            print(f"{run.failed} GetView calls failed")
        return rows
    finally:
        for proc in (worker, server):
            if proc is not None and proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(30)
                except subprocess.TimeoutExpired:
                    proc.kill()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.worker_memory",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=60.0)
    parser.add_argument("--level", default="medium")
    parser.add_argument("--tables", type=int, default=2,
                        help="tables in play at once (the worker searches one seat at a time)")
    parser.add_argument("--every", type=float, default=60.0, help="seconds between samples")
    args = parser.parse_args(argv)
    # a TERM stops the run as Ctrl-C does: the server and the worker are stopped too
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    with tempfile.TemporaryDirectory(prefix="croupier-worker-memory-") as tmp:
        print(f"bot worker memory: level {args.level}, {args.tables} Dou Dizhu tables at once, "
              f"{args.minutes:g} min, python {sys.version.split()[0]}, "
              f"load average {os.getloadavg()[0]:.1f}", flush=True)
        try:
            rows = asyncio.run(measure(args, Path(tmp)))
        except KeyboardInterrupt:
            print("stopped (the server and the worker too)")
            return 130
        print(f"load average at the end {os.getloadavg()[0]:.1f}")
    return 0 if rows and rows[-1][2] > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
