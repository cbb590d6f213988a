"""The service over real gRPC: a real `croupier serve` process with a real SQLite file.

What clients see is compared with what the engine says about the stored state (read from the
server's SQLite file), so secrecy is checked against the engine's own views.
"""

from __future__ import annotations

import asyncio
import random
import threading
from pathlib import Path
from typing import Any

import grpc
import pytest
from croupier.v1 import croupier_pb2 as pb
from croupier.v1 import dou_dizhu_pb2 as pb_dou_dizhu
from google.protobuf import struct_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from engines.registry import GAMES, get_game
from tests.support import (
    Client,
    ServerProcess,
    StructValue,
    bearer,
    log_lines,
    rpc_code,
    stored_event_states,
    stored_table,
)

GAME = get_game("dou_dizhu")
C = grpc.StatusCode

pytestmark = pytest.mark.e2e


def test_health_reflection_ping_and_games(server: ServerProcess, client: Client) -> None:
    health = health_pb2_grpc.HealthStub(client.channel)
    for service in ("", "croupier.v1.Croupier"):
        reply = health.Check(health_pb2.HealthCheckRequest(service=service), timeout=5)
        assert reply.status == health_pb2.HealthCheckResponse.SERVING
    refl = reflection_pb2_grpc.ServerReflectionStub(client.channel)
    replies = refl.ServerReflectionInfo(
        iter([reflection_pb2.ServerReflectionRequest(list_services="")]), timeout=5
    )
    names = {s.name for r in replies for s in r.list_services_response.service}
    assert {"croupier.v1.Croupier", "grpc.health.v1.Health"} <= names
    assert client.stub.Ping(pb.PingRequest(payload=b"\x00hi"), timeout=5).payload == b"\x00hi"
    games = client.stub.ListGames(pb.ListGamesRequest(), timeout=5).games
    dd = next(g for g in games if g.name == "dou_dizhu")
    assert (dd.min_players, dd.max_players) == (3, 3)
    assert {o.name for o in dd.options} >= {"deals", "deck"}


def test_list_games_serves_every_fact_of_the_engine_contract(client: Client) -> None:
    """What generic clients read instead of naming games (the lobby's labels and folds, the
    title, one-deal options, zero-sum, aliases) comes from each engine's GameInfo."""
    games = client.stub.ListGames(pb.ListGamesRequest(), timeout=5).games
    assert [g.name for g in games] == list(GAMES)
    for served in games:
        info = GAMES[served.name].info
        assert served.title == info.title and served.zero_sum == info.zero_sum
        assert dict(served.one_deal) == dict(info.one_deal)
        assert [(o.name, o.label, o.advanced, tuple(o.aliases)) for o in served.options] == [
            (o.name, o.title, o.advanced, o.aliases) for o in info.options
        ]
        assert all(o.label for o in served.options)
    assert any(g.zero_sum for g in games) and not all(g.zero_sum for g in games)
    assert any(o.aliases for g in games for o in g.options)


def test_an_option_under_its_old_and_new_name_at_once_is_refused(client: Client) -> None:
    """An alias (an option's older name) makes the same table as the name; both at once are
    refused with INVALID_ARGUMENT naming both, and nothing is created."""
    game, spec = next((g, o) for g in GAMES.values() for o in g.info.options if o.aliases)
    value = spec.default if spec.default else 1
    tables = {}
    for name in (spec.name, spec.aliases[0]):
        options = struct_pb2.Struct()
        options.update({name: value})
        table = client.create(game=game.info.name, options=options)
        tables[name] = table.options[spec.name]
    assert tables[spec.name] == tables[spec.aliases[0]] == value
    before = len(client.stub.ListTables(pb.ListTablesRequest(), timeout=5).tables)
    options = struct_pb2.Struct()
    options.update({spec.name: value, spec.aliases[0]: value})
    code, details = rpc_code(client.create, game=game.info.name, options=options)
    assert code == C.INVALID_ARGUMENT
    assert repr(spec.name) in details and repr(spec.aliases[0]) in details
    assert len(client.stub.ListTables(pb.ListTablesRequest(), timeout=5).tables) == before


