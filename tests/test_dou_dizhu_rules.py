"""Dou Dizhu scenarios: every worked example of seeds/dou_dizhu.md, from fixed decks."""

from __future__ import annotations

import pytest

from engines.contract import IllegalMove
from engines.dou_dizhu import GAME, Move
from engines.dou_dizhu.cards import RANKS, ranks_text
from engines.dou_dizhu.moves import KIND_NAMES
from tests.dou_dizhu_support import FARMER_1, FARMER_2, LANDLORD, new, play

# --- fixed deals -----------------------------------------------------------------------


# Seat 0 is dealt the face-up card (deck index 0) and bids first.


def test_seed_worked_example_bid_2_one_bomb_no_spring() -> None:
    s = new([LANDLORD, FARMER_1, FARMER_2], "AAR")
    assert s.face_up_holder == 0 and GAME.to_act(s) == {0}
    s = play(s, "bid 2", "pass", "pass")
    view = GAME.view(s, 1)
    assert view.landlord == 0 and view.kitty == "AAR" and view.hand_sizes == [20, 17, 17]
    s = play(s, "666+4", "888+3")
    assert Move("888+3").beats(Move("666+4"))
    assert GAME.view(s, 2).to_beat == "888+3"
    s = play(s, "5555")  # the bomb beats it despite its lower rank
    assert s.bombs == 1
    s = play(s, "pass", "pass", "7", "R", "pass", "pass", "TTTJJJQQQ+99KKAA")
    res = GAME.result(s)
    assert res.finished and res.last_deal == (8, -4, -4) and res.winners == (0,)
    assert s.history[-1].spring is False
    # the cards left are laid down at the end, for every seat to see
    left = s.history[-1].hands
    assert left[0] == "" and len(left[1]) == 17 - 4 and len(left[2]) == 17 - 4 - 1
    for seat in (0, 1, 2, None):
        assert list(GAME.view(s, seat).history[-1].hands) == list(left)
    assert GAME.decode(GAME.encode(s)).history == s.history


def test_landlord_spring() -> None:
    # Seat 0 holds 333444555666777 + 89TJQ: one airplane with five single wings, 20 cards.
    s = new(["333444555666777JQ", "888999TTTJJJQQQKK", "*"], "89T")
    s = play(s, "bid 1", "pass", "pass", "333444555666777+89TJQ")
    res = GAME.result(s)
    assert s.history[-1].spring is True
    assert res.last_deal == (4, -2, -2)  # bid 1 x 2 for the spring


def test_farmer_spring() -> None:
    # Landlord plays only his opening move; farmer 1 takes the lead with R and goes out.
    s = new(["3456789TJ34567892", "RJJJQQQKKKAAA5578", "*"], "TQK")
    s = play(s, "bid 3")
    assert s.landlord == 0 and s.bid == 3
    s = play(s, "3", "R", "pass", "pass", "JJJQQQKKKAAA+5578")
    res = GAME.result(s)
    assert s.history[-1].spring is True
    assert res.last_deal == (-12, 6, 6)  # bid 3 x 2 for the spring, the landlord pays each


def test_rocket_and_bombs_multiply() -> None:
    s = new(["4666TTTJJJQQQ99KK", "3888" + "3334777BQ22K" + "4", "*"], "AAR")
    s = play(s, "bid 1", "pass", "pass", "666+4", "888+3", "5555", "pass", "pass", "7")
    assert GAME.legal_moves(s, 0)[0] == Move("pass")
    s = play(s, "R", "pass", "pass", "TTTJJJQQQ+99KKAA")
    assert GAME.result(s).last_deal == (4, -2, -2)  # bid 1 x 2 (one bomb)


def test_the_rocket_doubles_like_a_bomb() -> None:
    # the landlord holds both jokers and one of every rank: nobody else has a bomb
    s = new(["BR3456789TJQKA222", "33344455566677788", "*"], "AAK")
    s = play(s, "bid 1", "pass", "pass", "BR", "pass", "pass", "3456789TJQKA", "pass", "pass",
             "222+K", "pass", "pass", "AA")
    assert s.history[-1].bombs == 1 and s.history[-1].spring is True
    assert GAME.result(s).last_deal == (8, -4, -4)  # bid 1 x 2 (rocket) x 2 (spring)


# --- bidding ---------------------------------------------------------------------------


def test_bidding_ends_after_two_passes_following_a_bid() -> None:
    s = new(["*", "3333444455556666B", "7777888899992222R"], "TJQ")
    s = play(s, "pass", "bid 1", "bid 2", "pass")
    assert s.phase == 1 and GAME.to_act(s) == {1}
    s = play(s, "pass")
    assert s.landlord == 2 and s.bid == 2 and ranks_text(s.hands[2]).count("T") == 1


