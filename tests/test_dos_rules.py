"""Dos rules, one scenario per rule, from fixed decks (see seeds/dos.md).

`table(...)` (tests/dos_support.py) stacks the deck so that each seat gets the hand asked
for, the centre row starts with the cards asked for and the draw pile begins with `pile`;
every other card follows in a fixed order. Seat 0 plays first (the dealer is the last seat).
"""

from __future__ import annotations

import random

import pytest
from croupier.v1 import dos_pb2 as pb
from hypothesis import given, settings
from hypothesis import strategies as st

from engines.contract import IllegalMove
from engines.dos import GAME, Move, parse_move
from engines.dos.cards import (
    COPIES,
    DECK_SIZE,
    DOUBLE,
    DOUBLE_COLOUR,
    NO_MATCH,
    SINGLE,
    SINGLE_COLOUR,
    TYPES,
    code,
    match_kind,
    pack,
    parse_card,
    points,
)
from engines.dos.game import DosState
from tests.dos_support import FILLER, OTHER, hand, legal, play, row, table, two_left

# --- the deck and the deal -------------------------------------------------------------------


def test_deck_has_108_cards_as_the_rulings_list() -> None:
    assert DECK_SIZE == 108 and sum(COPIES) == 108
    for colour in "bgry":
        per = {n: COPIES[parse_card(f"{colour}{n}")] for n in (1, 3, 4, 5, 6, 7, 8, 9, 10)}
        assert per == {1: 3, 3: 3, 4: 3, 5: 3, 6: 2, 7: 2, 8: 2, 9: 2, 10: 2}
        assert COPIES[parse_card(f"{colour}#")] == 2
        assert sum(per.values()) + 2 == 24
    assert COPIES[parse_card("w2")] == 12
    with pytest.raises(ValueError, match="wild DOS"):
        parse_card("b2")


def test_card_points() -> None:
    assert points(parse_card("b7")) == 7 and points(parse_card("r10")) == 10
    assert points(parse_card("w2")) == 20 and points(parse_card("g#")) == 40


def test_deal_gives_seven_each_and_two_in_the_row() -> None:
    for n in (2, 3, 4):
        s = GAME.new_game(n, {}, f"deal{n}")
        assert [len(h) for h in s.hands] == [7] * n
        assert len(s.row) == 2 and len(s.pile) == 108 - 7 * n - 2
        assert s.current == (s.dealer + 1) % n
        assert sum(GAME.census(s).values()) == 108


def test_deck_option_fixes_the_deal_and_seed_the_shuffle() -> None:
    s = table(["b7 b1 b3 b4 b5 b6 b8", FILLER], "r7 r9", "y1")
    assert hand(s, 0) == "b1 b3 b4 b5 b6 b7 b8"
    assert row(s) == "r7 r9" and code(s.pile[0]) == "y1"
    a, b = GAME.new_game(3, {}, "same"), GAME.new_game(3, {}, "same")
    assert a == b and GAME.new_game(3, {}, "other") != a


def test_bad_options_and_player_counts_are_refused() -> None:
    with pytest.raises(ValueError, match="2 to 4"):
        GAME.new_game(5, {}, "s")
    with pytest.raises(ValueError, match="option 'target'"):
        GAME.new_game(2, {"target": 0}, "s")
    with pytest.raises(ValueError, match="108"):
        GAME.new_game(2, {"deck": "b7 b7"}, "s")
    with pytest.raises(ValueError, match="dealer"):
        GAME.new_game(2, {"dealer": 3}, "s")


# --- matches ---------------------------------------------------------------------------------


def test_seed_example_seven_and_nine_both_matched_in_one_turn() -> None:
    # The seed: the row shows a 7 and a 9; one or two cards may go on the 7 as well as the 9.
    s = table(["b7 g4 r5 y1 y3 b9 b10", FILLER], "r7 y9", "b1 b3 g1")
    moves = legal(s, 0)
    assert "b7 on r7" in moves and "g4+r5 on y9" in moves and "g4+y3 on r7" in moves
    s = play(s, 0, "b7 on r7")
    assert [m[0] for m in s.matches] == [0]
    s = play(s, 0, "g4+r5 on y9")
    # Both centre cards matched: only `end` is left, but the turn waits for it (a turn that
    # ended by itself would tell the table that the hand allowed no further match).
    assert s.current == 0 and legal(s, 0) == ["end"]
    s = play(s, 0, "end")
    # The played and covered cards are discarded; the row is refilled to two from the pile.
    assert row(s) == "b1 b3"
    assert sorted(GAME.view(s, 0).discards.split()) == sorted(["b7", "r7", "g4", "r5", "y9"])
    assert hand(s, 0) == "b9 b10 y1 y3"
    assert s.current == 1


