"""The web port of a real `croupier serve` process, spoken to as a browser would: Connect
(binary and JSON) and gRPC-Web over HTTP/1.1 with connectrpc's own client, plus raw HTTP for
CORS. Answers must equal the native gRPC ones (one servicer behind both ports), errors must
carry the same codes and messages, and nothing hidden may leak to a spectator."""

from __future__ import annotations

import json
import socket
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import cast

import grpc
import h2.config
import h2.connection
import h2.events
import pytest
from connectrpc.client import ConnectClientSync
from connectrpc.code import Code
from connectrpc.compat import google_protobuf_binary_codec, google_protobuf_json_codec
from connectrpc.errors import ConnectError
from connectrpc.protocol import ProtocolType
from croupier.v1 import croupier_pb2 as pb

from service.web import method_info
from tests.support import Client, ServerProcess, free_port
from tests.web_api_support import http_post

pytestmark = pytest.mark.e2e
ORIGIN = "http://frontend.example"


@pytest.fixture(scope="module")
def web_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    db = tmp_path_factory.mktemp("web") / "croupier.db"
    proc = ServerProcess(
        db=db, web_port=free_port(), extra=("--fill-interval", "0.1", "--cors-origins", ORIGIN)
    ).start()
    yield proc
    proc.stop()


class Web:
    """A browser-side client of the web port: one protocol, tokens by seat."""

    def __init__(self, url: str, protocol: ProtocolType, json: bool = False) -> None:
        codec = google_protobuf_json_codec() if json else google_protobuf_binary_codec()
        self.client = ConnectClientSync(url, protocol=protocol, codec=codec, timeout_ms=10_000)

    def call(self, name: str, request: object, token: str | None = None) -> object:
        """The reply of unary method `name`: connectrpc's `method_info` describes a method by
        its name, untyped, so callers cast it to the method's reply type."""
        headers = {"authorization": f"Bearer {token}"} if token else None
        return self.client.execute_unary(request=request, method=method_info(name), headers=headers)

    def stream(
        self, name: str, request: object, token: str | None = None
    ) -> Iterator[pb.TableEvent]:
        """The events of streaming method `name` (StreamTable: the API's one stream)."""
        headers = {"authorization": f"Bearer {token}"} if token else None
        return self.client.execute_server_stream(
            request=request, method=method_info(name), headers=headers
        )

    def error(self, name: str, request: object, token: str | None = None) -> ConnectError:
        with pytest.raises(ConnectError) as info:
            self.call(name, request, token)
        return info.value


PROTOCOLS = [
    pytest.param(ProtocolType.CONNECT, False, id="connect-proto"),
    pytest.param(ProtocolType.CONNECT, True, id="connect-json"),
    pytest.param(ProtocolType.GRPC_WEB, False, id="grpc-web"),
]


@pytest.mark.parametrize(("protocol", "json"), PROTOCOLS)
def test_unary_calls_match_native_grpc(
    web_server: ServerProcess, protocol: ProtocolType, json: bool
) -> None:
    web = Web(web_server.web_url, protocol, json)
    native = Client(web_server.address)
    try:
        games = web.call("ListGames", pb.ListGamesRequest())
        assert games == native.stub.ListGames(pb.ListGamesRequest(), timeout=5)
        table = cast(pb.Table, web.call("CreateTable", pb.CreateTableRequest(game="dou_dizhu")))
        tokens = {}
        for i in range(3):
            reply = cast(pb.JoinTableResponse, web.call(
                "JoinTable", pb.JoinTableRequest(table_id=table.table_id, name=f"w{i}")
            ))
            tokens[reply.seat] = reply.token
            native.tokens[reply.seat] = reply.token
        for seat, token in tokens.items():
            mine = cast(pb.TableView, web.call(
                "GetView", pb.GetViewRequest(table_id=table.table_id), token
            ))
            assert mine == native.view(table.table_id, seat)
            assert len(mine.view.dou_dizhu.hand) == 17
        public = cast(pb.TableView, web.call(
            "GetView", pb.GetViewRequest(table_id=table.table_id)
        ))
        assert not public.HasField("seat") and public.view.dou_dizhu.hand == ""
        assert not public.legal_moves
        seat = public.to_act[0]
        mine = native.view(table.table_id, seat)
        move = pb.SubmitMoveRequest(
            table_id=table.table_id, move=mine.legal_moves[0], expected_version=mine.version
        )
        done = cast(pb.SubmitMoveResponse, web.call("SubmitMove", move, tokens[seat]))
        assert done.version == mine.version + 1
        assert native.view(table.table_id).version == done.version
    finally:
        native.close()


