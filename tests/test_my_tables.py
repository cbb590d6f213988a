"""ListMyTables: a player's own tables, newest first and paged, through a real server with
guest identities; and the listing's rules (service.my_tables) on an in-process store."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import grpc
import pytest
from croupier.v1 import croupier_pb2 as pb

from service.model import EventKind
from service.my_tables import my_tables
from service.store_memory import MemoryStore
from service.tables import TableError, Tables
from tests.players_support import guest, player_md
from tests.store_support import event
from tests.support import Client, ServerProcess, bearer, rpc_code, run_async


def mine(client: Client, token: str, **kw: object) -> pb.ListMyTablesResponse:
    return client.stub.ListMyTables(
        pb.ListMyTablesRequest(**kw), metadata=player_md(token), timeout=10  # type: ignore[arg-type]
    )


def sit(client: Client, table_id: str, token: str, seat: int | None = None) -> int:
    req = pb.JoinTableRequest(table_id=table_id, name="me")
    if seat is not None:
        req.seat = seat
    reply = client.stub.JoinTable(req, metadata=player_md(token), timeout=10)
    client.tokens[reply.seat] = reply.token
    return reply.seat


def ids(reply: pb.ListMyTablesResponse) -> list[str]:
    return [t.table.table_id for t in reply.tables]


def test_a_players_own_tables_newest_first_and_paged(server: ServerProcess) -> None:
    c = Client(server.address)
    try:
        ann_id, ann = guest(c, "ann")
        _, bob = guest(c, "bob")
        made, tokens = [], {}
        for _ in range(5):
            table_id = c.create().table_id
            assert sit(c, table_id, ann) == 0
            made.append(table_id)
            tokens[table_id] = c.tokens[0]
        other = c.create().table_id
        sit(c, other, bob)
        c.create()  # nobody's
        made.reverse()  # newest first
        assert ids(mine(c, ann)) == made
        assert ids(mine(c, bob)) == [other]
        first = mine(c, ann, limit=2)
        assert ids(first) == made[:2] and first.next_page_token
        second = mine(c, ann, limit=2, page_token=first.next_page_token)
        third = mine(c, ann, limit=2, page_token=second.next_page_token)
        assert ids(second) == made[2:4] and ids(third) == made[4:]
        assert third.next_page_token == ""
        entry = first.tables[0]
        assert entry.seat == 0 and not entry.my_turn  # waiting for seats: nobody's turn
        assert entry.table.seats[0].presence == pb.PRESENCE_CONNECTED  # just joined
        # a page token is the player's and the filters': not another's, not other filters
        code, _ = rpc_code(mine, c, bob, limit=2, page_token=first.next_page_token)
        assert code == grpc.StatusCode.INVALID_ARGUMENT
        code, _ = rpc_code(mine, c, ann, limit=2, page_token=first.next_page_token,
                           include_finished=True)
        assert code == grpc.StatusCode.INVALID_ARGUMENT
        code, msg = rpc_code(mine, c, ann, page_token="garbage")
        assert code == grpc.StatusCode.INVALID_ARGUMENT and "page_token" in msg
        code, _ = rpc_code(mine, c, ann, limit=-1)
        assert code == grpc.StatusCode.INVALID_ARGUMENT
        code, _ = rpc_code(mine, c, ann, limit=1000)
        assert code == grpc.StatusCode.RESOURCE_EXHAUSTED
        code, _ = rpc_code(mine, c, ann, game="no_such_game")
        assert code == grpc.StatusCode.INVALID_ARGUMENT
        assert ids(mine(c, ann, game="dou_dizhu")) == made
        # a seat given up is no longer the player's
        c.stub.LeaveTable(pb.LeaveTableRequest(table_id=made[0]),
                          metadata=bearer(tokens[made[0]]), timeout=10)
        assert ids(mine(c, ann)) == made[1:]
    finally:
        c.close()


def test_finished_tables_only_when_asked_and_my_turn(server: ServerProcess) -> None:
    c = Client(server.address)
    try:
        _, ann = guest(c, "ann")
        table_id = c.create().table_id
        sit(c, table_id, ann, seat=0)
        c.join(table_id, "p1", seat=1)
        c.join(table_id, "p2", seat=2)
        view = c.view(table_id)
        (entry,) = mine(c, ann).tables
        assert entry.my_turn == (0 in view.to_act) and entry.table.version == view.version
        c.play_to_end(table_id, random.Random(3))
        assert ids(mine(c, ann)) == []
        done = mine(c, ann, include_finished=True)
        assert ids(done) == [table_id] and not done.tables[0].my_turn
        assert done.tables[0].table.status == pb.TABLE_STATUS_FINISHED
    finally:
        c.close()


def test_a_seat_reserved_for_a_player_lists_its_table_before_and_after(
    server: ServerProcess,
) -> None:
    c = Client(server.address)
    try:
        ann_id, ann = guest(c, "ann")
        table_id = c.create(player_ids=["", ann_id, ""]).table_id
        (entry,) = mine(c, ann).tables
        assert entry.table.table_id == table_id and entry.seat == 1
        assert entry.table.seats[1].presence == pb.PRESENCE_UNSPECIFIED  # nobody sits there yet
        assert sit(c, table_id, ann) == 1
        c.stub.LeaveTable(pb.LeaveTableRequest(table_id=table_id),
                          metadata=bearer(c.tokens[1]), timeout=10)
        assert ids(mine(c, ann)) == [table_id]  # reserved: still hers after leaving
    finally:
        c.close()


def test_no_identity_is_unauthenticated(server: ServerProcess) -> None:
    c = Client(server.address)
    try:
        code, _ = rpc_code(c.stub.ListMyTables, pb.ListMyTablesRequest(), timeout=10)
        assert code == grpc.StatusCode.UNAUTHENTICATED
        table_id = c.create().table_id
        c.join(table_id, "p0")
        code, _ = rpc_code(c.stub.ListMyTables, pb.ListMyTablesRequest(),
                           metadata=bearer(c.tokens[0]), timeout=10)
        assert code == grpc.StatusCode.UNAUTHENTICATED
        code, _ = rpc_code(c.stub.ListMyTables, pb.ListMyTablesRequest(),
                           metadata=bearer("not.a.jwt"), timeout=10)
        assert code == grpc.StatusCode.UNAUTHENTICATED
    finally:
        c.close()


@pytest.fixture(scope="module")
def no_finished_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A server that lists no finished table (a window of 0 days)."""
    db: Path = tmp_path_factory.mktemp("my_tables") / "c.db"
    proc = ServerProcess(db=db, extra=("--my-tables-finished-days", "0")).start()
    yield proc
    proc.stop()