def test_single_match_needs_the_same_number_colour_aside() -> None:
    s = table(["b7 b8 y1 y3 y4 y5 y6", FILLER], "r7 r9", "b1 b3")
    assert match_kind(parse_card("r7"), (parse_card("b7"),)) == SINGLE
    with pytest.raises(IllegalMove, match="same number"):
        play(s, 0, "b8 on r7")
    with pytest.raises(IllegalMove, match="no r5 in the centre row"):
        play(s, 0, "y5 on r5")
    with pytest.raises(IllegalMove, match="does not hold"):
        play(s, 0, "g7 on r7")


def test_double_match_needs_the_sum() -> None:
    s = table(["y3 y4 y5 b1 b8 b9 b10", FILLER], "r7 r9", "b1 b3")
    assert match_kind(parse_card("r7"), (parse_card("y3"), parse_card("y4"))) == DOUBLE
    with pytest.raises(IllegalMove, match="add up"):
        play(s, 0, "y3+y5 on r7")
    s = play(s, 0, "y3+y4 on r7")
    assert hand(s, 0) == "b1 b8 b9 b10 y5"


def test_each_centre_card_takes_one_match_per_turn() -> None:
    s = table(["b7 g7 y1 y3 y4 y5 y6", FILLER], "r7 r9", "b1 b3")
    s = play(s, 0, "b7 on r7")
    assert not any(m.endswith("on r7") for m in legal(s, 0))
    with pytest.raises(IllegalMove, match="already matched"):
        play(s, 0, "g7 on r7")


def test_two_equal_centre_cards_are_two_targets() -> None:
    s = table(["b7 g7 y1 y3 y4 y5 y6", FILLER], "r7 r7", "b1 b3")
    s = play(s, 0, "b7 on r7")
    assert "g7 on r7" in legal(s, 0)
    s = play(s, 0, "g7 on r7", "end")
    assert s.current == 1 and "b7" not in hand(s, 0) and "g7" not in hand(s, 0)


def test_a_turn_must_start_with_a_match_or_a_draw() -> None:
    s = table(["b7 g7 y1 y3 y4 y5 y6", FILLER], "r7 r9", "b1 b3")
    with pytest.raises(IllegalMove, match="match at least one"):
        play(s, 0, "end")
    assert "end" not in legal(s, 0) and "draw" in legal(s, 0)


# --- colour bonuses --------------------------------------------------------------------------


def test_single_colour_match_adds_one_card_to_the_row_after_the_refill() -> None:
    s = table(["r7 b8 y1 y3 y4 y5 y6", FILLER], "r7 g9", "b1 b3")
    s = play(s, 0, "r7 on r7")
    assert s.matches[0][2] == SINGLE_COLOUR
    with pytest.raises(IllegalMove, match="add 1 more"):
        play(s, 0, "end")
    adds = [m for m in legal(s, 0) if m.startswith("add")]
    assert adds == ["add b8", "add y1", "add y3", "add y4", "add y5", "add y6"]
    assert "b8+y1 on g9" in legal(s, 0)  # more matches stay open until a card is added
    with pytest.raises(IllegalMove, match="no g5 to add"):
        play(s, 0, "add g5")
    s = play(s, 0, "add b8")  # nothing else to decide but the end, which the player plays
    assert s.current == 0 and legal(s, 0) == ["end"]
    s = play(s, 0, "end")
    assert s.current == 1
    assert row(s) == "g9 b1 b8"  # refilled to two, then the bonus card
    assert len(s.hands[1]) == 7  # a single colour match makes nobody draw


def test_no_more_matches_once_bonus_cards_are_being_added() -> None:
    s = table(["r7 b8 g9 y3 y4 y5 y6", FILLER], "r7 g9", "b1 b3")
    s = play(s, 0, "r7 on r7", "add b8")
    # g9 on g9 was possible before the add; after it only the end is.
    assert legal(s, 0) == ["end"]
    s = play(s, 0, "end")
    assert s.current == 1 and "g9" in hand(s, 0)


def test_double_colour_match_adds_one_and_every_other_player_draws_one() -> None:
    s = table(["r3 r4 y1 y3 y4 y5 y6", FILLER, OTHER], "r7 g9", "b1 b3 b4 b5")
    s = play(s, 0, "r3+r4 on r7")
    assert s.matches[0][2] == DOUBLE_COLOUR
    s = play(s, 0, "add y6", "end")
    assert row(s) == "g9 b1 y6"
    assert "b3" in hand(s, 1) and "b4" in hand(s, 2)  # seat 1 draws first, then seat 2
    assert [len(h) for h in s.hands] == [4, 8, 8]


