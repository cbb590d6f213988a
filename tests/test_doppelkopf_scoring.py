"""Doppelkopf announcements, winning thresholds, game values, special points, Bistro, duel,
tournament display and sessions (seeds/doppelkopf.md)."""

from __future__ import annotations

import random

import pytest

from engines.contract import IllegalMove
from engines.doppelkopf import GAME, Move
from engines.doppelkopf.cards import TEXT
from engines.doppelkopf.game import PLAYING
from engines.doppelkopf.moves import MARRIAGE_GAME, NORMAL, SOLO_HEARTS, SOLO_SPADES
from engines.doppelkopf.scoring import KONTRA, RE, item_value, outcome, winner
from tests.doppelkopf_support import DEAL_A, autoplay, hand, healthy, new, play

# Seat 0 and seat 1 hold one club queen each (Re); 2 and 3 are Kontra.
DEAL_B = [
    "Qc Jc Ac Ac As As Ah Ah Th Th Kd Kd",
    "Tc Tc Ts Ts Kh Kh 9h 9h Qs Qs Qc Jc",
    DEAL_A[2],
    DEAL_A[3],
]


# --- thresholds -------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("re_points", "re_level", "kontra_level", "expected"),
    [
        (121, 0, 0, RE), (120, 0, 0, KONTRA),          # nothing announced
        (121, 1, 0, RE), (120, 1, 0, KONTRA),          # re only
        (120, 0, 1, RE), (119, 0, 1, KONTRA),          # kontra only: Re wins with 120
        (121, 1, 1, RE), (120, 1, 1, KONTRA),          # both
        (151, 2, 0, RE), (150, 2, 0, KONTRA),          # re no 90
        (181, 3, 1, RE), (180, 3, 1, KONTRA),          # re no 60
        (211, 4, 0, RE), (210, 4, 0, KONTRA),          # re no 30
        (89, 0, 2, KONTRA), (90, 0, 2, RE),            # kontra no 90: Re needs 90
        (59, 1, 3, KONTRA), (60, 1, 3, RE),            # kontra no 60: Re needs 60
        (29, 0, 4, KONTRA), (30, 0, 4, RE),            # kontra no 30: Re needs 30
    ],
)
def test_winning_thresholds(re_points: int, re_level: int, kontra_level: int, expected: int) -> None:
    assert winner(re_points, 6, 6, re_level, kontra_level) == expected


def test_schwarz_needs_every_trick_and_one_trick_beats_it() -> None:
    assert winner(240, 12, 0, 5, 0) == RE
    assert winner(240, 11, 1, 5, 0) == KONTRA  # a trick of 0 points still counts
    assert winner(0, 0, 12, 0, 5) == KONTRA
    assert winner(0, 1, 11, 1, 5) == RE


def test_both_parties_missing_their_announcements_means_nobody_wins() -> None:
    assert winner(130, 6, 6, 2, 2) == -1
    out = outcome(130, 6, 6, 2, 2)
    assert out.winner == -1
    # Re reached 120 against Kontra's no 90; Kontra reached neither 120 against Re's no 90,
    # and neither party is under 90
    assert out.value == 1
    assert out.items == ("nobody won", "re reached against announcement x1")


# --- nobody wins: DDV 7.1.4 with 7.2.2 and 7.2.3 -----------------------------------------

def test_nobody_wins_each_party_counts_what_it_achieved_against_the_other() -> None:
    # Re announced no 30 (needs 211) and made 175; Kontra announced no 90 (needs 151) and made
    # 65: both miss. Re: Kontra under 90 1, 120 reached against Kontra's no 90 1 = 2. Kontra:
    # 60 reached against Re's no 30 1. Neither "won" nor the announcements (re 2, no 90, no 60,
    # no 30, kontra 2, no 90) count. Balance 1 for Re.
    out = outcome(175, 9, 3, 4, 2)
    assert out.winner == -1 and out.value == 1
    assert out.items == ("nobody won", "re held kontra under 90",
                         "re reached against announcement x1",
                         "kontra reached against announcement x1")
    # special points still count for their party: two for Kontra put Kontra ahead by 1
    out = outcome(175, 9, 3, 4, 2, (("doppelkopf", KONTRA), ("fox caught", KONTRA)))
    assert out.value == -1
    # and no "against the club queens": Kontra did not beat them
    assert outcome(175, 9, 3, 4, 2, against_the_old=True).value == 1


def test_nobody_wins_both_parties_announced_schwarz() -> None:
    # Both announced schwarz. Kontra took a single trick worth nothing (9c 9c 9s 9h), Re the
    # other eleven and every point: Re missed schwarz (Kontra has a trick) and Kontra missed
    # everything. Re: Kontra under 90, 60 and 30 3 (not schwarz: a trick of 0 points is a
    # trick) + 120, 90, 60 and 30 reached against Kontra's no 90 ... schwarz 4 = 7. Kontra:
    # nothing (0 points reach nothing against Re's announcements).
    assert winner(240, 11, 1, 5, 5) == -1
    out = outcome(240, 11, 1, 5, 5)
    assert out.value == 7
    assert out.items == ("nobody won", "re held kontra under 90", "re held kontra under 60",
                         "re held kontra under 30", "re reached against announcement x4")
    # Kontra's one trick worth 35: Re 2 + 4, Kontra 30 reached against Re's schwarz 1
    out = outcome(205, 11, 1, 5, 5)
    assert out.value == 5 and "kontra reached against announcement x1" in out.items