def test_create_join_view_list(server: ServerProcess, client: Client) -> None:
    options = struct_pb2.Struct()
    options.update({"deals": 2})
    table = client.create(
        options=options,
        seats=[pb.SeatSpec(kind=pb.SEAT_KIND_HUMAN), pb.SeatSpec(kind=pb.SEAT_KIND_BOT,
               bot_level="random"), pb.SeatSpec()],
    )
    tid = table.table_id
    assert table.status == pb.TABLE_STATUS_WAITING and table.version == 1
    assert table.players == 3 and table.options["deals"] == 2
    assert [s.kind for s in table.seats] == [pb.SEAT_KIND_HUMAN, pb.SEAT_KIND_BOT,
                                             pb.SEAT_KIND_HUMAN]
    assert client.join(tid, name="ann") == 0
    mine = client.view(tid, 0)
    assert mine.seat == 0 and mine.version == 2 and mine.HasField("seat")
    # nothing is dealt before every seat is taken: nothing stored, no card to show
    assert stored_table(server.db, tid)[1] == b""
    assert mine.view.WhichOneof("game") == "dou_dizhu"
    assert mine.view.dou_dizhu == pb_dou_dizhu.DouDizhuView(seat=0)
    assert list(mine.result.totals) == [0, 0, 0] and not mine.result.finished
    assert not mine.to_act and not mine.legal_moves  # seats still empty: nobody acts
    public = client.view(tid)
    assert not public.HasField("seat") and public.view.dou_dizhu.hand == ""
    waiting = client.stub.ListTables(
        pb.ListTablesRequest(game="dou_dizhu", status=pb.TABLE_STATUS_WAITING, limit=500))
    assert tid in {t.table_id for t in waiting.tables}
    for_bots = client.stub.ListTables(pb.ListTablesRequest(waiting_for_bot=True, limit=500))
    assert tid in {t.table_id for t in for_bots.tables}
    random_bots = client.stub.ListTables(pb.ListTablesRequest(
        waiting_for_bot=True, limit=500, bot_levels=["random", "hard"]))
    assert tid in {t.table_id for t in random_bots.tables}
    expert_bots = client.stub.ListTables(pb.ListTablesRequest(
        waiting_for_bot=True, limit=500, bot_levels=["expert"]))
    assert tid not in {t.table_id for t in expert_bots.tables}
    # a private table is joined by id: not in the lobby, only where bots look for seats
    hidden = client.create(options=_struct(private=True),
                           seats=[pb.SeatSpec(kind=pb.SEAT_KIND_BOT, bot_level="random")] * 3)
    lobby = client.stub.ListTables(pb.ListTablesRequest(limit=500))
    assert hidden.table_id not in {t.table_id for t in lobby.tables} and tid in {
        t.table_id for t in lobby.tables}
    for_bots = client.stub.ListTables(pb.ListTablesRequest(waiting_for_bot=True, limit=500))
    assert hidden.table_id in {t.table_id for t in for_bots.tables}
    assert client.join(tid, name="bot", bot=True) == 1
    assert client.join(tid, name="bob") == 2
    table = client.view(tid).table
    assert table.status == pb.TABLE_STATUS_PLAYING and [s.name for s in table.seats] == [
        "ann", "bot", "bob"]
    state = GAME.decode(stored_table(server.db, tid)[1])  # dealt with the last seat
    assert client.view(tid, 0).view.dou_dizhu.hand == GAME.view(state, 0).hand != ""
    assert table.seats[1].is_bot and not table.seats[0].is_bot
    playing = client.stub.ListTables(pb.ListTablesRequest(status=pb.TABLE_STATUS_PLAYING))
    assert tid in {t.table_id for t in playing.tables}
    for_bots = client.stub.ListTables(pb.ListTablesRequest(waiting_for_bot=True, limit=500))
    assert tid not in {t.table_id for t in for_bots.tables}
    left = client.stub.LeaveTable(pb.LeaveTableRequest(table_id=tid),
                                  metadata=bearer(client.tokens[2]))
    assert left.table.status == pb.TABLE_STATUS_WAITING and not left.table.seats[2].occupied


