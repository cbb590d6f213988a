"""Time control and fallbacks over real gRPC: the match budget (option match_seconds) that a
slow move draws on and the turn timer waits for, the deadline and budget left in a seat's
views, and the fallbacks and think times the exported record keeps.

Deadlines are checked against the server's own clock (event times), never against the test's:
`deadline == last event time + turn_seconds + budget_left`."""

from __future__ import annotations

import random
import time

import grpc
import pytest
from croupier.v1 import croupier_pb2 as pb
from google.protobuf import struct_pb2

from tests.support import Client, ServerProcess, StructValue, bearer, rpc_code, stored_table

C = grpc.StatusCode
pytestmark = pytest.mark.e2e


def _options(**values: StructValue) -> struct_pb2.Struct:
    s = struct_pb2.Struct()
    s.update(values)
    return s


def _seated(client: Client, **options: StructValue) -> str:
    tid = client.create(options=_options(deals=1, **options)).table_id
    for seat in range(3):
        client.join(tid, name=f"p{seat}", seat=seat)
    return tid


def _last_event(client: Client, tid: str, version: int) -> pb.TableEvent:
    stream = client.stream(tid, from_version=version - 1, timeout=10)
    event = next(iter(stream))
    stream.cancel()
    assert event.version == version
    return event


def test_bad_match_seconds_are_refused(server: ServerProcess, client: Client) -> None:
    for bad in (-1, "long", True, 7 * 24 * 3600 + 1, None):
        code, msg = rpc_code(client.create, options=_options(turn_seconds=5, match_seconds=bad))
        assert code == C.INVALID_ARGUMENT and "match_seconds" in msg, bad
    for turn in ({}, {"turn_seconds": 0}):
        code, msg = rpc_code(client.create, options=_options(match_seconds=60, **turn))
        assert code == C.INVALID_ARGUMENT and "turn_seconds" in msg, turn
    table = client.create(options=_options(turn_seconds=5, match_seconds=0))
    assert table.options["match_seconds"] == 0


def test_views_carry_the_deadline_and_the_budget_left(server: ServerProcess,
                                                      client: Client) -> None:
    tid = _seated(client, turn_seconds=30, match_seconds=60)
    public = client.view(tid)
    assert public.deadline == 0 and public.budget_left == 0  # a spectator has neither
    (on_turn,) = public.on_turn
    last = _last_event(client, tid, public.version)
    for seat in range(3):
        view = client.view(tid, seat)
        assert view.budget_left == 60
        if seat == on_turn:
            assert view.deadline == pytest.approx(last.time + 30 + 60, abs=1e-6)
        else:
            assert view.deadline == 0
    # the mover's answer: no longer waited for; the stream of the next seat: its deadline
    reply = client.move(tid, on_turn, client.view(tid, on_turn).legal_moves[0], public.version)
    assert reply.view.deadline == 0 and 0 < reply.view.budget_left <= 60
    (nxt,) = reply.view.on_turn
    stream = client.stream(tid, from_version=reply.version - 1, seat=nxt, timeout=10)
    event = next(iter(stream))
    stream.cancel()
    assert event.kind == pb.EVENT_KIND_MOVE and list(event.view.on_turn) == [nxt]
    assert event.view.deadline == pytest.approx(
        event.time + 30 + event.view.budget_left, abs=1e-6)
    # a table with a timer but no budget: a deadline, no budget; none without a timer
    timed = _seated(client, turn_seconds=30)
    view = client.view(timed, client.view(timed).on_turn[0])
    last = _last_event(client, timed, view.version)
    assert view.deadline == pytest.approx(last.time + 30, abs=1e-6) and view.budget_left == 0
    untimed = _seated(client)
    view = client.view(untimed, client.view(untimed).on_turn[0])
    assert view.deadline == 0 and view.budget_left == 0


def test_a_slow_move_draws_on_the_budget(server: ServerProcess, client: Client) -> None:
    tid = _seated(client, turn_seconds=0.5, match_seconds=2)
    view = client.view(tid, client.view(tid).on_turn[0])
    time.sleep(0.8)  # past turn_seconds, well inside the budget
    reply = client.move(tid, view.seat, view.legal_moves[0], view.version)
    before, made = _last_event(client, tid, view.version), _last_event(client, tid, reply.version)
    thought = made.time - before.time
    assert thought > 0.5 and not made.auto
    # what it took past turn_seconds came out of its budget (the server read its clock when
    # the move came in, a moment before the event's time)
    assert reply.view.budget_left == pytest.approx(2 - (thought - 0.5), abs=0.05)
    assert reply.view.budget_left < 2
    assert client.view(tid, view.seat).budget_left == reply.view.budget_left
    others = [client.view(tid, s).budget_left for s in range(3) if s != view.seat]
    assert others == [2, 2]


