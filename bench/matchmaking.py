"""Matchmaking figures: how many tickets one replica groups per second, and the time to match
(p50 / p99) when 100 or 1,000 players call FindMatch at once, on SQLite (one server) and on
Redis (two replicas sharing a key prefix).

    python -m bench.matchmaking grouping --store sqlite --tickets 1000
    python -m bench.matchmaking grouping --store redis --tickets 1000
    python -m bench.matchmaking match --store sqlite --players 100 1000
    python -m bench.matchmaking match --store redis --players 100 1000

`grouping` runs one matcher in this process on a fresh store holding N waiting quick tickets
(4-player tables) and times its rounds until every ticket has a table: table creation and
the atomic claims included. `match` starts real servers, makes N guests, has them all call
FindMatch at once (split over the replicas) and polls GetTicket until each is matched; the
time to match is the ticket's own waited_seconds (from its opening to its table).
Redis: CROUPIER_BENCH_REDIS (default redis://127.0.0.1:6379/0), under a fresh key prefix
that is deleted afterwards.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import grpc
import redis
from croupier.v1 import croupier_pb2 as pb
from croupier.v1 import croupier_pb2_grpc as pb_grpc

from bench.rpc_latency import free_port, wait_serving
from common.logging import configure
from service.matchmaking import Matchmaker, MatchSettings
from service.store import Store, open_store
from service.tables import Tables
from service.tickets import Mode, Ticket, TicketStatus, canonical_json, open_tickets

REPO = Path(__file__).resolve().parent.parent
REDIS = os.environ.get("CROUPIER_BENCH_REDIS", "redis://127.0.0.1:6379/0")
GAME, SEATS = "doppelkopf", 4


def _store_url(kind: str, tmp: Path, prefix: str) -> str:
    return f"sqlite:{tmp / 'croupier.db'}" if kind == "sqlite" else f"{REDIS}?prefix={prefix}"


def _cleanup(prefix: str) -> None:
    conn = redis.Redis.from_url(REDIS)
    try:
        keys = list(conn.scan_iter(match=f"{prefix}*", count=1000))
        for i in range(0, len(keys), 1000):
            conn.delete(*keys[i:i + 1000])
    finally:
        conn.close()


async def grouping(kind: str, count: int) -> str:
    tmp = Path(tempfile.mkdtemp(prefix="croupier-bench-"))
    prefix = f"croupier-bench:{uuid.uuid4().hex}:"
    store: Store = open_store(_store_url(kind, tmp, prefix))
    tickets = open_tickets(store)
    try:
        tables = Tables(store)
        options = canonical_json({"deals": 1, "turn_seconds": 60})
        now = time.time()
        for i in range(count):
            await tickets.open(Ticket(
                ticket_id=secrets.token_hex(12), player_id=f"p{i}", name=f"p{i}", game=GAME,
                players=SEATS, options=options, mode=Mode.QUICK.value,
                status=TicketStatus.WAITING.value, created_at=now + i * 1e-6,
                alive_until=now + 600, rating=0.0))
        matcher = Matchmaker(tables, tickets, MatchSettings(bots_after=600))
        start = time.perf_counter()
        matched = 0
        while matched < count:
            matched += await matcher.round()
        seconds = time.perf_counter() - start
    finally:
        await tickets.close()
        await store.close()
        if kind == "redis":
            _cleanup(prefix)
    return (f"grouping {kind}: {count} tickets into {count // SEATS} tables in {seconds:.2f} s:"
            f" {count / seconds:.0f} tickets/s")


def _serve(address: str, store: str, log: Path) -> subprocess.Popen[bytes]:
    with open(log, "ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "service.cli", "serve", "--listen", address, "--store",
             store, "--log-level", "warning", "--match-bots-after", "600",
             "--deal-pause-seconds", "0"],
            cwd=REPO, stdout=out, stderr=out, env={**os.environ, "PYTHONUNBUFFERED": "1"})


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def match(kind: str, count: int) -> str:
    tmp = Path(tempfile.mkdtemp(prefix="croupier-bench-"))
    prefix = f"croupier-bench:{uuid.uuid4().hex}:"
    url = _store_url(kind, tmp, prefix)
    addresses = [f"127.0.0.1:{free_port()}" for _ in range(1 if kind == "sqlite" else 2)]
    servers = [_serve(a, url, tmp / f"server{i}.log") for i, a in enumerate(addresses)]
    channels = [grpc.aio.insecure_channel(a) for a in addresses]
    try:
        for channel in channels:
            await wait_serving(channel)
        stubs = [pb_grpc.CroupierStub(c) for c in channels]
        guests = await asyncio.gather(*(
            stubs[i % len(stubs)].CreateGuest(pb.CreateGuestRequest(name=f"p{i}"))
            for i in range(count)))
        tokens = [[("authorization", f"Bearer {g.token}")] for g in guests]
        request = pb.FindMatchRequest(game=GAME, players=SEATS, mode=pb.MATCH_MODE_QUICK)
        request.options.update({"deals": 1})
        opened = await asyncio.gather(*(
            stubs[i % len(stubs)].FindMatch(request, metadata=tokens[i]) for i in range(count)))

        async def matched(i: int) -> float:
            stub = stubs[(i + 1) % len(stubs)]  # asked through the other replica
            while True:
                t = await stub.GetTicket(pb.GetTicketRequest(ticket_id=opened[i].ticket_id),
                                         metadata=tokens[i])
                if t.status == pb.TICKET_STATUS_MATCHED:
                    return float(t.waited_seconds)
                if t.status != pb.TICKET_STATUS_WAITING:
                    raise RuntimeError(f"ticket ended {t.status}")
                await asyncio.sleep(0.1)

        waits = await asyncio.wait_for(asyncio.gather(*(matched(i) for i in range(count))), 110)
    finally:
        for channel in channels:
            await channel.close()
        for server in servers:
            server.terminate()
            server.wait(30)
        if kind == "redis":
            _cleanup(prefix)
    replicas = f"{len(addresses)} replica{'s' if len(addresses) > 1 else ''}"
    return (f"time to match {kind} ({replicas}), {count} players at once: "
            f"p50 {_percentile(waits, 0.5):.2f} s, p99 {_percentile(waits, 0.99):.2f} s, "
            f"mean {statistics.fmean(waits):.2f} s")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=("grouping", "match"))
    parser.add_argument("--store", choices=("sqlite", "redis"), default="sqlite")
    parser.add_argument("--tickets", type=int, default=1000, help="grouping: tickets")
    parser.add_argument("--players", type=int, nargs="+", default=[100, 1000],
                        help="match: players calling FindMatch at once, one run each")
    args = parser.parse_args(argv)
    configure("warning")  # no line per table made
    if args.what == "grouping":
        print(asyncio.run(grouping(args.store, args.tickets)))
    else:
        for n in args.players:
            print(asyncio.run(match(args.store, n)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
