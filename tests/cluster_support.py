"""A private Redis Cluster for tests: three primaries with a replica each, on free loopback
ports in a temporary directory (never the shared Redis), made with `redis-cli --cluster
create`. A node can be killed (SIGKILL) and its replica promoted, as in a crash."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from bench.rpc_latency import free_port

# how long a node may be silent before the others call it failing (ms): short, so that a
# killed primary's replica takes over within a few seconds
NODE_TIMEOUT_MS = 1000


def cluster_binaries() -> bool:
    return shutil.which("redis-server") is not None and shutil.which("redis-cli") is not None


class PrivateCluster:
    def __init__(self, nodes: int = 6) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="croupier-cluster-"))
        self.ports = [free_port() for _ in range(nodes)]
        # the bus port of each node, named (the default, port + 10000, may be out of range)
        self.bus = {p: free_port() for p in self.ports}
        self.procs: dict[int, subprocess.Popen[bytes]] = {}

    @property
    def url(self) -> str:
        """A store URL naming every node (any one answering is enough)."""
        return "redis+cluster://" + ",".join(f"127.0.0.1:{p}" for p in self.ports) + "/"

    def _start_node(self, port: int) -> None:
        d = self.dir / str(port)
        d.mkdir(exist_ok=True)
        self.procs[port] = subprocess.Popen(
            [
                "redis-server", "--port", str(port), "--bind", "127.0.0.1", "--dir", str(d),
                "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                "--cluster-port", str(self.bus[port]),
                "--cluster-node-timeout", str(NODE_TIMEOUT_MS), "--save", "",
                "--appendonly", "no", "--daemonize", "no", "--logfile", str(d / "redis.log"),
                # a replica's full sync starts at once (Redis waits 5 s for more by default)
                "--repl-diskless-sync-delay", "0",
            ],  # fmt: skip
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )

    def start(self, timeout: float = 30.0) -> PrivateCluster:
        for port in self.ports:
            self._start_node(port)
        for port in self.ports:
            self._wait(lambda p=port: self._up(p), timeout)
        subprocess.run(
            ["redis-cli", "--cluster", "create", *(f"127.0.0.1:{p}" for p in self.ports),
             "--cluster-replicas", "1", "--cluster-yes"],
            check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=timeout,
        )
        self.wait_ok(timeout)
        # every replica attached and in sync, so that a failover has one to promote
        self._wait(lambda: len(self.primaries()) == 3 and all(
            self.info(p).get("connected_slaves") == 1 for p in self.primaries()), timeout)
        return self

    def _up(self, port: int) -> bool:
        if self.procs[port].poll() is not None:
            log = (self.dir / str(port) / "redis.log").read_text()[-2000:]
            raise RuntimeError(f"redis-server on {port} exited: {log}")
        with self.conn(port) as c:
            return bool(c.ping())

    @staticmethod
    def _wait(ready: object, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while True:
            try:
                if ready():  # type: ignore[operator]
                    return
            except redis.RedisError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError("the private cluster did not get ready")
            time.sleep(0.05)

    def conn(self, port: int) -> redis.Redis:
        return redis.Redis(port=port, socket_timeout=2)

    def info(self, port: int) -> dict[str, object]:
        with self.conn(port) as c:
            return dict(c.info("replication"))

    def alive(self) -> list[int]:
        return [p for p, proc in self.procs.items() if proc.poll() is None]

    def primaries(self) -> list[int]:
        return [p for p in self.alive() if self.info(p).get("role") == "master"]

    def wait_ok(self, timeout: float = 30.0) -> None:
        """Until every live node says cluster_state:ok and agrees on three primaries."""

        def ok() -> bool:
            for port in self.alive():
                with self.conn(port) as c:
                    if c.cluster("INFO").get("cluster_state") != "ok":
                        return False
            return len(self.primaries()) == 3

        self._wait(ok, timeout)

    def primary_of(self, key: str) -> int:
        """The port of the primary that serves `key`'s slot."""
        with self.conn(self.alive()[0]) as c:
            slot = int(c.execute_command("CLUSTER KEYSLOT", key))
            for start, end, primary, *_ in c.execute_command("CLUSTER SLOTS"):
                if start <= slot <= end:
                    return int(primary[1])
        raise LookupError(slot)

    def replica_of(self, primary: int) -> int:
        for port in self.alive():
            info = self.info(port)
            if info.get("role") == "slave" and int(info["master_port"]) == primary:  # type: ignore[call-overload]
                return port
        raise LookupError(primary)

    def kill(self, port: int) -> None:
        """SIGKILL, as in a crash."""
        self.procs[port].kill()
        self.procs[port].wait(10)

    def fail_over(self, primary: int, timeout: float = 30.0) -> int:
        """Kills `primary` and has its replica take over (asked at once rather than after the
        node timeout); returns the new primary's port once the cluster is ok again."""
        replica = self.replica_of(primary)
        self.kill(primary)
        with self.conn(replica) as c:
            deadline = time.monotonic() + timeout
            while self.info(replica).get("role") != "master":
                # the others must first see the primary failing: asked again until then
                with contextlib.suppress(redis.RedisError):
                    c.execute_command("CLUSTER FAILOVER", "FORCE")
                if time.monotonic() > deadline:
                    raise TimeoutError("the replica was not promoted")
                time.sleep(0.2)
        self.wait_ok(timeout)
        return replica

    def rejoin(self, port: int, primary: int, timeout: float = 30.0) -> None:
        """Starts a killed node again (its nodes.conf kept): it comes back as a replica of the
        node that took its place; returns once that one has it in sync."""
        self._start_node(port)
        self._wait(lambda: self._up(port) and self.info(port).get("master_link_status") == "up"
                   and self.info(primary).get("connected_slaves") == 1, timeout)

    def stop(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)
        shutil.rmtree(self.dir, ignore_errors=True)


def cluster_fixture() -> Iterator[PrivateCluster]:
    if not cluster_binaries():
        pytest.skip("redis-server and redis-cli are needed for a private Redis Cluster")
    cluster = PrivateCluster().start()
    try:
        yield cluster
    finally:
        cluster.stop()