def test_bid_3_ends_bidding_and_bids_must_rise() -> None:
    s = new(["*", "3333444455556666B", "7777888899992222R"], "TJQ")
    s = play(s, "bid 2")
    with pytest.raises(IllegalMove, match="higher"):
        GAME.apply(s, 1, Move("bid 1"))
    assert [m.text for m in GAME.legal_moves(s, 1)] == ["pass", "bid 3"]
    s = play(s, "bid 3")
    assert s.landlord == 1 and s.bid == 3 and GAME.to_act(s) == {1}


def test_all_pass_redeals_then_first_bidder_is_forced() -> None:
    s = GAME.new_game(3, {"max_redeals": 2}, seed="redeal")
    first = s.face_up_holder
    dealer, hands = s.dealer, s.hands
    s = play(s, "pass", "pass", "pass")
    assert s.phase == 1 and s.redeals == 1 and s.landlord == -1  # a new deal ...
    # ... that does not count: still the first deal of the match, no score, the same dealer
    assert GAME.deal_number(s) == 0 and s.history == () and s.totals == (0, 0, 0)
    assert s.dealer == dealer and s.hands != hands
    second = s.face_up_holder
    s = play(s, "pass", "pass", "pass")
    assert s.landlord == second and s.bid == 1 and s.phase == 2
    assert GAME.deal_number(s) == 0 and s.history == () and s.dealer == dealer
    assert first in (0, 1, 2)


def test_face_up_card_and_kitty_are_public() -> None:
    s = new([LANDLORD, FARMER_1, FARMER_2], "AAR")
    spectator = GAME.view(s, None)
    assert spectator.face_up_card == "4s" and spectator.face_up_holder == 0
    assert spectator.kitty == "" and spectator.hand == ""
    s = play(s, "bid 1", "pass", "pass")
    assert GAME.view(s, None).kitty == "AAR"


# --- combinations ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    ["7", "99", "888+3", "TTTJJJ+4499", "34567", "5555", "BR", "5555+69", "pass", "bid 1",
     "bid 2", "bid 3", "333444555+666", "333444555666", "333444+66", "2222+34", "5555+6677",
     "TJQKA", "334455", "777+B", "3333+2B", "333444+2B"],
)
def test_notation_round_trips(text: str) -> None:
    move = Move(text)
    assert move.text == text and str(move) == text and eval(repr(move)) is move


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("5555+66", "differ"),          # four with two singles: different ranks
        ("5555+BR", "jokers"),          # at most one joker among the singles
        ("333444+BR", "jokers"),        # airplane wings never both jokers
        ("333444+3", "kickers may not share"),
        ("333444+5566", None),         # valid: pair wings
        ("333444+5555", "distinct pairs"),
        ("JQKA2", "3 to A"),            # no 2 in chains
        ("3456", "at least 5"),
        ("3344", "at least 3"),
        ("888+33+4", "at most one"),
        ("777+BB", "more cards"),
        ("8888+9", "a four takes 2 single"),
        ("55+6", "no kickers"),
        ("bid 4", "bid"),
        ("", "empty"),
        ("x", "not a rank"),
    ],
)
def test_malformed_moves_are_refused_with_a_reason(text: str, why: str | None) -> None:
    if why is None:
        assert Move(text).text == text
        return
    with pytest.raises(ValueError, match=why):
        Move(text)


def test_two_readings_of_the_same_cards_are_two_moves() -> None:
    plane_of_3 = Move("333444555+666")
    plane_of_4 = Move("333444555666")
    assert plane_of_3.cards == plane_of_4.cards and plane_of_3 != plane_of_4
    assert not plane_of_4.beats(plane_of_3) and not plane_of_3.beats(plane_of_4)


@pytest.mark.parametrize(
    ("high", "low", "beats"),
    [
        ("888+3", "666+4", True),
        ("5555", "888+3", True),
        ("6666", "5555", True),
        ("5555", "6666", False),
        ("BR", "2222", True),
        ("2222", "3333+45", True),        # four with two is ordinary: any bomb beats it
        ("4444+56", "3333+2B", True),
        ("4444+5566", "3333+45", False),  # singles and pairs never mix
        ("45678", "3456789", False),      # same kind, different length
        ("456789", "345678", True),
        ("2", "A", True),
        ("B", "2", True),
        ("R", "B", True),
        ("TTT+3", "999+A", True),         # the kicker does not count
        ("999+A", "999+3", False),        # equal main ranks never beat each other
    ],
)
def test_comparison(high: str, low: str, beats: bool) -> None:
    assert Move(high).beats(Move(low)) is beats


