"""What the rules bound in an episode: its returns and its number of moves, per game and options.

OpenSpiel asks every game for its utility range and its longest game; search and learning code
scales values and sizes buffers by them, so they are derived here from the rules (seeds/) as
the tightest simple bounds that hold for every play, each with its reasoning. The tests play
random matches and check no episode leaves them, and that they stay within a small factor of
what play reaches.

Moves are those the environments offer (the acting seat's, out-of-turn calls excepted).

>>> utility_bounds("sobe_e_desce", 4, {"start_score": 20, "max_deals": 1})
(-30.0, 90.0)
>>> max_moves("sobe_e_desce", 4, {"start_score": 20, "max_deals": 1})
25
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engines.dos.cards import COPIES as DOS_COPIES
from engines.dos.cards import DECK_SIZE as DOS_DECK
from engines.dos.cards import POINTS as DOS_POINTS

# Dou Dizhu: a deal is worth bid x 2^bombs (x2 for a spring); the landlord wins or loses
# twice that, each farmer once. A deal ends when one hand is empty, so the two others keep a
# card each: at most 52 of the 54 cards are played, hence at most 13 bombs (13 x 4 cards, or
# 12 and the rocket). A spring leaves the farmers silent (at most the landlord's 20 cards:
# 5 bombs) or the landlord after one play (at most 1 + 4 + 4 bombs), so it never beats 13
# bombs without one.
DOU_DIZHU_MAX_BID = 3
DOU_DIZHU_MAX_BOMBS = 13
DOU_DIZHU_DEAL = 2 * DOU_DIZHU_MAX_BID * 2**DOU_DIZHU_MAX_BOMBS  # 49,152: the landlord's most
# Moves: each bidding is at most one call per seat (3), and up to `max_redeals` all-pass
# biddings come before the landlord is forced; then at most 52 plays of one card or more,
# each followed by at most two passes but the last.
DOU_DIZHU_PLAYED = 52

# Doppelkopf: a game value is at most 1 (won) + 3 (under 90, 60, 30) + 1 (schwarz) + 2 x 2
# (re and kontra announced) + 2 x 4 (each party's no 90 .. schwarz) + 4 (reached against
# them) = 21, x3 for a soloist (solos count no special points); a normal game adds at most
# 1 (against the club queens) and 9 special points (6 tricks of 40 or more of the 240 card
# points, 2 foxes, Charlie), 31 < 63.
DOPPELKOPF_DEAL = 3 * 21
# Moves: 4 reservations (healthy or not), at most 4 declarations, at most 10 announcements
# (each raises its party's level, 1..5, at least one step) and the 48 cards (40 in Bistro).
DOPPELKOPF_OTHER_MOVES = 4 + 4 + 10

# Dos: the round's winner scores the points of the cards in the other hands: at most the
# whole deck's. Moves per turn: a catch (before its first move), a draw, the matches and
# added cards (each takes at least one card from the hand, which holds at most the deck but
# one card of each other hand), and the end.
DOS_DECK_POINTS = sum(p * c for p, c in zip(DOS_POINTS, DOS_COPIES, strict=True))  # 1036

# Dobro: a round gives each seat its rank by cards collected (1..n) and one more point to
# the Oubli card's holder (manual_draw only); returns are minus the penalty points. Moves per
# round: every play puts at least one card of the deck (57 cards, 55 with two players) into
# the auction, and every pass takes a non-empty auction, so passes never outnumber plays;
# under manual_draw each play is followed by a draw and an end, and a call needs a forgetting
# (an end short of cards).
DOBRO_DECK = {2: 55}
DOBRO_FULL_DECK = 57

# Sobe e Desce: scores start at `start_score` and a deal moves each by at most 10 (five
# tricks at clubs, -2 each, or +10 for playing with clubs and winning none); at the end each
# loser pays his score (never below 0) to the winner.
SOBE_DEAL_SWING = 10
# Moves per deal: one trump choice, one decision per seat, five tricks of at most 4 cards.
SOBE_DEAL_MOVES = 1 + 4 + 5 * 4


def _dobro_rounds(players: int, options: Mapping[str, Any]) -> int:
    return int(options["rounds"]) or players


def max_deals(game: str, players: int, options: Mapping[str, Any]) -> int:
    """The most deals (rounds) a match of these options plays: 1 makes an episode one deal,
    whose rewards all come at its end."""
    if game == "dos":
        return players * (int(options["target"]) - 1) + 1  # each round scores at least a point
    if game == "dobro":
        return _dobro_rounds(players, options)
    if game == "sobe_e_desce":
        return int(options["max_deals"])
    if game in ("dou_dizhu", "doppelkopf"):
        return int(options["deals"])
    raise ValueError(f"no bounds for game {game!r}")


def utility_bounds(game: str, players: int, options: Mapping[str, Any]) -> tuple[float, float]:
    """(min, max) of any seat's return (its match total) for a match of these options."""
    if game == "dou_dizhu":
        bound = DOU_DIZHU_DEAL * int(options["deals"])
        return -float(bound), float(bound)
    if game == "doppelkopf":
        bound = DOPPELKOPF_DEAL * int(options["deals"])
        return -float(bound), float(bound)
    if game == "dos":
        # the others stay under the target; the winner had at most target - 1 before its
        # last round
        return 0.0, float(int(options["target"]) - 1 + DOS_DECK_POINTS)
    if game == "dobro":
        rounds = _dobro_rounds(players, options)
        worst = players + (1 if options["manual_draw"] else 0)
        return -float(worst * rounds), -float(rounds)
    if game == "sobe_e_desce":
        most = int(options["start_score"]) + SOBE_DEAL_SWING * int(options["max_deals"])
        return -float(most), float((players - 1) * most)
    raise ValueError(f"no bounds for game {game!r}")


def max_moves(game: str, players: int, options: Mapping[str, Any]) -> int:
    """The most moves (decisions, chance excluded) a match of these options can take."""
    if game == "dou_dizhu":
        deal = 3 * int(options["max_redeals"]) + DOU_DIZHU_PLAYED + 2 * (DOU_DIZHU_PLAYED - 1)
        return deal * int(options["deals"])
    if game == "doppelkopf":
        cards = 40 if options["bistro"] else 48
        return (DOPPELKOPF_OTHER_MOVES + cards) * int(options["deals"])
    if game == "dos":
        hand = DOS_DECK - (players - 1)
        turn = 1 + 1 + hand + 1
        # each round lasts at most max_turns turns
        return turn * int(options["max_turns"]) * max_deals(game, players, options)
    if game == "dobro":
        deck = DOBRO_DECK.get(players, DOBRO_FULL_DECK)
        per_play = 5 if options["manual_draw"] else 2  # play, pass (+ draw, end, call)
        return per_play * deck * _dobro_rounds(players, options)
    if game == "sobe_e_desce":
        return SOBE_DEAL_MOVES * int(options["max_deals"])
    raise ValueError(f"no bounds for game {game!r}")


ZERO_SUM = frozenset({"dou_dizhu", "doppelkopf", "sobe_e_desce"})
"""Games whose match totals always sum to zero (Sobe e Desce: the final settlement)."""
