"""End to end: real `croupier serve` and `croupier bots` processes over gRPC.

The worker must finish bot-only tables, play its seats against a person, come back after the
server is killed and restarted on the same SQLite file, and give its seats back on SIGTERM.
"""

from __future__ import annotations

import json
import random
import signal
import socket
import subprocess
import urllib.request
from pathlib import Path

import pytest
from croupier.v1 import croupier_pb2 as pb

from tests.bot_support import (
    CROUPIER,
    Bots,
    Proc,
    Server,
    auth,
    bot_seats,
    create_table,
    events_to_end,
    free_port,
    human_seat,
    play_seat,
    stub_for,
    wait_serving,
    wait_until,
)

pytestmark = pytest.mark.e2e


STACK_WORKERS = 2  # the worker of the tests that only play: two processes


def decisions(log: Path) -> list[dict[str, object]]:
    out = []
    for line in log.read_text(errors="replace").splitlines():
        if '"decision"' in line:
            out.append(json.loads(line))
    return out


def assert_finished(events: list[pb.TableEvent]) -> pb.Result:
    end = events[-1]
    assert end.kind == pb.EVENT_KIND_END
    result = end.view.result
    assert result.finished
    assert len(result.totals) == 3 and sum(result.totals) == 0  # Dou Dizhu is zero-sum
    assert list(result.winners)
    assert any(e.kind == pb.EVENT_KIND_MOVE for e in events)
    return result


def test_three_bot_table_is_played_to_the_end(stack_with_bots: tuple[Server, Bots]) -> None:
    server, bots = stack_with_bots
    channel, stub = stub_for(server.address)
    with channel:
        table_id = create_table(stub, bot_seats(3))
        events = events_to_end(stub, table_id)
    assert_finished(events)
    joined = [e for e in events if e.kind == pb.EVENT_KIND_JOINED]
    assert sorted(e.seat for e in joined) == [0, 1, 2]
    assert all(s.is_bot for s in events[-1].view.table.seats)
    moved = {e.seat for e in events if e.kind == pb.EVENT_KIND_MOVE}
    assert moved == {0, 1, 2}
    moves = sum(e.kind == pb.EVENT_KIND_MOVE for e in events)

    def logged() -> list[dict]:
        return [d for d in decisions(bots.log) if d["table"] == table_id]

    # a worker writes its decision line once SubmitMove has answered, which can be just after
    # the stream brought the end to this test
    try:
        wait_until(lambda: len(logged()) >= moves, 10, "a decision line for every move")
    finally:
        assert len(logged()) == moves, bots.describe()
    for entry in logged():
        assert {"seat", "bot_level", "version", "move", "duration_ms"} <= entry.keys()


def test_several_tables_at_once(stack_with_bots: tuple[Server, Bots]) -> None:
    server, bots = stack_with_bots
    channel, stub = stub_for(server.address)
    with channel:
        tables = [create_table(stub, bot_seats(3)) for _ in range(4)]
        for table_id in tables:
            assert_finished(events_to_end(stub, table_id))


def test_human_seat_and_two_bot_seats(stack_with_bots: tuple[Server, Bots]) -> None:
    server, bots = stack_with_bots
    channel, stub = stub_for(server.address)
    with channel:
        table_id = create_table(stub, [human_seat(), *bot_seats(2)])
        joined = stub.JoinTable(pb.JoinTableRequest(table_id=table_id, seat=0, name="tester"))
        final = play_seat(stub, table_id, joined.token, random.Random(7))
        assert final.result.finished, final
        events = events_to_end(stub, table_id)
    assert_finished(events)
    moved = {e.seat for e in events if e.kind == pb.EVENT_KIND_MOVE}
    assert moved == {0, 1, 2}
    assert not events[-1].view.table.seats[0].is_bot
    assert all(s.is_bot for s in events[-1].view.table.seats[1:])


