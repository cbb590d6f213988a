"""`croupier play` through a pseudo-terminal and `croupier watch`, against real processes;
plus the terminal's formatting helpers."""

from __future__ import annotations

import io
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pexpect
import pytest
from croupier.v1 import croupier_pb2 as pb
from google.protobuf.message import Message
from rich.console import Console

from clients import terminal
from clients.render import renderer_for
from clients.render.dou_dizhu import hand_text
from tests.bot_support import (
    CROUPIER,
    Server,
    bot_seats,
    child_env,
    create_table,
    events_to_end,
    stub_for,
)
from tests.pty_support import PROMPT, play_in_pty
from tests.support import free_port


def run(*argv: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [CROUPIER, *argv], capture_output=True, text=True, timeout=timeout,
        env=child_env(NO_COLOR="1"),
    )


@pytest.mark.e2e
def test_play_a_deal_against_the_bots_in_a_pty(stack: Server, tmp_path: Path) -> None:
    typed_numbers: list[str] = []

    entered = []

    def answer(prompts: int, listed: str) -> str:
        if listed.count(")") == 1:  # a forced move: Enter plays it, as the prompt offers
            entered.append(listed.split(") ", 1)[1].strip())
            return ""
        # Alternate between "#1" (usually pass) and typing the last listed move in notation
        # (a bid or a real combination), so both ways of answering get exercised; a single
        # card that is a number ("5") is typed bare: it is the move, not list entry 5.
        cells = re.findall(r"#(\d+)\) (bid \d|\S+)", listed)
        if prompts % 2 == 0 and cells:
            move = cells[-1][1]
            if move.isdigit():
                typed_numbers.append(move)
            return move
        return "#1"

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
    # a server on another port than the default: the watch command says where
    assert re.search(rf"Others can follow with: croupier watch [0-9a-f]+ --server "
                     rf"{re.escape(stack.address)}\n", text)
    assert "2 easy bots in the other seats" in text
    scores = play.final_scores()
    assert [s for s, _ in scores] == ["0", "1", "2"]
    assert sum(v for _, v in scores) == 0
    assert re.search(r"Winners?: seat", text[text.index("Final scores") :])
    for number in typed_numbers:  # each bare number typed was played as that card
        assert re.search(rf"^seat 0 \(you\): {number}\s*$", text, re.MULTILINE), number
    assert text.count("Refused:") == 1  # the malformed move alone
    # each forced move was offered for Enter, and Enter played it (else no "(you)" line came)
    assert entered, "no forced move in the deal"
    for move in set(entered):
        assert f"Your move (Enter for {move}, #1 or notation, ? to list): " in text


@pytest.mark.e2e
def test_dos_auto_end_ends_the_turn_when_nothing_else_is_left(stack: Server,
                                                              tmp_path: Path) -> None:
    """The server leaves every end of a Dos turn to the player (seeds/dos.md); with
    --auto-end the client plays it when it is all the player may do, and asks otherwise."""
    lists: list[str] = []

    def answer(prompts: int, listed: str) -> str:
        lists.append(listed)
        return "#1"  # a match first, else the draw or the first bonus card

    play = play_in_pty(stack.address, "dos", ["--bots", "heuristic", "--auto-end",
                                              "--option", "target=1"],
                       tmp_path / "dos.txt", answer)
    text = play.text
    assert play.exitstatus == 0, text[-3000:]
    ended = re.findall(r"^seat 0 \(you\): (end(?: dos)?)\s*$", text, re.MULTILINE)
    assert ended and "(--auto-end)" in text, text[-3000:]
    # never asked when the end was all there was to play
    only_end = [x for x in lists if re.findall(r"#\d+\) (.+?)(?=\s+#\d+\)|\s*$)", x)
                in (["end"], ["end", "end dos"])]
    assert not only_end, only_end[:3]


