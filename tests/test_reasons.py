"""Reason codes: every refusal of a real server carries a google.rpc.ErrorInfo (domain
"croupier") beside its unchanged English message, on the gRPC port and on the web port alike;
its metadata never holds another seat's card or a token; every TableError the service raises
names its reason, of the reason's one status; docs/api.md lists every code."""

from __future__ import annotations

import ast
import json
import random
import re
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from connectrpc.client import ConnectClientSync
from connectrpc.compat import google_protobuf_binary_codec
from connectrpc.errors import ConnectError
from connectrpc.protocol import ProtocolType
from croupier.v1 import croupier_pb2 as pb
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from engines.contract import MoveRule
from service.reasons import DOMAIN, Reason, all_reasons, status_of
from service.web import method_info
from tests.support import Client, ServerProcess, bearer, free_port

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.e2e


def refusal(call: Callable[[], object]) -> tuple[grpc.StatusCode, str, error_details_pb2.ErrorInfo]:
    """The status, message and ErrorInfo of a call that must fail."""
    with pytest.raises(grpc.RpcError) as info:
        call()
    err = info.value
    status = rpc_status.from_call(err)
    assert status is not None, f"no status details: {err.code()} {err.details()}"
    assert status.message == err.details() and status.code == err.code().value[0]
    assert len(status.details) == 1
    found = error_details_pb2.ErrorInfo()
    assert status.details[0].Unpack(found), status.details[0].type_url
    assert found.domain == DOMAIN
    return err.code(), err.details(), found


@pytest.fixture(scope="module")
def web_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    proc = ServerProcess(
        db=tmp_path_factory.mktemp("reasons") / "croupier.db",
        web_port=free_port(),
    ).start()
    yield proc
    proc.stop()


