"""Doppelkopf as a research environment: 49 actions and a 535-float view of one seat.

The same codec serves every option set (Bistro, duel, tournament display): the action space
is the union of all of them, so an action means the same move whatever the table; a move the
options rule out (a pure solo without Bistro) is simply never legal.

Actions (Discrete(49)); the two copies of a card are one action, since they are the same move:

    0-23   a card, by kind suit * 6 + rank (suits c s h d, ranks A T K Q J 9):
           0 Ac, 1 Tc, 2 Kc, 3 Qc, 4 Jc, 5 9c, 6 As ... 12 Ah, 13 Th ... 18 Ad ... 23 9d
    24     healthy
    25     reservation
    26     marriage
    27-37  solo diamonds, hearts, spades, clubs, queens, jacks, aces, pure clubs,
           pure spades, pure hearts, pure diamonds (action 25 + contract number)
    38-42  re, re no 90, re no 60, re no 30, re schwarz (37 + level)
    43-47  kontra, kontra no 90, kontra no 60, kontra no 30, kontra schwarz (42 + level)
    48     pass (a seat asked out of turn declines to announce until the trick ends)

Worked example: seat 0 leads the first trick of a normal game (a silent marriage: it holds
both club queens), so it may play any card kind it holds or announce re at any level:

>>> from engines.doppelkopf import GAME, Move, deck_from_hands
>>> hands = ["Qc Qc Ac Ac As As Ah Ah Th Th Kd Kd", "Tc Tc Ts Ts Kh Kh 9h 9h Qs Qs Jc Jc",
...          "Kc Kc Ks Ks 9c 9c 9s 9s Qh Qh Js Js", "Td Td Qd Qd Jh Jh Jd Jd Ad Ad 9d 9d"]
>>> s = GAME.new_game(4, {"deck": deck_from_hands(hands), "dealer": 3}, seed="doc")
>>> for seat in range(4):
...     s = GAME.apply(s, seat, Move("healthy"))
>>> [CODEC.action(s, 0, m) for m in GAME.legal_moves(s, 0)]
[0, 3, 6, 12, 13, 20, 38, 39, 40, 41, 42]
>>> [CODEC.action_name(a, 4, {}) for a in (3, 13, 39)]
['Qc', 'Th', 're no 90']

Observation (float32, shape (535,)), built from the seat's view message only. "rel" blocks
have four rows, one per seat relative to the observer: row r is seat (observer + r) % 4
(r = 0 the observer, 1 the next seat to play after it, ...); a spectator observes as seat 0.

    offset len  feature
    0      24   own hand: copies held of each card kind / 2
    24     96   rel x 24: copies of each kind the seat has played this deal (tricks and the
                open trick) / 2
    120    96   rel x 24: the card the seat has put into the open trick, one-hot
    216    4    rel: leader of the open trick (card play only)
    220    4    rel: the seat to play a card (card play only)
    224    4    rel: dealer
    228    4    the observer's absolute seat (in duel mode 0, 2 are people, 1, 3 computers)
    232    4    phase: reservations, declaration, playing, over
    236    56   rel x 14: reservation calls the seat made (healthy, reservation, marriage,
                the 11 solos: actions 24-37 in order)
    292    13   public contract, one-hot: normal, marriage, the solos in action order
    305    4    rel: declarer (soloist or bride)
    309    40   rel x 10: announcements the seat made (actions 38-47 in order)
    349    4    rel: the seat passed in the current trick
    353    6    Kontra's level, one-hot: 0 none, 1 kontra, 2 no 90 ... 5 schwarz
    359    6    Re's level, one-hot (a Bistro solo stands at 2 from its declaration)
    365    12   rel x 3: the seat's party as the observer knows it: Kontra, Re, unknown
    377    20   rel x 5: following suits the seat has shown void in: c, s, h, d, trump
    397    4    rel: the marriage partner once found
    401    5    swines (Bistro): rel seat shown holding both Ad, or 1 at 405 for nobody;
                all zero while not shown
    406    5    suit to follow in the open trick: c, s, h, d, trump
    411    4    rel: card points taken this deal / 240
    415    4    rel: tricks won this deal / 12
    419    4    rel: cards in hand / 12
    423    4    rel: session totals / 100
    427    96   rel x 24: the card the seat played in the last finished trick, one-hot
    523    4    rel: winner of the last finished trick
    527    8    deal number / deals, 1 / deals, finished tricks / 12, bistro, duel,
                tournament, target_points > 0, target_points / 1000

Derived view fields (levels aside: they are recomputed from the announcements) follow the
view: under the tournament display parties are all unknown and voids, partner and suit to
follow are empty, as the view leaves them. The previous deals' history (besides the totals)
and Bistro's uncut deck are not encoded.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from engines.cache import remember
from engines.doppelkopf.cards import N_KINDS, POINTS, TEXT
from engines.doppelkopf.moves import (
    ANNOUNCE_MOVES,
    CARD_MOVES,
    HEALTHY_MOVE,
    MARRIAGE_MOVE,
    PASS_MOVE,
    RESERVATION_MOVE,
    SOLO_MOVES,
    SOLOS,
    Move,
)

PLAYERS = 4
SOLO_BASE = 27
RE_BASE, KONTRA_BASE = 38, 43
PASS_ACTION = 48
NUM_ACTIONS = 49

MOVES: tuple[Move, ...] = (
    *CARD_MOVES,
    HEALTHY_MOVE,
    RESERVATION_MOVE,
    MARRIAGE_MOVE,
    *(SOLO_MOVES[c] for c in SOLOS),
    *(ANNOUNCE_MOVES[(1, lv)] for lv in range(1, 6)),
    *(ANNOUNCE_MOVES[(0, lv)] for lv in range(1, 6)),
    PASS_MOVE,
)
_ACTION: dict[Move, int] = {m: a for a, m in enumerate(MOVES)}
_ACTION_BY_TEXT: dict[str, int] = {m.text: a for a, m in enumerate(MOVES)}
_CARD: dict[str, int] = {TEXT[k]: k for k in range(N_KINDS)}

# observation offsets
O_HAND = 0
O_PLAYED = O_HAND + N_KINDS
O_TRICK = O_PLAYED + PLAYERS * N_KINDS
O_LEADER = O_TRICK + PLAYERS * N_KINDS
O_TURN = O_LEADER + PLAYERS
O_DEALER = O_TURN + PLAYERS
O_SEAT = O_DEALER + PLAYERS
O_PHASE = O_SEAT + PLAYERS
O_CALLS = O_PHASE + 4
N_CALLS = 14
O_CONTRACT = O_CALLS + PLAYERS * N_CALLS
O_DECLARER = O_CONTRACT + 13
O_ANNS = O_DECLARER + PLAYERS
N_ANNS = 10
O_PASSED = O_ANNS + PLAYERS * N_ANNS
O_KONTRA_LEVEL = O_PASSED + PLAYERS
O_RE_LEVEL = O_KONTRA_LEVEL + 6
O_PARTIES = O_RE_LEVEL + 6
O_VOIDS = O_PARTIES + PLAYERS * 3
O_PARTNER = O_VOIDS + PLAYERS * 5
O_SWINES = O_PARTNER + PLAYERS
O_FOLLOW = O_SWINES + 5
O_POINTS = O_FOLLOW + 5
O_WON = O_POINTS + PLAYERS
O_SIZES = O_WON + PLAYERS
O_TOTALS = O_SIZES + PLAYERS
O_LAST = O_TOTALS + PLAYERS
O_LAST_WINNER = O_LAST + PLAYERS * N_KINDS
O_SCALARS = O_LAST_WINNER + PLAYERS
N_SCALARS = 8
OBS_SIZE = O_SCALARS + N_SCALARS

_VOID_INDEX = {"c": 0, "s": 1, "h": 2, "d": 3, "t": 4}
_FOLLOW_INDEX = {"clubs": 0, "spades": 1, "hearts": 2, "diamonds": 3, "trump": 4}
# view phase numbers (DoppelkopfPhase): 1 reservations, 2 declaration, 3 playing, 4 over
_PLAYING = 3


def _check_players(players: int) -> None:
    if players != PLAYERS:
        raise ValueError(f"Doppelkopf is played by exactly 4 players, not {players}")


class DoppelkopfCodec:
    """Cards by kind, every reservation, solo, announcement and the pass as actions."""

    game = "doppelkopf"

    def num_actions(self, players: int, options: Mapping[str, Any]) -> int:
        _check_players(players)
        return NUM_ACTIONS

    def action(self, state: Any, seat: int, move: Any) -> int:
        a = _ACTION.get(move)
        if a is None:
            raise ValueError(f"not a Doppelkopf move: {move!r}")
        return a

    def action_name(self, action: int, players: int, options: Mapping[str, Any]) -> str:
        if not 0 <= action < NUM_ACTIONS:
            raise ValueError(f"Doppelkopf actions are 0-{NUM_ACTIONS - 1}, not {action}")
        return MOVES[action].text

    def observation_shape(self, players: int, options: Mapping[str, Any]) -> tuple[int, ...]:
        _check_players(players)
        return (OBS_SIZE,)

    def observe(self, view: Any, players: int, options: Mapping[str, Any]) -> np.ndarray:
        _check_players(players)
        return encode_view(view)


def _scale() -> np.ndarray:
    """What one unit of each byte of the buffer is worth (see encode_view)."""
    scale = np.ones(OBS_SIZE, dtype=np.float32)
    scale[O_HAND:O_TRICK] = 0.5  # copies of a kind
    scale[O_POINTS:O_WON] = 1 / 240
    scale[O_WON:O_TOTALS] = 1 / 12  # tricks won, cards in hand
    scale[O_SCALARS + 2] = 1 / 12  # finished tricks
    return scale


_SCALE = _scale()


# a trick's text -> (per relative leader: the offsets of its four cards in a played-cards
# block, card points)
_TRICKS: dict[str, tuple[tuple[tuple[int, ...], ...], int]] = {}


def _trick(text: str) -> tuple[tuple[tuple[int, ...], ...], int]:
    """A finished trick's card offsets and points, parsed once per distinct trick text (the
    same tricks come back in every later observation of the deal)."""
    hit = _TRICKS.get(text)
    if hit is None:
        kinds = [_CARD[c] for c in text.split()]
        offsets = tuple(
            tuple(((lead + j) % PLAYERS) * N_KINDS + k for j, k in enumerate(kinds))
            for lead in range(PLAYERS)
        )
        hit = (offsets, sum(POINTS[k] for k in kinds))
        remember(_TRICKS, 100_000, text, hit)
    return hit


def encode_view(v: Any) -> np.ndarray:
    """The observation of a DoppelkopfView (layout in the module docstring).

    Every feature but a few scalars is a small whole number of units (copies, one-hots, card
    points, tricks), so they are counted in a bytearray, which Python indexes cheaply, and
    turned into floats by one multiplication with the units' worth."""
    b = bytearray(OBS_SIZE)
    me = v.seat if v.seat >= 0 else 0
    card = _CARD
    for t in v.hand.split():
        b[O_HAND + card[t]] += 1

    tricks = v.tricks
    last = None
    for t in tricks:
        offsets, pts = _trick(t.cards)
        last = offsets[(t.leader - me) % PLAYERS]
        for x in last:
            b[O_PLAYED + x] += 1
        w = (t.winner - me) % PLAYERS
        b[O_POINTS + w] += pts
        b[O_WON + w] += 1
    if last is not None:
        for x in last:
            b[O_LAST + x] = 1
        b[O_LAST_WINNER + w] = 1
    phase = v.phase
    playing = phase == _PLAYING
    if playing:
        trick = v.trick
        lead = (trick.leader - me) % PLAYERS
        b[O_LEADER + lead] = 1
        for j, c in enumerate(trick.cards.split()):
            r = (lead + j) % PLAYERS
            k = card[c]
            b[O_PLAYED + r * N_KINDS + k] += 1
            b[O_TRICK + r * N_KINDS + k] = 1
        turn = v.turn
        if turn >= 0:
            b[O_TURN + (turn - me) % PLAYERS] = 1
    b[O_DEALER + (v.dealer - me) % PLAYERS] = 1
    if v.seat >= 0:
        b[O_SEAT + v.seat] = 1
    if 1 <= phase <= 4:
        b[O_PHASE + phase - 1] = 1

    by_text = _ACTION_BY_TEXT
    for c in v.calls:
        b[O_CALLS + ((c.seat - me) % PLAYERS) * N_CALLS + by_text[c.move] - 24] = 1
    contract = v.contract
    b[O_CONTRACT + contract] = 1
    declarer = v.declarer
    if declarer >= 0:
        b[O_DECLARER + (declarer - me) % PLAYERS] = 1

    bistro = v.bistro
    kontra, re = 0, 2 if bistro and contract >= 2 else 0  # a Bistro solo: re no 90
    base = 4 * len(tricks)
    for a in v.announcements:
        r = (a.seat - me) % PLAYERS
        act = by_text[a.move]
        if act == PASS_ACTION:
            if a.position >= base:
                b[O_PASSED + r] = 1
        elif act < KONTRA_BASE:
            b[O_ANNS + r * N_ANNS + act - RE_BASE] = 1
            re = max(re, act - RE_BASE + 1)
        else:
            b[O_ANNS + r * N_ANNS + act - RE_BASE] = 1
            kontra = max(kontra, act - KONTRA_BASE + 1)
    b[O_KONTRA_LEVEL + kontra] = 1
    b[O_RE_LEVEL + re] = 1

    parties = list(v.parties) if len(v.parties) == PLAYERS else [-1] * PLAYERS
    for s, p in enumerate(parties):
        b[O_PARTIES + ((s - me) % PLAYERS) * 3 + (2 if p < 0 else p)] = 1
    for s, text in enumerate(v.voids):
        r = (s - me) % PLAYERS
        for ch in text:
            b[O_VOIDS + r * 5 + _VOID_INDEX[ch]] = 1
    partner = v.partner
    if partner >= 0:
        b[O_PARTNER + (partner - me) % PLAYERS] = 1
    swines = v.swines
    if swines >= 0:
        b[O_SWINES + (swines - me) % PLAYERS] = 1
    elif swines == -1:
        b[O_SWINES + 4] = 1
    if v.to_follow:
        b[O_FOLLOW + _FOLLOW_INDEX[v.to_follow]] = 1
    for s, n in enumerate(v.hand_sizes):
        b[O_SIZES + (s - me) % PLAYERS] = n
    target = v.target_points
    b[O_SCALARS + 2] = len(tricks)
    b[O_SCALARS + 3] = bistro
    b[O_SCALARS + 4] = v.duel
    b[O_SCALARS + 5] = v.tournament
    b[O_SCALARS + 6] = target > 0

    o = np.frombuffer(b, dtype=np.uint8).astype(np.float32)
    o *= _SCALE
    for s, total in enumerate(v.totals):
        o[O_TOTALS + (s - me) % PLAYERS] = total / 100.0
    deals = max(1, v.deals)
    o[O_SCALARS] = v.deal_number / deals
    o[O_SCALARS + 1] = 1.0 / deals
    o[O_SCALARS + 7] = target / 1000.0
    return o


CODEC = DoppelkopfCodec()
