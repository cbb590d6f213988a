"""What the browser tests of players share: a stack whose matchmaking gives bots the empty seats
after a short wait, pages signed in as a guest (through the sign-in dialog, or with a token put
into the browser's storage as another device of the same player would hold it), and a rated
match played to its end over gRPC with a guest's identity, for the leaderboard and profile.
"""

from __future__ import annotations

import contextlib
import json
import random
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import grpc
from croupier.v1 import croupier_pb2 as pb
from croupier.v1 import croupier_pb2_grpc as pb_grpc

from tests.bot_support import Bots
from tests.players_support import guest, player_md
from tests.support import Client, ServerProcess, free_port

if TYPE_CHECKING:
    from playwright.sync_api import Page

# seconds before matchmaking seats bots, and the presence heartbeat: short, for the tests;
# one game's queue waits long, for a waiting page that stays until it is cancelled
BOTS_AFTER = 1.5
SLOW_GAME = "dobro"
HEARTBEAT = 0.5


@contextlib.contextmanager
def players_stack(tmp: Path) -> Iterator[ServerProcess]:
    """A server with its web port, quick bots for matchmaking and a fast presence heartbeat,
    and a bot worker serving it."""
    server = ServerProcess(
        db=tmp / "croupier.db", web_port=free_port(),
        extra=("--fill-interval", "0.1", "--match-bots-after", str(BOTS_AFTER),
               "--match-bots-after", f"{SLOW_GAME}=600",
               "--presence-seconds", str(HEARTBEAT), "--gone-after", "30")).start()
    bots = Bots(server.address, tmp / "bots.log", workers=1, poll=0.05)
    try:
        yield server
    finally:
        bots.stop()
        server.stop()


def sign_in(page: Page, name: str) -> str:
    """Signs in through the lobby's dialog; answers the player id the page shows."""
    page.click("#sign-in")
    page.fill("#guest-name", name)
    page.click("#sign-in-submit")
    page.wait_for_selector("#player-bar[data-player]")
    return page.get_attribute("#player-bar", "data-player") or ""


def identity_of(page: Page) -> dict[str, object]:
    """What the browser keeps of its player (token included)."""
    raw = page.evaluate("() => localStorage.getItem('croupier.identity')")
    assert raw, "no identity in the browser's storage"
    return json.loads(raw)


def hold_identity(page: Page, identity: dict[str, object]) -> None:
    """Puts a player's identity into a fresh browser's storage before its first page loads,
    as their other device has it (once: a sign-out later stays signed out)."""
    page.context.add_init_script(
        "if (!sessionStorage.getItem('croupier.test.held')) {"
        f" localStorage.setItem('croupier.identity', {json.dumps(json.dumps(identity))});"
        " sessionStorage.setItem('croupier.test.held', '1'); }")


def new_guest(address: str, name: str) -> tuple[str, str]:
    client = Client(address)
    try:
        return guest(client, name)
    finally:
        client.close()


def rated_match_played(address: str, token: str, game: str = "dou_dizhu",
                       timeout: float = 60.0) -> str:
    """A rated match found for the guest (bots fill it), its seat taken and played to the end
    with the guest's identity (random legal moves); answers the table's id."""
    md = player_md(token)
    rng = random.Random(3)
    with grpc.insecure_channel(address) as channel:
        stub = pb_grpc.CroupierStub(channel)
        ticket = stub.FindMatch(pb.FindMatchRequest(game=game, mode=pb.MATCH_MODE_RATED),
                                metadata=md, timeout=10)
        deadline = time.monotonic() + timeout
        while ticket.status == pb.TICKET_STATUS_WAITING:
            assert time.monotonic() < deadline, "no match"
            time.sleep(0.1)
            ticket = stub.GetTicket(pb.GetTicketRequest(ticket_id=ticket.ticket_id),
                                    metadata=md, timeout=10)
        assert ticket.status == pb.TICKET_STATUS_MATCHED, ticket
        stub.JoinTable(pb.JoinTableRequest(table_id=ticket.table_id, seat=ticket.seat),
                       metadata=md, timeout=10)
        while True:
            assert time.monotonic() < deadline, "the rated match did not end"
            view = stub.GetView(pb.GetViewRequest(table_id=ticket.table_id), metadata=md,
                                timeout=10)
            if view.result.finished:
                return ticket.table_id
            if ticket.seat in view.on_turn and view.legal_moves:
                with contextlib.suppress(grpc.RpcError):  # a bot moved first: look again
                    stub.SubmitMove(pb.SubmitMoveRequest(
                        table_id=ticket.table_id, move=rng.choice(list(view.legal_moves)),
                        expected_version=view.version), metadata=md, timeout=10)
            else:
                time.sleep(0.05)
