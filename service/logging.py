"""structlog set-up: JSON lines for machines when stderr is not a terminal, readable otherwise.

Log lines never carry a token or a hidden card: handlers log table, seat, version, status and
the move only as a spectator may see it; as a last guard, fields named like secrets are dropped.
"""

from __future__ import annotations

import datetime
import logging
import sys
import time
from collections.abc import MutableMapping
from typing import Any

import orjson
import structlog

SECRET_KEYS = frozenset({"token", "authorization", "metadata", "hand", "hands", "state", "seed"})


def _drop_secrets(_: Any, __: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    for key in SECRET_KEYS & event.keys():
        event[key] = "[redacted]"
    return event


class _UtcIsoStamper:
    """structlog's TimeStamper(fmt="iso", utc=True), the same text for less: the date and time
    of day are formatted once a second. Every RPC logs a line, so this is on every call."""

    def __init__(self) -> None:
        self._second = -1
        self._prefix = ""

    def __call__(self, _: Any, __: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
        now = time.time()
        second = int(now)
        if second != self._second:
            moment = datetime.datetime.fromtimestamp(second, tz=datetime.UTC)
            self._prefix = moment.strftime("%Y-%m-%dT%H:%M:%S")
            self._second = second
        micros = int((now - second) * 1_000_000)
        event["timestamp"] = f"{self._prefix}.{micros:06d}Z" if micros else f"{self._prefix}Z"
        return event


def _json_fallback(obj: Any) -> Any:
    """What structlog's JSONRenderer does with values JSON does not know."""
    try:
        return obj.__structlog__()
    except AttributeError:
        return repr(obj)


def configure(level: str = "info", json_lines: bool | None = None) -> None:
    """Configures structlog for this process; `json_lines` None: JSON unless stderr is a TTY."""
    numeric = logging.getLevelName(level.upper())
    if not isinstance(numeric, int):
        raise ValueError(f"unknown log level {level!r}; use debug, info, warning or error")
    if json_lines is None:
        json_lines = not sys.stderr.isatty()
    # tracebacks without local variables: locals may hold game states and tokens
    renderer: Any = (
        # orjson: bytes straight to stderr's buffer, about 4x faster than json + text I/O
        structlog.processors.JSONRenderer(serializer=orjson.dumps, default=_json_fallback)
        if json_lines
        else structlog.dev.ConsoleRenderer(
            colors=sys.stderr.isatty(), exception_formatter=structlog.dev.plain_traceback
        )
    )
    tracebacks: Any = (
        structlog.processors.ExceptionRenderer(
            structlog.tracebacks.ExceptionDictTransformer(show_locals=False)
        )
        if json_lines
        else structlog.dev.set_exc_info
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            _UtcIsoStamper(),
            _drop_secrets,
            tracebacks,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=(
            structlog.BytesLoggerFactory(file=sys.stderr.buffer)
            if json_lines
            else structlog.WriteLoggerFactory(file=sys.stderr)
        ),
        cache_logger_on_first_use=True,
    )


def get_logger(name: str = "croupier") -> Any:
    return structlog.get_logger(name)
