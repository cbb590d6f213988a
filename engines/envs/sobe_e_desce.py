"""Sobe e Desce for the research environments: 78 actions and a 668-float view.

The game is for exactly four players, and every deal is five cards a hand (the "up and
down" of the name is the scores), so one action space and one observation shape serve every
option set.

Actions (`Discrete(78)`):

| actions | move |
|---|---|
| 0-39 | a card, by the engine's card id: suit * 10 + strength (suits c d h s, ranks 2 3 4 5 6 Q J K 7 A): 0 is `2c`, 9 `Ac`, 28 `7h`, 39 `As` |
| 40-43 | `trump c`, `trump d`, `trump h`, `trump s` |
| 44 | `turn` |
| 45 | `pass` |
| 46 | `play` (keep the hand: the exchange of no card) |
| 47-77 | `exchange`: 46 + p, p a 5-bit pattern of hand positions, bit i the (i+1)-th card of the hand in notation order (ascending card id: clubs, diamonds, hearts, spades, weakest first) |

A deal's decisions are made holding exactly five cards, so the pattern names every exchange
the rules allow with one action, and an exchange of the same positions is the same action
in every hand (`action_name` writes it `exchange #1 #4`: the first and fourth card).

Worked example: holding `2c Qd 5h 7h As`, `exchange Qd As` gives up the 2nd and 5th cards,
p = 0b10010 = 18, action 64; `7h` is card 28 (hearts = 2, the 7 is strength 8), action 28.

>>> from engines.sobe_e_desce import GAME, Move
>>> from engines.sobe_e_desce.cards import CARD_TEXT, cards_text
>>> top = "2c Qd 5h Ac Kc Qc 2d 3d 4d 2h 3h 4h 7h As".split()  # seat 0 gets 2c Qd 5h, 7h As
>>> deck = " ".join(top + [c for c in CARD_TEXT if c not in top])
>>> s = GAME.new_game(4, {"deck": deck, "dealer": 3}, seed="doc")
>>> CODEC.action(s, 0, Move("trump h")), CODEC.action_name(42, 4, {})
(42, 'trump h')
>>> s = GAME.apply(s, 0, Move("trump h"))
>>> cards_text(s.hands[0])
'2c Qd 5h 7h As'
>>> CODEC.action(s, 0, Move("exchange Qd As")), CODEC.action_name(64, 4, {})
(64, 'exchange #2 #5')
>>> CODEC.action(s, 0, Move("play")), CODEC.action_name(28, 4, {})
(46, '7h')

Observation (float32, shape (668,)), from the seat's view message alone. "Per seat" blocks
are in seat order relative to the observer: 0 is the observer, 1 the next to play after him,
and so on; a spectator's view is read as seat 0's with an empty hand.

| offset | length | feature |
|---|---|---|
| 0 | 40 | own hand (card bitmap, index = card id) |
| 40 | 40 | own cards exchanged away this deal |
| 80 | 40 | the turned card (one-hot; zero when trumps were named or not chosen yet) |
| 120 | 160 | per seat, 40 each: cards it played this deal (finished tricks and the open one) |
| 280 | 160 | per seat: its card in the open trick |
| 440 | 160 | per seat: cards it is publicly known not to hold (`absent`) |
| 600 | 4 | trumps (one-hot c d h s) |
| 604 | 4 | suit led in the open trick (one-hot) |
| 608 | 4 | phase: trump choice, decisions, tricks, over |
| 612 | 4 | the dealer (one-hot per seat) |
| 616 | 4 | the chooser (one-hot per seat) |
| 620 | 4 | the seat to act (one-hot per seat; zero once over) |
| 624 | 4 | the winner (one-hot per seat, once over) |
| 628 | 4 | per seat: hand size / 5 |
| 632 | 4 | per seat: cards exchanged away / 5 |
| 636 | 4 | per seat: tricks won this deal / 5 |
| 640 | 4 | per seat: score / start score (1 at the start, 0 wins) |
| 644 | 4 | per seat: deals passed in a row / 2 |
| 648 | 4 | per seat: must play this deal |
| 652 | 4 | per seat: has decided this deal |
| 656 | 4 | per seat: plays this deal (decided and did not pass) |
| 660 | 4 | per seat: cards exchanged this deal / 5 (the decision's count) |
| 664 | 1 | stock size / 20 |
| 665 | 1 | cards still to deal / 8 (before the trump choice) |
| 666 | 1 | finished tricks of the deal / 5 |
| 667 | 1 | deal number / max deals |
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

import numpy as np
from croupier.v1 import sobe_e_desce_pb2 as pb

from engines.cache import remember
from engines.sobe_e_desce.cards import CARD_TEXT, N_CARDS, SUITS
from engines.sobe_e_desce.game import PLAYERS, SobeEDesceState
from engines.sobe_e_desce.moves import CARD, EXCHANGE, MAX_EXCHANGE, PASS, TRUMP

TRUMP_BASE = N_CARDS  # 40-43
TURN_ACTION = TRUMP_BASE + 4  # 44
PASS_ACTION = TURN_ACTION + 1  # 45
PLAY_ACTION = PASS_ACTION + 1  # 46; exchanges follow: PLAY_ACTION + pattern
NUM_ACTIONS = PLAY_ACTION + (1 << MAX_EXCHANGE)  # 78

HAND, DISCARDS, TURNED = 0, 40, 80
PLAYED, TRICK, ABSENT = 120, 280, 440
TRUMP_SUIT, LED, PHASE = 600, 604, 608
DEALER, CHOOSER, TO_ACT, WINNER = 612, 616, 620, 624
HAND_SIZE, DISCARD_COUNT, WON, SCORE, PASSES = 628, 632, 636, 640, 644
MUST_PLAY, DECIDED, PLAYS, EXCHANGED = 648, 652, 656, 660
STOCK, PENDING, TRICKS_DONE, DEAL = 664, 665, 666, 667
OBS_SIZE = 668

_CARD = {t: c for c, t in enumerate(CARD_TEXT)}
_SUIT = {s: i for i, s in enumerate(SUITS)}
_PHASES = {pb.SOBE_E_DESCE_PHASE_TRUMP: 0, pb.SOBE_E_DESCE_PHASE_DECIDE: 1,
           pb.SOBE_E_DESCE_PHASE_PLAY: 2, pb.SOBE_E_DESCE_PHASE_OVER: 3}
_NAMES = (
    *CARD_TEXT,
    *(f"trump {s}" for s in SUITS),
    "turn",
    "pass",
    "play",
    *("exchange " + " ".join(f"#{i + 1}" for i in range(MAX_EXCHANGE) if p >> i & 1)
      for p in range(1, 1 << MAX_EXCHANGE)),
)
_PATTERNS: dict[tuple[int, int], int] = {}
"""(hand, exchanged mask) -> position pattern: a deal meets a few dozen such pairs."""


_ROT = tuple(tuple((s - me) % PLAYERS for s in range(PLAYERS)) for me in range(PLAYERS))
"""_ROT[me][seat]: seat's place relative to the observer `me` (0 is himself)."""
_NEXT = {
    playing: tuple(
        next((t for k in range(1, PLAYERS + 1) if playing[t := (s + k) % PLAYERS]), s)
        for s in range(PLAYERS)
    )
    for playing in itertools.product((False, True), repeat=PLAYERS)
}
"""The next seat to play after each seat, for each set of seats taking part."""
_SETS: dict[str, tuple[int, ...]] = {}
"""Card-set text -> card ids: hands and `absent` lists recur from view to view."""


