"""Seats belong to players: a player's seat comes back from any device, is never doubled and is
refused to everyone else; seats reserved for named players; guest identities. Through a real
server."""

from __future__ import annotations

import grpc
from croupier.v1 import croupier_pb2 as pb

from tests.players_support import guest, join_as, player_md
from tests.support import Client, bearer, rpc_code


def _table(client: Client, **kw: object) -> pb.Table:
    return client.create("dou_dizhu", **kw)


def test_a_guest_is_a_player_the_server_knows(client: Client) -> None:
    player_id, token = guest(client, "Ana")
    assert player_id.startswith("guest:")
    me = client.stub.WhoAmI(pb.WhoAmIRequest(), metadata=player_md(token), timeout=10)
    assert (me.player_id, me.name, me.guest) == (player_id, "Ana", True)
    assert me.expires_at > 0
    other_id, _ = guest(client, "Ana")
    assert other_id != player_id  # two guests of one name are two players


def test_guest_names_are_checked(client: Client) -> None:
    for name, code in (("", grpc.StatusCode.INVALID_ARGUMENT),
                       ("x" * 41, grpc.StatusCode.INVALID_ARGUMENT),
                       ("a\x00b", grpc.StatusCode.INVALID_ARGUMENT)):
        got, message = rpc_code(client.stub.CreateGuest, pb.CreateGuestRequest(name=name))
        assert got == code, (name, message)


def test_who_am_i_needs_an_identity(client: Client) -> None:
    code, message = rpc_code(client.stub.WhoAmI, pb.WhoAmIRequest())
    assert code == grpc.StatusCode.UNAUTHENTICATED
    assert "identity token" in message
    table = _table(client)
    client.join(table.table_id)
    code, _ = rpc_code(client.stub.WhoAmI, pb.WhoAmIRequest(), metadata=bearer(client.tokens[0]))
    assert code == grpc.StatusCode.UNAUTHENTICATED  # a seat token names no player


def test_the_same_player_gets_the_same_seat_back_from_another_device(client: Client) -> None:
    _, token = guest(client, "Bea")
    table = _table(client)
    first = join_as(client, token, table.table_id)
    again = join_as(client, token, table.table_id)  # another tab, another phone
    assert again.seat == first.seat
    assert again.token != first.token
    assert sum(1 for s in again.table.seats if s.occupied) == 1  # never a second seat
    # both seat tokens play the seat, and so does the identity itself
    for md in (bearer(first.token), bearer(again.token), player_md(token)):
        view = client.stub.GetView(pb.GetViewRequest(table_id=table.table_id), metadata=md,
                                   timeout=10)
        assert view.HasField("seat") and view.seat == first.seat
    assert again.table.seats[first.seat].player_id
    assert again.table.seats[first.seat].name == "Bea"


def test_a_players_seat_is_refused_to_every_other(client: Client) -> None:
    _, ana = guest(client, "Ana")
    _, eve = guest(client, "Eve")
    table = _table(client)
    mine = join_as(client, ana, table.table_id)
    before = client.view(table.table_id)
    for fn, request, md in (
        (client.stub.JoinTable, pb.JoinTableRequest(table_id=table.table_id, seat=mine.seat),
         player_md(eve)),
        (client.stub.JoinTable, pb.JoinTableRequest(table_id=table.table_id, seat=mine.seat),
         None),
    ):
        code, message = rpc_code(fn, request, metadata=md)
        assert code == grpc.StatusCode.PERMISSION_DENIED, message
        assert "another player" in message
    # Eve takes a free seat of her own, and cannot act for Ana's
    hers = join_as(client, eve, table.table_id)
    assert hers.seat != mine.seat
    after = client.view(table.table_id)
    assert [s.player_id for s in after.table.seats if s.occupied] == [
        s.player_id for s in hers.table.seats if s.occupied]
    assert before.version + 1 == after.version