def test_nobody_wins_only_when_both_parties_took_a_trick() -> None:
    # "Schwarz on both sides" cannot happen: with all twelve tricks (and 240 points) a party
    # meets any target it set, so a deal that nobody wins never counts "without a trick"; and
    # with 240 points between them at most one party is ever held under 90, 60 or 30.
    for re_level in range(6):
        for kontra_level in range(6):
            assert winner(240, 12, 0, re_level, kontra_level) == RE
            assert winner(0, 0, 12, re_level, kontra_level) == KONTRA
            for re_points in range(241):
                for re_tricks in (1, 6, 11):
                    out = outcome(re_points, re_tricks, 12 - re_tricks, re_level, kontra_level)
                    if out.winner >= 0:
                        continue
                    held = [i for i in out.items if " held " in i]
                    assert len({i.split()[0] for i in held}) <= 1
                    assert not any(i.endswith("without a trick") for i in held)


def test_a_deal_nobody_wins_after_schwarz_on_both_sides_is_scored() -> None:
    # DEAL_B played out by each seat's first legal card after `re schwarz` (seat 0) and
    # `kontra schwarz` (seat 2) before the first card. Re (seats 0, 1) make 76 in 5 tricks,
    # Kontra 164 in 7: both miss. Re: 60 and 30 reached against Kontra's no 30 and schwarz 2,
    # fox caught (trick 4: seat 3's diamond ace to seat 0's Jc) 1 = 3. Kontra: Re under 90 1,
    # 120/90/60/30 reached against Re's no 90/no 60/no 30/schwarz 4 = 5. Kontra is 2 ahead.
    s = autoplay(play(_b(), "0:re schwarz", "2:kontra schwarz"))
    d = s.history[-1]
    assert (d.re_seats, d.re_points, d.re_level, d.kontra_level) == ((0, 1), 76, 5, 5)
    assert d.winner == -1 and d.value == -2 and d.scores == (-2, -2, 2, 2)
    assert d.items == ("nobody won", "re reached against announcement x2",
                       "kontra held re under 90", "kontra reached against announcement x4",
                       "fox caught re")


def test_a_solo_nobody_wins_is_still_tripled_for_the_soloist() -> None:
    # Queen solo by seat 0 on DEAL_B, `re schwarz` and `kontra schwarz` (seat 1), played by
    # the first legal card: the soloist makes 191, Kontra 49 with at least one trick. Re:
    # Kontra under 90 and 60 2 + 4 reached against Kontra's schwarz = 6; Kontra: 30 reached
    # against Re's schwarz 1. Value 5 for the soloist, x3: +15, each opponent -5.
    s = play(new(DEAL_B), "reservation", "healthy", "healthy", "healthy", "solo queens")
    s = autoplay(play(s, "0:re schwarz", "1:kontra schwarz"))
    d = s.history[-1]
    assert d.solo and d.re_seats == (0,) and d.re_points == 191 and d.winner == -1
    assert d.value == 5 and d.scores == (15, -5, -5, -5)
    assert d.items == ("nobody won", "re held kontra under 90", "re held kontra under 60",
                       "re reached against announcement x4",
                       "kontra reached against announcement x1")


# --- game values (worked examples of the rulebook) --------------------------------------

def test_kontra_announced_and_won_with_160_is_worth_5() -> None:
    out = outcome(80, 4, 8, 0, 1, against_the_old=True)
    assert out.winner == KONTRA and out.value == -5  # won, Re under 90, kontra 2, against the old


def test_re_no_60_failing_at_130_is_worth_7_to_kontra() -> None:
    out = outcome(130, 7, 5, 3, 0, against_the_old=True)
    # won, re 2, no 90, no 60, Kontra reached 90 against no 60, against the old
    assert out.winner == KONTRA and out.value == -7


def test_plain_win_and_under_thresholds() -> None:
    assert outcome(121, 6, 6, 0, 0).value == 1
    assert outcome(151, 6, 6, 0, 0).value == 2   # Kontra under 90
    assert outcome(181, 6, 6, 0, 0).value == 3   # under 60
    assert outcome(211, 9, 3, 0, 0).value == 4   # under 30
    assert outcome(240, 12, 0, 0, 0).value == 5  # schwarz
    assert outcome(240, 12, 0, 5, 0).value == 5 + 2 + 4  # re, no 90, no 60, no 30, schwarz


def test_special_points_count_for_their_party_whoever_wins() -> None:
    out = outcome(130, 6, 6, 0, 0, (("doppelkopf", KONTRA), ("fox caught", RE)))
    assert out.value == 1 - 1 + 1


# --- announcements ----------------------------------------------------------------------

def _b():
    return healthy(new(DEAL_B))


