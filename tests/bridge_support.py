"""Bridge test helpers: the JSON lines a bridge writes and waiting for its programs to finish."""

from __future__ import annotations

import contextlib
import json
import time
from pathlib import Path
from typing import Any

from croupier.v1 import croupier_pb2 as pb

from tests.support import Client


def wait_finished(address: str, table_ids: list[str], timeout: float = 60.0) -> list[pb.TableView]:
    client = Client(address)
    try:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            views = [client.view(t) for t in table_ids]
            if all(v.table.status == pb.TABLE_STATUS_FINISHED for v in views):
                return views
            time.sleep(0.1)
        raise AssertionError(f"tables {table_ids} not finished after {timeout} s")
    finally:
        client.close()


def json_lines(path: Path) -> list[dict[str, Any]]:
    out = []
    for line in path.read_text().splitlines():
        with contextlib.suppress(ValueError):
            out.append(json.loads(line))
    return out