def test_auto_end_is_offered_only_when_the_end_is_all_there_is() -> None:
    from croupier.v1 import dos_pb2

    dos = renderer_for("dos")
    view = dos_pb2.DosView(hand="b7 r3", current=0)
    assert dos.auto_end(view, ["end"]) == "end"
    assert dos.auto_end(view, ["end", "end dos"]) == "end dos"
    assert dos.auto_end(view, ["b7 on r7", "end"]) is None
    assert dos.auto_end(view, ["add b7", "add r3"]) is None and dos.auto_end(view, []) is None
    assert renderer_for("dou_dizhu").auto_end(view, ["pass"]) is None  # Dos alone has one


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
    # nothing is dealt while the table waits for its seats: no game picture yet (it read
    # "deal 1", "Landlord: seat 0 at bid 0"; Doppelkopf's "deal 1 of 0, ; dealer seat 0")
    every = out.splitlines()
    second = next(i for i, line in enumerate(every) if line.startswith("[v2]"))
    assert not [line for line in every[:second] if line.startswith("    ")], every[:second]
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
def test_watch_ends_a_deal_before_it_shows_the_next(stack: Server) -> None:
    channel, stub = stub_for(stack.address)
    with channel:
        table_id = create_table(stub, bot_seats(3), deals=2)
        watched = run("watch", table_id, "--server", stack.address)
    assert watched.returncode == 0, watched.stdout + watched.stderr
    lines = watched.stdout.splitlines()
    over = next(i for i, line in enumerate(lines) if line == "  Deal over:")
    second = next(i for i, line in enumerate(lines) if line.startswith("    deal 2 of 2"))
    # the deal's last move, then its end and scores, then the next deal's picture
    assert lines[over - 1].startswith("[v") and " move: " in lines[over - 1], lines[over - 3 : over + 3]
    assert over < second, lines[second - 3 : over + 3]
    assert "landlord seat" in lines[over + 1]  # what the deal was: landlord, bid


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


@pytest.mark.parametrize("command", [("play", "dou_dizhu"), ("watch", "0123abcd"), ("tables",)])
def test_no_server_answering_is_said_within_seconds(command: tuple[str, ...]) -> None:
    """Not a 15 s wait for DEADLINE_EXCEEDED: a line naming the address and how to start a
    server, about two seconds after the command starts."""
    address = f"127.0.0.1:{free_port()}"
    started = time.monotonic()
    done = run(*command, "--server", address)
    took = time.monotonic() - started
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"no Croupier server answers at {address}: start one" in done.stderr
    assert "make run" in done.stderr and "CROUPIER_SERVER" in done.stderr
    assert took < 8, took


def test_a_port_that_is_not_grpc_is_told_apart_from_no_server() -> None:
    with socket.create_server(("127.0.0.1", 0)) as other:  # accepts, never speaks HTTP/2
        address = f"127.0.0.1:{other.getsockname()[1]}"
        done = run("tables", "--server", address)
    assert done.returncode == 1
    assert f"{address} accepts connections but no gRPC server answers there" in done.stderr


@pytest.mark.e2e
def test_http_server_addresses_are_accepted(stack: Server) -> None:
    """`--server http://host:port` (what people paste) reaches the server as host:port."""
    listed = run("tables", "--server", f"http://{stack.address}/")
    assert listed.returncode == 0, listed.stderr
    channel, stub = stub_for(stack.address)
    with channel:
        table_id = create_table(stub, bot_seats(3), deals=1)
        events_to_end(stub, table_id)
    watched = run("watch", table_id, "--server", f"http://{stack.address}")
    assert watched.returncode == 0, watched.stderr
    assert "end: match over" in watched.stdout


@pytest.mark.parametrize(("server", "said"), [
    ("ftp://127.0.0.1:1", "a server address is HOST:PORT, http://HOST:PORT or https://HOST:PORT"),
    ("http://127.0.0.1:1/api", "a gRPC server address has no path"),
    ("http://127.0.0.1:port", "the port is not a number"),
])
def test_server_addresses_that_are_none_of_the_forms_are_refused(server: str, said: str) -> None:
    done = run("play", "dou_dizhu", "--server", server)
    assert done.returncode == 2
    assert said in done.stderr