def test_re_announced_with_twelve_or_eleven_cards_and_refused_at_ten() -> None:
    s = _b()
    assert GAME.to_act(s) == {0, 1, 2, 3}  # everybody may announce before the first card
    assert "re" in [m.text for m in GAME.legal_moves(s, 1)]
    s1 = play(s, "Ac", "0:re")  # seat 0 holds 11 cards: the deadline
    assert s1.levels == (0, 1)
    s2 = play(s, "Ac", "Tc", "Kc", "9d", "Ad", "Kd")  # seat 0 now holds 10
    with pytest.raises(IllegalMove, match="too late"):
        GAME.apply(s2, 0, Move("re"))


def test_no_90_deadline_and_skipping() -> None:
    s = play(_b(), "0:re", "Ac", "Tc", "Kc", "9d", "Ad", "Kd")
    assert "re no 90" in [m.text for m in GAME.legal_moves(s, 0)]  # 10 cards: in time
    s = play(s, "0:re no 90")
    assert s.levels == (0, 2)
    s = play(_b(), "Ac", "0:re no 60")  # 11 cards: skipping re and no 90, both still in time
    assert len(hand(s, 0)) == 11 and s.levels == (0, 3)
    late = play(_b(), "Ac", "Tc", "Kc", "9d", "Ad", "Kd")
    with pytest.raises(IllegalMove, match="too late"):
        GAME.apply(late, 0, Move("re no 90"))  # the skipped re is no longer in time


def test_reply_is_allowed_one_card_later() -> None:
    s = play(_b(), "Ac", "0:re", "Tc", "Kc", "9d", "Ad", "Kd", "Jc", "Js")
    assert s.turn == 1 and len(s.tricks) == 2  # everybody holds 10 cards
    assert [m.text for m in GAME.legal_moves(s, 2)] == [
        "kontra", "kontra no 90", "kontra no 60", "kontra no 30", "kontra schwarz", "pass"]
    s2 = play(s, "2:kontra")
    assert s2.levels == (1, 1)
    # the reply may skip on while no 90 is in time (10 cards), as two moves could
    assert play(s, "2:kontra no 90").levels == play(s2, "2:kontra no 90").levels == (2, 1)
    s3 = play(s, "Ts", "Ks", "Qd", "As")  # seat 2 now holds 9
    assert 2 not in GAME.to_act(s3) or s3.turn == 2
    with pytest.raises(IllegalMove):
        GAME.apply(s3, 2, Move("kontra"))


# The notation paragraph's example: a normal game; seat 2 (a club queen) sends `re` with 11
# cards while seat 3 is to play; a trick later seat 1 (Kontra, 10 cards) answers `kontra`, a
# reply; the player on lead then plays his club ace as `Ac`. Re: seats 0 and 2.
NOTATION_DEAL = [
    "Qc Ac Ac As As Ah Ah Th Ad Td Kd 9d",
    "Tc Tc Kc Ts Ts Ks Kh Kh 9h Qs Qs Jc",
    "Qc Kc 9c 9c Ks 9s 9s 9h Qh Qh Js Js",
    "Th Qd Qd Jc Jh Jh Jd Jd Ad Td Kd 9d",
]


def test_the_notation_example_re_out_of_turn_then_a_kontra_reply_then_ac() -> None:
    s = healthy(new(NOTATION_DEAL))
    s = play(s, "Th", "Jc", "Js")  # trick 1 so far: seats 0, 1, 2
    assert s.turn == 3 and 2 in GAME.to_act(s) and len(hand(s, 2)) == 11
    s = play(s, "2:re")
    assert s.levels == (0, 1) and s.turn == 3
    before_reply = play(s, "9d", "Qc", "Qs", "Qh", "Kd")  # Th wins trick 1, Qc trick 2
    assert before_reply.won == (2, 0, 0, 0) and before_reply.turn == 0
    assert len(hand(before_reply, 1)) == 10 and 1 in GAME.to_act(before_reply)
    s = play(before_reply, "1:kontra")
    assert s.levels == (1, 1)
    # without Re's announcement, 10 cards are too late for kontra: it is a reply
    silent = play(healthy(new(NOTATION_DEAL)), "Th", "Jc", "Js", "9d", "Qc", "Qs", "Qh", "Kd")
    with pytest.raises(IllegalMove, match="too late"):
        GAME.apply(silent, 1, Move("kontra"))
    assert "Ac" in hand(s, 0)
    s = play(s, "Ac")  # seat 0 is on lead
    assert s.leader == 0 and [TEXT[k] for k in s.trick] == ["Ac"]


def test_announcing_for_the_wrong_party_is_refused() -> None:
    with pytest.raises(IllegalMove, match="Kontra side"):
        GAME.apply(_b(), 2, Move("re"))


def test_same_announcement_cannot_be_repeated_by_the_partner() -> None:
    s = play(_b(), "0:re")
    assert "re" not in [m.text for m in GAME.legal_moves(s, 1)]
    with pytest.raises(IllegalMove, match="already"):
        GAME.apply(s, 1, Move("re"))