def test_two_colour_matches_owe_two_cards() -> None:
    s = table(["r7 g9 y1 y3 y4 y5 y6", FILLER], "r7 g9", "b1 b3")
    s = play(s, 0, "r7 on r7", "g9 on g9")
    assert GAME.view(s, 0).bonus_owed == 2
    s = play(s, 0, "add y1")
    assert s.current == 0 and legal(s, 0)[0] == "add y3"
    s = play(s, 0, "add y3", "end")
    assert row(s) == "b1 b3 y1 y3" and s.current == 1


# --- wild cards ------------------------------------------------------------------------------


def test_wild_dos_in_hand_is_a_two_of_any_colour() -> None:
    w2, b5, b7 = parse_card("w2"), parse_card("b5"), parse_card("b7")
    assert match_kind(b7, (w2, b5)) == DOUBLE_COLOUR  # the wild DOS is declared blue
    assert match_kind(b7, (w2, parse_card("r5"))) == DOUBLE
    assert match_kind(w2, (w2,)) == SINGLE_COLOUR  # both twos, same colour chosen
    assert match_kind(b7, (w2,)) == NO_MATCH
    s = table(["w2 b5 y1 y3 y4 y5 y6", FILLER, OTHER], "b7 g9", "b1 b3 b4 b5")
    s = play(s, 0, "w2+b5 on b7", "add y1", "end")
    assert [len(h) for h in s.hands] == [4, 8, 8]


def test_wild_hash_in_hand_is_any_number_of_its_colour() -> None:
    bh = parse_card("b#")
    assert match_kind(parse_card("r9"), (bh,)) == SINGLE
    assert match_kind(parse_card("b9"), (bh,)) == SINGLE_COLOUR
    assert match_kind(parse_card("b10"), (bh, parse_card("b9"))) == DOUBLE_COLOUR  # # is 1
    assert match_kind(parse_card("b1"), (bh, parse_card("b1"))) == NO_MATCH  # # is never 0
    assert match_kind(parse_card("r10"), (bh, parse_card("g#"))) == DOUBLE
    s = table(["b# y1 y3 y4 y5 y6 y8", FILLER], "r9 b10", "b1 b3")
    assert "b# on r9" in legal(s, 0) and "b# on b10" in legal(s, 0)


def test_wild_hash_in_the_row_takes_the_number_its_matcher_needs() -> None:
    gh = parse_card("g#")
    assert match_kind(gh, (parse_card("b9"),)) == SINGLE
    assert match_kind(gh, (parse_card("g9"),)) == SINGLE_COLOUR
    assert match_kind(gh, (parse_card("w2"),)) == SINGLE_COLOUR  # the wild DOS goes green
    assert match_kind(gh, (parse_card("g6"), parse_card("g4"))) == DOUBLE_COLOUR
    assert match_kind(gh, (parse_card("g6"), parse_card("g5"))) == NO_MATCH  # 11 is no number
    s = table(["b6 r5 y1 y3 y4 y8 y9", FILLER], "g# r9", "b1 b3")
    with pytest.raises(IllegalMove, match="add up"):
        play(s, 0, "b6+r5 on g#")
    assert "b6 on g#" in legal(s, 0) and "b6+y4 on g#" in legal(s, 0)


def test_wild_dos_in_the_row_is_a_two_whose_colour_its_matcher_picks() -> None:
    w2 = parse_card("w2")
    assert match_kind(w2, (parse_card("r#"),)) == SINGLE_COLOUR
    assert match_kind(w2, (parse_card("r1"), parse_card("r1"))) == DOUBLE_COLOUR
    assert match_kind(w2, (parse_card("r1"), parse_card("b1"))) == DOUBLE
    assert match_kind(w2, (parse_card("r3"),)) == NO_MATCH


# --- drawing ---------------------------------------------------------------------------------


def test_no_match_draw_one_and_play_it_if_it_matches() -> None:
    s = table([FILLER, OTHER], "r7 r1", "b7 b1")
    assert legal(s, 0) == ["draw"]
    s = play(s, 0, "draw")
    assert s.current == 0 and s.drew and code(s.drawn) == "b7"
    assert legal(s, 0) == ["b7 on r7", "end"]
    s = play(s, 0, "b7 on r7")  # no more matches after the drawn card's: only the end
    assert s.current == 0 and legal(s, 0) == ["end"]
    s = play(s, 0, "end")
    assert s.current == 1 and hand(s, 0) == FILLER


def test_after_drawing_only_the_drawn_card_may_be_matched() -> None:
    s = table(["r1 g3 g4 g5 g6 g8 g9", OTHER], "r7 b1", "b7 b1")
    s = play(s, 0, "draw")  # a match was possible: drawing is a choice
    with pytest.raises(IllegalMove, match=r"only the drawn card \(b7\)"):
        play(s, 0, "r1 on b1")
    with pytest.raises(IllegalMove, match="already drawn"):
        play(s, 0, "draw")
    assert "g3+g4 on r7" not in legal(s, 0)  # ... which excludes doubles without it
    assert "b7 on r7" in legal(s, 0)
    assert all("b7" in m for m in legal(s, 0) if " on " in m)