@pytest.mark.parametrize("command", ["play", "watch"])
def test_help(command: str) -> None:
    shown = run(command, "--help", timeout=30)
    assert shown.returncode == 0
    assert "--server" in shown.stdout


# --- formatting helpers --------------------------------------------------------------------


def test_hand_is_grouped_by_rank_weakest_first() -> None:
    assert hand_text("3345TTBR") == "33 4 5 TT B R"
    assert hand_text("R3T3") == "33 T R"
    assert hand_text("") == ""
    assert hand_text("Ah Ks") == "Ah Ks"  # other games: shown as given


def test_moves_are_numbered_in_columns_that_fit() -> None:
    lines = terminal.numbered(["pass", "3", "44", "888+3"], width=40)
    assert lines[0].startswith(" #1) pass")
    assert all(len(line) <= 40 for line in lines)
    assert "#4) 888+3" in "".join(lines)
    assert terminal.numbered([], 80) == []


def player(seat: int = 0) -> terminal.Player:
    return terminal.Player(Console(file=io.StringIO()), None, "t", seat, "tok")  # type: ignore[arg-type]


def table_view(game: str, view: Message, legal: list[str], on_turn: list[int],
               to_act: list[int] | None = None, version: int = 7) -> pb.TableView:
    out = pb.TableView(version=version, seat=0, legal_moves=legal, on_turn=on_turn,
                       to_act=on_turn if to_act is None else to_act,
                       table=pb.Table(game=game, status=pb.TABLE_STATUS_PLAYING))
    getattr(out.view, game).CopyFrom(view)
    return out


def test_a_number_that_is_a_legal_move_is_the_move_and_entries_take_a_hash() -> None:
    from croupier.v1 import dou_dizhu_pb2

    view = table_view("dou_dizhu", dou_dizhu_pb2.DouDizhuView(hand="3345"),
                      ["pass", "3", "44", "5"], [0])
    p = player()
    assert p.resolve("5", view) == "5"  # the single 5, never entry 5
    assert p.resolve("3", view) == "3"  # the single 3, not entry 3 ("44")
    assert p.resolve("#3", view) == "44" and p.resolve("#1", view) == "pass"
    assert p.resolve("=3", view) == "3"  # '=' still forces notation
    assert p.resolve("#9", view) is None  # no such entry: said on screen, nothing sent
    assert "no move #9: the list goes from #1 to #4" in p.console.file.getvalue()  # type: ignore[attr-defined]
    assert p.resolve("7", view) == "7"  # a number that is not legal: the server judges it
    assert p.resolve("888+3", view) == "888+3"


def test_in_games_without_number_moves_a_bare_number_picks_from_the_list() -> None:
    from croupier.v1 import doppelkopf_pb2

    hand = "Qc Th Ad 9s"
    view = table_view("doppelkopf", doppelkopf_pb2.DoppelkopfView(
        phase=doppelkopf_pb2.DOPPELKOPF_PHASE_PLAYING, hand=hand, turn=0),
        ["9s", "Ad", "Qc", "Th", "re"], [0], to_act=[0, 1, 2, 3])
    p = player()
    turn, optional = p.split(view)
    assert turn == ["Qc", "Th", "Ad", "9s"]  # as the hand holds them, trumps first
    assert optional == ["re"]  # offered beside the list, not an entry
    assert p.resolve("2", view) == "Th" and p.resolve("#2", view) == "Th"
    assert p.resolve("10♥", view) == "Th"  # as shown
    assert p.resolve("10h", view) == "Th" and p.resolve("th", view) == "Th"  # notation
    assert p.resolve("re", view) == "re"
    assert p.resolve("5", view) is None


