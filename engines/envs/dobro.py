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
| 60-64 | manual_draw: call the seat k = 1..5 after the caller (59 + k) | `call (seat + k) % n` |

Calls are relative to the acting seat, as the observation is: the same action means "the next
seat's forgetting" whoever calls it. `action_name` cannot know the seat, so it names calls
`call +k`; every other action is named in the engine's notation.

Worked example (four players): seat 3 holds `2 9 J J S R`, the value in play is 9. Its moves
`pass 9 J+9 J:9 .. J:12 JJ:5 .. JJ:12 skip reverse` are actions 0, 8, 41, 30..33, 48..55, 56
and 57 (`J+2` makes 4, too little). If seat 1 ended its turn short under manual_draw, seat 3
may also call it: `call 1` is k = (1 - 3) mod 4 = 2, action 61, named `call +2`.

>>> from engines.dobro import GAME, parse_move
>>> state = GAME.new_game(4, {"manual_draw": True}, seed="doc")
>>> [CODEC.action(state, 3, parse_move(m)) for m in ("pass", "9", "J+9", "JJ:5", "call 1")]
[0, 8, 41, 48, 61]
>>> [CODEC.action_name(a, 4, {}) for a in (0, 8, 41, 48, 61)]
['pass', '9', 'J+9', 'JJ:5', 'call +2']
>>> CODEC.observation_shape(4, {}), CODEC.observe(GAME.view(state, 3), 4, {}).dtype
((201,), dtype('float32'))

Observation (float32, length 105 + 24n for n players). Per-seat blocks are seat-relative:
entry i is the seat i places after the observing seat in seat order (entry 0: itself; a
spectator observes as seat 0 with an empty hand). Card kinds are in the engine's order 2..12,
J, S, R, and card counts are divided by the copies of the kind in the box (5, 6, 6, 6, 6, 5, 4,
3, 3, 3, 3, 3, 2, 2), so each lies in [0, 1].

| offset | length | meaning |
|---|---|---|
| 0 | 14 | own hand, per kind |
| 14 | 14 | unseen cards per kind (in other hands, the draw pile or set aside) |
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