def test_list_tables_pages_through_every_table_once(client: Client) -> None:
    """Paging with next_page_token gives the one-call list, in order, in small pages; the
    token only serves the filters it was given for."""
    made = {client.create(game="dos", players=2).table_id for _ in range(7)}
    stub = client.stub

    def pages(**kw: Any) -> list[list[str]]:
        out, token = [], ""
        while True:
            reply = stub.ListTables(pb.ListTablesRequest(limit=3, page_token=token, **kw),
                                    timeout=10)
            out.append([t.table_id for t in reply.tables])
            token = reply.next_page_token
            if not token:
                return out

    for kw in ({"game": "dos"}, {"game": "dos", "status": pb.TABLE_STATUS_WAITING},
               {"game": "dos", "waiting_for_bot": True}):
        got = pages(**kw)
        whole = [t.table_id for t in stub.ListTables(
            pb.ListTablesRequest(limit=500, **kw), timeout=10).tables]
        assert [tid for page in got for tid in page] == whole, kw
        assert all(len(page) == 3 for page in got[:-1]) and len(got[-1]) <= 3
    assert made <= {tid for page in pages(game="dos") for tid in page}
    token = stub.ListTables(pb.ListTablesRequest(game="dos", limit=3),
                            timeout=10).next_page_token
    for what, request in [
        ("other filters", pb.ListTablesRequest(game="dobro", page_token=token)),
        ("garbage", pb.ListTablesRequest(game="dos", page_token="not a token")),
        ("edited", pb.ListTablesRequest(game="dos", page_token=token[:-4] + "AAAA")),
        ("long", pb.ListTablesRequest(game="dos", page_token="A" * 2000)),
    ]:
        code, message = rpc_code(stub.ListTables, request, timeout=10)
        assert code == C.INVALID_ARGUMENT and "page_token" in message, what