def test_optional_moves_are_never_the_turn() -> None:
    from croupier.v1 import doppelkopf_pb2, dos_pb2

    dk = doppelkopf_pb2.DoppelkopfView(phase=doppelkopf_pb2.DOPPELKOPF_PHASE_PLAYING,
                                       hand="Qc Th", turn=2)
    p = player()
    # another seat plays a card: the seat may announce or pass, but the table waits for seat 2
    view = table_view("doppelkopf", dk, ["re", "pass"], [2], to_act=[0, 1, 2, 3])
    assert p.split(view) == ([], ["re", "pass"])
    levels = ["re", "re no 90", "re no 60", "re no 30", "re schwarz", "pass"]
    assert renderer_for("doppelkopf").also(dk, view.table, 0, levels) == (
        "Also: re … re schwarz, pass — type one any time ('pass': none until the trick ends).")
    dos = dos_pb2.DosView(hand="b7 r3", current=0, dos_window=1)
    view = table_view("dos", dos, ["draw", "catch"], [0], to_act=[0, 1])
    assert p.split(view) == (["draw"], ["catch"])
    assert renderer_for("dos").also(dos, view.table, 0, ["catch"]).startswith("Also: catch")


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


def seat_is_open_again(address: str, table_id: str) -> None:
    """The seat the person left is free, and the lobby lists the table as waiting for it."""
    channel, stub = stub_for(address)
    with channel:
        view = stub.GetView(pb.GetViewRequest(table_id=table_id), timeout=5)
        listed = stub.ListTables(pb.ListTablesRequest(game="dou_dizhu", limit=500), timeout=5)
    assert not view.table.seats[0].occupied
    table = next(t for t in listed.tables if t.table_id == table_id)
    assert table.status == pb.TABLE_STATUS_WAITING
    # the bots' seats may still wait for their bot (Ctrl-C before the workers claimed them)
    open_to_people = [s.seat for s in table.seats
                      if not s.occupied and s.kind == pb.SEAT_KIND_HUMAN]
    assert open_to_people == [0]


@pytest.mark.e2e
@pytest.mark.parametrize("how", ["quit", "end of input", "ctrl-c", "ctrl-c while waiting",
                                 "hang-up"])
def test_leaving_gives_the_seat_back(stack: Server, how: str) -> None:
    child = pexpect.spawn(
        CROUPIER,
        ["play", "dou_dizhu", "--bots", "medium", "--server", stack.address],
        env=child_env(NO_COLOR="1", TERM="xterm"),
        encoding="utf-8",
        timeout=30,
        dimensions=(50, 120),
    )
    try:
        child.expect(r"table ([0-9a-f]+), you are seat 0")
        table_id = child.match.group(1)
        if how == "ctrl-c while waiting":  # not at a prompt: following the bots' moves
            child.expect("Type 'quit'")
            child.sendintr()
        else:
            child.expect(PROMPT)
            if how == "quit":
                child.sendline("quit")
            elif how == "end of input":
                child.sendeof()
            elif how == "ctrl-c":
                child.sendintr()
            else:
                child.kill(signal.SIGHUP)
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 130, (how, child.before)
    if how != "hang-up":
        assert "Left the game; your seat is open again." in child.before
    seat_is_open_again(stack.address, table_id)


CHECK_MASKS = """
import os, signal
from clients.terminal import connect

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


# --- Doppelkopf: out-of-turn moves race the typed card ---------------------------------------

# `croupier play doppelkopf` with the three other seats played by this script through the API
# instead of bots: on their turn they play their first legal move and never announce, except
# that just before each new move of the person reaches the server, one of them declines its
# announcement ("pass"), as a bot does while the person types. The person's move then carries
# a version the table has left: the server refuses it ABORTED (logged to argv[1]).
RACING_OTHERS = r"""
import sys, threading, time
import grpc
from croupier.v1 import croupier_pb2 as pb
from clients import terminal

log = open(sys.argv[1], "a")
real_connect = terminal.connect


