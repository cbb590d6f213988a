"""A bot worker's seat claim whose reply is lost: the real server takes the seat, then the
worker hears DEADLINE_EXCEEDED (as when a connection drops after the server answered).

Nothing real drops a reply on cue, so a thin wrapper around a real stub to the real server
forwards the JoinTable and then raises in place of its answer; every other call goes through
untouched. The worker must end up holding the seat it took (asked again with its own token),
or give it back, never leave it held by a token nobody has.
"""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
import pytest
from croupier.v1 import croupier_pb2 as pb
from croupier.v1 import croupier_pb2_grpc

from bots.sdk.runner import CLAIM_ATTEMPTS
from bots.worker import Settings, Worker
from tests.support import Client, ServerProcess

pytestmark = pytest.mark.e2e


class LosingReplies:
    """A real stub whose first `lose` JoinTable replies never arrive."""

    def __init__(self, stub: croupier_pb2_grpc.CroupierStub, lose: int) -> None:
        self.stub = stub
        self.lose = lose
        self.joins: list[pb.JoinTableRequest] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stub, name)

    async def JoinTable(self, request: pb.JoinTableRequest, **kw: Any) -> pb.JoinTableResponse:
        self.joins.append(request)
        reply = await self.stub.JoinTable(request, **kw)
        if len(self.joins) <= self.lose:
            raise grpc.aio.AioRpcError(grpc.StatusCode.DEADLINE_EXCEEDED, grpc.aio.Metadata(),
                                       grpc.aio.Metadata(), "Deadline Exceeded")
        return reply


def bot_table(client: Client) -> pb.Table:
    """A Dou Dizhu table with one bot seat and two empty human seats: it waits."""
    return client.create(seats=[pb.SeatSpec(kind=pb.SEAT_KIND_BOT, bot_level="random"),
                                pb.SeatSpec(), pb.SeatSpec()])


async def claim(server: ServerProcess, table: pb.Table, lose: int) -> tuple[bool, Worker,
                                                                            LosingReplies]:
    worker = Worker(Settings(server=server.address, poll=0.2))
    async with grpc.aio.insecure_channel(server.address) as channel:
        stub = LosingReplies(croupier_pb2_grpc.CroupierStub(channel), lose)
        claimed = await worker._claim(stub, table, 0)  # type: ignore[arg-type]
        if claimed:
            await asyncio.sleep(0.5)  # the seat's player follows the table
            worker.request_stop("test")
            await worker._drain()  # gives the seat back with the token it holds
    return claimed, worker, stub


def occupied(client: Client, table_id: str) -> bool:
    return client.view(table_id).table.seats[0].occupied


def test_a_claim_whose_reply_was_lost_is_asked_again_and_keeps_its_seat(
    server: ServerProcess, client: Client
) -> None:
    table = bot_table(client)
    claimed, worker, stub = asyncio.run(claim(server, table, lose=1))
    assert claimed
    assert len(stub.joins) == 2 and stub.joins[0] == stub.joins[1]  # same request, same token
    assert len(stub.joins[0].token) >= 22
    # the player held the seat's real token: stopping, it gave the seat back
    assert not occupied(client, table.table_id)
    assert not worker.players


def test_a_claim_never_answered_gives_the_seat_back(
    server: ServerProcess, client: Client
) -> None:
    table = bot_table(client)
    claimed, worker, stub = asyncio.run(claim(server, table, lose=CLAIM_ATTEMPTS))
    assert not claimed and len(stub.joins) == CLAIM_ATTEMPTS
    assert not occupied(client, table.table_id)  # left with the worker's own token
    assert (table.table_id, 0) in worker.cooldown
