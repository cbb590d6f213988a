"""Matchmaking through a real server: quick and rated matches seat their players on reserved
seats, bots fill after the wait at the closest level, tickets are cancelled and expire, one
open ticket per player and game, bad input changes nothing."""

from __future__ import annotations

import asyncio
import re
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from croupier.v1 import croupier_pb2 as pb

from service.model import PLAYERS_LADDER, RatedMatch, Rating
from service.store_sqlite import SQLiteStore
from tests.matchmaking_support import find, wait_matched
from tests.players_support import guest, join_as, player_md
from tests.support import Client, ServerProcess, free_port

TICKET_SECONDS = 3.0


@pytest.fixture(scope="module")
def mm_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    proc = ServerProcess(
        db=tmp_path_factory.mktemp("mm") / "croupier.db",
        extra=("--fill-interval", "0.1", "--match-interval", "0.1",
               "--metrics-port", str(free_port()),
               "--match-bots-after", "30", "--match-bots-after", "dos=1",
               "--match-ticket-seconds", str(TICKET_SECONDS),
               "--match-window-base", "3", "--match-window-growth", "0"),
    ).start()
    yield proc
    proc.stop()


@pytest.fixture
def mm(mm_server: ServerProcess) -> Iterator[Client]:
    c = Client(mm_server.address)
    yield c
    c.close()


def test_quick_match_seats_its_players_on_their_reserved_seats(mm: Client) -> None:
    players = [guest(mm, f"quick{i}") for i in range(3)]
    opened = [find(mm, token, "dou_dizhu", options={"deals": 2}) for _, token in players]
    assert all(t.status == pb.TICKET_STATUS_WAITING for t in opened)
    matched = [wait_matched(mm, token, t.ticket_id) for (_, token), t in zip(players, opened,
                                                                               strict=True)]
    assert len({t.table_id for t in matched}) == 1
    assert sorted(t.seat for t in matched) == [0, 1, 2]
    assert all(t.waited_seconds > 0 for t in matched)
    table_id = matched[0].table_id
    for (player_id, token), ticket in zip(players, matched, strict=True):
        joined = join_as(mm, token, table_id)
        assert joined.seat == ticket.seat
        assert joined.table.seats[ticket.seat].player_id == player_id
    assert joined.table.status == pb.TABLE_STATUS_PLAYING
    assert not joined.table.rated
    assert joined.table.options["turn_seconds"] == 60  # the matcher's default for people


def test_another_player_cannot_take_a_reserved_seat(mm: Client) -> None:
    players = [guest(mm, f"own{i}") for i in range(3)]
    opened = [find(mm, token, "dou_dizhu", options={"deals": 4}) for _, token in players]
    matched = wait_matched(mm, players[0][1], opened[0].ticket_id)
    _, stranger = guest(mm, "stranger")
    with pytest.raises(grpc.RpcError) as refused:
        join_as(mm, stranger, matched.table_id, seat=matched.seat)
    assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED


def _rate(db: Path, ordinals: dict[str, float]) -> None:
    """Puts players on the players' ladder of dobro at these conservative ratings."""
    sigma = 1.0

    def update(current: object) -> list[Rating]:
        return [Rating(PLAYERS_LADDER, "dobro", p, o + 3 * sigma, sigma, 5, time.time())
                for p, o in ordinals.items()]

    async def go() -> None:
        store = SQLiteStore(db)
        try:
            match = RatedMatch(PLAYERS_LADDER, f"seed-{time.time()}", "dobro", ("seed-t",),
                               tuple(ordinals), time.time())
            await store.rate(match, update)
        finally:
            await store.close()

    asyncio.run(go())