def test_pass_declines_until_the_trick_ends() -> None:
    s = play(_b(), "2:pass")
    assert 2 not in GAME.to_act(s)
    with pytest.raises(IllegalMove):
        GAME.apply(s, 0, Move("pass"))  # the seat to play cannot pass
    s = play(s, "Ac", "Tc", "Kc", "9d")
    assert 2 in GAME.to_act(s)


def test_a_seat_that_passed_only_plays_its_card_when_its_turn_comes_in_that_trick() -> None:
    s = play(_b(), "2:pass", "Ac", "Tc")  # seat 2 passed before the first card
    assert s.turn == 2 and 2 in GAME.to_act(s) and len(hand(s, 2)) == 12
    legal = GAME.legal_moves(s, 2)
    assert legal and all(m.kind == 0 for m in legal)  # cards only: no kontra, no pass
    assert GAME.legal_moves(GAME.decode(GAME.encode(s)), 2) == legal  # stored with the state
    with pytest.raises(IllegalMove, match="passed"):
        GAME.apply(s, 2, Move("kontra"))
    s = play(s, "Kc")  # seat 2 plays its card as usual
    assert s.turn == 3 and 2 not in GAME.to_act(s)
    assert GAME.decode(GAME.encode(s)).acting == s.acting
    with pytest.raises(IllegalMove, match="passed"):
        GAME.apply(s, 2, Move("kontra"))
    s = play(s, "9d")  # the trick ends: seat 2 (11 cards) is asked again
    assert 2 in GAME.to_act(s)
    assert "kontra" in [m.text for m in GAME.legal_moves(s, 2)]
    assert play(s, "2:kontra").levels == (1, 0)


def test_marriage_shifts_the_deadlines() -> None:
    s = play(new(DEAL_A), "reservation", "healthy", "healthy", "healthy", "marriage")
    s = play(s, "Th", "Jc", "Js", "9d", "Th", "Jc", "Js", "Jd", "Ac", "Tc", "Kc", "9d")
    assert s.clarified == 2 and s.partner == 3  # settled on the third trick: shift 2
    assert "kontra" in [m.text for m in GAME.legal_moves(s, 1)]  # 9 cards: in time
    # one card fewer is too late: seat 1 plays its card of trick 4 and holds 8
    late = play(s, "Jh", "Qc", "Qs")
    assert len(hand(late, 1)) == 8
    assert "kontra" not in [m.text for m in GAME.legal_moves(late, 1)]
    with pytest.raises(IllegalMove, match="too late"):
        GAME.apply(late, 1, Move("kontra"))
    s = play(s, "1:kontra")
    s = play(s, "Jh", "Qc", "Qs", "Qh")
    # 8 cards: re was due by 9, but answers Kontra one card late; no 90 is due by 8, so the
    # reply may go on to it in one move as in two
    assert [m.text for m in GAME.legal_moves(s, 0) if m.kind != 0] == [
        "re", "re no 90", "re no 60", "re no 30", "re schwarz"]
    assert play(s, "0:re no 90").levels == play(s, "0:re", "0:re no 90").levels == (1, 2)
    # the reply, too, is due exactly two cards later than without the marriage: with 7 it is not
    late = play(s, "Ac")  # seat 0 won trick 4 and leads trick 5: 7 cards left
    assert len(hand(late, 0)) == 7 and late.turn == 1
    assert not [m.text for m in GAME.legal_moves(late, 0) if m.kind != 0]
    with pytest.raises(IllegalMove, match="too late"):
        GAME.apply(late, 0, Move("re"))


# --- special points ---------------------------------------------------------------------

def test_doppelkopf_trick_and_fox_caught() -> None:
    # Re: seats 0 and 2 (a club queen each); Kontra: 1 and 3. The hands not listed are filled
    # from the rest of the deck; every card scripted below is a legal follow whatever the fill.
    s = healthy(new({0: "Ac Qc Ad", 1: "Ac Ad Kd", 2: "Tc Qc 9d Kd", 3: "Tc 9d Td"}))
    s = play(s, "Ac", "Ac", "Tc", "Tc")  # 42 points for seat 0 (Re): a doppelkopf
    assert s.pts[0] == 42
    s = play(s, "Qc", "Ad", "9d", "9d")  # Kontra's diamond ace (seat 1) falls to Re's Qc
    assert s.won == (2, 0, 0, 0)
    s = play(s, "Ad", "Kd", "Kd", "Td")  # Re's own diamond ace won by Re: no fox
    assert s.won == (3, 0, 0, 0)
    s = autoplay(s)  # no diamond ace is left in any hand: the foxes are settled
    items = s.history[-1].items
    assert "doppelkopf re" in items
    assert items.count("fox caught re") == 1 and "fox caught kontra" not in items


def test_fox_caught_by_the_other_party() -> None:
    s = play(_b(), "Ac", "Tc", "Kc", "9d", "Ad", "Kd", "Jc", "Js")  # Kontra's fox to Re
    assert s.tricks[-1][2] == 1
    s = autoplay(s)
    assert "fox caught re" in s.history[-1].items


def test_no_special_points_in_solos() -> None:
    s = play(new(DEAL_B), "reservation", "healthy", "healthy", "healthy", "solo diamonds")
    s = play(s, "Ac", "Tc", "Kc", "9d", "Ad", "Kd", "Jc", "Js")
    s = autoplay(s)
    assert not any(i.startswith(("fox", "doppelkopf", "against")) for i in s.history[-1].items)


