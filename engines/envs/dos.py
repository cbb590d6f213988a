"""The Dos codec: every match a fixed action, the seat's view as 420 features.

Cards are the engine's 41 card types (engines/dos/cards.py) in type order: per colour b g r
y the numbers 1, 3-10 then the wild #, then the wild DOS `w2`; below, "type k" is the k-th
of these 41 (b1 is 0, b3 is 1, ..., b# is 9, g1 is 10, ..., y# is 39, w2 is 40).

Actions (6035 for every player count and option set):

| actions | move |
|---|---|
| 0 | `draw` |
| 1 | `end` |
| 2 | `end dos` |
| 3 | `dos` (the late call) |
| 4 | `catch` |
| 5-45 | `add T`, T the type (action - 5) |
| 46-502 | single matches `A on T`, by centre type T then card type A (the 457 that match) |
| 503-6034 | double matches `A+B on T`, by T, then A <= B (the 5532 that match) |

A match means the same whichever copy of the centre card it covers, so it is one action.
Worked example: with `r7` in the row and `b7`, `g3`, `y4` in hand the mask holds `draw` (0),
`b7 on r7` and `g3+y4 on r7`; `CODEC.action_name(a, 2, {})` gives each move's notation back.

Observation (float32, shape (420,), the same for 2 to 4 players): seats are relative to the
observer (0 is itself, 1 the next in play order, ...; four slots, unused ones 0).

| offset | length | feature |
|---|---|---|
| 0 | 41 | own hand, copies held per type / copies in the deck |
| 41 | 41 | centre row cards not matched this turn, per type / copies |
| 82 | 41 | centre cards matched this turn, per type / copies |
| 123 | 41 | cards played on them this turn, per type / copies |
| 164 | 41 | cards added to the row this turn (bonus cards), per type / copies |
| 205 | 41 | the discard pile, per type / copies |
| 246 | 41 | the card drawn this turn, if the observer drew it and still holds it (one-hot) |
| 287 | 4 | hand sizes per relative seat / 20 |
| 291 | 4 | the player on turn (one-hot, relative seat) |
| 295 | 4 | the seat whose missing Dos call may be caught now (one-hot, relative) |
| 299 | 4 | match totals per relative seat / target |
| 303 | 4 | this player count (one-hot: 2, 3, 4 players; slot 0 unused) |
| 307 | 1 | the player on turn drew this turn |
| 308 | 1 | a drawn card is still in that player's hand, unseen by the observer |
| 309 | 1 | bonus cards still owed / 4 |
| 310 | 1 | cards in the draw pile / 108 |
| 311 | 1 | turns finished this round / max_turns |
| 312 | 1 | round / 10 |
| 313 | 1 | reshuffles this round / 10 |
| 314 | 1 | official_no_match option |
| 315 | 1 | the match is over |
| 316 | 4 | points of the last finished round per relative seat / target |
| 320 | 100 | unused (zero; room for features without changing the shape) |
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import numpy as np
from croupier.v1 import dos_pb2 as pb

from engines.dos.cards import COPIES, TYPES, code, match_kind, parse_cards, parse_row
from engines.dos.game import DosState
from engines.dos.moves import ADD, CALL, CATCH, DRAW, END, END_DOS, MATCH, Move

N_CARDS = len(TYPES)  # 41
_INDEX = {t: i for i, t in enumerate(TYPES)}  # engine type -> card feature index
_SCALE = np.array([1.0 / COPIES[t] for t in TYPES], dtype=np.float32)

ADD_BASE = 5
SINGLE_BASE = ADD_BASE + N_CARDS
_SINGLES = [(a, t) for t in TYPES for a in TYPES if match_kind(t, (a,))]
DOUBLE_BASE = SINGLE_BASE + len(_SINGLES)
_DOUBLES = [
    (a, b, t)
    for t in TYPES
    for i, a in enumerate(TYPES)
    for b in TYPES[i:]
    if match_kind(t, (a, b))
]
NUM_ACTIONS = DOUBLE_BASE + len(_DOUBLES)
_MATCH_ACTION: dict[tuple[int, int, int], int] = {(a, -1, t): SINGLE_BASE + k
                                                 for k, (a, t) in enumerate(_SINGLES)}
_MATCH_ACTION.update({(a, b, t): DOUBLE_BASE + k for k, (a, b, t) in enumerate(_DOUBLES)})
_SIMPLE = {DRAW: 0, END: 1, END_DOS: 2, CALL: 3, CATCH: 4}

_NAMES = ["draw", "end", "end dos", "dos", "catch"]
_NAMES += [f"add {code(t)}" for t in TYPES]
_NAMES += [f"{code(a)} on {code(t)}" for a, t in _SINGLES]
_NAMES += [f"{code(a)}+{code(b)} on {code(t)}" for a, b, t in _DOUBLES]
assert len(_NAMES) == NUM_ACTIONS

# observation layout (see the module docstring)
HAND, ROW, MATCHED, PLAYED, ADDED, DISCARDS, DRAWN = (k * N_CARDS for k in range(7))
SIZES = 7 * N_CARDS
TURN, WINDOW, TOTALS, PLAYERS = SIZES + 4, SIZES + 8, SIZES + 12, SIZES + 16
DREW = SIZES + 20
LAST = DREW + 9
OBS_SIZE = 420

_ACTION_CACHE: dict[Move, int] = {}


def move_action(move: Move) -> int:
    """The action of a Dos move (the state does not change what a move means)."""
    action = _ACTION_CACHE.get(move)
    if action is not None:
        return action
    if move.kind == MATCH:
        cards = move.cards
        key = (cards[0], cards[1] if len(cards) == 2 else -1, move.target)
        action = _MATCH_ACTION[key]
    elif move.kind == ADD:
        action = ADD_BASE + _INDEX[move.cards[0]]
    else:
        action = _SIMPLE[move.kind]
    _ACTION_CACHE[move] = action
    return action


@lru_cache(maxsize=1 << 14)
def _counts(text: str) -> np.ndarray:
    """Copies per card type of a card list (any order), scaled by the deck's copies."""
    out = np.zeros(N_CARDS, dtype=np.float32)
    for t in parse_row(text) if text else ():
        out[_INDEX[t]] += 1.0
    out *= _SCALE
    out.flags.writeable = False
    return out