def test_rated_match_groups_close_ratings(mm: Client, mm_server: ServerProcess) -> None:
    players = [guest(mm, f"rated{i}") for i in range(4)]
    ordinals = dict(zip((p for p, _ in players), (0.0, 20.0, 1.0, 21.0), strict=True))
    _rate(mm_server.db, ordinals)
    time.sleep(2.1)  # the matcher reads ratings at most every 2 s
    opened = [find(mm, token, "dobro", players=2, mode=pb.MATCH_MODE_RATED)
              for _, token in players]
    assert [t.rating for t in opened] == pytest.approx(list(ordinals.values()))
    matched = {pid: wait_matched(mm, token, t.ticket_id)
               for (pid, token), t in zip(players, opened, strict=True)}
    tables: dict[str, set[float]] = {}
    for pid, ticket in matched.items():
        tables.setdefault(ticket.table_id, set()).add(ordinals[pid])
    assert sorted(tables.values(), key=min) == [{0.0, 1.0}, {20.0, 21.0}]
    joined = join_as(mm, players[0][1], matched[players[0][0]].table_id)
    assert joined.table.rated


def test_bots_fill_after_the_wait_at_the_closest_level(mm: Client) -> None:
    player_id, token = guest(mm, "lonely")
    ticket = find(mm, token, "dos", players=3)
    assert ticket.bots_at == pytest.approx(ticket.created_at + 1, abs=0.01)
    matched = wait_matched(mm, token, ticket.ticket_id)
    assert matched.waited_seconds >= 1
    joined = join_as(mm, token, matched.table_id)
    assert joined.seat == matched.seat
    bots = [s for s in joined.table.seats if s.seat != matched.seat]
    # a newcomer's rating (0) is closest to easy's prior
    assert [(s.kind, s.bot_level) for s in bots] == [(pb.SEAT_KIND_BOT, "easy")] * 2


def test_one_open_ticket_per_game_and_cancel(mm: Client) -> None:
    _, token = guest(mm, "canceller")
    first = find(mm, token, "dou_dizhu", options={"deals": 3})
    again = find(mm, token, "dou_dizhu", options={"deals": 3})
    assert again.ticket_id == first.ticket_id
    with pytest.raises(grpc.RpcError) as refused:
        find(mm, token, "dou_dizhu", options={"deals": 5})
    assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert first.ticket_id in refused.value.details()
    # another player sees no such ticket, and cannot cancel it
    _, other = guest(mm, "other")
    for call in (mm.stub.GetTicket, mm.stub.CancelTicket):
        with pytest.raises(grpc.RpcError) as hidden:
            call(pb.GetTicketRequest(ticket_id=first.ticket_id), metadata=player_md(other),
                 timeout=10)
        assert hidden.value.code() == grpc.StatusCode.NOT_FOUND
    cancelled = mm.stub.CancelTicket(pb.GetTicketRequest(ticket_id=first.ticket_id),
                                     metadata=player_md(token), timeout=10)
    assert cancelled.status == pb.TICKET_STATUS_CANCELLED
    fresh = find(mm, token, "dou_dizhu", options={"deals": 5})
    assert fresh.ticket_id != first.ticket_id
    mm.stub.CancelTicket(pb.GetTicketRequest(ticket_id=fresh.ticket_id),
                         metadata=player_md(token), timeout=10)


def test_a_ticket_nobody_asks_about_expires(mm: Client) -> None:
    _, token = guest(mm, "forgetful")
    ticket = find(mm, token, "dou_dizhu", options={"deals": 6})
    time.sleep(TICKET_SECONDS + 0.5)
    seen = mm.stub.GetTicket(pb.GetTicketRequest(ticket_id=ticket.ticket_id),
                             metadata=player_md(token), timeout=10)
    assert seen.status == pb.TICKET_STATUS_EXPIRED
    # the player's slot is free again
    fresh = find(mm, token, "dou_dizhu", options={"deals": 7})
    assert fresh.ticket_id != ticket.ticket_id
    mm.stub.CancelTicket(pb.GetTicketRequest(ticket_id=fresh.ticket_id),
                         metadata=player_md(token), timeout=10)


def test_watch_ticket_streams_until_matched(mm: Client) -> None:
    _, token = guest(mm, "watcher")
    ticket = find(mm, token, "dos", players=2)
    seen = list(mm.stub.WatchTicket(pb.GetTicketRequest(ticket_id=ticket.ticket_id),
                                    metadata=player_md(token), timeout=20))
    assert seen[0].status == pb.TICKET_STATUS_WAITING
    assert seen[-1].status == pb.TICKET_STATUS_MATCHED and seen[-1].table_id
    assert all(t.status == pb.TICKET_STATUS_WAITING for t in seen[:-1])