# Charlie, played card by card. Dealer 3: seat 0 speaks and leads. Seats 0 and 1 hold a club
# queen each (Re), nobody holds both diamond aces (no swines). Winners by hand from the
# rulebook's card order: clubs led, nobody trumps, the highest club wins (tricks 1-5); then
# seat 0 leads its top trumps (Th, Th: the first heart ten wins; Qc before the other Qc; Qs
# over the lower queens and jacks; Ad over Td and Kd) and wins every trick but the last, where
# seat 1's Jc beats Jd, Ad and the diamonds.
CHARLIE_BISTRO = [
    "Ac Ac Tc Tc Th Th Qc Qs Qs Ad",
    "Kc Kc As As Qc Qh Qd Jh Ad Jc",
    "Ts Ts Ks Ks Qh Qd Js Js Jh Jd",
    "Ah Ah Kh Kh Jc Jd Td Td Kd Kd",
]
CHARLIE_BISTRO_TRICKS = [
    "Ac Kc Ts Ah", "Ac Kc Ts Ah", "Tc As Ks Kh", "Tc As Ks Kh", "Th Qh Qh Jc", "Th Qd Qd Jd",
    "Qc Qc Js Td", "Qs Jh Js Td", "Qs Ad Jh Kd", "Ad Jc Jd Kd",
]
# The same idea with nines and 12 cards (no Bistro): seat 0 wins 11 tricks, Jc the 12th.
CHARLIE_NORMAL = [
    "Ac Ac Tc Tc 9c Th Th Qc Qs Qs Ad 9d",
    "Kc Kc 9c As As Qc Qh Qd Jh Ad Td Jc",
    "Ts Ts Ks Ks 9s Qh Qd Js Js Jh Kd Jd",
    "Ah Ah Kh Kh 9h 9h 9s Jc Jd Td Kd 9d",
]
CHARLIE_NORMAL_TRICKS = [
    "Ac Kc Ts Ah", "Ac Kc Ts Ah", "Tc 9c Ks Kh", "Tc As Ks Kh", "9c As 9s 9h", "Th Qh Qh Jc",
    "Th Qd Qd Jd", "Qc Qc Js Td", "Qs Jh Js Kd", "Qs Ad Jh 9d", "Ad Td Kd 9s", "9d Jc Jd 9h",
]


def _play_charlie(s, tricks: list[str]):
    """Play every trick but the last, check seat 0 won them all, then play the last one."""
    for t in tricks[:-1]:
        s = play(s, *t.split())
    assert s.won == (len(tricks) - 1, 0, 0, 0) and s.turn == 0
    return play(s, *tricks[-1].split())


def test_charlie_the_club_jack_taking_the_last_bistro_trick_scores_for_its_party() -> None:
    s = _play_charlie(healthy(new(CHARLIE_BISTRO, bistro=True, deals=1)), CHARLIE_BISTRO_TRICKS)
    d = s.history[-1]
    assert d.re_seats == (0, 1) and d.re_points == 240 and not d.solo
    assert "charlie re" in d.items
    # won 1, Kontra under 90, 60 and 30: 3, schwarz 1, Charlie 1 (Re) = 6
    assert d.value == 6 and d.scores == (6, 6, -6, -6)


def test_no_charlie_in_a_bistro_solo() -> None:
    s = play(new(CHARLIE_BISTRO, bistro=True, deals=1), "reservation", "healthy", "healthy",
             "healthy", "solo diamonds")  # diamond solo: the normal game's trumps
    assert s.turn == 0 and s.levels == (0, 2)  # the soloist leads; re no 90 automatically
    s = _play_charlie(s, CHARLIE_BISTRO_TRICKS)
    d = s.history[-1]
    assert d.solo and d.re_seats == (0,) and d.re_points == 240 - 19
    assert not any(i.startswith("charlie") for i in d.items)
    # won 1, Kontra (19) under 90, 60 and 30: 3, re 2, no 90 1 = 7, the soloist gets 3 x 7
    assert d.value == 7 and d.scores == (21, -7, -7, -7)


def test_no_charlie_outside_bistro() -> None:
    s = _play_charlie(healthy(new(CHARLIE_NORMAL, deals=1)), CHARLIE_NORMAL_TRICKS)
    d = s.history[-1]
    assert d.re_seats == (0, 1) and d.re_points == 240
    assert not any(i.startswith("charlie") for i in d.items)
    assert d.value == 5 and d.scores == (5, 5, -5, -5)  # won, under 90/60/30, schwarz


def autoplay_one(s):
    seat = s.turn
    return GAME.apply(s, seat, next(m for m in GAME.legal_moves(s, seat) if m.kind == 0))


# --- Bistro -----------------------------------------------------------------------------

def _bistro_swines():
    spec = {0: "Qc", 1: "Qc", 2: "Ad Ad", 3: "Th"}
    return healthy(new(spec, bistro=True))


