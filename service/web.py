"""Browsers without a proxy: croupier.v1 over Connect, gRPC-Web and gRPC on a second port.

The protocols come from the `connectrpc` library (HTTP/1.1 and HTTP/2 via hypercorn, in the
gRPC server's event loop). Each endpoint calls the very same `CroupierServicer` method the
native gRPC server calls, through `_Context`, a small adapter that gives it what it reads from
a `grpc.aio.ServicerContext` (the metadata) and turns its `abort` into a `ConnectError` with
the same code, message and details (the reason code). No rule, view or error text lives here.
The same port serves the built reference client (web/dist) for every path outside the API,
compressed and cached as `web_static` says. What hypercorn and connectrpc would get wrong with
malformed input is fixed in `web_h2` (HTTP/2) and `web_guard`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn

import grpc
from connectrpc.code import Code
from connectrpc.compat import google_protobuf_codecs
from connectrpc.errors import ConnectError
from connectrpc.method import IdempotencyLevel, MethodInfo, StreamType
from connectrpc.request import RequestContext
from connectrpc.server import ConnectASGIApplication, Endpoint
from croupier.v1 import croupier_pb2 as pb
from google.protobuf import message_factory
from google.rpc import status_pb2
from hypercorn.asyncio import serve as hypercorn_serve
from hypercorn.config import Config
from protobuf.wkt import Any as WktAny  # connectrpc's protobuf runtime (protobuf-py)
from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Receive, Scope, Send

from common.logging import get_logger
from service import web_h2, web_static
from service.web_guard import ClearProtocolErrors, EagerBody, needs_http2, refuse_http1_grpc

SERVICE = pb.DESCRIPTOR.services_by_name["Croupier"]
PREFIX = f"/{SERVICE.full_name}/"
# reads: Connect lets browsers send them as cacheable GETs
NO_SIDE_EFFECTS = frozenset({"ListGames", "ListTables", "GetView", "Ping", "ListRatings"})
DEFAULT_DIST = Path(__file__).resolve().parent.parent / "web" / "dist"
# headers a browser script must be allowed to send and to read for Connect and gRPC-Web
ALLOW_HEADERS = [
    "authorization",
    "content-type",
    "connect-protocol-version",
    "connect-timeout-ms",
    "grpc-timeout",
    "x-grpc-web",
    "x-user-agent",
]
MAX_REQUEST_BYTES = 1 << 20  # the default of the gRPC port's grpc.max_receive_message_length
STATUS_DETAILS_KEY = "grpc-status-details-bin"
EXPOSE_HEADERS = ["grpc-status", "grpc-message", STATUS_DETAILS_KEY]

log = get_logger("croupier.web")


def _connect_code(code: grpc.StatusCode) -> Code:
    return Code.CANCELED if code == grpc.StatusCode.CANCELLED else Code[code.name]


class _Context:
    """The part of grpc.aio.ServicerContext the servicer uses, over a Connect request."""

    def __init__(self, ctx: RequestContext[Any, Any]) -> None:
        self._ctx = ctx

    def invocation_metadata(self) -> Sequence[tuple[str, str]]:
        return list(self._ctx.request_headers.items())

    def peer(self) -> str:
        """As gRPC names peers ('ipv4:1.2.3.4:5678'), so per-client limits count alike."""
        address = self._ctx.client_address
        return f"ipv4:{address}" if address else "unknown"

    def peer_identities(self) -> None:
        return None  # no client certificates on the web port

    def done(self) -> bool:
        """Connect gives no "client left" flag: its handler task is cancelled instead."""
        return False

    async def abort(
        self,
        code: grpc.StatusCode,
        details: str = "",
        trailing_metadata: Sequence[tuple[str, str | bytes]] = (),
    ) -> NoReturn:
        """The status details the servicer sends as trailing metadata (its reason code, an
        ErrorInfo) become the ConnectError's details: Connect's JSON `details`, gRPC-Web's
        grpc-status-details-bin."""
        extra: list[WktAny] = []
        for key, value in trailing_metadata:
            if key == STATUS_DETAILS_KEY and isinstance(value, bytes):
                extra.extend(
                    WktAny(type_url=d.type_url, value=d.value)
                    for d in status_pb2.Status.FromString(value).details
                )
        raise ConnectError(_connect_code(code), details, details=extra)


def method_info(name: str) -> MethodInfo[Any, Any]:
    """connectrpc's description of one croupier.v1.Croupier method (clients use it too)."""
    m = SERVICE.methods_by_name[name]
    return MethodInfo(
        name=m.name,
        service_name=SERVICE.full_name,
        input=message_factory.GetMessageClass(m.input_type),
        output=message_factory.GetMessageClass(m.output_type),
        idempotency_level=(
            IdempotencyLevel.NO_SIDE_EFFECTS
            if m.name in NO_SIDE_EFFECTS
            else IdempotencyLevel.UNKNOWN
        ),
        stream_type=StreamType.SERVER_STREAM if m.server_streaming else StreamType.UNARY,
    )


