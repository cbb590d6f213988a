"""Redis killed (SIGKILL) mid-game and restarted: the service rides it out by itself.

Real processes: a private `redis-server` of this test (free port, temp dir, append-only file
with `appendfsync always`, so every write Redis acknowledged survives the kill; never the
shared Redis), two `croupier serve` replicas on it and a bot worker. People move through
replica A, the bot plays the third seat, a spectator follows on replica B, which hears A's
moves only through its XREAD reader. While Redis is down every RPC must answer UNAVAILABLE
with a message saying so (never INTERNAL, no process dies); once it is back, without
restarting anything, the table plays on to its end, every acknowledged move is in the log at
its version, the spectator's stream is gapless, and B's reader wakes the stream again.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from croupier.v1 import croupier_pb2 as pb
from google.protobuf import struct_pb2

from bench.redis_private import PrivateRedis, redis_server_binary
from service.model import EventKind
from service.store import StoreUnavailable
from tests.bot_support import Bots, bot_seats, human_seat
from tests.support import Client, ServerProcess

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        redis_server_binary() is None,
        reason="redis-server is not installed: this test kills a Redis of its own",
    ),
]

UNREACHABLE = "the table store is unreachable"


class Spectator(threading.Thread):
    """Follows a table as a spectator, resuming after every UNAVAILABLE from the last version
    it saw; records each event's version and on which of its streams (1, 2, ...) it came."""

    def __init__(self, address: str, table_id: str) -> None:
        super().__init__(daemon=True)
        self.client = Client(address)
        self.table_id = table_id
        self.streams = 0  # streams opened so far
        self.stream_of: dict[int, int] = {}  # version -> the stream it came on
        self.versions: list[int] = []
        self.moves: dict[int, str] = {}
        self.errors: list[grpc.StatusCode] = []
        self.ended = threading.Event()

    def run(self) -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not self.ended.is_set():
            last = self.versions[-1] if self.versions else 0
            try:
                call = self.client.stream(self.table_id, from_version=last, timeout=30)
                self.streams += 1
                for event in call:
                    self.versions.append(event.version)
                    self.moves[event.version] = event.move
                    self.stream_of[event.version] = self.streams
                    if event.kind == pb.EVENT_KIND_END:
                        self.ended.set()
            except grpc.RpcError as e:
                self.errors.append(e.code())
                time.sleep(0.1)
        self.client.close()


@pytest.fixture
def stack(tmp_path: Path) -> Iterator[tuple[PrivateRedis, ServerProcess, ServerProcess]]:
    redis = PrivateRedis(tmp_path / "redis").start()
    url = f"{redis.url}?prefix=restart:"
    a = b = None
    try:
        a = ServerProcess(db=tmp_path / "a.db", store=url).start()
        # B's fallback poll is an hour: its streams learn of A's writes only from its reader
        quiet = ("--fill-interval", "0.1", "--poll-seconds", "3600")
        b = ServerProcess(db=tmp_path / "b.db", store=url, extra=quiet).start()
        yield redis, a, b
    finally:
        for server in (a, b):
            if server is not None and server.proc is not None and server.proc.poll() is None:
                server.stop()
        redis.stop()


def outage_codes(a: Client, b: Client, table_id: str, seat: int) -> dict[str, tuple[str, str]]:
    """Every kind of call, against both replicas, while Redis is down: (code, details)."""
    calls = {
        "A GetView": lambda: a.view(table_id),
        "A GetView seat": lambda: a.view(table_id, seat),
        "A SubmitMove": lambda: a.move(table_id, seat, "pass", 1),
        "A CreateTable": lambda: a.create(),
        "A JoinTable": lambda: a.stub.JoinTable(pb.JoinTableRequest(table_id=table_id), timeout=5),
        "A ListTables": lambda: a.stub.ListTables(pb.ListTablesRequest(), timeout=5),
        "A StreamTable": lambda: list(a.stream(table_id, from_version=1, timeout=5)),
        "B GetView": lambda: b.view(table_id),
        "B StreamTable": lambda: list(b.stream(table_id, from_version=1, timeout=5)),
        "B ExportRecord": lambda: b.stub.ExportRecord(
            pb.ExportRecordRequest(table_id=table_id), timeout=5
        ),
    }
    out = {}
    for name, call in calls.items():
        try:
            call()
            out[name] = ("OK", "")
        except grpc.RpcError as e:
            out[name] = (e.code().name, e.details())
    return out


def internal_errors(log: Path) -> list[str]:
    """Server log lines (JSON) that report an internal error."""
    bad = []
    for line in log.read_text().splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            bad.append(line)  # a traceback or anything else that is not a log event
            continue
        if entry.get("event") == "rpc_internal_error" or entry.get("code") == "INTERNAL":
            bad.append(line)
    return bad


def log_events(log: Path) -> Counter[str]:
    """How often each event name appears in a server's JSON log."""
    said: Counter[str] = Counter()
    for line in log.read_text().splitlines():
        with contextlib.suppress(ValueError):
            said[json.loads(line).get("event", "")] += 1
    return said


