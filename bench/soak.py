"""A bounded soak test on loopback: many tables at once, random kills, nothing lost.

`python -m bench.soak` (or `make soak`; not part of CI) starts `croupier serve` and a
`croupier bots` worker as separate processes, then for `--seconds`:

- scripted clients play Dou Dizhu tables of their own (every seat held by the script, random
  legal moves with `expected_version`), and a spectator stream follows each table;
- bot tables (every seat reserved for a `random` bot) are played by the bot worker, with a
  turn timer, so that seats held by a killed worker are played by the server;
- every `--kill-every` seconds (on average) one of the `--kill` victims is killed with SIGKILL
  and started again: the server (same port, same store), the bot worker, or Redis.

Stores (`--store`): `sqlite` (default, a file in a temp dir); `redis-private`: the soak starts
its own `redis-server` (on PATH) on a free port with a temp data dir, `appendonly yes` and
`appendfsync always` (so every write Redis acknowledged survives its SIGKILL), and adds Redis
to the victims: it is killed, left down for `--redis-down` seconds (clients get UNAVAILABLE
meanwhile) and restarted on the same port and data dir; or a `redis://` URL, a Redis that may
be shared and is therefore never killed (a URL without `prefix=` gets a unique one, whose keys
are deleted afterwards).

Afterwards it waits for the started tables to finish and checks: every table finished, every
acknowledged move is in the table's event log at the version it was acknowledged with, and
every stream saw versions 1, 2, 3... without a gap or a repeat (resuming after each kill with
the last version it saw). It prints moves/s, SubmitMove p50/p99, errors by status, the
server's memory (RSS) at start and end of its last life, and exits 1 if a check failed.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from croupier.v1 import croupier_pb2 as pb
from croupier.v1 import croupier_pb2_grpc as pb_grpc
from google.protobuf import struct_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc

from bench.redis_private import PrivateRedis
from bench.rpc_latency import free_port

REPO = Path(__file__).resolve().parent.parent
RETRY = {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED,
         grpc.StatusCode.CANCELLED}
VICTIMS = ("server", "bots", "redis")


@dataclass
class Soak:
    """What the clients saw."""

    latencies: list[float] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    acked: dict[str, dict[int, str]] = field(default_factory=dict)  # table -> version -> move
    streams: dict[str, list[int]] = field(default_factory=dict)  # table -> versions seen
    problems: list[str] = field(default_factory=list)
    started: list[str] = field(default_factory=list)
    finished: set[str] = field(default_factory=set)
    moves: int = 0


class Child:
    """A `croupier` subcommand as a child process, restartable after a kill."""

    def __init__(self, argv: list[str], log: Path) -> None:
        self.argv = argv
        self.log = log
        self.proc: subprocess.Popen[bytes] | None = None
        self.start()

    def start(self) -> None:
        with open(self.log, "ab") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "service.cli", *self.argv], cwd=REPO, stdout=out,
                stderr=out, env={**os.environ, "PYTHONUNBUFFERED": "1"},
            )

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait(30)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()

    def rss_mb(self) -> float:
        assert self.proc is not None
        try:
            for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        except OSError:
            pass
        return float("nan")


async def wait_serving(address: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    async with grpc.aio.insecure_channel(address) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        while time.monotonic() < deadline:
            try:
                reply = await health.Check(health_pb2.HealthCheckRequest(), timeout=1)
                if reply.status == health_pb2.HealthCheckResponse.SERVING:
                    return
            except grpc.aio.AioRpcError:
                pass
            await asyncio.sleep(0.1)
    raise TimeoutError(f"server at {address} not serving after {timeout} s")


async def retrying(soak: Soak, call, *args, **kw):
    """One RPC, retried while the server is away (killed and coming back)."""
    while True:
        try:
            return await call(*args, timeout=10, **kw)
        except grpc.aio.AioRpcError as e:
            soak.errors[e.code().name] += 1
            if e.code() not in RETRY:
                raise
            await asyncio.sleep(0.2)


def _options(**extra: Any) -> struct_pb2.Struct:
    s = struct_pb2.Struct()
    s.update({"deals": 1, **extra})
    return s


async def scripted_tables(stub: pb_grpc.CroupierStub, watch: pb_grpc.CroupierStub, soak: Soak,
                          until: float, rng: random.Random) -> None:
    """Creates and plays tables, one after the other, until the clock runs out; `watch` (another
    replica, if there are several) streams them."""
    while time.monotonic() < until:
        table = await retrying(soak, stub.CreateTable,
                               pb.CreateTableRequest(game="dou_dizhu", options=_options()))
        tid = table.table_id
        soak.started.append(tid)
        soak.acked[tid] = {}
        tokens = {}
        for seat in range(3):
            req = pb.JoinTableRequest(table_id=tid, seat=seat, name=f"s{seat}")
            try:
                tokens[seat] = (await retrying(soak, stub.JoinTable, req)).token
            except grpc.aio.AioRpcError:  # a retried join had landed, its token unheard:
                break  # the seat is taken for good; leave this table
        if len(tokens) < 3:
            soak.started.remove(tid)
            del soak.acked[tid]
            continue
        follower = asyncio.create_task(follow(watch, tid, soak))
        await play(stub, tid, tokens, soak, rng)
        await follower


async def play(stub: pb_grpc.CroupierStub, tid: str, tokens: dict[int, str], soak: Soak,
               rng: random.Random) -> None:
    md = {s: (("authorization", f"Bearer {t}"),) for s, t in tokens.items()}
    while True:
        public = await retrying(soak, stub.GetView, pb.GetViewRequest(table_id=tid))
        if not public.to_act:
            return
        seat = public.to_act[0]
        mine = await retrying(soak, stub.GetView, pb.GetViewRequest(table_id=tid),
                              metadata=md[seat])
        if not mine.legal_moves:
            continue
        move = rng.choice(mine.legal_moves)
        req = pb.SubmitMoveRequest(table_id=tid, move=move, expected_version=mine.version)
        start = time.perf_counter()
        try:
            reply = await stub.SubmitMove(req, metadata=md[seat], timeout=10)
        except grpc.aio.AioRpcError as e:
            soak.errors[e.code().name] += 1
            if e.code() in RETRY or e.code() == grpc.StatusCode.ABORTED:
                await asyncio.sleep(0.1)  # maybe it landed: the next view tells
                continue
            soak.problems.append(f"{tid}: SubmitMove {move!r} refused: {e.code().name}")
            return
        soak.latencies.append(time.perf_counter() - start)
        soak.acked[tid][reply.version - (1 if reply.view.table.status ==
                                         pb.TABLE_STATUS_FINISHED else 0)] = reply.move
        soak.moves += 1


async def follow(stub: pb_grpc.CroupierStub, tid: str, soak: Soak) -> None:
    """A spectator's stream of one table to its end, resumed after every interruption."""
    seen = soak.streams.setdefault(tid, [])
    while True:
        last = seen[-1] if seen else 0
        try:
            call = stub.StreamTable(pb.StreamTableRequest(table_id=tid, from_version=last),
                                    timeout=600)
            async for event in call:
                seen.append(event.version)
                if event.kind == pb.EVENT_KIND_END:
                    soak.finished.add(tid)
                    return
            if seen and soak.streams[tid][-1] == last:
                await asyncio.sleep(0.2)
        except grpc.aio.AioRpcError as e:
            soak.errors[f"stream {e.code().name}"] += 1
            if e.code() not in RETRY:
                soak.problems.append(f"{tid}: stream ended with {e.code().name}")
                return
            await asyncio.sleep(0.2)


