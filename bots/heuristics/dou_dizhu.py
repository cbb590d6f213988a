"""A rule-based Dou Dizhu player: an opponent, and a playout policy for ISMCTS.

It reads only what the acting seat knows (its hand and the public play), so it may be given
any determinization. Lead low and long, never split a bomb or a pair without need, let a
partner's play stand, and bomb only when the opponent is close to going out.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from engines.dou_dizhu.cards import JOKERS, ONES, counts, size
from engines.dou_dizhu.game import BIDDING, DouDizhuState
from engines.dou_dizhu.moves import BID, BOMB, PASS, Move

LEVEL_OPTIONS = {"medium": {"prior": 2.0}}
"""Medium leans on this player's choice at its root as easy does (`prior` 2): without it, its
200 iterations depart from the heuristic often and on noise, and it played no better than
easy's 50 (400 duplicate deals); with it, it beats easy clearly (BENCHMARKS.md)."""


def bid_strength(hand: int) -> float:
    """Rough hand value: jokers, twos, bombs and aces win rounds."""
    c = counts(hand)
    value = 4.0 * c[14] + 3.0 * c[13] + 2.0 * c[12] + 0.5 * c[11]
    value += 4.0 * sum(1 for r in range(13) if c[r] == 4)
    return value


def _nonzero(packed: int) -> int:
    """Bit 4r set where rank r has a non-zero count."""
    return (packed | (packed >> 1) | (packed >> 2)) & ONES


def _splits(move: Move, hand: int) -> int:
    """How many ranks the move takes only part of (breaking pairs, trios and bombs)."""
    return (_nonzero(move.cards) & _nonzero(hand - move.cards)).bit_count()


def _cost(move: Move, hand: int) -> tuple:
    low = move.rank - move.length + 1
    kick = sum(move.kickers)
    return (move.kind >= BOMB, _splits(move, hand), low, -move.n_cards, kick)


def choose(
    game: object, state: DouDizhuState, seat: int, legal: Sequence[Move], rng: random.Random
) -> Move:
    options = _choices(state, seat, legal)
    # with two options the second is a pass kept as an alternative to spending a high card
    return options[1] if len(options) == 2 and rng.random() < 0.5 else options[0]


def explains(
    game: object, state: DouDizhuState, seat: int, legal: Sequence[Move], move: Move
) -> bool:
    """Whether this player, in `state`, could have chosen `move` (the model of the others
    that weighs sampled worlds, see `bots.inference`)."""
    return move in _choices(state, seat, legal)


def _choices(state: DouDizhuState, seat: int, legal: Sequence[Move]) -> tuple[Move, ...]:
    """The move this player makes, or (its move, pass) where it passes half the time."""
    if state.phase == BIDDING:
        strength = bid_strength(state.hands[seat])
        want = 3 if strength >= 11 else 2 if strength >= 8 else 1 if strength >= 5 else 0
        bids = [m for m in legal if m.kind == BID and m.rank <= want]
        return (max(bids, key=lambda m: m.rank) if bids else legal[0],)
    hand = state.hands[seat]
    n_hand = size(hand)
    plays = [m for m in legal if m.kind != PASS]
    for m in plays:
        if m.n_cards == n_hand:
            return (m,)  # go out
    last = state.last
    landlord = state.landlord
    if last is None:
        return (min(plays, key=lambda m: _cost(m, hand)),)
    if seat != landlord and state.last_seat != landlord:
        return (legal[0],)  # partner leads the round: let it stand
    ordinary = [m for m in plays if m.kind < BOMB]
    opponent_cards = size(state.hands[state.last_seat])
    danger = opponent_cards <= 4 if seat != landlord else min(
        size(state.hands[s]) for s in range(3) if s != seat
    ) <= 4
    if ordinary:
        best = min(ordinary, key=lambda m: _cost(m, hand))
        # keep twos and jokers for later unless the round matters
        if best.rank >= 12 and not danger:
            return (best, legal[0])
        return (best,)
    bombs = [m for m in plays if m.kind >= BOMB]
    if bombs and (danger or n_hand - bombs[0].n_cards <= 4 or hand & JOKERS == JOKERS and n_hand <= 6):
        return (min(bombs, key=lambda m: (m.kind, m.rank)),)
    return (legal[0],)


def candidates(
    game: object, state: DouDizhuState, seat: int, legal: Sequence[Move]
) -> Sequence[Move]:
    """The moves worth searching: kicker variants cut to the two cheapest per main part.

    Leads can offer hundreds of moves that differ only in their kickers; the search spends its
    budget far better on the main choices. Moves without kickers are all kept.
    """
    if len(legal) <= 12:
        return legal
    hand = state.hands[seat]
    kept: list[Move] = []
    groups: dict[tuple[int, int, int], list[Move]] = {}
    for m in legal:
        if m.kickers:
            groups.setdefault((m.kind, m.rank, m.length), []).append(m)
        else:
            kept.append(m)
    for group in groups.values():
        if len(group) <= 2:
            kept.extend(group)
        else:
            group.sort(key=lambda m: (_splits(m, hand), sum(m.kickers)))
            kept.extend(group[:2])
    return kept