BAD = [
    (dict(game=""), "game is required"),
    (dict(game="chess"), "chess"),
    (dict(game="dou_dizhu", players=9), "players"),
    (dict(game="dou_dizhu", options={"rated": True}), "rated"),
    (dict(game="dou_dizhu", options={"ladder": "main"}), "ladder"),
    (dict(game="dou_dizhu", options={"deals": "many"}), "dou_dizhu"),
    (dict(game="dou_dizhu", mode=7), "mode"),
]


@pytest.mark.parametrize(("fields", "says"), BAD)
def test_bad_requests_change_nothing(mm: Client, fields: dict[str, object], says: str) -> None:
    _, token = guest(mm, "careless")
    options = fields.pop("options", None)
    request = pb.FindMatchRequest(**fields)  # type: ignore[arg-type]
    if options is not None:
        request.options.update(options)  # type: ignore[arg-type]
    with pytest.raises(grpc.RpcError) as refused:
        mm.stub.FindMatch(request, metadata=player_md(token), timeout=10)
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert says in refused.value.details()
    # nothing was opened: a good request now opens a ticket, no conflict
    ok = find(mm, token, "dou_dizhu", options={"deals": 8})
    mm.stub.CancelTicket(pb.GetTicketRequest(ticket_id=ok.ticket_id),
                         metadata=player_md(token), timeout=10)


def test_tickets_need_a_player(mm: Client) -> None:
    for call, request in ((mm.stub.FindMatch, pb.FindMatchRequest(game="dou_dizhu")),
                          (mm.stub.GetTicket, pb.GetTicketRequest(ticket_id="x"))):
        with pytest.raises(grpc.RpcError) as refused:
            call(request, timeout=10)
        assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
    _, token = guest(mm, "asker")
    for ticket_id, code in (("", grpc.StatusCode.INVALID_ARGUMENT),
                            ("x" * 65, grpc.StatusCode.INVALID_ARGUMENT),
                            ("nope", grpc.StatusCode.NOT_FOUND)):
        with pytest.raises(grpc.RpcError) as refused:
            mm.stub.GetTicket(pb.GetTicketRequest(ticket_id=ticket_id),
                              metadata=player_md(token), timeout=10)
        assert refused.value.code() == code


def _metric(server: ServerProcess, name: str, **labels: str) -> float:
    port = server.extra[server.extra.index("--metrics-port") + 1]
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
    total = 0.0
    for line in text.splitlines():
        m = re.fullmatch(rf"{name}{{(.*)}} (\S+)", line)
        if m and all(f'{k}="{v}"' in m.group(1) for k, v in labels.items()):
            total += float(m.group(2))
    return total


def test_the_queues_state_is_metrics(mm: Client, mm_server: ServerProcess) -> None:
    _, token = guest(mm, "counted")
    # the module's only rated queue of this game: nobody else's ticket counts
    ticket = find(mm, token, "dou_dizhu", options={"deals": 9}, mode=pb.MATCH_MODE_RATED)
    time.sleep(0.5)  # a matcher round or more
    waiting = ("croupier_match_waiting_tickets", {"game": "dou_dizhu", "mode": "rated"})
    assert _metric(mm_server, waiting[0], **waiting[1]) == 1
    mm.stub.CancelTicket(pb.GetTicketRequest(ticket_id=ticket.ticket_id),
                         metadata=player_md(token), timeout=10)
    time.sleep(0.5)
    assert _metric(mm_server, waiting[0], **waiting[1]) == 0
    before = _metric(mm_server, "croupier_match_seconds_count", game="dobro")
    pair = [guest(mm, f"pair{i}") for i in range(2)]
    opened = [find(mm, t, "dobro", players=2, options={"deals": 2}) for _, t in pair]
    for (_, t), o in zip(pair, opened, strict=True):
        wait_matched(mm, t, o.ticket_id)
    assert _metric(mm_server, "croupier_match_seconds_count", game="dobro") == before + 2
    assert _metric(mm_server, "croupier_match_tickets_total", game="dobro", bots="no") >= 2
