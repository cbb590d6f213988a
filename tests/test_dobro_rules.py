"""Dobro rules, scenario by scenario, from fixed decks (seeds/dobro.md section by section)."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engines.contract import IllegalMove
from engines.dobro import GAME, Move, parse_move
from engines.dobro.cards import cards_text, full_deck, parse_cards, size
from engines.dobro.game import OVER, Action
from engines.dobro.moves import PASS_M, PLAYS
from engines.dobro.scoring import match_winners, next_opener, rank_points, round_points
from tests.dobro_support import by, deck, legal, new, play, with_hand

# --- the deal --------------------------------------------------------------------------


@pytest.mark.parametrize(("players", "hand", "pile", "aside"), [
    (2, 6, 33, 10), (3, 6, 39, 0), (4, 6, 33, 0), (5, 6, 27, 0), (6, 5, 27, 0),
])
def test_hands_pile_and_set_aside_cards(players: int, hand: int, pile: int, aside: int) -> None:
    s = GAME.new_game(players, {}, "deal")
    v = GAME.view(s, 0)
    assert list(v.hand_sizes) == [hand] * players
    assert v.draw_pile == pile and v.set_aside == aside
    census = GAME.census(s)
    assert census["J"] == 3 and census["S"] == 2 and census["2"] == 5 and census["12"] == 3
    assert census["R"] == (0 if players == 2 else 2)  # two players: no reverse cards
    assert sum(census.values()) == (55 if players == 2 else 57)


def test_the_deck_option_deals_hands_in_seat_order_and_keeps_the_pile_order() -> None:
    s = new(3, ["2 2 3 3 4 4", "5 5 6 6 7 7", "8 8 9 9 10 10"], pile="12 11 J")
    assert [cards_text(h) for h in s.hands] == ["2 2 3 3 4 4", "5 5 6 6 7 7", "8 8 9 9 10 10"]
    assert s.pile[s.pos:s.pos + 3] == (10, 9, 11)  # 12, 11, joker: top first


def test_the_first_opener_comes_from_the_seed_or_the_option() -> None:
    openers = {GAME.new_game(4, {}, f"seed{i}").turn for i in range(40)}
    assert openers == {0, 1, 2, 3}
    assert GAME.new_game(4, {"opener": 2}, "x").turn == 2
    assert GAME.new_game(4, {}, "same").turn == GAME.new_game(4, {}, "same").turn


@pytest.mark.parametrize(("options", "match"), [
    ({"rounds": -1}, "at least 0"),
    ({"rounds": "3"}, "integer"),
    ({"manual_draw": 1}, "true or false"),
    ({"opener": 4}, "seat of the table"),
    ({"deck": "2 3 4"}, "must list its 57 cards"),
    ({"deck": "2 x"}, "not a card"),
    ({"colour": 1}, "unknown option"),
])
def test_bad_options_are_refused_clearly(options: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        GAME.new_game(4, options, "s")


@pytest.mark.parametrize("players", [1, 7])
def test_two_to_six_players(players: int) -> None:
    with pytest.raises(ValueError, match="2 to 6 players"):
        GAME.new_game(players, {}, "s")


def test_two_player_deck_has_no_reverse_card() -> None:
    with pytest.raises(ValueError, match="R: 2 instead of 0"):
        GAME.new_game(2, {"deck": deck(3, ["2 2 2 2 2 3", "3 3 3 3 3 4", "4 4 4 4 4 5"])}, "s")


# --- opening an auction ----------------------------------------------------------------

HANDS4 = ["9 2 2 3 3 4", "9 4 4 5 5 6", "J J 6 7 7 7", "8 2 3 5 6 6"]


def test_the_opener_plays_a_card_or_a_pair_and_may_not_pass() -> None:
    s = new(4, HANDS4, opener=3)
    moves = legal(s)
    assert "pass" not in moves
    assert {"8", "2", "3", "5", "6", "66"} <= set(moves)
    with pytest.raises(IllegalMove, match="opener may not pass"):
        play(s, "pass")
    s = play(s, "66")
    assert s.value == 12 and s.turn == 0


def test_an_opener_with_numbered_cards_may_not_open_with_a_special_card() -> None:
    s = new(3, ["S 2 3 4 5 6", "7 7 8 8 9 9", "2 3 4 5 6 7"])
    assert "skip" not in legal(s)
    with pytest.raises(IllegalMove, match="only from a hand of special cards"):
        play(s, "skip")


def test_an_opener_holding_only_special_cards_opens_with_one_at_value_zero() -> None:
    s = new(3, ["9 2 2 3 3 4", "7 7 8 8 9 2", "2 3 4 5 6 7"])
    s = with_hand(s, 0, "S S R R")
    assert legal(s) == ["skip", "reverse"]
    after = play(s, "skip")
    assert after.value == 0 and after.turn == 1
    assert "2" in legal(after) and "pass" in legal(after)  # any card or pair may follow
    assert GAME.view(after, 2).min_specials[0] == 3  # the rest of its hand was special
    assert GAME.view(after, 2).announcement == "Skip: any card or pair may follow."
    assert play(after, "2").value == 2
    assert play(after, "77").value == 14


# --- beating and doubling --------------------------------------------------------------


def test_the_seeds_auction_8_9_9_jokers_as_10_then_a_pass() -> None:
    # D (seat 3) holds two 12s besides the 8: at 20 it could play them (24) but passes
    s = new(4, ["9 2 2 3 3 4", "9 4 4 5 5 6", "J J 6 7 7 7", "8 12 12 3 5 6"], pile="4",
            opener=3)
    s = play(s, "8")
    assert s.value == 8
    s = play(s, "9")
    assert s.value == 9 and GAME.view(s, None).announcement == "The value is now 9."
    s = play(s, "9")
    assert s.value == 18 and s.last is not None and s.last.dobro
    assert GAME.view(s, None).announcement == "Dobro! The value is now 18."
    s = play(s, "JJ:10")
    assert s.value == 20
    assert "Two jokers as 10s" in GAME.view(s, 0).announcement
    assert s.turn == 3 and "pass" in legal(s)
    assert "1212" in legal(s)  # D could play: two 12s make 24, at least the 20 in play
    s = play(s, "pass")
    assert cards_text(s.collected[3]) == "8 9 9 J J"
    assert cards_text(s.hands[3]) == "3 4 5 6 12 12"  # kept (and the 4 drawn after the 8)
    assert s.turn == 3 and s.value == 0 and not s.auction  # the passer opens the next auction
    assert GAME.view(s, 1).announcement == "Passes and takes 5 card(s); opens the next auction."
    assert "pass" not in legal(s)


def test_the_seeds_seven_doubled_to_fourteen() -> None:
    s = new(3, ["7 2 2 3 3 4", "7 4 4 5 5 6", "8 8 6 7 9 9"])
    s = play(s, "7", "7")
    assert s.value == 14 and s.last is not None and s.last.dobro


def test_the_seeds_pair_of_sixes_on_twelve() -> None:
    s = new(3, ["12 2 2 3 3 4", "6 6 4 5 5 3", "8 8 6 7 9 9"])
    s = play(s, "12", "66")
    assert s.value == 24 and s.last is not None and s.last.dobro


def test_a_play_must_reach_the_value_and_beating_it_sets_it() -> None:
    s = new(3, ["9 2 2 3 3 4", "8 4 4 5 5 10", "8 8 6 7 9 9"])
    s = play(s, "9")
    assert "8" not in legal(s) and "10" in legal(s) and "44" not in legal(s) and "55" in legal(s)
    with pytest.raises(IllegalMove, match="makes 8, less than the value in play 9"):
        play(s, "8")
    after = play(s, "55")
    assert after.value == 10 and after.last is not None and not after.last.dobro
    after = play(s, "10")
    assert after.value == 10


def test_a_card_not_in_hand_is_refused_and_nothing_changes() -> None:
    s = new(3, ["9 2 2 3 3 4", "8 4 4 5 5 10", "8 8 6 7 9 9"])
    data = GAME.encode(s)
    with pytest.raises(IllegalMove, match="does not hold a 12"):
        play(s, "12")
    with pytest.raises(IllegalMove, match="does not hold two 9s"):
        play(s, "99")
    with pytest.raises(IllegalMove, match="seat 0's turn"):
        by(s, 1, "8")
    assert GAME.encode(s) == data


def test_a_value_beyond_every_pair_leaves_special_cards_or_a_pass() -> None:
    s = new(3, ["12 12 2 3 3 4", "12 J 4 5 S 10", "8 8 6 7 9 9"])
    s = play(s, "1212")
    s = play(s, "J+12")
    assert s.value == 48
    assert legal(s) == ["pass"]


# --- jokers ----------------------------------------------------------------------------


def test_a_joker_alone_takes_a_declared_value_and_can_double() -> None:
    s = new(3, ["7 2 2 3 3 4", "J 4 4 5 5 6", "8 8 6 7 9 9"])
    s = play(s, "7")
    moves = legal(s)
    assert [m for m in moves if m.startswith("J:")] == [f"J:{v}" for v in range(7, 13)]
    assert play(s, "J:7").value == 14
    assert play(s, "J:11").value == 11
    with pytest.raises(IllegalMove, match="makes 6"):
        play(s, "J:6")


def test_a_joker_with_a_card_is_a_pair_of_that_card() -> None:
    s = new(3, ["8 2 2 3 3 4", "J 8 4 5 5 6", "8 8 6 7 9 9"])
    s = play(s, "8")
    after = play(s, "J+8")
    assert after.value == 16 and cards_text(after.auction_cards) == "8 8 J"
    assert "Joker with a 8: a pair of 8s" in GAME.view(after, 0).announcement
    assert play(s, "J+4").value == 8 * 2  # 4+4 = 8 equals the value: dobro


def test_two_jokers_take_one_declared_value() -> None:
    s = new(3, ["10 2 2 3 3 4", "J J 4 5 5 6", "8 8 6 7 9 9"])
    s = play(s, "10")
    moves = legal(s)
    assert [m for m in moves if m.startswith("JJ:")] == [f"JJ:{v}" for v in range(5, 13)]
    assert play(s, "JJ:5").value == 20  # 5+5 = 10: dobro
    assert play(s, "JJ:12").value == 24


# --- special cards ---------------------------------------------------------------------


def test_skip_keeps_the_value_for_the_next_player() -> None:
    s = new(3, ["9 2 2 3 3 4", "S 4 4 5 5 6", "8 8 6 7 9 10"])
    s = play(s, "9", "skip")
    assert s.value == 9 and s.turn == 2 and s.direction == 1
    assert GAME.view(s, 0).announcement == "Skip: the value stays 9."
    s = play(s, "9")
    assert s.value == 18  # the 9 equals the value the skip left: dobro


def test_reverse_turns_the_direction_and_keeps_the_value() -> None:
    s = new(4, ["9 2 2 3 3 4", "R 4 4 5 5 6", "8 8 6 7 9 10", "2 3 4 5 6 7"])
    s = play(s, "9", "reverse")
    assert s.value == 9 and s.direction == -1 and s.turn == 0
    s = play(s, "pass")
    assert cards_text(s.collected[0]) == "9 R"  # the special card is collected too
    s = play(s, "2")
    assert s.turn == 3  # play goes the other way


def test_the_passer_takes_every_card_of_the_auction_specials_included() -> None:
    s = new(3, ["9 2 2 3 3 4", "S 4 4 5 5 6", "8 8 6 7 9 10"])
    s = play(s, "9", "skip", "10", "pass")
    assert cards_text(s.collected[0]) == "9 10 S"
    assert [size(h) for h in s.hands] == [6, 6, 6]
    assert s.turn == 0


# --- refills and the round's end -------------------------------------------------------


def test_the_player_refills_to_six_after_playing() -> None:
    s = new(3, ["9 2 2 3 3 4", "S 4 4 5 5 6", "8 8 6 7 9 10"], pile="12 11 10")
    s = play(s, "22")
    assert cards_text(s.hands[0]) == "3 3 4 9 11 12" and GAME.view(s, 0).draw_pile == 37


def _empty_pile(s, to: int = 0):
    """The state with its draw pile moved into seat `to`'s score pile (cards conserved)."""
    s = s.copy()
    moved = sum(1 << (4 * k) for k in s.pile[s.pos:])
    s.collected = tuple(c + (moved if i == to else 0) for i, c in enumerate(s.collected))
    s.pile, s.pos = (), 0
    return s