def _indices(text: str, base: int) -> list[int]:
    ids = _SETS.get(text)
    if ids is None:
        ids = tuple(_CARD[c] for c in text.split())
        remember(_SETS, 100_000, text, ids)
    return [base + i for i in ids]


def _check(players: int) -> None:
    if players != PLAYERS:
        raise ValueError(f"Sobe e Desce is played by exactly {PLAYERS} players, not {players}")


def _pattern(hand: int, out: int) -> int:
    key = (hand, out)
    p = _PATTERNS.get(key)
    if p is None:
        if out & ~hand:
            raise ValueError("the exchange gives up cards the seat does not hold")
        p, i, m = 0, 0, hand
        while m:
            low = m & -m
            if out & low:
                p |= 1 << i
            i += 1
            m ^= low
        if p >= 1 << MAX_EXCHANGE:
            raise ValueError(f"an exchange is of at most the first {MAX_EXCHANGE} cards")
        remember(_PATTERNS, 100_000, key, p)
    return p


class SobeEDesceCodec:
    """Cards by id, the trump choice, pass, and play-or-exchange as a pattern of hand
    positions; the view as bitmaps and per-seat scalars (see the module docstring)."""

    game = "sobe_e_desce"

    def num_actions(self, players: int, options: Mapping[str, Any]) -> int:
        _check(players)
        return NUM_ACTIONS

    def action(self, state: SobeEDesceState, seat: int, move: Any) -> int:
        kind, arg = move
        if kind == CARD:
            return int(arg)
        if kind == EXCHANGE:
            return PLAY_ACTION + (_pattern(state.hands[seat], arg) if arg else 0)
        if kind == TRUMP:
            return TRUMP_BASE + int(arg)
        return PASS_ACTION if kind == PASS else TURN_ACTION

    def seen_action(self, state: SobeEDesceState, seat: int, move: Any,
                    observer: int | None) -> int:
        """The action standing for another seat's exchange as `observer` sees it (how many
        cards, not which): the exchange of the first that many hand positions. The mover's
        own record has the real pattern, so within one seat's moves the two never meet."""
        kind, arg = move
        if kind != EXCHANGE or not arg or observer == seat:
            return self.action(state, seat, move)
        return PLAY_ACTION + (1 << arg.bit_count()) - 1

    def action_name(self, action: int, players: int, options: Mapping[str, Any]) -> str:
        if not 0 <= action < NUM_ACTIONS:
            raise ValueError(f"action {action} is out of range 0-{NUM_ACTIONS - 1}")
        return _NAMES[action]

    def observation_shape(self, players: int, options: Mapping[str, Any]) -> tuple[int, ...]:
        _check(players)
        return (OBS_SIZE,)

    def observe(self, view: pb.SobeEDesceView, players: int,
                options: Mapping[str, Any]) -> np.ndarray:
        _check(players)
        out = np.zeros(OBS_SIZE, dtype=np.float32)
        card = _CARD
        me = view.seat if view.seat >= 0 else 0
        rot = _ROT[me]
        ones = [*_indices(view.hand, HAND), *_indices(view.discards, DISCARDS)]
        if view.turned_card:
            ones.append(TURNED + card[view.turned_card])
        playing = [False] * PLAYERS
        for d in view.decisions:
            seat, plays = d.seat, d.plays
            r = rot[seat]
            playing[seat] = plays
            ones.append(DECIDED + r)
            if plays:
                ones.append(PLAYS + r)
            out[EXCHANGED + r] = d.exchanged / 5
        done = 0
        tricks = view.tricks
        if tricks:
            nxt = _NEXT[tuple(playing)]
            for t in tricks:
                seat = t.leader
                cards = t.cards
                if t.winner < 0:
                    for c in cards:
                        i = card[c] + 40 * rot[seat]
                        ones.append(PLAYED + i)
                        ones.append(TRICK + i)
                        seat = nxt[seat]
                    ones.append(LED + card[cards[0]] // 10)
                else:
                    done += 1
                    for c in cards:
                        ones.append(PLAYED + card[c] + 40 * rot[seat])
                        seat = nxt[seat]
        for seat, absent in enumerate(view.absent):
            if absent:
                ones += _indices(absent, ABSENT + 40 * rot[seat])
        if view.trump:
            ones.append(TRUMP_SUIT + _SUIT[view.trump])
        ones.append(PHASE + _PHASES.get(view.phase, 0))
        ones.append(DEALER + rot[view.dealer % PLAYERS])
        ones.append(CHOOSER + rot[view.chooser % PLAYERS])
        if view.to_act >= 0:
            ones.append(TO_ACT + rot[view.to_act])
        if view.winner >= 0:
            ones.append(WINNER + rot[view.winner])
        for seat, must in enumerate(view.must_play):
            if must:
                ones.append(MUST_PLAY + rot[seat])
        out[ones] = 1.0
        start = view.start_score or 1
        for seat, n in enumerate(view.scores):
            out[SCORE + rot[seat]] = n / start
        for seat, n in enumerate(view.hand_sizes):
            out[HAND_SIZE + rot[seat]] = n / 5
        for seat, n in enumerate(view.discard_counts):
            out[DISCARD_COUNT + rot[seat]] = n / 5
        for seat, n in enumerate(view.won):
            out[WON + rot[seat]] = n / 5
        for seat, n in enumerate(view.passes):
            out[PASSES + rot[seat]] = n / 2
        out[STOCK] = view.stock_size / 20
        out[PENDING] = view.pending_size / 8
        out[TRICKS_DONE] = done / 5
        out[DEAL] = view.deal_number / (view.max_deals or 1)
        return out


CODEC = SobeEDesceCodec()