def test_a_drawn_card_that_cannot_match_is_kept_and_the_player_ends_the_turn() -> None:
    s = table([FILLER, OTHER], "r7 r1", "y9 b1")
    s = play(s, 0, "draw")
    # the turn waits for `end`: ending it by itself would show that the drawn card cannot match
    assert s.current == 0 and legal(s, 0) == ["end"] and GAME.view(s, 1).drawn == "?"
    s = play(s, 0, "end")
    assert s.current == 1 and "y9" in hand(s, 0) and len(s.hands[0]) == 8


def test_official_no_match_rule_adds_a_card_after_a_useless_draw() -> None:
    s = table([FILLER, OTHER], "r7 r1", "y9 b1", official_no_match=True)
    s = play(s, 0, "draw")
    assert s.current == 0 and "add y9" in legal(s, 0) and "end" not in legal(s, 0)
    with pytest.raises(IllegalMove, match="add 1 more"):
        play(s, 0, "end")
    s = play(s, 0, "add g10", "end")
    assert s.current == 1 and row(s) == "r7 r1 g10" and len(s.hands[0]) == 7


def test_official_rule_still_lets_the_drawn_card_be_played() -> None:
    s = table([FILLER, OTHER], "r7 r1", "b7 b1", official_no_match=True)
    s = play(s, 0, "draw")
    assert "b7 on r7" in legal(s, 0) and "add b7" in legal(s, 0) and "end" not in legal(s, 0)
    s = play(s, 0, "b7 on r7", "end")
    assert s.current == 1 and len(s.hands[0]) == 7


def with_hand(state: DosState, seat: int, cards: str) -> DosState:
    """The state with `seat` holding only `cards` (taken from its hand); the rest of its hand
    goes to the bottom of the draw pile. For scenarios that need a short hand at once."""
    keep = [parse_card(c) for c in cards.split()]
    rest = list(state.hands[seat])
    for t in keep:
        rest.remove(t)
    s = state.copy()
    hands = list(s.hands)
    hands[seat] = tuple(sorted(keep))
    s.hands = tuple(hands)
    s.pile = state.pile + tuple(rest)
    assert sum(GAME.census(s).values()) == 108
    return s


def test_empty_draw_pile_is_rebuilt_from_the_discards() -> None:
    s = table(["b7 g3 g4 g5 g6 g8 g9", OTHER], "r7 r1")
    s = play(s, 0, "b7 on r7", "end")
    t = s.copy()
    t.discards = s.discards + pack(s.pile)  # every pile card now lies in the discards
    t.pile = ()
    u = play(t, 1, "draw")
    assert u.reshuffles == 1 and u.discards == 0
    assert len(u.pile) == len(s.pile) + 2 - 1 and len(u.hands[1]) == 8
    assert GAME.census(u) == GAME.census(s)


def test_nothing_to_draw_ends_the_turn_empty_handed() -> None:
    s = table([FILLER, OTHER], "r7 r1")
    t = s.copy()
    t.hands = (s.hands[0], tuple(sorted(s.hands[1] + s.pile)))  # seat 1 holds the whole pile
    t.pile = ()
    assert sum(GAME.census(t).values()) == 108
    u = play(t, 0, "draw")
    assert legal(u, 0) == ["end"] and len(u.hands[0]) == len(t.hands[0])
    u = play(u, 0, "end")
    assert u.current == 1 and len(u.hands[0]) == len(t.hands[0])


# --- the Dos call ----------------------------------------------------------------------------


def test_ending_with_two_cards_offers_the_call() -> None:
    s = two_left()
    assert legal(s, 0) == ["end", "end dos"]
    called = play(s, 0, "end dos")
    assert called.dos_window == -1 and GAME.to_act(called) == {1}
    assert row(called) == "b1 b3 g6" and "b4" in hand(called, 1) and "b5" in hand(called, 2)


def test_the_call_is_only_for_two_cards() -> None:
    s = table(["b7 g3 g4 y1 y8 b10 r9", FILLER], "r7 y9", "b1 b3")
    s = play(s, 0, "b7 on r7")
    assert "end dos" not in legal(s, 0)
    with pytest.raises(IllegalMove, match="only when ending with two"):
        play(s, 0, "end dos")


def test_forgetting_opens_a_window_for_every_seat() -> None:
    forgot = play(two_left(), 0, "end")
    assert forgot.dos_window == 0 and GAME.to_act(forgot) == {0, 1, 2}
    assert legal(forgot, 0) == ["dos"] and legal(forgot, 2) == ["catch"]
    assert legal(forgot, 1)[-1] == "catch" and "draw" in legal(forgot, 1)
    with pytest.raises(IllegalMove, match="cannot catch yourself"):
        play(forgot, 0, "catch")
    with pytest.raises(IllegalMove, match="only seat 0 can call"):
        play(forgot, 2, "dos")