def test_every_error_code_leaves_the_table_unchanged(server: ServerProcess, client: Client) -> None:
    waiting = client.create().table_id
    client.join(waiting, name="early")
    code, msg = rpc_code(client.move, waiting, 0, "pass")
    assert code == C.FAILED_PRECONDITION and "not started" in msg

    tid = client.seated_table()
    version, state_bytes = stored_table(server.db, tid)
    acting = client.view(tid).to_act[0]
    idle = (acting + 1) % 3
    tokens = dict(client.tokens)
    stub = client.stub

    def submit(move: str, md: list[tuple[str, str]] | None = None, expected: int = 0,
               table: str = tid) -> object:
        return stub.SubmitMove(
            pb.SubmitMoveRequest(table_id=table, move=move, expected_version=expected),
            metadata=md, timeout=5)

    cases = [
        # (what, call, expected code, words the message must contain)
        ("unknown table", lambda: client.view("nosuchtable"), C.NOT_FOUND, "no table"),
        ("unknown table move", lambda: submit("pass", bearer(tokens[acting]), table="nope"),
         C.NOT_FOUND, "no table"),
        ("unknown game", lambda: client.create(game="poker"), C.INVALID_ARGUMENT, "dou_dizhu"),
        ("players", lambda: client.create(players=5), C.INVALID_ARGUMENT, "players"),
        ("bad option", lambda: client.create(options=_struct(deals=0)), C.INVALID_ARGUMENT,
         "deals"),
        ("malformed move", lambda: submit("xyz", bearer(tokens[acting])), C.INVALID_ARGUMENT,
         "malformed"),
        ("no token", lambda: submit("pass"), C.UNAUTHENTICATED, "token"),
        ("not bearer", lambda: submit("pass", [("authorization", "Basic abc")]),
         C.UNAUTHENTICATED, "Bearer"),
        ("wrong token", lambda: submit("pass", bearer("x" * 32)), C.PERMISSION_DENIED, "token"),
        ("not your turn", lambda: submit("pass", bearer(tokens[idle])), C.FAILED_PRECONDITION,
         "not your turn"),
        ("illegal", lambda: submit("3", bearer(tokens[acting])), C.FAILED_PRECONDITION,
         "bidding"),
        ("stale version", lambda: submit("pass", bearer(tokens[acting]), expected=version - 1),
         C.ABORTED, "version"),
        ("long table id", lambda: submit("pass", bearer(tokens[acting]), table="t" * 20_000),
         C.INVALID_ARGUMENT, "too long"),
        ("version from the future", lambda: submit("pass", bearer(tokens[acting]),
                                                   expected=version + 1),
         C.INVALID_ARGUMENT, "past table"),
        ("seat taken", lambda: client.join(tid, seat=0), C.FAILED_PRECONDITION, "taken"),
        ("table full", lambda: client.join(tid), C.FAILED_PRECONDITION, "no free seat"),
        ("no such seat", lambda: client.join(tid, seat=9), C.INVALID_ARGUMENT, "seat 9"),
        ("short own token", lambda: client.join(waiting, token="s3cret"), C.INVALID_ARGUMENT,
         "22 to 128 characters"),
        ("own token outside the alphabet",
         lambda: client.join(waiting, token="s3cret/" * 4 + "\x1b"), C.INVALID_ARGUMENT,
         "5 of them outside"),
        ("a held token asked for another seat", lambda: client.join(tid, seat=(acting + 1) % 3,
                                                                    token=tokens[acting]),
         C.FAILED_PRECONDITION, f"already holds seat {acting}"),
        ("a person's token asking as a bot",
         lambda: client.join(tid, token=tokens[acting], bot=True), C.FAILED_PRECONDITION,
         "as a person"),
        ("bot seat for people", lambda: client.join(tid, bot=True), C.FAILED_PRECONDITION,
         "no free seat"),
        ("too many tables", lambda: stub.ListTables(pb.ListTablesRequest(limit=100_000)),
         C.RESOURCE_EXHAUSTED, "at most"),
        ("bot levels without waiting_for_bot",
         lambda: stub.ListTables(pb.ListTablesRequest(bot_levels=["hard"])),
         C.INVALID_ARGUMENT, "set waiting_for_bot"),
        ("unknown bot level to list", lambda: stub.ListTables(pb.ListTablesRequest(
            waiting_for_bot=True, bot_levels=["hard", "godlike"])),
         C.INVALID_ARGUMENT, "unknown bot level 'godlike'"),
        ("too many bot levels", lambda: stub.ListTables(pb.ListTablesRequest(
            waiting_for_bot=True, bot_levels=["hard"] * 50)),
         C.RESOURCE_EXHAUSTED, "at most 6 bot levels"),
        ("long name", lambda: client.join(waiting, name="n" * 500), C.RESOURCE_EXHAUSTED,
         "names"),
        ("long options", lambda: client.create(options=_struct(deck="3s " * 3000)),
         C.RESOURCE_EXHAUSTED, "options"),
        ("long move", lambda: submit("3" * 10_000, bearer(tokens[acting])),
         C.RESOURCE_EXHAUSTED, "move"),
        ("big ping", lambda: stub.Ping(pb.PingRequest(payload=b"x" * 100_000)),
         C.RESOURCE_EXHAUSTED, "payload"),
        ("negative from_version", lambda: list(client.stream(tid, -1)), C.INVALID_ARGUMENT,
         "from_version"),
        ("from_version past the end", lambda: list(client.stream(tid, version + 1)),
         C.INVALID_ARGUMENT, "past the table's version"),
        ("unknown bot level", lambda: client.create(
            seats=[pb.SeatSpec(kind=pb.SEAT_KIND_BOT, bot_level="grandmaster\x1b[31m")] * 3),
         C.INVALID_ARGUMENT, "unknown bot level 'grandmaster\\x1b[31m'; levels: random"),
        ("unknown fill level", lambda: client.create(fill_with_bots_after_seconds=5,
                                                     fill_level="hardest"),
         C.INVALID_ARGUMENT, "expert"),
    ]
    for what, call, want, words in cases:
        code, msg = rpc_code(call)
        assert code == want, f"{what}: got {code} {msg!r}"
        assert words.lower() in msg.lower(), f"{what}: {msg!r}"
        assert all(t not in msg for t in tokens.values()), what
        assert "s3cret" not in msg, what
        assert stored_table(server.db, tid) == (version, state_bytes), what
    # and the table still plays on from where it was
    mine = client.view(tid, acting)
    assert client.move(tid, acting, mine.legal_moves[0], version).version == version + 1
    # the log says a move was refused, not why: the reason can tell what its mover holds
    log = server.db.with_suffix(".log").read_text()
    assert any(line.get("error") == "illegal move" for line in log_lines(log))
    assert max(len(str(line.get("table", ""))) for line in log_lines(log)) < 100
    assert "the bidding is not over" not in log
    assert all(t not in log for t in tokens.values())