def test_each_kind_of_refusal_carries_its_reason(web_server: ServerProcess) -> None:
    c = Client(web_server.address)
    s = c.stub
    try:
        tid = c.seated_table()
        view = c.view(tid)
        first = view.to_act[0]
        other = (first + 1) % 3
        o = Client(web_server.address)  # one client a table: tokens are kept by seat
        f = Client(web_server.address)
        open_table = o.create("dou_dizhu").table_id
        o.join(open_table, name="a", seat=0)
        finished = f.seated_table()
        f.play_to_end(finished, random.Random(3))
        md = bearer(c.tokens[first])
        GS = grpc.StatusCode
        cases: list[tuple[str, Callable[[], object], grpc.StatusCode, str, dict[str, str]]] = [
            ("no game", lambda: c.create(""), GS.INVALID_ARGUMENT, "INVALID_ARGUMENT_GAME", {}),
            ("unknown game", lambda: c.create("chess"), GS.INVALID_ARGUMENT, "INVALID_ARGUMENT_GAME", {}),
            ("players", lambda: c.create("dobro", players=9), GS.INVALID_ARGUMENT,
             "INVALID_ARGUMENT_PLAYERS", {"min": "2", "max": "6"}),
            ("option value", lambda: c.create("dou_dizhu", options=_struct({"turn_seconds": True})),
             GS.INVALID_ARGUMENT, "INVALID_ARGUMENT_OPTION", {"option": "turn_seconds"}),
            ("game option", lambda: c.create("dou_dizhu", options=_struct({"deals": -3})),
             GS.INVALID_ARGUMENT, "INVALID_ARGUMENT_OPTION", {}),
            ("bot level", lambda: c.create("dou_dizhu", seats=[pb.SeatSpec(kind=pb.SEAT_KIND_BOT, bot_level="godlike")] * 3),
             GS.INVALID_ARGUMENT, "INVALID_ARGUMENT_BOT_LEVEL", {}),
            ("no table", lambda: c.view("no-such-table"), GS.NOT_FOUND, "TABLE_NOT_FOUND", {}),
            ("no table id", lambda: s.GetView(pb.GetViewRequest(), timeout=5), GS.INVALID_ARGUMENT,
             "INVALID_ARGUMENT_FIELD", {"field": "table_id"}),
            ("forged token", lambda: s.GetView(pb.GetViewRequest(table_id=tid), metadata=bearer("forged" * 5), timeout=5),
             GS.PERMISSION_DENIED, "BAD_TOKEN", {}),
            ("authorization", lambda: s.GetView(pb.GetViewRequest(table_id=tid), metadata=[("authorization", "Basic x")], timeout=5),
             GS.UNAUTHENTICATED, "BAD_AUTHORIZATION", {}),
            ("no token", lambda: s.SubmitMove(pb.SubmitMoveRequest(table_id=tid, move="pass"), timeout=5),
             GS.UNAUTHENTICATED, "TOKEN_REQUIRED", {}),
            ("malformed move", lambda: c.move(tid, first, "bid seven"), GS.INVALID_ARGUMENT, "INVALID_ARGUMENT_MOVE", {}),
            ("not your turn", lambda: c.move(tid, other, "bid 1"), GS.FAILED_PRECONDITION,
             "NOT_YOUR_TURN", {"to_act": str(first)}),
            ("stale", lambda: c.move(tid, first, "pass", expected=view.version - 1) if view.version > 1 else
             s.SubmitMove(pb.SubmitMoveRequest(table_id=tid, move="pass", expected_version=view.version + 5), metadata=md, timeout=5),
             *((GS.ABORTED, "STALE_VERSION", {"version": str(view.version)}) if view.version > 1 else
               (GS.INVALID_ARGUMENT, "INVALID_ARGUMENT_VERSION", {"version": str(view.version)}))),
            ("negative version", lambda: c.move(tid, first, "pass", expected=-1), GS.INVALID_ARGUMENT, "INVALID_ARGUMENT_VERSION", {}),
            ("seat taken", lambda: c.join(open_table, seat=0), GS.FAILED_PRECONDITION, "SEAT_TAKEN", {"seat": "0"}),
            ("no such seat", lambda: c.join(open_table, seat=7), GS.INVALID_ARGUMENT, "INVALID_ARGUMENT_SEAT",
             {"seat": "7", "seats": "3"}),
            ("not started", lambda: o.move(open_table, 0, "pass"), GS.FAILED_PRECONDITION, "TABLE_NOT_STARTED",
             {"waiting_seats": "1,2"}),
            ("name", lambda: c.join(open_table, name="a\x07b"), GS.INVALID_ARGUMENT, "INVALID_ARGUMENT_NAME", {}),
            ("long name", lambda: c.join(open_table, name="n" * 500), GS.RESOURCE_EXHAUSTED, "TOO_LARGE",
             {"field": "name"}),
            ("own token", lambda: c.join(open_table, token="short"), GS.INVALID_ARGUMENT, "INVALID_ARGUMENT_TOKEN", {}),
            ("finished join", lambda: c.join(finished), GS.FAILED_PRECONDITION, "TABLE_FINISHED", {}),
            ("record early", lambda: s.ExportRecord(pb.ExportRecordRequest(table_id=tid), timeout=5),
             GS.FAILED_PRECONDITION, "RECORD_NOT_READY", {}),
            ("ping", lambda: s.Ping(pb.PingRequest(payload=b"x" * 70_000), timeout=5), GS.RESOURCE_EXHAUSTED,
             "TOO_LARGE", {"field": "payload"}),
            ("list limit", lambda: s.ListTables(pb.ListTablesRequest(limit=-1), timeout=5), GS.INVALID_ARGUMENT,
             "INVALID_ARGUMENT_FIELD", {"field": "limit"}),
            ("identity", lambda: s.FindMatch(pb.FindMatchRequest(game="dou_dizhu"), timeout=5), GS.UNAUTHENTICATED,
             "IDENTITY_REQUIRED", {}),
            ("identity refused", lambda: s.FindMatch(pb.FindMatchRequest(game="dou_dizhu"), metadata=bearer("a.b.c"), timeout=5),
             GS.UNAUTHENTICATED, "IDENTITY_REFUSED", {}),
            ("unparseable", lambda: c.channel.unary_unary("/croupier.v1.Croupier/GetView")(b"\xff\xff", timeout=5),
             GS.INVALID_ARGUMENT, "INVALID_ARGUMENT_REQUEST", {}),
            ("from_version", lambda: next(iter(s.StreamTable(pb.StreamTableRequest(table_id=tid, from_version=999), timeout=5))),
             GS.INVALID_ARGUMENT, "INVALID_ARGUMENT_VERSION", {"version": str(view.version)}),
        ]
        seen = set()
        for what, call, code, reason, meta in cases:
            got_code, message, info = refusal(call)
            assert (got_code, info.reason) == (code, reason), (what, got_code, info.reason, message)
            assert status_of(info.reason) == code.name, what
            for key, value in meta.items():
                assert info.metadata.get(key) == value, (what, dict(info.metadata))
            seen.add(reason)
        assert len(seen) >= 20
    finally:
        c.close()
        o.close()
        f.close()


