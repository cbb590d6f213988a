"""Dos end to end: real `croupier serve` and `croupier bots` processes over gRPC, and
`croupier play dos` in a pseudo-terminal against bots; plus the ISMCTS levels on every phase."""

from __future__ import annotations

import random
import re
import subprocess
from pathlib import Path

import pytest
from croupier.v1 import croupier_pb2 as pb
from croupier.v1 import croupier_pb2_grpc as pb_grpc

from bots.heuristics import get_candidates, get_heuristic
from bots.levels import get_level
from engines.dos import GAME, DosState
from engines.dos.moves import ADD, CALL, CATCH, DRAW, END, END_DOS, MATCH
from tests.bot_support import (
    CROUPIER,
    Server,
    auth,
    bot_seats,
    child_env,
    create_table,
    events_to_end,
    human_seat,
    play_seat,
    stub_for,
)
from tests.dos_support import FILLER, deck_for
from tests.pty_support import play_in_pty
from tests.support import StructValue


def create_dos_table(stub: pb_grpc.CroupierStub, seats: list[pb.SeatSpec], **options: StructValue) -> str:
    return create_table(stub, seats, game="dos", **options)


def assert_finished(events: list[pb.TableEvent], players: int, target: int) -> pb.Result:
    end = events[-1]
    assert end.kind == pb.EVENT_KIND_END
    result = end.view.result
    assert result.finished and len(result.totals) == players
    (winner,) = result.winners
    assert result.totals[winner] >= target
    assert end.view.view.WhichOneof("game") == "dos"
    return result


@pytest.mark.e2e
def test_bot_only_table_plays_to_the_end(stack: Server) -> None:
    channel, stub = stub_for(stack.address)
    seats = [*bot_seats(2, "random"), *bot_seats(1, "heuristic"), *bot_seats(1, "easy")]
    with channel:
        table_id = create_dos_table(stub, seats, target=40)
        events = events_to_end(stub, table_id, timeout=120)
    assert_finished(events, 4, 40)
    moves = [e for e in events if e.kind == pb.EVENT_KIND_MOVE]
    # every seat the table waited for played: a seat may never get a turn, as when the first
    # player goes out at once (7 cards in three matches and a bonus) and that ends the match
    waited_for = {s for e in events if e.kind != pb.EVENT_KIND_END for s in e.view.on_turn}
    assert len(waited_for) >= 2
    assert {e.seat for e in moves} >= waited_for
    for e in moves:  # every move the service logged is in the canonical notation
        assert GAME.format_move(GAME.parse_move(e.move)) == e.move


@pytest.mark.e2e
def test_a_person_and_bots_through_the_api(stack: Server) -> None:
    channel, stub = stub_for(stack.address)
    with channel:
        table_id = create_dos_table(stub, [human_seat(), *bot_seats(1, "heuristic")], target=30,
                                    official_no_match=True)
        joined = stub.JoinTable(pb.JoinTableRequest(table_id=table_id, seat=0, name="tester"))
        final = play_seat(stub, table_id, joined.token, random.Random(5), timeout=120)
        assert final.result.finished
        events = events_to_end(stub, table_id)
    assert_finished(events, 2, 30)


@pytest.mark.e2e
def test_croupier_play_dos_in_a_pty(stack: Server, tmp_path: Path) -> None:
    def answer(prompts: int, listed: str) -> str:
        cells = [c.strip() for c in re.split(r"\s*\b\d+\) ", listed)[1:]]
        if prompts % 3 == 0 and cells:
            return cells[-1]  # the last listed move, typed in notation
        return "1"

    play = play_in_pty(
        stack.address, "dos", ["--bots", "random", "--players", "2", "--option", "target=20"],
        tmp_path / "play.txt", answer, malformed="b7 on b3 on b1", width=160, max_prompts=1500,
    )
    text = play.text
    assert play.exitstatus == 0, text[-3000:]
    assert "malformed move 'b7 on b3 on b1'" in play.refusal
    assert re.search(r"Your hand \(\d+ cards\): ([bgry](?:\d+|#)|w2)", text), text[-3000:]
    assert "Centre row:" in text and "Cards left:" in text
    assert re.search(r"^seat 1 \(bot\): \S+", text, re.MULTILINE)
    assert "Deal over" in text and re.search(r"(went out|turn limit).* and scores \d+", text)
    scores = play.final_scores()
    assert [s for s, _ in scores] == ["0", "1"]
    assert max(v for _, v in scores) >= 20
    assert re.search(r"Winners?: seat", text[text.index("Final scores") :])


@pytest.mark.e2e
def test_croupier_watch_dos_prints_the_row_and_the_scores(stack: Server) -> None:
    channel, stub = stub_for(stack.address)
    with channel:
        table_id = create_dos_table(stub, bot_seats(3, "heuristic"), target=25)
        events = events_to_end(stub, table_id, timeout=120)
    watched = subprocess.run(
        [CROUPIER, "watch", table_id, "--server", stack.address], capture_output=True,
        text=True, timeout=60, env=child_env(NO_COLOR="1"),
    )
    out = watched.stdout
    assert watched.returncode == 0, out + watched.stderr
    assert re.search(r"row \S+.* · cards \d+/\d+/\d+ · pile \d+", out), out[-2000:]
    assert "Centre row:" in out and "first to 25 points wins" in out
    assert "Deal over:" in out
    totals = events[-1].view.result.totals
    final = out[out.index("Final scores"):]
    for seat, total in enumerate(totals):
        assert f"seat {seat} (bot): {total:+d}" in final