def test_leading_player_may_not_pass_and_must_hold_the_cards() -> None:
    s = new([LANDLORD, FARMER_1, FARMER_2], "AAR")
    s = play(s, "bid 1", "pass", "pass")
    before = GAME.encode(s)
    with pytest.raises(IllegalMove, match="lead"):
        GAME.apply(s, 0, Move("pass"))
    with pytest.raises(IllegalMove, match="does not hold"):
        GAME.apply(s, 0, Move("2222"))
    with pytest.raises(IllegalMove, match="turn"):
        GAME.apply(s, 1, Move("3"))
    assert GAME.encode(s) == before
    s = play(s, "666+4")
    with pytest.raises(IllegalMove, match="cannot beat"):
        GAME.apply(s, 1, Move("8"))


def test_two_passes_give_the_lead_back() -> None:
    s = new([LANDLORD, FARMER_1, FARMER_2], "AAR")
    s = play(s, "bid 1", "pass", "pass", "9", "pass", "pass")
    assert GAME.to_act(s) == {0} and s.last is None
    assert Move("pass") not in GAME.legal_moves(s, 0)


def test_multi_deal_match_totals_and_winners() -> None:
    s = GAME.new_game(3, {"deals": 2}, seed="match")
    import random

    rng = random.Random(5)
    deals_seen = set()
    while not GAME.is_over(s):
        deals_seen.add(GAME.deal_number(s))
        seat = s.to_act
        s = GAME.apply(s, seat, rng.choice(GAME.legal_moves(s, seat)))
    res = GAME.result(s)
    assert deals_seen == {0, 1} and res.deals_played == 2
    assert res.totals == tuple(a + b for a, b in zip(s.history[0].scores, s.history[1].scores, strict=False))
    best = max(res.totals)
    assert res.winners == tuple(i for i in range(3) if res.totals[i] == best)


def _landlord_alone(s):
    """Bid 1 from the first bidder, the others pass; the landlord then plays one single at a
    time and the farmers always pass, so he goes out alone (no bomb, a landlord spring)."""
    first = s.to_act
    s = play(s, "bid 1", "pass", "pass")
    assert s.landlord == first
    deal = GAME.deal_number(s)
    while GAME.deal_number(s) == deal and not GAME.is_over(s):
        seat = s.to_act
        if seat == s.landlord:
            move = next(m for m in GAME.legal_moves(s, seat) if len(m.text) == 1)  # a single
        else:
            move = Move("pass")
        s = GAME.apply(s, seat, move)
    return s, first


def test_equal_top_totals_are_a_draw_with_every_tied_seat_winning() -> None:
    s = new([LANDLORD, FARMER_1, FARMER_2], "AAR", deals=2)
    s, first = _landlord_alone(s)
    assert first == 0  # the fixed first deal: seat 0 holds the face-up card
    s, second = _landlord_alone(s)  # the second deal is shuffled from the seed
    assert second == 2
    # each deal: bid 1, doubled for the spring = 2; the landlord +4, each farmer -2
    assert [d.scores for d in s.history] == [(4, -2, -2), (-2, -2, 4)]
    res = GAME.result(s)
    assert res.finished and res.totals == (2, -4, 2)
    assert res.winners == (0, 2)  # seats 0 and 2 share the highest total: a draw


@pytest.mark.parametrize(
    ("text", "kind", "top", "length", "cards"),
    [
        ("888+33", "trio with a pair", "8", 1, 5),
        ("333444", "airplane", "4", 2, 6),
        ("333444+57", "airplane with single wings", "4", 2, 8),
        ("5555+6699", "four with two pairs", "5", 1, 8),
        ("333444555666+7777", "airplane with single wings", "6", 4, 16),
        ("333444+66", "airplane with single wings", "4", 2, 8),  # wings may share a rank
        ("5555+69", "four with two singles", "5", 1, 6),
        ("5555", "bomb", "5", 1, 4),
        ("BR", "rocket", "R", 1, 2),
    ],
)
def test_the_rulebooks_combinations_classify_as_their_kind(
    text: str, kind: str, top: str, length: int, cards: int
) -> None:
    move = Move(text)
    assert move.text == text
    assert (KIND_NAMES[move.kind], RANKS[move.rank], move.length, move.n_cards) == (
        kind, top, length, cards)


@pytest.mark.parametrize(
    ("typed", "canonical"),
    [
        ("tttjjj+4499", "TTTJJJ+4499"),   # lower case
        ("10 10 10+3", "TTT+3"),          # 10 for T, spaces
        ("10jqka", "TJQKA"),
        ("7 6 5 4 3", "34567"),           # any order inside a part
        ("999+3", "999+3"),
        ("TTTJJJ+9944", "TTTJJJ+4499"),
        ("b r", "BR"),
    ],
)
def test_the_parser_accepts_what_the_rulebook_allows(typed: str, canonical: str) -> None:
    assert Move(typed) is Move(canonical)