def test_without_a_draw_pile_hands_shrink_and_the_last_card_ends_the_round() -> None:
    s = new(3, ["9 2 2 3 3 4", "10 4 4 5 5 6", "8 8 6 7 9 10"])
    s = _empty_pile(s, to=2)
    s = play(s, "9", "10")
    assert [size(h) for h in s.hands] == [5, 5, 6]
    # Give seat 2 a one-card hand: it passes, takes the 9 and the 10, and leads its last card.
    t = with_hand(s, 2, "12")
    assert size(t.collected[2]) == 39 + 6 - 1  # the pile and its old hand, less the 12 it holds
    t = play(t, "pass", "12")
    assert t.round == 1 and len(t.history) == 1
    r = t.history[0]
    assert r.ender == 2 and r.collected == (0, 0, 46)
    assert r.points == (1, 1, 3)
    assert "the round is over" in GAME.view(t, 1).announcement
    assert t.turn == 2 and t.round_opener == 2  # most points opens the next round
    assert [size(h) for h in t.hands] == [6, 6, 6] and sum(size(c) for c in t.collected) == 0


def test_ranking_points_share_ties_and_skip_ranks() -> None:
    assert rank_points((3, 3, 7, 9)) == (1, 1, 3, 4)  # the seed's four-player example
    assert rank_points((5, 2, 5, 5)) == (2, 1, 2, 2)
    assert rank_points((0, 0)) == (1, 1)
    assert round_points((3, 3, 7, 9), oubli=2) == (1, 1, 4, 4)
    assert round_points((3, 3, 7, 9), oubli=-1) == (1, 1, 3, 4)