def _struct(**values: StructValue) -> struct_pb2.Struct:
    s = struct_pb2.Struct()
    s.update(values)
    return s


def test_views_and_streams_show_each_seat_only_its_own_cards(
    server: ServerProcess, client: Client
) -> None:
    tid = client.seated_table()
    rng = random.Random(11)
    for _ in range(40):
        _, data = stored_table(server.db, tid)
        state = GAME.decode(data)
        for seat in (0, 1, 2, None):
            got = client.view(tid, seat)
            assert got.view.dou_dizhu == GAME.view(state, seat), seat
            if seat is None:
                assert got.view.dou_dizhu.hand == "" and not got.legal_moves
            shown = str(got)
            for other in range(3):
                hand = GAME.view(state, other).hand
                if other != seat and len(hand) >= 8:  # long enough not to occur by chance
                    assert hand not in shown, (seat, other)
        if client.step(tid, rng) is None:
            break
    states = stored_event_states(server.db, tid)
    last = max(states)
    public = list(_take(client.stream(tid, 0), last))
    joined = {e.seat: e.version for e in public if e.kind == pb.EVENT_KIND_JOINED}
    # the deal is made with the last seat: the events before it carry no state at all
    dealt = max(joined.values())
    assert [v for v in sorted(states) if not states[v]] == list(range(1, dealt))
    for seat in (0, 1, 2, None):
        events = list(_take(client.stream(tid, 0, seat), last))
        assert [e.version for e in events] == list(range(1, last + 1))
        for e in events:
            # a seat's view from its joining on; before it, what a spectator sees
            observer = seat if seat is None or e.version >= joined[seat] else None
            if e.version < dealt:  # nothing dealt: the view is empty but for the seat
                want = pb_dou_dizhu.DouDizhuView(seat=-1 if observer is None else observer)
            else:
                want = GAME.view(GAME.decode(states[e.version]), observer)
            assert e.view.view.dou_dizhu == want
            assert e.view.version == e.version


def _take(stream, upto: int) -> list[pb.TableEvent]:
    """Events from a live stream up to version `upto`, then cancels it."""
    out = []
    for e in stream:
        out.append(e)
        if e.version >= upto:
            break
    stream.cancel()
    return out


def test_stream_resumes_exactly_once_while_play_goes_on(server: ServerProcess,
                                                        client: Client) -> None:
    tid = client.seated_table()
    rng = random.Random(5)
    for _ in range(10):
        client.step(tid, rng)
    live_before = client.stream(tid, 0, seat=1)  # subscribed before the rest of the match
    first = _take(client.stream(tid, 0, seat=0), 8)
    assert [e.version for e in first] == list(range(1, 9))
    player = Client(server.address)
    player.tokens = dict(client.tokens)
    done = threading.Event()

    def play_on() -> None:
        try:
            player.play_to_end(tid, random.Random(6))
        finally:
            done.set()

    thread = threading.Thread(target=play_on)
    thread.start()
    rest = list(client.stream(tid, first[-1].version, seat=0))  # ends after END
    thread.join(60)
    assert done.is_set()
    player.close()
    versions = [e.version for e in first + rest]
    assert versions == list(range(1, versions[-1] + 1))  # every event once, in order
    assert rest[-1].kind == pb.EVENT_KIND_END
    assert stored_table(server.db, tid)[0] == versions[-1]
    live = list(live_before)
    assert [e.version for e in live] == versions
    assert [e.move for e in live] == [e.move for e in first + rest]  # moves are public here
    # resuming after the end returns at once with nothing
    assert list(client.stream(tid, versions[-1], seat=0)) == []


