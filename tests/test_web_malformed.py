"""Malformed input on the web port of a real `croupier serve`: each gets a clear status for that
request alone, the connection and its other streams go on, and the server logs no traceback.
HTTP/2 is spoken frame by frame with the `h2` library (prior knowledge, as gRPC clients do),
HTTP/1.1 with http.client, and gRPC with grpcio as the native port's clients do."""

from __future__ import annotations

import http.client
import json
import queue
import socket
import threading
import time
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field

import grpc
import h2.config
import h2.connection
import h2.errors
import h2.events
import h2.exceptions
import pytest
from croupier.v1 import croupier_pb2 as pb
from hyperframe.frame import DataFrame

from tests.support import Client, ServerProcess, free_port

pytestmark = pytest.mark.e2e
LIMIT = 65536  # --max-message-bytes of this module's server
PING = b"/croupier.v1.Croupier/Ping"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    db = tmp_path_factory.mktemp("malformed") / "croupier.db"
    proc = ServerProcess(
        db=db, web_port=free_port(),
        extra=("--fill-interval", "0.1", "--max-message-bytes", str(LIMIT)),
    ).start()
    yield proc
    proc.stop()


def assert_clean_log(server: ServerProcess) -> None:
    """The HTTP layers' faults showed as tracebacks (a KeyError in hypercorn's HTTP/2 loop);
    a structured log line with an exception, or at level error, is one too."""
    text = server.log_text()
    assert "Traceback" not in text and "KeyError" not in text, text[-3000:]
    bad = [line for line in server.log_lines()
           if "exception" in line or line.get("level") in ("error", "critical")]
    assert not bad, bad


def envelope(message: bytes, flags: int = 0) -> bytes:
    """One gRPC / gRPC-Web / Connect-streaming frame: flags, big-endian length, message."""
    return bytes([flags]) + len(message).to_bytes(4, "big") + message


def ping(payload: bytes) -> bytes:
    return pb.PingRequest(payload=payload).SerializeToString()


@dataclass
class Reply:
    headers: dict[bytes, bytes] = field(default_factory=dict)
    trailers: dict[bytes, bytes] = field(default_factory=dict)
    body: bytes = b""
    reset: int | None = None
    ended: bool = False

    @property
    def grpc_status(self) -> bytes | None:
        return self.trailers.get(b"grpc-status", self.headers.get(b"grpc-status"))

    @property
    def grpc_message(self) -> str:
        raw = self.trailers.get(b"grpc-message", self.headers.get(b"grpc-message", b""))
        return urllib.parse.unquote(raw.decode())


class H2Client:
    """One cleartext HTTP/2 connection (prior knowledge); replies kept by stream."""

    def __init__(self, port: int) -> None:
        self.conn = h2.connection.H2Connection(h2.config.H2Configuration(
            client_side=True, validate_outbound_headers=False, normalize_outbound_headers=False))
        self.conn.initiate_connection()
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.replies: dict[int, Reply] = {}
        self.goaway: int | None = None
        self.closed = False
        self.flush()

    def flush(self) -> None:
        self.sock.sendall(self.conn.data_to_send())

    def open(self, path: bytes, content_type: bytes, *extra: tuple[bytes, bytes],
             body: bytes | None = None) -> int:
        """A POST; its body (if given) sent whole and the request ended."""
        stream_id = self.conn.get_next_available_stream_id()
        self.replies[stream_id] = Reply()
        self.conn.send_headers(stream_id, [
            (b":method", b"POST"), (b":scheme", b"http"), (b":authority", b"localhost"),
            (b":path", path), (b"content-type", content_type), (b"te", b"trailers"), *extra])
        if body is not None:
            self.conn.send_data(stream_id, body, end_stream=True)
        self.flush()
        return stream_id

    def send(self, stream_id: int, data: bytes, end: bool = False) -> None:
        self.conn.send_data(stream_id, data, end_stream=end)
        self.flush()

    def wait(self, *stream_ids: int, timeout: float = 10) -> None:
        """Reads until every given stream has ended (or was reset)."""
        deadline = time.monotonic() + timeout
        while not all(self.replies[s].ended for s in stream_ids):
            assert self.goaway is None, f"the server ended the connection (GOAWAY {self.goaway})"
            assert not self.closed, "the server closed the connection"
            assert time.monotonic() < deadline, f"no answer in {timeout} s: {self.replies}"
            self.sock.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                data = self.sock.recv(65536)
            except TimeoutError:
                continue
            if not data:
                self.closed = True
                continue
            for event in self.conn.receive_data(data):
                self._on(event)
            self.flush()

    def _on(self, event: h2.events.Event) -> None:
        if isinstance(event, h2.events.ConnectionTerminated):
            self.goaway = event.error_code
            return
        reply = self.replies.get(getattr(event, "stream_id", 0))
        if reply is None:
            return
        if isinstance(event, h2.events.ResponseReceived):
            reply.headers = dict(event.headers or [])
        elif isinstance(event, h2.events.TrailersReceived):
            reply.trailers = dict(event.headers or [])
        elif isinstance(event, h2.events.DataReceived):
            reply.body += event.data or b""
            self.conn.acknowledge_received_data(event.flow_controlled_length or 0,
                                                event.stream_id or 0)
        elif isinstance(event, h2.events.StreamEnded):
            reply.ended = True
        elif isinstance(event, h2.events.StreamReset):
            reply.reset, reply.ended = event.error_code, True

    def close(self) -> None:
        self.sock.close()


