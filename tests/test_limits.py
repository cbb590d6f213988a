"""Limits over real gRPC: each refusal is RESOURCE_EXHAUSTED with a message naming the limit,
and changes nothing. Two real server processes: one with tight size, table and stream limits,
one with a move rate (a window of a minute, so no test depends on timing)."""

from __future__ import annotations

import random
import time
from collections.abc import Iterator

import grpc
import pytest
from croupier.v1 import croupier_pb2 as pb

from service.limits import Limits, client_key
from tests.support import Client, ServerProcess, free_port, rpc_code, stored_table
from tests.web_api_support import http_post

C = grpc.StatusCode
pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def tight(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    proc = ServerProcess(
        db=tmp_path_factory.mktemp("limits") / "tight.db",
        web_port=free_port(),
        extra=("--max-message-bytes", "4096", "--tables-per-client", "3"),
    ).start()
    yield proc
    proc.stop()


@pytest.fixture(scope="module")
def rated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    proc = ServerProcess(
        db=tmp_path_factory.mktemp("limits") / "rated.db",
        extra=("--move-rate", "4/minute", "--streams-per-table", "2"),
    ).start()
    yield proc
    proc.stop()


def _wait_for_a_stream_place(client: Client, tid: str) -> None:
    """A new stream gets in once the server has seen a cancelled one end (within 20 s)."""
    deadline = time.monotonic() + 20
    while True:
        try:
            assert next(iter(client.stream(tid, timeout=5))).version == 1
            return
        except grpc.RpcError as e:
            assert e.code() == C.RESOURCE_EXHAUSTED, e
            assert time.monotonic() < deadline, "the cancelled stream's place stayed taken"
            time.sleep(0.05)


def test_limits_are_checked_when_configured() -> None:
    with pytest.raises(ValueError, match="rate"):
        Limits(move_rate="fast")
    with pytest.raises(ValueError, match="1024"):
        Limits(max_message_bytes=10)
    assert client_key("ipv4:10.0.0.1:5555") == client_key("ipv4:10.0.0.1:6666")
    assert client_key("ipv6:[::1]:5555") == "peer:ipv6:[::1]"
    assert client_key("ipv4:10.0.0.1:1", "k").startswith("key:")


def test_message_size_and_tables_per_client(tight: ServerProcess) -> None:
    client = Client(tight.address)
    try:
        code, msg = rpc_code(client.stub.Ping, pb.PingRequest(payload=b"x" * 5000), timeout=10)
        assert code == C.RESOURCE_EXHAUSTED and "larger than max" in msg
        assert client.stub.Ping(pb.PingRequest(payload=b"x" * 3000), timeout=10).payload
        # the web port keeps the same limit
        ping = f"{tight.web_url}/croupier.v1.Croupier/Ping"
        big, small = (pb.PingRequest(payload=b"x" * n).SerializeToString() for n in (5000, 3000))
        status, _, body = http_post(ping, big, "application/proto")
        assert status == 429 and b"resource_exhausted" in body, (status, body)
        status, _, body = http_post(ping, small, "application/proto")
        assert status == 200 and pb.PingResponse.FromString(body).payload == b"x" * 3000

        first = client.seated_table()
        client.create()
        client.create()
        code, msg = rpc_code(client.create)
        assert code == C.RESOURCE_EXHAUSTED and "unfinished tables" in msg and "3" in msg
        # a finished table no longer counts
        client.play_to_end(first, random.Random(3))
        assert client.create().table_id
        code, _ = rpc_code(client.create)
        assert code == C.RESOURCE_EXHAUSTED
    finally:
        client.close()


def test_streams_per_table(rated: ServerProcess) -> None:
    client = Client(rated.address)
    try:
        tid = client.seated_table()
        version = client.view(tid).version
        open_ = [client.stream(tid) for _ in range(2)]
        for s in open_:
            assert next(iter(s)).version == 1  # admitted: the server is streaming it
        code, msg = rpc_code(lambda: next(iter(client.stream(tid, from_version=version))))
        assert code == C.RESOURCE_EXHAUSTED and "2 open streams" in msg
        open_[0].cancel()
        # the server frees the place when it sees the cancel; a new stream then gets in
        _wait_for_a_stream_place(client, tid)
        open_[1].cancel()
    finally:
        client.close()


def test_moves_per_seat_are_rate_limited(rated: ServerProcess) -> None:
    client = Client(rated.address)
    try:
        tid = client.seated_table()
        acting = client.view(tid).to_act[0]
        other = (acting + 1) % 3
        before = stored_table(rated.db, tid)
        for _ in range(4):  # refused moves count too: guessing is throttled alike
            assert rpc_code(client.move, tid, acting, "xyz")[0] == C.INVALID_ARGUMENT
        code, msg = rpc_code(client.move, tid, acting, client.view(tid, acting).legal_moves[0])
        assert code == C.RESOURCE_EXHAUSTED and "too many moves" in msg and "4 per 1 minute" in msg
        assert stored_table(rated.db, tid) == before
        # other seats have their own window
        assert rpc_code(client.move, tid, other, "pass")[0] == C.FAILED_PRECONDITION
    finally:
        client.close()


@pytest.fixture(scope="module")
def shared_pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[ServerProcess]]:
    """Two replicas on one Redis prefix with the same limits."""
    from tests.store_support import REDIS_URL, redis_cleanup, redis_prefix

    prefix = redis_prefix()
    tmp = tmp_path_factory.mktemp("shared-limits")
    extra = ("--tables-per-client", "2", "--streams-per-table", "2", "--move-rate", "4/minute")
    procs = [
        ServerProcess(db=tmp / f"{n}.db", store=f"{REDIS_URL}?prefix={prefix}", extra=extra)
        for n in "ab"
    ]
    try:
        yield [p.start() for p in procs]
    finally:
        for p in procs:
            if p.proc is not None and p.proc.poll() is None:
                p.stop()
        redis_cleanup(prefix)