def connect(*args, **kwargs):
    channel, stub = real_connect(*args, **kwargs)
    create, join, submit, get_view = stub.CreateTable, stub.JoinTable, stub.SubmitMove, stub.GetView
    others = {}
    lock = threading.Lock()
    last = [None]

    def md(seat):
        return others[seat]

    def play_others(table_id):
        while True:
            for seat in others:
                with lock:
                    view = get_view(pb.GetViewRequest(table_id=table_id), metadata=md(seat), timeout=10)
                    if view.result.finished:
                        return
                    if seat in view.on_turn and view.legal_moves:
                        try:
                            submit(pb.SubmitMoveRequest(table_id=table_id, move=view.legal_moves[0],
                                                        expected_version=view.version),
                                   metadata=md(seat), timeout=10)
                        except grpc.RpcError:
                            pass
            time.sleep(0.02)

    def create_humans(request, **kw):
        for spec in request.seats:
            spec.kind, spec.bot_level = pb.SEAT_KIND_HUMAN, ""
        return create(request, **kw)

    def join_all(request, **kw):
        answer = join(request, **kw)
        for seat in (1, 2, 3):
            other = join(pb.JoinTableRequest(table_id=request.table_id, seat=seat, name=f"p{seat}"),
                         timeout=10)
            others[seat] = (("authorization", f"Bearer {other.token}"),)
        threading.Thread(target=play_others, args=(request.table_id,), daemon=True).start()
        return answer

    def racing_submit(request, metadata=None, **kw):
        if request.move != last[0]:  # a new move, not one sent again
            with lock:
                for seat in others:
                    view = get_view(pb.GetViewRequest(table_id=request.table_id), metadata=md(seat),
                                    timeout=10)
                    if seat not in view.on_turn and "pass" in view.legal_moves:
                        submit(pb.SubmitMoveRequest(table_id=request.table_id, move="pass",
                                                    expected_version=view.version),
                               metadata=md(seat), timeout=10)
                        print("raced", request.move, file=log, flush=True)
                        break
        last[0] = request.move
        try:
            return submit(request, metadata=metadata, **kw)
        except grpc.RpcError as error:
            print(error.code().name, request.move, file=log, flush=True)
            raise

    stub.CreateTable, stub.JoinTable, stub.SubmitMove = create_humans, join_all, racing_submit
    return channel, stub


