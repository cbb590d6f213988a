"""What the web port does around connectrpc and hypercorn so that bad input gets a clear answer.

- native gRPC over HTTP/1.1: gRPC needs HTTP/2 trailers, which connectrpc reports as UNKNOWN
  ("ASGI server does not support ... trailers"); answered here HTTP 505 with UNIMPLEMENTED and
  what to use instead.
- a message flagged compressed in a request that names no compression: connectrpc's INTERNAL
  becomes INVALID_ARGUMENT (the client is at fault, not the server).
- the request body is read as it arrives (`EagerBody`), whatever the app does with it.
"""

from __future__ import annotations

import asyncio
import urllib.parse
from collections import deque
from typing import Any

import grpc
from connectrpc.code import Code
from connectrpc.errors import ConnectError
from connectrpc.request import RequestContext
from starlette.types import Message, Receive, Scope, Send

HTTP2_ONLY = (
    "gRPC needs HTTP/2 (on this port: cleartext HTTP/2 with prior knowledge); over HTTP/1.1 "
    "use gRPC-Web (application/grpc-web+proto) or Connect"
)


def _header(scope: Scope, name: bytes) -> bytes:
    return next((v for k, v in scope.get("headers", ()) if k == name), b"")


def needs_http2(scope: Scope) -> bool:
    """Native gRPC (as connectrpc tells it by content type) on a connection without trailers."""
    content_type = _header(scope, b"content-type").strip().lower()
    native = content_type == b"application/grpc" or content_type.startswith(b"application/grpc+")
    return native and "http.response.trailers" not in scope.get("extensions", {})


async def refuse_http1_grpc(send: Send) -> None:
    """HTTP 505 with the gRPC status too, for a proxy that passes HTTP/1.1 answers to a gRPC
    client (which reads grpc-status first)."""
    body = (HTTP2_ONLY + "\n").encode()
    await send(
        {
            "type": "http.response.start",
            "status": 505,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"grpc-status", str(grpc.StatusCode.UNIMPLEMENTED.value[0]).encode()),
                (b"grpc-message", urllib.parse.quote(HTTP2_ONLY, safe="").encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class ClearProtocolErrors:
    """A connectrpc metadata interceptor: its on_end may replace the error a request ends with.
    connectrpc reports a message flagged compressed, in a request without an encoding, as
    INTERNAL; it is the client's error."""

    async def on_start(self, ctx: RequestContext[Any, Any]) -> None:
        return None

    async def on_end(
        self, token: None, ctx: RequestContext[Any, Any], error: Exception | None, /
    ) -> None:
        if (
            isinstance(error, ConnectError)
            and error.code == Code.INTERNAL
            and error.message.startswith("protocol error:")
            and "compressed" in error.message
        ):
            connect = ctx.request_headers.get("content-type", "").startswith("application/connect")
            header = "connect-content-encoding" if connect else "grpc-encoding"
            raise ConnectError(
                Code.INVALID_ARGUMENT,
                f"a message is flagged compressed but the request names no compression ({header} "
                "is absent or identity): send it uncompressed or name its encoding (gzip)",
            ) from error


class EagerBody:
    """The request's `receive`, read ahead by a task as hypercorn delivers it.

    hypercorn hands each request's body to the app through a queue of ten messages, and its
    connection reader waits when that queue is full. An app that stops reading a body (any early
    answer, such as RESOURCE_EXHAUSTED for an oversized message, or a static file's 405) then
    blocks the reader, and its own end blocks too (hypercorn queues "disconnect" behind the
    unread body): the connection and both tasks hang for good. Here the body is moved out of
    that queue as it comes: held (up to `limit` bytes ahead of the app, past that hypercorn's own
    back-pressure applies) while the app runs, dropped once `finish` says the app is done.
    """

    def __init__(self, receive: Receive, limit: int) -> None:
        self._receive = receive
        self._limit = limit
        self._held: deque[Message] = deque()
        self._held_bytes = 0
        self._arrived = asyncio.Event()
        self._room = asyncio.Event()
        self._room.set()
        self._done = False
        self._gone = False
        self._task = asyncio.create_task(self._pump())

    async def _pump(self) -> None:
        try:
            while True:
                await self._room.wait()
                message = await self._receive()
                if not self._done:
                    self._held.append(message)
                    self._held_bytes += len(message.get("body", b""))
                    self._arrived.set()
                    if self._held_bytes > self._limit:
                        self._room.clear()
                if message["type"] == "http.disconnect":
                    return
        finally:
            self._gone = True
            self._arrived.set()

    async def receive(self) -> Message:
        while not self._held:
            if self._gone:
                return {"type": "http.disconnect"}
            self._arrived.clear()
            await self._arrived.wait()
        message = self._held.popleft()
        self._held_bytes -= len(message.get("body", b""))
        if self._held_bytes <= self._limit:
            self._room.set()
        return message

    def finish(self) -> None:
        """The app is done: drop what it did not read and keep draining until the disconnect."""
        self._done = True
        self._held.clear()
        self._held_bytes = 0
        self._room.set()