def test_swines_beat_the_heart_ten_and_show_when_played() -> None:
    s = _bistro_swines()
    assert s.swines == 2 and GAME.view(s, 0).swines == -2  # not shown yet
    trumps0 = [m.text for m in GAME.legal_moves(s, 0) if m.text in ("Qc",)]
    s = play(s, trumps0[0])
    t1 = [m.text for m in GAME.legal_moves(s, 1) if m.kind == 0][0]
    s = play(s, t1, "Ad")
    assert GAME.view(s, 0).swines == 2
    t3 = "Th" if "Th" in hand(s, 3) else [m.text for m in GAME.legal_moves(s, 3) if m.kind == 0][0]
    s = play(s, t3)
    assert s.tricks[-1][2] == 2


def test_no_swines_in_a_solo_or_outside_bistro() -> None:
    spec = {0: "Qc", 1: "Qc", 2: "Ad Ad"}
    s = play(new(spec, bistro=True), "healthy", "healthy", "reservation", "healthy", "solo jacks")
    assert s.swines == -1
    assert healthy(new(spec)).swines == -1


def test_bistro_solo_starts_with_no_90_and_kontra_may_reply() -> None:
    s = play(new({}, bistro=True), "healthy", "reservation", "healthy", "healthy", "solo queens")
    assert s.levels == (0, 2) and s.turn == 1
    assert "kontra" in [m.text for m in GAME.legal_moves(s, 0)]
    assert [m.text for m in GAME.legal_moves(s, 1) if m.kind != 0][0] == "re no 60"


def test_bistro_next_deck_is_the_won_tricks_cut_and_dealt_3_4_3() -> None:
    # Rulebook example 11: after a deal with dealer 3 the won tricks of seats 0, 1, 2, 3 are
    # stacked in that order (each seat's tricks in the order won, each trick in play order),
    # cut, and dealt 3-4-3 from seat 1 by the new dealer, seat 0.
    s = healthy(new(CHARLIE_BISTRO, bistro=True, deals=2))
    assert s.dealer == 3
    last = _play_charlie(s, CHARLIE_BISTRO_TRICKS)
    assert last.deal_number == 1 and last.dealer == 0
    # seat 0 won tricks 1-9, seat 1 trick 10, seats 2 and 3 nothing
    piles = " ".join(CHARLIE_BISTRO_TRICKS).split()
    new_hands = [hand(last, x) for x in range(4)]
    found = []
    for cut in range(40):
        deck = piles[cut:] + piles[:cut]
        # packets of 3, 4, 3 to seats 1, 2, 3, 0 in turn: positions written out by hand
        dealt = {
            1: deck[0:3] + deck[12:16] + deck[28:31],
            2: deck[3:6] + deck[16:20] + deck[31:34],
            3: deck[6:9] + deck[20:24] + deck[34:37],
            0: deck[9:12] + deck[24:28] + deck[37:40],
        }
        if [sorted(dealt[x]) for x in range(4)] == new_hands:
            found.append(cut)
    assert found, "the new hands are not a cut of the gathered piles dealt 3-4-3"


# --- duel -------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", [str(i) for i in range(30)])
def test_duel_people_never_share_a_party_in_a_normal_game(seed: str) -> None:
    s = GAME.new_game(4, {"duel": True}, seed)
    q = [hand(s, x).count("Qc") for x in range(4)]
    if q[1] < 2 and q[3] < 2:
        assert (q[0] > 0) != (q[2] > 0)


def test_duel_computers_make_no_announcements_and_no_solo() -> None:
    s = new(DEAL_B, duel=True)
    assert [m.text for m in GAME.legal_moves(play(s, "healthy"), 1)] == ["healthy"]
    s = healthy(s)
    assert GAME.legal_moves(s, 1) == () and 1 not in GAME.to_act(s)
    with pytest.raises(IllegalMove, match="computers"):
        GAME.apply(s, 1, Move("re"))


def test_duel_person_marriage_partner_must_be_a_computer() -> None:
    s = play(new(DEAL_A, duel=True), "reservation", "healthy", "healthy", "healthy", "marriage")
    s1 = play(s, "Ac", "Tc", "Kc", "9d")
    assert s1.partner == 3
    # the other person wins a trick and no computer does: the deal ends without score
    s2 = play(s, "Kd", "Jc", "Qh", "9d", "Qh", "9d", "Th", "Jc", "Th", "Qs", "Js", "Jd")
    assert s2.deal_number == 1 and s2.history[-1].no_score and s2.history[-1].scores == (0,) * 4


def test_duel_person_bride_winning_three_tricks_plays_alone() -> None:
    s = play(new(DEAL_A, duel=True), "reservation", "healthy", "healthy", "healthy", "marriage")
    s = play(s, "Th", "Jc", "Js", "9d", "Th", "Jc", "Js", "Jd", "Qc", "Qs", "Qh", "Qd")
    assert s.phase == PLAYING and s.clarified == 2 and s.partner == -1


