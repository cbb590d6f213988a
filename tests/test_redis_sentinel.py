"""Redis Sentinel: the primary SIGKILLed mid-play, several times, and writes acknowledged only
once a replica holds them.

Real processes (private `redis-server`s of these tests on free ports, never the shared Redis):
a primary, two replicas and three sentinels with a 1 s down-after; two `croupier serve`
replicas on the `redis+sentinel://` URL (`bench.redis_failover` runs the play and the kills).
Then a primary with one replica that stops answering (SIGSTOP): a move whose WAIT is not
confirmed answers UNAVAILABLE saying so, and its retry is never applied twice.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import grpc
import pytest
from redis.asyncio import Redis

from bench.redis_private import redis_server_binary
from bench.sentinel_private import DataNode
from service.redis_connect import dedicated, parse_store_url, pooled
from tests.support import CROUPIER, REPO, Client, ServerProcess, free_port

needs_redis = pytest.mark.skipif(
    redis_server_binary() is None,
    reason="redis-server is not installed: these tests kill Redis processes of their own",
)
UNREACHABLE = "the table store is unreachable"
UNCONFIRMED = "too few of its replicas confirmed it"


def internal_errors(log: Path) -> list[str]:
    """Server log lines (JSON) that report an internal error, or that are not JSON."""
    bad = []
    for line in log.read_text().splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            bad.append(line)
            continue
        if entry.get("event") == "rpc_internal_error" or entry.get("code") == "INTERNAL":
            bad.append(line)
    return bad


@pytest.mark.e2e
@needs_redis
def test_primary_killed_three_times_mid_play(tmp_path: Path) -> None:
    from bench.redis_failover import run

    out = run(tmp_path, kills=3, tables=4, report=print)
    assert out.errors == [] and out.unfinished == []
    assert out.lost == [], out.lost  # every acknowledged move at its version
    assert out.gaps == [], out.gaps  # logs and every resumed stream: 1..n
    assert len(out.recovery_s) == 3 and max(out.recovery_s) < 15, out.recovery_s
    assert out.acked > 100
    # each kill met players mid-play; all they were told meanwhile was UNAVAILABLE, saying why
    assert out.unavailable
    assert all(UNREACHABLE in m or UNCONFIRMED in m for m in out.unavailable), out.unavailable[:5]
    # B polls once an hour: its streams ended promptly only because its XREAD reader followed
    # the primary through every failover
    assert out.reader_lag_s and max(out.reader_lag_s) < 5, out.reader_lag_s
    for name in ("a", "b"):
        assert internal_errors(tmp_path / f"{name}.log") == []
    said = [json.loads(line).get("event") for line in (tmp_path / "b.log").read_text().splitlines()]
    assert said.count("stream_reader_reconnected") >= 1


@pytest.fixture
def primary_and_replica(tmp_path: Path) -> Iterator[tuple[DataNode, DataNode]]:
    primary = DataNode(tmp_path / "primary").start()
    assert isinstance(primary, DataNode)
    replica = DataNode(tmp_path / "replica", replica_of=primary.port)
    try:
        replica.start()
        yield primary, replica
    finally:
        if replica.proc is not None and replica.proc.poll() is None:
            replica.proc.send_signal(signal.SIGCONT)
        replica.stop()
        primary.stop()


@pytest.mark.e2e
@needs_redis
def test_unconfirmed_move_fails_and_its_retry_lands_once(
    primary_and_replica: tuple[DataNode, DataNode], tmp_path: Path
) -> None:
    import redis as redis_sync

    primary, replica = primary_and_replica
    url = f"{primary.url}?prefix=wait:&wait_replicas=1&wait_timeout_ms=300"
    raw = redis_sync.Redis(port=primary.port)
    deadline = time.monotonic() + 20
    while raw.info("replication").get("slave0", {}).get("state") != "online":
        assert time.monotonic() < deadline, "the replica never came online"
        time.sleep(0.05)
    server = ServerProcess(db=tmp_path / "s.db", store=url).start()
    c = Client(server.address)
    try:
        tid = c.seated_table()
        for _ in range(2):
            assert c.step(tid) is not None  # writes the replica confirms: acknowledged
        public = c.view(tid)
        seat = public.to_act[0]
        mine = c.view(tid, seat)
        move, version = mine.legal_moves[0], mine.version

        assert replica.proc is not None
        replica.proc.send_signal(signal.SIGSTOP)  # alive, linked, silent: no ack comes
        with pytest.raises(grpc.RpcError) as first:
            c.move(tid, seat, move, version)
        assert first.value.code() == grpc.StatusCode.UNAVAILABLE
        assert UNCONFIRMED in (first.value.details() or "")
        # the primary holds it (not rolled back, not acknowledged)
        assert c.view(tid).version == version + 1
        # a retry while the replica still says nothing: UNAVAILABLE again, nothing applied
        with pytest.raises(grpc.RpcError) as again:
            c.move(tid, seat, move, version)
        assert again.value.code() == grpc.StatusCode.UNAVAILABLE
        assert UNCONFIRMED in (again.value.details() or "")
        assert c.view(tid).version == version + 1

        replica.proc.send_signal(signal.SIGCONT)
        reply = c.move(tid, seat, move, version)  # answered as the first, once confirmed
        assert reply.version == version + 1 and reply.move == move
        assert c.view(tid).version == version + 1
        log = []
        call = c.stream(tid, timeout=10)
        for e in call:
            log.append(e)
            if e.version == version + 1:
                call.cancel()
                break
        assert [e.version for e in log] == list(range(1, version + 2))
        assert [e.move for e in log if e.version == version + 1] == [move]  # once
        # the replica holds it: what a promoted replica would serve
        held = redis_sync.Redis(port=replica.port)
        assert int(held.hget(f"wait:t:{tid}", "version") or 0) == version + 1
        held.close()
        # and play goes on
        assert c.step(tid) is not None
        assert internal_errors(server.log_path) == []
    finally:
        c.close()
        server.stop()
        raw.close()


@pytest.mark.e2e
@needs_redis
def test_more_replicas_asked_for_than_exist(
    primary_and_replica: tuple[DataNode, DataNode], tmp_path: Path
) -> None:
    """wait_replicas above the replica count: no table write is ever acknowledged, and the
    service says why rather than pretending (CreateTable answers UNAVAILABLE)."""
    primary, _ = primary_and_replica
    url = f"{primary.url}?prefix=wait2:&wait_replicas=2&wait_timeout_ms=200"
    server = ServerProcess(db=tmp_path / "s.db", store=url).start()
    c = Client(server.address)
    try:
        with pytest.raises(grpc.RpcError) as failed:
            c.create()
        assert failed.value.code() == grpc.StatusCode.UNAVAILABLE
        assert UNCONFIRMED in (failed.value.details() or "")
    finally:
        c.close()
        server.stop()


# --- URLs ---------------------------------------------------------------------------------


def test_sentinel_urls_are_read_fully() -> None:
    parsed = parse_store_url(
        "redis+sentinel://u:pw@s1:26380,[::1],s3/mymaster/2?prefix=p:&retention=60"
        "&wait_replicas=1&wait_timeout_ms=250&sentinel_password=sp&socket_timeout=5"
    )
    assert (parsed.prefix, parsed.retention) == ("p:", 60.0)
    assert (parsed.ack.replicas, parsed.ack.timeout_ms) == (1, 250)
    assert parsed.sentinel
    assert "prefix" not in parsed.url and "wait_replicas" not in parsed.url

    import asyncio

    async def built() -> None:
        client = pooled(parsed.url, max_connections=8)
        one = dedicated(parsed.url)
        try:
            assert isinstance(client, Redis)  # a cluster's client only for cluster URLs
            pool = client.connection_pool
            kw = pool.connection_kwargs
            assert (kw["db"], kw["username"], kw["password"]) == (2, "u", "pw")
            assert kw["socket_timeout"] == 5.0 and kw["socket_connect_timeout"] == 2.0
            assert pool.max_connections == 8
            sentinels = pool.sentinel_manager.sentinels  # type: ignore[attr-defined]
            addresses = [(s.connection_pool.connection_kwargs["host"],
                          s.connection_pool.connection_kwargs["port"]) for s in sentinels]
            assert addresses == [("s1", 26380), ("::1", 26379), ("s3", 26379)]
            assert all(s.connection_pool.connection_kwargs["password"] == "sp"
                       for s in sentinels)
            assert one.single_connection_client
        finally:
            await client.aclose()
            await one.aclose()

    asyncio.run(built())


def test_tls_sentinel_urls_use_tls_to_sentinels_and_data_nodes() -> None:
    import asyncio

    from redis.asyncio.connection import SSLConnection
    from redis.asyncio.sentinel import SentinelManagedSSLConnection

    async def built() -> None:
        client = pooled("rediss+sentinel://s1,s2/m?ssl_cert_reqs=required&prefix=t:")
        try:
            assert isinstance(client, Redis)
            pool = client.connection_pool
            assert pool.connection_class is SentinelManagedSSLConnection
            assert pool.connection_kwargs["ssl_cert_reqs"] == "required"
            for s in pool.sentinel_manager.sentinels:  # type: ignore[attr-defined]
                assert s.connection_pool.connection_class is SSLConnection
        finally:
            await client.aclose()

    asyncio.run(built())


@pytest.mark.parametrize(("url", "says"), [
    ("redis+sentinel://s1:26379", "names the primary's service"),
    ("redis+sentinel://s1:26379/a/b/c", "names the primary's service"),
    ("redis+sentinel:///mymaster", "no sentinel host"),
    ("redis+sentinel://s1:port/mymaster", "bad sentinel port"),
    ("redis+sentinel://s1/mymaster/zero", "the database must be a number"),
    ("redis://h/0?wait_replicas=one", "wait_replicas must be a whole number"),
    ("redis://h/0?wait_replicas=-1", "wait_replicas may not be negative"),
    ("redis://h/0?wait_replicas=1&wait_timeout_ms=0", "WAIT 0 would wait forever"),
    ("redis://h/0?wait_replicas=1&wait_timeout_ms=500&socket_timeout=0.5",
     "must be longer than wait_timeout_ms"),
    ("redis+sentinel://:secret@s1/m?sentinel_timeout=soon", "sentinel_timeout must be"),
    ("memcache://h/0", "unknown Redis URL scheme"),
])
def test_bad_urls_say_what_is_wrong(url: str, says: str) -> None:
    with pytest.raises(ValueError, match=says) as e:
        parse_store_url(url)
    assert "secret" not in str(e.value)


def test_plain_urls_keep_their_meaning() -> None:
    parsed = parse_store_url("redis://:pw@h:1/3?prefix=a:&socket_timeout=5")
    assert parsed.url == "redis://:pw@h:1/3?socket_timeout=5"
    assert (parsed.ack.replicas, parsed.sentinel) == (0, False)  # WAIT off unless asked


def test_a_server_refuses_a_bad_sentinel_url_at_start(tmp_path: Path) -> None:
    done = subprocess.run(
        [*CROUPIER, "serve", "--listen", f"127.0.0.1:{free_port()}", "--store",
         "redis+sentinel://:hunter2@127.0.0.1:26379?prefix=x:"],
        cwd=REPO, capture_output=True, text=True, timeout=60,
    )
    assert done.returncode != 0
    assert "names the primary's service" in done.stderr
    assert "hunter2" not in done.stderr + done.stdout


@needs_redis
def test_a_primary_refusing_writes_is_unavailable_not_a_bug(tmp_path: Path) -> None:
    """`min-replicas-to-write` with no replica: Redis answers NOREPLICAS (from inside the
    write script); the store says StoreUnavailable (UNAVAILABLE), as for a lost connection,
    and reads still answer."""
    import asyncio

    import redis as redis_sync

    from service.model import EventKind
    from service.store import StoreUnavailable
    from service.store_redis import RedisStore
    from tests.store_support import event, record

    node = DataNode(tmp_path / "alone").start()
    try:
        raw = redis_sync.Redis(port=node.port)

        async def scenario() -> None:
            store = RedisStore(f"{node.url}?prefix=norep:")
            try:
                await store.create(record("t1"), [event("t1", 1, EventKind.CREATED)])
                raw.config_set("min-replicas-to-write", 1)
                with pytest.raises(StoreUnavailable, match="NOREPLICAS"):
                    await store.commit(record("t1", version=2), [event("t1", 2)], 1)
                got = await store.get("t1")
                assert got is not None and got.version == 1
            finally:
                await store.close()

        asyncio.run(scenario())
        raw.close()
    finally:
        node.stop()


@pytest.mark.e2e
@needs_redis
def test_no_primary_means_not_ready_and_unavailable_until_one_is_back(tmp_path: Path) -> None:
    """A primary with no replica to promote, killed: while the sentinel names no reachable
    primary the server is not ready (the readiness probe's service) and a call answers
    UNAVAILABLE; once the primary is back (same port) it is ready again by itself."""
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    from bench.sentinel_private import PrivateSentinels

    def ready(address: str) -> bool:
        with grpc.insecure_channel(address) as channel:
            reply = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service="croupier.v1.Croupier"), timeout=5)
            return bool(reply.status == health_pb2.HealthCheckResponse.SERVING)

    def until(what: str, check: Callable[[], bool], timeout: float = 20) -> None:
        deadline = time.monotonic() + timeout
        while not check():
            assert time.monotonic() < deadline, f"never: {what}"
            time.sleep(0.1)

    deployment = PrivateSentinels(tmp_path / "redis", replicas=0, sentinels=1).start()
    server = None
    c = None
    try:
        server = ServerProcess(db=tmp_path / "s.db", store=deployment.url("prefix=ready:"),
                               extra=("--store-check-seconds", "0.2")).start()
        c = Client(server.address)
        until("ready", lambda: ready(server.address))
        c.seated_table()
        (primary,) = deployment.data
        primary.kill()
        until("not ready", lambda: not ready(server.address))
        with pytest.raises(grpc.RpcError) as down:
            c.create()
        assert down.value.code() == grpc.StatusCode.UNAVAILABLE
        assert UNREACHABLE in (down.value.details() or "")
        primary.start()
        until("ready again", lambda: ready(server.address))
        c.seated_table()
        assert internal_errors(server.log_path) == []
    finally:
        if c is not None:
            c.close()
        if server is not None:
            server.stop()
        deployment.stop()
