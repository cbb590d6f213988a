"""The Doppelkopf reservation benchmark: every reservation of a hand, played out."""

from __future__ import annotations

import random

from bench.doppelkopf_reservations import (
    deal_values,
    main,
    play_out,
    report,
)
from engines.doppelkopf import Move
from engines.doppelkopf.cards import CLUB_QUEEN, count
from engines.doppelkopf.moves import solo_moves
from tests.doppelkopf_support import new

QUEENS = "Qc Qc Ac As Ah Th Kd Kd 9c Kh Ks Js"  # both club queens, no solo worth playing


def test_a_named_solo_is_played_and_scored_for_its_seat_times_three() -> None:
    s = new({0: QUEENS}, deals=1)
    points, played = play_out(s, 0, Move("solo jacks"), random.Random(0))
    assert played
    assert points % 3 == 0 and points != 0


def test_a_solo_named_earlier_in_seat_order_takes_precedence() -> None:
    # seat 0 holds a solo the heuristic plays; seat 1's own solo then is not played
    s = new({0: "Th Th Qc Qc Qs Qs Qh Qh Jc Ad Td Kd", 1: "Jd Jd Ac As Ah Kc Kh Kh 9c Ks Ks Js"}, deals=1)
    _, played = play_out(s, 1, Move("solo aces"), random.Random(0))
    assert not played


def test_every_seat_gets_healthy_every_solo_and_the_marriage_with_both_queens() -> None:
    _, seats = deal_values(({"deals": 1, "bistro": False}, "t", 3))
    assert len(seats) == 4
    for seat in seats:
        names = set(seat["values"])
        assert {"healthy", "solo diamonds", "solo aces"} <= names
        assert ("marriage" in names) == (count(seat["hand"], CLUB_QUEEN) == 2)
    assert "solo pure clubs" not in seats[0]["values"]  # Bistro's solos only in Bistro


def test_the_heuristics_rule_is_the_zero_of_the_table(tmp_path, capsys) -> None:
    results = tmp_path / "r.jsonl"
    main(["--deals", "6", "--jobs", "1", "--results", str(results)])
    out = capsys.readouterr().out
    assert "24 hands (6 deals)" in out
    ours = next(line for line in out.splitlines() if line.startswith("| the heuristic's rule"))
    assert "| +0.000 | [+0.000, +0.000] |" in ours
    assert len(results.read_text().splitlines()) == 6
    main(["--deals", "6", "--jobs", "1", "--results", str(results)])  # resumed: nothing new
    assert len(results.read_text().splitlines()) == 6


def test_report_counts_only_solos_that_were_played() -> None:
    values = {str(m): [-9, False] for m in solo_moves(False)}
    hand = {"hand": 0, "values": {"healthy": [1, True], **values}}
    rows = [{"deal": d, "seats": [hand] * 4} for d in range(30)]
    lines = report(rows, {"deals": 1})
    assert not any(line.startswith("| solo diamonds") for line in lines)
