"""A rule-based Dos player: an opponent, and the playout policy of ISMCTS.

Greedy shedding: match as long as a match exists (going out first, then colour bonuses, then
doubles, high-point cards before low ones, wild cards kept for when they earn something), add
the highest-point plain card as a bonus card, always call Dos and always catch a missing call.
It reads only the acting seat's hand and the public table, so any determinization will do.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from engines.dos.cards import DOUBLE_COLOUR, POINTS, SINGLE_COLOUR, is_wild, match_kind
from engines.dos.game import DosState
from engines.dos.moves import ADD, CALL, CATCH, END, END_DOS, MATCH, Move

_COLOUR_BONUS = {SINGLE_COLOUR: 9.0, DOUBLE_COLOUR: 16.0}


def match_score(move: Move, hand_size: int) -> float:
    """How much a match is worth to the player making it (higher is better)."""
    cards = move.cards
    if len(cards) == hand_size:
        return 1000.0  # goes out
    kind = match_kind(move.target, cards)
    bonus = _COLOUR_BONUS.get(kind, 0.0)
    score = 10.0 * len(cards) + bonus
    for t in cards:
        score += 0.25 * POINTS[t]
        if is_wild(t) and not bonus:
            score -= 14.0  # a wild is worth more kept for a match that earns a bonus
    return score


def add_score(move: Move) -> float:
    """Plain high cards leave first; wilds stay (they match almost anything later)."""
    t = move.cards[0]
    return -100.0 + POINTS[t] if is_wild(t) else float(POINTS[t])


def choose(
    game: object, state: DosState, seat: int, legal: Sequence[Move], rng: random.Random
) -> Move:
    if len(legal) == 1:
        return legal[0]
    best: Move | None = None
    best_score = -1e9
    hand_size = len(state.hands[seat])
    fallback: Move | None = None
    for m in legal:
        kind = m.kind
        if kind in (CATCH, CALL, END_DOS):
            return m
        if kind == MATCH:
            score = match_score(m, hand_size)  # ties: the first listed (deterministic)
        elif kind == ADD:
            score = add_score(m) - 500.0  # only once no match is left
        else:  # draw or end: the last resort
            if fallback is None or kind == END:
                fallback = m
            continue
        if score > best_score:
            best, best_score = m, score
    if best is not None:
        return best
    assert fallback is not None
    return fallback


def candidates(game: object, state: DosState, seat: int, legal: Sequence[Move]) -> Sequence[Move]:
    """The moves worth searching, so that small budgets are not spread over poor moves.

    Catching and calling are never wrong, nor is calling Dos when ending with two cards; a
    player who can still match keeps matching (no draw, no early end). Among matches the two
    best by `match_score` (and the best bonus card, to stop matching), among bonus cards the
    two best by `add_score`: at easy's 50 iterations, four matches left the search worse than
    its own playout policy (see BENCHMARKS.md).
    """
    if len(legal) <= 2 and not any(m.kind == END_DOS for m in legal):
        return legal
    kinds = {m.kind for m in legal}
    if CATCH in kinds or CALL in kinds:
        return [m for m in legal if m.kind in (CATCH, CALL)]
    matches = [m for m in legal if m.kind == MATCH]
    if matches:
        hand_size = len(state.hands[seat])
        matches.sort(key=lambda m: -match_score(m, hand_size))
        kept = matches[:2]
        adds = sorted((m for m in legal if m.kind == ADD), key=lambda m: -add_score(m))[:1]
        return kept + adds
    adds = [m for m in legal if m.kind == ADD]
    if adds:
        return sorted(adds, key=lambda m: -add_score(m))[:2]
    if END_DOS in kinds:
        return [m for m in legal if m.kind != END]
    return legal


MARGIN_SCALE = 50.0
"""Round margin (points) that maps to a reward of 0 or 1; a round gives 23 points on average."""


def rewards(game: Any, before: Sequence[int], state: DosState) -> list[float]:
    """Each seat's points from the round minus the others' mean, on a fixed scale.

    A match is the sum of its rounds' points, and only the round's winner scores what is left
    in the other hands: the default reward (who won the round, relative to the spread) made
    a round won by 2 points worth a round won by 60, and the search ignored how much it gave
    away when losing. With this reward easy beat the heuristic significantly (BENCHMARKS.md).
    """
    after = game.result(state).totals
    gains = [a - b for a, b in zip(after, before, strict=True)]
    n = len(gains)
    total = sum(gains)
    out = []
    for g in gains:
        margin = g - (total - g) / (n - 1)
        out.append(min(1.0, max(0.0, 0.5 + margin / (2 * MARGIN_SCALE))))
    return out
