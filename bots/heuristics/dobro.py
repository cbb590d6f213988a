"""A rule-based Dobro player: an opponent, and the playout policy of ISMCTS.

It reads only what the acting seat knows (its hand, the auction, the counts), so any
determinization may be given. The idea: an auction costs whoever passes all of its cards, so
make the next player's task hard (double when you can, otherwise beat with the cheapest cards),
keep jokers and special cards for auctions that have grown, and take a small auction rather
than spend a strong card on it.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from engines.dobro.game import DRAW_STAGE, END_TURN, PLAY, DobroState
from engines.dobro.moves import (
    CALL,
    DRAW,
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

_JOKER_KINDS = (JOKER_SINGLE, JOKER_PAIR, JOKERS_PAIR)

SEARCH_OPTIONS = {"policy_opponents": True}
"""In the search the other seats play this player on their own cards of each sampled world,
not the tree's statistics: those pool all their possible hands, so the tree's opponents play
as if blind to their own cards, and the search was no better than this player (BENCHMARKS.md,
"Dobro easy > heuristic")."""


def _cost(move: Move) -> tuple[int, int, int]:
    """Lower is cheaper to give up: plain cards before jokers, low values first, singles first."""
    jokers = move.kind in _JOKER_KINDS
    return (jokers, move.amount, move.n_cards)


def choose(
    game: object, state: DobroState, seat: int, legal: Sequence[Move], rng: random.Random
) -> Move:
    first = legal[0]
    kind0 = first.kind
    if kind0 == CALL or legal[-1].kind == CALL:
        return next(m for m in legal if m.kind == CALL)  # calling a forgetting never hurts
    stage = state.stage
    if stage in (DRAW_STAGE, END_TURN):
        return next((m for m in legal if m.kind == DRAW), first)  # never forget to draw
    if stage != PLAY:
        return first
    value = state.value
    if not state.auction:  # opening: a low single keeps the strong cards for later
        plain = [m for m in legal if m.kind == SINGLE or m.kind == PAIR]
        if plain:
            return min(plain, key=lambda m: (m.n_cards, m.amount))
        jokers = [m for m in legal if m.kind in _JOKER_KINDS]
        if jokers:
            return max(jokers, key=lambda m: m.amount)
        return first
    pot = len(state.auction)
    doubles = [m for m in legal if m.amount == value and m.kind != PASS]
    if doubles:
        best = min(doubles, key=_cost)
        if best.kind not in _JOKER_KINDS or pot >= 3:
            return best
    beats = [m for m in legal if m.amount > value and m.kind not in _JOKER_KINDS]
    if beats:
        best = min(beats, key=_cost)
        if best.kind == SINGLE or pot >= 2 or best.amount <= 16:
            return best
    if pot >= 3:
        if doubles:
            return min(doubles, key=_cost)
        specials = [m for m in legal if m.kind in (SKIP_MOVE, REVERSE_MOVE)]
        if specials:
            return specials[0]
        jokers = [m for m in legal if m.kind in _JOKER_KINDS]
        if jokers:
            return max(jokers, key=lambda m: m.amount)  # push the value as high as it goes
    return first  # pass: a small auction is cheap to take


def candidates(
    game: object, state: DobroState, seat: int, legal: Sequence[Move]
) -> Sequence[Move]:
    """The moves worth searching: plays that spend jokers where plain cards make the same
    value are dropped, and joker declarations are cut to the ones that differ in effect.

    A joker (or two) may be declared any value from the lowest legal one to 12; what matters is
    doubling (the declaration equal to the value in play), the lowest and the highest. Pass,
    special cards, draws, ends and calls are always kept.
    """
    if len(legal) <= 6:
        return legal
    value = state.value if state.auction else -1
    plain = {m.amount for m in legal if m.kind in (SINGLE, PAIR)}
    kept: list[Move] = []
    declared: dict[int, list[Move]] = {}
    for m in legal:
        kind = m.kind
        if kind in (JOKER_SINGLE, JOKERS_PAIR):
            if m.amount not in plain:
                declared.setdefault(kind, []).append(m)
        elif kind == JOKER_PAIR:
            if m.amount not in plain:
                kept.append(m)
        else:
            kept.append(m)
    for group in declared.values():
        lo = min(group, key=lambda m: m.amount)
        hi = max(group, key=lambda m: m.amount)
        kept.extend(m for m in group if m is lo or m is hi or (m.amount == value and m is not lo))
    return kept or legal
