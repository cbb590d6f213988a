"""Seats' presence through real servers: SeatInfo.presence in views, PRESENCE events on
streams that ask for them (not in the log: no version moves), shared by replicas."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from croupier.v1 import croupier_pb2 as pb

from service.model import Seat, SeatKind
from service.presence import Presence, PresencePolicy, seat_presence
from tests.presence_support import Watcher, presence_server, presences
from tests.support import Client, ServerProcess, bearer

CONNECTED, AWAY, GONE = pb.PRESENCE_CONNECTED, pb.PRESENCE_AWAY, pb.PRESENCE_GONE
NONE = pb.PRESENCE_UNSPECIFIED


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServerProcess, ...]]:
    """Two replicas on one SQLite file, with short presence settings."""
    db = tmp_path_factory.mktemp("presence") / "croupier.db"
    first = presence_server(db)
    second = presence_server(db.with_name("second.db"), store=f"sqlite:{db}")
    yield first, second
    second.stop()
    first.stop()


def watch(client: Client, table_id: str, token: str = "", presence: bool = True) -> Watcher:
    return Watcher(client.stub.StreamTable(
        pb.StreamTableRequest(table_id=table_id, presence=presence),
        metadata=bearer(token) if token else None, timeout=60,
    ))


def is_presence(event: pb.TableEvent) -> bool:
    return event.kind == pb.EVENT_KIND_PRESENCE


def test_a_seats_stream_shows_it_connected_then_away_then_gone(
    servers: tuple[ServerProcess, ...],
) -> None:
    server = servers[0]
    a, b = Client(server.address), Client(server.address)
    try:
        table_id = a.seated_table()
        version = a.view(table_id).version
        watcher = watch(b, table_id)
        plain = watch(b, table_id, presence=False)
        # nobody streaming or calling: away within two heartbeats of joining
        away = watcher.wait_for(lambda e: is_presence(e) and presences(e.view.table)[0] == AWAY)
        assert away.version == version and away.view.version == version
        # seat 0 opens its stream: the watcher sees it connected, the others not
        mine = watch(a, table_id, token=a.tokens[0], presence=False)
        back = watcher.wait_for(
            lambda e: is_presence(e) and presences(e.view.table) == [CONNECTED, AWAY, AWAY]
        )
        assert back.version == version
        # the spectator's PRESENCE event shows no seat's cards
        assert not back.view.legal_moves and not back.view.HasField("seat")
        mine.close()
        left = watcher.wait_for(lambda e: is_presence(e) and presences(e.view.table)[0] == AWAY)
        gone = watcher.wait_for(
            lambda e: is_presence(e) and presences(e.view.table) == [GONE] * 3, timeout=15
        )
        assert left.version == gone.version == version
        # nothing of it is in the log: the table's version never moved, and a stream that did
        # not ask for presence got no PRESENCE event
        assert a.view(table_id).version == version
        assert all(e.version <= version for e in watcher.seen)
        plain.close()
        assert not any(is_presence(e) for e in plain.seen)
        assert all(e.kind != pb.EVENT_KIND_PRESENCE for e in list(plain.events.queue))
        # GetView shows it; the caller's own call makes its seat connected
        public = a.view(table_id)
        assert presences(public.table) == [GONE] * 3
        mine_view = a.view(table_id, seat=1)
        assert presences(mine_view.table)[1] == CONNECTED
        watcher.close()
    finally:
        a.close()
        b.close()


def test_replicas_share_presence(servers: tuple[ServerProcess, ...]) -> None:
    """Seat 0 streams through one replica; a watcher on the other sees it connected."""
    first, second = servers
    a, b = Client(first.address), Client(second.address)
    try:
        table_id = a.seated_table()
        watcher = watch(b, table_id)
        watcher.wait_for(lambda e: is_presence(e) and presences(e.view.table)[0] == AWAY)
        mine = watch(a, table_id, token=a.tokens[0], presence=False)
        watcher.wait_for(lambda e: is_presence(e) and presences(e.view.table)[0] == CONNECTED)
        assert presences(b.view(table_id).table)[0] == CONNECTED
        mine.close()
        watcher.wait_for(lambda e: is_presence(e) and presences(e.view.table)[0] == AWAY)
        watcher.close()
    finally:
        a.close()
        b.close()


def test_empty_and_bot_seats_have_no_presence_and_a_move_shows_it(
    servers: tuple[ServerProcess, ...],
) -> None:
    a = Client(servers[0].address)
    try:
        table = a.create(seats=[pb.SeatSpec(kind=pb.SEAT_KIND_HUMAN),
                                pb.SeatSpec(kind=pb.SEAT_KIND_BOT, bot_level="random"),
                                pb.SeatSpec(kind=pb.SEAT_KIND_HUMAN)])
        assert presences(table) == [NONE] * 3
        a.join(table.table_id, "ann")
        assert presences(a.view(table.table_id).table) == [CONNECTED, NONE, NONE]
        # a bot taking a person's seat (here: the last seat, as a bot) shows none either
        a.join(table.table_id, "robot", seat=1, bot=True)
        a.join(table.table_id, "bob", seat=2)
        view = a.view(table.table_id, seat=0)
        assert presences(view.table)[0] == CONNECTED and presences(view.table)[1] == NONE
        # the reply to a move carries presence too (as the server knows it, no store read)
        while view.to_act[0] == 1:  # the bot's turn: its seat's token moves for it
            mine = a.view(table.table_id, seat=1)
            a.move(table.table_id, 1, mine.legal_moves[0], mine.version)
            view = a.view(table.table_id)
        mover = view.to_act[0]
        mine = a.view(table.table_id, seat=mover)
        reply = a.move(table.table_id, mover, mine.legal_moves[0], mine.version)
        assert presences(reply.view.table)[mover] == CONNECTED
        assert presences(reply.view.table)[1] == NONE
    finally:
        a.close()


def test_presence_of_one_seat_by_the_clock() -> None:
    policy = PresencePolicy(heartbeat=5.0, gone_seconds=60.0)
    person = Seat(occupied=True, name="ann", joined_at=100.0)
    assert seat_presence(Seat(), None, 200.0, policy) == Presence.UNSPECIFIED
    assert seat_presence(Seat(occupied=True, is_bot=True), 199.0, 200.0, policy) == (
        Presence.UNSPECIFIED)
    assert seat_presence(Seat(kind=SeatKind.BOT, occupied=True), 199.0, 200.0, policy) == (
        Presence.UNSPECIFIED)
    assert seat_presence(person, None, 105.0, policy) == Presence.CONNECTED  # joined: seen
    assert seat_presence(person, None, 111.0, policy) == Presence.AWAY
    assert seat_presence(person, 150.0, 159.0, policy) == Presence.CONNECTED
    assert seat_presence(person, 150.0, 209.0, policy) == Presence.AWAY
    assert seat_presence(person, 150.0, 211.0, policy) == Presence.GONE
    # its turn timer ran out: away even while its stream is open, gone all the same
    away = Seat(occupied=True, joined_at=100.0, away=True)
    assert seat_presence(away, 150.0, 151.0, policy) == Presence.AWAY
    assert seat_presence(away, 150.0, 300.0, policy) == Presence.GONE
    with pytest.raises(ValueError, match="gone time"):
        PresencePolicy(heartbeat=5.0, gone_seconds=8.0)
    with pytest.raises(ValueError, match="positive"):
        PresencePolicy(heartbeat=0.0)


def test_bad_presence_settings_stop_the_server_with_a_message(tmp_path: Path) -> None:
    proc = ServerProcess(db=tmp_path / "c.db", extra=("--gone-after", "1"))
    with pytest.raises(RuntimeError, match="before serving"):
        proc.start()
    assert "gone time" in proc.log_text()
