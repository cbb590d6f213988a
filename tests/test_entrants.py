"""Entrants over real gRPC: seats reserved for a named outside bot, found and taken by it
alone; the built-in workers' joins never take them; with API keys only the entrant's own key
does. Real server processes (the shared one, and one with a key file)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from croupier.v1 import croupier_pb2 as pb
from google.protobuf import struct_pb2

from service.security import ApiKeys
from tests.support import Client, ServerProcess, rpc_code, stored_table

C = grpc.StatusCode
pytestmark = pytest.mark.e2e
TABLES_KEY = "tables-key-0123456789abcdef"
BOTS_KEY = "bots-key-0123456789abcdef"
ALICE_KEY = "alice-key-0123456789abcdef"
BOB_KEY = "bob-key-0123456789abcdef"


def bot_seats(*entrants: str) -> list[pb.SeatSpec]:
    return [pb.SeatSpec(kind=pb.SEAT_KIND_BOT, entrant=e) for e in entrants]


def join(client: Client, tid: str, entrant: str = "", seat: int | None = None,
         key: str = "") -> pb.JoinTableResponse:
    req = pb.JoinTableRequest(table_id=tid, bot=True, entrant=entrant, name=entrant or "bot")
    if seat is not None:
        req.seat = seat
    md = [("x-api-key", key)] if key else None
    return client.stub.JoinTable(req, metadata=md, timeout=10)


def waiting(client: Client, entrants: list[str], key: str = "",
            bot_levels: list[str] | None = None) -> list[str]:
    md = [("x-api-key", key)] if key else None
    reply = client.stub.ListTables(
        pb.ListTablesRequest(waiting_for_bot=True, entrants=entrants, bot_levels=bot_levels,
                             limit=500),
        metadata=md, timeout=10)
    return [t.table_id for t in reply.tables]


def test_entrant_seats_are_created_listed_and_taken_by_their_entrant(
        server: ServerProcess, client: Client) -> None:
    table = client.create(seats=bot_seats("alice", "hard", "bob"))
    tid = table.table_id
    seats = table.seats
    assert [s.entrant for s in seats] == ["alice", "hard", "bob"]
    assert [s.bot_level for s in seats] == ["", "hard", ""]
    assert all(s.kind == pb.SEAT_KIND_BOT for s in seats)
    # the lobby: by entrant, by level, and (neither) the built-in levels only
    assert tid in waiting(client, ["alice"]) and tid in waiting(client, ["bob", "carol"])
    assert tid not in waiting(client, ["carol"])
    assert tid in waiting(client, [], bot_levels=["hard"])
    assert tid in waiting(client, ["carol"], bot_levels=["hard"])  # either matches
    assert tid in waiting(client, [])
    # alice takes her seat (the first free one for her, or the one asked for)
    mine = join(client, tid, "alice")
    assert mine.seat == 0 and mine.table.seats[0].is_bot and mine.table.seats[0].occupied
    assert tid not in waiting(client, ["alice"])
    # her entrant again: no seat left for her
    code, msg = rpc_code(join, client, tid, "alice")
    assert code == C.FAILED_PRECONDITION and "no free seat for entrant alice" in msg
    # bob may not take the level's seat, alice not bob's
    code, msg = rpc_code(join, client, tid, "bob", 1)
    assert code == C.FAILED_PRECONDITION and "seat 1 is reserved for entrant hard" in msg
    code, msg = rpc_code(join, client, tid, "carol", 2)
    assert code == C.FAILED_PRECONDITION and "seat 2 is reserved for entrant bob" in msg
    assert join(client, tid, "bob", 2).seat == 2
    # a level's name as the entrant is that level: a worker's join
    assert join(client, tid, "hard").seat == 1
    view = client.stub.GetView(pb.GetViewRequest(table_id=tid), timeout=10)
    assert view.table.status == pb.TABLE_STATUS_PLAYING
    assert [s.entrant for s in view.table.seats] == ["alice", "hard", "bob"]


def test_a_worker_never_takes_an_outside_entrants_seat(server: ServerProcess,
                                                       client: Client) -> None:
    tid = client.create(seats=bot_seats("alice", "random", "random")).table_id
    assert join(client, tid).seat == 1
    assert join(client, tid).seat == 2
    code, msg = rpc_code(join, client, tid)
    assert code == C.FAILED_PRECONDITION and "no free seat for a bot" in msg
    code, msg = rpc_code(join, client, tid, "", 0)
    assert code == C.FAILED_PRECONDITION and "seat 0 is reserved for entrant alice" in msg
    assert tid not in waiting(client, [])  # what a worker polls: nothing for it here
    assert tid in waiting(client, ["alice"])
    # and the running server's timer or fill rounds do not take it either
    assert not client.stub.GetView(pb.GetViewRequest(table_id=tid), timeout=10).table.seats[
        0].occupied


def test_malformed_entrants_are_refused_and_change_nothing(server: ServerProcess,
                                                           client: Client) -> None:
    for bad in ("Alice", "-x", "a b", "x" * 41, "ali\u00e9", "a/b"):
        code, msg = rpc_code(client.create, seats=bot_seats(bad, "random", "random"))
        assert code == C.INVALID_ARGUMENT and "entrant" in msg, bad
    code, msg = rpc_code(client.create, seats=[
        pb.SeatSpec(kind=pb.SEAT_KIND_BOT, bot_level="hard", entrant="alice"),
        *bot_seats("random", "random")])
    assert code == C.INVALID_ARGUMENT and "both" in msg
    code, msg = rpc_code(client.create, seats=[
        pb.SeatSpec(kind=pb.SEAT_KIND_HUMAN, entrant="alice"), *bot_seats("random", "random")])
    assert code == C.INVALID_ARGUMENT and "not a bot seat" in msg
    same = client.create(seats=[pb.SeatSpec(kind=pb.SEAT_KIND_BOT, bot_level="hard",
                                            entrant="hard"), *bot_seats("x.y-z_1", "random")])
    assert [s.bot_level for s in same.seats] == ["hard", "", "random"]

    tid = client.create(seats=bot_seats("alice", "random", "random")).table_id
    before = stored_table(server.db, tid)
    for bad in ("Alice", "", "a" * 41):
        if bad:
            code, msg = rpc_code(join, client, tid, bad)
            assert code == C.INVALID_ARGUMENT and "malformed" in msg, bad
    req = pb.JoinTableRequest(table_id=tid, entrant="alice")  # not as a bot
    code, msg = rpc_code(client.stub.JoinTable, req, timeout=10)
    assert code == C.INVALID_ARGUMENT and "bot" in msg
    for entrants, wanted in ((["Bad!"], C.INVALID_ARGUMENT),
                             ([f"e{i}" for i in range(17)], C.RESOURCE_EXHAUSTED)):
        code, msg = rpc_code(waiting, client, entrants)
        assert code == wanted and "entrant" in msg
    code, msg = rpc_code(client.stub.ListTables, pb.ListTablesRequest(entrants=["alice"]),
                         timeout=10)
    assert code == C.INVALID_ARGUMENT and "waiting_for_bot" in msg
    assert stored_table(server.db, tid) == before


def test_key_files_take_entrant_roles(tmp_path: Path) -> None:
    path = tmp_path / "keys"
    path.write_text(f"{ALICE_KEY} entrant:alice,entrant:al.2\n{BOTS_KEY}\n")
    keys = ApiKeys.load(str(path))
    assert keys.entrants(ALICE_KEY) == {"alice", "al.2"} and keys.entrants(BOTS_KEY) == set()
    assert keys.roles(BOTS_KEY) == {"tables", "bots"}
    for bad in ("entrant:Alice", "entrant:", "entrant:hard", "alice"):
        path.write_text(f"{ALICE_KEY} {bad}\n")
        with pytest.raises(ValueError, match="line 1"):
            ApiKeys.load(str(path))


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    tmp = tmp_path_factory.mktemp("entrant-keys")
    (tmp / "keys").write_text(
        f"{TABLES_KEY} tables\n{BOTS_KEY} bots\n{ALICE_KEY} entrant:alice\n"
        f"{BOB_KEY} entrant:bob,tables\n")
    proc = ServerProcess(db=tmp / "keyed.db",
                         extra=("--api-keys", str(tmp / "keys"), "--fill-interval", "0.1")).start()
    yield proc
    proc.stop()


def test_with_keys_only_the_entrants_own_key_takes_its_seat(keyed: ServerProcess) -> None:
    client = Client(keyed.address)
    try:
        options = struct_pb2.Struct()
        options.update({"private": True})
        tid = client.stub.CreateTable(
            pb.CreateTableRequest(game="dou_dizhu", seats=bot_seats("alice", "random", "bob"),
                                  options=options),
            metadata=[("x-api-key", TABLES_KEY)], timeout=10).table_id
        before = stored_table(keyed.db, tid)
        code, msg = rpc_code(join, client, tid, "alice")
        assert code == C.UNAUTHENTICATED and "entrant:alice" in msg
        for key in (BOB_KEY, BOTS_KEY, TABLES_KEY):
            code, msg = rpc_code(join, client, tid, "alice", key=key)
            assert code == C.PERMISSION_DENIED and "'entrant:alice' role" in msg, key
            assert key not in msg
        # a bots-only key as a worker: not alice's seat
        code, msg = rpc_code(join, client, tid, "", 0, key=BOTS_KEY)
        assert code == C.FAILED_PRECONDITION and "reserved for entrant alice" in msg
        # an entrant key is no worker's key
        code, msg = rpc_code(join, client, tid, "", 1, key=ALICE_KEY)
        assert code == C.PERMISSION_DENIED and "'bots' role" in msg
        assert stored_table(keyed.db, tid) == before
        # the private table is listed to the entrant's key asking for its own seats, to
        # workers; not to a key asking for someone else's, nor without a key
        assert tid in waiting(client, ["alice"], key=ALICE_KEY)
        assert tid in waiting(client, ["alice"], key=BOTS_KEY)
        assert tid not in waiting(client, ["alice", "bob"], key=ALICE_KEY)
        assert tid not in waiting(client, ["alice"], key=BOB_KEY)
        assert tid not in waiting(client, ["alice"])
        assert join(client, tid, "alice", key=ALICE_KEY).seat == 0
        assert join(client, tid, "bob", key=BOB_KEY).seat == 2
        assert join(client, tid, key=BOTS_KEY).seat == 1
    finally:
        client.close()
