"""Doppelkopf end to end: real `croupier serve` and `croupier bots` processes, a bot-only
table played to the end, and `croupier play doppelkopf` in a pseudo-terminal against bots.
Also the ISMCTS levels on every phase of the game (in-process)."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from croupier.v1 import croupier_pb2 as pb

from bots.levels import get_level
from engines.doppelkopf import GAME
from engines.doppelkopf.game import DECLARATION, PLAYING, RESERVATIONS
from tests.bot_support import (
    Server,
    bot_seats,
    create_table,
    events_to_end,
    stub_for,
)
from tests.doppelkopf_support import new, play
from tests.pty_support import play_in_pty
from tests.support import StructValue


def create(stub, seats: list[pb.SeatSpec], **options: StructValue) -> str:
    return create_table(stub, seats, game="doppelkopf", **options)


@pytest.mark.e2e
@pytest.mark.parametrize(
    "options", [{"deals": 1}, {"deals": 1, "bistro": True}, {"deals": 1, "duel": True}]
)
def test_four_bot_table_is_played_to_the_end(stack: Server, options: dict) -> None:
    channel, stub = stub_for(stack.address)
    with channel:
        table_id = create(stub, bot_seats(4), **options)
        events = events_to_end(stub, table_id, timeout=90)
    end = events[-1]
    assert end.kind == pb.EVENT_KIND_END
    result = end.view.result
    assert result.finished and len(result.totals) == 4 and sum(result.totals) == 0
    moves = [e for e in events if e.kind == pb.EVENT_KIND_MOVE]
    assert {e.seat for e in moves} == {0, 1, 2, 3}
    cards = [e for e in moves if re.fullmatch(r"[ATKQJ9][cshd]", e.move)]
    view = end.view.view.doppelkopf
    if not view.history[0].no_score:  # a duel marriage may end the deal early
        assert len(cards) == (40 if options.get("bistro") else 48)
    # the spectator's final view shows the deal's score, and never a hand
    assert view.hand == "" and len(view.history) == 1


@pytest.mark.e2e
def test_play_doppelkopf_in_a_pty_against_bots(stack: Server, tmp_path: Path) -> None:
    def answer(prompts: int, listed: str) -> str:
        cells = re.findall(r"\d+\) ([^\s)]+(?: [a-z0-9]+)*)", listed)
        if "healthy" in cells:
            return "healthy"
        if "pass" in cells:
            return "pass"  # out of turn: no announcement
        return "1"

    play = play_in_pty(
        stack.address, "doppelkopf", ["--bots", "random", "--option", "deals=1"],
        tmp_path / "play.txt", answer, width=140, max_prompts=300,
    )
    text = play.text
    assert play.exitstatus == 0, text[-3000:]
    assert re.search(r"Your hand \(\d+ cards\): ", text), text[-3000:]
    assert "Game: normal game" in text or "solo" in text or "marriage" in text
    scores = play.final_scores()
    assert [s for s, _ in scores] == ["0", "1", "2", "3"]
    assert sum(v for _, v in scores) == 0
    # another seat declining to announce changes nothing on screen: no line, no new prompt
    assert not re.search(r"^seat [1-3] \(bot\): pass$", text, re.MULTILINE), text[-3000:]
    # the trick's cards once a turn, then what to follow
    for turn in text.split("Your turn")[1:]:
        assert turn.count("On the table") <= 1, turn
    assert "type them so or in the notation (Qc Th 9d): both are accepted" in text
    # each counted item with its points, which add up to the deal's value
    value = int(re.findall(r", value (\d+)", text)[-1])
    [counted] = re.findall(r"^  counted for (?:Re|Kontra): (.+?)\n  seat ", text,
                           re.MULTILINE | re.DOTALL)
    counted = counted.replace("\n", "")  # the terminal wraps a long line
    points = [int(p) * int(times or 1)
              for p, times in re.findall(r" ([+-]\d+)(?: x(\d+))?(?:,|$)", counted)]
    assert points and sum(points) == value, counted


def test_easy_ismcts_picks_legal_moves_in_every_phase() -> None:
    level = get_level("easy")
    rng = random.Random(2)
    s = new({0: "Qc Qc"})
    seen = set()
    steps = 0
    while s.deal_number == 0 and steps < 20:
        acting = sorted(GAME.to_act(s))
        seat = acting[0]
        if s.phase == RESERVATIONS and seat == 0:
            move = GAME.parse_move("reservation")  # reach the declaration phase too
        else:
            move, _ = level.choose(GAME, GAME.view(s, seat), seat, rng)
        assert move in GAME.legal_moves(s, seat)
        seen.add(s.phase)
        s = GAME.apply(s, seat, move)
        steps += 1
    assert {RESERVATIONS, DECLARATION, PLAYING} <= seen


def test_easy_ismcts_copes_with_several_seats_acting() -> None:
    s = play(new({0: "Qc", 2: "Qc"}), "healthy", "healthy", "healthy", "healthy")
    assert len(GAME.to_act(s)) == 4
    level = get_level("easy")
    for seat in range(4):
        move, _ = level.choose(GAME, GAME.view(s, seat), seat, random.Random(seat))
        assert move in GAME.legal_moves(s, seat)