def test_worker_resumes_after_server_restart(tmp_path: Path) -> None:
    server = Server(tmp_path / "c.db", tmp_path / "server.log")
    bots = Bots(server.address, tmp_path / "bots.log", workers=1)
    rng = random.Random(11)
    try:
        channel, stub = stub_for(server.address)
        with channel:
            table_id = create_table(stub, [human_seat(), *bot_seats(2)])
            joined = stub.JoinTable(pb.JoinTableRequest(table_id=table_id, seat=0, name="tester"))
            # Play until the bots have made a few moves, then kill the server mid-match.
            view = play_seat(
                stub, table_id, joined.token, rng,
                stop_when=lambda v: v.table.status == pb.TABLE_STATUS_PLAYING and v.version >= 8,
            )
            assert not view.result.finished
        before = len(decisions(bots.log))
        assert before > 0, bots.describe()
        server.stop(signal.SIGKILL)
        server = server.restart()
        channel, stub = stub_for(server.address)
        with channel:
            final = play_seat(stub, table_id, joined.token, rng)
            assert final.result.finished
            events = events_to_end(stub, table_id)
        assert_finished(events)
        # The worker kept its seats (tokens survived the restart): nobody left or re-joined.
        assert not [e for e in events if e.kind == pb.EVENT_KIND_LEFT]
        assert sum(e.kind == pb.EVENT_KIND_JOINED for e in events) == 3
        after = [d for d in decisions(bots.log)[before:] if d["table"] == table_id]
        assert after, bots.describe()
        assert bots.alive(), bots.describe()
    finally:
        bots_code = bots.stop()
        server.stop()
    assert bots_code == 0, bots.describe()


def test_sigterm_gives_unfinished_seats_back(tmp_path: Path) -> None:
    server = Server(tmp_path / "c.db", tmp_path / "server.log")
    bots = Bots(server.address, tmp_path / "bots.log", workers=2)
    try:
        channel, stub = stub_for(server.address)
        with channel:
            table_id = create_table(stub, [human_seat(), *bot_seats(2)])
            joined = stub.JoinTable(pb.JoinTableRequest(table_id=table_id, seat=0, name="tester"))

            def seated() -> bool:
                view = stub.GetView(pb.GetViewRequest(table_id=table_id), timeout=5)
                return view.table.status == pb.TABLE_STATUS_PLAYING

            wait_until(seated, what="the bots to take their seats")
            # Make it the person's turn (bots move when it is theirs), then stop the worker.
            play_seat(
                stub, table_id, joined.token, random.Random(3),
                stop_when=lambda v: 0 in v.to_act,
            )
            code = bots.stop(signal.SIGTERM)
            assert code == 0, bots.describe()
            view = stub.GetView(
                pb.GetViewRequest(table_id=table_id), metadata=auth(joined.token), timeout=5
            )
            assert [s.occupied for s in view.table.seats] == [True, False, False]
            assert view.table.status == pb.TABLE_STATUS_WAITING
            # The seats are open again: a new worker takes them and finishes the table.
            bots = Bots(server.address, tmp_path / "bots2.log", workers=1)
            final = play_seat(stub, table_id, joined.token, random.Random(4))
            assert final.result.finished
    finally:
        bots.stop()
        server.stop()


def test_bot_level_filter_leaves_other_levels_alone(tmp_path: Path) -> None:
    server = Server(tmp_path / "c.db", tmp_path / "server.log")
    picky = Bots(server.address, tmp_path / "bots.log", levels="random")
    try:
        channel, stub = stub_for(server.address)
        with channel:
            other = create_table(stub, bot_seats(3, level="hard"))
            mine = create_table(stub, bot_seats(3))
            assert_finished(events_to_end(stub, mine))
            view = stub.GetView(pb.GetViewRequest(table_id=other), timeout=5)
            assert not any(s.occupied for s in view.table.seats)
    finally:
        assert picky.stop() == 0, picky.describe()
        server.stop()


def test_unreachable_server_is_retried_not_fatal(tmp_path: Path) -> None:
    port = free_port()
    bots = Bots(f"127.0.0.1:{port}", tmp_path / "bots.log", workers=1)
    try:
        wait_until(lambda: "lobby_unreachable" in (tmp_path / "bots.log").read_text(),
                   what="the worker to report the missing server")
        assert bots.alive()
        server = Server(tmp_path / "c.db", tmp_path / "server.log", port=port)
        try:
            channel, stub = stub_for(server.address)
            with channel:
                table_id = create_table(stub, bot_seats(3))
                assert_finished(events_to_end(stub, table_id))
        finally:
            server.stop()
    finally:
        assert bots.stop() == 0, bots.describe()


