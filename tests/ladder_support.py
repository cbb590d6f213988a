"""Ladder test helpers: bot tables played to the end, rated, and the standings read back."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from croupier.v1 import croupier_pb2 as pb
from google.protobuf import struct_pb2

from tests.support import Client

LEVELS3 = ("random", "heuristic", "easy")


def options(**values: Any) -> struct_pb2.Struct:
    s = struct_pb2.Struct()
    s.update(values)
    return s


def bot_table(client: Client, levels: Sequence[str] = LEVELS3, game: str = "dou_dizhu",
              keys: tuple[str, str] | None = None, **opts: Any) -> str:
    """A table whose seats are reserved for these levels, every seat taken by `client`
    (`keys`: the API keys of the tables and bots roles)."""
    seats = [pb.SeatSpec(kind=pb.SEAT_KIND_BOT, bot_level=level) for level in levels]
    table = client.stub.CreateTable(
        pb.CreateTableRequest(game=game, seats=seats, options=options(**opts)),
        metadata=[("x-api-key", keys[0])] if keys else None, timeout=10)
    for seat in range(len(levels)):
        joined = client.stub.JoinTable(
            pb.JoinTableRequest(table_id=table.table_id, seat=seat, bot=True),
            metadata=[("x-api-key", keys[1])] if keys else None, timeout=10)
        client.tokens[joined.seat] = joined.token
    return str(table.table_id)


def played(client: Client, table_id: str, seed: int) -> str:
    client.play_to_end(table_id, random.Random(seed))
    return table_id


def rate(client: Client, ladder: str, match_id: str, tables: Sequence[str],
         metadata: Any = None) -> pb.RateMatchResponse:
    return client.stub.RateMatch(
        pb.RateMatchRequest(ladder=ladder, match_id=match_id, table_ids=list(tables)),
        metadata=metadata, timeout=10)


def standings(client: Client, ladder: str = "", game: str = "") -> list[tuple[Any, ...]]:
    reply = client.stub.ListRatings(pb.ListRatingsRequest(ladder=ladder, game=game), timeout=10)
    return [(r.game, r.entrant, r.mu, r.sigma, r.ordinal, r.matches) for r in reply.ratings]