def test_a_caught_player_draws_two() -> None:
    forgot = play(two_left(), 0, "end")
    caught = play(forgot, 2, "catch")
    assert caught.dos_window == -1 and len(caught.hands[0]) == 4
    assert GAME.to_act(caught) == {1}
    with pytest.raises(IllegalMove, match="nobody can be caught"):
        play(caught, 1, "catch")


def test_the_next_player_may_catch_then_play() -> None:
    caught = play(play(two_left(), 0, "end"), 1, "catch")
    assert len(caught.hands[0]) == 4 and caught.current == 1 and "draw" in legal(caught, 1)


def test_a_late_call_by_the_culprit_closes_the_window() -> None:
    late = play(play(two_left(), 0, "end"), 0, "dos")
    assert late.dos_window == -1 and len(late.hands[0]) == 2 and GAME.to_act(late) == {1}


def test_the_next_players_move_closes_the_window() -> None:
    moved = play(play(two_left(), 0, "end"), 1, "draw")
    assert moved.dos_window == -1 and len(moved.hands[0]) == 2
    with pytest.raises(IllegalMove, match="nobody can be caught"):
        play(moved, 2, "catch")


# --- going out and scoring -------------------------------------------------------------------


def go_out_table(target: int = 500) -> DosState:
    """Seat 0 holds only w2 and b10 facing a row of w2 and b10."""
    hands = ["w2 b10 r# g1 g3 g4 y1", "g5 g6 g8 g9 g10 y10 r10", "y3 y4 y5 y6 y8 y9 r9"]
    return with_hand(table(hands, "w2 b10", "b1 r1 b3 b4", target=target), 0, "w2 b10")


def test_going_out_scores_every_card_left_and_forfeits_the_owed_bonus() -> None:
    t = go_out_table()
    u = play(t, 0, "w2 on w2", "b10 on b10")  # two colour matches, but the hand is empty
    assert u.round == 1 and len(u.history) == 1
    h = u.history[0]
    assert h.winner == 0 and not h.blocked
    seat1 = 5 + 6 + 8 + 9 + 10 + 10 + 10
    seat2 = 3 + 4 + 5 + 6 + 8 + 9 + 9
    assert h.hand_points == (0, seat1, seat2) and h.points == seat1 + seat2
    assert u.totals == (seat1 + seat2, 0, 0)
    res = GAME.result(u)
    assert res.last_deal == (seat1 + seat2, 0, 0) and not res.finished
    assert res.deals_played == 1 and GAME.deal_number(u) == 1
    # the next round: the deal moves on one seat, fresh hands, the totals stay
    assert u.dealer == (t.dealer + 1) % 3 and [len(x) for x in u.hands] == [7, 7, 7]
    assert u.current == (u.dealer + 1) % 3 and sum(GAME.census(u).values()) == 108


def test_a_first_turn_can_empty_a_hand_when_a_bonus_card_widened_the_row() -> None:
    # seed example (seeds/dos.md): seat 0's colour bonus leaves three cards in the row, and
    # seat 1 goes out on its first turn with three double matches and one bonus card
    t = table(["r3 r10 g8 g8 g10 g10 y8", "r1 r3 b1 b4 y3 y7 g9"], "r3 b5", "r4 g6 g7 y5",
              target=1000)
    u = play(t, 0, "r3 on r3", "add r10", "end")
    assert row(u) == "b5 r4 r10" and u.current == 1 and hand(u, 0) == "g8 g8 g10 g10 y8"
    v = play(u, 1, "b1+b4 on b5", "r1+r3 on r4", "y3+y7 on r10")
    assert legal(v, 1) == ["add g9"]  # two bonus cards owed, one card left: no end yet
    w = play(v, 1, "add g9")
    h = w.history[0]
    assert h.winner == 1 and not h.blocked
    # seat 0's five cards, then the two draws of seat 1's double colour matches: y5 from the
    # pile (g6 and g7 refilled the row) and the next card of the stacked deck, a b1
    assert h.hand_points == (8 + 8 + 10 + 10 + 8 + 5 + 1, 0)


def test_the_hands_left_are_shown_to_every_seat_for_the_count() -> None:
    # the others count their cards openly for the winner: every view shows them, once over
    t = go_out_table()
    before = [hand(t, s) for s in range(3)]
    u = play(t, 0, "w2 on w2", "b10 on b10")
    h = u.history[0]
    assert h.hands == ("", before[1], before[2])
    for seat in (0, 1, 2, None):
        shown = GAME.view(u, seat).history[0]
        assert list(shown.hands) == ["", before[1], before[2]]
    again = GAME.decode(GAME.encode(u))
    assert again.history == u.history


