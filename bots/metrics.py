"""Prometheus metrics of the bot runners (`croupier bots` and SDK bots), served at /metrics.

The metric objects always exist (an observation costs a dict lookup and an add), so the code
that counts never asks whether metrics are on; only the HTTP endpoint is optional
(`--metrics-port`, 0 = off). `croupier bots` with several worker processes puts them in
prometheus-client's multiprocess mode (a directory of memory-mapped files, named in the
environment they inherit, set before they import this) and its supervisor serves the sum.
Bots never import `service`: this module is the bot side of what service.server_metrics is for the
server.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram, start_http_server

DECISION_BUCKETS = (0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30)

DECISION_SECONDS = Histogram(
    "croupier_bot_decision_seconds",
    "Time a bot took to choose a move, by level (or entrant) and game",
    ["level", "game"],
    buckets=DECISION_BUCKETS,
)
FALLBACKS = Counter(
    "croupier_bot_fallbacks",
    "Moves the runner played in place of its bot's answer, by level (or entrant), game and "
    "reason (crashed, garbage, illegal, late)",
    ["level", "game", "reason"],
)


def serve_http(port: int, host: str = "") -> None:
    """Starts /metrics for this process on a daemon thread (host "": every interface)."""
    start_http_server(port, addr=host or "0.0.0.0")


def serve_multiprocess(port: int, host: str, path: str) -> None:
    """/metrics summing every process that wrote to `path`."""
    from prometheus_client import multiprocess

    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry, path=path)
    start_http_server(port, addr=host or "0.0.0.0", registry=registry)
