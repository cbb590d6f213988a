"""Redis Sentinel failover under play: how long from the primary's SIGKILL to the next move
the service accepts, and whether any acknowledged move was lost.

Real processes: a private Sentinel deployment (`bench.sentinel_private`: a primary, two
replicas, three sentinels, down-after 1 s), two `croupier serve` replicas on its
`redis+sentinel://` URL with `wait_replicas=1`, scripted players (one thread per table, all
seats, random legal moves with the version they decided on, every UNAVAILABLE retried with the
same move and version) and a spectator per table on the other server. The current primary is
SIGKILLed `kills` times mid-play (the killed node comes back as a replica of the new primary
before the next kill), then the tables play to their end.

    python -m bench.redis_failover [--kills 3] [--tables 4]
    python -m bench.redis_failover --latency 3   # what the WAIT costs a move, no kills

Prints, per kill, the seconds until the next accepted move, and the checks: every acknowledged
move in the log at its version, every stream gapless, every table finished.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import shutil
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TypeVar

import grpc
from croupier.v1 import croupier_pb2 as pb
from google.protobuf import struct_pb2

from bench.sentinel_private import PrivateSentinels
from tests.support import Client, ServerProcess

T = TypeVar("T")
RETRY_SECONDS = 40.0  # how long a player keeps retrying one call through an outage


def retried(call: Callable[[], T], unavailable: list[str] | None = None) -> T:
    """`call` again while it answers UNAVAILABLE (noting each message in `unavailable`)."""
    deadline = time.monotonic() + RETRY_SECONDS
    while True:
        try:
            return call()
        except grpc.RpcError as e:
            if e.code() != grpc.StatusCode.UNAVAILABLE or time.monotonic() > deadline:
                raise
            if unavailable is not None:
                unavailable.append(e.details() or "")
            time.sleep(0.05)


class Spectator(threading.Thread):
    """Follows a table, resuming after every error from the last version it saw."""

    def __init__(self, address: str, table_id: str) -> None:
        super().__init__(daemon=True)
        self.client = Client(address)
        self.table_id = table_id
        self.versions: list[int] = []
        self.moves: dict[int, str] = {}
        self.ended = threading.Event()
        self.ended_at = 0.0
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.ended.is_set() and not self.stop.is_set():
            last = self.versions[-1] if self.versions else 0
            try:
                for event in self.client.stream(self.table_id, from_version=last, timeout=20):
                    self.versions.append(event.version)
                    self.moves[event.version] = event.move
                    if event.kind == pb.EVENT_KIND_END:
                        self.ended_at = time.monotonic()
                        self.ended.set()
            except grpc.RpcError:
                time.sleep(0.1)
        self.client.close()


class Player(threading.Thread):
    """Plays every seat of one table to its end: a pause between moves until `hurry` is set."""

    def __init__(self, address: str, table_id: str, tokens: dict[int, str], seed: int,
                 hurry: threading.Event) -> None:
        super().__init__(daemon=True)
        self.address = address
        self.client = Client(address)
        self.client.tokens = dict(tokens)
        self.table_id = table_id
        self.rng = random.Random(seed)
        self.hurry = hurry
        self.acked: dict[int, tuple[str, float]] = {}  # version -> (move, when acknowledged)
        self.unavailable: list[str] = []
        self.error: BaseException | None = None
        self.finished = False

    def run(self) -> None:
        try:
            self._play()
        except BaseException as e:  # reported by the caller
            self.error = e
        finally:
            self.client.close()

    def _play(self) -> None:
        c, tid = self.client, self.table_id
        while True:
            public = retried(lambda: c.view(tid), self.unavailable)
            if public.table.status == pb.TABLE_STATUS_FINISHED:
                self.finished = True
                return
            if not public.to_act:  # a pause between deals
                time.sleep(0.02)
                continue
            seat = public.to_act[0]
            mine = retried(partial(c.view, tid, seat), self.unavailable)
            if mine.version != public.version or not mine.legal_moves:
                continue
            move = self.rng.choice(list(mine.legal_moves))
            reply = retried(partial(c.move, tid, seat, move, mine.version),
                            self.unavailable)
            # the version of the move's own event (an END event may follow it)
            self.acked[mine.version + 1] = (reply.move, time.monotonic())
            if not self.hurry.is_set():
                time.sleep(0.03)


@dataclass
class Outcome:
    recovery_s: list[float] = field(default_factory=list)  # per kill: to the next accepted move
    acked: int = 0  # acknowledged moves
    lost: list[str] = field(default_factory=list)  # acknowledged moves not in the log
    gaps: list[str] = field(default_factory=list)  # streams or logs that are not 1..n
    unfinished: list[str] = field(default_factory=list)
    unavailable: list[str] = field(default_factory=list)  # messages of UNAVAILABLE answers
    errors: list[str] = field(default_factory=list)  # player failures other than UNAVAILABLE
    # per table watched on B (which hears of moves only through its XREAD reader): seconds
    # from the last move's acknowledgement to the END event on B's stream
    reader_lag_s: list[float] = field(default_factory=list)


def run(base: Path, kills: int = 3, tables: int = 4, seed: int = 7,
        report: Callable[[str], None] = print) -> Outcome:
    """The scenario; servers and Redis processes stopped on return."""
    out = Outcome()
    os.environ.setdefault("CROUPIER_DEAL_PAUSE_SECONDS", "0")  # the servers deal at once
    deployment = PrivateSentinels(base / "redis").start()
    url = deployment.url("prefix=failover:&wait_replicas=1&wait_timeout_ms=500")
    servers: list[ServerProcess] = []
    players: list[Player] = []
    spectators: list[Spectator] = []
    try:
        servers.append(ServerProcess(db=base / "a.db", store=url).start())
        # B's fallback poll is an hour: its streams hear of A's moves only through its reader,
        # which must follow the primary across failovers
        quiet = ("--fill-interval", "0.1", "--poll-seconds", "3600")
        servers.append(ServerProcess(db=base / "b.db", store=url, extra=quiet).start())
        hurry = threading.Event()
        opts = struct_pb2.Struct()
        opts.update({"deals": 6})
        for i in range(tables):
            mover, watcher = servers[i % 2], servers[1 - i % 2]
            setup = Client(mover.address)
            tid = setup.seated_table(options=opts)
            setup.close()
            players.append(Player(mover.address, tid, setup.tokens, seed + i, hurry))
            spectators.append(Spectator(watcher.address, tid))
        for thread in [*players, *spectators]:
            thread.start()

        def moves_since(when: float) -> int:
            return sum(1 for p in players for _, at in list(p.acked.values()) if at > when)

        for k in range(kills):
            since = time.monotonic()
            deadline = since + 30
            while moves_since(since) < 3 * tables and time.monotonic() < deadline:
                time.sleep(0.05)
            old = deployment.primary()
            old.kill()
            killed = time.monotonic()
            while moves_since(killed) == 0:
                if time.monotonic() > killed + 40:
                    raise TimeoutError("no move accepted within 40 s of the kill")
                time.sleep(0.005)
            first = min(at for p in players for _, at in list(p.acked.values()) if at > killed)
            out.recovery_s.append(round(first - killed, 2))
            report(f"kill {k + 1}: next move accepted {first - killed:.2f} s after the SIGKILL")
            deployment.restart_as_replica(old)
            deployment.settled()
        hurry.set()
        for p in players:
            p.join(90)
        for s in spectators:
            s.ended.wait(20)
            s.stop.set()
        check = Client(servers[0].address)
        try:
            for p, s in zip(players, spectators, strict=True):
                if p.error is not None:
                    out.errors.append(f"{p.table_id}: {p.error!r}")
                out.unavailable += p.unavailable
                if not p.finished:
                    out.unfinished.append(p.table_id)
                    report(f"{p.table_id}: unfinished, {p.error!r}")
                    continue
                log = {e.version: e.move for e in check.stream(p.table_id, timeout=20)}
                if sorted(log) != list(range(1, len(log) + 1)):
                    out.gaps.append(f"log of {p.table_id}")
                if s.versions != list(range(1, len(s.versions) + 1)) or (
                        s.versions[-1:] != [max(log)]):
                    out.gaps.append(f"stream of {p.table_id} on the other server")
                if p.address == servers[0].address and p.acked:
                    last = max(at for _, at in p.acked.values())
                    out.reader_lag_s.append(round(s.ended_at - last, 2))
                for version, (move, _) in p.acked.items():
                    out.acked += 1
                    if log.get(version) != move:
                        out.lost.append(f"{p.table_id}@{version} {move!r}: {log.get(version)!r}")
        finally:
            check.close()
    finally:
        for s in spectators:
            s.stop.set()
        for server in servers:
            with contextlib.suppress(Exception):
                server.stop()
        deployment.stop()
    return out


def latency(base: Path, seconds: float) -> None:
    """What waiting for a replica costs a move: `bench.rpc_latency` on the Sentinel URL with
    wait_replicas 0 and 1 (a primary and two replicas on this machine: the replica's ack is a
    loopback round trip, the floor of what a network adds)."""
    from bench import rpc_latency

    deployment = PrivateSentinels(base / "redis").start()
    try:
        for wait in (0, 1):
            print(f"\n--- wait_replicas={wait}")
            rpc_latency.main([
                "--store", deployment.url(f"prefix=lat{wait}:&wait_replicas={wait}"),
                "--seconds", str(seconds), "--repeat", "1", "--concurrency", "1", "32",
            ])
    finally:
        deployment.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=3)
    parser.add_argument("--tables", type=int, default=4)
    parser.add_argument("--keep", action="store_true", help="keep the logs' directory")
    parser.add_argument("--latency", type=float, metavar="SECONDS", default=0,
                        help="instead: SubmitMove latency with and without the replica WAIT, "
                        "SECONDS per measurement")
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="croupier-failover-"))
    if args.latency:
        try:
            latency(base, args.latency)
        finally:
            shutil.rmtree(base, ignore_errors=True)
        return
    started = time.monotonic()
    try:
        out = run(base, kills=args.kills, tables=args.tables)
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    print(f"recovery after SIGKILL of the primary (s): {out.recovery_s} "
          f"(median {statistics.median(out.recovery_s):.2f})")
    print(f"acknowledged moves: {out.acked}, lost: {len(out.lost)}, gaps: {len(out.gaps)}, "
          f"unfinished tables: {len(out.unfinished)}, player errors: {len(out.errors)}, "
          f"UNAVAILABLE answers retried: {len(out.unavailable)}, of them for a write too few "
          f"replicas confirmed: {sum('replicas confirmed' in u for u in out.unavailable)}")
    print(f"B's stream reader: END on B's streams {max(out.reader_lag_s, default=0):.2f} s "
          "at most after the last move")
    print(f"wall time {time.monotonic() - started:.1f} s")


if __name__ == "__main__":
    main()