class DosCodec:
    """Dos for the research environments (see the module docstring for the layouts)."""

    game = "dos"

    def num_actions(self, players: int, options: Mapping[str, Any]) -> int:
        return NUM_ACTIONS

    def action(self, state: DosState, seat: int, move: Move) -> int:
        return move_action(move)

    def action_name(self, action: int, players: int, options: Mapping[str, Any]) -> str:
        if not 0 <= action < NUM_ACTIONS:
            raise ValueError(f"Dos actions are 0 to {NUM_ACTIONS - 1}, not {action}")
        return _NAMES[action]

    def observation_shape(self, players: int, options: Mapping[str, Any]) -> tuple[int, ...]:
        return (OBS_SIZE,)

    def observe(self, view: pb.DosView, players: int, options: Mapping[str, Any]) -> np.ndarray:
        obs = np.zeros(OBS_SIZE, dtype=np.float32)
        n = view.players
        me = max(view.seat, 0)
        obs[HAND:HAND + N_CARDS] = _counts(view.hand)
        row = parse_row(view.row) if view.row else ()
        matched = {m.row_index for m in view.matches}
        if matched:
            free = " ".join(code(t) for i, t in enumerate(row) if i not in matched)
            obs[ROW:ROW + N_CARDS] = _counts(free)
            obs[MATCHED:MATCHED + N_CARDS] = _counts(" ".join(m.target for m in view.matches))
            obs[PLAYED:PLAYED + N_CARDS] = _counts(" ".join(m.cards for m in view.matches))
        else:
            obs[ROW:ROW + N_CARDS] = _counts(view.row)
        if view.adds:
            obs[ADDED:ADDED + N_CARDS] = _counts(view.adds)
        if view.discards:
            obs[DISCARDS:DISCARDS + N_CARDS] = _counts(view.discards)
        if view.drawn and view.drawn != "?":
            obs[DRAWN + _INDEX[parse_cards(view.drawn)[0]]] = 1.0
        target = float(max(view.target, 1))
        for s in range(n):
            r = (s - me) % n
            obs[SIZES + r] = view.hand_sizes[s] / 20.0
            obs[TOTALS + r] = view.totals[s] / target
        if view.current >= 0:
            obs[TURN + (view.current - me) % n] = 1.0
        if view.dos_window >= 0:
            obs[WINDOW + (view.dos_window - me) % n] = 1.0
        obs[PLAYERS + n - 1] = 1.0
        obs[DREW] = view.drew
        obs[DREW + 1] = view.drawn == "?"
        obs[DREW + 2] = view.bonus_owed / 4.0
        obs[DREW + 3] = view.draw_pile / 108.0
        obs[DREW + 4] = view.turns / max(view.max_turns, 1)
        obs[DREW + 5] = view.round / 10.0
        obs[DREW + 6] = view.reshuffles / 10.0
        obs[DREW + 7] = view.official_no_match
        obs[DREW + 8] = view.phase == pb.DOS_PHASE_OVER
        if view.history:
            last = view.history[-1]
            obs[LAST + (last.winner - me) % n] = last.points / target
        return obs


CODEC = DosCodec()