def test_a_match_played_to_the_end(server: ServerProcess, client: Client) -> None:
    tid = client.seated_table(options=_struct(deals=2))
    moves = client.play_to_end(tid, random.Random(3))
    assert moves > 10
    view = client.view(tid, 0)
    assert view.table.status == pb.TABLE_STATUS_FINISHED and not view.to_act
    assert view.result.finished and view.result.deals_played == 2
    assert sum(view.result.totals) == 0 and view.result.winners
    events = list(client.stream(tid, 0))
    assert events[-1].kind == pb.EVENT_KIND_END and events[-1].version == view.version
    assert events[-2].kind == pb.EVENT_KIND_MOVE and events[-2].deal_over
    assert sum(e.deal_over for e in events) == 2
    assert list(events[-1].view.result.totals) == list(view.result.totals)


def test_a_submit_move_retried_after_a_lost_reply_is_told_it_landed(
    server: ServerProcess, client: Client
) -> None:
    """The same SubmitMove sent twice (as after UNAVAILABLE or a deadline) gets the same
    answer; the move is played once; a different move at that version is still ABORTED."""
    tid = client.seated_table()
    view = client.view(tid)
    seat = view.to_act[0]
    first, other = client.view(tid, seat).legal_moves[:2]
    reply = client.move(tid, seat, first, view.version)
    retry = client.move(tid, seat, first, view.version)
    assert retry == reply
    assert client.view(tid).version == view.version + 1
    code, message = rpc_code(client.move, tid, seat, other, view.version)
    assert code == C.ABORTED and "version" in message


def test_a_join_table_retried_with_its_own_token_gets_the_same_seat(
    server: ServerProcess, client: Client
) -> None:
    """A JoinTable whose reply was lost, sent again with the caller's own token, gets back
    the seat it took, table unchanged; the token works as the server's would."""
    tid = client.create().table_id
    mine = "own-Token_" + "x" * 14
    request = pb.JoinTableRequest(table_id=tid, name="ann", token=mine)
    first = client.stub.JoinTable(request, timeout=10)
    version = stored_table(server.db, tid)
    again = client.stub.JoinTable(request, timeout=10)
    assert (again.seat, again.token) == (first.seat, first.token) == (0, mine)
    assert again.table == first.table
    assert stored_table(server.db, tid) == version  # nothing written by the retry
    assert client.stub.JoinTable(pb.JoinTableRequest(table_id=tid, name="ann", seat=0,
                                                     token=mine), timeout=10).seat == 0
    client.tokens[0] = mine
    assert client.view(tid, 0).seat == 0  # the own token authenticates like any other
    # another caller with another own token takes another seat; the server still makes
    # tokens for those who send none
    assert client.join(tid, name="bob", token="B" * 22) == 1
    assert client.join(tid, name="cy") == 2 and len(client.tokens[2]) >= 22
    assert client.view(tid).table.status == pb.TABLE_STATUS_PLAYING
    # the same token at another table is another seat there
    other = client.create().table_id
    assert client.stub.JoinTable(pb.JoinTableRequest(table_id=other, token=mine),
                                 timeout=10).seat == 0
    log = server.db.with_suffix(".log").read_text()
    assert mine not in log and "B" * 22 not in log


