"""HTTP/2 on the web port: hypercorn's H2 protocol, with three of its faults (hypercorn 0.18) fixed.

- A request with a malformed header (RFC 9113 section 8.2.1, e.g. `authorization: Bearer x `
  with its trailing space) fails h2's header check, a ProtocolError for the whole connection:
  hypercorn sends GOAWAY and every other stream on the connection dies. RFC 9113 section 8.1.1
  makes it a stream error. h2's check is turned off here and the same check runs per request:
  that request alone is answered INVALID_ARGUMENT (naming the header, never its value) and reset.
- DATA for a stream whose response is already complete (an early refusal, such as
  RESOURCE_EXHAUSTED after the length prefix of an oversized message) is a KeyError in
  hypercorn's event loop, which ends the connection. It is acknowledged here, so that the
  connection's flow-control window does not shrink, and dropped.
- Once a response is complete while the request is still being sent, RST_STREAM NO_ERROR asks
  the client to stop sending (RFC 9113 section 8.1), as the gRPC port does.

hypercorn builds its H2 protocol by a module-level name for each connection; `install` points
that name here (there is no setting for it).
"""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Iterable
from typing import Any, cast

import h2.events
import h2.exceptions
import hypercorn.protocol
from h2.errors import ErrorCodes
from h2.stream import StreamState
from h2.utilities import HeaderValidationFlags, validate_headers
from hypercorn.protocol.events import Event as StreamEvent
from hypercorn.protocol.events import Trailers
from hypercorn.protocol.h2 import H2Protocol

from common.logging import get_logger

REQUEST = HeaderValidationFlags(
    is_client=False, is_trailer=False, is_response_header=False, is_push_promise=False
)
WHITESPACE = (0x20, 0x09)

log = get_logger("croupier.web")


def header_problem(headers: Iterable[tuple[bytes, bytes]]) -> str | None:
    """What makes a request's header block malformed (RFC 9113 section 8.2 and 8.3), or None.
    Values are checked first, here, so that the message names the header, not the value (which
    may be a token); h2's own check covers the names and pseudo-headers."""
    headers = list(headers)
    for name, value in headers:
        shown = name.decode("ascii", "backslashreplace")
        if value and (value[0] in WHITESPACE or value[-1] in WHITESPACE):
            return (f"the value of header {shown!r} starts or ends with whitespace "
                    "(RFC 9113 section 8.2.1): trim it")
        if any(c in value for c in b"\0\r\n"):
            return f"the value of header {shown!r} holds NUL, CR or LF (RFC 9113 section 8.2.1)"
        if name.startswith(b":") and not value.split(b"?", 1)[0].isascii():
            # a URI is ASCII (RFC 3986); hypercorn's decoding of the path would end the
            # connection (the query string is checked as the web app reads it)
            return f"the value of {shown!r} holds bytes outside ASCII: percent-encode them"
    try:
        for _ in validate_headers(headers, REQUEST):
            pass
    except h2.exceptions.ProtocolError as e:
        return f"malformed request headers: {e}"
    return None


def _content_type(headers: Iterable[tuple[bytes, bytes]]) -> bytes:
    return next((v.strip().lower() for k, v in headers if k == b"content-type"), b"")


class WebH2Protocol(H2Protocol):
    """hypercorn's H2Protocol, refusing a malformed request alone and surviving early answers."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # the same check, per request, in _handle_events (this connection's own config)
        self.connection.config.validate_inbound_headers = False

    async def _handle_events(self, events: list[h2.events.Event]) -> None:
        # one event at a time: handling one may close a stream that a later one names
        for event in events:
            if isinstance(event, h2.events.RequestReceived):
                headers = cast("list[tuple[bytes, bytes]]", list(event.headers or []))
                problem = header_problem(headers)
                if problem is not None:
                    self._refuse(event, headers, problem)
                    continue
            elif isinstance(event, h2.events.DataReceived) and event.stream_id not in self.streams:
                # the response is complete (or the request refused): the body is not read
                self.connection.acknowledge_received_data(
                    event.flow_controlled_length or 0, event.stream_id or 0
                )
                continue
            await super()._handle_events([event])
        await self._flush()

    def _refuse(
        self, event: h2.events.RequestReceived, headers: list[tuple[bytes, bytes]], problem: str
    ) -> None:
        """Answers INVALID_ARGUMENT as the request's protocol reads it, then resets the stream
        (PROTOCOL_ERROR, a stream error) if the client is still sending."""
        stream_id = event.stream_id or 0
        log.info("web_request_refused", reason=problem)
        try:
            self._answer_invalid(stream_id, _content_type(headers), problem)
        except h2.exceptions.ProtocolError:  # the client reset the stream in the same batch
            return
        self._reset_if_open(stream_id, ErrorCodes.PROTOCOL_ERROR)

    def _answer_invalid(self, stream_id: int, content_type: bytes, problem: str) -> None:
        if content_type.startswith(b"application/grpc"):  # gRPC, gRPC-Web: trailers-only
            reply = (b"application/grpc-web+proto" if content_type.startswith(b"application/grpc-web")
                     else b"application/grpc")
            message = urllib.parse.quote(problem, safe="").encode()
            self.connection.send_headers(
                stream_id,
                [(b":status", b"200"), (b"content-type", reply), (b"grpc-status", b"3"),
                 (b"grpc-message", message)],
                end_stream=True,
            )
        else:  # Connect and anything else: a Connect unary error
            body = json.dumps({"code": "invalid_argument", "message": problem}).encode()
            fits = self.connection.local_flow_control_window(stream_id) >= len(body)
            self.connection.send_headers(
                stream_id,
                [(b":status", b"400"), (b"content-type", b"application/json")],
                end_stream=not fits,
            )
            if fits:
                self.connection.send_data(stream_id, body, end_stream=True)

    async def stream_send(self, event: StreamEvent) -> None:
        await super().stream_send(event)
        if isinstance(event, Trailers):  # the response's end, with END_STREAM
            await self._stop_unread_request(event.stream_id)

    async def _send_data(self, stream_id: int) -> None:
        await super()._send_data(stream_id)
        if stream_id not in self.stream_buffers:  # the response's body has ended (or failed)
            await self._stop_unread_request(stream_id)

    async def _stop_unread_request(self, stream_id: int) -> None:
        if self._reset_if_open(stream_id, ErrorCodes.NO_ERROR):
            await self._flush()

    def _reset_if_open(self, stream_id: int, code: ErrorCodes) -> bool:
        """Resets a stream whose response has ended but whose request has not (h2 has seen
        every frame of the batch being handled, so its state may be ahead of the events)."""
        stream = self.connection.streams.get(stream_id)
        if stream is None or stream.state_machine.state != StreamState.HALF_CLOSED_LOCAL:
            return False
        self.connection.reset_stream(stream_id, code)
        return True


def install() -> None:
    """Makes hypercorn use WebH2Protocol for every HTTP/2 connection (prior knowledge, upgrade
    or ALPN) of this process; hypercorn looks the name up when a connection starts."""
    hypercorn.protocol.H2Protocol = WebH2Protocol  # type: ignore[misc]