def test_replicas_on_redis_share_every_limit(shared_pair: list[ServerProcess]) -> None:
    """A client gets each limit once, whichever replica it reaches."""
    a, b = (Client(p.address) for p in shared_pair)
    try:
        tid = a.seated_table()  # the first of its 2 tables
        b.tokens = a.tokens  # the same person, through the other replica
        version = a.view(tid).version
        # streams: one through each replica fills the table's 2 places
        open_ = [a.stream(tid), b.stream(tid)]
        for s in open_:
            assert next(iter(s)).version == 1
        for c in (a, b):
            code, msg = rpc_code(lambda c=c: next(iter(c.stream(tid, from_version=version))))
            assert code == C.RESOURCE_EXHAUSTED and "2 open streams" in msg
        open_[1].cancel()
        _wait_for_a_stream_place(a, tid)  # freed when replica b sees the cancel
        open_[0].cancel()
        # moves: 2 through each replica use up the seat's window of 4
        acting = a.view(tid).to_act[0]
        for c in (a, a, b, b):
            assert rpc_code(c.move, tid, acting, "xyz")[0] == C.INVALID_ARGUMENT
        legal = a.view(tid, acting).legal_moves[0]
        for c in (a, b):
            code, msg = rpc_code(c.move, tid, acting, legal)
            assert code == C.RESOURCE_EXHAUSTED and "too many moves" in msg
        # tables per client: one more on the other replica reaches the limit of 2
        assert b.create().table_id
        for c in (a, b):
            code, msg = rpc_code(c.create)
            assert code == C.RESOURCE_EXHAUSTED and "unfinished tables" in msg
    finally:
        a.close()
        b.close()


class ManualClock:
    """A wall clock that moves only when told (starting at the real time, so that the keys
    Redis expires by the leases' ends outlive the test)."""

    def __init__(self) -> None:
        import time

        self.now = time.time()

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def test_stream_places_of_a_dead_replica_expire() -> None:
    """A replica killed with streams open cannot give their places back: they are leases
    that only a live replica renews. The leases are dated by a clock the test moves, so no
    sleep decides anything (waits are hang guards only)."""
    import asyncio

    from service.limits import SharedCounts
    from tests.store_support import REDIS_URL, redis_cleanup, redis_prefix

    prefix = redis_prefix()
    url = f"{REDIS_URL}?prefix={prefix}"
    lease = 30.0

    async def go() -> None:
        clock = ManualClock()
        dead = SharedCounts(url, lease_seconds=lease, clock=clock)  # renews every 10 s: never
        live = SharedCounts(url, lease_seconds=lease, clock=clock, renew_every=0.02)
        assert await dead.take_stream("t1", 2) and await dead.take_stream("t1", 2)
        assert await live.take_stream("t1", 2) is None  # full
        await dead.close()  # dies: its renewer stops, nothing is given back
        clock.advance(lease - 1)
        assert await live.take_stream("t1", 2) is None  # still within the lease
        clock.advance(2)
        held = await live.take_stream("t1", 2)  # the dead replica's leases ran out
        assert held is not None
        # a live replica renews its leases by itself: a lease on from the clock's time
        clock.advance(lease - 1)
        renewed = clock.now + lease
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 10
        while await live._redis.zscore(live._streams_key("t1"), held) != renewed:
            assert loop.time() < deadline, "the live replica's renewer did not renew its lease"
            await asyncio.sleep(0.01)
        # past the end of the lease as taken, within the renewed one: it still holds its place
        clock.advance(lease - 1)
        assert await live.take_stream("t1", 2) is not None
        assert await live.take_stream("t1", 2) is None
        await live.close()

    try:
        asyncio.run(go())
    finally:
        redis_cleanup(prefix)
