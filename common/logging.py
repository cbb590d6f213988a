"""structlog set-up for every croupier process: server, `croupier run` and bot workers.

Each event goes to the sinks that want it: stderr, the console (JSON lines when it is not a
terminal, for collectors; readable lines when it is), at the console's level, and with a log
file, JSON lines of every event down to debug. On a terminal, the events that come once per
call, bot decision or seat (DETAIL) count as debug, so that start and stop, warnings, errors
and the tables' lifecycle stay in sight; JSON sinks keep them at their own level.

Other libraries' `logging` records (hypercorn, h2, asyncio's "Task exception was never
retrieved"), Python warnings and uncaught exceptions (main thread, other threads, unraisable)
take the same way: one event each, the traceback inside it, never lines of their own.

Log lines never carry a token or a hidden card: callers log table, seat, version, status and
moves only as a spectator may see them; as a last guard, fields named like secrets are masked,
bearer tokens in exception texts too, and credentials in any URL any field or exception text
quotes (common.masking: a store URL's password). Tracebacks never show local variables (they may
hold states and tokens). It lives in `common`, below the server, the bots and the clients, so that
every role imports the one set-up without importing another role.
"""

from __future__ import annotations

import datetime
import io
import logging
import os
import re
import sys
import threading
import time
from collections.abc import Callable, MutableMapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

import orjson
import structlog

from common.masking import masked

LEVELS = ("debug", "info", "warning", "error")
SECRET_KEYS = frozenset({
    "token", "authorization", "metadata", "hand", "hands", "state", "seed",
    "key", "api_key", "password", "secret",
})
# once per RPC, bot decision or seat: a terminal shows them at debug only
DETAIL = frozenset(
    {
        "rpc",
        "decision",
        "seat_claimed",
        "claim_retried",
        "seat_done",
        "seat_left",
        "stream_ended_early",
        "version_conflict",
        "submit_retry",
        "seats_opened_to_bots",
        "turns_timed_out",
        "tables_closed_as_abandoned",  # a round's count: each table has its table_abandoned
        "web_request_refused",
    }
)
# other libraries' records below this are their internals (h2 frames, hypercorn's "Running on")
FOREIGN_LEVEL = logging.WARNING
MAX_EXCEPTION_TEXT = 300  # an exception's message, cut: some quote the bytes a client sent
_NUMBER = {"debug": 10, "info": 20, "warning": 30, "warn": 30, "error": 40, "critical": 50}
_BEARER = re.compile(r"(?i)(bearer\s+)[^\s'\"\\]+")
# a bytes literal in a library's message quotes what a client sent (HPACK blocks hold tokens)
_BYTES = re.compile(r"(?<!\w)(?:b'(?:[^'\\]|\\.)*'|b\"(?:[^\"\\]|\\.)*\")")


def level_number(name: str) -> int:
    number = _NUMBER.get(name.lower())
    if number is None:
        raise ValueError(f"unknown log level {name!r}; use {', '.join(LEVELS)}")
    return number


