"""Player helpers for tests: guest identities made through a real server's CreateGuest, and
the metadata that carries an identity token."""

from __future__ import annotations

from croupier.v1 import croupier_pb2 as pb

from tests.support import Client, bearer


def guest(client: Client, name: str = "guest") -> tuple[str, str]:
    """A new guest player of the server `client` talks to: (player_id, identity token)."""
    reply = client.stub.CreateGuest(pb.CreateGuestRequest(name=name), timeout=10)
    return reply.player.player_id, reply.token


def player_md(token: str) -> list[tuple[str, str]]:
    """The metadata a player's calls carry: the identity token as the bearer."""
    return bearer(token)


def join_as(client: Client, token: str, table_id: str, seat: int | None = None,
            name: str = "") -> pb.JoinTableResponse:
    """JoinTable with a player's identity; the reply (seat, a fresh seat token, the table)."""
    request = pb.JoinTableRequest(table_id=table_id, name=name)
    if seat is not None:
        request.seat = seat
    return client.stub.JoinTable(request, metadata=player_md(token), timeout=10)
