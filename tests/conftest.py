"""Shared fixtures. Kept small on purpose; the helpers live in tests/support.py.

- `server`: one real `croupier serve` process for the whole session (SQLite file in a temp
  dir, free loopback port, ready when its health service says SERVING). Tests sharing it must
  create their own tables and not stop it.
- `client`: a `tests.support.Client` connected to that server, closed after the test.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support import Client, ServerProcess


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
