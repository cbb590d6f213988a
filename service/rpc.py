"""The wrapping every RPC handler shares: credentials read from metadata, TableError and
store failures mapped to gRPC status codes with their reason codes (a google.rpc.ErrorInfo in
the status details), one log line per call (never a token)."""

from __future__ import annotations

import asyncio
import functools
import time
import traceback
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

import grpc
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

from common.logging import get_logger
from service import server_metrics
from service.reasons import DOMAIN, FALLBACK, Reason
from service.store import StoreUnavailable, WriteUnconfirmed
from service.tables import Code, TableError
from service.validation import MAX_TABLE_ID_CHARS

log = get_logger("croupier.rpc")

Req = TypeVar("Req")
Resp = TypeVar("Resp")

GRPC_CODE = {
    Code.INVALID_ARGUMENT: grpc.StatusCode.INVALID_ARGUMENT,
    Code.FAILED_PRECONDITION: grpc.StatusCode.FAILED_PRECONDITION,
    Code.ABORTED: grpc.StatusCode.ABORTED,
    Code.NOT_FOUND: grpc.StatusCode.NOT_FOUND,
    Code.UNAUTHENTICATED: grpc.StatusCode.UNAUTHENTICATED,
    Code.PERMISSION_DENIED: grpc.StatusCode.PERMISSION_DENIED,
    Code.RESOURCE_EXHAUSTED: grpc.StatusCode.RESOURCE_EXHAUSTED,
    Code.UNAVAILABLE: grpc.StatusCode.UNAVAILABLE,
}
QUIET_METHODS = frozenset({"ListTables", "ListGames", "Ping"})

def bearer_token(context: grpc.aio.ServicerContext) -> str | None:
    """The token from `authorization: Bearer <token>` metadata; None when absent."""
    for key, value in context.invocation_metadata() or ():
        if key.lower() != "authorization":
            continue
        if isinstance(value, bytes):
            value = value.decode("latin-1")
        scheme, _, token = value.strip().partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise TableError(
                Code.UNAUTHENTICATED,
                "authorization metadata must read 'Bearer <token>'",
                reason=Reason.BAD_AUTHORIZATION,
            )
        return token.strip()
    return None


class _Failure(Exception):
    def __init__(
        self,
        code: grpc.StatusCode,
        message: str,
        log_message: str,
        reason: str,
        meta: dict[str, str | int | float] | None = None,
    ):
        self.code = code
        self.message = message
        self.log_message = log_message
        self.reason = reason
        self.meta = meta or {}

    def status_details(self) -> tuple[tuple[str, str | bytes], ...]:
        return status_details(self.code, self.message, self.reason, self.meta)


def status_details(
    code: grpc.StatusCode,
    message: str,
    reason: str,
    meta: dict[str, str | int | float] | None = None,
) -> tuple[tuple[str, str | bytes], ...]:
    """The trailing metadata that carries a refusal's reason: a google.rpc.Status (the same
    code and message) whose details hold one ErrorInfo, under grpc-status-details-bin."""
    info = error_details_pb2.ErrorInfo(
        reason=reason,
        domain=DOMAIN,
        metadata={k: _meta_text(v) for k, v in (meta or {}).items()},
    )
    detail = any_pb2.Any()
    detail.Pack(info)
    status = status_pb2.Status(code=code.value[0], message=message, details=[detail])
    return tuple(rpc_status.to_status(status).trailing_metadata)


