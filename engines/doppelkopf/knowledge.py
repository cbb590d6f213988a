"""Determinization: a full Doppelkopf state consistent with one seat's view.

Hidden cards are dealt uniformly among the deals the view allows (engines.doppelkopf.sampling),
honouring what the table has shown: suits a seat failed to follow, the bride holding the club
queens, a Kontra announcer holding none, swines shown, and the duel mode's dealing rule. The few
"at least one" facts (a Re announcer holds a club queen) are met by rejection.

Bistro deals after the first are not shuffled: the deck is the previous deal's tricks (the
view's `uncut_deck`) cut at one of 39 places. A seat's own hand then almost always tells the
cut, hence every hand; the sample deals from the cuts that agree with everything seen (uniformly
among them), and falls back on the uniform deal only for a view no cut explains.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from functools import lru_cache

from croupier.v1 import doppelkopf_pb2 as pb

from engines.doppelkopf import sampling
from engines.doppelkopf.cards import (
    CLUB_QUEEN,
    DIAMOND_ACE,
    FOLLOW,
    FULL_40,
    FULL_48,
    cards_of,
    count,
    pack,
    parse_hand,
)
from engines.doppelkopf.game import (
    COMPUTERS,
    PLAYERS,
    PLAYING,
    DoppelkopfState,
    _derive,
    _duel_ok,
    _restore_public,
    deal_cards,
    voids,
)
from engines.doppelkopf.moves import ANNOUNCE, HEALTHY, MARRIAGE, MARRIAGE_GAME, NORMAL, RESERVATION

_TRIES = 60


def sample(v: pb.DoppelkopfView, rng: random.Random) -> DoppelkopfState:
    seat = v.seat
    s = object.__new__(DoppelkopfState)
    s.seed = f"{rng.getrandbits(128):032x}"
    s.deck_option = ""
    s.first_dealer = -1
    s.shuffles = 1
    s.hands = s.dealt = (0, 0, 0, 0)
    try:
        _restore_public(s, v)
    except (ValueError, IndexError, KeyError) as exc:
        raise ValueError(f"not a Doppelkopf view: {exc}") from None
    own = parse_hand(v.hand) if seat >= 0 else 0
    played = [0, 0, 0, 0]
    for leader, trick, _ in s.tricks:
        for j, k in enumerate(trick):
            played[(leader + j) % PLAYERS] += 1 << (2 * k)
    for j, k in enumerate(s.trick):
        played[(s.leader + j) % PLAYERS] += 1 << (2 * k)
    pool = (FULL_40 if s.bistro else FULL_48) - own - sum(played)
    hidden = [x for x in range(PLAYERS) if x != seat]
    caps = [v.hand_sizes[x] for x in hidden]
    cards = cards_of(pool)
    if len(cards) != sum(caps):
        raise ValueError("the view is inconsistent: hidden card counts do not add up")
    # the public facts were restored without hands: swines shown come from the view itself
    s.swine_shown = v.swines
    by_kind = _allowed_by_kind(s, set(cards), hidden)
    checks = _checks(s, seat)
    if s.uncut:
        fits = [
            d for d in _cuts(s.uncut, s.dealer, seat, own + played[seat] if seat >= 0 else -1,
                             tuple(played))
            if _agrees(d, played, hidden, by_kind) and all(check(list(d)) for check in checks)
        ]
        if fits:
            chosen = fits[rng.randrange(len(fits))] if len(fits) > 1 else fits[0]
            s.hands = tuple(chosen[x] - played[x] for x in range(PLAYERS))  # type: ignore[assignment]
            s.dealt = chosen
            _derive(s)
            return s
    allowed = [by_kind[k] for k in cards]
    hands: list[int] = []
    for _ in range(_TRIES):
        dealt = sampling.deal(cards, allowed, caps, rng)
        if dealt is None:
            raise ValueError("the view is inconsistent: no deal of the hidden cards fits it")
        hands = [own] * PLAYERS
        for i, x in enumerate(hidden):
            hands[x] = pack(dealt[i])
        full = [hands[x] + played[x] for x in range(PLAYERS)]
        if all(check(full) for check in checks):
            break
    s.hands = tuple(hands)  # type: ignore[assignment]
    s.dealt = tuple(hands[x] + played[x] for x in range(PLAYERS))  # type: ignore[assignment]
    _derive(s)
    return s


@lru_cache(maxsize=256)
def _cuts(
    uncut: tuple[int, ...], dealer: int, seat: int, own: int, played: tuple[int, ...]
) -> tuple[tuple[int, int, int, int], ...]:
    """The deals (hands as dealt) of the cuts of `uncut` that give `seat` the hand `own` (any,
    for a spectator: -1) and every seat the cards it has played. Cached: a search samples the
    same view thousands of times."""
    out = []
    for cut in range(1, len(uncut)):
        dealt = deal_cards(uncut[cut:] + uncut[:cut], dealer, True)
        if own >= 0 and dealt[seat] != own:
            continue
        if all(_within(played[x], dealt[x]) for x in range(PLAYERS)):
            out.append(tuple(dealt))
    return tuple(out)  # type: ignore[arg-type]


def _within(part: int, whole: int) -> bool:
    """Every card of packed hand `part` is in packed hand `whole` (as many copies at least)."""
    return all(count(part, k) <= count(whole, k) for k in set(cards_of(part)))


def _agrees(dealt: tuple[int, ...], played: list[int], hidden: list[int],
            by_kind: dict[int, int]) -> bool:
    """The cards the hidden seats still hold in this deal are ones they may hold (voids shown,
    club queens and diamond aces accounted for)."""
    return all(by_kind[k] >> i & 1 for i, x in enumerate(hidden)
               for k in cards_of(dealt[x] - played[x]))


def _allowed_by_kind(s: DoppelkopfState, kinds: set[int], hidden: list[int]) -> dict[int, int]:
    """Per kind of hidden card, the bitmask (over indices of `hidden`) of seats that may hold
    it."""
    everyone = (1 << len(hidden)) - 1
    bit = {x: 1 << i for i, x in enumerate(hidden)}
    shown = voids(s)
    follow = FOLLOW[s.layout]
    by_kind: dict[int, int] = {}
    queen_only = -1  # a seat known to hold every club queen not yet played
    no_queen = 0
    ace_only, no_ace = -1, 0
    calls = s.calls
    if s.duel:
        for x, m in calls[:PLAYERS]:
            if x in COMPUTERS and m.kind == RESERVATION:
                queen_only = x
    for x, m in calls[PLAYERS:]:
        if m.kind == MARRIAGE:
            queen_only = x
    if s.phase == PLAYING:
        if s.contract == MARRIAGE_GAME:
            queen_only = s.declarer
        elif s.contract == NORMAL:
            for x, m, _ in s.anns:
                if m.kind == ANNOUNCE and m.party == 0 and x in bit:
                    no_queen |= bit[x]
        if s.swine_shown >= 0:
            ace_only = s.swine_shown
        elif s.swine_shown == -1:
            first = _first_ace_player(s)
            if first in bit:
                no_ace |= bit[first]
    for k in kinds:
        mask = everyone
        f = follow[k]
        for x in hidden:
            if shown[x] >> f & 1:
                mask &= ~bit[x]
        if k == CLUB_QUEEN:
            if queen_only >= 0:
                mask &= bit.get(queen_only, 0)
            mask &= ~no_queen
        if k == DIAMOND_ACE:
            if ace_only >= 0:
                mask &= bit.get(ace_only, 0)
            mask &= ~no_ace
        by_kind[k] = mask
    return by_kind


def _first_ace_player(s: DoppelkopfState) -> int:
    for leader, cards, _ in [*s.tricks, (s.leader, s.trick, -1)]:
        for j, k in enumerate(cards):
            if k == DIAMOND_ACE:
                return (leader + j) % PLAYERS
    return -1


def _checks(s: DoppelkopfState, seat: int) -> list[Callable[[list[int]], bool]]:
    """Facts about the dealt hands checked after dealing (met by rejection)."""
    checks: list[Callable[[list[int]], bool]] = []
    if s.duel:
        healthy_computers = [x for x, m in s.calls[:PLAYERS] if x in COMPUTERS and m.kind == HEALTHY]
        checks.append(_duel_ok)
        if healthy_computers:
            checks.append(lambda full: all(count(full[x], CLUB_QUEEN) < 2 for x in healthy_computers))
    if s.phase == PLAYING and s.contract == NORMAL:
        re_announcers = {x for x, m, _ in s.anns if m.kind == ANNOUNCE and m.party == 1}
        if re_announcers:
            checks.append(lambda full: all(count(full[x], CLUB_QUEEN) for x in re_announcers))
    return checks
