"""`croupier play` through a pseudo-terminal and `croupier watch`, against real processes;
plus the terminal's formatting helpers."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest
from croupier.v1 import croupier_pb2 as pb
from rich.console import Console

from service import terminal
from tests.bot_support import (
    CROUPIER,
    Server,
    bot_seats,
    child_env,
    create_table,
    events_to_end,
    server_and_bots,
    stub_for,
)
from tests.pty_support import play_in_pty

PROMPT = r"Your move \((?:1|1-\d+) or notation, \? to list\): "


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with server_and_bots(tmp_path_factory.mktemp("terminal_stack"), workers=1) as (server, bots):
        yield server


def run(*argv: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [CROUPIER, *argv], capture_output=True, text=True, timeout=timeout,
        env=child_env(NO_COLOR="1"),
    )


@pytest.mark.e2e
def test_play_a_deal_against_the_bots_in_a_pty(stack: Server, tmp_path: Path) -> None:
    def answer(prompts: int, listed: str) -> str:
        # Alternate between "1" (usually pass) and typing the last listed move in notation
        # (a bid or a real combination), so both ways of answering get exercised.
        cells = re.findall(r"(\d+)\) (bid \d|\S+)", listed)
        if prompts % 2 == 0 and cells:
            move = cells[-1][1]
            return f"={move}" if move.isdigit() else move
        return "1"

    play = play_in_pty(
        stack.address, "dou_dizhu", ["--bots", "easy"], tmp_path / "play.txt", answer,
        malformed="xyz",
    )
    text = play.text
    assert play.exitstatus == 0, text[-3000:]
    assert play.prompts >= 1
    assert "malformed move 'xyz'" in play.refusal and "INVALID_ARGUMENT" in play.refusal
    assert re.search(r"Your hand \(\d+ cards\): [3-9TJQKA2BR ]+", text), text[-3000:]
    assert re.search(r"^seat [12] \(bot\): (pass|bid \d|\S+)\s*$", text, re.MULTILINE)
    assert re.search(r"^seat 0 \(you\): \S+", text, re.MULTILINE)
    assert "Legal moves:" in text
    # Seat 0 may not get to bid (a bid of 3 ends the auction) but always plays a card or a
    # pass, and then sees who the landlord is and the kitty.
    assert re.search(r"Landlord: seat \d \((?:you|bot)\) at bid \d, kitty", text)
    scores = play.final_scores()
    assert [s for s, _ in scores] == ["0", "1", "2"]
    assert sum(v for _, v in scores) == 0
    assert "Winner(s): seat" in text[text.index("Final scores") :]


@pytest.mark.e2e
def test_watch_prints_every_event_to_the_end(stack: Server) -> None:
    channel, stub = stub_for(stack.address)
    with channel:
        table_id = create_table(stub, bot_seats(3))
        watched = run("watch", table_id, "--server", stack.address)
        events = events_to_end(stub, table_id)
    assert watched.returncode == 0, watched.stdout + watched.stderr
    out = watched.stdout
    lines = [line for line in out.splitlines() if line.startswith("[v")]
    assert len(lines) == len(events)
    assert lines[0].startswith("[v1] created")
    assert lines[-1] == f"[v{events[-1].version}] end: match over"
    moves = [e for e in events if e.kind == pb.EVENT_KIND_MOVE]
    for event in moves[:5]:
        assert f"[v{event.version}] move: seat {event.seat} (bot): {event.move}" in out
    assert re.search(r"cards \d+/\d+/\d+", out)  # hand sizes
    assert "Landlord: seat" in out
    totals = events[-1].view.result.totals
    final = out[out.index("Final scores") :]
    for seat, total in enumerate(totals):
        assert f"seat {seat} (bot): {total:+d}" in final


@pytest.mark.e2e
def test_watch_an_unknown_table_fails_clearly(stack: Server) -> None:
    watched = run("watch", "nosuchtable", "--server", stack.address)
    assert watched.returncode == 1
    assert "no table 'nosuchtable'" in watched.stdout


@pytest.mark.e2e
def test_play_an_unknown_game_fails_clearly(stack: Server) -> None:
    played = run("play", "chess", "--server", stack.address)
    assert played.returncode == 1
    assert "unknown game 'chess'" in played.stdout and "dou_dizhu" in played.stdout


@pytest.mark.parametrize("command", ["play", "watch"])
def test_help(command: str) -> None:
    shown = run(command, "--help", timeout=30)
    assert shown.returncode == 0
    assert "--server" in shown.stdout


# --- formatting helpers --------------------------------------------------------------------


def test_hand_is_grouped_by_rank_weakest_first() -> None:
    assert terminal.hand_text("3345TTBR") == "33 4 5 TT B R"
    assert terminal.hand_text("R3T3") == "33 T R"
    assert terminal.hand_text("") == ""
    assert terminal.hand_text("Ah Ks") == "Ah Ks"  # other games: shown as given


def test_moves_are_numbered_in_columns_that_fit() -> None:
    lines = terminal.numbered(["pass", "3", "44", "888+3"], width=40)
    assert lines[0].startswith("  1) pass")
    assert all(len(line) <= 40 for line in lines)
    assert "4) 888+3" in "".join(lines)
    assert terminal.numbered([], 80) == []


def player() -> terminal.Player:
    return terminal.Player(Console(file=open("/dev/null", "w")), None, "t", 0, "tok")  # type: ignore[arg-type]


def test_numbers_pick_from_the_list_and_notation_passes_through() -> None:
    moves = ["pass", "3", "44", "5"]
    p = player()
    assert p.resolve("1", moves) == "pass"
    assert p.resolve("3", moves) == "44"  # a number in range picks by position
    assert p.resolve("=3", moves) == "3"  # '=' forces notation
    assert p.resolve("44", moves) == "44"  # out of range but a legal move: notation
    assert p.resolve("99", moves) is None
    assert p.resolve("888+3", moves) == "888+3"  # the server judges it


def test_seat_labels_say_who_is_who() -> None:
    table = pb.Table(
        seats=[
            pb.SeatInfo(seat=0, kind=pb.SEAT_KIND_HUMAN, occupied=True, name="ann"),
            pb.SeatInfo(seat=1, kind=pb.SEAT_KIND_BOT, occupied=True, is_bot=True, name="b"),
            pb.SeatInfo(seat=2, kind=pb.SEAT_KIND_HUMAN),
        ]
    )
    assert terminal.seat_label(table, 0) == "seat 0 (ann)"
    assert terminal.seat_label(table, 0, me=0) == "seat 0 (you)"
    assert terminal.seat_label(table, 1) == "seat 1 (bot)"
    assert terminal.seat_label(table, 2) == "seat 2"


def test_other_games_views_are_shown_generically() -> None:
    from croupier.v1 import dou_dizhu_pb2

    view = dou_dizhu_pb2.DouDizhuView(
        seat=1, hand="3345", hand_sizes=[3, 4, 5],
        bidding=[dou_dizhu_pb2.DouDizhuAction(seat=1, move="bid 1")],
    )
    lines = terminal.generic_lines(view)
    assert "hand: 3345" in lines and "hand sizes: 3 4 5" in lines
    assert 'bidding: seat: 1 move: "bid 1"' in lines


@pytest.mark.e2e
def test_ctrl_c_gives_the_seat_back(stack: Server) -> None:
    child = pexpect.spawn(
        CROUPIER,
        ["play", "dou_dizhu", "--server", stack.address],
        env=child_env(NO_COLOR="1", TERM="xterm"),
        encoding="utf-8",
        timeout=30,
        dimensions=(50, 120),
    )
    try:
        child.expect(r"table ([0-9a-f]+), you are seat 0")
        table_id = child.match.group(1)
        child.expect(PROMPT)
        child.sendintr()
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 130
    channel, stub = stub_for(stack.address)
    with channel:
        view = stub.GetView(pb.GetViewRequest(table_id=table_id), timeout=5)
    assert not view.table.seats[0].occupied


CHECK_MASKS = """
import os, signal
from service.terminal import connect

def blocked():
    out = {}
    for task in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{task}/status") as f:
            mask = next(line.split()[1] for line in f if line.startswith("SigBlk"))
        out[task] = bool(int(mask, 16) >> (signal.SIGINT - 1) & 1)
    return out

channel, _ = connect("127.0.0.1:1")
masks = blocked()
main = masks.pop(str(os.getpid()))
print(len(masks), all(masks.values()), main)
"""


def test_grpc_threads_leave_ctrl_c_to_the_main_thread() -> None:
    """SIGINT goes to any thread that does not block it: the client's gRPC threads (started
    with its channel, in a fresh process as the CLI is) block it, so Ctrl-C always wakes the
    main thread, even asleep in input()."""
    out = subprocess.run([sys.executable, "-c", CHECK_MASKS], capture_output=True, text=True,
                         env=child_env(), timeout=60, check=True).stdout.split()
    threads, all_blocked, main_blocked = int(out[0]), out[1] == "True", out[2] == "True"
    assert threads > 0 and all_blocked and not main_blocked, out