terminal.connect = connect
sys.exit(terminal.play_main(sys.argv[3:]))  # argv[2] is "play"
"""


@pytest.mark.e2e
def test_doppelkopf_card_overtaken_by_a_declined_announcement_is_sent_again(
    stack: Server, tmp_path: Path
) -> None:
    race_log = tmp_path / "race.log"

    def answer(prompts: int, listed: str) -> str:
        return "healthy" if "healthy" in listed else "#1"

    play = play_in_pty(
        stack.address, "doppelkopf", ["--bots", "random", "--option", "deals=1"],
        tmp_path / "play.txt", answer,
        width=140, max_prompts=60, command=[sys.executable, "-c", RACING_OTHERS, str(race_log)],
    )
    text = play.text
    assert play.exitstatus == 0, text[-3000:]
    raced = race_log.read_text().splitlines()
    # the race happened (the first trick at least: every seat may announce before it) ...
    assert any(line.startswith("raced") for line in raced), raced
    assert any(line.startswith("ABORTED") for line in raced), raced
    # ... and the person never saw it: every card went through at the new version
    assert "Refused" not in text and "stale" not in text, text[-3000:]
    # one question per move of the person's own: healthy, then 12 cards; never asked to
    # announce or pass out of turn (those are offered on a line of their own)
    assert play.prompts == 13, text[-3000:]
    assert len(re.findall(r"^seat 0 \(you\): ", text, re.MULTILINE)) == 13
    assert "You may announce now" not in text
    assert re.search(r"^seat 0 \(you\): pass", text, re.MULTILINE) is None
    assert re.search(r"^Also: (re|kontra)\b.* any time", text, re.MULTILINE), text[-3000:]
    # moves shown as the hand shows its cards
    assert re.search(r"Your hand \(\d+ cards?\): .*(?:10|[9JQKA])[♣♠♥♦]", text)
    assert re.search(r"#1\) (?:10|[9JQKA])[♣♠♥♦]", text)


# --- the games' layouts ----------------------------------------------------------------------


def test_counts_agree_with_their_nouns() -> None:
    from croupier.v1 import dos_pb2, dou_dizhu_pb2

    from clients.render import plural

    assert (plural(1, "card"), plural(3, "card"), plural(0, "card")) == ("1 card", "3 cards", "0 cards")
    table = pb.Table(seats=[pb.SeatInfo(seat=s, kind=pb.SEAT_KIND_BOT, is_bot=True, occupied=True)
                            for s in range(3)])
    lines = renderer_for("dou_dizhu").turn(dou_dizhu_pb2.DouDizhuView(hand="3", hand_sizes=[1]),
                                           table, 0)
    assert lines[-1][0] == "Your hand (1 card): 3"
    turn = renderer_for("dos").turn(dos_pb2.DosView(hand="b7", current=0, bonus_owed=1), table, 0)
    assert [t for t, _ in turn] == [
        "Colour bonus: add 1 card from your hand to the row ('add CARD').",
        "Your hand (1 card): b7",
    ]


def test_doppelkopf_moves_read_as_the_hand_does_in_trump_order() -> None:
    from engines.doppelkopf import GAME
    from tests.doppelkopf_support import healthy, new

    s = healthy(new({0: "Qc Th 9s As Ad Jd"}))
    view = GAME.view(s, 0)
    r = renderer_for("doppelkopf")
    moves = [GAME.format_move(m) for m in GAME.legal_moves(s, 0)]
    turn = r.order(view, [m for m in moves if m not in r.optional(view, moves)])
    hand = next(t for t, _ in r.turn(view, pb.Table(), 0) if t.startswith("Your hand"))
    shown = [r.label(view, m) for m in turn]
    # the list is the hand, card for card (without the second copy of a card), trumps first
    assert hand == "Your hand (12 cards): " + " ".join(r.label(view, c) for c in view.hand.split())
    assert shown == list(dict.fromkeys(hand.split(": ")[1].split()))
    assert shown[0] == "10♥"  # the highest trump first
    assert not any(re.fullmatch(r"[9TJQKA][cshd]", m) for m in shown)  # no 'Ts' in the list
    assert r.optional(view, moves) == [m for m in moves if m.startswith(("re", "kontra"))]


def test_sobe_e_desce_shows_suits_as_symbols() -> None:
    from croupier.v1 import sobe_e_desce_pb2

    view = sobe_e_desce_pb2.SobeEDesceView(phase=sobe_e_desce_pb2.SOBE_E_DESCE_PHASE_PLAY,
                                          hand="3c As Kc 2s 7s", trump="s")
    r = renderer_for("sobe_e_desce")
    hand = [t for t, _ in r.turn(view, pb.Table(), 0)][-1]
    assert hand == "Your hand (5 cards): A♠ 7♠ 2♠  K♣ 3♣"
    assert r.order(view, ["3c", "Kc", "2s", "As", "7s"]) == ["As", "7s", "2s", "Kc", "3c"]
    assert r.label(view, "exchange 2c Qd") == "exchange 2♣ Q♦"
    assert r.label(view, "trump c") == "trump c" and r.typed("A♠") == "As"


def test_dos_counts_the_points_left_in_hand_not_cards() -> None:
    from croupier.v1 import dos_pb2

    view = dos_pb2.DosView(history=[dos_pb2.DosRoundScore(winner=0, points=47,
                                                          hand_points=[0, 7, 40])])
    table = pb.Table(seats=[pb.SeatInfo(seat=s, kind=pb.SEAT_KIND_BOT, is_bot=True, occupied=True)
                            for s in range(3)])
    (line,) = renderer_for("dos").deal_over(view, table, None)
    assert line == ("  seat 0 (bot) went out and scores 47 points "
                    "(points in the other hands: seat 1 (bot) 7  seat 2 (bot) 40)")
