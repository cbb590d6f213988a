"""structlog set-up for bot workers.

Bots must not import `service`, so this mirrors the server's logging set-up: JSON lines when
stderr is not a terminal (for log collectors), a readable console format when it is.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import TextIO

import structlog


def configure(level: str | None = None, stream: TextIO | None = None) -> None:
    """Route structlog to `stream` (stderr) at `level` (CROUPIER_LOG_LEVEL, default info)."""
    stream = stream or sys.stderr
    name = (level or os.environ.get("CROUPIER_LOG_LEVEL") or "info").upper()
    numeric = logging.getLevelName(name)
    if not isinstance(numeric, int):
        numeric = logging.INFO
    processors: list[structlog.typing.Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    if stream.isatty():
        processors.append(structlog.dev.ConsoleRenderer())
    else:
        processors += [structlog.processors.dict_tracebacks, structlog.processors.JSONRenderer()]
    structlog.configure(
        processors=processors,
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.PrintLoggerFactory(file=stream),
        cache_logger_on_first_use=False,
    )
