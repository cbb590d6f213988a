"""A rule-based Doppelkopf player: an opponent, and the playout policy of ISMCTS.

It reads only what the acting seat knows (its hand, the public play, the parties as far as
that seat can tell), so it may be given any determinization. Reserve with the club queens
(marriage) or a hand that wins a solo even as this player plays it (see `solo_worth`);
announce with a strong hand; lead side aces while the suit is fresh; win tricks with points
as cheaply as possible, fatten a partner's trick, and throw the least valuable card when the
trick is lost.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from engines.doppelkopf.cards import (
    ACE,
    CLUB_QUEEN,
    FOLLOW,
    HEART_TEN,
    MASKS,
    POINTS,
    POWER,
    STRENGTH,
    TRUMP,
    TRUMP_ORDER,
    count,
    kind,
    present,
    rank_of,
    trick_winner,
)
from engines.doppelkopf.game import (
    DECLARATION,
    LAYOUT_OF,
    PLAYING,
    RESERVATIONS,
    DoppelkopfState,
    public_parties,
)
from engines.doppelkopf.moves import (
    ANNOUNCE,
    CARD,
    HEALTHY,
    MARRIAGE,
    NORMAL,
    PASS,
    RESERVATION,
    SOLO,
    SOLO_ACES,
    Move,
    solo_moves,
)

_TOP = {kind(0, 3), kind(1, 3), HEART_TEN}  # Qc Qs Th
ANNOUNCE_AT = 9.0  # hand strength (trumps + top trumps + half the side aces) to say re/kontra


def _trumps(hand: int, layout: int) -> int:
    m = present(hand) & MASKS[layout][TRUMP]
    return sum(count(hand, k) for k in range(24) if m >> (2 * k) & 1)


# Which hands this player should play a solo with: every reservation of 80,000 dealt hands
# played out by this player in all four seats (`python -m bench.doppelkopf_reservations`,
# BENCHMARKS.md; checked on 80,000 other hands). Solos as it plays them lose 5 to 20 points
# a deal for the soloist unless the hand holds 11 trumps with the top ones among them, or 5
# aces for an aces solo; with both club queens the marriage is worth 17 points more than
# keeping them silent (a silent marriage is scored as a solo).
SOLO_TRUMPS = 11  # trumps of the solo's order in hand ...
SOLO_TOP = 4  # ... of which cards among its four highest kinds (two of each)
SOLO_ACES_AT = 5  # aces for an aces solo (no trumps)
VERSION = 3  # bump when the play changes: benchmark rows of another version do not count
LEVEL_OPTIONS = {"medium": {"prior": 2.0}}
"""Medium leans on this player's choice at its root as easy does (`prior` 2), as in other games:
without it, its 200 iterations depart from this player more often and worse than easy's 50
(`bench.regret`); with it, it beats easy on the ladder, by a small margin (BENCHMARKS.md)."""


def solo_strength(hand: int, contract: int) -> tuple[int, int]:
    """(trumps, of them among the four highest kinds) for a solo; (aces, aces) for aces.

    >>> from engines.doppelkopf.cards import parse_hand
    >>> from engines.doppelkopf.moves import SOLO_DIAMONDS
    >>> solo_strength(parse_hand("Th Th Qc Qs Qs Qh Jc Ad Td Kd 9d Ac"), SOLO_DIAMONDS)
    (11, 6)
    """
    if contract == SOLO_ACES:
        aces = sum(count(hand, kind(s, ACE)) for s in range(4))
        return aces, aces
    order = TRUMP_ORDER[LAYOUT_OF[contract]]
    return _trumps(hand, LAYOUT_OF[contract]), sum(count(hand, k) for k in order[:4])


def solo_worth(hand: int, solos: Sequence[Move]) -> Move | None:
    """The solo this hand should play (the strongest that qualifies), or None."""
    best, pick = (0, 0), None
    for m in solos:
        trumps, top = solo_strength(hand, m.contract)
        if m.contract == SOLO_ACES:
            ok = trumps >= SOLO_ACES_AT
        else:
            ok = trumps >= SOLO_TRUMPS and top >= SOLO_TOP
        if ok and (trumps, top) > best:
            best, pick = (trumps, top), m
    return pick


def _forced_solo(hand: int, solos: Sequence[Move]) -> Move:
    """The least bad solo for a reserving seat that has to name one (no club queen pair)."""
    return max(solos, key=lambda m: solo_strength(hand, m.contract))


def _strength(state: DoppelkopfState, seat: int) -> float:
    hand = state.hands[seat]
    trumps = _trumps(hand, state.layout)
    top = sum(count(hand, k) for k in _TOP)
    aces = sum(count(hand, kind(s, ACE)) for s in range(3))
    return trumps + top + 0.5 * aces


def choose(
    game: object, state: DoppelkopfState, seat: int, legal: Sequence[Move], rng: random.Random
) -> Move:
    if len(legal) == 1:
        return legal[0]
    phase = state.phase
    hand = state.hands[seat]
    if phase == RESERVATIONS:
        solo = solo_worth(hand, solo_moves(state.bistro))
        want = RESERVATION if solo is not None or count(hand, CLUB_QUEEN) == 2 else HEALTHY
        return next((m for m in legal if m.kind == want), legal[0])
    if phase == DECLARATION:
        solos = [m for m in legal if m.kind == SOLO]
        solo = solo_worth(hand, solos)
        if solo is not None:
            return solo
        marriage = next((m for m in legal if m.kind == MARRIAGE), None)
        if marriage is not None:
            return marriage
        return _forced_solo(hand, solos) if solos else legal[0]
    if phase != PLAYING:
        return legal[0]
    cards = [m for m in legal if m.kind == CARD]
    announcement = _announcement(state, seat, legal)
    if announcement is not None:
        return announcement
    if not cards:  # out of turn, nothing to announce
        return next((m for m in legal if m.kind == PASS), legal[0])
    return _play_card(state, seat, cards)


def _announcement(state: DoppelkopfState, seat: int, legal: Sequence[Move]) -> Move | None:
    """The re or kontra this player says now, if any: with a strong hand, out of turn or
    on its own turn before the second trick is over."""
    anns = [m for m in legal if m.kind == ANNOUNCE and m.level == 1]
    if not anns or (len(state.tricks) > 1 and any(m.kind == CARD for m in legal)):
        return None
    at = ANNOUNCE_AT if state.contract == NORMAL else ANNOUNCE_AT - 1
    return anns[0] if _strength(state, seat) >= at else None


def _play_card(state: DoppelkopfState, seat: int, cards: Sequence[Move]) -> Move:
    layout = state.layout
    follow = FOLLOW[layout]
    power = POWER[layout]
    trick = state.trick
    known = public_parties(state, seat)
    mine = known[seat]
    if not trick:
        # lead a side ace of a suit not led yet, else a low trump (Re) or a low side card
        led = {follow[c[0]] for _, c, _ in state.tricks}
        aces = [m for m in cards if follow[m.card] != TRUMP and rank_of(m.card) == ACE
                and follow[m.card] not in led]
        if aces:
            return aces[0]
        trumps = [m for m in cards if follow[m.card] == TRUMP]
        sides = [m for m in cards if follow[m.card] != TRUMP]
        if trumps and (mine == 1 or not sides):
            return min(trumps, key=lambda m: (POINTS[m.card] > 4, power[m.card]))
        return min(sides or cards, key=lambda m: (POINTS[m.card], power[m.card]))
    row = STRENGTH[layout][follow[trick[0]]]
    best_i = trick_winner(layout, trick)
    best_seat = (state.leader + best_i) % 4
    best = row[trick[best_i]]
    partner_wins = mine >= 0 and known[best_seat] == mine
    last = len(trick) == 3
    at_stake = sum(POINTS[k] for k in trick)
    winning = [m for m in cards if row[m.card] > best]
    if partner_wins and (last or best >= 100 + 9):
        # fatten the partner's trick without taking it over
        keep = [m for m in cards if row[m.card] <= best] or cards
        return max(keep, key=lambda m: (POINTS[m.card], -power[m.card]))
    if winning and (last or at_stake >= 10 or follow[trick[0]] != TRUMP):
        if last:
            return min(winning, key=lambda m: (row[m.card], POINTS[m.card]))
        return max(winning, key=lambda m: (row[m.card] >= 100 + 9, -POINTS[m.card], row[m.card]))
    return min(cards, key=lambda m: (POINTS[m.card], power[m.card]))


def candidates(
    game: object, state: DoppelkopfState, seat: int, legal: Sequence[Move]
) -> Sequence[Move]:
    """The moves worth searching: every card and pass; re or kontra only where this player
    would say it (and only the first level: skipping to 'no 60' rarely beats announcing step
    by step); a reservation only with both club queens or a solo worth playing; in the
    declaration the marriage and that solo.

    The search's own announcements lost points where this player would not have made them
    (`bench.regret`, BENCHMARKS.md), while declining this player's sometimes paid: so the
    search may pass where the player announces, not the other way round. A declaration is one
    decision worth tens of points judged by a few play-outs per solo, and the solos this
    player would not play lose (`bench.doppelkopf_reservations`).
    """
    if state.phase == RESERVATIONS:  # reserve only for a marriage or a solo worth playing
        hand = state.hands[seat]
        if count(hand, CLUB_QUEEN) == 2 or solo_worth(hand, solo_moves(state.bistro)) is not None:
            return legal
        return [m for m in legal if m.kind == HEALTHY] or legal
    if state.phase == DECLARATION and len(legal) > 1:
        solos = [m for m in legal if m.kind == SOLO]
        solo = solo_worth(state.hands[seat], solos)
        marriage = [m for m in legal if m.kind == MARRIAGE]
        if solo is None and not marriage:
            solo = _forced_solo(state.hands[seat], solos)
        return marriage + ([solo] if solo is not None else [])
    if not any(m.kind == ANNOUNCE for m in legal):
        return legal
    announcement = _announcement(state, seat, legal)
    kept = [m for m in legal if m.kind != ANNOUNCE]
    if announcement is not None:
        kept.append(announcement)
    return kept
