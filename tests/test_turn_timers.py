"""Turn timers over real gRPC: a seat that lets its time run out is played for by the server
(the game's heuristic player) and the event says `auto`; tables without a timer wait."""

from __future__ import annotations

import pytest
from croupier.v1 import croupier_pb2 as pb
from google.protobuf import struct_pb2

from engines.registry import get_game
from tests.support import (
    Client,
    ServerProcess,
    StructValue,
    rpc_code,
    stored_event_states,
    stored_table,
)

pytestmark = pytest.mark.e2e


def _options(**values: StructValue) -> struct_pb2.Struct:
    s = struct_pb2.Struct()
    s.update(values)
    return s


def test_bad_turn_seconds_are_refused(server: ServerProcess, client: Client) -> None:
    for bad in (-1, "fast", True, 10**9):
        code, msg = rpc_code(client.create, options=_options(turn_seconds=bad))
        assert code.name == "INVALID_ARGUMENT" and "turn_seconds" in msg, bad


def test_the_server_plays_for_a_seat_whose_time_ran_out(server: ServerProcess,
                                                        client: Client) -> None:
    game = get_game("dou_dizhu")
    idle = client.seated_table()  # no timer: nobody plays for it
    idle_before = stored_table(server.db, idle)
    tid = client.create(options=_options(turn_seconds=0.3, deals=1)).table_id
    for seat in range(3):
        client.join(tid, name=f"p{seat}", seat=seat)
    # one move by a person first: not auto
    first = client.step(tid)
    assert first is not None
    autos = []
    for event in client.stream(tid, from_version=first.version, seat=0, timeout=60):
        if event.kind == pb.EVENT_KIND_MOVE:
            assert event.auto, event
            autos.append(event)
        if len(autos) == 3 or event.kind == pb.EVENT_KIND_END:
            break
    assert len(autos) == 3
    # each auto move is a legal move of the seat that was to act, applied by the engine
    states = stored_event_states(server.db, tid)
    for event in autos:
        before = game.decode(states[event.version - 1])
        assert event.seat in game.to_act(before)
        mover = client.stream(tid, from_version=event.version - 1, seat=event.seat)
        full = next(iter(mover))
        mover.cancel()
        assert full.auto and game.parse_move(full.move) in game.legal_moves(before, event.seat)
    history = client.stream(tid, from_version=first.version - 1, seat=0, timeout=10)
    assert not next(iter(history)).auto  # the person's move
    history.cancel()
    assert stored_table(server.db, idle) == idle_before


def test_a_gone_seat_is_played_for_at_once_and_handed_back(server: ServerProcess,
                                                          client: Client) -> None:
    """After two timeouts in a row a seat counts as gone (away): the server plays it as soon
    as it is to act; any call with its token hands it back (a JOINED event says so)."""
    tid = client.create(options=_options(turn_seconds=0.3, deals=1)).table_id
    for seat in range(3):
        client.join(tid, name=f"p{seat}", seat=seat)
    away = None
    for event in client.stream(tid, from_version=4, timeout=60):
        gone = [s.seat for s in event.view.table.seats if s.away]
        if gone:
            away = gone[0]
            break
        assert event.kind != pb.EVENT_KIND_END, "the match ended before a seat went away"
    assert away is not None
    back = client.view(tid, away)  # the person calls with the seat token: handed back
    assert not back.table.seats[away].away
    seen = client.stream(tid, from_version=back.version - 1, seat=away, timeout=10)
    event = next(iter(seen))
    seen.cancel()
    assert event.kind == pb.EVENT_KIND_JOINED and event.seat == away


def test_a_gone_seat_calling_after_the_end_adds_no_event(server: ServerProcess,
                                                         client: Client) -> None:
    """Nothing follows the END event: a seat that went away and calls once the match is over
    gets its view, and the table stays as it ended."""
    tid = client.create(options=_options(turn_seconds=0.2, deals=1)).table_id
    for seat in range(3):
        client.join(tid, name=f"p{seat}", seat=seat)
    end = [e for e in client.stream(tid, timeout=120) if e.kind == pb.EVENT_KIND_END][0]
    gone = [s.seat for s in end.view.table.seats if s.away]
    assert gone, "every seat kept playing: the timer never played twice in a row"
    view = client.view(tid, gone[0])
    assert view.version == end.version and view.result.finished
    events = list(client.stream(tid, from_version=end.version - 1, seat=gone[0], timeout=10))
    assert [e.kind for e in events] == [pb.EVENT_KIND_END]
    assert stored_table(server.db, tid)[0] == end.version


def test_the_timer_plays_the_seat_on_turn_not_a_seat_that_may_announce(
    server: ServerProcess, client: Client
) -> None:
    """In Doppelkopf the seats off turn may announce while a card is awaited: the timer plays
    the card of the seat on turn, never an announcement for a lower seat."""
    game = get_game("doppelkopf")
    tid = client.create(
        "doppelkopf", players=4, options=_options(turn_seconds=0.2, deals=1)
    ).table_id
    for seat in range(4):
        client.join(tid, name=f"p{seat}", seat=seat)
    states = None
    checked = 0
    for event in client.stream(tid, from_version=5, seat=0, timeout=120):
        if event.kind == pb.EVENT_KIND_END:
            break
        if event.kind != pb.EVENT_KIND_MOVE:
            continue
        assert event.auto, event
        states = stored_event_states(server.db, tid)
        before = game.decode(states[event.version - 1])
        acting = game.to_act(before)
        if len(acting) > 1:
            assert event.seat in game.on_turn(before), (event.seat, set(acting))
            # the telling case: a lower seat could have announced
            if min(acting) not in game.on_turn(before):
                checked += 1
                if checked == 2:
                    break
    assert checked == 2, "too few timed moves where a lower seat could announce"
