"""Graceful stop, as Kubernetes does it (SIGTERM, then SIGKILL after the grace period): health
goes NOT_SERVING first while calls are still answered during the drain, a move in flight
finishes, and open streams end with UNAVAILABLE saying where to resume."""

from __future__ import annotations

import asyncio
import signal
import time
from pathlib import Path
from typing import Any

import grpc
from croupier.v1 import croupier_pb2 as pb
from croupier.v1 import croupier_pb2_grpc as pb_grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from service.config import ServeConfig
from service.server import start
from tests.support import Client, ServerProcess

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


def test_stop_drains_then_finishes_in_flight_moves() -> None:
    async def go() -> None:
        running = await start(ServeConfig(listen="127.0.0.1:0", store="memory", fill_interval=60))
        loop = asyncio.get_running_loop()
        address = f"127.0.0.1:{running.port}"
        channel = grpc.aio.insecure_channel(address)
        stub = pb_grpc.CroupierStub(channel)
        health = health_pb2_grpc.HealthStub(channel)
        table = await stub.CreateTable(pb.CreateTableRequest(game="dou_dizhu"), timeout=10)
        tokens = {}
        for seat in range(3):
            reply = await stub.JoinTable(
                pb.JoinTableRequest(table_id=table.table_id, seat=seat), timeout=10
            )
            tokens[seat] = reply.token
        public = await stub.GetView(pb.GetViewRequest(table_id=table.table_id), timeout=10)
        seat = public.to_act[0]
        md = (("authorization", f"Bearer {tokens[seat]}"),)
        view = await stub.GetView(
            pb.GetViewRequest(table_id=table.table_id), metadata=md, timeout=10
        )
        stream = stub.StreamTable(
            pb.StreamTableRequest(table_id=table.table_id, from_version=view.version), timeout=10
        )

        store = running.tables.store
        commit = store.commit
        in_flight, release = asyncio.Event(), asyncio.Event()

        async def held_commit(*args: Any, **kw: Any) -> None:
            in_flight.set()
            await release.wait()  # in flight through the drain and into the grace period
            await commit(*args, **kw)

        store.commit = held_commit  # type: ignore[method-assign]
        move = asyncio.ensure_future(
            stub.SubmitMove(
                pb.SubmitMoveRequest(
                    table_id=table.table_id,
                    move=view.legal_moves[0],
                    expected_version=view.version,
                ),
                metadata=md,
                timeout=30,
            )
        )
        await asyncio.wait_for(in_flight.wait(), 10)
        # the drain is long enough for a loaded machine to make its calls in it; hang guards
        # aside, nothing here is timed: each step waits for the one before
        stopping = asyncio.ensure_future(running.stop(grace=20.0, drain=3.0))
        # draining: not ready, yet still answering
        deadline = loop.time() + 10
        while (
            await health.Check(health_pb2.HealthCheckRequest(), timeout=2)
        ).status != NOT_SERVING:
            assert loop.time() < deadline, "health never went NOT_SERVING"
        await stub.Ping(pb.PingRequest(payload=b"x"), timeout=2)
        # the open stream was told to resume elsewhere
        try:
            async for _ in stream:
                pass
            raise AssertionError("the stream ended without an error")
        except grpc.aio.AioRpcError as e:
            assert e.code() == grpc.StatusCode.UNAVAILABLE
            assert f"from_version={view.version}" in (e.details() or "")
        # after the drain, the grace period: new calls are refused, the move is still awaited
        deadline = loop.time() + 20
        while True:
            try:
                await stub.Ping(pb.PingRequest(payload=b"x"), timeout=2)
            except grpc.aio.AioRpcError as e:
                assert e.code() == grpc.StatusCode.UNAVAILABLE, e
                break
            assert loop.time() < deadline, "new calls still answered long after the drain"
            await asyncio.sleep(0.05)
        assert not move.done() and not stopping.done()
        release.set()
        answer = await move  # the move in flight landed
        assert answer.version == view.version + 1
        await stopping
        await channel.close()

    asyncio.run(go())


def test_sigterm_exits_cleanly_after_the_drain(tmp_path: Path) -> None:
    """In this order: SIGTERM, health NOT_SERVING while the process runs and still answers
    calls (the drain), then exit 0; the log tells the same story. The drain is long enough
    for a loaded machine to make its calls in it; the test measures no time."""
    server = ServerProcess(db=tmp_path / "c.db", extra=("--drain", "5", "--grace", "2")).start()
    client = Client(server.address)
    try:
        assert server.proc is not None
        server.proc.send_signal(signal.SIGTERM)
        health = health_pb2_grpc.HealthStub(client.channel)
        deadline = time.monotonic() + 10  # a hang guard
        while health.Check(health_pb2.HealthCheckRequest(), timeout=2).status != NOT_SERVING:
            assert time.monotonic() < deadline, "health never went NOT_SERVING"
        # not ready, yet answering: the drain
        table = client.create()
        client.stub.Ping(pb.PingRequest(payload=b"x"), timeout=5)
        assert server.proc.poll() is None, "the process exited before the drain was over"
        assert server.proc.wait(30) == 0
    finally:
        client.close()
        server.stop()
    lines = server.log_lines()
    events = [line.get("event") for line in lines]
    created = next(
        i for i, line in enumerate(lines)
        if line.get("method") == "CreateTable" and line.get("table") == table.table_id
    )
    assert events.index("stopping") < created < events.index("stopped"), events


def test_an_unreachable_store_answers_unavailable() -> None:
    from tests.support import free_port

    async def go() -> None:
        store = f"redis://127.0.0.1:{free_port()}/0?socket_connect_timeout=1"
        running = await start(ServeConfig(listen="127.0.0.1:0", store=store, fill_interval=60))
        async with grpc.aio.insecure_channel(f"127.0.0.1:{running.port}") as channel:
            stub = pb_grpc.CroupierStub(channel)
            try:
                await stub.CreateTable(pb.CreateTableRequest(game="dou_dizhu"), timeout=10)
                raise AssertionError("created a table without a store")
            except grpc.aio.AioRpcError as e:
                assert e.code() == grpc.StatusCode.UNAVAILABLE, e
                assert "store is unreachable" in (e.details() or "")
        await running.stop(grace=1)

    asyncio.run(go())
