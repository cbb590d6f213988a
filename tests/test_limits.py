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
from tests.support import Client, ServerProcess, rpc_code, stored_table

C = grpc.StatusCode
pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def tight(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    proc = ServerProcess(
        db=tmp_path_factory.mktemp("limits") / "tight.db",
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
        deadline = time.monotonic() + 20
        while True:
            try:
                assert next(iter(client.stream(tid, timeout=5))).version == 1
                break
            except grpc.RpcError as e:
                assert e.code() == C.RESOURCE_EXHAUSTED, e
                assert time.monotonic() < deadline, "the cancelled stream's place stayed taken"
                time.sleep(0.05)
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