@pytest.mark.parametrize(("protocol", "json"), PROTOCOLS)
def test_errors_keep_their_codes_and_change_nothing(
    web_server: ServerProcess, protocol: ProtocolType, json: bool
) -> None:
    web = Web(web_server.web_url, protocol, json)
    native = Client(web_server.address)
    try:
        table_id = native.seated_table()
        before = native.view(table_id).version
        seat = native.view(table_id).to_act[0]
        other = (seat + 1) % 3
        cases = [
            ("GetView", pb.GetViewRequest(table_id="no-such-table"), None, Code.NOT_FOUND),
            ("CreateTable", pb.CreateTableRequest(game="chess"), None, Code.INVALID_ARGUMENT),
            ("GetView", pb.GetViewRequest(table_id=table_id), "forged", Code.PERMISSION_DENIED),
            (
                "SubmitMove",
                pb.SubmitMoveRequest(table_id=table_id, move="2"),
                native.tokens[other],
                Code.FAILED_PRECONDITION,
            ),
            (
                "SubmitMove",
                pb.SubmitMoveRequest(table_id=table_id, move="zz!"),
                native.tokens[seat],
                Code.INVALID_ARGUMENT,
            ),
            (
                "SubmitMove",
                pb.SubmitMoveRequest(table_id=table_id, move="pass", expected_version=before - 1),
                native.tokens[seat],
                Code.ABORTED,
            ),
            (
                "SubmitMove",
                pb.SubmitMoveRequest(table_id=table_id, move="pass"),
                None,
                Code.UNAUTHENTICATED,
            ),
            ("Ping", pb.PingRequest(payload=b"x" * 70_000), None, Code.RESOURCE_EXHAUSTED),
        ]
        for name, request, token, code in cases:
            err = web.error(name, request, token)
            assert err.code == code, (name, err.code, err.message)
            assert err.message, name
            # the native port answers the same code with the same words
            native_method = getattr(native.stub, name)
            md = [("authorization", f"Bearer {token}")] if token else None
            with pytest.raises(grpc.RpcError) as info:
                native_method(request, metadata=md, timeout=5)
            assert info.value.code().name == code.name
            assert info.value.details() == err.message
    finally:
        after = native.view(table_id).version
        native.close()
    assert after == before


def test_malformed_authorization_is_unauthenticated(web_server: ServerProcess) -> None:
    native = Client(web_server.address)
    table_id = native.seated_table()
    native.close()
    req = urllib.request.Request(
        f"{web_server.web_url}/croupier.v1.Croupier/GetView",
        data=f'{{"tableId": "{table_id}"}}'.encode(),
        headers={"content-type": "application/json", "authorization": "Basic abc"},
    )
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(req, timeout=5)
    assert info.value.code == 401
    body = info.value.read().decode()
    assert '"code":"unauthenticated"' in body.replace(" ", "") and "Bearer" in body


@pytest.mark.parametrize(
    "protocol", [ProtocolType.GRPC_WEB, ProtocolType.CONNECT], ids=["grpc-web", "connect"]
)
def test_stream_table_is_live_and_public_for_spectators(
    web_server: ServerProcess, protocol: ProtocolType
) -> None:
    web = Web(web_server.web_url, protocol)
    native = Client(web_server.address)
    try:
        table_id = native.seated_table()
        version = native.view(table_id).version
        seen: list[pb.TableEvent] = []
        stream = web.stream("StreamTable", pb.StreamTableRequest(table_id=table_id))
        for event in stream:
            seen.append(event)
            assert event.view.view.dou_dizhu.hand == ""  # a spectator sees no hand
            if event.version == version:
                # caught up: the next event must arrive live, made through the native port
                threading.Timer(0.2, native.step, args=(table_id,)).start()
            if event.version == version + 1:
                break
        assert [e.version for e in seen] == list(range(1, version + 2))
        assert seen[-1].kind == pb.EVENT_KIND_MOVE and seen[-1].move
        # a seat's stream carries its own hand, from the same events
        seat = native.view(table_id).to_act[0]
        mine = web.stream(
            "StreamTable",
            pb.StreamTableRequest(table_id=table_id, from_version=version),
            native.tokens[seat],
        )
        first = next(iter(mine))
        assert first.version == version + 1 and first.view.view.dou_dizhu.hand
        assert first.view.view.dou_dizhu.hand == native.view(table_id, seat).view.dou_dizhu.hand
    finally:
        native.close()