from engines.cache import remember
from engines.dobro.cards import CODES, COUNTS, N_KINDS, REVERSE, size
from engines.dobro.game import DRAW_STAGE, END_TURN, OVER, PLAY
from engines.dobro.moves import (
    CALL,
    CALLS,
    DRAW,
    DRAW_M,
    END,
    END_M,
    JOKER_PAIR,
    JOKER_PAIRS,
    JOKER_SINGLE,
    JOKER_SINGLES,
    JOKERS_PAIR,
    JOKERS_PAIRS,
    PAIR,
    PAIRS,
    PASS,
    PASS_M,
    REVERSE_M,
    REVERSE_MOVE,
    SINGLE,
    SINGLES,
    SKIP_M,
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


_MOVES: tuple[Move, ...] = (
    PASS_M, SKIP_M, REVERSE_M, DRAW_M, END_M, *CALLS,
    *(m for table in (SINGLES, PAIRS, JOKER_SINGLES, JOKER_PAIRS, JOKERS_PAIRS)
      for m in table.values()),
)
"""Every Dobro move (the engine interns them all at import)."""
_BY_ID = [0] * (max(m.id for m in _MOVES) + 1)
for _m in _MOVES:
    _BY_ID[_m.id] = _action_of(_m)

_NAMES = [""] * NUM_ACTIONS
for _m in _MOVES:
    if _m.kind != CALL:
        _NAMES[_action_of(_m)] = _m.text
for _k in range(1, MAX_PLAYERS):
    _NAMES[CALL_BASE + _k] = f"call +{_k}"
assert all(_NAMES), "every action has a move"

_KIND_INDEX = {c: k for k, c in enumerate(CODES)}
_BOX = sum(c << (4 * k) for k, c in enumerate(COUNTS))
_REVERSES = COUNTS[REVERSE] << (4 * REVERSE)

_PACKED: dict[str, int] = {}
"""Card text (as views write it) -> packed counts (engines.dobro.cards); views repeat a few
hundred texts, so parsing is a dict hit."""
_SCALED: dict[int, tuple[float, ...]] = {}
"""Packed counts -> counts per kind / copies in the box."""

_HOT = {
    n: tuple(tuple(1.0 if j == i else 0.0 for j in range(n)) for i in range(n + 1))
    for n in range(MIN_PLAYERS, MAX_PLAYERS + 1)
}
"""Per player count: the one-hot seat blocks, index n for all zeros."""
_VALUE_HOT = tuple(tuple(1.0 if j == v else 0.0 for j in range(MAX_VALUE + 1))
                   for v in range(MAX_VALUE + 1))
_STAGE_HOT = {
    stage: tuple(1.0 if j == i else 0.0 for j in range(4))
    for i, stage in enumerate((PLAY, DRAW_STAGE, END_TURN, OVER))
}
_NO_STAGE = (0.0,) * 4


def _packed(text: str) -> int:
    got = _PACKED.get(text)
    if got is None:
        got = 0
        for code in text.split():
            got += 1 << (4 * _KIND_INDEX[code])
        remember(_PACKED, 100_000, text, got)
    return got


def _scaled(packed: int) -> tuple[float, ...]:
    got = _SCALED.get(packed)
    if got is None:
        got = tuple(((packed >> (4 * k)) & 15) / COUNTS[k] for k in range(N_KINDS))
        remember(_SCALED, 100_000, packed, got)
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
        # Built as one list of floats, converted once: far cheaper than numpy item writes.
        me = view.seat if view.seat >= 0 else 0
        hand = _packed(view.hand)
        auction = _packed(view.auction_cards)
        piles = [_packed(c) for c in view.collected]
        piles = piles[me:] + piles[:me]
        unseen = _BOX - hand - auction - sum(piles)
        if n == 2:
            unseen -= _REVERSES  # no reverse cards at two players
        out: list[float] = []
        out += _scaled(hand)
        out += _scaled(unseen)
        out += _scaled(auction)
        for pile in piles:
            out += _scaled(pile)
        hand_sizes, min_specials, totals = (
            list(view.hand_sizes), list(view.min_specials), list(view.totals)
        )
        limit = 1.0 / view.hand_limit
        out += [h * limit for h in hand_sizes[me:] + hand_sizes[:me]]
        out += [r / n for r in rank_points([size(p) for p in piles])]
        out += [m * 0.25 for m in min_specials[me:] + min_specials[:me]]
        scale = 1.0 / ((n + 1) * max(view.rounds, 1))
        out += [t * scale for t in totals[me:] + totals[:me]]
        hot = _HOT[n]
        turn, oubli = view.turn, view.oubli
        out += hot[(turn - me) % n if turn >= 0 else n]
        out += hot[(oubli - me) % n if oubli >= 0 else n]
        flags = [0.0] * n
        for f in view.forgetters:
            flags[(f - me) % n] = 1.0
        out += flags
        out += hot[(view.round_opener - me) % n]
        moves = view.auction
        if moves:
            last = moves[-1]
            out += hot[(moves[0].seat - me) % n]
            out += hot[(last.seat - me) % n]
            doubled = 1.0 if last.dobro else 0.0
        else:
            out += hot[n]
            out += hot[n]
            doubled = 0.0
        value = view.value
        out += _VALUE_HOT[value]
        rounds = max(view.rounds, 1)
        out += (
            value / MAX_VALUE,
            0.0 if moves else 1.0,
            doubled,
            len(moves) / DECK,
            1.0 if view.direction > 0 else 0.0,
            view.draw_pile / DECK,
            view.set_aside / 10,
            1.0 if view.manual_draw else 0.0,
            view.round / rounds,
            view.rounds / 20,
        )
        out += _STAGE_HOT.get(view.stage, _NO_STAGE)
        return np.array(out, dtype=np.float32)


CODEC = DobroCodec()