def test_bots_help() -> None:
    out = subprocess.run([CROUPIER, "bots", "--help"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0
    for flag in ("--server", "--workers", "--levels", "--poll"):
        assert flag in out.stdout



def test_search_levels_play_through_the_worker(stack_with_bots: tuple[Server, Bots]) -> None:
    """ISMCTS and heuristic seats are served by the same worker, with one logged decision each."""
    server, bots = stack_with_bots
    channel, stub = stub_for(server.address)
    seats = [*bot_seats(1, "easy"), *bot_seats(1, "heuristic"), *bot_seats(1, "random")]
    with channel:
        table_id = create_table(stub, seats)
        events = events_to_end(stub, table_id)
    assert_finished(events)
    logged = [d for d in decisions(bots.log) if d["table"] == table_id]
    levels = {d["seat"]: d["bot_level"] for d in logged}
    assert levels == {0: "easy", 1: "heuristic", 2: "random"}, bots.describe()
    searched = [d for d in logged if d["bot_level"] == "easy"]
    assert searched and all(d["iterations"] in (0, 50) for d in searched)
    assert any(d["iterations"] == 50 for d in searched)


def test_a_move_sent_while_the_server_is_away_lands_once(tmp_path: Path) -> None:
    """The worker sends a decided move again while the server restarts, and a repeat of a
    move that landed gets the first answer back: no second search, no second move."""
    import asyncio

    import grpc
    from croupier.v1 import croupier_pb2_grpc as pb_grpc

    from bots.sdk import SeatContext
    from bots.sdk.seat import SeatPlayer
    from bots.worker import LevelBot

    server = Server(tmp_path / "c.db", tmp_path / "server.log")
    try:
        channel, stub = stub_for(server.address)
        with channel:
            table_id = create_table(stub, [human_seat()] * 3)
            tokens = {}
            for seat in range(3):
                joined = stub.JoinTable(
                    pb.JoinTableRequest(table_id=table_id, seat=seat, name=f"p{seat}"))
                tokens[seat] = joined.token
            seat = stub.GetView(pb.GetViewRequest(table_id=table_id)).to_act[0]
            mine = stub.GetView(pb.GetViewRequest(table_id=table_id), metadata=auth(tokens[seat]))
        server.stop(signal.SIGKILL)

        async def go() -> tuple[pb.SubmitMoveResponse, pb.SubmitMoveResponse]:
            nonlocal server
            async with grpc.aio.insecure_channel(server.address) as ch:
                context = SeatContext(table_id, seat, "dou_dizhu", "random", 3)
                player = SeatPlayer(pb_grpc.CroupierStub(ch), context, tokens[seat],
                                    LevelBot.for_seat(context), mine.version, asyncio.Event())
                sending = asyncio.create_task(player._submit(mine.legal_moves[0], mine.version))
                await asyncio.sleep(1.0)  # a few attempts find nobody listening
                assert not sending.done()
                server = await asyncio.to_thread(server.restart)
                first = await sending
                again = await player._submit(mine.legal_moves[0], mine.version)
                return first, again

        first, again = asyncio.run(go())
        assert first.version == mine.version + 1 and first.move == mine.legal_moves[0]
        # the same answer, but for the other seats' presence: seconds pass between the two
        # replies, and a seat that has not called in a while turns from connected to away
        for reply in (first, again):
            for s in reply.view.table.seats:
                s.ClearField("presence")
        assert again == first
        channel, stub = stub_for(server.address)
        with channel:
            assert stub.GetView(pb.GetViewRequest(table_id=table_id)).version == first.version
    finally:
        server.stop()


def test_croupier_run_serves_with_its_bots_and_stops_both(tmp_path: Path) -> None:
    """What `make run` starts: `croupier run` brings up a server (SQLite, web port) and a bot
    worker; the worker plays a table's bot seats against a person; SIGTERM stops both children
    cleanly (bots first, giving their seats back) and the command exits 0."""
    port, web = free_port(), free_port()
    address = f"127.0.0.1:{port}"
    run = Proc("run", [CROUPIER, "run", "--listen", address, "--store",
                       f"sqlite:{tmp_path / 'c.db'}", "--web-listen", f"127.0.0.1:{web}",
                       "--workers", "1"], tmp_path / "run.log")
    try:
        wait_serving(address, run)
        channel, stub = stub_for(address)
        with channel:
            tid = create_table(stub, [human_seat(), *bot_seats(2)])
            me = stub.JoinTable(pb.JoinTableRequest(table_id=tid, name="ann"), timeout=10)
            final = play_seat(stub, tid, me.token, random.Random(7))
            assert final.result.finished
            # the web port is the same service
            req = urllib.request.Request(f"http://127.0.0.1:{web}/croupier.v1.Croupier/Ping",
                                         data=pb.PingRequest(payload=b"hi").SerializeToString(),
                                         headers={"Content-Type": "application/proto"})
            with urllib.request.urlopen(req, timeout=10) as reply:
                assert pb.PingResponse.FromString(reply.read()).payload == b"hi"
        assert "Croupier is serving on" in run.log.read_text()
    finally:
        code = run.stop(signal.SIGTERM, timeout=90)
    assert code == 0, run.describe()
    said = run.log.read_text()
    assert said.count('"child_stopped"') == 2, said[-3000:]
    # nothing of it is left listening
    for p in (port, web):
        with socket.socket() as s:
            assert s.connect_ex(("127.0.0.1", p)) != 0, f"port {p} still open"