def test_a_shown_hand_that_does_not_add_up_is_refused() -> None:
    u = play(go_out_table(), 0, "w2 on w2", "b10 on b10")
    msg = pb.DosState()
    msg.ParseFromString(GAME.encode(u))
    msg.history[0].hands[1] = "g5"  # not what seat 1's points say it held
    with pytest.raises(ValueError, match="add up"):
        GAME.decode(msg.SerializeToString())


def test_wild_cards_left_in_hand_cost_20_and_40() -> None:
    hands = ["w2 b10 r# g1 g3 g4 y1", "w2 g# g8 g9 g10 y10 r10", "y3 y4 y5 y6 y8 y9 r9"]
    t = with_hand(table(hands, "w2 b10", "b1 r1 b3 b4"), 0, "w2 b10")
    u = play(t, 0, "w2 on w2", "b10 on b10")
    assert u.history[0].hand_points[1] == 20 + 40 + 8 + 9 + 10 + 10 + 10


def test_reaching_the_target_ends_the_match() -> None:
    u = play(go_out_table(target=50), 0, "w2 on w2", "b10 on b10")
    res = GAME.result(u)
    assert res.finished and res.winners == (0,) and GAME.to_act(u) == frozenset()
    assert GAME.legal_moves(u, 0) == ()
    with pytest.raises(IllegalMove, match="over"):
        play(u, 1, "draw")


def test_double_colour_draws_happen_before_the_round_is_scored() -> None:
    hands = ["r3 r4 g1 g3 g4 y1 y3", "g5 g6 g8 g9 g10 y10 r10", "y4 y5 y6 y8 y9 r9 b9"]
    t = with_hand(table(hands, "r7 b8", "w2 r# b1 b3", target=1000), 0, "r3 r4")
    u = play(t, 0, "r3+r4 on r7")  # out with a double colour match: the others draw first
    h = u.history[0]
    # the row is refilled first (w2 r#? no: only r7 left the row, so one card: w2),
    # then seat 1 draws r# and seat 2 draws b1
    seat1 = 5 + 6 + 8 + 9 + 10 + 10 + 10 + 40
    seat2 = 4 + 5 + 6 + 8 + 9 + 9 + 9 + 1
    assert h.hand_points == (0, seat1, seat2) and h.points == seat1 + seat2


def test_a_round_that_reaches_the_turn_limit_is_blocked() -> None:
    s = table([FILLER, OTHER], "r7 r1", " ".join(["w2"] * 10), max_turns=10, target=10_000)
    for turn in range(10):
        assert s.current == turn % 2
        s = play(s, turn % 2, "draw", "end")
    h = s.history[0]
    assert h.blocked and s.round == 1
    assert h.winner == min((0, 1), key=lambda p: h.hand_points[p])
    assert h.points == max(h.hand_points)


# --- notation, views, storage ----------------------------------------------------------------


def test_notation_round_trips_and_is_canonical() -> None:
    assert Move("b4+R3 on y7") is parse_move("r3+b4 on y7")
    assert repr(parse_move("  B7   ON  b7 ")) == "Move('b7 on b7')"
    for text in ("draw", "end", "end dos", "dos", "catch", "add g#", "b5+w2 on b7", "r10 on g#"):
        assert GAME.format_move(GAME.parse_move(text)) == text
    for bad, why in [("", "empty"), ("b7", "CARD on CARD"), ("b2 on b7", "wild DOS"),
                     ("b1+b2+b3 on b6", "one card or two"), ("add", "needs the card"),
                     ("x7 on b7", "not a card")]:
        with pytest.raises(ValueError, match=why):
            parse_move(bad)


def test_views_hide_other_hands_and_the_drawn_card() -> None:
    s = table([FILLER, OTHER], "r7 r1", "b7 b1")
    s = play(s, 0, "draw")
    mine, theirs, spectator = GAME.view(s, 0), GAME.view(s, 1), GAME.view(s, None)
    assert mine.drawn == "b7" and theirs.drawn == "?" and spectator.drawn == "?"
    assert "y3" not in mine.hand and "g3" not in theirs.hand and spectator.hand == ""
    assert list(theirs.hand_sizes) == [8, 7] and theirs.draw_pile == len(s.pile)
    assert "b1" not in str(theirs)  # the pile order never shows
    rng = random.Random(1)
    for v in (mine, theirs, spectator):
        assert GAME.view(GAME.sample(v, rng), v.seat if v.seat >= 0 else None) == v


