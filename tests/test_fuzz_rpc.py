"""Every RPC of croupier.v1 fed hypothesis-generated requests, against a real server process.

Whatever arrives, the server answers with a deliberate status (never INTERNAL or UNKNOWN, never
a dead process), the answer is the one the API promises for that input where the input
determines it, and a refused request leaves every stored table exactly as it was (compared
byte for byte in the server's SQLite file before and after).
"""

from __future__ import annotations

import base64
import contextlib
import json
import random
import sqlite3
import string
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import cast

import grpc
import pytest
from croupier.v1 import croupier_pb2 as pb
from google.protobuf import struct_pb2
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bots.levels import LEVELS
from engines.registry import GAMES
from service.model import LADDER_NAME
from service.validation import CLIENT_TOKEN
from tests.support import Client, ServerProcess, bearer

C = grpc.StatusCode
pytestmark = pytest.mark.e2e

# Codes a refusal may carry; INTERNAL and UNKNOWN would mean the server did not see it coming.
REFUSALS = {
    C.INVALID_ARGUMENT,
    C.FAILED_PRECONDITION,
    C.ABORTED,
    C.NOT_FOUND,
    C.UNAUTHENTICATED,
    C.PERMISSION_DENIED,
    C.RESOURCE_EXHAUSTED,
}
FUZZ = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


class World:
    """A server with a playing table (every seat held), a waiting one, and their tokens."""

    def __init__(self, server: ServerProcess, client: Client) -> None:
        self.server = server
        self.client = client
        self.playing = client.seated_table()
        self.waiting = client.create(game="doppelkopf").table_id
        joined = Client(server.address)
        self.waiting_seat = joined.join(self.waiting, name="w")
        self.tokens = list(client.tokens.values()) + list(joined.tokens.values())
        self.held = {t: self.playing for t in client.tokens.values()} | {
            t: self.waiting for t in joined.tokens.values()}
        self.sent_tokens: set[str] = set()  # own tokens sent to JoinTable by the fuzzer
        joined.close()

    def snapshot(self) -> dict[str, dict[str, object]]:
        """Every stored table, every column (version, state, seats, status...), from SQLite."""
        with closing(sqlite3.connect(f"file:{self.server.db}?mode=ro", uri=True)) as conn:
            cursor = conn.execute("SELECT * FROM tables")
            names = [d[0] for d in cursor.description]
            rows = cursor.fetchall()
        return {row[0]: dict(zip(names, row, strict=True)) for row in rows}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    db: Path = tmp_path_factory.mktemp("fuzz") / "croupier.db"
    server = ServerProcess(db=db).start()
    client = Client(server.address)
    made = World(server, client)
    yield made
    client.close()
    code = server.stop()
    log = db.with_suffix(".log").read_text()
    assert code == 0, f"the server ended with {code}"
    # by the log's structure, not its text: fuzzed ids and names may spell anything
    events = []
    for line in log.splitlines():
        with contextlib.suppress(ValueError):
            events.append(json.loads(line))
    assert not [e for e in events if isinstance(e, dict) and e.get("event") == "rpc_internal_error"], log[-3000:]
    assert not [line for line in log.splitlines() if line.startswith("Traceback")], log[-3000:]
    assert all(t not in log for t in made.tokens), "a seat token in the server log"
    assert all(t not in log for t in made.sent_tokens), "an own token in the server log"


# --- strategies ------------------------------------------------------------------------
texts = st.one_of(
    st.text(max_size=80),
    st.text(alphabet=string.printable, max_size=300),
    st.sampled_from(["", " ", "\x00", "pass", "bid 3", "3", "a" * 65, "é" * 100, "-1"]),
)
ints32 = st.integers(-(2**31), 2**31 - 1)
ints64 = st.integers(-(2**63), 2**63 - 1)
json_values = st.recursive(
    st.none() | st.booleans() | st.floats(allow_nan=False) | st.text(max_size=30)
    | st.integers(-(2**53), 2**53),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner,
                                                                  max_size=4),
    max_leaves=12,
)
OPTION_NAMES = sorted({o.name for g in GAMES.values() for o in g.info.options}
                      | {"private", "turn_seconds", "players"})
option_dicts = st.dictionaries(
    st.one_of(st.text(max_size=12), st.sampled_from(OPTION_NAMES)),
    json_values,
    max_size=5,
)
bot_levels = st.one_of(st.sampled_from(["", *LEVELS]), texts)
games = st.one_of(st.sampled_from(sorted(GAMES)), texts)


def table_ids(world: World) -> st.SearchStrategy[str]:
    return st.one_of(st.sampled_from([world.playing, world.waiting]), texts)


