"""A rule-based Sobe e Desce player: an opponent, and a playout policy for ISMCTS.

It reads only what the acting seat knows (its hand, trumps, the cards on the table), so any
determinization may be given. Trumps: the suit with the most strength among the first three
cards. Decisions: keep trumps and aces, exchange the rest, and play only with a fair chance of
a trick (a trickless player goes up 5, or 10 under clubs). Tricks: win the current trick as
cheaply as possible, otherwise throw the least useful card; lead masters and draw trumps.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from engines.sobe_e_desce.cards import CLUBS, HEARTS, SUIT_MASK
from engines.sobe_e_desce.game import DECIDE, PLAY, TRUMP_PHASE, SobeEDesceState, must_play
from engines.sobe_e_desce.moves import (
    CARD_MOVES,
    EXCHANGE,
    PASS_MOVE,
    PLAY_MOVE,
    TRUMP_MOVES,
    TURN_MOVE,
    Move,
    make,
)

# Trick-taking worth of a card by strength (2 3 4 5 6 Q J K 7 A), as trump and as a side card.
TRUMP_WORTH = (0.3, 0.3, 0.32, 0.34, 0.36, 0.45, 0.5, 0.65, 0.85, 1.0)
SIDE_WORTH = (0.0, 0.0, 0.0, 0.0, 0.0, 0.02, 0.03, 0.08, 0.25, 0.6)
CANDIDATE_STRENGTHS = (5, 8, 9, 10)
"""Exchanges the search considers: every side card weaker than each of these strengths."""
PLAY_THRESHOLD = 1.0
"""Expected tricks from which a free player joins (more under clubs, where stakes double)."""
SEARCH_OPTIONS = {"prior": 10.0}
"""Every search level leans hard on this player's choice (root prior 10, not the levels' 2 or 0):
measured decision by decision (`bench.regret`), the search's departures from it lose points
on average at every budget tried, with uniform or belief-weighted worlds and any reward, so
the search overrules it only where its statistics disagree by a wide margin (BENCHMARKS.md)."""
LEVEL_OPTIONS = {"medium": {"prior": 40.0}, "hard": {"prior": 200.0}, "expert": {"prior": 800.0}}
"""The prior in proportion to the budget (easy's 10 for 50 iterations): the bias it gives
fades as the favourite's visits grow (`bots.ismcts`), so with the same prior medium's 200
iterations departed more often than easy's 50, and lost to it on the ladder."""
VERSION = 3  # bump when this player's play or the search's candidates change: bench rows of
# another version do not count (2: the open trick's cards no longer merge runs of cards; 3: a
# run of cards is searched as the card this player would play of it)
HEURISTIC_PHASES = (TRUMP_PHASE, DECIDE)
"""Phases whose decisions every search level leaves to this player, searching only the card
plays: naming trumps, playing or passing and what to exchange hinge on cards nobody sees yet
(the stock, the next card), and the search's departures there lost at every budget and world
model tried (`bench.regret`: playing where this player passes, -1.5 to -3.1 RISCOS each), so
that easy lost a RISCOS a match to this player from 20 points; searching only the tricks tied
(BENCHMARKS.md)."""


def hand_worth(hand: int, trump: int) -> float:
    """Rough expected tricks of a hand with these trumps."""
    worth = 0.0
    m = hand
    while m:
        low = m & -m
        c = low.bit_length() - 1
        m ^= low
        worth += TRUMP_WORTH[c % 10] if c // 10 == trump else SIDE_WORTH[c % 10]
    return worth


def discards_below(hand: int, trump: int, strength: int) -> int:
    """The side cards of the hand weaker than `strength` (what an exchange gives up)."""
    out = 0
    m = hand & ~SUIT_MASK[trump]
    while m:
        low = m & -m
        if (low.bit_length() - 1) % 10 < strength:
            out |= low
        m ^= low
    return out


def _choose_trump(hand: int) -> Move:
    best, best_suit = -1.0, -1
    for suit in range(4):
        worth = hand_worth(hand & SUIT_MASK[suit], suit)
        if suit == HEARTS:
            worth -= 0.15  # everybody plays under hearts: fewer tricks each
        if worth > best:
            best, best_suit = worth, suit
    if best < 0.9:  # nothing worth naming: let the next card decide
        return TURN_MOVE
    return TRUMP_MOVES[best_suit]


def _decide(state: SobeEDesceState, seat: int, legal: Sequence[Move]) -> Move:
    trump = state.trump
    hand = state.hands[seat]
    out = discards_below(hand, trump, 9)
    limit = min(5, len(state.stock))
    while out.bit_count() > limit:
        out &= out - 1  # keep the lowest ids out first: drop the weakest discards
    expected = hand_worth(hand & ~out, trump) + 0.28 * out.bit_count()
    others = sum(1 for _, plays, _ in state.decisions if plays)
    need = PLAY_THRESHOLD + 0.15 * others + (0.3 if trump == CLUBS else 0.0)
    if PASS_MOVE in legal and expected < need and not must_play(state, seat):
        return PASS_MOVE
    return make(EXCHANGE, out) if out else PLAY_MOVE


def _rank_key(card: int, trump: int) -> int:
    """Cheapness of throwing a card: side cards before trumps, weak before strong."""
    return (20 if card // 10 == trump else 0) + card % 10


def _play(state: SobeEDesceState, seat: int, legal: Sequence[Move]) -> Move:
    trump = state.trump
    trick = state.trick
    if not trick:
        hand = state.hands[seat]
        trumps = hand & SUIT_MASK[trump]
        played = 0
        for _, cards, _ in state.tricks:
            for c in cards:
                played |= 1 << c
        unseen = ~played & ~hand
        # lead the master trump when holding two or more trumps
        if trumps and trumps.bit_count() >= 2:
            top = trumps.bit_length() - 1
            if not unseen & SUIT_MASK[trump] & ~((2 << top) - 1):
                return CARD_MOVES[top]
        # a side master (nothing higher unseen) next
        best = None
        for m in legal:
            c = m[1]
            master = c // 10 != trump and not unseen & SUIT_MASK[c // 10] & ~((2 << c) - 1)
            if master and (best is None or c % 10 > best[1] % 10):
                best = m
        if best is not None:
            return best
        return min(legal, key=lambda m: _rank_key(m[1], trump))
    led = trick[0][1] // 10
    win, win_trump = -1, False
    for _, c in trick:
        if c // 10 == trump:
            if not win_trump or c > win:
                win, win_trump = c, True
        elif not win_trump and c // 10 == led and c > win:
            win = c
    beaters = []
    for m in legal:
        c = m[1]
        if c // 10 == trump:
            if not win_trump or c > win:
                beaters.append(m)
        elif not win_trump and c // 10 == led and c > win:
            beaters.append(m)
    last = len(trick) == state.n_part - 1
    if beaters:
        cheapest = min(beaters, key=lambda m: _rank_key(m[1], trump))
        if last or cheapest[1] // 10 == trump or cheapest[1] % 10 >= 8:
            return cheapest
        strongest = max(beaters, key=lambda m: _rank_key(m[1], trump))
        return strongest
    return min(legal, key=lambda m: _rank_key(m[1], trump))


def choose(
    game: object, state: SobeEDesceState, seat: int, legal: Sequence[Move], rng: random.Random
) -> Move:
    if len(legal) == 1:
        return legal[0]
    phase = state.phase
    if phase == PLAY:
        return _play(state, seat, legal)
    if phase == DECIDE:
        return _decide(state, seat, legal)
    if phase == TRUMP_PHASE:
        return _choose_trump(state.hands[seat])
    return legal[0]


def explains(
    game: object, state: SobeEDesceState, seat: int, legal: Sequence[Move], move: Move
) -> bool:
    """Whether this player, in `state`, would have made `move` (it chooses without chance;
    the model of the others that weighs sampled worlds, see `bots.inference`)."""
    return choose(game, state, seat, legal, _NO_CHANCE) == move


_NO_CHANCE = random.Random(0)  # `choose` draws nothing; its signature wants an rng


def _distinct_cards(state: SobeEDesceState, seat: int, legal: Sequence[Move]) -> Sequence[Move]:
    """One card per run of equivalent cards: two cards of a suit with nothing between them but
    the player's own cards and cards of finished tricks win and lose exactly the same tricks.
    A card lying in the open trick still separates them: holding K and A of trumps over a 7
    just played, only the ace takes the trick.

    A run stands for itself by its lowest card, except the run holding this player's own card,
    which that card stands for: the search's root leans towards this player's choice among the
    candidates (`prior`, `bots.ismcts`), and that choice must be the card it would play from
    the whole hand (leading the master trump, it plays the top of its run; comparing side
    masters of two suits, their top cards)."""
    if len(legal) <= 1:
        return legal
    known = state.hands[seat]
    for _, cards, _ in state.tricks:
        for c in cards:
            known |= 1 << c
    own = _play(state, seat, legal)
    kept = [legal[0]]
    prev = legal[0][1]
    for m in legal[1:]:
        c = m[1]
        between = ((1 << c) - 1) & ~((2 << prev) - 1)
        if c // 10 != prev // 10 or between & ~known:
            kept.append(m)
        elif m == own:
            kept[-1] = m  # the same run: this player's card stands for it
        prev = c
    return kept


def candidates(
    game: object, state: SobeEDesceState, seat: int, legal: Sequence[Move]
) -> Sequence[Move]:
    """The moves worth searching: one card of each run of equivalent cards; for decisions,
    pass, play, and exchanges of the weakest side cards.

    A decision offers up to 33 moves (every subset of the hand); giving up a strong card while
    keeping a weaker one of the same kind is never better, so only "every side card below a
    strength" exchanges are kept.
    """
    if state.phase == PLAY:
        return _distinct_cards(state, seat, legal)
    if state.phase != DECIDE:
        return legal
    trump = state.trump
    hand = state.hands[seat]
    limit = min(5, len(state.stock))
    kept: list[Move] = [m for m in legal if m[0] != EXCHANGE or not m[1]]
    seen = set()
    for strength in CANDIDATE_STRENGTHS:
        out = discards_below(hand, trump, strength)
        while out.bit_count() > limit:
            out &= out - 1
        if out and out not in seen:
            seen.add(out)
            kept.append(make(EXCHANGE, out))
    return kept
