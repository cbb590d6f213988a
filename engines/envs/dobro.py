"""The Dobro codec: every Dobro move as a fixed action, a seat's view as float32 features.

Actions (65, the same for every player count and option set, so a policy carries over
between tables; moves a table cannot offer are simply never in the mask):

| actions | move | notation |
|---|---|---|
| 0 | pass | `pass` |
| 1-11 | one numbered card, value 2..12 (action = v - 1) | `9` |
| 12-22 | a pair of value v (action = v + 10) | `66` |
| 23-33 | a joker alone declared as v (action = v + 21) | `J:10` |
| 34-44 | a joker with a card of value v (action = v + 32) | `J+8` |
| 45-55 | two jokers declared as v (action = v + 43) | `JJ:10` |
| 56 | the skip card | `skip` |
| 57 | the reverse card (never with two players: no R cards) | `reverse` |
| 58 | manual_draw: refill the hand | `draw` |
| 59 | manual_draw: end the turn | `end` |
| 60-64 | manual_draw: call the forgetting of the seat k = 1..5 places after the acting seat in seat order (action = 59 + k) | `call N`, N = (seat + k) mod players |

Calls are relative to the acting seat, as the observation is: the same action means "the next
seat's forgetting" whoever calls it. `action_name` cannot know the seat, so it names calls
`call +k`; every other action is named in the engine's notation.

Worked example (four players): seat 3 holds `2 9 J J S R`, the value in play is 9. Its moves
`pass 9 J+9 J:9 .. J:12 JJ:5 .. JJ:12 skip reverse` are actions 0, 8, 41, 30..33, 48..55, 56
and 57 (`J+2` makes 4, too little). If seat 1 ended its turn short under manual_draw, seat 3 may also call it:
`call 1` is k = (1 - 3) mod 4 = 2, action 61, named `call +2`.

Observation (float32, length 105 + 24n for n players). Per-seat blocks are seat-relative:
entry i is the seat i places after the observing seat in seat order (entry 0: itself; a
spectator observes as seat 0 with an empty hand). Card kinds are in the engine's order 2..12,
J, S, R, and card counts are divided by the copies of the kind in the box (5, 6, 6, 6, 6, 5, 4,
3, 3, 3, 3, 3, 2, 2), so each lies in [0, 1].

| offset | length | meaning |
|---|---|---|
| 0 | 14 | own hand, per kind |
| 14 | 14 | unseen cards per kind: the box less own hand, auction and score piles (other hands, draw pile, set-aside cards) |
| 28 | 14 | cards in the auction in progress, per kind |
| 42 | 14n | each seat's score pile of the round, per kind (seat-major: seat i at 42 + 14i) |
| 42+14n | n | hand sizes / hand limit |
| 42+15n | n | round points if the round ended now (rank by score pile size, ties shared) / n |
| 42+16n | n | special cards each seat is known to hold (min_specials) / 4 |
| 42+17n | n | penalty totals of the finished rounds / ((n + 1) * rounds) |
| 42+18n | n | whose turn it is (one-hot; all 0 when the match is over) |
| 42+19n | n | Oubli card holder (one-hot; all 0 while it is in the centre) |
| 42+20n | n | forgettings that may be called (manual_draw) |
| 42+21n | n | the seat that opened this round (one-hot) |
| 42+22n | n | the seat that opened the auction in progress (one-hot; 0 when none) |
| 42+23n | n | the seat of the auction's last move (one-hot; 0 when none) |
| 42+24n | 49 | value in play 0..48, one-hot |
| 91+24n | 1 | value in play / 48 |
| 92+24n | 1 | 1 when the auction is empty (the seat on turn opens) |
| 93+24n | 1 | 1 when the auction's last move doubled the value (Dobro) |
| 94+24n | 1 | moves in the auction / 57 |
| 95+24n | 1 | direction of play: 1 for seat order (+1), 0 for reversed |
| 96+24n | 1 | draw pile / 57 |
| 97+24n | 1 | set-aside cards / 10 (two players) |
| 98+24n | 1 | manual_draw |
| 99+24n | 1 | round / rounds (0-based round) |
| 100+24n | 1 | rounds / 20 |
| 101+24n | 4 | stage one-hot: play, draw, end of turn, over |

Everything comes from the view message (engine.view), never the state, so two states with
the same view give the same observation.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from engines.dobro.cards import CODES, COUNTS, N_KINDS
from engines.dobro.moves import (
    _BY_KEY,
    CALL,
    DRAW,
    END,
    JOKER_PAIR,
    JOKER_SINGLE,
    JOKERS_PAIR,
    PAIR,
    PASS,
    REVERSE_MOVE,
    SINGLE,
    SKIP_MOVE,
    Move,
)
from engines.dobro.scoring import rank_points

MIN_PLAYERS, MAX_PLAYERS = 2, 6
NUM_ACTIONS = 65
CALL_BASE = 59  # call of the seat k places after the caller: CALL_BASE + k
MAX_VALUE = 48
DECK = 57

# action of each kind's first value (value 2) and of the moves without a value
_KIND_BASE = {SINGLE: 1, PAIR: 12, JOKER_SINGLE: 23, JOKER_PAIR: 34, JOKERS_PAIR: 45}
_FIXED = {PASS: 0, SKIP_MOVE: 56, REVERSE_MOVE: 57, DRAW: 58, END: 59}


def _action_of(move: Move) -> int:
    """The action of a non-call move (-1 for calls, which depend on the caller)."""
    if move.kind in _KIND_BASE:
        return _KIND_BASE[move.kind] + move.value - 2
    if move.kind == CALL:
        return -1
    return _FIXED[move.kind]


_BY_ID = [0] * (max(m.id for m in _BY_KEY.values()) + 1)
for _m in _BY_KEY.values():
    _BY_ID[_m.id] = _action_of(_m)

_NAMES = [""] * NUM_ACTIONS
for _m in _BY_KEY.values():
    if _m.kind != CALL:
        _NAMES[_action_of(_m)] = _m.text
for _k in range(1, MAX_PLAYERS):
    _NAMES[CALL_BASE + _k] = f"call +{_k}"
assert all(_NAMES), "every action has a move"

_SCALE = np.array([1.0 / c for c in COUNTS], dtype=np.float32)
_BOX = np.array(COUNTS, dtype=np.float32)
_KIND_INDEX = {c: k for k, c in enumerate(CODES)}
_STAGE_INDEX = {1: 0, 2: 1, 3: 2, 4: 3}

_CARDS: dict[str, np.ndarray] = {}
"""Card text (as views write it) -> counts per kind; views repeat a few hundred texts."""


def _cards(text: str) -> np.ndarray:
    got = _CARDS.get(text)
    if got is None:
        got = np.zeros(N_KINDS, dtype=np.float32)
        for code in text.split():
            got[_KIND_INDEX[code]] += 1.0
        got.flags.writeable = False
        if len(_CARDS) > 100_000:
            _CARDS.clear()
        _CARDS[text] = got
    return got


def _check_players(players: int) -> int:
    if not isinstance(players, int) or not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise ValueError(f"Dobro is played by 2 to 6 players, not {players!r}")
    return players


class DobroCodec:
    """Dobro's actions and observations; one layout for every option set."""

    game = "dobro"

    def num_actions(self, players: int, options: Mapping[str, Any]) -> int:
        _check_players(players)
        return NUM_ACTIONS

    def action(self, state: Any, seat: int, move: Any) -> int:
        if not isinstance(move, Move):
            raise ValueError(f"not a Dobro move: {move!r}")
        a = _BY_ID[move.id]
        if a >= 0:
            return a
        k = (move.value - seat) % state.players
        if k == 0:
            raise ValueError("a seat cannot call its own forgetting")
        return CALL_BASE + k

    def action_name(self, action: int, players: int, options: Mapping[str, Any]) -> str:
        _check_players(players)
        if not 0 <= action < NUM_ACTIONS:
            raise ValueError(f"Dobro actions run from 0 to {NUM_ACTIONS - 1}, not {action}")
        return _NAMES[action]

    def observation_shape(self, players: int, options: Mapping[str, Any]) -> tuple[int, ...]:
        return (105 + 24 * _check_players(players),)

    def observe(self, view: Any, players: int, options: Mapping[str, Any]) -> np.ndarray:
        n = _check_players(players)
        if view.players != n:
            raise ValueError(f"a view of a {view.players}-player table, not {n}")
        out = np.zeros(105 + 24 * n, dtype=np.float32)
        me = view.seat if view.seat >= 0 else 0
        hand = _cards(view.hand)
        auction = _cards(view.auction_cards)
        out[0:14] = hand * _SCALE
        out[28:42] = auction * _SCALE
        seen = hand + auction
        sizes = []
        base = 42
        for i in range(n):
            pile = _cards(view.collected[(me + i) % n])
            seen = seen + pile
            out[base + 14 * i:base + 14 * i + 14] = pile * _SCALE
            sizes.append(int(pile.sum()))
        unseen = _BOX - seen
        if n == 2:
            unseen[13] = 0.0  # no reverse cards at two players
        out[14:28] = unseen * _SCALE
        o = 42 + 14 * n
        limit = 1.0 / view.hand_limit
        ranks = rank_points(sizes)
        hand_sizes, min_specials, totals = view.hand_sizes, view.min_specials, view.totals
        total_scale = 1.0 / ((n + 1) * max(view.rounds, 1))
        for i in range(n):
            s = (me + i) % n
            out[o + i] = hand_sizes[s] * limit
            out[o + n + i] = ranks[i] / n
            out[o + 2 * n + i] = min_specials[s] / 4
            out[o + 3 * n + i] = totals[s] * total_scale
        if view.turn >= 0:
            out[o + 4 * n + (view.turn - me) % n] = 1.0
        if view.oubli >= 0:
            out[o + 5 * n + (view.oubli - me) % n] = 1.0
        for f in view.forgetters:
            out[o + 6 * n + (f - me) % n] = 1.0
        out[o + 7 * n + (view.round_opener - me) % n] = 1.0
        moves = view.auction
        doubled = False
        if moves:
            out[o + 8 * n + (moves[0].seat - me) % n] = 1.0
            last = moves[-1]
            out[o + 9 * n + (last.seat - me) % n] = 1.0
            doubled = last.dobro
        o += 10 * n
        value = view.value
        out[o + value] = 1.0
        o += MAX_VALUE + 1
        out[o] = value / MAX_VALUE
        out[o + 1] = 0.0 if moves else 1.0
        out[o + 2] = 1.0 if doubled else 0.0
        out[o + 3] = len(moves) / DECK
        out[o + 4] = 1.0 if view.direction > 0 else 0.0
        out[o + 5] = view.draw_pile / DECK
        out[o + 6] = view.set_aside / 10
        out[o + 7] = 1.0 if view.manual_draw else 0.0
        out[o + 8] = view.round / max(view.rounds, 1)
        out[o + 9] = view.rounds / 20
        stage = _STAGE_INDEX.get(view.stage)
        if stage is not None:
            out[o + 10 + stage] = 1.0
        return out


CODEC = DobroCodec()