def tokens(world: World) -> st.SearchStrategy[list[tuple[str, str]] | None]:
    """Metadata: none, a real token (of some seat), a random one, or a broken header."""
    header = st.text(alphabet=string.ascii_letters + string.digits + " -_.", max_size=60)
    return st.one_of(
        st.none(),
        st.sampled_from(world.tokens).map(bearer),
        header.map(bearer),
        header.map(lambda h: [("authorization", h)]),
    )


def struct_of(values: dict) -> struct_pb2.Struct:
    s = struct_pb2.Struct()
    s.update(values)
    return s


def call(fn, request, metadata=None) -> tuple[grpc.StatusCode, str, object]:
    """(code, details, reply) of a unary call; reply None when refused."""
    try:
        reply = fn(request, metadata=metadata, timeout=10)
    except grpc.RpcError as e:
        return e.code(), e.details() or "", None
    return C.OK, "", reply


def refused_without_change(world: World, before: dict, code: grpc.StatusCode, details: str,
                           what: str) -> None:
    assert code in REFUSALS, f"{what}: {code} {details!r}"
    assert details.strip(), f"{what}: {code} without a message"
    assert world.snapshot() == before, f"{what}: refused ({code}) but a table changed"
    assert all(t not in details for t in world.tokens), f"{what}: a token in the message"


def id_code(world: World, table_id: str) -> grpc.StatusCode | None:
    """What an id alone decides: malformed or unknown, else None (the table exists)."""
    if not table_id or len(table_id) > 64:
        return C.INVALID_ARGUMENT
    if table_id not in (world.playing, world.waiting):
        return C.NOT_FOUND
    return None


# --- the RPCs --------------------------------------------------------------------------
def test_fuzz_create_table(world: World) -> None:
    @FUZZ
    @given(
        game=games,
        players=ints32,
        options=option_dicts,
        kinds=st.lists(st.integers(-3, 5), max_size=7),
        levels=bot_levels,
        fill=st.floats(allow_nan=True, allow_infinity=True),
        fill_level=bot_levels,
    )
    def run(game, players, options, kinds, levels, fill, fill_level) -> None:
        req = pb.CreateTableRequest(
            game=game, players=players, options=struct_of(options),
            seats=[pb.SeatSpec(kind=k, bot_level=levels) for k in kinds],
            fill_with_bots_after_seconds=fill, fill_level=fill_level,
        )
        before = world.snapshot()
        code, details, reply = call(world.client.stub.CreateTable, req)
        if code == C.OK:
            assert len(world.snapshot()) == len(before) + 1
            assert game in GAMES
            return
        refused_without_change(world, before, code, details, f"CreateTable({req})")
        if game not in GAMES:
            assert code == C.INVALID_ARGUMENT

    run()


def test_fuzz_join_table(world: World) -> None:
    # (token, whether it must never show): a string of the random-bytes branch is not drawn
    # anywhere else, where a text branch's may also be drawn as a table id or a name (and
    # then rightly quoted as such)
    own = st.one_of(
        st.just(("", False)),
        st.sampled_from(world.tokens).map(lambda t: (t, False)),  # holds a seat: a retry
        st.binary(min_size=16, max_size=32).map(
            lambda b: (base64.urlsafe_b64encode(b).decode().rstrip("="), len(set(b)) >= 8)),
        st.text(alphabet=string.ascii_letters + string.digits + "-_", min_size=22,
                max_size=40).map(lambda t: (t, False)),
        texts.map(lambda t: (t, False)),
    )

    @FUZZ
    @given(table_id=table_ids(world), seat=st.none() | ints32, name=texts, bot=st.booleans(),
           own_token=own)
    def run(table_id, seat, name, bot, own_token) -> None:
        token, secret = own_token
        req = pb.JoinTableRequest(table_id=table_id, name=name, bot=bot, token=token)
        if seat is not None:
            req.seat = seat
        if secret:
            world.sent_tokens.add(token)
        before = world.snapshot()
        code, details, reply = call(world.client.stub.JoinTable, req)
        joined = cast(pb.JoinTableResponse, reply)  # what JoinTable answers (grpc: untyped)
        if code == C.OK and world.held.get(token) == table_id:  # a retry: its seat, no change
            assert joined.token == token and world.snapshot() == before
            return
        # the playing table is full and the waiting one's free seats are human: a bot, a
        # bad seat or an over-long name is refused there too
        if code == C.OK:  # a free human seat of the waiting table: give it back
            assert table_id == world.waiting and not bot
            assert joined.token == token or not token
            world.client.stub.LeaveTable(pb.LeaveTableRequest(table_id=table_id),
                                         metadata=bearer(joined.token), timeout=10)
            return
        refused_without_change(world, before, code, details, f"JoinTable({req})")
        if secret:
            assert token not in details
        if (len(name.strip()) <= 64 and not any(not c.isprintable() for c in name.strip())
                and (not token or CLIENT_TOKEN.fullmatch(token)) and token not in world.tokens):
            expected = id_code(world, table_id)
            if expected is not None:
                assert code == expected, (code, details)

    run()