def _meta_text(value: str | int | float) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _classify(exc: BaseException, method: str) -> _Failure:
    if isinstance(exc, TableError):
        reason = exc.reason or FALLBACK.get(exc.code.name, Reason.INTERNAL)
        return _Failure(GRPC_CODE[exc.code], exc.message, exc.log_message, reason, exc.meta)
    if isinstance(exc, WriteUnconfirmed):
        message = (
            "the write reached the table store but too few of its replicas confirmed it in "
            "time, so it is not acknowledged (a failover could lose it); retry: a SubmitMove "
            "sent again with the same move and expected_version is answered as the first once "
            "the replicas hold it, or played if it was lost"
        )
        return _Failure(
            grpc.StatusCode.UNAVAILABLE, message, str(exc), Reason.STORE_UNAVAILABLE
        )
    if isinstance(exc, StoreUnavailable):
        message = (
            "the table store is unreachable; retry (a SubmitMove sent again with the same "
            "move and expected_version is answered as the first if that one landed)"
        )
        return _Failure(
            grpc.StatusCode.UNAVAILABLE, message, str(exc), Reason.STORE_UNAVAILABLE
        )
    # Unexpected: log where it happened, not the message (it might quote a state's cards).
    frames = traceback.extract_tb(exc.__traceback__)
    log.error(
        "rpc_internal_error",
        method=method,
        error=type(exc).__name__,
        where=[f"{f.filename}:{f.lineno} in {f.name}" for f in frames[-8:]],
    )
    message = f"internal error in {method}; see the server log"
    return _Failure(grpc.StatusCode.INTERNAL, message, message, Reason.INTERNAL)


def unary(
    fn: Callable[[Any, Req, grpc.aio.ServicerContext, dict[str, Any]], Awaitable[Resp]],
) -> Callable[[Any, Req, grpc.aio.ServicerContext], Awaitable[Resp]]:
    """Maps TableError to its status code and logs one line per call."""
    method = fn.__name__

    @functools.wraps(fn)
    async def wrapper(self: Any, request: Req, context: grpc.aio.ServicerContext) -> Resp:
        fields: dict[str, Any] = {}
        start = time.perf_counter()
        code = grpc.StatusCode.OK
        failure: _Failure | None = None
        try:
            return await fn(self, request, context, fields)
        except asyncio.CancelledError:
            code = grpc.StatusCode.CANCELLED
            raise
        except Exception as exc:
            failure = _classify(exc, method)
            code = failure.code
        finally:
            _log_rpc(method, code, start, fields, failure)
        await context.abort(failure.code, failure.message, failure.status_details())
        raise AssertionError("unreachable")  # abort raises

    return wrapper


def streaming(
    fn: Callable[[Any, Req, grpc.aio.ServicerContext, dict[str, Any]], AsyncIterator[Resp]],
) -> Callable[[Any, Req, grpc.aio.ServicerContext], AsyncIterator[Resp]]:
    method = fn.__name__

    @functools.wraps(fn)
    async def wrapper(
        self: Any, request: Req, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[Resp]:
        fields: dict[str, Any] = {}
        start = time.perf_counter()
        code = grpc.StatusCode.OK
        failure: _Failure | None = None
        server_metrics.STREAMS.inc()
        try:
            async for item in fn(self, request, context, fields):
                yield item
        except (asyncio.CancelledError, GeneratorExit):
            code = grpc.StatusCode.CANCELLED
            raise
        except Exception as exc:
            failure = _classify(exc, method)
            code = failure.code
        finally:
            server_metrics.STREAMS.dec()
            _log_rpc(method, code, start, fields, failure)
        if failure is not None:
            await context.abort(failure.code, failure.message, failure.status_details())

    return wrapper


def _log_rpc(
    method: str,
    code: grpc.StatusCode,
    start: float,
    fields: dict[str, Any],
    failure: _Failure | None,
) -> None:
    seconds = time.perf_counter() - start
    server_metrics.observe_rpc(method, code.name, seconds)
    duration_ms = round(seconds * 1000, 3)
    extra = (
        {"error": failure.log_message, "reason": failure.reason} if failure is not None else {}
    )
    table = fields.get("table")
    if isinstance(table, str) and len(table) > MAX_TABLE_ID_CHARS:  # no table has such an id
        fields["table"] = f"{table[:MAX_TABLE_ID_CHARS]}... ({len(table)} characters)"
    if code == grpc.StatusCode.INTERNAL:
        level = log.warning
    elif code == grpc.StatusCode.OK and method in QUIET_METHODS:
        level = log.debug  # lobby polls by every bot worker, every second: noise at info
    else:
        level = log.info
    level("rpc", method=method, code=code.name, duration_ms=duration_ms, **fields, **extra)