def test_duel_computer_marriage() -> None:
    rotated = [DEAL_A[3], DEAL_A[0], DEAL_A[1], DEAL_A[2]]
    s = new(rotated, duel=True)
    s = play(s, "healthy")
    assert [m.text for m in GAME.legal_moves(s, 1)] == ["reservation"]
    s = play(s, "reservation", "healthy", "healthy")
    assert [m.text for m in GAME.legal_moves(s, 1)] == ["marriage"]
    s = play(s, "marriage")
    s1 = play(s, "9d", "Kd", "Jc", "Js")
    assert s1.partner == 2  # a person won the trick
    # the other computer's tricks do not count; no person wins one of three: no score
    s2 = play(s, "9d", "Kd", "Jc", "Qh", "Qh", "9d", "Kd", "Jc", "Js", "Jd", "Qc", "Qs")
    assert s2.deal_number == 1 and s2.history[-1].no_score


# --- display and sessions ---------------------------------------------------------------

def test_tournament_display_shows_the_raw_history_only() -> None:
    s = play(healthy(new(DEAL_B, tournament=True)), "0:re", "Ac", "Tc", "Kc", "9d")
    v = GAME.view(s, 2)
    assert not v.parties and not v.points and v.re_level == 0 and not v.voids
    assert [a.move for a in v.announcements] == ["re"] and len(v.tricks) == 1
    full = GAME.view(play(healthy(new(DEAL_B)), "0:re", "Ac", "Tc", "Kc", "9d"), 2)
    assert list(full.parties) == [1, -1, 0, -1] and full.re_level == 1 and full.points[3] == 25


def test_session_of_deals_rotates_the_dealer_and_ends() -> None:
    s = GAME.new_game(4, {"deals": 2, "dealer": 0}, "sess")
    s = autoplay(healthy(s))
    assert s.deal_number == 1 and s.dealer == 1
    s = autoplay(healthy(s))
    res = GAME.result(s)
    assert res.finished and res.deals_played == 2 and sum(res.totals) == 0
    assert res.winners == tuple(x for x in range(4) if res.totals[x] == max(res.totals))


def test_target_points_end_the_session_early_or_without_winner() -> None:
    s = autoplay(healthy(GAME.new_game(4, {"deals": 5, "target_points": 1}, "t")))
    res = GAME.result(s)
    # this seed's first deal: Re (0, 2) makes 154, Kontra catches a fox: won 1 + Kontra under
    # 90 1 - fox 1 = 1, so seats 0 and 2 reach the target of 1 after one deal
    d = s.history[0]
    assert (d.re_seats, d.re_points, d.items) == ((0, 2), 154, ("won", "under 90", "fox caught kontra"))
    assert res.totals == (1, -1, 1, -1)
    assert res.finished and res.deals_played == 1 and res.winners == (0, 2)
    s = autoplay(healthy(GAME.new_game(4, {"deals": 1, "target_points": 500}, "t")))
    res = GAME.result(s)
    assert res.finished and res.winners == ()


def test_every_deal_is_zero_sum_and_solos_triple() -> None:
    rng = random.Random(7)
    s = GAME.new_game(4, {"deals": 30}, "zs")
    while not GAME.is_over(s):
        seat = rng.choice(sorted(GAME.to_act(s)))
        s = GAME.apply(s, seat, rng.choice(list(GAME.legal_moves(s, seat))))
    for d in s.history:
        assert sum(d.scores) == 0
        if d.solo:
            assert d.scores[d.declarer] == 3 * d.value
            assert all(d.scores[x] == -d.value for x in range(4) if x != d.declarer)
        else:
            assert len(d.re_seats) == 2
            assert all(d.scores[x] == (d.value if x in d.re_seats else -d.value) for x in range(4))
    # both branches above ran: the random play produced solos and two-against-two deals
    assert any(d.solo for d in s.history) and any(not d.solo for d in s.history)


# --- complete deals checked by hand (seeds/doppelkopf.md, "Worked deals") ---------------

def _worked() -> list[dict]:
    import json
    from pathlib import Path

    return json.loads((Path(__file__).parent / "data" / "doppelkopf_worked_deals.json").read_text())


# The rulebook's table, row by row: game (contract, declarer), Re seats, winner, counted items.
_WON, _U90, _U60, _U30 = "won", "under 90", "under 60", "under 30"
_RE, _KO, _OLD = "re announced", "kontra announced", "against the club queens"
WORKED_ROWS = {
    "worked-0": ((NORMAL, -1), (0, 3), KONTRA, (_WON, _U90, _RE, _KO, _OLD)),
    "worked-1": ((NORMAL, -1), (0, 1), KONTRA, (_WON, _RE, _KO, _OLD)),
    "worked-2": ((NORMAL, -1), (1, 2), RE, (_WON, _RE, _KO, "fox caught kontra")),
    "worked-3": ((SOLO_HEARTS, 2), (2,), KONTRA, (_WON, _RE)),
    "worked-4": ((NORMAL, -1), (0, 3), RE, (_WON, _RE, _KO)),
    "worked-5": ((MARRIAGE_GAME, 1), (0, 1), RE, (_WON, _U90, _RE, _KO, "fox caught kontra")),
    "worked-6": ((NORMAL, -1), (1, 3), RE, (_WON, _RE)),
    "worked-7": ((SOLO_SPADES, 0), (0,), KONTRA, (_WON, _RE, _KO)),
    "worked-8": ((NORMAL, -1), (0, 1), KONTRA, (_WON, _U90, _RE, _KO, _OLD, "fox caught kontra")),
    "worked-9": ((NORMAL, -1), (1, 3), RE,
                 (_WON, _U90, _U60, _RE, "fox caught re", "doppelkopf re")),
    "worked-10": ((NORMAL, -1), (0, 3), RE, (_WON, _U90, _U60, _U30, _RE, "fox caught re")),
    "worked-11": ((MARRIAGE_GAME, 2), (0, 2), RE, (_WON, _RE, _KO, "doppelkopf re")),
    "worked-12": ((NORMAL, -1), (0, 2), KONTRA, (_WON, _RE, _OLD)),
    "worked-13": ((NORMAL, -1), (0, 1), RE,
                  (_WON, _U90, _U60, _RE, "fox caught re", "fox caught re")),
}