def test_the_next_opener_has_the_most_points_ties_nearest_from_the_ender() -> None:
    assert next_opener((1, 3, 2), ender=0, direction=1) == 1
    assert next_opener((3, 1, 3, 3), ender=1, direction=1) == 2
    assert next_opener((3, 1, 3, 3), ender=1, direction=-1) == 0
    assert next_opener((3, 1, 3, 3), ender=2, direction=-1) == 2  # the ender itself first


def test_the_direction_is_kept_into_the_next_round() -> None:
    s = new(3, ["9 2 2 3 3 4", "R 4 4 5 5 6", "8 8 6 7 9 10"])
    s = _empty_pile(s, to=2)
    s = play(s, "9", "reverse")
    t = with_hand(s, 0, "12")
    t = play(t, "12")
    assert t.round == 1 and t.direction == -1
    assert t.turn == 2  # seat 2 (all the pile) has the most points


# --- the match -------------------------------------------------------------------------


def _finish_round_quickly(s, rng: random.Random):
    round_ = s.round
    while s.stage != OVER and s.round == round_:
        seat = min(GAME.to_act(s))
        moves = GAME.legal_moves(s, seat)
        s = GAME.apply(s, seat, moves[rng.randrange(len(moves))])
    return s


@pytest.mark.parametrize(("options", "rounds"), [({}, 3), ({"rounds": 0}, 5), ({"rounds": 1}, 1)])
def test_three_rounds_or_as_many_as_players(options: dict, rounds: int) -> None:
    s = GAME.new_game(5, options, "match")
    rng = random.Random(3)
    seen = 0
    while s.stage != OVER:
        s = _finish_round_quickly(s, rng)
        seen += 1
    assert seen == rounds and len(s.history) == rounds
    res = GAME.result(s)
    assert res.finished and res.deals_played == rounds
    totals = [sum(r.points[p] for r in s.history) for p in range(5)]
    assert list(res.totals) == [-t for t in totals]  # penalty points, negated: higher is better
    assert list(res.last_deal) == [-p for p in s.history[-1].points]
    assert set(res.winners) == set(match_winners(totals, s.history[-1].collected))
    assert not GAME.to_act(s) and GAME.legal_moves(s, 0) == ()
    with pytest.raises(IllegalMove, match="over"):
        GAME.apply(s, 0, PASS_M)


