"""Shared fixtures. Kept small on purpose; the helpers live in tests/support.py.

- `server`: one real `croupier serve` process for the whole session (SQLite file in a temp
  dir, free loopback port, ready when its health service says SERVING). Tests sharing it must
  create their own tables and not stop it.
- `client`: a `tests.support.Client` connected to that server, closed after the test.
- `stack`: per test module, a server on its own SQLite file with a bot worker serving it
  (tests.bot_support.server_and_bots), for the tests that play bots' tables to the end;
  `stack_with_bots` is the same with the worker's process, whose log a test may read. A module
  sets `STACK_WORKERS = n` for an n-process worker (1 by default).
- `browser`: one Chromium per test module (Playwright), for the browser tests.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile

# The terminal tests fork (pexpect's pty.fork) in a process that holds gRPC channels; gRPC's
# fork handlers, for programs that use gRPC in the forked child, once hung that fork for good
# in the parent (a clean-clone run, grpcio 1.85). Nothing here uses gRPC in a forked child:
# the child execs at once.
os.environ["GRPC_ENABLE_FORK_SUPPORT"] = "false"
# `croupier play` keeps its player's identity in the user's config directory: the commands the
# tests run keep theirs in a directory of the run's own, never in the home directory.
os.environ["XDG_CONFIG_HOME"] = tempfile.mkdtemp(prefix="croupier-tests-config-")
# Servers and bot workers the tests start play at full speed: no pause between deals and no
# bot think time at tables with a person (tests/test_pacing.py sets both where it tests them).
os.environ.setdefault("CROUPIER_DEAL_PAUSE_SECONDS", "0")
os.environ.setdefault("CROUPIER_BOT_THINK_SECONDS", "0")
os.environ.setdefault("CROUPIER_BOT_FORCED_THINK_SECONDS", "0")

from collections.abc import Iterator  # noqa: E402
from typing import TYPE_CHECKING, Any

import pytest  # noqa: E402

from tests.support import Client, ServerProcess  # noqa: E402

if TYPE_CHECKING:
    from tests.bot_support import Bots, Server

atexit.register(shutil.rmtree, os.environ["XDG_CONFIG_HOME"], True)


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
def stack_with_bots(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Server, Bots]]:
    """One server and bot worker per module, stopped cleanly after its tests."""
    from tests.bot_support import server_and_bots

    workers = getattr(request.module, "STACK_WORKERS", 1)
    name = request.module.__name__.rsplit(".", 1)[-1]
    with server_and_bots(tmp_path_factory.mktemp(f"{name}_stack"), workers=workers) as pair:
        yield pair


@pytest.fixture(scope="module")
def stack(stack_with_bots: tuple[Server, Bots]) -> Server:
    return stack_with_bots[0]


@pytest.fixture(scope="module")
def web_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """One server with its web port (the built client) and a bot worker per module, for the
    browser tests of the table."""
    from tests.web_table_support import start_stack

    server, bots = start_stack(tmp_path_factory.mktemp("web_stack"))
    yield server
    bots.stop()
    server.stop()


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



@pytest.fixture(scope="session")
def redis_cluster() -> Iterator[Any]:
    """A private Redis Cluster (three primaries, a replica each) for the session; tests on it
    use key prefixes of their own and kill none of its nodes."""
    from tests.cluster_support import cluster_fixture

    yield from cluster_fixture()
