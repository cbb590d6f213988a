"""How `croupier play` comes to a seat: matched by the server (FindMatch, the default), at a
given table (--table ID), or at a table of its own against bots (--bots LEVEL).

Each way answers a `Seated`: the table, the seat, the seat's token (the one this device plays
with) and the lines that introduce the table. With a player identity, JoinTable carries it, so
the seat is bound to the player: the same player gets it back from any device (--table), and
nobody else can take it.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

import grpc
from croupier.v1 import croupier_pb2, croupier_pb2_grpc
from google.protobuf import struct_pb2
from rich.console import Console

from clients.identity_file import Identity
from clients.render import plural, seat_label
from clients.ticket_wait import TicketWait

RPC_TIMEOUT = 15.0


class SeatingError(Exception):
    """No seat: a one-line reason for the person (exit status 1)."""


@dataclass
class Seated:
    table_id: str
    seat: int
    token: str
    info: croupier_pb2.GameInfo
    others: str  # who is in the other seats, for the introduction


def game_info(stub: croupier_pb2_grpc.CroupierStub, game: str) -> croupier_pb2.GameInfo:
    games = stub.ListGames(croupier_pb2.ListGamesRequest(), timeout=RPC_TIMEOUT,
                           wait_for_ready=True)
    info = next((g for g in games.games if g.name == game), None)
    if info is None:
        known = ", ".join(sorted(g.name for g in games.games))
        raise SeatingError(f"unknown game {game!r}; known games: {known}")
    return info


def _metadata(identity: Identity | None, api_key: str = "") -> tuple[tuple[str, str], ...]:
    out = identity.metadata if identity is not None else ()
    return out + ((("x-api-key", api_key),) if api_key else ())


def others_line(table: croupier_pb2.Table, seat: int) -> str:
    """'seat 1 (Ann), seat 2 (bot) in the other seats' from the table as joined."""
    labels = [seat_label(table, s.seat, seat) for s in table.seats if s.seat != seat]
    return ", ".join(labels) + (" in the other seats" if labels else "")


def join(stub: croupier_pb2_grpc.CroupierStub, table_id: str, seat: int | None, name: str,
         identity: Identity | None) -> croupier_pb2.JoinTableResponse:
    request = croupier_pb2.JoinTableRequest(table_id=table_id, name=name)
    if seat is not None:
        request.seat = seat
    return stub.JoinTable(request, metadata=_metadata(identity) or None, timeout=RPC_TIMEOUT)


def own_table(stub: croupier_pb2_grpc.CroupierStub, args: argparse.Namespace,
              info: croupier_pb2.GameInfo, identity: Identity | None) -> Seated:
    """A table of the person's own: seat 0 theirs, bots of --bots in the others."""
    players = args.players or info.min_players
    options = struct_pb2.Struct()
    options.update(dict(args.option))
    bot = croupier_pb2.SeatSpec(kind=croupier_pb2.SEAT_KIND_BOT, bot_level=args.bots)
    seats = [croupier_pb2.SeatSpec(kind=croupier_pb2.SEAT_KIND_HUMAN)] + [bot] * (players - 1)
    table = stub.CreateTable(
        croupier_pb2.CreateTableRequest(game=args.game, players=players, options=options,
                                        seats=seats),
        metadata=_metadata(None, args.api_key) or None, timeout=RPC_TIMEOUT,
    )
    joined = join(stub, table.table_id, 0, args.name, identity)
    others = plural(players - 1, f"{args.bots} bot") + " in the other seats"
    return Seated(table.table_id, joined.seat, joined.token, info, others)


def given_table(stub: croupier_pb2_grpc.CroupierStub, args: argparse.Namespace,
                identity: Identity | None) -> Seated:
    """--table ID: the seat bound or reserved to the player there (from any device), else a
    free seat (--seat N: that one)."""
    joined = join(stub, args.table, args.seat, args.name, identity)
    if args.game and joined.table.game != args.game:
        raise SeatingError(f"table {args.table} plays {joined.table.game}, not {args.game}")
    info = game_info(stub, joined.table.game)
    return Seated(args.table, joined.seat, joined.token, info,
                  others_line(joined.table, joined.seat))


def matched_table(console: Console, stub: croupier_pb2_grpc.CroupierStub,
                  args: argparse.Namespace, info: croupier_pb2.GameInfo,
                  identity: Identity) -> Seated:
    """A seat the server's matchmaking finds (quick, or --rated); the wait is shown and
    Ctrl-C cancels it (ticket_wait.Cancelled)."""
    options = struct_pb2.Struct()
    options.update(dict(args.option))
    mode = croupier_pb2.MATCH_MODE_RATED if args.rated else croupier_pb2.MATCH_MODE_QUICK
    request = croupier_pb2.FindMatchRequest(game=args.game, players=args.players,
                                            options=options, mode=mode)
    try:
        ticket = TicketWait(console, stub, _metadata(identity, args.api_key),
                            info.title or info.name).run(request)
    except grpc.RpcError as e:
        if e.code() != grpc.StatusCode.UNIMPLEMENTED:
            raise
        raise SeatingError("this server has no matchmaking: play at a table of your own with "
                           "--bots LEVEL, or join one with --table ID") from None
    joined = join(stub, ticket.table_id, ticket.seat, args.name, identity)
    return Seated(ticket.table_id, joined.seat, joined.token, info,
                  others_line(joined.table, joined.seat))