def test_winners_lowest_total_then_fewest_cards_last_round_then_shared() -> None:
    assert match_winners((6, 7, 9), (5, 0, 0)) == (0,)
    assert match_winners((6, 6, 9), (5, 3, 0)) == (1,)
    assert match_winners((6, 6, 9), (3, 3, 0)) == (0, 1)


# --- the Oubli card (manual_draw) ------------------------------------------------------

MANUAL = ["9 2 2 3 3 4", "10 4 4 5 5 6", "8 8 6 7 9 11"]


def test_manual_draw_splits_the_turn_into_play_draw_and_end() -> None:
    s = new(3, MANUAL, pile="12 11", manual_draw=True)
    s = play(s, "9")
    assert s.turn == 0 and legal(s) == ["draw", "end"]
    with pytest.raises(IllegalMove, match="draw"):
        play(s, "10")
    s = play(s, "draw")
    assert cards_text(s.hands[0]) == "2 2 3 3 4 12" and legal(s) == ["end"]
    assert GAME.view(s, 1).announcement == "Draws 1 card(s)."
    s = play(s, "end")
    assert s.turn == 1 and not s.forgetters


def test_a_forgetting_may_be_called_by_any_other_player_until_the_forgetter_acts() -> None:
    s = new(3, MANUAL, pile="12 11 10", manual_draw=True)
    s = play(s, "9", "end")  # seat 0 ends its turn with five cards: a forgetting
    assert s.forgetters == (0,)
    assert GAME.to_act(s) == {0, 1, 2} - {0} | {1}  # seats 1 (its turn) and 2 (may call)
    assert "call 0" in legal(s, 1) and legal(s, 2) == ["call 0"]
    assert legal(s, 0) == []
    with pytest.raises(IllegalMove, match="own forgetting"):
        by(s, 0, "call 0")
    assert "forgetting" in GAME.view(s, 2).announcement
    called = by(s, 2, "call 0")
    assert called.oubli == 0 and size(called.hands[0]) == 6 and not called.forgetters
    assert called.turn == 1  # the call does not change whose turn it is
    assert "takes the Oubli card" in GAME.view(called, 1).announcement
    # Once the forgetful seat acts again, the call is gone.
    later = play(s, "10", "draw", "end", "11", "draw", "end")  # then it is seat 0's turn
    later = play(later, "pass")  # seat 0 acts
    assert not later.forgetters
    with pytest.raises(IllegalMove, match="no forgetting to call"):
        by(later, 2, "call 0")