def test_the_main_part_comes_first() -> None:
    with pytest.raises(ValueError, match="takes no kickers"):
        Move("3+888")
    assert Move("888+3").text == "888+3"


@pytest.mark.parametrize(
    ("options", "why"),
    [
        ({"deals": 0}, "at least 1"),
        ({"deals": 2.5}, "integer"),
        ({"deck": "3s 3h"}, "54 cards"),
        ({"deck": "3s " * 54}, "repeated"),
        ({"face_up": 51}, "at most 50"),
        ({"colour": "red"}, "unknown option"),
    ],
)
def test_bad_options(options: dict, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        GAME.new_game(3, options, seed="x")
    with pytest.raises(ValueError, match="exactly 3"):
        GAME.new_game(4, {}, seed="x")


def _mask(i: int) -> int:
    """The rank mask (bit 4r for rank r) of the low 15 bits of i."""
    return sum(1 << (4 * r) for r in range(15) if i >> r & 1)


def test_every_move_cache_is_bounded_and_starts_afresh_past_its_bound() -> None:
    """A bot process meets new hands for as long as it lives: no cache may keep them all."""
    from engines.dou_dizhu import moves

    singles = [Move(r) for r in RANKS]
    low13 = (1 << 13) - 1  # 3 to 2: the ranks that pair up
    fill = {  # the i-th distinct key of each cache that may exceed its bound, as a real call
        "bombs": lambda i: moves._gen4(_mask(i & low13) | _mask(i >> 13 & 3) << 52),
        "trio_singles": lambda i: moves._gen_trio_single(_mask(i & low13), _mask(i >> 13)),
        "trio_pairs": lambda i: moves._gen_trio_pair(_mask(i & low13), _mask(i >> 13 & low13)),
        "plane_wings": lambda i: moves._gen_plane_wings(_mask(i), 0, 0),
        "fours": lambda i: moves._gen_four(0, _mask(i), 0),
        "lead": lambda i: moves.lead_moves(_mask(i & 0x7FFF) + 2 * _mask(i >> 15 & low13)),
        "follow": lambda i: moves.follow_moves(_mask(i // 15 + 1), singles[i % 15]),
    }
    every_key = {"singles": 1 << 15, "pairs": 1 << 13, "trios": 1 << 13}  # 15 or 13 ranks
    assert set(moves.CACHES) == set(moves.CACHE_SIZES) == set(fill) | set(every_key)
    for name, count in every_key.items():
        assert moves.CACHE_SIZES[name] >= count, f"{name}: every key fits"
    for name, call in fill.items():
        cache, bound = moves.CACHES[name], moves.CACHE_SIZES[name]
        cache.clear()
        largest = 0
        for i in range(bound + 10):
            call(i)
            largest = max(largest, len(cache))
        assert largest == bound and 0 < len(cache) <= bound, name
    # no other table of the module grows with the hands it sees: the interning tables hold
    # each move once, and the set of Dou Dizhu moves is finite
    caches = [id(c) for c in moves.CACHES.values()]
    tables = {n for n, v in vars(moves).items()
              if isinstance(v, dict | list) and n[:2] != "__" and id(v) not in caches}
    assert tables == {"KIND_NAMES", "_UNIT", "_INTERN", "_BY_ID", "_BY_KEY", "CACHE_SIZES",
                      "CACHES"}


def test_moves_stay_right_after_their_caches_start_afresh() -> None:
    from engines.dou_dizhu import moves

    hand = Move("333444+57").cards + Move("TT").cards + Move("KKKK").cards
    lead, follow = moves.lead_moves(hand), moves.follow_moves(hand, Move("555+6"))
    for cache in moves.CACHES.values():
        cache.clear()
    assert moves.lead_moves(hand) == lead and moves.follow_moves(hand, Move("555+6")) == follow
    assert Move("KKKK") in follow and Move("KKK+T") in follow and Move("TTT+3") not in follow


def test_the_wire_cache_of_views_is_bounded() -> None:
    from engines.dou_dizhu import game as dou_dizhu_game

    limit = dou_dizhu_game.ACTION_WIRE_LIMIT
    bids = dou_dizhu_game._ACTION_WIRE[dou_dizhu_game.pb.DouDizhuView][0]
    state = GAME.new_game(3, {}, seed="wire")
    for start in range(0, limit + 1000, 500):  # (seat, bid) pairs, each one new
        s = state.copy()
        s.bidding = tuple((seat, 1 + seat % 3) for seat in range(start, start + 500))
        dou_dizhu_game._fill_actions(dou_dizhu_game.pb.DouDizhuView(), s)
        assert len(bids) <= limit
    assert 0 < len(bids) < limit