def test_fuzz_leave_get_view_and_stream(world: World) -> None:
    @FUZZ
    @given(table_id=table_ids(world), md=tokens(world), from_version=ints64)
    def run(table_id, md, from_version) -> None:
        before = world.snapshot()
        stub = world.client.stub
        # GetView: a spectator's view without a token, never a change
        code, details, reply = call(stub.GetView, pb.GetViewRequest(table_id=table_id), md)
        if code != C.OK:
            refused_without_change(world, before, code, details, "GetView")
            if md is None:
                assert code == id_code(world, table_id)
        # StreamTable: the first event or a refusal
        try:
            stream = stub.StreamTable(
                pb.StreamTableRequest(table_id=table_id, from_version=from_version),
                metadata=md, timeout=0.3,
            )
            next(iter(stream))
            stream.cancel()
        except StopIteration:
            pass
        except grpc.RpcError as e:
            if e.code() != C.DEADLINE_EXCEEDED:  # a valid resume point past the end waits
                refused_without_change(world, before, e.code(), e.details() or "", "StreamTable")
                if from_version < 0 and md is None:
                    assert e.code() == C.INVALID_ARGUMENT
        # LeaveTable with anything but the right token is refused
        if md is None or md[0][1].removeprefix("Bearer ") not in world.tokens:
            code, details, reply = call(stub.LeaveTable, pb.LeaveTableRequest(table_id=table_id), md)
            refused_without_change(world, before, code, details, "LeaveTable")
            if md is None and id_code(world, table_id) is None:
                assert code == C.UNAUTHENTICATED

    run()


def test_fuzz_submit_move(world: World) -> None:
    @FUZZ
    @given(
        table_id=table_ids(world),
        md=tokens(world),
        move=st.one_of(texts, st.sampled_from(
            [m for g in GAMES.values() for m in ("pass", "bid 1", "3", "healthy", "skip")])),
        expected=ints64,
    )
    def run(table_id, md, move, expected) -> None:
        before = world.snapshot()
        req = pb.SubmitMoveRequest(table_id=table_id, move=move, expected_version=expected)
        code, details, reply = call(world.client.stub.SubmitMove, req, md)
        if code == C.OK:  # a real token, a legal move and no (or the right) version
            assert expected in (0, before[table_id]["version"])
            return
        refused_without_change(world, before, code, details, f"SubmitMove({req})")
        if len(move) <= 256 and expected >= 0 and md is None and id_code(world, table_id) is None:
            assert code == C.UNAUTHENTICATED

    run()



def test_fuzz_list_games_tables_and_ping(world: World) -> None:
    @FUZZ
    @given(game=games, status=st.integers(-5, 10), bot=st.booleans(), limit=ints32,
           levels=st.lists(st.sampled_from(sorted(LEVELS)) | texts, max_size=8),
           page=st.just("") | texts,
           payload=st.binary(max_size=200), pad=st.sampled_from([0, 65_336, 65_337, 70_000]))
    def run(game, status, bot, limit, levels, page, payload, pad) -> None:
        payload += b"x" * pad
        before = world.snapshot()
        stub = world.client.stub
        assert call(stub.ListGames, pb.ListGamesRequest())[0] == C.OK
        req = pb.ListTablesRequest(game=game, status=status, waiting_for_bot=bot, limit=limit,
                                   bot_levels=levels, page_token=page)
        code, details, reply = call(stub.ListTables, req)
        levels_ok = not levels or (bot and len(levels) <= len(LEVELS)
                                   and all(level in LEVELS for level in levels))
        if code != C.OK:
            refused_without_change(world, before, code, details, f"ListTables({req})")
            if limit < 0 or status not in pb.TableStatus.values():
                assert code == C.INVALID_ARGUMENT
            elif limit > 500 or (bot and len(levels) > len(LEVELS)):
                assert code == C.RESOURCE_EXHAUSTED
            else:
                assert code == C.INVALID_ARGUMENT and (game not in GAMES or not levels_ok
                                                       or page != "")
        else:
            assert 0 <= limit <= 500 and (not game or game in GAMES)
            assert status in pb.TableStatus.values()
            assert levels_ok and not page  # no fuzzed text is a token this server gave
            listed = cast(pb.ListTablesResponse, reply).tables
            if levels:  # each listed table has a free bot seat of one of the levels asked
                assert all(any(not s.occupied and s.kind == pb.SEAT_KIND_BOT
                               and s.bot_level in levels for s in t.seats) for t in listed)
        try:
            reply = stub.Ping(pb.PingRequest(payload=payload), timeout=10)
            assert reply.payload == payload and len(payload) <= 64 * 1024
        except grpc.RpcError as e:
            assert e.code() == C.RESOURCE_EXHAUSTED and len(payload) > 64 * 1024
        assert world.snapshot() == before

    run()