@pytest.mark.parametrize("deal", _worked(), ids=lambda d: d["seed"])
def test_worked_deals_replay_to_their_hand_checked_values(deal: dict) -> None:
    s = GAME.new_game(4, deal["options"], deal["seed"])
    for step in deal["moves"].split(" | "):
        seat, text = step.split(":", 1)
        s = GAME.apply(s, int(seat), Move(text))
    assert GAME.is_over(s)
    d = s.history[-1]
    assert (d.re_points, d.value, list(d.scores)) == (deal["re_points"], deal["value"], deal["scores"])
    game, re_seats, won, items = WORKED_ROWS[deal["seed"]]
    assert (d.contract, d.declarer) == game
    assert d.re_seats == re_seats and d.winner == won
    assert d.items == items


def test_every_worked_deal_has_its_row() -> None:
    assert sorted(d["seed"] for d in _worked()) == sorted(WORKED_ROWS)


def _advance_until(s, seat: int, held: int):
    """Play each turn's first legal card until `seat` holds `held` cards."""
    while len(hand(s, seat)) > held:
        s = autoplay_one(s)
    return s


@pytest.mark.parametrize("bistro", [False, True])
@pytest.mark.parametrize(("level", "text"), [(1, "re"), (2, "re no 90"), (3, "re no 60"),
                                             (4, "re no 30"), (5, "re schwarz")])
def test_each_announcement_at_its_deadline_and_one_card_late(level: int, text: str, bistro: bool) -> None:
    h = 10 if bistro else 12
    spec = {0: "Qc", 1: "Qc"}
    base = healthy(new(spec, bistro=bistro))
    steps = ["re", "re no 90", "re no 60", "re no 30"][: level - 1]
    base = play(base, *(f"0:{t}" for t in steps))  # earlier levels made in time
    on_time = _advance_until(base, 0, h - level)
    assert text in [m.text for m in GAME.legal_moves(on_time, 0)]
    assert play(on_time, f"0:{text}").levels[1] == level
    late = _advance_until(base, 0, h - level - 1)
    assert text not in [m.text for m in GAME.legal_moves(late, 0)]
    with pytest.raises(IllegalMove, match="too late"):
        GAME.apply(late, 0, Move(text))


def test_samples_keep_shown_swines_with_their_holder() -> None:
    s = _bistro_swines()
    s = play(s, "Qc")
    s = play(s, [m.text for m in GAME.legal_moves(s, 1) if m.kind == 0][0], "Ad")
    rng = random.Random(9)
    for observer in (None, 0, 1, 3):
        v = GAME.view(s, observer)
        assert v.swines == 2
        for _ in range(10):
            g = GAME.sample(v, rng)
            assert "Ad" in hand(g, 2) and GAME.view(g, observer) == v


# --- each counted item's points (what the terminal shows beside it) -----------------------

def test_the_counted_items_points_add_up_to_the_value() -> None:
    """Every item `outcome` counts reads back as its points, and they sum to the value: in
    won and nobody-won deals, with announcements, against the club queens and specials."""
    rng = random.Random(35)
    names = ("doppelkopf", "fox caught", "charlie")
    kinds: set[str] = set()
    for _ in range(4000):
        re_points = rng.choice([0, 29, 30, 59, 60, 89, 90, 119, 120, 121, 150, 151, 181, 211,
                                240, rng.randint(0, 240)])
        re_tricks = 0 if re_points == 0 and rng.random() < 0.5 else rng.randint(1, 11)
        kontra_tricks = 0 if re_points == 240 and rng.random() < 0.5 else 12 - re_tricks
        specials = tuple((rng.choice(names), rng.choice((RE, KONTRA)))
                         for _ in range(rng.randint(0, 3)))
        out = outcome(re_points, re_tricks, kontra_tricks, rng.randint(0, 5), rng.randint(0, 5),
                      specials, against_the_old=rng.random() < 0.5)
        assert sum(item_value(i, out.winner) for i in out.items) == out.value, out
        kinds.add("won" if out.winner >= 0 else "nobody")
    assert kinds == {"won", "nobody"}


def test_an_unknown_item_is_refused() -> None:
    with pytest.raises(ValueError, match="not a counted item"):
        item_value("made up", RE)