def _post_http1(port: int, path: str, body: bytes, content_type: str
                ) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("POST", path, body=body, headers={"content-type": content_type})
        reply = conn.getresponse()
        return reply.status, {k.lower(): v for k, v in reply.getheaders()}, reply.read()
    finally:
        conn.close()


def test_a_compressed_flag_without_an_encoding_is_invalid_argument(server: ServerProcess) -> None:
    flagged = envelope(ping(b"hi"), flags=1)  # "compressed", while no encoding is named
    # gRPC-Web over HTTP/1.1: the status is in the trailer frame of a 200
    status, _, body = _post_http1(server.web_port, "/croupier.v1.Croupier/Ping", flagged,
                                  "application/grpc-web+proto")
    assert status == 200 and b"grpc-status: 3\r\n" in body
    assert b"grpc-encoding" in body and b"compressed" in body
    # Connect streaming: the end-of-stream message carries the error
    status, _, body = _post_http1(server.web_port, "/croupier.v1.Croupier/StreamTable", flagged,
                                  "application/connect+proto")
    end = json.loads(body[5:])
    assert status == 200 and end["error"]["code"] == "invalid_argument"
    assert "connect-content-encoding" in end["error"]["message"]
    # native gRPC over h2c
    client = H2Client(server.web_port)
    try:
        stream = client.open(PING, b"application/grpc", body=flagged)
        client.wait(stream)
        reply = client.replies[stream]
        assert reply.grpc_status == b"3", reply
        assert "flagged compressed" in reply.grpc_message and "grpc-encoding" in reply.grpc_message
    finally:
        client.close()
    assert_clean_log(server)


def test_native_grpc_over_http1_is_told_it_needs_http2(server: ServerProcess) -> None:
    for content_type in ("application/grpc", "application/grpc+proto"):
        status, headers, body = _post_http1(
            server.web_port, "/croupier.v1.Croupier/Ping", envelope(ping(b"hi")), content_type)
        assert status == 505, (status, headers, body)
        assert headers["grpc-status"] == str(grpc.StatusCode.UNIMPLEMENTED.value[0])
        assert b"gRPC needs HTTP/2" in body and b"gRPC-Web" in body
        assert "HTTP/2" in urllib.parse.unquote(headers["grpc-message"])
    # gRPC-Web stays served over HTTP/1.1
    status, _, body = _post_http1(server.web_port, "/croupier.v1.Croupier/Ping",
                                  envelope(ping(b"hi")), "application/grpc-web+proto")
    assert status == 200 and b"grpc-status: 0" in body
    assert_clean_log(server)


def test_data_after_an_early_answer_keeps_the_connection(server: ServerProcess) -> None:
    """An oversized message is refused from its length prefix, while the client still sends:
    the rest of its body must not end the connection (it was hypercorn's KeyError)."""
    client = H2Client(server.web_port)
    try:
        big = client.open(PING, b"application/grpc")
        client.send(big, b"\x00" + (LIMIT + 1).to_bytes(4, "big") + b"x" * 100)
        client.wait(big)
        reply = client.replies[big]
        assert reply.grpc_status == b"8" and "larger than" in reply.grpc_message, reply
        # more of that body, as a client that has not read the answer yet sends it (raw frames:
        # this client's h2 already knows the stream is over)
        client.sock.sendall(b"".join(DataFrame(big, data=b"y" * 100).serialize() for _ in range(3)))
        after = client.open(PING, b"application/grpc", body=envelope(ping(b"still here")))
        client.wait(after)
        assert client.replies[after].grpc_status == b"0", client.replies[after]
        assert client.replies[after].body[5:] == ping(b"still here")
        assert client.replies[big].reset == h2.errors.ErrorCodes.NO_ERROR  # "stop sending"
    finally:
        client.close()
    assert_clean_log(server)


def test_a_body_left_unread_does_not_hang_the_connection(server: ServerProcess) -> None:
    """Many small DATA frames behind an early answer: hypercorn's per-request queue (ten
    messages) filled, and its connection and the app's task waited on each other for good."""
    client = H2Client(server.web_port)
    try:
        big = client.open(PING, b"application/grpc")
        frames = [b"\x00" + (LIMIT * 100).to_bytes(4, "big")] + [b"z" * 10] * 30
        for data in frames:
            client.conn.send_data(big, data)
        client.flush()
        after = client.open(PING, b"application/grpc", body=envelope(ping(b"next")))
        client.wait(big, after)
        assert client.replies[big].grpc_status == b"8", client.replies[big]
        assert client.replies[after].grpc_status == b"0", client.replies[after]
    finally:
        client.close()
    assert_clean_log(server)