def test_encode_decode_and_garbage() -> None:
    s = play(table([FILLER, OTHER], "r7 r1", "b7 b1"), 0, "draw")
    assert GAME.decode(GAME.encode(s)) == s
    for data in (b"\x00\x01", b"garbage", GAME.encode(s)[:-3]):
        with pytest.raises(ValueError, match="not a Dos state"):
            GAME.decode(data)
    from croupier.v1 import dos_pb2

    msg = dos_pb2.DosState.FromString(GAME.encode(s))
    for field, value, why in [("pile", msg.pile[3:], "108"), ("current", 7, "current seat"),
                              ("dos_window", s.current, "Dos window"), ("row", "b2 b7", "wild DOS"),
                              ("players", 5, "one hand per player")]:
        bad = dos_pb2.DosState()
        bad.CopyFrom(msg)
        setattr(bad, field, value)
        with pytest.raises(ValueError, match=why):
            GAME.decode(bad.SerializeToString())


def brute_force_matches(s: DosState, seat: int) -> set[str]:
    hand_ = list(s.hands[seat])
    out = set()
    used = {m[0] for m in s.matches}
    for i, target in enumerate(s.row):
        if i in used:
            continue
        for a_i, a in enumerate(hand_):
            if match_kind(target, (a,)) != NO_MATCH:
                out.add(Move(f"{code(a)} on {code(target)}").text)
            for b in hand_[a_i + 1:]:
                if match_kind(target, (a, b)) != NO_MATCH:
                    out.add(parse_move(f"{code(a)}+{code(b)} on {code(target)}").text)
    return out


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6), steps=st.integers(0, 60))
def test_legal_matches_equal_a_brute_force(seed: int, steps: int) -> None:
    rng = random.Random(seed)
    s = GAME.new_game(rng.choice((2, 3, 4)), {}, str(seed))
    for _ in range(steps):
        if GAME.is_over(s):
            return
        seat = rng.choice(sorted(GAME.to_act(s)))
        s = GAME.apply(s, seat, rng.choice(list(GAME.legal_moves(s, seat))))
    if GAME.is_over(s) or s.drew or s.adds:
        return
    seat = s.current
    got = {m.text for m in GAME.legal_moves(s, seat) if m.kind == 0}
    assert got == brute_force_matches(s, seat)


# --- an independent oracle of the matching rules (seeds/dos.md, "Matches", "Wild cards") ---

RULEBOOK_CODES = [c + n for c in "bgry" for n in ("1", "3", "4", "5", "6", "7", "8", "9", "10", "#")]
RULEBOOK_CODES.append("w2")


def faces(card: str) -> list[tuple[str, int]]:
    """Every (colour, number) a card may stand for: a numbered card only itself, a wild # any
    number 1 to 10 in its colour, a wild DOS a 2 of any colour (in hand or in the row)."""
    if card == "w2":
        return [(c, 2) for c in "bgry"]
    colour, number = card[0], card[1:]
    if number == "#":
        return [(colour, n) for n in range(1, 11)]
    return [(colour, int(number))]


def oracle(target: str, cards: list[str]) -> str:
    """'none', 'single', 'single colour', 'double' or 'double colour', by trying every choice
    the wild cards allow (the choices are the matching player's)."""
    matched = coloured = False
    for tc, tn in faces(target):
        if len(cards) == 1:
            for c, n in faces(cards[0]):
                if n == tn:
                    matched = True
                    coloured |= c == tc
        else:
            for ac, an in faces(cards[0]):
                for bc, bn in faces(cards[1]):
                    if an + bn == tn:
                        matched = True
                        coloured |= ac == bc == tc
    if not matched:
        return "none"
    kind = "single" if len(cards) == 1 else "double"
    return kind + " colour" if coloured else kind


ENGINE_KIND = {NO_MATCH: "none", SINGLE: "single", SINGLE_COLOUR: "single colour",
               DOUBLE: "double", DOUBLE_COLOUR: "double colour"}


def engine_kind(target: str, cards: list[str]) -> str:
    return ENGINE_KIND[match_kind(parse_card(target), tuple(parse_card(c) for c in cards))]


def test_the_rulebook_codes_name_every_card_type_once() -> None:
    assert sorted(parse_card(c) for c in RULEBOOK_CODES) == sorted(TYPES)


def test_the_oracle_agrees_with_the_rulebooks_own_examples() -> None:
    assert oracle("r7", ["b7"]) == "single" and oracle("r7", ["r7"]) == "single colour"
    assert oracle("r7", ["g3", "y4"]) == oracle("r7", ["b1", "r6"]) == "double"
    assert oracle("r7", ["r3", "r4"]) == "double colour"
    assert oracle("w2", ["w2"]) == "single colour" and oracle("w2", ["y#"]) == "single colour"
    assert oracle("w2", ["r1", "b1"]) == "double" and oracle("w2", ["r1", "b#"]) == "double"
    assert oracle("g#", ["b9"]) == "single" and oracle("g#", ["g6", "g5"]) == "none"
    assert oracle("r7", ["b8"]) == "none" and oracle("w2", ["r3"]) == "none"