def test_redis_killed_mid_game(
    stack: tuple[PrivateRedis, ServerProcess, ServerProcess], tmp_path: Path
) -> None:
    redis, server_a, server_b = stack
    rng = random.Random(10)
    a, b = Client(server_a.address), Client(server_b.address)
    bots = Bots(server_a.address, tmp_path / "bots.log", poll=0.1)
    try:
        opts = struct_pb2.Struct()
        opts.update({"deals": 1})
        table = a.create(players=3, options=opts, seats=[human_seat(), human_seat(), *bot_seats(1)])
        tid = table.table_id
        a.join(tid, "p0", seat=0)
        a.join(tid, "p1", seat=1)
        spectator = Spectator(server_b.address, tid)
        spectator.start()
        acked: dict[int, str] = {}

        def my_move() -> bool:
            """One move by seats 0/1 when one is to act; False once the match is over."""
            public = a.view(tid)
            if public.table.status == pb.TABLE_STATUS_FINISHED:
                return False
            mine = [s for s in public.to_act if s in a.tokens]
            if not mine:
                time.sleep(0.02)  # the bot's turn
                return True
            view = a.view(tid, mine[0])
            if not view.legal_moves:
                return True
            reply = a.move(tid, mine[0], rng.choice(list(view.legal_moves)), view.version)
            finished = reply.view.table.status == pb.TABLE_STATUS_FINISHED
            acked[reply.version - (1 if finished else 0)] = reply.move
            return not finished

        while len(acked) < 8:  # the bidding and a few plays, the bot's turns among them
            assert my_move()
        deadline = time.monotonic() + 10
        while spectator.versions[-1:] != [a.view(tid).version] and time.monotonic() < deadline:
            time.sleep(0.02)
        before = a.view(tid).version

        redis.kill()
        during = outage_codes(a, b, tid, seat=min(a.tokens))
        assert all(code == "UNAVAILABLE" for code, _ in during.values()), during
        assert all(UNREACHABLE in details for _, details in during.values()), during
        time.sleep(0.5)  # a few rounds of the servers' background loops meet the outage too
        redis.start()  # same port and data dir: the append-only file is replayed

        # nothing restarted: the same server processes answer, from the state Redis kept
        assert server_a.proc is not None and server_b.proc is not None
        assert server_a.proc.poll() is None and server_b.proc.poll() is None
        assert bots.alive(), bots.describe()
        assert a.view(tid).version == before
        assert b.view(tid).version == before

        # B's spectator follows on; each of A's moves reaches it through B's XREAD reader: with
        # B's poll an hour, a move that comes on the stream that was open, and had every
        # earlier event, when the move was made was woken by the reader (a stream that ends
        # meanwhile, at its deadline, leaves its move uncounted; waits are hang guards only)
        woken = 0
        while True:
            deadline = time.monotonic() + 15
            while spectator.versions[-1:] != [a.view(tid).version]:
                assert time.monotonic() < deadline, "spectator on B did not catch up"
                time.sleep(0.01)
            n = len(acked)
            stream = spectator.streams
            if not my_move():
                break
            if len(acked) > n:
                version = max(acked)
                deadline = time.monotonic() + 10
                while version not in spectator.stream_of and spectator.streams == stream:
                    assert time.monotonic() < deadline, f"B's reader never woke it for {version}"
                    time.sleep(0.005)
                woken += spectator.stream_of.get(version) == stream
        assert spectator.ended.wait(20), "the spectator never saw the END event"
        assert woken >= 3, woken

        # every acknowledged move is in the log at its version, as B streams it from the start
        log = {e.version: e for e in b.stream(tid, timeout=10)}
        for version, move in acked.items():
            assert log[version].move == move, (version, move)
        assert spectator.versions == list(range(1, len(spectator.versions) + 1))
        assert spectator.versions[-1] == max(log)
        assert a.view(tid).table.status == pb.TABLE_STATUS_FINISHED
        # the bot played on after the outage (its turns came after the restart too)
        bot_moves = [v for v, e in log.items() if e.seat == 2 and v > before and e.move]
        assert bot_moves, "the bot made no move after Redis came back"
        for server in (server_a, server_b):
            assert internal_errors(server.db.with_suffix(".log")) == []
        # what operators read: the outage and the recovery, once each
        said = log_events(server_b.db.with_suffix(".log"))
        assert said["stream_reader_lost_redis"] >= 1 and said["stream_reader_reconnected"] >= 1
        for server in (server_a, server_b):
            said = log_events(server.db.with_suffix(".log"))
            assert said["background_paused_store_unreachable"] == 1, said
            assert said["background_resumed"] == 1, said
    finally:
        code = bots.stop()
        a.close()
        b.close()
    assert code == 0, bots.describe()


# --- the store itself, against the same kind of private Redis ---------------------------


@pytest.fixture
def private_redis(tmp_path: Path) -> Iterator[PrivateRedis]:
    redis = PrivateRedis(tmp_path / "redis").start()
    yield redis
    redis.stop()