def test_the_timer_waits_for_turn_and_budget_then_plays(server: ServerProcess,
                                                        client: Client) -> None:
    tid = _seated(client, turn_seconds=0.3, match_seconds=0.6)
    start = client.view(tid)
    seat = start.on_turn[0]
    previous = _last_event(client, tid, start.version)
    found: dict[str, pb.TableEvent] = {}
    for event in client.stream(tid, from_version=start.version, seat=seat, timeout=60):
        waited = event.time - previous.time
        previous = event
        if event.kind == pb.EVENT_KIND_END:
            break
        mine = event.view.table.seats[seat]
        if event.kind == pb.EVENT_KIND_MOVE and event.seat == seat and "first" not in found:
            assert event.auto
            assert waited >= 0.3 + 0.6  # turn_seconds, then the whole budget
            assert event.view.budget_left == pytest.approx(0, abs=1e-6)  # all spent
            found["first"] = event
        if "first" in found and "again" not in found:
            # the seat's next turn (it may follow at once: a bid of 3 makes it lead); once
            # the budget is spent, turn_seconds alone
            if seat in event.view.on_turn and not mine.away:
                assert event.view.deadline == pytest.approx(event.time + 0.3, abs=1e-6)
                found["again"] = event
            continue
        if mine.away and seat in event.view.on_turn:
            # gone (two timeouts in a row): played for at once, so its deadline is now
            assert event.view.deadline == pytest.approx(event.time, abs=1e-6)
            found["away"] = event
            break
    assert set(found) == {"first", "again", "away"}


def test_fallbacks_and_think_times_are_recorded(server: ServerProcess,
                                                client: Client) -> None:
    tid = _seated(client, turn_seconds=0.3)
    # one move by the timer first
    start = client.view(tid).version
    for event in client.stream(tid, from_version=start, timeout=30):
        if event.kind == pb.EVENT_KIND_MOVE:
            assert event.auto
            break
    rng = random.Random(30)
    reasons = ["", "illegal", "garbage", "late", "crashed"]
    sent: dict[int, str] = {}
    refused = False
    for _ in range(2000):
        public = client.view(tid)
        if not public.on_turn:
            break
        mine = client.view(tid, public.on_turn[0])
        if not mine.legal_moves:
            continue  # the timer moved meanwhile
        if not refused:  # an unknown reason: refused, nothing changes
            before = stored_table(server.db, tid)
            request = pb.SubmitMoveRequest(table_id=tid, move=mine.legal_moves[0],
                                           expected_version=mine.version, fallback="slow")
            code, msg = rpc_code(client.stub.SubmitMove, request,
                                 metadata=bearer(client.tokens[mine.seat]), timeout=10)
            assert code == C.INVALID_ARGUMENT and "fallback" in msg
            assert stored_table(server.db, tid) == before
            refused = True
        reason = rng.choice(reasons)
        request = pb.SubmitMoveRequest(table_id=tid, move=rng.choice(mine.legal_moves),
                                       expected_version=mine.version, fallback=reason)
        try:
            client.stub.SubmitMove(request, metadata=bearer(client.tokens[mine.seat]),
                                   timeout=10)
        except grpc.RpcError as e:  # the timer played first
            assert e.code() in (C.ABORTED, C.FAILED_PRECONDITION), e
            continue
        sent[mine.version + 1] = reason
    record = client.stub.ExportRecord(pb.ExportRecordRequest(table_id=tid), timeout=10)
    events = {e.version: e for e in client.stream(tid, timeout=10)}
    assert record.moves and set(sent) <= {m.version for m in record.moves}
    assert {m.fallback for m in record.moves} >= {"illegal", "garbage", "late", "crashed"}
    for move in record.moves:
        event = events[move.version]
        assert move.auto == event.auto
        assert move.fallback == ("" if move.auto else sent[move.version])
        assert move.seconds == pytest.approx(event.time - events[move.version - 1].time,
                                             abs=1e-6)
    assert record.moves[0].auto
