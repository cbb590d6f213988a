"""Readiness tells the truth: a server that cannot reach its store is not ready (the health of
croupier.v1.Croupier, which the Kubernetes readiness probe asks), stays live (the overall
health, the liveness probe's), says so in its log and its metrics, and becomes ready again by
itself once the store is back. Real processes: a private redis-server and `croupier serve`."""

from __future__ import annotations

import json
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from bench.redis_private import PrivateRedis, redis_server_binary
from bench.rpc_latency import free_port
from tests.support import Client, ServerProcess

SERVICE = "croupier.v1.Croupier"
SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING

pytestmark = pytest.mark.skipif(redis_server_binary() is None, reason="needs redis-server")


def health(address: str, service: str) -> int:
    with grpc.insecure_channel(address) as channel:
        reply = health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(service=service), timeout=5)
        return int(reply.status)


def store_up(metrics_port: int) -> float:
    with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=5) as r:
        for line in r.read().decode().splitlines():
            if line.startswith("croupier_store_up "):
                return float(line.split()[1])
    raise AssertionError("croupier_store_up is not exported")


def wait_for(what: str, check: Callable[[], bool], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"never: {what}"
        time.sleep(0.1)


def log_events(path: Path) -> list[dict[str, Any]]:
    out = []
    for line in path.read_text().splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out


def test_readiness_follows_the_store_and_liveness_stays(tmp_path: Path) -> None:
    redis = PrivateRedis(tmp_path / "redis")  # its port is chosen; nothing listens there yet
    metrics = free_port()
    server = ServerProcess(
        db=tmp_path / "s.db", store=f"{redis.url}?prefix=health:",
        extra=("--fill-interval", "0.1", "--store-check-seconds", "0.2",
               "--metrics-port", str(metrics)))
    try:
        server.start()  # live at once: the process is fine, its store is not there
        assert health(server.address, "") == SERVING
        assert health(server.address, SERVICE) == NOT_SERVING
        assert store_up(metrics) == 0
        said = log_events(server.log_path)
        start = [e for e in said if e.get("event") == "store_unreachable_at_start"]
        assert len(start) == 1 and str(redis.port) in start[0]["error"], start
        with pytest.raises(grpc.RpcError) as refused:
            Client(server.address).create()
        assert refused.value.code() == grpc.StatusCode.UNAVAILABLE

        redis.start()  # the store comes: ready without a restart
        wait_for("ready once Redis answers", lambda: health(server.address, SERVICE) == SERVING)
        assert store_up(metrics) == 1
        client = Client(server.address)
        table = client.create()
        assert table.table_id

        redis.kill()  # and goes: not ready within a few checks, still live
        wait_for("not ready after Redis died",
                 lambda: health(server.address, SERVICE) == NOT_SERVING)
        assert health(server.address, "") == SERVING
        assert store_up(metrics) == 0
        redis.start()
        wait_for("ready again", lambda: health(server.address, SERVICE) == SERVING)
        assert client.view(table.table_id).table.table_id == table.table_id
        client.close()
        names = [e.get("event") for e in log_events(server.log_path)]
        assert names.count("store_unreachable") == 1, names
        assert names.count("store_reachable_again") == 2, names
        assert server.proc is not None and server.proc.poll() is None
    finally:
        server.stop()
        redis.stop()


def test_a_healthy_store_is_ready_from_the_start(tmp_path: Path) -> None:
    server = ServerProcess(db=tmp_path / "ok.db").start()
    try:
        assert health(server.address, SERVICE) == SERVING
        assert health(server.address, "") == SERVING
        names = [e.get("event") for e in log_events(server.log_path)]
        assert "store_unreachable_at_start" not in names
    finally:
        server.stop()