def test_store_on_a_unix_socket(tmp_path: Path) -> None:
    """`unix://` store URLs (a Redis beside the server, no TCP): writes, reads and the stream
    reader's wake-ups work as over TCP, with the prefix taken from the query."""
    from service.store_redis import RedisStore
    from tests.store_support import HOUR, event, reader_covers, record, seed_table, woken

    redis = PrivateRedis(tmp_path / "r", unix_socket=True).start()
    try:
        url = f"unix://{redis.socket}?db=0&prefix=sock:"

        async def scenario() -> None:
            a, b = RedisStore(url), RedisStore(url)
            await seed_table(a)
            waiter = asyncio.ensure_future(b.wait_for_change("t1", 1, HOUR))
            await reader_covers(b, {"t1": 1})
            await a.commit(record("t1", version=2), [event("t1", 2)], 1)
            await woken(waiter, "the waiter on t1")
            got = await b.get("t1")
            assert got is not None and got.version == 2
            await a.close()
            await b.close()

        asyncio.run(scenario())
        keys = subprocess.run(["redis-cli", "-s", str(redis.socket), "--scan"],
                              capture_output=True, text=True, timeout=30).stdout.split()
        assert keys and all(k.startswith("sock:") for k in keys), keys
    finally:
        redis.stop()


def test_pool_reconnects_every_idle_connection(private_redis: PrivateRedis) -> None:
    """After a restart of Redis, no call fails on a pooled connection left over from the old
    process (redis-py's maintenance notifications had switched off its check for those)."""
    from service.store_redis import RedisStore
    from tests.store_support import event, record

    async def scenario() -> list[str]:
        store = RedisStore(f"{private_redis.url}?prefix=pool:")
        try:
            await store.create(record("t1"), [event("t1", 1, EventKind.CREATED)])
            await asyncio.gather(*(store.get("t1") for _ in range(16)))  # 16 open connections
            private_redis.kill()
            await asyncio.sleep(0.2)  # a server's loop runs meanwhile: the sockets see the end
            await asyncio.to_thread(private_redis.start)
            failures = []
            for _ in range(20):  # one by one: each may take another idle connection
                try:
                    assert (await store.get("t1")) is not None
                except StoreUnavailable as e:
                    failures.append(str(e))
            results = await asyncio.gather(
                *(store.events_after("t1", 0) for _ in range(16)), return_exceptions=True
            )
            failures += [repr(r) for r in results if isinstance(r, BaseException)]
            return failures
        finally:
            await store.close()

    assert asyncio.run(scenario()) == []


def test_reader_survives_restart_and_stays_connected(private_redis: PrivateRedis) -> None:
    """The blocked XREAD reader: waiters that come and go while Redis is away do not kill it,
    it wakes waiters for writes made after the restart by another store (another replica),
    and an idle XREAD cycle (no write for longer than its block) does not cost a reconnect."""
    import redis as redis_sync

    from service import store_redis
    from service.store_redis import RedisStore
    from tests.store_support import HOUR, event, reader_covers, record, woken

    url = f"{private_redis.url}?prefix=reader:"

    def connections(conn: redis_sync.Redis) -> int:
        return int(conn.info("stats")["total_connections_received"])

    async def scenario() -> int:
        watcher, writer = RedisStore(url), RedisStore(url)
        try:
            await writer.create(record("t1"), [event("t1", 1, EventKind.CREATED)])
            await writer.create(record("t2"), [event("t2", 1, EventKind.CREATED)])
            first = asyncio.create_task(watcher.wait_for_change("t1", 1, 30))
            await reader_covers(watcher, {"t1": 1})  # the reader is blocked in its XREAD
            private_redis.kill()
            # waiters that give up while Redis is away (their streams ended with UNAVAILABLE)
            await asyncio.gather(*(watcher.wait_for_change("t2", 1, 0.05) for _ in range(5)))
            first.cancel()
            await asyncio.gather(first, return_exceptions=True)
            await asyncio.sleep(0.3)
            await asyncio.to_thread(private_redis.start)
            # its own timeout is an hour: only the reader, back on the new Redis, can wake it
            waiting = asyncio.create_task(watcher.wait_for_change("t1", 1, HOUR))
            await reader_covers(watcher, {"t1": 1}, guard=30)  # reconnected, blocked again
            await writer.commit(record("t1", version=2), [event("t1", 2)], 1)
            await woken(waiting, "the waiter after the restart")
            info = redis_sync.Redis.from_url(private_redis.url)
            before = connections(info)
            # longer than one XREAD block with nothing written: the reader keeps its connection
            idle = asyncio.create_task(watcher.wait_for_change("t2", 1, 30))
            await asyncio.sleep(store_redis.READER_BLOCK_MS / 1000 + 1.5)
            idle.cancel()
            await asyncio.gather(idle, return_exceptions=True)
            after = connections(info)
            info.close()
            return after - before
        finally:
            await watcher.close()
            await writer.close()

    assert asyncio.run(scenario()) == 0  # no reconnection
