"""Shared fixtures. Kept small on purpose; the helpers live in tests/support.py.

- `server`: one real `croupier serve` process for the whole session (SQLite file in a temp
  dir, free loopback port, ready when its health service says SERVING). Tests sharing it must
  create their own tables and not stop it.
- `client`: a `tests.support.Client` connected to that server, closed after the test.
- `browser`: one Chromium per test module (Playwright), for the browser tests.
"""

from __future__ import annotations

import os

# The terminal tests fork (pexpect's pty.fork) in a process that holds gRPC channels; gRPC's
# fork handlers, for programs that use gRPC in the forked child, once hung that fork for good
# in the parent (a clean-clone run, grpcio 1.85). Nothing here uses gRPC in a forked child:
# the child execs at once.
os.environ["GRPC_ENABLE_FORK_SUPPORT"] = "false"

from collections.abc import Iterator  # noqa: E402
from typing import Any

import pytest  # noqa: E402

from tests.support import Client, ServerProcess  # noqa: E402


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    proc = ServerProcess(db=tmp_path_factory.mktemp("server") / "croupier.db").start()
    yield proc
    proc.stop()


@pytest.fixture
def client(server: ServerProcess) -> Iterator[Client]:
    c = Client(server.address)
    yield c
    c.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One Chromium per test module, for the browser tests (tests/web_table_support)."""
    from playwright import sync_api

    from tests.web_table_support import ARTIFACTS, launch

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_api.sync_playwright() as p:
        b = launch(p)
        yield b
        b.close()