def test_bots_fill_empty_seats_after_the_delay(client: Client) -> None:
    table = client.create(fill_with_bots_after_seconds=1.0, fill_level="heuristic")
    tid = table.table_id
    assert rpc_code(client.join, tid, bot=True)[0] == C.FAILED_PRECONDITION
    client.join(tid, name="ann")
    events = _take(client.stream(tid, 0), 3)  # created, joined, seats opened
    assert events[-1].kind == pb.EVENT_KIND_SEATS_OPENED
    seats = events[-1].view.table.seats
    assert [s.kind for s in seats] == [pb.SEAT_KIND_HUMAN, pb.SEAT_KIND_BOT, pb.SEAT_KIND_BOT]
    assert seats[1].bot_level == "heuristic"
    for_bots = client.stub.ListTables(pb.ListTablesRequest(waiting_for_bot=True, limit=500))
    assert tid in {t.table_id for t in for_bots.tables}
    assert rpc_code(client.join, tid, name="bob")[0] == C.FAILED_PRECONDITION
    assert {client.join(tid, bot=True), client.join(tid, bot=True)} == {1, 2}
    assert client.view(tid).table.status == pb.TABLE_STATUS_PLAYING


def test_killed_server_restarts_at_the_same_version(tmp_path: Path) -> None:
    db = tmp_path / "croupier.db"
    first = ServerProcess(db=db).start()
    client = Client(first.address)
    try:
        tid = client.seated_table()
        rng = random.Random(9)
        acked = 0
        for _ in range(15):
            reply = client.step(tid, rng)
            assert reply is not None
            acked = reply.version
        stream = client.stream(tid, 0, seat=0)
        first.kill()
        with pytest.raises(grpc.RpcError) as info:
            list(stream)
        assert info.value.code() == C.UNAVAILABLE
    finally:
        client.close()
    second = ServerProcess(db=db).start()
    client2 = Client(second.address)
    client2.tokens = dict(client.tokens)  # tokens survive the restart
    try:
        view = client2.view(tid, 0)
        assert view.version == acked
        client2.play_to_end(tid, rng)
        events = list(client2.stream(tid, 0))
        assert [e.version for e in events] == list(range(1, events[-1].version + 1))
        assert events[-1].kind == pb.EVENT_KIND_END
        # a graceful stop ends open streams with UNAVAILABLE and a resume hint, exit code 0
        other = client2.seated_table()
        stream = client2.stream(other, 0)
        assert next(stream).version == 1
        assert second.stop() == 0
        with pytest.raises(grpc.RpcError) as info:
            list(stream)
        assert info.value.code() == C.UNAVAILABLE
    finally:
        client2.close()
        second.stop()
    log = (db.with_suffix(".log")).read_text()
    assert any(
        line.get("method") == "SubmitMove" and line.get("code") == "OK" for line in log_lines(log)
    )
    for token in client.tokens.values():
        assert token not in log


def test_a_seat_given_up_streams_only_the_public_view_afterwards(
    server: ServerProcess, client: Client
) -> None:
    tid = client.seated_table()
    old_token = client.tokens[1]
    stream = client.stream(tid, 0, seat=1)
    # the first event proves the stream was admitted with the token before it is given up
    # (a loaded server may otherwise handle LeaveTable first and refuse the stream)
    first = next(stream)
    client.stub.LeaveTable(pb.LeaveTableRequest(table_id=tid), metadata=bearer(old_token))
    newcomer = Client(server.address)
    try:
        assert newcomer.join(tid, name="new") == 1
        events = [first, *_take(stream, 6)]  # created, 3 joined, left, joined
    finally:
        newcomer.close()
    assert [e.kind for e in events[-2:]] == [pb.EVENT_KIND_LEFT, pb.EVENT_KIND_JOINED]
    assert events[3].view.seat == 1 and events[3].view.view.dou_dizhu.hand  # still its seat
    assert not events[-1].view.HasField("seat") and events[-1].view.view.dou_dizhu.hand == ""
    code, _ = rpc_code(client.stub.GetView, pb.GetViewRequest(table_id=tid),
                       metadata=bearer(old_token))
    assert code == C.PERMISSION_DENIED