@pytest.mark.parametrize("seat", [3, 5, -1, -3, 2**31 - 1])
def test_a_seat_not_at_the_table_may_not_call_a_forgetting(seat: int) -> None:
    s = new(3, MANUAL, pile="12 11 10", manual_draw=True)
    s = play(s, "9", "end")  # seat 0's forgetting: seats 1 and 2 may call it
    assert legal(s, seat) == []
    before = GAME.encode(s)
    for text in ("call 0", "call 1", "pass", "10"):
        with pytest.raises(IllegalMove, match=f"no seat {seat} at this 3-player table"):
            by(s, seat, text)
    assert GAME.encode(s) == before and s.forgetters == (0,)


def test_the_oubli_card_moves_to_the_next_forgetter_and_scores_a_point() -> None:
    s = new(3, MANUAL, pile="12 11 10 9 8", manual_draw=True)
    s = play(s, "9", "end")
    s = by(s, 2, "call 0")
    assert s.oubli == 0
    s = play(s, "10", "end")  # seat 1 forgets too
    s = by(s, 0, "call 1")
    assert s.oubli == 1
    # The holder of the Oubli card adds a point to its rank points at the round's end.
    t = with_hand(_empty_pile(s, to=2), 2, "11")
    assert t.turn == 2
    t = play(t, "11")
    r = t.history[0]
    assert r.oubli == 1 and r.points[1] == 1 + 1
    assert t.oubli == -1  # back to the centre for the next round


def test_no_oubli_card_once_the_draw_pile_is_empty() -> None:
    s = new(3, MANUAL, pile="12", manual_draw=True)
    s = _empty_pile(s, to=2)
    s = play(s, "9")
    assert s.turn == 1 and s.stage == 1  # no draw, no forgetting: the turn just passes
    s = new(3, MANUAL, pile="12 11", manual_draw=True)
    s = s.copy()
    s.collected = (0, 0, sum(1 << (4 * k) for k in s.pile[1:]))
    s.pile, s.pos = s.pile[:1], 0
    s = play(s, "9", "end")  # forgets with one card still to draw
    assert s.forgetters == (0,)
    s = play(s, "10", "draw")  # seat 1 draws the last card: the forgetting can no longer be called
    assert not s.forgetters and legal(s, 2) == []


def test_an_empty_hand_must_draw_before_ending_the_turn() -> None:
    s = new(3, MANUAL, pile="12 11", manual_draw=True)
    t = play(with_hand(s, 0, "9"), "9")
    assert legal(t) == ["draw"]
    with pytest.raises(IllegalMove, match="hand is empty"):
        play(t, "end")