def seat_sees(stub: pb_grpc.CroupierStub, table_id: str, token: str,
              after: int) -> tuple[pb.TableEvent, pb.TableView]:
    """The first event after version `after` as the seat's stream brings it, and its view."""
    stream = stub.StreamTable(pb.StreamTableRequest(table_id=table_id, from_version=after),
                              metadata=auth(token), timeout=10)
    event = next(iter(stream))
    stream.cancel()
    return event, stub.GetView(pb.GetViewRequest(table_id=table_id), metadata=auth(token),
                               timeout=10)


def what_is_seen(event: pb.TableEvent, view: pb.TableView) -> tuple[object, ...]:
    """Everything of an event and a view that is not the table's own name."""
    return (event.kind, event.seat, event.move, event.view.view, list(event.view.to_act),
            list(event.view.on_turn), view.view, list(view.to_act), list(view.on_turn),
            list(view.legal_moves))


@pytest.mark.e2e
def test_twin_tables_show_another_seat_the_same_after_the_same_match(stack: Server) -> None:
    """The probe (seeds/dos.md, "End of the turn"): two tables whose decks differ only in seat
    0's hand. After `b7 on r7` seat 0 may still match at one and only end at the other; seat 1
    sees the same event and the same table at both, the turn still seat 0's."""
    hands = {"can match": "b4 b7 b10 r10 y1 y8 y10", "only end": "b4 b7 b10 r10 y1 y4 y10"}
    channel, stub = stub_for(stack.address)
    seen = {}
    with channel:
        for name, hand in hands.items():
            deck = deck_for([hand, FILLER], "r7 y9", "b1 b3")
            table_id = create_dos_table(stub, [human_seat(), human_seat()], deck=deck, dealer=1)
            tokens = [stub.JoinTable(pb.JoinTableRequest(table_id=table_id, seat=seat,
                                                         name=f"twin{seat}")).token
                      for seat in (0, 1)]
            move = stub.SubmitMove(pb.SubmitMoveRequest(table_id=table_id, move="b7 on r7"),
                                   metadata=auth(tokens[0]), timeout=10)
            assert ("y1+y8 on y9" in move.view.legal_moves) == (name == "can match")
            event, view = seat_sees(stub, table_id, tokens[1], move.version - 1)
            assert list(view.on_turn) == [0] and not view.legal_moves, name
            ended = stub.SubmitMove(pb.SubmitMoveRequest(table_id=table_id, move="end"),
                                    metadata=auth(tokens[0]), timeout=10)
            after_end = seat_sees(stub, table_id, tokens[1], ended.version - 1)
            assert list(after_end[1].on_turn) == [1], name
            seen[name] = (what_is_seen(event, view), what_is_seen(*after_end))
    assert seen["can match"][0] == seen["only end"][0]
    assert seen["can match"][1] == seen["only end"][1]


# --- ISMCTS on every phase of a turn ---------------------------------------------------------


def states_by_phase() -> dict[str, tuple[DosState, int]]:
    """One (state, seat) per kind of decision, found along random games."""
    found: dict[str, tuple[DosState, int]] = {}
    rng = random.Random(4)
    for game_no in range(40):
        s = GAME.new_game(3, {"official_no_match": game_no % 2 == 1, "target": 1}, f"ph{game_no}")
        while not GAME.is_over(s) and len(found) < 6:
            for seat in sorted(GAME.to_act(s)):
                kinds = {m.kind for m in GAME.legal_moves(s, seat)}
                if seat != s.current:
                    found.setdefault("window", (s, seat))
                elif s.drew:
                    found.setdefault("after draw", (s, seat))
                elif ADD in kinds:
                    found.setdefault("bonus", (s, seat))
                elif END_DOS in kinds:
                    found.setdefault("two cards", (s, seat))
                elif MATCH in kinds and END in kinds:
                    found.setdefault("more matches", (s, seat))
                elif DRAW in kinds:
                    found.setdefault("turn start", (s, seat))
            seat = rng.choice(sorted(GAME.to_act(s)))
            s = GAME.apply(s, seat, rng.choice(list(GAME.legal_moves(s, seat))))
        if len(found) == 6:
            break
    return found


def test_easy_level_picks_legal_moves_in_every_phase() -> None:
    found = states_by_phase()
    assert set(found) == {"window", "after draw", "bonus", "two cards", "more matches",
                          "turn start"}
    level = get_level("easy")
    rng = random.Random(9)
    for phase, (state, seat) in found.items():
        move, _ = level.choose(GAME, GAME.view(state, seat), seat, rng)
        assert move in GAME.legal_moves(state, seat), phase
        if phase == "window":
            assert move.kind in (CALL, CATCH)
        if phase == "two cards":
            assert move.kind != END  # the candidate filter never forgets the call


def test_heuristic_is_registered_and_catches_at_once() -> None:
    assert get_candidates("dos") is not None
    choose = get_heuristic("dos")
    state, seat = states_by_phase()["window"]
    legal = GAME.legal_moves(state, seat)
    assert choose(GAME, state, seat, legal, random.Random(1)).kind in (CALL, CATCH)
