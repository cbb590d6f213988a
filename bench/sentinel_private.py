"""A private Redis Sentinel deployment of child processes, for failover tests and benchmarks.

A primary, replicas and sentinels, each a `redis-server` on a free loopback port with a data
directory of its own (the sentinels with a generated config file, which they rewrite as they
learn). Sentinel's clocks are short (`down_after_ms`, `failover_timeout_ms`) so that a killed
primary is replaced within a few seconds. Data nodes keep no files: the replicas are their
durability here, as in the deployment this stands for. Never the shared Redis.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import redis

from bench.redis_private import PrivateRedis

SERVICE = "croupier"


class DataNode(PrivateRedis):
    """A primary or replica: no persistence; `replica_of` a port, or None for a primary."""

    def __init__(self, data_dir: Path, replica_of: int | None = None) -> None:
        super().__init__(data_dir)
        self.replica_of = replica_of

    def argv(self) -> list[str]:
        return [
            self.binary,
            "--port", str(self.port),
            "--bind", "127.0.0.1",
            "--dir", str(self.dir),
            "--appendonly", "no",
            "--save", "",
            "--repl-diskless-sync", "yes",  # a replica's full sync starts at once
            "--repl-diskless-sync-delay", "0",
            "--daemonize", "no",
            "--logfile", str(self.dir / "redis.log"),
            *(["--replicaof", "127.0.0.1", str(self.replica_of)] if self.replica_of else []),
        ]  # fmt: skip


class SentinelNode(PrivateRedis):
    """`redis-server --sentinel` with a config file of its own, monitoring SERVICE."""

    def __init__(self, data_dir: Path, primary_port: int, quorum: int, down_after_ms: int,
                 failover_timeout_ms: int) -> None:
        super().__init__(data_dir)
        self.config = self.dir / "sentinel.conf"
        self.config.write_text("\n".join([
            f"port {self.port}",
            "bind 127.0.0.1",
            f"dir {self.dir}",
            f"logfile {self.dir / 'sentinel.log'}",
            f"sentinel monitor {SERVICE} 127.0.0.1 {primary_port} {quorum}",
            f"sentinel down-after-milliseconds {SERVICE} {down_after_ms}",
            f"sentinel failover-timeout {SERVICE} {failover_timeout_ms}",
            f"sentinel parallel-syncs {SERVICE} 1",
            "",
        ]))

    def argv(self) -> list[str]:
        return [self.binary, str(self.config), "--sentinel"]


def _ask(port: int, call: Callable[[redis.Redis], Any]) -> Any:
    """`call` on a client of the node on `port` (redis-py's sync replies, typed loosely);
    None when it does not answer."""
    conn = redis.Redis(port=port, socket_timeout=1, socket_connect_timeout=1)
    try:
        return call(conn)
    except (redis.RedisError, OSError):
        return None
    finally:
        conn.close()


class PrivateSentinels:
    """One primary, `replicas` replicas and `sentinels` sentinels (quorum: a majority)."""

    def __init__(self, base: Path | None = None, replicas: int = 2, sentinels: int = 3,
                 down_after_ms: int = 1000, failover_timeout_ms: int = 3000) -> None:
        self.base = base or Path(tempfile.mkdtemp(prefix="croupier-sentinel-"))
        first = DataNode(self.base / "data0")
        self.data = [first] + [DataNode(self.base / f"data{i + 1}", replica_of=first.port)
                               for i in range(replicas)]
        self.sentinels = [
            SentinelNode(self.base / f"sentinel{i}", first.port, sentinels // 2 + 1,
                         down_after_ms, failover_timeout_ms)
            for i in range(sentinels)
        ]

    def url(self, query: str = "") -> str:
        hosts = ",".join(f"127.0.0.1:{s.port}" for s in self.sentinels)
        return f"redis+sentinel://{hosts}/{SERVICE}/0" + (f"?{query}" if query else "")

    def start(self, timeout: float = 20.0) -> PrivateSentinels:
        for node in self.data:
            node.start()
        self.wait_replicas(len(self.data) - 1, timeout)
        for s in self.sentinels:
            s.start()
        self.settled(timeout)
        return self

    def primary_port(self) -> int | None:
        """The port the sentinels' majority names as the primary (None while none does)."""
        named: dict[int, int] = {}
        for s in self.sentinels:
            if s.proc is None or s.proc.poll() is not None:
                continue
            found = _ask(s.port, lambda c: c.sentinel_get_master_addr_by_name(SERVICE))
            if found:
                named[int(found[1])] = named.get(int(found[1]), 0) + 1
        for port, votes in named.items():
            if votes > len(self.sentinels) // 2:
                return port
        return None

    def primary(self) -> DataNode:
        port = self.primary_port()
        for node in self.data:
            if node.port == port:
                return node
        raise LookupError(f"no data node on the primary's port {port}")

    def wait_replicas(self, count: int, timeout: float = 20.0) -> None:
        """Until the current primary (the first node, before the sentinels run) has `count`
        replicas online."""
        deadline = time.monotonic() + timeout
        while True:
            running = any(s.proc is not None for s in self.sentinels)
            port = self.primary_port() if running else self.data[0].port
            info = _ask(port, lambda c: c.info("replication")) if port else None
            if info and int(info.get("connected_slaves", 0)) >= count and all(
                    info.get(f"slave{i}", {}).get("state") == "online" for i in range(count)):
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"the primary has not {count} replicas online")
            time.sleep(0.05)

    def settled(self, timeout: float = 30.0) -> None:
        """Until every sentinel names one primary and sees all the other data nodes as its
        replicas, up and linked, and knows the other sentinels (a kill before that may find
        no replica the sentinels would promote)."""
        deadline = time.monotonic() + timeout
        want = len(self.data) - 1
        while True:
            port = self.primary_port()
            ok = port is not None
            for s in self.sentinels:
                if not ok:
                    break
                master = _ask(s.port, lambda c: c.sentinel_master(SERVICE))
                replicas = _ask(s.port, lambda c: c.sentinel_slaves(SERVICE)) or []
                healthy = [r for r in replicas if not (r["is_sdown"] or r["is_odown"]
                           or r["is_disconnected"]) and r.get("master-link-status") == "ok"]
                ok = (master is not None and int(master["port"]) == port
                      and not (master["is_sdown"] or master["is_odown"])
                      and int(master["num-other-sentinels"]) >= len(self.sentinels) - 1
                      and len(healthy) >= want)
            if ok:
                self.wait_replicas(want, timeout)
                return
            if time.monotonic() > deadline:
                raise TimeoutError("the sentinels do not agree on a healthy deployment")
            time.sleep(0.05)

    def failed_over(self, old: int, timeout: float = 30.0) -> int:
        """Until the sentinels name a primary other than port `old`; its port."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            port = self.primary_port()
            if port is not None and port != old:
                return port
            time.sleep(0.05)
        raise TimeoutError("no failover")

    def restart_as_replica(self, node: DataNode) -> None:
        """A killed data node back, as a replica of the primary that replaced it (it kept
        nothing)."""
        node.replica_of = self.failed_over(node.port)
        node.start()

    def stop(self) -> None:
        for node in [*self.sentinels, *self.data]:
            node.stop(remove=False)
        shutil.rmtree(self.base, ignore_errors=True)