def test_a_new_holder_streams_the_seats_past_as_a_spectator(
    server: ServerProcess, client: Client
) -> None:
    tid = client.seated_table()
    rng = random.Random(11)
    for _ in range(4):
        client.step(tid, rng)
    client.stub.LeaveTable(pb.LeaveTableRequest(table_id=tid), metadata=bearer(client.tokens[1]))
    newcomer = Client(server.address)
    try:
        newcomer.join(tid, name="new", seat=1)
        joined_at = newcomer.view(tid, 1).version
        events = _take(newcomer.stream(tid, 0, seat=1), joined_at)
    finally:
        newcomer.close()
    # what seat 1 held before this holder joined (its earlier holder's hand) is not shown
    assert [e.view.HasField("seat") for e in events] == [False] * (joined_at - 1) + [True]
    assert all(e.view.view.dou_dizhu.hand == "" for e in events[:-1])
    assert events[-1].kind == pb.EVENT_KIND_JOINED and events[-1].view.view.dou_dizhu.hand


def test_two_servers_on_one_file_share_tables_safely(server: ServerProcess) -> None:
    """Compare-and-set holds across processes, and a stream on one server sees moves made
    through the other (it re-reads the store about once a second). Two different moves raced
    at one version: one lands, the other is ABORTED; a repeat of the landed one (a retry) is
    answered as the move it repeats, whichever server it reached."""
    twin = ServerProcess(db=server.db, log=server.db.with_suffix(".twin.log")).start()
    a, b = Client(server.address), Client(twin.address)
    try:
        tid = a.seated_table()
        b.tokens = dict(a.tokens)
        stream = a.stream(tid, 0)
        rng = random.Random(2)
        for i in range(6):
            (a if i % 2 else b).step(tid, rng)
        while len(a.view(tid, a.view(tid).to_act[0]).legal_moves) < 2:
            a.step(tid, rng)
        public = a.view(tid)
        seat = public.to_act[0]
        first, second = a.view(tid, seat).legal_moves[:2]
        results: list[tuple[str, int | grpc.StatusCode]] = []

        def race(c: Client, move: str) -> None:
            try:
                results.append((move, c.move(tid, seat, move, public.version).version))
            except grpc.RpcError as e:
                results.append((move, e.code()))

        threads = [threading.Thread(target=race, args=args)
                   for args in ((a, first), (b, second), (a, second), (b, first))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(10)
        events = _take(stream, public.version + 1)
        assert [e.version for e in events] == list(range(1, public.version + 2))
        landed = events[-1].move
        assert landed in (first, second)
        assert sorted(r for m, r in results if m == landed) == [public.version + 1] * 2, results
        assert [r for m, r in results if m != landed] == [C.ABORTED] * 2, results
        assert a.view(tid).version == public.version + 1
    finally:
        a.close()
        b.close()
        twin.stop()


def test_a_quiet_stream_survives_its_clients_keepalive_pings(
    server: ServerProcess, client: Client
) -> None:
    """A table waiting for people sends nothing for minutes; a client that pings to find dead
    connections (as the bot workers do, every 30 s) must not be cut off for pinging. Here it
    pings every 5 s (the server accepts one every 4 s) through a quiet spell of 20 s (gRPC's own
    default, two strikes, closes the connection at the third ping: too_many_pings), and the stream then delivers
    the next event."""
    table = client.create()
    tid = table.table_id

    async def go() -> pb.TableEvent:
        options = [("grpc.keepalive_time_ms", 5_000), ("grpc.keepalive_timeout_ms", 5_000),
                   ("grpc.http2.max_pings_without_data", 0),
                   ("grpc.keepalive_permit_without_calls", 1),
                   # only keepalive pings, evenly spaced: gRPC's flow-control probes come in
                   # bursts of their own whenever data arrives
                   ("grpc.http2.bdp_probe", 0)]
        async with grpc.aio.insecure_channel(server.address, options=options) as channel:
            from croupier.v1 import croupier_pb2_grpc as pb_grpc

            call = pb_grpc.CroupierStub(channel).StreamTable(
                pb.StreamTableRequest(table_id=tid, from_version=table.version))
            await asyncio.sleep(20)  # nothing happens at the table meanwhile
            await asyncio.to_thread(client.join, tid, "late")
            event = await asyncio.wait_for(call.read(), 30)
            call.cancel()
            assert isinstance(event, pb.TableEvent)
            return event

    event = asyncio.run(go())
    assert event.kind == pb.EVENT_KIND_JOINED and event.version == table.version + 1