def test_the_move_rate_says_when_to_come_back(tmp_path: Path) -> None:
    proc = ServerProcess(db=tmp_path / "croupier.db", extra=("--move-rate", "2/minute")).start()
    c = Client(proc.address)
    try:
        tid = c.seated_table()
        other = (c.view(tid).to_act[0] + 1) % 3
        for _ in range(2):
            with pytest.raises(grpc.RpcError):  # not its turn: counted all the same
                c.move(tid, other, "pass")
        code, _, info = refusal(lambda: c.move(tid, other, "pass"))
        assert (code, info.reason) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "RATE_LIMITED")
        assert 1 <= int(info.metadata["retry_after_seconds"]) <= 60
    finally:
        c.close()
        proc.stop()


def _struct(values: dict[str, Any]) -> Any:
    from google.protobuf import struct_pb2

    out = struct_pb2.Struct()
    out.update(values)
    return out


def test_move_refusals_name_the_rule_and_never_a_hidden_card(web_server: ServerProcess) -> None:
    """A Doppelkopf deal played by one client for all four seats; before every card, each
    seat tries the moves it may not make: another seat's cards, a card of its own that does
    not follow, a card out of turn. Each refusal names its rule; no ErrorInfo (reason and
    metadata, serialized whole) holds a card another seat holds, or any seat's token."""
    c = Client(web_server.address)
    try:
        table = c.create("doppelkopf", seats=[pb.SeatSpec(kind=pb.SEAT_KIND_HUMAN)] * 4,
                         options=_struct({"deals": 1}))
        tid = table.table_id
        for i in range(4):
            c.join(tid, name=f"p{i}")
        while "healthy" in c.view(tid, mover := c.view(tid).to_act[0]).legal_moves:
            c.move(tid, mover, "healthy")  # the reservations, in their order
        rules: set[str] = set()
        checked = 0
        for _ in range(16):
            public = c.view(tid)
            if not public.on_turn:
                break
            mover = public.on_turn[0]  # to_act holds every seat that may announce
            hands = {s: c.view(tid, s).view.doppelkopf.hand.split() for s in range(4)}
            legal = c.view(tid, mover).legal_moves
            attempts: list[tuple[int, str]] = []
            attempts += [(mover, card) for card in hands[(mover + 1) % 4] if card not in hands[mover]][:2]
            attempts += [(mover, card) for card in hands[mover] if card not in legal][:2]
            attempts += [((mover + 2) % 4, card) for card in hands[(mover + 2) % 4][:1]]
            for seat, card in attempts:
                try:
                    c.move(tid, seat, card)
                    raise AssertionError(f"{card} by seat {seat} was played")
                except grpc.RpcError as e:
                    status = rpc_status.from_call(e)
                    assert status is not None
                    info = error_details_pb2.ErrorInfo()
                    assert status.details[0].Unpack(info)
                    rules.add(info.reason)
                    assert info.reason in {r.value for r in MoveRule}, info.reason
                    values = [info.reason, *info.metadata.keys(), *info.metadata.values()]
                    others = {card for s, h in hands.items() if s != seat for card in h} - set(hands[seat])
                    for value in values:
                        assert not any(re.search(rf"\b{re.escape(x)}\b", value) for x in others), (info, others)
                        assert not any(token in value for token in c.tokens.values())
                    checked += 1
            c.move(tid, mover, next(m for m in legal if m in hands[mover]))  # a card, not a call
        assert checked > 20
        assert {"CARD_NOT_IN_HAND", "NOT_YOUR_TURN", "MUST_FOLLOW_SUIT"} <= rules, rules
    finally:
        c.close()