def test_automatic_refills_offer_no_draw_end_or_call() -> None:
    s = new(3, MANUAL, pile="12 11")
    s = play(s, "9")
    assert s.turn == 1 and "draw" not in legal(s)
    with pytest.raises(IllegalMove, match="manual_draw is off"):
        by(s, 2, "call 0")


# --- notation --------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "canonical"), [
    ("9", "9"), ("12", "12"), ("66", "66"), ("1010", "1010"), ("10+10", "1010"), ("10 10", "1010"),
    ("6+6", "66"), ("22", "22"), ("J:10", "J:10"), ("j:7", "J:7"), ("J+8", "J+8"), ("8+J", "J+8"),
    ("j 8", "J+8"), ("JJ:10", "JJ:10"), ("jj : 3", "JJ:3"), ("skip", "skip"), ("S", "skip"),
    ("Reverse", "reverse"), ("R", "reverse"), ("PASS", "pass"), ("draw", "draw"), ("end", "end"),
    ("call 2", "call 2"), ("call2", "call 2"),
])
def test_notation_is_read_and_written_canonically(text: str, canonical: str) -> None:
    move = parse_move(text)
    assert move.text == canonical and GAME.format_move(move) == canonical
    assert parse_move(canonical) is move and Move(canonical) is move
    assert repr(move) == f"Move({canonical!r})"


@pytest.mark.parametrize("text", ["", "1", "13", "0", "J", "JJ", "J:13", "J+J", "6+7", "123",
                                  "call", "call 9", "call x", "bid 1", "x", "J:", "+6",
                                  "\u00b2", "call \u00b2", "J:\u00b2", "2+\u00b2",
                                  "\u0661\u0662", "call \U0001d7d9"])
def test_malformed_moves_are_refused_with_value_error(text: str) -> None:
    # digits other than ASCII (a superscript two, Arabic-Indic twelve) are no card values
    with pytest.raises(ValueError, match="move"):
        parse_move(text)


def test_every_legal_move_round_trips() -> None:
    s = new(3, ["J J 2 2 S R", "10 4 4 5 5 6", "8 8 6 7 9 11"])
    for m in GAME.legal_moves(s, 0):
        assert GAME.parse_move(GAME.format_move(m)) is m


# --- views, samples and storage --------------------------------------------------------


def test_a_view_shows_the_own_hand_and_counts_of_the_others() -> None:
    s = new(3, ["9 2 2 3 3 4", "S 4 4 5 5 6", "8 8 6 7 9 10"])
    s = play(s, "9", "skip", "10", "pass")
    v = GAME.view(s, 1)
    assert v.hand == cards_text(s.hands[1])
    assert list(v.hand_sizes) == [6, 6, 6]
    assert list(v.collected) == ["9 10 S", "", ""]
    spectator = GAME.view(s, None)
    assert spectator.hand == "" and spectator.seat == -1
    # Another seat's cards and the pile order change nothing in seat 1's view.
    other = s.copy()
    other.hands = (s.hands[2], s.hands[1], s.hands[0])
    other.pile = tuple(reversed(s.pile[s.pos:]))
    other.pos = 0
    other.seed = "another"
    assert GAME.view(other, 1) == v and GAME.view(other, None) == spectator
    assert "seed" not in {f.name for f in v.DESCRIPTOR.fields}
    assert "pile" not in {f.name for f in v.DESCRIPTOR.fields}


def test_samples_keep_the_view_and_honour_known_special_cards() -> None:
    s = new(3, ["S S R R 2 3", "7 7 8 8 9 9", "2 3 4 5 6 7"])
    s = play(with_hand(s, 0, "S S R"), "skip")  # opens with a special card: its two other cards are special too
    v = GAME.view(s, 1)
    assert v.min_specials[0] == 2
    rng = random.Random(5)
    for _ in range(40):
        guess = GAME.sample(v, rng)
        assert GAME.view(guess, 1) == v
        assert cards_text(guess.hands[0]).count("S") + cards_text(guess.hands[0]).count("R") >= 2


def test_samples_are_uniform_over_the_hidden_cards() -> None:
    s = GAME.new_game(2, {}, "uniform")
    v = GAME.view(s, 0)
    rng = random.Random(9)
    jokers_in_hand = [str(cards_text(GAME.sample(v, rng).hands[1])).count("J") for _ in range(600)]
    hidden = full_deck(2) - s.hands[0]
    jokers = cards_text(hidden).split().count("J")
    expected = 6 * jokers / size(hidden)  # mean jokers in a random 6-card hand
    assert abs(sum(jokers_in_hand) / 600 - expected) < 0.12