def ladder_snapshot(world: World) -> dict[str, list[tuple[object, ...]]]:
    """Every stored rating, rated match and rated table, from SQLite."""
    with closing(sqlite3.connect(f"file:{world.server.db}?mode=ro", uri=True)) as conn:
        return {name: sorted(conn.execute(f"SELECT * FROM {name}").fetchall())
                for name in ("ratings", "rated_matches", "rated_tables")}


def test_fuzz_rate_match_and_list_ratings(world: World) -> None:
    """RateMatch may rate only the one finished table of ladder 'fz' (once: a repeat is
    already rated); whatever else comes is refused with the stored tables and ratings as
    they were. ListRatings answers every well-formed ladder and known game."""
    client = world.client
    seats = [pb.SeatSpec(kind=pb.SEAT_KIND_BOT, bot_level=level)
             for level in ("random", "heuristic", "easy")]
    finished = client.create(seats=seats, options=struct_of({"ladder": "fz", "deals": 1})).table_id
    for seat in range(3):
        client.join(finished, seat=seat, bot=True)
    client.play_to_end(finished, random.Random(1))
    ladders = st.one_of(st.sampled_from(["fz", "main", "", "x" * 41, "FZ"]), texts)
    ids = st.one_of(st.just(finished), table_ids(world))
    rated: set[str] = set()

    @FUZZ
    @given(ladder=ladders, match_id=st.one_of(st.sampled_from(["m1", "m2"]), texts),
           tables=st.lists(ids, max_size=4), game=games)
    def run(ladder, match_id, tables, game) -> None:
        before, ratings_before = world.snapshot(), ladder_snapshot(world)
        stub = world.client.stub
        req = pb.RateMatchRequest(ladder=ladder, match_id=match_id, table_ids=tables)
        code, details, reply = call(stub.RateMatch, req)
        assert world.snapshot() == before
        if code == C.OK:
            assert ladder == "fz" and tables == [finished] and match_id.isprintable()
            again = cast(pb.RateMatchResponse, reply).already_rated
            assert again == (match_id in rated) and (again or not rated)
            if again:
                assert ladder_snapshot(world) == ratings_before
            rated.add(match_id)
        else:
            refused_without_change(world, before, code, details, f"RateMatch({req})")
            assert ladder_snapshot(world) == ratings_before
            if not LADDER_NAME.fullmatch(ladder) or not match_id or not tables:
                assert code == C.INVALID_ARGUMENT
        code, details, reply = call(stub.ListRatings,
                                    pb.ListRatingsRequest(ladder=ladder, game=game))
        well_formed = (not ladder or LADDER_NAME.fullmatch(ladder)) and (
            not game or game in GAMES)
        assert (code == C.OK) == bool(well_formed), (ladder, game, code, details)
        if code == C.OK:
            got = cast(pb.ListRatingsResponse, reply).ratings
            assert len(got) == (3 if rated and ladder == "fz" and game in ("", "dou_dizhu")
                                else 0)

    run()


def test_fuzz_raw_bytes_to_every_method(world: World) -> None:
    """Bytes that are no valid message of the method: INVALID_ARGUMENT-class refusals from
    gRPC itself (the request cannot be parsed) or a clean answer, never a dead server."""
    methods = [m.name for m in pb.DESCRIPTOR.services_by_name["Croupier"].methods]

    @FUZZ
    @given(method=st.sampled_from(methods), data=st.binary(max_size=300))
    def run(method, data) -> None:
        before = world.snapshot()
        path = f"/croupier.v1.Croupier/{method}"
        ident = lambda b: b  # noqa: E731 - send and receive raw bytes
        channel = world.client.channel
        if method == "StreamTable":
            fn = channel.unary_stream(path, request_serializer=ident, response_deserializer=ident)
            try:
                for _ in fn(data, timeout=0.3):
                    break
                code = C.OK
            except grpc.RpcError as e:
                code = e.code()
        else:
            fn = channel.unary_unary(path, request_serializer=ident, response_deserializer=ident)
            try:
                fn(data, timeout=10)
                code = C.OK
            except grpc.RpcError as e:
                code = e.code()
        assert code in REFUSALS | {C.OK, C.DEADLINE_EXCEEDED}, (method, data, code)
        if code != C.OK or method not in ("JoinTable", "SubmitMove", "LeaveTable"):
            after = world.snapshot()  # a parsed CreateTable may add a table, never change one
            assert {k: after[k] for k in before} == before, method

    run()
