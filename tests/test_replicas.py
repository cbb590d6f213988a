"""Two server replicas on one Redis: what a client sees must not depend on which one it asks.

Real `croupier serve` processes share a Redis key prefix of their own (deleted afterwards);
a bot worker takes its seat through one replica while people play through both; streams from
both replicas must be identical, gapless and free of duplicates; racing moves through both
must have exactly one winner per version; a client whose replica dies resumes on the other.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import random
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import cast

import grpc
import pytest
import redis
from croupier.v1 import croupier_pb2 as pb
from croupier.v1 import croupier_pb2_grpc as pb_grpc
from google.protobuf import struct_pb2

from tests.bot_support import Bots
from tests.store_support import REDIS_URL, redis_cleanup, redis_prefix
from tests.support import Client, ServerProcess, bearer

pytestmark = pytest.mark.e2e


class Replicas:
    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.prefix = redis_prefix()
        self.url = f"{REDIS_URL}?prefix={self.prefix}"
        self.servers: list[ServerProcess] = []

    def start(self, name: str, *extra: str) -> ServerProcess:
        server = ServerProcess(
            db=self.tmp / f"{name}.db", store=self.url, extra=("--fill-interval", "0.1", *extra)
        ).start()
        self.servers.append(server)
        return server

    def close(self) -> None:
        for server in self.servers:
            if server.proc is not None and server.proc.poll() is None:
                server.stop()
        redis_cleanup(self.prefix)


@pytest.fixture(scope="module")
def replicas(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Replicas]:
    r = Replicas(tmp_path_factory.mktemp("replicas"))
    r.start("a")
    r.start("b")
    yield r
    r.close()


def create(client: Client, seats: list[pb.SeatSpec], deals: int = 1) -> str:
    options = struct_pb2.Struct()
    options.update({"deals": deals})
    table = client.stub.CreateTable(
        pb.CreateTableRequest(game="dou_dizhu", players=3, seats=seats, options=options),
        timeout=10,
    )
    return table.table_id


class Collector(threading.Thread):
    """Streams a table as a spectator into `events` until END (or its deadline)."""

    def __init__(self, address: str, table_id: str, from_version: int = 0) -> None:
        super().__init__(daemon=True)
        self.client = Client(address)
        self.table_id = table_id
        self.from_version = from_version
        self.events: list[pb.TableEvent] = []
        self.error: grpc.RpcError | None = None
        self.started_streaming = threading.Event()

    def run(self) -> None:
        try:
            call = self.client.stream(self.table_id, self.from_version, timeout=60)
            self.started_streaming.set()
            for event in call:
                self.events.append(event)
        except grpc.RpcError as e:
            self.error = e
        finally:
            self.started_streaming.set()
            self.client.close()


def signature(events: list[pb.TableEvent]) -> list[tuple[int, int, int, str]]:
    return [(e.version, e.kind, e.seat, e.move) for e in events]


def assert_gapless(events: list[pb.TableEvent], first: int = 1) -> None:
    versions = [e.version for e in events]
    assert versions == list(range(first, first + len(versions))), versions
    assert events[-1].kind == pb.EVENT_KIND_END


def test_table_played_through_both_replicas(replicas: Replicas) -> None:
    """Created on A; a bot joins through B; people join and move through A and B; spectators
    on A and on B see the very same events."""
    a, b = replicas.servers[0], replicas.servers[1]
    bots = Bots(b.address, replicas.tmp / "bots.log", poll=0.1)
    clients = {"a": Client(a.address), "b": Client(b.address)}
    try:
        seats = [
            pb.SeatSpec(kind=pb.SEAT_KIND_BOT, bot_level="random"),
            pb.SeatSpec(kind=pb.SEAT_KIND_HUMAN),
            pb.SeatSpec(kind=pb.SEAT_KIND_HUMAN),
        ]
        table_id = create(clients["a"], seats)
        watchers = [Collector(a.address, table_id), Collector(b.address, table_id)]
        for w in watchers:
            w.start()
            w.started_streaming.wait(10)
        clients["a"].join(table_id, "ann", seat=1)
        clients["b"].join(table_id, "bob", seat=2)
        via = {1: clients["a"], 2: clients["b"]}
        rng = random.Random(8)
        deadline = time.monotonic() + 30
        moves = {1: 0, 2: 0}
        while time.monotonic() < deadline:
            public = clients["a"].view(table_id)
            if public.result.finished:
                break
            seat = public.to_act[0] if public.to_act else -1
            if seat not in via:
                time.sleep(0.01)  # the bot's turn, or the bot has not joined yet
                continue
            mine = via[seat].view(table_id, seat)
            if seat not in mine.to_act:
                continue
            try:
                via[seat].move(table_id, seat, rng.choice(mine.legal_moves), mine.version)
                moves[seat] += 1
            except grpc.RpcError as e:
                assert e.code() == grpc.StatusCode.ABORTED
        else:
            raise AssertionError("the match did not finish in 30 s")
        for w in watchers:
            w.join(15)
            assert w.error is None, w.error
        ea, eb = watchers[0].events, watchers[1].events
        assert_gapless(ea)
        assert signature(ea) == signature(eb)
        joined = [e.seat for e in ea if e.kind == pb.EVENT_KIND_JOINED]
        assert sorted(joined) == [0, 1, 2]  # the bot took its seat through B
        bot_moves = [e for e in ea if e.kind == pb.EVENT_KIND_MOVE and e.seat == 0]
        assert bot_moves and moves[1] and moves[2]
    finally:
        for c in clients.values():
            c.close()
        assert bots.stop() == 0, bots.describe()


def test_racing_moves_through_both_replicas_one_winner_each(replicas: Replicas) -> None:
    """2 x 200 SubmitMove calls at one expected version through A and through B at once: two
    different moves, one wins and the other is refused; the same move (when it is the only
    legal one), both are told it landed (the later is a retry). The log has no gap."""
    a, b = replicas.servers[0], replicas.servers[1]
    setup = Client(a.address)
    table_id = create(setup, [], deals=50)
    for seat in range(3):
        setup.join(table_id, f"p{seat}", seat=seat)
    tokens = dict(setup.tokens)
    rng = random.Random(200)

    async def race() -> tuple[int, int, dict[str, int]]:
        channels = [grpc.aio.insecure_channel(s.address) for s in (a, b)]
        stubs = [pb_grpc.CroupierStub(ch) for ch in channels]
        refused: dict[str, int] = {}
        wins = 0
        try:
            for _ in range(200):
                view = await stubs[0].GetView(pb.GetViewRequest(table_id=table_id), timeout=10)
                seat = view.to_act[0]
                md = bearer(tokens[seat])
                mine = await stubs[1].GetView(
                    pb.GetViewRequest(table_id=table_id), metadata=md, timeout=10
                )
                legal = list(mine.legal_moves)
                moves = rng.sample(legal, 2) if len(legal) > 1 else legal * 2
                reqs = [pb.SubmitMoveRequest(table_id=table_id, move=m,
                                             expected_version=mine.version) for m in moves]
                results = await asyncio.gather(
                    *(s.SubmitMove(r, metadata=md, timeout=10) for s, r in zip(stubs, reqs, strict=True)),
                    return_exceptions=True,
                )
                ok = [r for r in results if isinstance(r, pb.SubmitMoveResponse)]
                errors = [r for r in results if isinstance(r, grpc.aio.AioRpcError)]
                if moves[0] == moves[1]:
                    assert len(ok) == 2 and ok[0].version == ok[1].version, results
                    refused["none (one legal move)"] = refused.get("none (one legal move)", 0) + 1
                else:
                    assert len(ok) == 1 and len(errors) == 1, results
                    code = errors[0].code()
                    assert code in (grpc.StatusCode.ABORTED, grpc.StatusCode.FAILED_PRECONDITION)
                    refused[code.name] = refused.get(code.name, 0) + 1
                assert ok[0].version > mine.version
                wins += 1
            final = await stubs[0].GetView(pb.GetViewRequest(table_id=table_id), timeout=10)
            return wins, final.version, refused
        finally:
            for ch in channels:
                await ch.close()

    try:
        wins, final_version, refused = asyncio.run(race())
    finally:
        setup.close()
    print(f"racing moves: 200 won, refused {refused}")
    assert wins == 200 and sum(refused.values()) == 200
    # the log, read straight from Redis: versions 1..final, one move event per win
    conn = redis.Redis.from_url(REDIS_URL)
    try:
        # redis-py types replies loosely (bytes or str, by decode_responses): bytes here
        entries = cast(list[tuple[bytes, dict[bytes, bytes]]],
                       conn.xrange(f"{replicas.prefix}e:{table_id}"))
    finally:
        conn.close()
    versions = [int(eid.split(b"-")[1]) for eid, _ in entries]
    assert versions == list(range(1, final_version + 1))
    assert sum(1 for _, f in entries if f[b"k"] == b"move") == 200
    # and the same through a stream on B, which must stop at nothing: read up to the end
    events: list[pb.TableEvent] = []
    with grpc.insecure_channel(b.address) as ch:
        call = pb_grpc.CroupierStub(ch).StreamTable(
            pb.StreamTableRequest(table_id=table_id), timeout=20
        )
        for event in call:
            events.append(event)
            if event.version == final_version:
                call.cancel()
                break
    assert [e.version for e in events] == versions


def test_client_resumes_on_the_other_replica_after_a_kill(replicas: Replicas) -> None:
    """A spectator streams from replica C while moves go through A; C is SIGKILLed; the
    spectator resumes on B from its last version and sees every event exactly once."""
    a, b = replicas.servers[0], replicas.servers[1]
    c = replicas.start("c")
    player = Client(a.address)
    table_id = create(player, [])
    for seat in range(3):
        player.join(table_id, f"p{seat}", seat=seat)
    stop = threading.Event()

    def play() -> None:
        rng = random.Random(3)
        while not stop.is_set():
            if player.step(table_id, rng) is None:
                return
            time.sleep(0.01)

    mover = threading.Thread(target=play, daemon=True)
    received: list[pb.TableEvent] = []
    killed = False
    try:
        with grpc.insecure_channel(c.address) as ch:
            call = pb_grpc.CroupierStub(ch).StreamTable(
                pb.StreamTableRequest(table_id=table_id), timeout=30
            )
            mover.start()
            try:
                for event in call:
                    received.append(event)
                    if len(received) == 12:
                        c.kill()
                        killed = True
            except grpc.RpcError as e:
                assert e.code() == grpc.StatusCode.UNAVAILABLE, e
        assert killed and received[-1].kind != pb.EVENT_KIND_END
        last = received[-1].version
        with grpc.insecure_channel(b.address) as ch:
            rest = list(
                pb_grpc.CroupierStub(ch).StreamTable(
                    pb.StreamTableRequest(table_id=table_id, from_version=last), timeout=30
                )
            )
        mover.join(30)
    finally:
        stop.set()
        player.close()
    everything = received + rest
    assert_gapless(everything)


def test_a_move_through_one_replica_wakes_a_stream_on_the_other(replicas: Replicas) -> None:
    """Streams hear other replicas' writes through Redis, not by polling: on a replica whose
    fallback poll is an hour, each move made through A still reaches a stream open on it (the
    10 s wait per move only guards against a hang; without the notification nothing would
    arrive for an hour)."""
    a = replicas.servers[0]
    quiet = replicas.start("quiet", "--poll-seconds", "3600")
    player = Client(a.address)
    table_id = create(player, [])
    for seat in range(3):
        player.join(table_id, f"p{seat}", seat=seat)
    version_now = player.view(table_id).version
    arrived: queue.Queue[pb.TableEvent] = queue.Queue()

    def follow() -> None:
        # from one version back: the first event, already there, shows the stream is open
        with grpc.insecure_channel(quiet.address) as ch:
            call = pb_grpc.CroupierStub(ch).StreamTable(
                pb.StreamTableRequest(table_id=table_id, from_version=version_now - 1),
                timeout=120,
            )
            with contextlib.suppress(grpc.RpcError):  # cancelled at the end
                for event in call:
                    arrived.put(event)
                    if event.kind == pb.EVENT_KIND_END:
                        return

    follower = threading.Thread(target=follow, daemon=True)
    follower.start()
    rng = random.Random(5)
    try:
        assert arrived.get(timeout=10).version == version_now  # the stream is open
        for _ in range(10):
            reply = player.step(table_id, rng)
            assert reply is not None
            # woken on the quiet replica by A's write: the event comes on the open stream
            try:
                event = arrived.get(timeout=10)
            except queue.Empty:
                raise AssertionError(
                    f"version {reply.version} never reached the stream on the other replica"
                ) from None
            assert (event.version, event.move) == (reply.version, reply.public_move)
    finally:
        player.close()
        quiet.stop()
        follower.join(10)