async def bot_tables(stub: pb_grpc.CroupierStub, watch: pb_grpc.CroupierStub, soak: Soak,
                     until: float) -> None:
    while time.monotonic() < until:
        # a killed bot worker takes its seat tokens with it: the turn timer lets the server
        # play those seats (after two timeouts at once) so that the table still finishes
        req = pb.CreateTableRequest(game="dou_dizhu", options=_options(turn_seconds=2), seats=[
            pb.SeatSpec(kind=pb.SEAT_KIND_BOT, bot_level="random")] * 3)
        table = await retrying(soak, stub.CreateTable, req)
        soak.started.append(table.table_id)
        await follow(watch, table.table_id, soak)


async def killer(victims: dict[str, Callable[[], Awaitable[None]]], until: float,
                 every: float, rng: random.Random, kills: Counter[str]) -> None:
    """Every `every` s on average, a victim is killed and restarted: each one in turn, in an
    order shuffled anew every round, so that a short run still kills every kind."""
    order: list[str] = []
    while victims:
        await asyncio.sleep(rng.expovariate(1 / every))
        if time.monotonic() >= until:
            return
        if not order:
            order = rng.sample(sorted(victims), len(victims))
        victim = order.pop()
        await victims[victim]()
        kills[victim] += 1


def store_url(args: argparse.Namespace, tmp: Path) -> tuple[str, PrivateRedis | None, str]:
    """(the server's store URL, the private Redis started for it, a key prefix to delete
    afterwards from a shared Redis)."""
    if args.store in ("", "sqlite"):
        return f"sqlite:{tmp / 'croupier.db'}", None, ""
    if args.store == "redis-private":
        redis = PrivateRedis(tmp / "redis").start()
        return f"{redis.url}?prefix=soak:", redis, ""
    if args.store.startswith(("redis://", "rediss://")) and "prefix=" not in args.store:
        # a shared Redis: keys of this run only, never the default prefix of a deployment
        prefix = f"croupier-soak:{uuid.uuid4().hex}:"
        sep = "&" if "?" in args.store else "?"
        return f"{args.store}{sep}prefix={prefix}", None, prefix
    return args.store, None, ""


