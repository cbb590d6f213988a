"""The bridge against a real server: programs in Node.js and Python play Dou Dizhu tables to the
end over the line protocol, and programs that misbehave (garbage, illegal moves, too slow,
crashing, a bad hello) still see every decision answered by a legal default, with the right
fallback reason, and their tables end.

The decisions are driven here from real GetView replies, seat by seat, so that each one is
checked against the reason the bridge gave for it.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from collections import Counter
from collections.abc import Callable, Coroutine, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import grpc
import pytest
from croupier.v1 import croupier_pb2 as pb
from google.protobuf import struct_pb2

from bots import sdk
from bots.bridge import BadAnswer, BridgeBot, Program
from tests.bridge_support import json_lines, wait_finished
from tests.support import CROUPIER, REPO, Client, ServerProcess, rpc_code

NODE = shutil.which("node")
NODE_BOT = [NODE or "node", str(REPO / "examples" / "node_bot.js")]
LINE_BOT = [sys.executable, str(REPO / "examples" / "line_bot.py")]
T = TypeVar("T")

# a program that plays the first legal move, except where its arguments say to misbehave:
# garbage (a line that is not JSON) / nomove (JSON, no move) / illegal at decision N;
# sleep:S before every answer; crash:N (exit after answering N decisions); badhello
MISBEHAVING = textwrap.dedent(
    """
    import json, os, sys, time
    args = dict(a.split("=", 1) for a in sys.argv[1:])
    mode = args.get("mode", "per-seat")
    if "badhello" in args:
        print(json.dumps({"hello": "something-else/9"}), flush=True)
        sys.stdin.read()
        sys.exit(0)
    print(json.dumps({"hello": "croupier-bot/1", "name": "test", "mode": mode}), flush=True)
    print("hello said", file=sys.stderr, flush=True)
    if "longerr" in args:
        print("x" * 2000, file=sys.stderr, flush=True)
    if "showenv" in args:
        seen = "CROUPIER_API_KEY" in os.environ
        print("api key seen" if seen else "no api key", file=sys.stderr, flush=True)
    n = 0
    for line in sys.stdin:
        m = json.loads(line)
        if m["type"] != "decide":
            continue
        n += 1
        if "sleep" in args:
            time.sleep(float(args["sleep"]))
        if args.get("sleepat") == str(n):
            time.sleep(float(args["seconds"]))
        if args.get("garbage") == str(n):
            print("this is not json", flush=True)
        elif args.get("nomove") == str(n):
            print(json.dumps({"id": m["id"], "move": 3}), flush=True)
        elif args.get("illegal") == str(n):
            print(json.dumps({"id": m["id"], "move": "no such move"}), flush=True)
        else:
            print(json.dumps({"id": m["id"], "move": m["legal_moves"][0]}), flush=True)
        if args.get("crash") == str(n):
            sys.exit(3)
    """
)


# answers the first legal move at once, except every 5th decision: `late` seconds later, the
# last legal move (so that taken for another decision it shows); `ids=1` names the decision.
# Each answer is told on stderr ("ANSWER {seat, version, move, late}") for the test to compare
# with the record.
LATE_ANSWERS = textwrap.dedent(
    """
    import json, sys, time
    args = dict(a.split("=", 1) for a in sys.argv[1:])
    print(json.dumps({"hello": "croupier-bot/1", "name": "late"}), flush=True)
    n = 0
    for line in sys.stdin:
        m = json.loads(line)
        if m["type"] != "decide":
            continue
        n += 1
        late = n % 5 == 0
        if late:
            time.sleep(float(args["late"]))
        move = m["legal_moves"][-1] if late else m["legal_moves"][0]
        answer = {"id": m["id"], "move": move} if "ids" in args else {"move": move}
        print(json.dumps(answer), flush=True)
        told = {"seat": m["seat"], "version": m["version"], "move": move, "late": late}
        print("ANSWER " + json.dumps(told), file=sys.stderr, flush=True)
    """
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    proc = ServerProcess(db=tmp_path_factory.mktemp("bridge") / "croupier.db").start()
    yield proc
    proc.stop()


@pytest.fixture(scope="module")
def misbehaving(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("programs") / "misbehaving.py"
    path.write_text(MISBEHAVING)
    return path


@dataclass
class Played:
    decisions: int
    reasons: Counter[str]  # fallback reason per decision ("" where the program's move stood)
    result: pb.Result


async def play(server: ServerProcess, bot: BridgeBot, tables: int = 1,
               time_left: float = 10.0, pause_after_crash: float = 0.0) -> list[Played]:
    """Plays `tables` Dou Dizhu tables, every seat by `bot`, to the end (seats in turn); after
    a crashed decision the next comes `pause_after_crash` later, as at a table of people."""
    clients = [Client(server.address) for _ in range(tables)]  # one per table: tokens by seat
    try:
        out = []
        ids = [c.seated_table() for c in clients]
        by_table = dict(zip(ids, clients, strict=True))
        seats = {}
        for table_id in ids:
            for seat in range(3):
                context = sdk.SeatContext(table_id=table_id, seat=seat, game="dou_dizhu",
                                          entrant="alice", players=3)
                seats[table_id, seat] = context
                bot.on_seat(context)
        # the tables' decisions interleave (one per table in turn), as a shared program sees
        counts = {t: Counter[str]() for t in ids}
        live = list(ids)
        while live:
            for table_id in list(live):
                client = by_table[table_id]
                public = client.view(table_id)
                if not public.to_act:
                    live.remove(table_id)
                    continue
                seat = public.to_act[0]
                view = client.view(table_id, seat)
                legal = list(view.legal_moves)
                try:
                    move, reason = await bot.choose(view, legal, time_left), ""
                except BadAnswer as bad:
                    move, reason = legal[0], bad.reason
                if move not in legal:
                    # the SDK would send it for the server to judge, and play the default when
                    # refused; none of these tests answers another spelling of a legal move
                    move, reason = legal[0], "illegal"
                counts[table_id][reason] += 1
                if reason == "crashed":
                    await asyncio.sleep(pause_after_crash)
                reply = client.stub.SubmitMove(
                    pb.SubmitMoveRequest(table_id=table_id, move=move,
                                         expected_version=view.version, fallback=reason),
                    metadata=[("authorization", f"Bearer {client.tokens[seat]}")], timeout=10)
                assert reply.version > view.version
        for table_id in ids:
            final = by_table[table_id].view(table_id)
            assert final.table.status == pb.TABLE_STATUS_FINISHED
            for seat in range(3):
                bot.on_match_end(seats[table_id, seat], final)
                bot.on_leave(seats[table_id, seat])
            out.append(Played(sum(counts[table_id].values()), counts[table_id], final.result))
        await asyncio.sleep(0.05)  # the end lines go out
        return out
    finally:
        for c in clients:
            c.close()


def run(main: Callable[..., Coroutine[Any, Any, T]], *args: Any, **kw: Any) -> T:
    return asyncio.run(main(*args, **kw))


async def play_and_close(server: ServerProcess, bot: BridgeBot, **kw: Any) -> list[Played]:
    try:
        return await play(server, bot, **kw)
    finally:
        await bot.close()


def assert_over(played: Played) -> None:
    assert played.result.finished
    assert sum(played.result.totals) == 0
    assert played.decisions > 3


@pytest.mark.skipif(NODE is None, reason="node is not installed: the Node.js example needs it")
def test_node_bot_plays_a_table_to_the_end(server: ServerProcess) -> None:
    bot = BridgeBot(NODE_BOT)
    [played] = run(play_and_close, server, bot)
    assert_over(played)
    assert played.reasons == Counter({"": played.decisions})
    assert bot.mode == "per-seat"


def test_python_line_bot_plays_a_table_to_the_end(server: ServerProcess) -> None:
    bot = BridgeBot(LINE_BOT)
    [played] = run(play_and_close, server, bot)
    assert_over(played)
    assert played.reasons == Counter({"": played.decisions})


def test_per_seat_mode_runs_a_program_per_seat_and_ends_each_with_its_match(
    server: ServerProcess,
) -> None:
    async def scenario() -> None:
        bot = BridgeBot(LINE_BOT)
        try:
            [played] = await play(server, bot)
            assert_over(played)
            programs = {id(p): p for p in bot.programs.values()}
            assert not programs  # every seat's match ended: its program was let go
        finally:
            await bot.close()

    run(scenario)


def test_shared_mode_serves_every_seat_of_two_tables_with_one_program(
    server: ServerProcess,
) -> None:
    async def scenario() -> None:
        bot = BridgeBot([*LINE_BOT, "--shared"])
        try:
            seen: set[int] = set()
            original = bot._program

            async def spy(seat: sdk.SeatContext, timeout: float) -> Program:
                program = await original(seat, timeout)
                seen.add(id(program))
                return program

            bot._program = spy  # type: ignore[method-assign]
            results = await play(server, bot, tables=2)
            for played in results:
                assert_over(played)
                assert played.reasons == Counter({"": played.decisions})
            assert bot.mode == "shared" and len(seen) == 1
            shared = bot._first
            assert shared is not None and shared.restarts == 0
        finally:
            await bot.close()
        assert shared._process is not None and shared._process.returncode is not None

    run(scenario)


@pytest.mark.parametrize(
    ("args", "reason"),
    [(["garbage=2"], "garbage"), (["nomove=2"], "garbage"), (["illegal=1"], "illegal")],
)
def test_bad_answers_are_answered_by_a_default(
    server: ServerProcess, misbehaving: Path, args: list[str], reason: str
) -> None:
    bot = BridgeBot([sys.executable, str(misbehaving), *args])
    [played] = run(play_and_close, server, bot)
    assert_over(played)
    # each of the three seats' programs misbehaves once, at its own Nth decision
    assert played.reasons[reason] == 3
    assert played.reasons[""] == played.decisions - 3


def test_an_answer_after_time_left_is_late(server: ServerProcess, misbehaving: Path) -> None:
    bot = BridgeBot([sys.executable, str(misbehaving), "sleep=0.1", "mode=shared"])
    [played] = run(play_and_close, server, bot, time_left=0.01)
    assert_over(played)
    # the late answers are dropped, never taken for a later decision's
    assert set(played.reasons) == {"late"}


def test_a_crashed_program_is_restarted(server: ServerProcess, misbehaving: Path) -> None:
    async def scenario() -> None:
        bot = BridgeBot([sys.executable, str(misbehaving), "crash=10", "mode=shared"])
        try:
            [played] = await play(server, bot, time_left=5.0, pause_after_crash=0.4)
            assert_over(played)
            shared = bot._first
            assert shared is not None
            # dies after every 10th answer; restarted at most once a second, the decisions
            # while it is down are crashed ones; each start answers 10 again
            assert shared.restarts >= 2
            assert set(played.reasons) == {"", "crashed"}
            assert played.reasons[""] >= 10 * shared.restarts
        finally:
            await bot.close()

    start = time.monotonic()
    run(scenario)
    assert time.monotonic() - start < 120


def test_a_bad_hello_is_a_crash(server: ServerProcess, misbehaving: Path) -> None:
    bot = BridgeBot([sys.executable, str(misbehaving), "badhello=1"], hello_seconds=2.0)
    [played] = run(play_and_close, server, bot, time_left=0.3)
    assert_over(played)
    assert set(played.reasons) == {"crashed"}


def test_a_command_that_cannot_start_is_a_crash(server: ServerProcess, tmp_path: Path) -> None:
    bot = BridgeBot([str(tmp_path / "no-such-program")])
    [played] = run(play_and_close, server, bot, time_left=0.2)
    assert_over(played)
    assert set(played.reasons) == {"crashed"}


# -- through the SDK's runner ------------------------------------------------------------


def bot_tables(address: str, count: int, entrant: str, **options: Any) -> list[str]:
    """Dou Dizhu tables whose three seats wait for `entrant` (an outside one, or a level)."""
    client = Client(address)
    try:
        spec = pb.SeatSpec(kind=pb.SEAT_KIND_BOT, entrant=entrant)
        struct = struct_pb2.Struct()
        struct.update(options)
        return [client.create(seats=[spec] * 3, options=struct).table_id for _ in range(count)]
    finally:
        client.close()


def bridge_command(server: ServerProcess, log_file: Path, entrant: str,
                   program: list[str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [*CROUPIER, "bot-bridge", "--entrant", entrant, "--server", server.address,
         "--poll", "0.2", "--log-file", str(log_file), "--log-level", "warning", "--",
         *program],
        cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )


def stop_bridge(bridge: subprocess.Popen[bytes]) -> None:
    bridge.send_signal(signal.SIGTERM)
    _, err = bridge.communicate(timeout=30)
    assert bridge.returncode == 0, err.decode(errors="replace")[-2000:]


def export(address: str, table_id: str) -> pb.GameRecord:
    client = Client(address)
    try:
        return client.stub.ExportRecord(pb.ExportRecordRequest(table_id=table_id), timeout=10)
    finally:
        client.close()


def record_fallbacks(address: str, table_id: str) -> tuple[Counter[str], int]:
    """The finished table's moves by fallback ("" for the bot's own), and its auto moves."""
    record = export(address, table_id)
    return Counter(m.fallback for m in record.moves), sum(m.auto for m in record.moves)


def test_the_command_plays_tables_with_the_line_bot_and_ends_its_programs(
    server: ServerProcess, tmp_path: Path
) -> None:
    log_file = tmp_path / "bridge.jsonl"
    bridge = bridge_command(server, log_file, "line-bot", LINE_BOT)
    try:
        ids = bot_tables(server.address, 2, "line-bot")
        for view in wait_finished(server.address, ids):
            assert view.result.finished and sum(view.result.totals) == 0
            assert all(s.is_bot for s in view.table.seats)
    finally:
        stop_bridge(bridge)
    events = json_lines(log_file)
    started = [e for e in events if e.get("event") == "program_started"]
    ended = [e for e in events if e.get("event") == "program_ended"]
    assert len(started) == 6  # per-seat: one program per seat of the two tables
    assert sorted(e["pid"] for e in ended) == sorted(e["pid"] for e in started)
    assert not [e for e in events if e.get("event") in ("program_crashed", "bad_answer")]
    stderr_lines = [e["line"] for e in events if e.get("event") == "program_stderr"]
    assert any(line.startswith("seat ") and "dou_dizhu" in line for line in stderr_lines)


def test_the_runner_plays_the_default_for_garbage_and_illegal_answers_with_their_reason(
    server: ServerProcess, misbehaving: Path, tmp_path: Path
) -> None:
    log_file = tmp_path / "bridge.jsonl"
    bridge = bridge_command(server, log_file, "bad-answers",
                            [sys.executable, str(misbehaving), "garbage=2", "illegal=3"])
    try:
        [table_id] = bot_tables(server.address, 1, "bad-answers")
        [view] = wait_finished(server.address, [table_id])
        assert view.result.finished
    finally:
        stop_bridge(bridge)
    # each seat's program: garbage at its 2nd decision, an illegal move at its 3rd, which the
    # server refuses; every other decision its own; the record keeps why, and the answer
    fallbacks, auto = record_fallbacks(server.address, table_id)
    assert fallbacks["garbage"] == 3 and fallbacks["illegal"] == 3
    assert set(fallbacks) == {"", "garbage", "illegal"} and auto == 0
    record = export(server.address, table_id)
    rejected = {(m.fallback, m.rejected) for m in record.moves if m.fallback}
    assert rejected == {("garbage", "this is not json"), ("illegal", "no such move")}
    assert not any(m.rejected for m in record.moves if not m.fallback)
    events = json_lines(log_file)
    assert not [e for e in events if e.get("event") == "program_crashed"]
    # the log says what was wrong: not JSON; the refused move and the server's reason
    bad = [e for e in events if e.get("event") == "bad_answer" and e["table"] == table_id]
    assert [e["detail"] for e in bad] == ["the answer is not JSON"] * 3
    refused = [e for e in events if e.get("event") == "move_refused" and e["table"] == table_id]
    assert len(refused) == 3
    assert all(e["move"] == "no such move" and "no such move" in e["reason"] for e in refused)
    # and no other seat, nor a spectator, saw the answer while the table was played
    client = Client(server.address)
    try:
        seen = [str(e) for e in client.stream(table_id, timeout=10)]
    finally:
        client.close()
    assert seen and not any("this is not json" in e for e in seen)
    assert "this is not json" not in server.log_text()


def test_an_outside_entrant_plays_through_the_command(
    server: ServerProcess, tmp_path: Path
) -> None:
    log_file = tmp_path / "bridge.jsonl"
    bridge = bridge_command(server, log_file, "alice", [*LINE_BOT, "--shared"])
    try:
        ids = bot_tables(server.address, 2, "alice")
        for view in wait_finished(server.address, ids):
            assert view.result.finished
            assert [s.entrant for s in view.table.seats] == ["alice"] * 3
    finally:
        stop_bridge(bridge)
    events = json_lines(log_file)
    assert len([e for e in events if e.get("event") == "program_started"]) == 1


def test_a_program_slower_than_the_turn_is_late_and_the_table_goes_on(
    server: ServerProcess, misbehaving: Path, tmp_path: Path
) -> None:
    log_file = tmp_path / "bridge.jsonl"
    # each seat's program sleeps past its time (1.5 s turns less the SDK's 0.3 s margin) at
    # its first decision, then answers at once (the seat's next decision comes after 1.2 s at
    # the earliest, and is answered after the sleep: in time)
    bridge = bridge_command(server, log_file, "slow", [
        sys.executable, str(misbehaving), "sleepat=1", "seconds=1.4"])
    try:
        [table_id] = bot_tables(server.address, 1, "slow", turn_seconds=1.5)
        [view] = wait_finished(server.address, [table_id])
        assert view.result.finished
    finally:
        stop_bridge(bridge)
    # the first answers were given up at the deadline minus the margin and the runner played
    # the default itself, before the server's timer could; the late answers were dropped
    fallbacks, auto = record_fallbacks(server.address, table_id)
    assert fallbacks["late"] == 3 and set(fallbacks) == {"", "late"}
    assert auto == 0
    events = json_lines(log_file)
    decided = [e for e in events if e.get("event") == "decision" and e.get("table") == table_id]
    first: dict[int, str] = {}
    for e in decided:
        first.setdefault(e["seat"], e.get("fallback", ""))
    assert first == {0: "late", 1: "late", 2: "late"}


def test_the_command_wants_a_program(server: ServerProcess) -> None:
    done = subprocess.run([*CROUPIER, "bot-bridge", "--entrant", "alice"], cwd=REPO,
                          capture_output=True, timeout=30)
    assert done.returncode == 2
    assert b"give the program after --" in done.stderr


@pytest.mark.skipif(NODE is None, reason="node is not installed: the Node.js example needs it")
def test_the_runner_plays_two_tables_with_one_shared_node_program(
    server: ServerProcess,
) -> None:
    async def scenario() -> None:
        bot = BridgeBot([*NODE_BOT, "--shared"])
        stop = asyncio.Event()
        runner = asyncio.create_task(
            sdk.serve(bot, server.address, "node-shared", poll=0.2, stop=stop))
        try:
            ids = await asyncio.to_thread(bot_tables, server.address, 2, "node-shared")
            for view in await asyncio.to_thread(wait_finished, server.address, ids):
                assert view.result.finished
            shared = bot._first
        finally:
            stop.set()
            await runner
        assert bot.mode == "shared"
        assert shared is not None and shared.restarts == 0
        # the runner closed the bot when it stopped: the program ended
        assert shared._process is not None and shared._process.returncode is not None

    run(scenario)


def test_the_program_never_sees_the_api_key_and_its_stderr_is_logged_cut(
    server: ServerProcess, misbehaving: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("CROUPIER_API_KEY", "k" * 24)
    bot = BridgeBot([sys.executable, str(misbehaving), "showenv=1", "longerr=1", "mode=shared"])
    [played] = run(play_and_close, server, bot)
    assert_over(played)
    out = capsys.readouterr()
    logged = out.out + out.err
    assert "no api key" in logged
    assert "api key seen" not in logged and "k" * 24 not in logged
    assert "x" * 500 + "…" in logged and "x" * 501 not in logged


@pytest.mark.parametrize("ids", [False, True])
def test_a_late_answer_is_never_taken_for_a_later_decision(
    server: ServerProcess, tmp_path: Path, ids: bool
) -> None:
    """Every 5th decision of each seat's program is answered after its time (1 s turns less
    the SDK's margin), while the seat's next decision is already sent: with ids or without,
    that answer is dropped, and every move the record shows as the program's is the answer
    it wrote for that very decision."""
    program = tmp_path / "late.py"
    program.write_text(LATE_ANSWERS)
    log_file = tmp_path / "bridge.jsonl"
    args = [sys.executable, str(program), "late=1.0", *(["ids=1"] if ids else [])]
    entrant = "late-ids" if ids else "late-no-id"
    bridge = bridge_command(server, log_file, entrant, args)
    try:
        [table_id] = bot_tables(server.address, 1, entrant, turn_seconds=1.0)
        wait_finished(server.address, [table_id], timeout=120)
    finally:
        stop_bridge(bridge)
    events = json_lines(log_file)
    told = [json.loads(e["line"][7:]) for e in events
            if e.get("event") == "program_stderr" and e["line"].startswith("ANSWER ")]
    answers = {(a["seat"], int(a["version"])): a for a in told}
    record = export(server.address, table_id)
    late = [m for m in record.moves if m.fallback == "late"]
    assert late and set(Counter(m.fallback for m in record.moves)) == {"", "late"}
    for move in record.moves:
        answer = answers.get((move.seat, move.version - 1))
        if not move.fallback:
            # the program's own move: the answer it wrote for this decision, never a stale one
            assert answer is not None and not answer["late"], move
            assert move.move == answer["move"], (move, answer)
    dropped = [e for e in events if e.get("event") == "answer_dropped"]
    assert dropped and len(dropped) <= len(late)
    assert all(("too late" in e["why"]) != ids for e in dropped), dropped


def test_submit_move_checks_the_rejected_answer_and_changes_nothing(
    server: ServerProcess,
) -> None:
    """`rejected` goes only with an answered fallback, is bounded and printable; a request
    breaking that is refused with a clear message and moves nothing."""
    client = Client(server.address)
    try:
        table_id = client.seated_table()
        public = client.view(table_id)
        seat = public.to_act[0]
        view = client.view(table_id, seat)
        cases = [("", "x", "only with fallback"), ("late", "x", "only with fallback"),
                 ("illegal", "y" * 201, "at most 200"), ("garbage", "a\nb", "control")]
        for fallback, rejected, said in cases:
            code, details = rpc_code(
                client.stub.SubmitMove,
                pb.SubmitMoveRequest(table_id=table_id, move=view.legal_moves[0],
                                     expected_version=view.version, fallback=fallback,
                                     rejected=rejected),
                metadata=[("authorization", f"Bearer {client.tokens[seat]}")], timeout=10)
            assert code == grpc.StatusCode.INVALID_ARGUMENT and said in details, details
        assert client.view(table_id).version == view.version
        reply = client.stub.SubmitMove(
            pb.SubmitMoveRequest(table_id=table_id, move=view.legal_moves[0],
                                 expected_version=view.version, fallback="illegal",
                                 rejected="y" * 200),
            metadata=[("authorization", f"Bearer {client.tokens[seat]}")], timeout=10)
        assert reply.version == view.version + 1
        assert "y" * 200 not in str(reply)  # not even in the mover's own view
    finally:
        client.close()