def test_a_player_without_a_seat_cannot_move_or_leave(client: Client) -> None:
    _, ana = guest(client, "Ana")
    _, eve = guest(client, "Eve")
    table = _table(client)
    join_as(client, ana, table.table_id)
    join_as(client, eve, table.table_id)
    client.join(table.table_id)  # the last seat: dealt
    view = client.view(table.table_id)
    _, mallory = guest(client, "Mallory")
    for fn, request in (
        (client.stub.SubmitMove, pb.SubmitMoveRequest(table_id=table.table_id, move="pass")),
        (client.stub.LeaveTable, pb.LeaveTableRequest(table_id=table.table_id)),
    ):
        code, message = rpc_code(fn, request, metadata=player_md(mallory))
        assert code == grpc.StatusCode.PERMISSION_DENIED, message
    # a player with no seat watches as a spectator: the public view, no hand
    watched = client.stub.GetView(pb.GetViewRequest(table_id=table.table_id),
                                  metadata=player_md(mallory), timeout=10)
    assert not watched.HasField("seat")
    assert client.view(table.table_id).version == view.version


def test_a_player_plays_with_the_identity_alone(client: Client) -> None:
    ids = [guest(client, f"p{i}") for i in range(3)]
    table = _table(client)
    for _, token in ids:
        join_as(client, token, table.table_id)
    for _ in range(6):
        public = client.view(table.table_id)
        seat = public.to_act[0]
        token = next(t for _, t in ids if any(
            s.seat == seat and s.player_id for s in public.table.seats))
        player = next(t for pid, t in ids if public.table.seats[seat].player_id == pid)
        assert token
        view = client.stub.GetView(pb.GetViewRequest(table_id=table.table_id),
                                   metadata=player_md(player), timeout=10)
        assert view.seat == seat and view.legal_moves
        reply = client.stub.SubmitMove(
            pb.SubmitMoveRequest(table_id=table.table_id, move=view.legal_moves[0],
                                 expected_version=view.version),
            metadata=player_md(player), timeout=10)
        assert reply.version == view.version + 1


def test_seats_reserved_for_named_players(client: Client) -> None:
    ana_id, ana = guest(client, "Ana")
    bob_id, bob = guest(client, "Bob")
    _, eve = guest(client, "Eve")
    table = _table(client, player_ids=[ana_id, "", bob_id])
    assert [s.player_id for s in table.seats] == [ana_id, "", bob_id]
    # Eve (or anyone with a seat token) gets only the free seat; Ana's and Bob's are theirs
    assert join_as(client, eve, table.table_id).seat == 1
    code, _ = rpc_code(client.stub.JoinTable, pb.JoinTableRequest(table_id=table.table_id))
    assert code == grpc.StatusCode.FAILED_PRECONDITION  # no free seat for a person
    code, message = rpc_code(client.stub.JoinTable,
                             pb.JoinTableRequest(table_id=table.table_id, seat=0))
    assert code == grpc.StatusCode.PERMISSION_DENIED, message
    assert join_as(client, bob, table.table_id).seat == 2
    # Ana leaves her reserved seat: it stays hers
    assert join_as(client, ana, table.table_id).seat == 0
    client.stub.LeaveTable(pb.LeaveTableRequest(table_id=table.table_id),
                           metadata=player_md(ana), timeout=10)
    code, _ = rpc_code(client.stub.JoinTable,
                       pb.JoinTableRequest(table_id=table.table_id, seat=0), metadata=player_md(eve))
    assert code in (grpc.StatusCode.PERMISSION_DENIED, grpc.StatusCode.FAILED_PRECONDITION)
    assert join_as(client, ana, table.table_id).seat == 0


def test_bad_reservations_are_refused(client: Client) -> None:
    for ids in (["a", "a", ""], ["a", "b", "c", "d"], ["bot:hard"], ["x\ny"]):
        code, message = rpc_code(client.stub.CreateTable,
                                 pb.CreateTableRequest(game="dou_dizhu", player_ids=ids))
        assert code == grpc.StatusCode.INVALID_ARGUMENT, (ids, message)


def test_clients_cannot_make_a_table_rated(client: Client) -> None:
    from google.protobuf import struct_pb2

    options = struct_pb2.Struct()
    options.update({"rated": True})
    code, message = rpc_code(client.stub.CreateTable,
                             pb.CreateTableRequest(game="dou_dizhu", options=options))
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert "matchmaking" in message
