"""structlog set-up for bot workers.

Bots must not import `service`, so this mirrors the server's logging set-up: JSON lines when
stderr is not a terminal (for log collectors), a readable console format when it is. Like the
server's, tracebacks never show local variables (they hold seat tokens), and fields named like
secrets are masked as a last guard.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import MutableMapping
from typing import Any

import structlog

SECRET_KEYS = frozenset({"token", "authorization", "metadata", "hand", "hands", "state", "seed"})


def _drop_secrets(_: Any, __: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    for key in SECRET_KEYS & event.keys():
        event[key] = "[redacted]"
    return event


def configure(level: str | None = None, json_lines: bool | None = None) -> None:
    """Route structlog to stderr at `level` (CROUPIER_LOG_LEVEL, default info);
    `json_lines` None: JSON unless stderr is a terminal."""
    name = (level or os.environ.get("CROUPIER_LOG_LEVEL") or "info").upper()
    numeric = logging.getLevelName(name)
    if not isinstance(numeric, int):
        numeric = logging.INFO
    if json_lines is None:
        json_lines = not sys.stderr.isatty()
    renderer: Any = (
        structlog.processors.JSONRenderer()
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
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            _drop_secrets,
            tracebacks,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.WriteLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,
    )
