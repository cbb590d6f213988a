"""Sobe e Desce end to end: real `croupier serve` and `croupier bots` processes over gRPC, a
bot-only table played to its final scores, and `croupier play sobe_e_desce` in a pty."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from croupier.v1 import croupier_pb2 as pb

from bots.levels import get_level
from engines.sobe_e_desce import GAME
from engines.sobe_e_desce.game import DECIDE, PLAY, TRUMP_PHASE
from tests.bot_support import (
    Server,
    bot_seats,
    create_table,
    events_to_end,
    stub_for,
)
from tests.pty_support import play_in_pty
from tests.support import StructValue

SHORT = {"start_score": 4, "max_deals": 3}



def create(stub, seats: list[pb.SeatSpec], **options: StructValue) -> str:
    return create_table(stub, seats, game="sobe_e_desce", **options)


@pytest.mark.e2e
def test_four_bot_table_plays_to_the_final_settlement(stack: Server) -> None:
    channel, stub = stub_for(stack.address)
    with channel:
        table_id = create(stub, bot_seats(2, "random") + bot_seats(2, "easy"), **SHORT)
        events = events_to_end(stub, table_id, timeout=120)
    end = events[-1]
    assert end.kind == pb.EVENT_KIND_END
    result = end.view.result
    assert result.finished and len(result.totals) == 4 and sum(result.totals) == 0
    assert len(result.winners) == 1
    view = end.view.view.sobe_e_desce
    assert view.winner == result.winners[0] and list(view.settlement) == list(result.totals)
    moves = [e for e in events if e.kind == pb.EVENT_KIND_MOVE]
    assert {e.seat for e in moves} >= {view.history[0].chooser}
    # exchanged cards never reach a spectator
    shown = [e.move for e in moves if e.move.startswith("exchange")]
    assert all(re.fullmatch(r"exchange \d cards?", m) for m in shown), shown


@pytest.mark.e2e
def test_play_sobe_e_desce_against_bots_in_a_pty(stack: Server, tmp_path: Path) -> None:
    def answer(prompts: int, listed: str) -> str:
        cells = re.findall(r"\d+\) ((?:trump \w|exchange [\w ]+?|\w+))(?:\s{2,}|\s*$)",
                           listed, re.MULTILINE)
        if prompts % 2 == 0 and cells:
            return cells[-1].strip()  # in notation
        return "1"

    play = play_in_pty(
        stack.address, "sobe_e_desce",
        ["--bots", "random", "--option", "start_score=3", "--option", "max_deals=2"],
        tmp_path / "play.txt", answer, max_prompts=100,
    )
    text = play.text
    assert play.exitstatus == 0, text[-3000:]
    assert play.prompts >= 1
    assert "Legal moves:" in text
    assert re.search(r"Your hand \(\d cards\): ", text), text[-3000:]
    assert "Scores (first to 0 wins)" in text
    scores = play.final_scores()
    assert [s for s, _ in scores] == ["0", "1", "2", "3"]
    assert sum(v for _, v in scores) == 0
    assert re.search(r"Winners?: seat", text[text.index("Final scores") :])


def test_easy_bots_pick_legal_moves_in_every_phase() -> None:
    level = get_level("easy")
    rng = random.Random(7)
    state = GAME.new_game(4, {"start_score": 6, "max_deals": 2}, seed="levels")
    seen = set()
    while not GAME.is_over(state):
        seat = state.to_act
        move, _ = level.choose(GAME, GAME.view(state, seat), seat, rng)
        assert move in GAME.legal_moves(state, seat)
        seen.add(state.phase)
        state = GAME.apply(state, seat, move)
    assert seen == {TRUMP_PHASE, DECIDE, PLAY}