def _drop_secrets(_: Any, __: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    for key in SECRET_KEYS & event.keys():
        event[key] = "[redacted]"
    for key, value in event.items():  # a setting's URL, an error quoting one
        if isinstance(value, str):
            event[key] = masked(value)
        elif isinstance(value, list | tuple) and any(isinstance(v, str) for v in value):
            event[key] = [masked(v) if isinstance(v, str) else v for v in value]
    return event


def scrub(text: str) -> str:
    """An exception's or a library's text without bearer tokens, cut to a readable length."""
    text = _BYTES.sub(lambda m: f"[{len(m.group())} characters of bytes]", text)
    text = masked(_BEARER.sub(r"\1[redacted]", text))
    if len(text) > MAX_EXCEPTION_TEXT:
        text = f"{text[:MAX_EXCEPTION_TEXT]}... ({len(text)} characters)"
    return text


def _scrub_exceptions(found: Any) -> None:
    """ExceptionDictTransformer's output, scrubbed in place: a chain of exceptions, each with
    its message; a group's members are chains of their own."""
    if isinstance(found, list):
        for item in found:
            _scrub_exceptions(item)
    elif isinstance(found, dict):
        if isinstance(found.get("exc_value"), str):
            found["exc_value"] = scrub(found["exc_value"])
        _scrub_exceptions(found.get("exceptions"))


class _UtcIsoStamper:
    """structlog's TimeStamper(fmt="iso", utc=True), the same text for less: the date and time
    of day are formatted once a second. Every RPC logs an event, so this is on every call."""

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


class _JsonLines:
    """Renders an event as one JSON line, its exception (if any) as a field of it."""

    def __init__(self) -> None:
        self._exceptions = structlog.processors.ExceptionRenderer(
            structlog.tracebacks.ExceptionDictTransformer(show_locals=False)
        )

    def __call__(self, logger: Any, method: str, event: MutableMapping[str, Any]) -> bytes:
        if "exc_info" in event:
            event = self._exceptions(logger, method, event)
            _scrub_exceptions(event.get("exception"))
        return orjson.dumps(event, default=_json_fallback) + b"\n"


def _readable_traceback(sio: Any, exc_info: Any) -> None:
    text = io.StringIO()
    structlog.dev.plain_traceback(text, exc_info)
    sio.write(masked(_BEARER.sub(r"\1[redacted]", text.getvalue())))


class _Readable:
    """Renders an event as structlog's console line (a traceback on the lines below)."""

    def __init__(self, colors: bool) -> None:
        self._render = structlog.dev.ConsoleRenderer(
            colors=colors, exception_formatter=_readable_traceback
        )

    def __call__(self, logger: Any, method: str, event: MutableMapping[str, Any]) -> bytes:
        return (self._render(logger, method, event) + "\n").encode("utf-8", "replace")


class _Sink:
    """One output: the events from `level` up, rendered by `render`, written by `write`.
    With `detail_as_debug`, DETAIL events below warning count as debug."""

    def __init__(
        self,
        level: int,
        render: Callable[[Any, str, MutableMapping[str, Any]], bytes],
        write: Callable[[bytes], None],
        detail_as_debug: bool = False,
    ) -> None:
        self.level = level
        self.render = render
        self.write = write
        self.detail_as_debug = detail_as_debug

    def wants(self, level: int, name: Any) -> bool:
        if self.detail_as_debug and level < logging.WARNING and name in DETAIL:
            level = logging.DEBUG
        return level >= self.level


_NOTHING: tuple[tuple[()], dict[str, Any]] = ((), {})


class _FanOut:
    """The last processor: renders and writes the event for every sink that wants it; the
    logger behind (structlog's ReturnLogger) gets nothing left to do."""

    def __init__(self, sinks: Sequence[_Sink]) -> None:
        self.sinks = tuple(sinks)

    def __call__(self, logger: Any, method: str, event: MutableMapping[str, Any]) -> Any:
        level = _NUMBER.get(event.get("level", method), logging.INFO)
        name = event.get("event")
        targets = [s for s in self.sinks if s.wants(level, name)]
        last = len(targets) - 1
        for i, sink in enumerate(targets):
            line = sink.render(logger, method, event if i == last else dict(event))  # renderers
            try:  # pop keys
                sink.write(line)
            except (OSError, ValueError):  # a closed or full output loses the line, not the
                continue  # call that logged it
        return _NOTHING


def _stream_writer(stream: Any) -> Callable[[bytes], None]:
    buffer = getattr(stream, "buffer", None)

    if buffer is None:  # a text-only stream (pytest's capture)

        def write_text(line: bytes) -> None:
            stream.write(line.decode("utf-8", "replace"))
            stream.flush()

        return write_text

    def write(line: bytes) -> None:
        buffer.write(line)
        buffer.flush()

    return write


def _file_writer(path: str) -> Callable[[bytes], None]:
    """Appends each line with one write: processes sharing the file (croupier run, its bot
    workers) never split each other's lines."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o640)

    def write(line: bytes) -> None:
        view = memoryview(line)
        while view:
            view = view[os.write(fd, view) :]

    return write


class _ToStructlog(logging.Handler):
    """Hands other libraries' `logging` records (hypercorn, h2, asyncio, warnings) to the sinks."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            try:
                text = record.getMessage()
            except Exception:  # a library's bad format arguments
                text = str(record.msg)
            fields: dict[str, Any] = {"logger": record.name}
            if record.exc_info and record.exc_info[0] is not None:
                fields["exc_info"] = record.exc_info
            level = min(max(record.levelno // 10 * 10, logging.DEBUG), logging.CRITICAL)
            log = structlog.get_logger("foreign")
            try:
                log.log(level, scrub(text), **fields)
            except Exception as e:  # its exception would not render: say so, in one line
                fields.pop("exc_info", None)
                log.log(level, scrub(text), render_error=type(e).__name__, **fields)
        except Exception:
            pass  # never logging's plain "--- Logging error ---" lines


def _log_uncaught(
    event: str,
    kind: type[BaseException] | None,
    value: BaseException | None,
    tb: TracebackType | None,
    **fields: Any,
) -> None:
    log = structlog.get_logger("croupier.uncaught")
    if kind is not None and issubclass(kind, KeyboardInterrupt):
        log.warning("interrupted", **fields)
        return
    exc_info = (kind, value, tb) if kind is not None else None
    log.error(event, exc_info=exc_info, **fields)


def _thread_hook(args: threading.ExceptHookArgs) -> None:
    if args.exc_type is SystemExit:
        return  # what threading's own hook does
    name = args.thread.name if args.thread is not None else None
    _log_uncaught("thread_exception", args.exc_type, args.exc_value, args.exc_traceback,
                  thread=name)


def _main_hook(
    kind: type[BaseException], value: BaseException, tb: TracebackType | None
) -> None:
    _log_uncaught("uncaught_exception", kind, value, tb)


def _unraisable_hook(unraisable: Any) -> None:
    value = unraisable.exc_value
    _log_uncaught(
        "unraisable_exception",
        unraisable.exc_type,
        value,
        unraisable.exc_traceback,
        message=scrub(unraisable.err_msg or "Exception ignored in"),
        where=scrub(repr(unraisable.object)),
    )


def _route_foreign() -> None:
    root = logging.getLogger()
    for handler in list(root.handlers):
        if isinstance(handler, _ToStructlog):
            root.removeHandler(handler)
    root.addHandler(_ToStructlog())
    root.setLevel(FOREIGN_LEVEL)
    logging.captureWarnings(True)
    threading.excepthook = _thread_hook
    sys.excepthook = _main_hook
    sys.unraisablehook = _unraisable_hook


def configure(
    level: str | None = None,
    json_lines: bool | None = None,
    log_file: str | None = None,
    route_foreign: bool = True,
) -> None:
    """Sets up this process's logging.

    `level`: the console's (stderr's) level, default CROUPIER_LOG_LEVEL or info; `json_lines`
    None: JSON unless stderr is a terminal; `log_file` (default CROUPIER_LOG_FILE, "" = none):
    every event from debug up as JSON lines, appended. Raises ValueError for an unknown level
    and OSError for a log file that cannot be opened (the console is set up by then)."""
    console_level = level_number(level or os.environ.get("CROUPIER_LOG_LEVEL") or "info")
    if json_lines is None:
        json_lines = not sys.stderr.isatty()
    if log_file is None:
        log_file = os.environ.get("CROUPIER_LOG_FILE", "")
    console = (
        _Sink(console_level, _JsonLines(), _stream_writer(sys.stderr))
        if json_lines
        else _Sink(
            console_level,
            _Readable(colors=sys.stderr.isatty() and not os.environ.get("NO_COLOR")),
            _stream_writer(sys.stderr),
            detail_as_debug=True,
        )
    )
    sinks = [console]
    _apply(sinks)
    if route_foreign:
        _route_foreign()
    if log_file:
        sinks.append(_Sink(logging.DEBUG, _JsonLines(), _file_writer(log_file)))
        _apply(sinks)


def _apply(sinks: Sequence[_Sink]) -> None:
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            _UtcIsoStamper(),
            _drop_secrets,
            _FanOut(sinks),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(min(s.level for s in sinks)),
        logger_factory=structlog.ReturnLoggerFactory(),
        cache_logger_on_first_use=True,
    )


def get_logger(name: str = "croupier") -> Any:
    return structlog.get_logger(name)