def test_the_web_port_carries_the_same_reason(web_server: ServerProcess) -> None:
    """Connect's JSON error has `details` with the ErrorInfo's type and base64 value; the
    gRPC-Web trailer grpc-status-details-bin holds the google.rpc.Status; a stream's error
    carries it too."""
    import base64

    c = Client(web_server.address)
    try:
        tid = c.seated_table()
        first = c.view(tid).to_act[0]
        other = (first + 1) % 3
        request = urllib.request.Request(
            f"{web_server.web_url}/croupier.v1.Croupier/SubmitMove",
            data=json.dumps({"tableId": tid, "move": "pass"}).encode(),
            headers={"content-type": "application/json",
                     "authorization": f"Bearer {c.tokens[other]}"},
        )
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(request, timeout=5)
        error = json.loads(info.value.read())
        assert error["code"] == "failed_precondition"
        assert error["message"] == f"not your turn: seat {first} is to act"
        (detail,) = error["details"]
        assert detail["type"] == "google.rpc.ErrorInfo"
        found = error_details_pb2.ErrorInfo.FromString(base64.b64decode(detail["value"] + "=="))
        assert (found.reason, found.domain, dict(found.metadata)) == (
            "NOT_YOUR_TURN", DOMAIN, {"to_act": str(first)})
        # the same refusal on the gRPC port
        _, message, native = refusal(lambda: c.move(tid, other, "pass"))
        assert native == found and message == error["message"]
        # gRPC-Web's trailer, and a stream's end (Connect), through connectrpc's own client
        for protocol, name, req, reason in [
            (ProtocolType.GRPC_WEB, "SubmitMove", pb.SubmitMoveRequest(table_id=tid, move="pass"),
             "NOT_YOUR_TURN"),
            (ProtocolType.CONNECT, "StreamTable", pb.StreamTableRequest(table_id=tid, from_version=999),
             "INVALID_ARGUMENT_VERSION"),
        ]:
            web = ConnectClientSync(web_server.web_url, protocol=protocol,
                                    codec=google_protobuf_binary_codec(), timeout_ms=10_000)
            headers = {"authorization": f"Bearer {c.tokens[other]}"}
            with pytest.raises(ConnectError) as raised:
                if name == "StreamTable":
                    list(web.execute_server_stream(request=req, method=method_info(name)))
                else:
                    web.execute_unary(request=req, method=method_info(name), headers=headers)
            (got,) = raised.value.details
            assert got.type_name == "google.rpc.ErrorInfo"
            assert error_details_pb2.ErrorInfo.FromString(got.message_bytes).reason == reason
    finally:
        c.close()


def test_every_service_refusal_names_a_reason_of_its_status() -> None:
    """Read from the source: each TableError(...) in service/ passes reason=, and where both
    are written out, the code is the reason's status."""
    missing, wrong = [], []
    for path in sorted((ROOT / "service").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "TableError"):
                continue
            where = f"{path.name}:{node.lineno}"
            reason = next((k.value for k in node.keywords if k.arg == "reason"), None)
            if reason is None:
                missing.append(where)
                continue
            code = ast.unparse(node.args[0]) if node.args else ""
            name = ast.unparse(reason).split(".")[-1]
            known = name in {*Reason.__members__, *MoveRule.__members__}
            if code.startswith("Code.") and known and status_of(name) != code.removeprefix("Code."):
                wrong.append(f"{where}: {code} with {name}")
    assert not missing, f"TableError without reason=: {missing}"
    assert not wrong, wrong


def test_every_reason_is_documented_with_its_status() -> None:
    text = (ROOT / "docs" / "api.md").read_text()
    rows = dict(re.findall(r"^\| `([A-Z_]+)` \| ([A-Z_]+) \|", text, re.M))
    assert set(rows) == set(all_reasons()), set(rows) ^ set(all_reasons())
    for reason, status in rows.items():
        assert status_of(reason) == status, reason


def test_the_web_client_has_words_for_every_reason() -> None:
    """web/src/i18n/en/errors.json has a message for every code, and a message quotes only
    parameters docs/api.md says the code carries (ICU arguments: `{name`)."""
    messages = json.loads((ROOT / "web" / "src" / "i18n" / "en" / "errors.json").read_text())
    text = (ROOT / "docs" / "api.md").read_text()
    documented = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| `") and len(cells) == 4 and cells[1].isupper():
            documented[cells[0].strip("`")] = set(re.findall(r"`([a-z_]+)`", cells[3]))
    assert set(all_reasons()) <= set(messages), set(all_reasons()) - set(messages)
    for code in all_reasons():
        quoted = set(re.findall(r"\{([a-z_]+)\s*[,}]", messages[code]))
        assert quoted <= documented[code], (code, quoted, documented[code])
