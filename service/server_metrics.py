"""Prometheus metrics of the server, served over HTTP at /metrics (the bot runners' own are in
bots.metrics: bots never import the service).

The metric objects always exist (updating one costs a dict lookup and an add), so the code
that counts never asks whether metrics are on; only the HTTP endpoint is optional
(`--metrics-port`, 0 = off).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

from prometheus_client import (
    Counter,
    Gauge,
    Histogram,
    start_http_server,
)

# seconds: a move over loopback takes well under a millisecond, a stream can last an hour
RPC_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10, 60)

RPCS = Counter("croupier_rpcs", "RPCs answered, by method and status code", ["method", "code"])
RPC_SECONDS = Histogram(
    "croupier_rpc_duration_seconds",
    "RPC duration (for StreamTable: how long the stream stayed open), by method and code",
    ["method", "code"],
    buckets=RPC_BUCKETS,
)
MOVES = Counter(
    "croupier_moves", "Moves accepted, by game: rate() gives moves per second", ["game"]
)
STREAMS = Gauge(
    "croupier_stream_subscribers", "StreamTable calls open on this server", multiprocess_mode="sum"
)
TABLES = Gauge(
    "croupier_tables",
    "Stored tables by game and status (refreshed every few seconds; shared by all replicas "
    "of one store)",
    ["game", "status"],
    multiprocess_mode="max",
)

STORE_UP = Gauge(
    "croupier_store_up",
    "1 while this server reaches its store (checked every few seconds), else 0: a server that "
    "cannot reach it answers UNAVAILABLE and is not ready",
    multiprocess_mode="min",
)


# labelled children by label values: labels() takes a lock and builds a key on every call,
# and every RPC counts itself
_RPC_CHILDREN: dict[tuple[str, str], tuple[Any, Any]] = {}
_MOVE_CHILDREN: dict[str, Any] = {}


def observe_rpc(method: str, code: str, seconds: float) -> None:
    children = _RPC_CHILDREN.get((method, code))
    if children is None:
        children = (RPCS.labels(method, code), RPC_SECONDS.labels(method, code))
        _RPC_CHILDREN[method, code] = children
    children[0].inc()
    children[1].observe(seconds)


def count_move(game: str) -> None:
    child = _MOVE_CHILDREN.get(game)
    if child is None:
        child = _MOVE_CHILDREN[game] = MOVES.labels(game)
    child.inc()


def serve_http(port: int, host: str = "") -> None:
    """Starts /metrics for this process on a daemon thread (host "": every interface)."""
    start_http_server(port, addr=host or "0.0.0.0")


async def refresh_tables_forever(
    count: Callable[[], Awaitable[dict[tuple[str, str], int]]], interval: float = 5.0
) -> None:
    """Sets the tables gauge from the store's counts now and then: cheap (one grouped count),
    rather than on every scrape (the scrape runs on another thread, the store on the loop)."""
    seen: set[tuple[str, str]] = set()
    while True:
        with contextlib.suppress(Exception):  # a failed round leaves the last values
            counts = await count()
            for key in seen - counts.keys():
                TABLES.labels(*key).set(0)
            for key, n in counts.items():
                TABLES.labels(*key).set(n)
            seen |= counts.keys()
        await asyncio.sleep(interval)