def test_encode_decode_round_trip_and_garbage_is_refused() -> None:
    s = new(4, HANDS4, opener=3, manual_draw=True)
    s = play(s, "8", "draw", "end", "9")
    data = GAME.encode(s)
    assert GAME.decode(data) == s and GAME.encode(GAME.decode(data)) == data
    with pytest.raises(ValueError, match="not a Dobro state"):
        GAME.decode(b"\x00garbage")
    broken = GAME.decode(data)
    broken.hands = (broken.hands[0] + parse_cards("J"),) + broken.hands[1:]
    with pytest.raises(ValueError, match="do not add up|too many"):
        GAME.decode(GAME.encode(broken))


def test_history_and_last_move_survive_storage() -> None:
    s = new(3, ["7 2 2 3 3 4", "7 4 4 5 5 6", "8 8 6 7 9 9"])
    s = play(s, "7", "7")
    back = GAME.decode(GAME.encode(s))
    assert back.last == Action(1, Move("7"), 14, True, 0, False)
    assert back.auction == s.auction


# --- properties along random games ---------------------------------------------------------

@settings(max_examples=15, deadline=None)
@given(players=st.integers(2, 6), manual=st.booleans(), seed=st.integers(0, 10**6))
def test_every_play_follows_the_value_law_and_hands_refill(
    players: int, manual: bool, seed: int
) -> None:
    rng = random.Random(seed)
    s = GAME.new_game(players, {"rounds": 1, "manual_draw": manual}, str(seed))
    limit = 5 if players == 6 else 6
    while s.stage != OVER:
        acting = sorted(GAME.to_act(s))
        seat = rng.choice(acting)
        moves = GAME.legal_moves(s, seat)
        move = moves[rng.randrange(len(moves))]
        after = GAME.apply(s, seat, move)
        if move.kind in PLAYS and after.round == s.round:
            if not s.auction:
                assert after.value == move.amount
            else:
                assert move.amount >= s.value
                assert after.value == (2 * s.value if move.amount == s.value else move.amount)
                assert after.last is not None and after.last.dobro == (move.amount == s.value)
            if not manual and s.left:
                assert size(after.hands[seat]) == min(limit, size(s.hands[seat]) - move.n_cards + s.left)
        if move.kind == PASS_M.kind:
            assert size(after.collected[seat]) == size(s.collected[seat]) + size(s.auction_cards)
            assert after.turn == seat and not after.auction
        s = after
    assert len(s.history) == 1 and sorted(s.history[0].points)[0] >= 1


def test_two_players_set_ten_new_cards_aside_every_round() -> None:
    s = GAME.new_game(2, {"rounds": 2}, "duel")
    first = s.aside
    assert size(first) == 10 and GAME.view(s, 0).set_aside == 10
    s = _finish_round_quickly(s, random.Random(4))
    assert s.round == 1 and size(s.aside) == 10 and s.aside != first
    assert GAME.census(s)["R"] == 0 and sum(GAME.census(s).values()) == 55
    assert s.direction == 1  # no reverse card, no direction change


def test_an_opener_may_lead_a_joker_alone_or_two_jokers() -> None:
    s = new(3, ["J J 2 3 4 5", "7 7 8 8 9 9", "2 3 4 5 6 7"])
    moves = legal(s)
    assert {"J:2", "J:12", "JJ:2", "JJ:12", "J+2", "2"} <= set(moves)
    assert play(s, "J:12").value == 12 and play(s, "JJ:12").value == 24


def test_samples_of_different_views_in_turn_never_mix() -> None:
    """Samples reuse what they read from the last view: alternating views must not mix."""
    a = GAME.new_game(3, {}, "a")
    b = GAME.new_game(4, {"manual_draw": True}, "b")
    b = GAME.apply(b, b.turn, GAME.legal_moves(b, b.turn)[0])
    views = [GAME.view(a, 0), GAME.view(b, 1), GAME.view(a, None), GAME.view(b, None)]
    rng = random.Random(2)
    for _ in range(5):
        for v in views:
            assert GAME.view(GAME.sample(v, rng), v.seat if v.seat >= 0 else None) == v
