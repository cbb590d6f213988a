"""Dobro end to end: real `croupier serve` and `croupier bots` processes over gRPC, and
`croupier play dobro` in a pseudo-terminal against bots."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from croupier.v1 import croupier_pb2 as pb

from tests.bot_support import (
    CROUPIER,
    Server,
    bot_seats,
    child_env,
    create_table,
    events_to_end,
    stub_for,
)
from tests.pty_support import play_in_pty
from tests.support import StructValue

pytestmark = pytest.mark.e2e



def create_dobro(stub, seats: list[pb.SeatSpec], **options: StructValue) -> str:
    return create_table(stub, seats, game="dobro", **options)


def check_finished(events: list[pb.TableEvent], players: int) -> pb.Result:
    end = events[-1]
    assert end.kind == pb.EVENT_KIND_END
    result = end.view.result
    assert result.finished and len(result.totals) == players
    assert all(t < 0 for t in result.totals)  # penalty points, negated
    assert list(result.winners)
    moves = [e for e in events if e.kind == pb.EVENT_KIND_MOVE]
    assert moves
    # Every move event carries the table's announcement of what the move did.
    assert all(e.view.view.dobro.announcement for e in moves)
    return result


def test_a_bot_only_table_plays_to_the_end(stack: Server) -> None:
    channel, stub = stub_for(stack.address)
    with channel:
        seats = [*bot_seats(2, "random"), *bot_seats(1, "heuristic"), *bot_seats(1, "easy")]
        table_id = create_dobro(stub, seats, rounds=1)
        events = events_to_end(stub, table_id, timeout=120)
    result = check_finished(events, 4)
    assert result.deals_played == 1
    assert {e.seat for e in events if e.kind == pb.EVENT_KIND_MOVE} == {0, 1, 2, 3}
    values = [e.view.view.dobro.announcement for e in events if e.kind == pb.EVENT_KIND_MOVE]
    assert any("The value is now" in a for a in values)
    assert any(e.deal_over for e in events)
    # A spectator following the finished table reads each move with its announcement.
    watched = subprocess.run(
        [CROUPIER, "watch", table_id, "--server", stack.address], capture_output=True, text=True,
        timeout=60, env=child_env(NO_COLOR="1"),
    )
    assert watched.returncode == 0, watched.stdout + watched.stderr
    out = watched.stdout
    assert "The value is now" in out and "Cards collected this round:" in out
    assert "Deal over:" in out
    final = out[out.index("Final scores"):]
    for seat, total in enumerate(result.totals):
        assert f"seat {seat} (bot): {total:+d}" in final


def test_manual_draw_with_calls_plays_to_the_end(stack: Server) -> None:
    """Random bots forget to draw; the other bot seats, all to act at once, call it."""
    channel, stub = stub_for(stack.address)
    with channel:
        table_id = create_dobro(stub, bot_seats(3, "random"), rounds=1, manual_draw=True)
        events = events_to_end(stub, table_id, timeout=120)
    check_finished(events, 3)
    moves = [e.move for e in events if e.kind == pb.EVENT_KIND_MOVE]
    assert "draw" in moves and "end" in moves
    assert any(m.startswith("call ") for m in moves), "nobody called a forgetting"


def test_croupier_play_dobro_in_a_pty(stack: Server, tmp_path: Path) -> None:
    def answer(prompts: int, listed: str) -> str:
        cells = re.findall(r"#(\d+)\) (\S+)", listed)
        if prompts % 2 == 0 and cells:
            return cells[-1][1]  # in notation: a number is the card, not an entry
        return "#1"

    shown = tmp_path / "play.txt"
    play = play_in_pty(
        stack.address, "dobro",
        ["--bots", "random", "--players", "3", "--option", "rounds=1"],
        shown, answer, malformed="J:13", max_prompts=400,  # no such value: refused
    )
    text = play.text
    assert shown.stat().st_size > 0
    assert play.exitstatus == 0, text[-3000:]
    assert play.prompts >= 1
    assert "malformed move 'J:13'" in play.refusal and "INVALID_ARGUMENT" in play.refusal
    assert re.search(r"Your hand \(\d+ cards\): [0-9JSR ]+", text), text[-3000:]
    assert "Legal moves:" in text
    assert re.search(r"^seat [12] \(bot\): \S+", text, re.MULTILINE)
    assert re.search(r"^seat 0 \(you\): \S+", text, re.MULTILINE)
    assert re.search(r"Value in play: \d+ \(\d+ card|You open the auction", text)
    scores = play.final_scores()
    assert [s for s, _ in scores] == ["0", "1", "2"]
    assert all(v < 0 for _, v in scores)
    assert re.search(r"Winners?: seat", text[text.index("Final scores") :])