@pytest.mark.parametrize("target", ["r7", "b1", "y4", "g10", "w2", "g#"])
def test_match_kinds_of_every_card_and_pair_follow_the_rulebook(target: str) -> None:
    wrong = []
    for i, a in enumerate(RULEBOOK_CODES):
        if engine_kind(target, [a]) != oracle(target, [a]):
            wrong.append(f"{a} on {target}")
        for b in RULEBOOK_CODES[i:]:
            want = oracle(target, [a, b])
            if engine_kind(target, [a, b]) != want or engine_kind(target, [b, a]) != want:
                wrong.append(f"{a}+{b} on {target}: rulebook {want}")
    assert not wrong, wrong[:10]


@pytest.mark.parametrize(("target", "cards"), [
    ("r7", "b8"), ("r7", "w2"), ("r7", "b3+b5"), ("r7", "w2+w2"), ("r7", "b#+r7"),
    ("b1", "w2"), ("b1", "b#+b1"), ("w2", "r3"), ("w2", "r1+r3"), ("w2", "w2+w2"),
    ("g#", "g6+g5"), ("g#", "r10+r1"), ("g10", "b#+b10"),
])
def test_no_match_cases(target: str, cards: str) -> None:
    assert engine_kind(target, cards.split("+")) == "none"


def test_the_rulebooks_match_examples_as_moves() -> None:
    assert engine_kind("r7", ["b1", "r6"]) == "double"
    assert engine_kind("r7", ["g3", "y4"]) == "double"
    assert engine_kind("w2", ["r1", "b#"]) == "double"  # a 1 and a wild # on a w2
    assert engine_kind("w2", ["r1", "r#"]) == "double colour"  # the w2 taken as red
    s = table(["b1 r6 g3 y4 r1 b# y9", FILLER], "r7 w2", "b3 b4 b5")
    moves = legal(s, 0)
    assert {"b1+r6 on r7", "g3+y4 on r7", "b#+r1 on w2"} <= set(moves)
    s = play(s, 0, "g3+y4 on r7")  # as written in the rulebook
    assert s.matches[0][2] == DOUBLE
    s = play(s, 0, "r1+b# on w2", "end")  # either order of the two cards
    assert s.current == 1 and hand(s, 0) == "b1 r6 y9"


def test_two_player_window_holds_both_seats() -> None:
    hands = ["r3 r4 g4 y5 g6 b9 b10", FILLER]
    s = table(hands, "r7 b9", "b1 b3 b4 b5 b6 r1")
    s = play(s, 0, "r3+r4 on r7", "g4+y5 on b9", "add g6", "end")
    assert s.dos_window == 0 and GAME.to_act(s) == {0, 1}
    assert legal(s, 0) == ["dos"] and legal(s, 1)[-1] == "catch"
    assert len(play(s, 1, "catch").hands[0]) == 4


def test_twin_tables_look_the_same_after_the_same_match() -> None:
    # seeds/dos.md, "End of the turn": two tables differing only in seat 0's hand; after the
    # same match one hand may still match and the other may only end, and seat 1 sees the same
    can_match = table(["b4 b7 b10 r10 y1 y8 y10", FILLER], "r7 y9", "b1 b3")
    only_end = table(["b4 b7 b10 r10 y1 y4 y10", FILLER], "r7 y9", "b1 b3")
    a, b = play(can_match, 0, "b7 on r7"), play(only_end, 0, "b7 on r7")
    assert "y1+y8 on y9" in legal(a, 0) and legal(b, 0) == ["end"]
    assert GAME.view(a, 1) == GAME.view(b, 1) and GAME.to_act(a) == GAME.to_act(b) == {0}
    a, b = play(a, 0, "end"), play(b, 0, "end")
    assert GAME.view(a, 1) == GAME.view(b, 1) and GAME.to_act(a) == GAME.to_act(b) == {1}


def test_a_drawn_card_shows_nothing_until_it_is_matched() -> None:
    matches, keeps = (table([FILLER, OTHER], "r7 r1", f"{top} b1") for top in ("b7", "y9"))
    a, b = play(matches, 0, "draw"), play(keeps, 0, "draw")
    assert legal(a, 0) == ["b7 on r7", "end"] and legal(b, 0) == ["end"]
    assert GAME.view(a, 1) == GAME.view(b, 1) and GAME.to_act(a) == GAME.to_act(b) == {0}


def test_emptying_the_hand_still_ends_the_turn_by_itself() -> None:
    t = with_hand(table(["r7 b8 y1 y3 y4 y5 y6", FILLER], "r7 g9", "b1 b3", target=1000), 0,
                  "r7 b8")
    u = play(t, 0, "r7 on r7", "add b8")  # the bonus card empties the hand: the round is over
    assert u.round == 1 and u.history[0].winner == 0