def delete_prefix(url: str, prefix: str) -> None:
    """SCAN + DEL of this run's keys (never FLUSHDB: the Redis may be shared)."""
    import redis

    conn = redis.Redis.from_url(url.split("?", 1)[0])
    try:
        keys = list(conn.scan_iter(match=f"{prefix}*", count=500))
        for i in range(0, len(keys), 500):
            conn.delete(*keys[i:i + 500])
    finally:
        conn.close()


async def run(args: argparse.Namespace) -> int:
    wanted = [v for v in args.kill.split(",") if v and v != "none"] if args.kill else None
    if wanted is not None and (unknown := set(wanted) - set(VICTIMS)):
        raise SystemExit(f"--kill: unknown victims {sorted(unknown)}; known: {VICTIMS}")
    if args.replicas > 1 and not args.store.startswith(("redis", "rediss")):
        raise SystemExit("--replicas > 1 needs a Redis store (redis-private or a redis:// URL)")
    if wanted is not None and "redis" in wanted and args.store != "redis-private":
        raise SystemExit("--kill redis needs --store redis-private: the soak kills only a "
                         "Redis it started itself")
    tmp = Path(tempfile.mkdtemp(prefix="croupier-soak-"))
    addresses = [f"127.0.0.1:{free_port()}" for _ in range(args.replicas)]
    store, redis, shared_prefix = store_url(args, tmp)
    # full speed: no pause between deals, no bot think time (the soak plays the machinery)
    servers = [Child(["serve", "--listen", a, "--store", store, "--fill-interval", "0.2",
                      "--deal-pause-seconds", "0"],
                     tmp / f"server{i}.log") for i, a in enumerate(addresses)]
    for address in addresses:
        await wait_serving(address)
    server = servers[0]  # whose memory is reported
    # several replicas: one target naming all of them, the worker's channel balances per call
    target = addresses[0] if len(addresses) == 1 else "ipv4:" + ",".join(addresses)
    bots = Child(["bots", "--server", target, "--poll", "0.2", "--workers",
                  str(args.bot_workers), "--think-seconds", "0", "--forced-think-seconds", "0"],
                 tmp / "bots.log")
    rng = random.Random(args.seed)
    soak, kills = Soak(), Counter[str]()

    async def kill_server() -> None:
        i = rng.randrange(len(servers))
        servers[i].kill()
        servers[i].start()
        await wait_serving(addresses[i])

    async def kill_bots() -> None:
        bots.kill()
        bots.start()

    async def kill_redis() -> None:
        assert redis is not None
        redis.kill()
        await asyncio.sleep(args.redis_down)  # calls meanwhile: UNAVAILABLE, retried
        await asyncio.to_thread(redis.start)  # same port and data dir: the AOF replayed

    victims = {"server": kill_server, "bots": kill_bots, "redis": kill_redis}
    chosen = wanted if wanted is not None else [
        v for v in VICTIMS if v != "redis" or redis is not None]
    start = time.monotonic()
    until = start + args.seconds
    rss_start = server.rss_mb()
    channels = [grpc.aio.insecure_channel(a) for a in addresses]
    stubs = [pb_grpc.CroupierStub(c) for c in channels]
    stub = stubs[0]
    try:
        # loop i moves through replica i and streams through the next one
        n = len(stubs)
        jobs = [scripted_tables(stubs[i % n], stubs[(i + 1) % n], soak, until,
                                random.Random(rng.random())) for i in range(args.scripted)]
        jobs += [bot_tables(stubs[i % n], stubs[(i + 1) % n], soak, until)
                 for i in range(args.bot_tables)]
        jobs.append(killer({v: victims[v] for v in chosen}, until, args.kill_every, rng,
                           kills))
        try:
            await asyncio.wait_for(asyncio.gather(*jobs), args.seconds + args.drain)
        except TimeoutError:
            soak.problems.append(f"tables still running {args.drain:.0f} s after the end")
        elapsed = time.monotonic() - start
        rss_end = server.rss_mb()
        # every acknowledged move is in the log, at its version
        for tid, acked in soak.acked.items():
            events = {}
            call = stub.StreamTable(pb.StreamTableRequest(table_id=tid), timeout=30)
            try:
                async for event in call:
                    events[event.version] = event
                    if event.kind == pb.EVENT_KIND_END:
                        break
            except grpc.aio.AioRpcError as e:
                soak.problems.append(f"{tid}: final read failed: {e.code().name}")
            for version, move in acked.items():
                if events.get(version) is None or events[version].move != move:
                    soak.problems.append(f"{tid}: acknowledged move {move!r} at {version} lost")
    finally:
        for channel in channels:
            await channel.close()
    for child in servers:
        child.stop()
    bots.stop()
    if redis is not None:
        redis.stop(remove=False)
    if shared_prefix:
        delete_prefix(store, shared_prefix)
    for tid, seen in soak.streams.items():
        if seen != list(range(1, len(seen) + 1)):
            soak.problems.append(f"{tid}: stream not gapless: {seen[:20]}...")
    unfinished = [t for t in soak.started if t not in soak.finished]
    if unfinished:
        soak.problems.append(f"{len(unfinished)} tables unfinished, e.g. {unfinished[:3]}")
    stream_moves = sum(len(v) for v in soak.streams.values())
    lat = sorted(soak.latencies)
    print(f"soak: {elapsed:.0f} s, {args.scripted} scripted + {args.bot_tables} bot table loops, "
          f"store {args.store}, kills {dict(kills)}")
    print(f"tables started {len(soak.started)}, finished {len(soak.finished)}")
    print(f"scripted moves acknowledged {soak.moves} ({soak.moves / elapsed:.1f}/s); events "
          f"streamed {stream_moves} ({stream_moves / elapsed:.1f}/s)")
    if lat:
        p99 = lat[min(len(lat) - 1, int(0.99 * len(lat)))]
        print(f"SubmitMove p50 {statistics.median(lat) * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms")
    print(f"errors seen by clients (retried): {dict(soak.errors) or 'none'}")
    print(f"server RSS in its last life: {rss_start:.1f} MB at start, {rss_end:.1f} MB at end")
    for problem in soak.problems[:20]:
        print("PROBLEM:", problem)
    if soak.problems:
        print(f"FAILED: {len(soak.problems)} problem(s); logs in {tmp}")
        return 1
    print(f"OK; logs in {tmp}")
    if redis is not None:
        shutil.rmtree(redis.dir, ignore_errors=True)  # its append-only file, tens of MB
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.soak",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="soak time (default 60)")
    parser.add_argument("--scripted", type=int, default=8,
                        help="scripted client loops, one table at a time each (default 8)")
    parser.add_argument("--bot-tables", type=int, default=4,
                        help="bot table loops, one table at a time each (default 4)")
    parser.add_argument("--bot-workers", type=int, default=1, help="bot worker processes")
    parser.add_argument("--kill-every", type=float, default=10.0,
                        help="mean seconds between kills (default 10)")
    parser.add_argument("--drain", type=float, default=120.0,
                        help="seconds the started tables get to finish after the end")
    parser.add_argument("--store", default="sqlite",
                        help="sqlite (default: a file in a temp dir), redis-private (a "
                        "redis-server of its own, killed too) or a redis:// URL (never killed)")
    parser.add_argument("--kill", default="",
                        help="comma-separated victims among server, bots, redis (default: "
                        "server,bots, and redis with --store redis-private; 'none': no kills)")
    parser.add_argument("--replicas", type=int, default=1,
                        help="server replicas on one Redis store (default 1); each scripted "
                        "loop moves through one and streams through the next")
    parser.add_argument("--redis-down", type=float, default=1.0,
                        help="seconds a killed private Redis stays down (default 1)")
    parser.add_argument("--seed", type=int, default=1)
    return asyncio.run(run(parser.parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