def test_the_finished_window_is_a_setting(no_finished_server: ServerProcess) -> None:
    c = Client(no_finished_server.address)
    try:
        _, ann = guest(c, "ann")
        table_id = c.create().table_id
        sit(c, table_id, ann, seat=0)
        c.join(table_id, "p1", seat=1)
        c.join(table_id, "p2", seat=2)
        assert ids(mine(c, ann, include_finished=True)) == [table_id]
        c.play_to_end(table_id, random.Random(4))
        assert ids(mine(c, ann, include_finished=True)) == []
    finally:
        c.close()


@run_async
async def test_listing_rules_in_process() -> None:
    """my_turn from the table's seats to act; a window's edge; tokens of other filters."""
    clock = [1000.0]
    tables = Tables(MemoryStore(), clock=lambda: clock[0])
    record = await tables.create("dou_dizhu", 3, {})
    for seat in range(3):
        _, _, record = await tables.join(record.table_id, seat, f"p{seat}", False)
    seats = (replace(record.seats[0], player="ann"), *record.seats[1:])
    named = record.with_(seats=seats, version=record.version + 1)
    await tables.store.commit(named, [event(named.table_id, named.version, EventKind.JOINED,
                                            seats=seats, state=named.state)], record.version)
    found, token = await my_tables(tables, "ann")
    assert [t.record.table_id for t in found] == [named.table_id] and token == ""
    assert found[0].my_turn == (0 in found[0].acting) and found[0].acting
    assert (await my_tables(tables, "bob"))[0] == []
    with pytest.raises(TableError, match="page_token"):
        await my_tables(tables, "ann", page_token="e30=")