def test_stream_errors_reach_the_browser(web_server: ServerProcess) -> None:
    web = Web(web_server.web_url, ProtocolType.GRPC_WEB)
    with pytest.raises(ConnectError) as info:
        list(web.stream("StreamTable", pb.StreamTableRequest(table_id="missing")))
    assert info.value.code == Code.NOT_FOUND and "missing" in info.value.message


def _preflight(url: str, origin: str) -> tuple[int, dict[str, str]]:
    req = urllib.request.Request(
        f"{url}/croupier.v1.Croupier/ListTables",
        method="OPTIONS",
        headers={
            "origin": origin,
            "access-control-request-method": "POST",
            "access-control-request-headers": "content-type,authorization,x-grpc-web",
        },
    )
    try:
        with urllib.request.urlopen(req, timeout=5) as reply:
            return reply.status, {k.lower(): v for k, v in reply.headers.items()}
    except urllib.error.HTTPError as e:
        return e.code, {k.lower(): v for k, v in e.headers.items()}


def test_cors_allows_configured_origins_only(web_server: ServerProcess) -> None:
    status, headers = _preflight(web_server.web_url, ORIGIN)
    assert status == 200
    assert headers["access-control-allow-origin"] == ORIGIN
    assert "authorization" in headers["access-control-allow-headers"].lower()
    status, headers = _preflight(web_server.web_url, "http://evil.example")
    assert status == 400 and "access-control-allow-origin" not in headers
    # actual responses expose the gRPC-Web status headers to scripts
    req = urllib.request.Request(
        f"{web_server.web_url}/croupier.v1.Croupier/ListGames",
        data=b"{}",
        headers={"content-type": "application/json", "origin": ORIGIN},
    )
    with urllib.request.urlopen(req, timeout=5) as reply:
        assert reply.headers["access-control-allow-origin"] == ORIGIN
        assert "grpc-status" in reply.headers["access-control-expose-headers"]


def test_web_port_that_is_taken_fails_the_start(tmp_path: Path) -> None:
    taken = ServerProcess(db=tmp_path / "a.db", web_port=free_port()).start()
    try:
        second = ServerProcess(db=tmp_path / "b.db", web_port=taken.web_port)
        with pytest.raises(RuntimeError, match="exited"):
            second.start()
        assert "cannot listen" in (tmp_path / "b.log").read_text()
    finally:
        taken.stop()


def test_web_port_serves_the_client_files(tmp_path: Path) -> None:
    root = tmp_path / "site"
    root.mkdir()
    (root / "index.html").write_text("<title>croupier test page</title>")
    server = ServerProcess(
        db=tmp_path / "c.db", web_port=free_port(), extra=("--web-root", str(root))
    ).start()
    try:
        with urllib.request.urlopen(f"{server.web_url}/", timeout=5) as reply:
            assert "croupier test page" in reply.read().decode()
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(f"{server.web_url}/nothing.js", timeout=5)
        assert info.value.code == 404
        # an API path that does not exist is a 404 too, not a file lookup
        req = urllib.request.Request(
            f"{server.web_url}/croupier.v1.Croupier/Nope",
            data=b"{}",
            headers={"content-type": "application/json"},
        )
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(req, timeout=5)
        assert info.value.code == 404
    finally:
        server.stop()


