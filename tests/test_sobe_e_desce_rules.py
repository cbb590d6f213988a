"""Sobe e Desce scenarios from fixed decks: every rule of seeds/sobe_e_desce.md and the seed's
worked example, plus properties of random play."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engines.contract import IllegalMove
from engines.sobe_e_desce import GAME, Move
from engines.sobe_e_desce.cards import cards_text, parse_cards
from engines.sobe_e_desce.game import DECIDE, OVER, PLAY, TRUMP_PHASE
from engines.sobe_e_desce.scoring import deal_changes, match_winner, settle
from tests.engine_kit import Setup, play_random
from tests.sobe_e_desce_support import new, play


def hand(state, seat: int) -> str:
    return cards_text(state.hands[seat])


def legal(state, seat: int | None = None) -> list[str]:
    seat = state.to_act if seat is None else seat
    return [m.text for m in GAME.legal_moves(state, seat)]


# --- deal and trump choice ---------------------------------------------------------------

def test_deal_three_then_two_from_the_seat_after_the_dealer() -> None:
    s = new({1: "Ac 2c 3c 4c 5c"}, dealer=0)
    assert s.phase == TRUMP_PHASE and GAME.to_act(s) == {1}  # the first receiver chooses
    v = GAME.view(s, 1)
    assert v.hand == "2c 3c Ac" and list(v.hand_sizes) == [3, 3, 3, 3]
    assert v.pending_size == 8 and v.stock_size == 20 and v.chooser == 1
    assert legal(s) == ["trump c", "trump d", "trump h", "trump s", "turn"]
    s = play(s, "trump d")
    v = GAME.view(s, 1)
    assert v.hand == "2c 3c 4c 5c Ac" and list(v.hand_sizes) == [5, 5, 5, 5]
    assert v.trump == "d" and v.turned_card == "" and v.phase == DECIDE
    assert GAME.to_act(s) == {1}


def test_turning_shows_the_choosers_next_card_which_he_keeps() -> None:
    s = new({0: "2c 3c 4c Kd 5s"})
    s = play(s, "turn")
    assert s.trump == 1  # diamonds, the suit of Kd
    for seat in (None, 0, 1, 2, 3):
        assert GAME.view(s, seat).turned_card == "Kd"
        assert GAME.view(s, seat).trump == "d"
    assert "Kd" in hand(s, 0).split()


def test_the_turned_card_is_known_to_be_held_so_samples_keep_it() -> None:
    s = play(new({0: "2c 3c 4c Kd 5s"}), "turn")
    rng = random.Random(1)
    for _ in range(20):
        guess = GAME.sample(GAME.view(s, 2), rng)
        assert "Kd" in hand(guess, 0).split()


def test_discarding_the_turned_card_is_not_shown_but_samples_allow_both() -> None:
    s = play(new({0: "2c 3c 4c Kd 5s"}), "turn", "exchange Kd 2c")
    v = GAME.view(s, 1)
    assert v.discard_counts[0] == 2 and v.discards == ""
    rng = random.Random(2)
    where = set()
    for _ in range(200):
        guess = GAME.sample(v, rng)
        assert GAME.view(guess, 1) == v
        where.add("hand" if "Kd" in hand(guess, 0).split() else "discards")
        assert "Kd" in (hand(guess, 0) + " " + cards_text(guess.discards[0])).split()
    assert where == {"hand", "discards"}


# --- play or pass, exchanges ------------------------------------------------------------

def test_decisions_go_in_order_from_the_chooser_and_the_chooser_may_not_pass() -> None:
    s = play(new({}, dealer=1), "trump s")
    assert s.to_act == 2
    assert "pass" not in legal(s)
    with pytest.raises(IllegalMove, match="you chose trumps"):
        GAME.apply(s, 2, Move("pass"))
    s = play(s, "play")
    assert s.to_act == 3 and legal(s)[:2] == ["pass", "play"]
    s = play(s, "pass", "play", "pass")
    assert s.phase == PLAY and s.to_act == 2
    assert [(d.seat, d.plays) for d in GAME.view(s, None).decisions] == [
        (2, True), (3, False), (0, True), (1, False)]


def test_hearts_force_everybody_to_play() -> None:
    s = play(new({}), "trump h")
    for _ in range(4):
        assert "pass" not in legal(s)
        with pytest.raises(IllegalMove, match="may not pass"):
            GAME.apply(s, s.to_act, Move("pass"))
        s = play(s, "play")
    assert s.phase == PLAY and s.n_part == 4


def test_a_player_on_five_points_or_fewer_must_play() -> None:
    s = play(new({}, start_score=5), "trump s", "play")
    with pytest.raises(IllegalMove, match="5 or fewer"):
        GAME.apply(s, 1, Move("pass"))
    s = play(new({}, start_score=6), "trump s", "play")
    assert "pass" in legal(s)


def finish_deal(state):
    n = state.deal_number
    while state.deal_number == n:
        state = GAME.apply(state, state.to_act, GAME.legal_moves(state, state.to_act)[0])
    return state


def test_a_player_who_passed_the_two_previous_deals_must_play() -> None:
    s = new({}, dealer=3)
    s = finish_deal(play(s, "trump s", "play", "play", "play", "pass"))  # seat 3 passes
    assert s.passes == (0, 0, 0, 1) and s.chooser == 1
    s = play(s, "trump s", "play", "play")
    assert "pass" in legal(s)  # seat 3 passed only once
    s = finish_deal(play(s, "pass", "play"))
    assert s.passes == (0, 0, 0, 2) and s.chooser == 2
    s = play(s, "trump s", "play")
    assert s.to_act == 3 and "pass" not in legal(s)
    with pytest.raises(IllegalMove, match="passed the last 2 deals"):
        GAME.apply(s, 3, Move("pass"))
    assert list(GAME.view(s, None).must_play) == [False, False, True, True]
    s = finish_deal(play(s, "play", "play", "play"))
    assert s.passes == (0, 0, 0, 0)


def test_two_passes_in_a_row_force_play_directly() -> None:
    s = new({})
    s = s.copy()
    s.passes = (0, 2, 0, 0)
    s = play(s, "trump s", "play")
    assert s.to_act == 1 and "pass" not in legal(s)
    with pytest.raises(IllegalMove, match="passed the last 2 deals"):
        GAME.apply(s, 1, Move("pass"))


def test_exchange_discards_and_draws_from_the_top_of_the_stock() -> None:
    s = new({0: "2c 3c 4c 5c 6c"}, stock="As 7s Ks Js Qs")
    s = play(s, "trump s", "exchange 2c 3c 4c")
    assert hand(s, 0) == "5c 6c Ks 7s As"
    assert cards_text(s.discards[0]) == "2c 3c 4c"
    v1 = GAME.view(s, 1)
    assert v1.discard_counts[0] == 3 and v1.stock_size == 17 and v1.discards == ""
    assert GAME.view(s, 0).discards == "2c 3c 4c"
    assert [(d.seat, d.plays, d.exchanged) for d in v1.decisions] == [(0, True, 3)]
    before = play(new({0: "2c 3c 4c 5c 6c"}, stock="As 7s Ks Js Qs"), "trump s")
    move = Move("exchange 2c 3c 4c")
    assert GAME.redact(before, 0, move, 1) == "exchange 3 cards"
    assert GAME.redact(before, 0, move, None) == "exchange 3 cards"
    assert GAME.redact(before, 0, move, 0) == "exchange 2c 3c 4c"


def test_exchange_of_up_to_five_cards_means_playing() -> None:
    s = play(new({}), "trump s", "play")
    moves = legal(s)
    assert moves[0] == "pass" and moves[1] == "play"
    assert len(moves) == 2 + 31  # every non-empty subset of the five cards
    s = play(s, "exchange " + hand(s, 1))
    assert s.decisions[-1] == (1, True, 5) and s.to_act == 2


def test_exchange_refuses_cards_not_held() -> None:
    s = play(new({0: "2c 3c 4c 5c 6c"}), "trump s")
    with pytest.raises(IllegalMove, match="do not hold"):
        GAME.apply(s, 0, Move("exchange As"))


def test_a_short_stock_limits_the_exchange() -> None:
    s = play(new({}), "trump s").copy()
    s.stock = s.stock[:2]
    assert max(Move(t).arg.bit_count() for t in legal(s)) == 2
    with pytest.raises(IllegalMove, match="only 2"):
        GAME.apply(s, 0, Move("exchange " + " ".join(hand(s, 0).split()[:3])))


def test_a_player_alone_takes_the_five_tricks_without_play() -> None:
    s = new({}, dealer=3)
    s = play(s, "trump s", "play", "pass", "pass", "pass")
    assert s.deal_number == 1 and s.scores == (15, 20, 20, 20)
    rec = s.history[-1]
    assert rec.tricks == (5, 0, 0, 0) and rec.change == (-5, 0, 0, 0)
    assert s.dealer == 0 and s.chooser == 1  # the dealer moved on
    s = new({}, dealer=3)
    s = play(s, "trump c", "play", "pass", "pass", "pass")
    assert s.scores == (10, 20, 20, 20)  # clubs: double


# --- the tricks --------------------------------------------------------------------------

def test_the_opening_lead_must_be_the_ace_of_trumps() -> None:
    s = new({0: "As 2c 3c 4c 5c"})
    s = play(s, "trump s", "play", "play", "pass", "pass")
    assert legal(s) == ["As"]
    with pytest.raises(IllegalMove, match="ace of trumps"):
        GAME.apply(s, 0, Move("2c"))


def test_the_ace_rule_binds_only_the_opening_lead() -> None:
    # seat 1 holds the ace of trumps; seat 0 leads, seat 1 wins the first trick and leads freely
    s = new({0: "2c 3c 4c 5c 6c", 1: "Ac As 2d 3d 4d"})
    s = play(s, "trump s", "play", "play", "pass", "pass", "2c", "Ac")
    assert s.to_act == 1 and legal(s) == ["2d", "3d", "4d", "As"]


def test_the_opening_leader_without_the_ace_shows_it() -> None:
    s = new({0: "2c 3c 4c 5c 6c"})
    s = play(s, "trump s", "play", "play", "pass", "pass", "2c")
    assert "As" in GAME.view(s, 1).absent[0].split()


def test_follow_suit_when_you_can() -> None:
    s = new({0: "2c 3c 4c 5c 6c", 1: "Ac 2s 2d 3d 4d"})
    s = play(s, "trump s", "play", "play", "pass", "pass", "2c")
    assert legal(s) == ["Ac"]
    with pytest.raises(IllegalMove, match="follow suit"):
        GAME.apply(s, 1, Move("2s"))


def test_void_with_no_trump_in_the_trick_must_trump() -> None:
    s = new({0: "2c 3c 4c 5c 6c", 1: "2s 7s 2d 3d 4d"})
    s = play(s, "trump s", "play", "play", "pass", "pass", "2c")
    assert legal(s) == ["2s", "7s"]
    with pytest.raises(IllegalMove, match="must trump"):
        GAME.apply(s, 1, Move("2d"))
    s = play(s, "2s")
    assert "c" in GAME.view(s, 0).absent[1] and "Ac" in GAME.view(s, 0).absent[1].split()


def test_void_with_a_trump_in_the_trick_must_over_trump_if_able() -> None:
    s = new({0: "2c 3c 4c 5c 6c", 1: "5s 2d 3d 4d 5d", 2: "4s Ks 2h 3h 4h"})
    s = play(s, "trump s", "play", "play", "play", "pass", "2c", "5s")
    assert legal(s) == ["Ks"]  # 4s is lower than 5s: only the higher trump
    with pytest.raises(IllegalMove, match="over-trump"):
        GAME.apply(s, 2, Move("4s"))


def test_void_unable_to_over_trump_plays_any_card() -> None:
    s = new({0: "2c 3c 4c 5c 6c", 1: "7s 2d 3d 4d 5d", 2: "4s Ks 2h 3h 4h"})
    s = play(s, "trump s", "play", "play", "play", "pass", "2c", "7s")
    assert legal(s) == ["2h", "3h", "4h", "4s", "Ks"]
    s = play(s, "2h")
    absent = GAME.view(s, 0).absent[2].split()
    assert "As" in absent and "Ks" not in absent and "c" in "".join(absent)


def test_trumps_led_are_followed_with_any_trump() -> None:
    s = new({0: "As 2c 3c 4c 5c", 1: "2s 7s 2d 3d 4d"})
    s = play(s, "trump s", "play", "play", "pass", "pass", "As")
    assert legal(s) == ["2s", "7s"]


def test_ranking_a_7_k_j_q_and_highest_trump_wins() -> None:
    # clubs led: 7c beats Kc; the Q is below the J
    s = new({0: "Kc 2d 3d 4d 5d", 1: "7c 2h 3h 4h 5h", 2: "Qc 6d Qd Jd Kd", 3: "Jc 6h Qh Jh Kh"})
    s = play(s, "trump s", "play", "play", "play", "play", "Kc", "7c", "Qc", "Jc")
    assert s.tricks[0][2] == 1 and s.won == (0, 1, 0, 0)
    # seat 1 leads hearts; seat 2 is void and trumps? no trumps: plays a diamond, which loses
    s = play(s, "5h", "6d", "Kh", "2d")
    assert s.tricks[1][2] == 3


def test_a_low_trump_beats_the_led_suit() -> None:
    s = new({0: "Ac 2d 3d 4d 5d", 1: "2s 2h 3h 4h 5h"})
    s = play(s, "trump s", "play", "play", "pass", "pass", "Ac", "2s")
    assert s.won == (0, 1, 0, 0) and s.to_act == 1


def test_only_the_players_take_part_in_the_tricks() -> None:
    s = new({})
    s = play(s, "trump s", "play", "pass", "play", "pass")
    seats = []
    for _ in range(2):
        seats.append(s.to_act)
        s = GAME.apply(s, s.to_act, GAME.legal_moves(s, s.to_act)[0])
    assert seats == [0, 2] and len(s.tricks) == 1


# --- scoring, the match, RISCOS ----------------------------------------------------------

def test_deal_score_subtracts_tricks_and_penalises_players_without_any() -> None:
    assert deal_changes(1, (True, True, True, False), (3, 2, 0, 0)) == (-3, -2, 5, 0)
    assert deal_changes(0, (True, True, True, False), (3, 2, 0, 0)) == (-6, -4, 10, 0)


def test_a_full_deal_scores_and_rotates_the_dealer() -> None:
    s = new({0: "As 7s Ks Js Qs", 1: "Ac 7c Kc Jc Qc", 2: "Ad 7d Kd Jd Qd"})
    s = play(s, "trump s", "play", "play", "play", "pass")
    for _ in range(5):  # seat 0 leads trumps, wins every trick
        for pick in (-1, 0, 0):
            s = play(s, legal(s)[pick])
    assert s.deal_number == 1
    assert s.scores == (15, 25, 25, 20)
    assert s.passes == (0, 0, 0, 1)
    assert s.dealer == 0 and s.phase == TRUMP_PHASE and s.to_act == 1
    res = GAME.result(s)
    assert res.last_deal == (5, -5, -5, 0) and res.totals == (5, -5, -5, 0)
    assert not res.finished


def test_seed_riscos_example() -> None:
    assert settle((0, 11, 2, 5), winner=0) == (18, -11, -2, -5)


def test_several_at_zero_lowest_wins_then_play_order_from_the_chooser() -> None:
    assert match_winner((0, -2, 5, 7), chooser=0) == 1
    assert match_winner((0, 3, 0, 7), chooser=1) == 2  # order 1, 2, 3, 0
    assert match_winner((0, 3, 0, 7), chooser=3) == 0
    assert match_winner((1, 3, 2, 7), chooser=0) == -1
    assert settle((-1, 0, 4, 6), winner=0) == (10, 0, -4, -6)


def test_reaching_zero_ends_the_match_with_the_riscos_settlement() -> None:
    s = new({0: "As 7s Ks Js Qs"}, start_score=5)
    s = play(s, "trump s", "play", "play", "play", "play")
    while not GAME.is_over(s):
        s = GAME.apply(s, s.to_act, GAME.legal_moves(s, s.to_act)[0])
    assert s.deal_number == 1 and s.scores[0] == 0 and s.winner == 0
    res = GAME.result(s)
    assert res.finished and res.winners == (0,)
    assert res.totals == settle(s.scores, 0) and sum(res.totals) == 0
    assert GAME.to_act(s) == frozenset() and GAME.view(s, 1).phase == OVER


def test_max_deals_bounds_the_match() -> None:
    s = GAME.new_game(4, {"max_deals": 2}, seed="bound")
    rng = random.Random(3)
    while not GAME.is_over(s):
        s = GAME.apply(s, s.to_act, rng.choice(list(GAME.legal_moves(s, s.to_act))))
    assert len(s.history) == 2
    low = min(s.scores)
    assert s.scores[s.winner] == low and sum(GAME.result(s).totals) == 0


# --- notation ----------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["trump c", "trump h", "turn", "pass", "play", "7h", "Ac",
                                  "2s", "exchange 2c Qd", "exchange 2c 3c 4c 5c 6c"])
def test_notation_round_trips(text: str) -> None:
    move = GAME.parse_move(text)
    assert GAME.format_move(move) == text and eval(repr(move)) == move


@pytest.mark.parametrize(("text", "canonical"), [
    ("trump Hearts", "trump h"), ("  PASS ", "pass"), ("exchange Qd 2c", "exchange 2c Qd"),
    ("7H", "7h"), ("ac", "Ac"), ("Turn", "turn"), ("exchange qd,2c", "exchange 2c Qd"),
])
def test_notation_accepts_variants(text: str, canonical: str) -> None:
    assert GAME.format_move(GAME.parse_move(text)) == canonical


@pytest.mark.parametrize("text", ["", "trump", "trump x", "exchange", "8h", "10h",
                                  "exchange 2c 2c", "exchange 2c 3c 4c 5c 6c 7c", "play 7h",
                                  "bid 2"])
def test_malformed_moves_are_value_errors(text: str) -> None:
    with pytest.raises(ValueError):
        GAME.parse_move(text)


def test_a_card_in_the_wrong_phase_is_illegal() -> None:
    s = new({})
    with pytest.raises(IllegalMove, match="trumps are not chosen"):
        GAME.apply(s, 0, Move("2c"))
    s = play(s, "trump s")
    with pytest.raises(IllegalMove, match="not a decision"):
        GAME.apply(s, 0, Move("2c"))


def test_bad_options_are_refused() -> None:
    for bad in ({"start_score": 0}, {"deck": "2c 3c"}, {"dealer": 4}, {"max_deals": "x"}):
        with pytest.raises(ValueError):
            GAME.new_game(4, bad, "s")
    with pytest.raises(ValueError, match="exactly 4"):
        GAME.new_game(3, {}, "s")


# --- knowledge -----------------------------------------------------------------------------

def test_views_hide_other_hands_and_the_stock() -> None:
    s = play(new({0: "As 7s Ks Js Qs"}), "trump s")
    v = GAME.view(s, 1)
    assert "As" not in str(v) and v.hand == hand(s, 1)
    assert GAME.view(s, None).hand == ""
    assert "seed" not in str(v) and "scenario" not in str(v)


def test_samples_honour_shown_voids() -> None:
    s = new({0: "2c 3c 4c 5c 6c", 1: "2s 7s 2d 3d 4d"})
    s = play(s, "trump s", "play", "play", "play", "play", "2c", "2s")
    v = GAME.view(s, 3)
    rng = random.Random(5)
    for _ in range(50):
        guess = GAME.sample(v, rng)
        assert not guess.hands[1] & parse_cards("Ac 7c Kc Jc Qc")
        assert GAME.view(guess, 3) == v


@settings(max_examples=15, deadline=None)
@given(seed=st.text(max_size=6), rng_seed=st.integers(0, 2**32))
def test_random_matches_settle_zero_sum_with_the_lowest_score_winning(seed: str,
                                                                      rng_seed: int) -> None:
    final, _ = play_random(GAME, Setup(4, {"start_score": 8}), seed, random.Random(rng_seed))
    res = GAME.result(final)
    assert res.finished and sum(res.totals) == 0
    assert final.scores[final.winner] == min(final.scores) <= 0
    assert res.totals[final.winner] == sum(max(v, 0) for i, v in enumerate(final.scores)
                                           if i != final.winner)


def test_constrained_deals_are_uniform_over_the_allowed_arrangements() -> None:
    """Exact counting, not rejection: every arrangement the exclusions allow is equally likely
    (checked against brute-force enumeration on a small pool)."""
    from collections import Counter
    from itertools import permutations

    from engines.sobe_e_desce.sampling import Places, Plan

    pool = [0, 1, 2, 10, 11, 20]
    absent = {1: sum(1 << c for c in (0, 1, 2)), 2: 1 << 20}  # seat 1 void in clubs, 2 lacks 20
    places = Places({1: 2, 2: 2}, {3: 1}, ordered=1)
    allowed = set()
    for perm in permutations(pool):
        h1, h2, d3, rest = frozenset(perm[:2]), frozenset(perm[2:4]), perm[4], perm[5]
        if any(absent[1] >> c & 1 for c in h1) or any(absent[2] >> c & 1 for c in h2):
            continue
        allowed.add((h1, h2, d3, rest))
    plan = Plan(pool, places, absent)
    assert plan.total == len(allowed)
    rng = random.Random(11)
    n = 200 * len(allowed)
    counts: Counter[tuple[frozenset[int], frozenset[int], int, int]] = Counter()
    for _ in range(n):
        d = plan.draw(rng)
        key = (frozenset(d.hands[1]), frozenset(d.hands[2]), d.discards[3][0], d.ordered[0])
        assert key in allowed
        counts[key] += 1
    assert set(counts) == allowed
    expected = n / len(allowed)
    chi2 = sum((c - expected) ** 2 / expected for c in counts.values())
    assert chi2 < 2 * len(allowed) + 30  # far above the mean (df) only if not uniform


def test_a_chooser_who_gave_up_his_whole_hand_gave_up_the_turned_card_too() -> None:
    """Samples never leave the turned card in the hand of a chooser who exchanged all five."""
    import random

    from engines.sobe_e_desce import GAME as game

    found = 0
    for k in range(400):
        s = game.new_game(4, {}, seed=f"turned/{k}")
        s = game.apply(s, s.to_act, game.parse_move("turn"))
        chooser = s.to_act
        out = " ".join(game.format_move(m) for m in game.legal_moves(s, chooser)
                       if game.format_move(m).count(" ") == 5)
        if not out:
            continue
        s = game.apply(s, chooser, game.parse_move(out.split(" exchange")[0]))
        rng = random.Random(k)
        for _ in range(20):
            world = game.sample(game.view(s, (chooser + 1) % 4), rng)
            assert not world.hands[chooser] >> s.turned & 1
            assert world.discards[chooser] >> s.turned & 1
        found += 1
        if found == 5:
            break
    assert found == 5