def test_a_header_with_trailing_whitespace_refuses_that_request_only(
    server: ServerProcess,
) -> None:
    client = H2Client(server.web_port)
    try:
        waiting = client.open(PING, b"application/grpc")  # open: its body comes later
        bad = client.open(PING, b"application/grpc", (b"authorization", b"Bearer x "),
                          body=envelope(ping(b"bad")))
        bad_connect = client.open(PING, b"application/json", (b"authorization", b"Bearer x "),
                                  body=b"{}")
        client.wait(bad, bad_connect)
        reply = client.replies[bad]
        assert reply.grpc_status == b"3", reply
        assert "'authorization'" in reply.grpc_message and "whitespace" in reply.grpc_message
        assert "Bearer" not in reply.grpc_message  # the header is named, its value not shown
        connect = client.replies[bad_connect]
        assert connect.headers[b":status"] == b"400"
        assert json.loads(connect.body)["code"] == "invalid_argument"
        # a malformed request the client resets at once (one write: the server reads both)
        gone = client.conn.get_next_available_stream_id()
        client.replies[gone] = Reply()
        client.conn.send_headers(gone, [
            (b":method", b"POST"), (b":scheme", b"http"), (b":authority", b"localhost"),
            (b":path", PING), (b"content-type", b"application/grpc"), (b"x-note", b" x")])
        client.conn.reset_stream(gone)
        client.flush()
        # the stream opened before is still there, and new ones too
        client.send(waiting, envelope(ping(b"alive")), end=True)
        fresh = client.open(PING, b"application/grpc", body=envelope(ping(b"new")))
        client.wait(waiting, fresh)
        assert client.goaway is None
        for stream, payload in ((waiting, b"alive"), (fresh, b"new")):
            assert client.replies[stream].grpc_status == b"0", client.replies[stream]
            assert client.replies[stream].body[5:] == ping(payload)
    finally:
        client.close()
    assert_clean_log(server)


def test_a_path_outside_ascii_refuses_that_request_only(server: ServerProcess) -> None:
    """hypercorn decodes the path as ASCII: a byte above 0x7f ended the whole connection with
    an unhandled error (and a log line quoting the connection's first bytes, tokens included)."""
    client = H2Client(server.web_port)
    try:
        waiting = client.open(PING, b"application/grpc")
        bad = client.open("/croupier.v1.Croupier/Pïng".encode(), b"application/grpc",
                          (b"authorization", b"Bearer sekret-token-value"),
                          body=envelope(ping(b"bad")))
        client.wait(bad)
        reply = client.replies[bad]
        assert reply.grpc_status == b"3" and "':path'" in reply.grpc_message, reply
        client.send(waiting, envelope(ping(b"alive")), end=True)
        client.wait(waiting)
        assert client.goaway is None and client.replies[waiting].grpc_status == b"0"
    finally:
        client.close()
    assert_clean_log(server)
    assert "sekret-token-value" not in server.log_text()


def _forty_oversized_pings(client: Client) -> list[tuple[grpc.StatusCode, str]]:
    out = []
    for _ in range(40):
        try:
            client.stub.Ping(pb.PingRequest(payload=b"x" * LIMIT), timeout=10)
            out.append((grpc.StatusCode.OK, ""))
        except grpc.RpcError as e:
            out.append((e.code(), e.details()))
    return out


def test_forty_oversized_pings_answer_as_the_grpc_port_does(server: ServerProcess) -> None:
    """One web-port connection (a grpcio channel) with a live StreamTable on it, forty Pings
    just over --max-message-bytes on that channel: each RESOURCE_EXHAUSTED, as on the gRPC
    port, and the stream still delivers."""
    native = Client(server.address)
    web = Client(f"127.0.0.1:{server.web_port}")
    try:
        table_id = native.seated_table()
        version = native.view(table_id).version
        events: queue.Queue[int | BaseException] = queue.Queue()
        stream = web.stream(table_id, timeout=60)

        def follow() -> None:
            try:
                for event in stream:
                    events.put(event.version)
            except grpc.RpcError as e:
                events.put(e)

        threading.Thread(target=follow, daemon=True).start()
        while (seen := events.get(timeout=10)) != version:
            assert isinstance(seen, int), seen
        for port, answers in (("web", _forty_oversized_pings(web)),
                              ("grpc", _forty_oversized_pings(native))):
            assert {code for code, _ in answers} == {grpc.StatusCode.RESOURCE_EXHAUSTED}, (
                port, answers)
            assert all("max" in details for _, details in answers), (port, answers)
        native.step(table_id)
        assert events.get(timeout=10) == version + 1  # the stream was not cut
        stream.cancel()
    finally:
        web.close()
        native.close()
    assert_clean_log(server)
