"""A private `redis-server` child process for soak runs and tests that kill Redis.

A shared Redis must never be killed, so whatever wants to kill Redis starts its own: a free
loopback port, a temporary data directory, append-only file with `appendfsync always` (every
write Redis acknowledged is on disk before the reply, so it survives a SIGKILL of Redis) and no
RDB snapshots. `kill()` is SIGKILL; `start()` again brings it back on the same port with the
same data directory, replaying the append-only file.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from bench.rpc_latency import free_port


def redis_server_binary() -> str | None:
    """The path of `redis-server` on PATH, or None when it is not installed."""
    return shutil.which("redis-server")


class PrivateRedis:
    """`redis-server` on a free port and a data directory of its own, restartable after a kill."""

    def __init__(
        self, data_dir: Path | None = None, port: int | None = None, unix_socket: bool = False
    ) -> None:
        binary = redis_server_binary()
        if binary is None:
            raise FileNotFoundError("redis-server is not on PATH")
        self.binary = binary
        self.dir = data_dir or Path(tempfile.mkdtemp(prefix="croupier-redis-"))
        self.dir.mkdir(parents=True, exist_ok=True)
        self.port = port or free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        # with unix_socket, it also listens on this socket in its data directory
        self.socket = self.dir / "redis.sock" if unix_socket else None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def argv(self) -> list[str]:
        return [
            self.binary,
            "--port", str(self.port),
            "--bind", "127.0.0.1",
            "--dir", str(self.dir),
            "--appendonly", "yes",
            "--appendfsync", "always",  # acknowledged = on disk: survives kill -9 of Redis
            "--save", "",  # no RDB snapshots: the append-only file is the whole truth
            "--daemonize", "no",
            "--logfile", str(self.dir / "redis.log"),
            *(["--unixsocket", str(self.socket), "--unixsocketperm", "700"] if self.socket
              else []),
        ]  # fmt: skip

    def start(self, timeout: float = 20.0) -> PrivateRedis:
        """Starts (or restarts) the server and waits until it answers PING (the append-only
        file replayed)."""
        self.proc = subprocess.Popen(
            self.argv(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"redis-server exited with {self.proc.returncode}; see {self.dir}/redis.log"
                )
            if self.ping():
                return self
            time.sleep(0.05)
        raise TimeoutError(f"redis-server on port {self.port} not ready after {timeout} s")

    def ping(self) -> bool:
        """True once the server answers +PONG (not while it still loads its data)."""
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as s:
                s.sendall(b"PING\r\n")
                return s.recv(64).startswith(b"+PONG")
        except OSError:
            return False

    def kill(self) -> None:
        """SIGKILL: Redis gets no chance to flush anything, as in a crash."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)

    def stop(self, remove: bool = True) -> None:
        """SIGTERM (SIGKILL after 10 s) and, with `remove`, delete the data directory."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        if remove:
            shutil.rmtree(self.dir, ignore_errors=True)