class _Service:
    """Holds the servicer; `endpoints` is what connectrpc's generated code would produce."""

    def __init__(self, servicer: Any) -> None:
        self.servicer = servicer

    def endpoints(self, _: Any = None) -> Mapping[str, Any]:
        out: dict[str, Endpoint[Any, Any]] = {}
        for m in SERVICE.methods:
            info = method_info(m.name)
            handler = getattr(self.servicer, m.name)
            if m.server_streaming:
                out[PREFIX + m.name] = Endpoint.server_stream(info, _streamer(handler))
            else:
                out[PREFIX + m.name] = Endpoint.unary(info, _caller(handler))
        return out


def _caller(handler: Any) -> Any:
    async def call(request: Any, ctx: RequestContext[Any, Any]) -> Any:
        return await handler(request, _Context(ctx))

    return call


def _streamer(handler: Any) -> Any:
    async def stream(request: Any, ctx: RequestContext[Any, Any]) -> AsyncIterator[Any]:
        async for item in handler(request, _Context(ctx)):
            yield item

    return stream


class _Api(ConnectASGIApplication[_Service]):
    @property
    def path(self) -> str:
        return PREFIX


def build_app(
    servicer: Any,
    cors_origins: Sequence[str] = (),
    dist: Path = DEFAULT_DIST,
    max_request_bytes: int = MAX_REQUEST_BYTES,
) -> ASGIApp:
    """The ASGI app: the API under /croupier.v1.Croupier/, the built web client elsewhere.
    Requests above `max_request_bytes` are refused, as on the gRPC port (--max-message-bytes)."""
    service = _Service(servicer)
    api = _Api(
        service=service,
        endpoints=_Service.endpoints,
        codecs=google_protobuf_codecs(),
        read_max_bytes=max_request_bytes,
        interceptors=[ClearProtocolErrors()],
    )

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await api(scope, receive, send)
            return
        if scope["type"] == "websocket":  # nothing here speaks WebSocket: HTTP 403
            await send({"type": "websocket.close"})
            return
        body = EagerBody(receive, max_request_bytes)
        try:
            await route(scope, body.receive, send)
        finally:
            body.finish()

    async def route(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["path"].startswith(PREFIX):
            try:
                scope["query_string"].decode()
            except UnicodeDecodeError:  # HTTP/2 lets raw bytes through; connectrpc would fail
                await _connect_error(send, "the query string is not UTF-8 (percent-encode it)")
                return
            if needs_http2(scope):
                await refuse_http1_grpc(send)
                return
            await api(scope, receive, send)
            return
        if not dist.is_dir():
            await _plain(send, 404, "the web client is not built; run `make web`\n")
            return
        await web_static.serve(dist, scope, receive, send)

    if not cors_origins:
        return app
    return CORSMiddleware(
        app,
        allow_origins=list(cors_origins),
        allow_methods=["GET", "POST", "OPTIONS"],
        allow_headers=ALLOW_HEADERS,
        expose_headers=EXPOSE_HEADERS,
        max_age=7200,
    )


async def _connect_error(send: Send, message: str) -> None:
    """A Connect unary error (HTTP 400, invalid_argument) for a request connectrpc cannot read."""
    body = json.dumps({"code": "invalid_argument", "message": message}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 400,
            "headers": [(b"content-type", b"application/json")],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def _plain(send: Send, status: int, text: str) -> None:
    body = text.encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"text/plain; charset=utf-8")],
        }
    )
    await send({"type": "http.response.body", "body": body})


class WebServer:
    """hypercorn serving `build_app` on `listen` until `stop`."""

    def __init__(self, task: asyncio.Task[None], stop_event: asyncio.Event, listen: str) -> None:
        self._task = task
        self._stop = stop_event
        self.listen = listen

    async def stop(self, grace: float) -> None:
        self._stop.set()
        try:
            await asyncio.wait_for(asyncio.shield(self._task), grace + 1)
        except TimeoutError:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task


async def start_web(
    servicer: Any,
    listen: str,
    cors_origins: Sequence[str] = (),
    web_root: str = "",
    grace: float = 5.0,
    max_request_bytes: int = MAX_REQUEST_BYTES,
) -> WebServer:
    """Binds `listen` here, so that a taken port fails the start at once with OSError, then
    serves on that socket in the current event loop."""
    host, _, port = listen.rpartition(":")
    host = host.strip("[]") or "0.0.0.0"
    try:
        sock = socket.create_server(
            (host, int(port)), family=socket.AF_INET6 if ":" in host else socket.AF_INET
        )
    except (OSError, ValueError) as e:
        raise OSError(f"cannot listen on {listen} for the web: {e}") from None
    web_h2.install()
    config = Config()
    config.bind = [f"fd://{sock.detach()}"]  # hypercorn owns (and closes) the socket now
    config.graceful_timeout = grace
    config.accesslog = None  # every RPC is logged once by the servicer, as on the gRPC port
    config.errorlog = logging.getLogger("croupier.web.http")
    config.keep_alive_timeout = 75  # browsers keep connections for the next call
    stop_event = asyncio.Event()
    app = build_app(
        servicer, cors_origins, Path(web_root) if web_root else DEFAULT_DIST, max_request_bytes
    )
    task = asyncio.create_task(
        hypercorn_serve(app, config, shutdown_trigger=stop_event.wait, mode="asgi")  # type: ignore[arg-type]
    )
    log.info("web_serving", listen=listen, cors_origins=list(cors_origins))
    return WebServer(task, stop_event, listen)
