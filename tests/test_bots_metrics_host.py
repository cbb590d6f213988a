"""`croupier bots --metrics-host`: the metrics endpoint binds the address the operator chose
(loopback by default, as the server's --listen), not every interface.

Two loopback addresses stand in for two interfaces: Linux answers on all of 127.0.0.0/8, so
an endpoint bound to every interface answers on 127.0.0.2 as well as on 127.0.0.1, and one
bound to a single address answers on that one only.
"""

from __future__ import annotations

import socket
import subprocess
import time
import urllib.error
import urllib.request

import pytest

from tests.bot_support import CROUPIER, child_env
from tests.support import REPO, free_port

pytestmark = pytest.mark.e2e


def _answers(host: str, port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://{host}:{port}/metrics", timeout=2) as r:
            # (with several workers the sum is empty until one of them has decided something)
            return r.status == 200 and r.headers.get_content_type() == "text/plain"
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return False


def _bound_on(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


def _bots(port: int, *flags: str, workers: int = 1, **env: str) -> subprocess.Popen[bytes]:
    """A bots command whose server does not exist: it keeps retrying and serves metrics."""
    return subprocess.Popen(
        [CROUPIER, "bots", "--server", f"127.0.0.1:{free_port()}", "--workers", str(workers),
         "--metrics-port", str(port), *flags],
        cwd=REPO, env=child_env(**env), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )


def _wait_for(host: str, port: int, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"bots exited with {proc.returncode}"
        if _answers(host, port):
            return
        time.sleep(0.2)
    raise AssertionError(f"no metrics on {host}:{port}")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=45)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@pytest.mark.parametrize("workers", [1, 2])
def test_metrics_bind_the_chosen_host_only(workers: int) -> None:
    port = free_port()
    proc = _bots(port, "--metrics-host", "127.0.0.2", workers=workers)
    try:
        _wait_for("127.0.0.2", port, proc)
        assert not _bound_on("127.0.0.1", port), "bound beyond the chosen host"
    finally:
        _stop(proc)


def test_metrics_default_to_loopback_and_the_host_comes_from_the_environment() -> None:
    port = free_port()
    proc = _bots(port)
    try:
        _wait_for("127.0.0.1", port, proc)
        assert not _bound_on("127.0.0.2", port), "the default binds every interface"
    finally:
        _stop(proc)
    port = free_port()
    proc = _bots(port, CROUPIER_BOT_METRICS_HOST="0.0.0.0")
    try:
        _wait_for("127.0.0.1", port, proc)
        assert _answers("127.0.0.2", port), "0.0.0.0 from the environment: every interface"
    finally:
        _stop(proc)
