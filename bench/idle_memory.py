"""The server memory an idle table costs.

`python -m bench.idle_memory` starts `croupier serve` (SQLite in a temp dir, or `--store`),
creates `--tables` Dou Dizhu tables with every seat taken and one spectator stream open on
each (an idle table as a lobby shows it: seated, followed, nobody moving), and reports the
server's resident memory (VmRSS) before and after, per table. A second batch measured the
same way shows whether the cost is per table or a one-off warm-up.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import grpc
from croupier.v1 import croupier_pb2 as pb
from croupier.v1 import croupier_pb2_grpc as pb_grpc

from bench.rpc_latency import free_port
from bench.soak import wait_serving

REPO = Path(__file__).resolve().parent.parent


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


async def batch(stub: pb_grpc.CroupierStub, n: int) -> list[grpc.aio.UnaryStreamCall]:
    streams = []
    for _ in range(n):
        table = await stub.CreateTable(pb.CreateTableRequest(game="dou_dizhu"), timeout=10)
        for seat in range(3):
            await stub.JoinTable(pb.JoinTableRequest(table_id=table.table_id, seat=seat),
                                 timeout=10)
        call = stub.StreamTable(pb.StreamTableRequest(table_id=table.table_id, from_version=4))
        streams.append(call)
    await asyncio.sleep(1.0)  # the streams reach their wait
    return streams


async def run(tables: int, store: str) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="croupier-idle-"))
    address = f"127.0.0.1:{free_port()}"
    with open(tmp / "server.log", "wb") as log:
        server = subprocess.Popen(
            [sys.executable, "-m", "service.cli", "serve", "--listen", address, "--store",
             store or f"sqlite:{tmp / 'croupier.db'}", "--streams-per-table", "0"],
            cwd=REPO, stdout=log, stderr=log)
    try:
        await wait_serving(address)
        async with grpc.aio.insecure_channel(address) as channel:
            stub = pb_grpc.CroupierStub(channel)
            await batch(stub, 20)  # warm-up: imports, caches, first connections
            held = []
            for label in ("first", "second"):
                before = rss_kb(server.pid)
                held += await batch(stub, tables)
                after = rss_kb(server.pid)
                print(f"{label} batch of {tables} idle tables: RSS {before / 1024:.1f} -> "
                      f"{after / 1024:.1f} MB, {(after - before) / tables:.1f} KB per table "
                      "(seated, one stream open)")
            for call in held:
                call.cancel()
    finally:
        server.terminate()
        server.wait(30)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.idle_memory",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=500, help="tables per batch (default 500)")
    parser.add_argument("--store", default="", help="store URL (default: SQLite in a temp dir)")
    args = parser.parse_args(argv)
    print(f"load average {os.getloadavg()[0]:.2f}")
    asyncio.run(run(args.tables, args.store))
    return 0


if __name__ == "__main__":
    sys.exit(main())
