"""The server's logging: the set-up every croupier process shares (bots.logging, which bots
may use without importing `service`), under the name the server's modules import.

stderr is the console: JSON lines when it is not a terminal, at --log-level (info: one event
per RPC, per table created and finished, start and stop); readable lines when it is, where the
per-call and per-decision events count as debug. --log-file adds every event as JSON lines.
"""

from __future__ import annotations

from bots.logging import (
    DETAIL,
    LEVELS,
    SECRET_KEYS,
    _UtcIsoStamper,
    configure,
    get_logger,
    level_number,
)

__all__ = [
    "DETAIL",
    "LEVELS",
    "SECRET_KEYS",
    "_UtcIsoStamper",
    "configure",
    "get_logger",
    "level_number",
]