def test_native_grpc_also_answers_on_the_web_port(web_server: ServerProcess) -> None:
    """HTTP/2 without TLS (h2c): one port can front every kind of client if a platform needs."""
    client = Client(f"127.0.0.1:{web_server.web_port}")
    try:
        assert client.stub.ListGames(pb.ListGamesRequest(), timeout=5).games
        with pytest.raises(grpc.RpcError) as info:
            client.stub.GetView(pb.GetViewRequest(table_id="nope"), timeout=5)
        assert info.value.code() == grpc.StatusCode.NOT_FOUND
    finally:
        client.close()


def test_sigterm_ends_web_streams_with_where_to_resume(tmp_path: Path) -> None:
    server = ServerProcess(db=tmp_path / "s.db", web_port=free_port()).start()
    native = Client(server.address)
    table_id = native.seated_table()
    native.close()
    web = Web(server.web_url, ProtocolType.GRPC_WEB)
    seen: list[object] = []

    def follow() -> None:
        try:
            for event in web.stream("StreamTable", pb.StreamTableRequest(table_id=table_id)):
                seen.append(event.version)
                if event.version == 4:
                    ready.set()
        except ConnectError as e:
            seen.append(e)

    ready = threading.Event()
    thread = threading.Thread(target=follow)
    thread.start()
    assert ready.wait(10)
    assert server.stop() == 0
    thread.join(10)
    *versions, error = seen
    assert versions == [1, 2, 3, 4]
    assert isinstance(error, ConnectError) and error.code == Code.UNAVAILABLE
    assert "from_version=4" in error.message


def test_malformed_and_oversized_requests_are_refused_cleanly(web_server: ServerProcess) -> None:
    url = f"{web_server.web_url}/croupier.v1.Croupier/GetView"
    status, _, body = http_post(url, b"\xff\xff\x01", "application/proto")
    assert status == 400 and b"invalid_argument" in body
    # gRPC-Web: the status travels in the trailer frame of a 200 response
    framed = b"\x00\x00\x00\x00\x05" + b"\xff" * 5
    status, _, body = http_post(url, framed, "application/grpc-web+proto")
    assert status == 200 and b"grpc-status: 3" in body
    ping = f"{web_server.web_url}/croupier.v1.Croupier/Ping"
    status, _, body = http_post(ping, b"\x00" * (2 << 20), "application/proto")
    assert status == 429 and b"resource_exhausted" in body
    status, _, _ = http_post(ping, b"x", "text/html")
    assert status == 415
    # and the server is still there, unchanged
    client = Client(web_server.address)
    try:
        assert client.stub.Ping(pb.PingRequest(payload=b"ok"), timeout=5).payload == b"ok"
    finally:
        client.close()


def _h2_get(port: int, path: bytes) -> tuple[bytes, bytes]:
    """A GET over HTTP/2 without TLS, the path sent as raw bytes (h11 refuses what h2 lets by)."""
    conn = h2.connection.H2Connection(h2.config.H2Configuration(
        client_side=True, validate_outbound_headers=False, normalize_outbound_headers=False))
    conn.initiate_connection()
    conn.send_headers(1, [(b":method", b"GET"), (b":scheme", b"http"),
                          (b":authority", b"localhost"), (b":path", path)], end_stream=True)
    status, body = b"", b""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(conn.data_to_send())
        while True:
            data = sock.recv(65536)
            assert data, "the connection closed before the response ended"
            for event in conn.receive_data(data):
                if isinstance(event, h2.events.ResponseReceived):
                    status = dict(event.headers)[b":status"]
                elif isinstance(event, h2.events.DataReceived):
                    body += event.data
                    conn.acknowledge_received_data(len(event.data), event.stream_id)
                elif isinstance(event, h2.events.StreamEnded):
                    return status, body
            sock.sendall(conn.data_to_send())


def test_a_query_string_that_is_not_utf8_is_invalid_argument(web_server: ServerProcess) -> None:
    port = web_server.web_port
    path = b"/croupier.v1.Croupier/ListGames?encoding=json&message="
    assert _h2_get(port, path + b"%7B%7D")[0] == b"200"  # a Connect GET, as browsers cache
    status, body = _h2_get(port, path + b"\xff")
    assert status == b"400" and json.loads(body) == {
        "code": "invalid_argument", "message": "the query string is not UTF-8 (percent-encode it)"}
