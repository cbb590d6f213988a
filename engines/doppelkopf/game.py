"""The Doppelkopf engine: deal, reservations, play with announcements, scoring, sessions.

The rules are written in seeds/doppelkopf.md; this module follows it section by section.
States are immutable: `apply` copies the slots and changes the few it must. Everything that
follows from the serialized fields is recomputed by `_derive` (decode, sample) and kept up to
date incrementally by `apply` (the bots' hot path).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from croupier.v1 import doppelkopf_pb2 as pb

from engines.cache import remember
from engines.contract import Game, GameInfo, IllegalMove, MoveRule, OptionSpec, Result
from engines.doppelkopf import bounds
from engines.doppelkopf.cards import (
    CLUB_JACK,
    CLUB_QUEEN,
    DIAMOND_ACE,
    FOLLOW,
    FULL_40,
    FULL_48,
    L_CLUBS,
    L_HEARTS,
    L_JACKS,
    L_MEATLESS,
    L_NORMAL,
    L_PURE,
    L_QUEENS,
    L_SPADES,
    L_SWINES,
    MASKS,
    POINTS,
    SUIT_NAMES,
    TEXT,
    TRUMP,
    cards_of,
    count,
    hand_text,
    kinds_of,
    pack,
    parse_card,
    parse_hand,
    present,
    size,
    trick_winner,
)
from engines.doppelkopf.moves import (
    ANNOUNCE,
    ANNOUNCE_MOVES,
    CARD,
    CARD_MOVES,
    CONTRACT_NAMES,
    HEALTHY,
    HEALTHY_MOVE,
    MARRIAGE,
    MARRIAGE_GAME,
    MARRIAGE_MOVE,
    NORMAL,
    PASS,
    PASS_MOVE,
    PURE_SOLOS,
    RESERVATION,
    RESERVATION_MOVE,
    SOLO,
    SOLO_ACES,
    SOLO_CLUBS,
    SOLO_DIAMONDS,
    SOLO_HEARTS,
    SOLO_JACKS,
    SOLO_QUEENS,
    SOLO_SPADES,
    SOLOS,
    Move,
    parse_move,
    solo_moves,
)
from engines.doppelkopf.scoring import outcome
from engines.slots import SlotState, install_copy

RESERVATIONS = pb.DOPPELKOPF_PHASE_RESERVATIONS
DECLARATION = pb.DOPPELKOPF_PHASE_DECLARATION
PLAYING = pb.DOPPELKOPF_PHASE_PLAYING
OVER = pb.DOPPELKOPF_PHASE_OVER
PLAYERS = 4
PEOPLE, COMPUTERS = (0, 2), (1, 3)
_SEATS = tuple(frozenset({s}) for s in range(PLAYERS))
_NOBODY: frozenset[int] = frozenset()
MAX_DUEL_REDEALS = 1000

LAYOUT_OF = {
    NORMAL: L_NORMAL, MARRIAGE_GAME: L_NORMAL, SOLO_DIAMONDS: L_NORMAL, SOLO_HEARTS: L_HEARTS,
    SOLO_SPADES: L_SPADES, SOLO_CLUBS: L_CLUBS, SOLO_QUEENS: L_QUEENS, SOLO_JACKS: L_JACKS,
    SOLO_ACES: L_MEATLESS,
}
LAYOUT_OF.update({c: L_PURE[i] for i, c in enumerate(PURE_SOLOS)})


class DealScore(NamedTuple):
    contract: int
    declarer: int
    re_seats: tuple[int, ...]
    re_points: int
    re_level: int
    kontra_level: int
    winner: int
    value: int
    scores: tuple[int, int, int, int]
    items: tuple[str, ...]
    solo: bool
    no_score: bool


class DoppelkopfState(SlotState):
    """A session in progress. Treat as immutable; `apply` returns a new one."""

    __slots__ = (
        "seed", "deals", "target", "bistro", "duel", "tournament", "deck_option",
        "first_dealer", "deal_number", "dealer", "shuffles", "totals", "history", "phase",
        "hands", "dealt", "calls", "contract", "declarer", "tricks", "trick", "anns", "uncut",
        # derived (not serialized)
        "H", "layout", "re_mask", "partner", "clarified", "swines", "swine_shown", "levels",
        "pts", "won", "leader", "turn", "waived", "acting", "silent", "closed",
    )
    _FIELDS = __slots__[:23]

    seed: str
    deals: int
    target: int
    bistro: bool
    duel: bool
    tournament: bool
    deck_option: str
    first_dealer: int
    deal_number: int
    dealer: int
    shuffles: int
    totals: tuple[int, int, int, int]
    history: tuple[DealScore, ...]
    phase: pb.DoppelkopfPhase
    hands: tuple[int, int, int, int]
    dealt: tuple[int, int, int, int]
    calls: tuple[tuple[int, Move], ...]
    contract: int
    declarer: int
    tricks: tuple[tuple[int, tuple[int, ...], int], ...]  # (leader, cards, winner seat)
    trick: tuple[int, ...]
    anns: tuple[tuple[int, Move, int], ...]  # (seat, move, cards played before it)
    uncut: tuple[int, ...]  # Bistro after the first deal: the deck before its cut (public)
    H: int
    layout: int
    re_mask: int
    partner: int
    clarified: int
    swines: int
    swine_shown: int
    levels: tuple[int, int]  # indexed by party: (kontra, re)
    pts: tuple[int, int, int, int]
    won: tuple[int, int, int, int]
    leader: int
    turn: int
    waived: int
    acting: frozenset[int]
    silent: int
    closed: bool  # no announcement is possible any more this deal (it only ever closes)

    def __repr__(self) -> str:
        hands = " / ".join(hand_text(h, self.layout) for h in self.hands)
        return (
            f"<DoppelkopfState deal {self.deal_number + 1}/{self.deals} phase {self.phase} "
            f"contract {CONTRACT_NAMES[self.contract]} hands {hands}>"
        )


install_copy(DoppelkopfState, DoppelkopfState.__slots__)

OPTIONS = (
    OptionSpec("deals", "int", 4, "Deals in the session.", 1, 1000, label="Deals in the session"),
    OptionSpec(
        "target", "int", 0,
        "End the session as soon as a player's total reaches this (0: no target). If set and "
        "not reached within `deals` deals, the session ends without a winner. Also accepted "
        "under its older name `target_points`.", 0, 100000,
        label="End at this many points (0: none)", aliases=("target_points",),
    ),
    OptionSpec(
        "bistro", "bool", False,
        "Bistro (Kneipe) mode: no nines (10 cards each), pure colour solos, every solo "
        "announces at least no 90, the soloist leads, swines, Charlie, no shuffle between deals.",
        label="Bistro (Kneipe) rules",
    ),
    OptionSpec(
        "duel", "bool", False,
        "Duel mode: people at seats 0 and 2 against computers at 1 and 3, never on the same "
        "party in a normal game; computers announce nothing and play no solo.",
        label="Duel: people at seats 0 and 2 against computers",
    ),
    OptionSpec(
        "tournament", "bool", False,
        "Tournament display: views carry the raw history only (no running card points, no "
        "derived parties, no announcement summary).",
        label="Tournament display (no helper info)", advanced=True,
    ),
    OptionSpec(
        "deck", "cards", "",
        "Card order of the first deal, top first: 48 codes (40 in Bistro) such as 'Qc Th 9d "
        "...', dealt from the dealer's left in packets of 3 (Bistro: 3-4-3). Empty: shuffled.",
        label="Fixed deck (card codes)", advanced=True,
    ),
    OptionSpec(
        "dealer", "int", -1, "Seat dealing the first deal; -1: drawn from the seed.", -1, 3,
        label="First dealer (seat, -1 random)", advanced=True,
    ),
)

NOTATION = (
    "cards 'Qc' 'Th' '9d' (rank A T K Q J 9, suit c s h d); healthy; reservation; marriage; "
    "solo diamonds|hearts|spades|clubs|queens|jacks|aces (Bistro also solo pure <suit>); "
    "announcements re, kontra, 're no 90', 'kontra no 60', 're no 30', 're schwarz'; pass"
)


# --- dealing ---------------------------------------------------------------------------

def parse_deck(text: str, bistro: bool) -> list[int]:
    """The `deck` option as kinds, checked to be exactly one full deck."""
    cards = [parse_card(t) for t in text.replace(",", " ").split()]
    full = FULL_40 if bistro else FULL_48
    n = 40 if bistro else 48
    if len(cards) != n or pack(cards) != full or any(count(pack(cards), k) > 2 for k in cards):
        raise ValueError(
            f"option 'deck' must list the {n} cards of the deck once each"
            + (" (no nines in Bistro mode)" if bistro else "")
        )
    return cards


def packets(bistro: bool) -> tuple[int, ...]:
    return (3, 4, 3) if bistro else (3, 3, 3, 3)


def deal_cards(deck: Sequence[int], dealer: int, bistro: bool) -> list[int]:
    """Hands (packed) from a deck, top first, dealt in packets from the dealer's left."""
    hands = [0, 0, 0, 0]
    pos = 0
    for n in packets(bistro):
        for i in range(PLAYERS):
            seat = (dealer + 1 + i) % PLAYERS
            for k in deck[pos:pos + n]:
                hands[seat] += 1 << (2 * k)
            pos += n
    return hands


def deck_from_hands(hands: Sequence[str], dealer: int = 3, bistro: bool = False) -> str:
    """The `deck` option text that deals these hands (hands[s] for seat s): for tests/puzzles."""
    cards = [sorted(cards_of(parse_hand(h))) for h in hands]
    order: list[int] = []
    for n in packets(bistro):
        for i in range(PLAYERS):
            seat = (dealer + 1 + i) % PLAYERS
            order.extend(cards[seat][:n])
            cards[seat] = cards[seat][n:]
    return " ".join(TEXT[k] for k in order)


def _duel_ok(hands: Sequence[int]) -> bool:
    """Duel: the two people must not be on the same party in a normal game."""
    q = [count(h, CLUB_QUEEN) for h in hands]
    if q[0] == 1 and q[2] == 1:
        return False  # both Re
    # both Kontra when the computers share the club queens
    return not (q[0] == 0 and q[2] == 0 and q[1] == 1)


def _deal(s: DoppelkopfState, previous: DoppelkopfState | None = None) -> None:
    """Deal the next deal of the session into `s` (dealer already set)."""
    s.uncut = ()
    if s.deal_number == 0 and s.deck_option and previous is None:
        deck = parse_deck(s.deck_option, s.bistro)
    elif s.bistro and previous is not None:
        s.uncut = gathered(previous.tricks, previous.dealer)
        cut = random.Random(f"{s.seed}/cut/{s.deal_number}").randrange(1, len(s.uncut))
        deck = list(s.uncut[cut:] + s.uncut[:cut])
    else:
        deck = _shuffled(s)
    hands = deal_cards(deck, s.dealer, s.bistro)
    tries = 0
    while s.duel and not _duel_ok(hands):
        tries += 1
        deck = _shuffled(s)
        hands = deal_cards(deck, s.dealer, s.bistro)
        if tries >= MAX_DUEL_REDEALS:  # practically unreachable; keeps the loop bounded
            break
    s.hands = tuple(hands)  # type: ignore[assignment]
    s.dealt = s.hands
    s.phase = RESERVATIONS
    s.calls = ()
    s.contract = NORMAL
    s.declarer = -1
    s.tricks = ()
    s.trick = ()
    s.anns = ()
    _derive(s)


def gathered(tricks: Sequence[tuple[int, tuple[int, ...], int]], dealer: int) -> tuple[int, ...]:
    """Bistro's next deck before its cut: the tricks gathered seat by seat from the dealer's
    left, each seat's tricks in the order won, each trick's cards in play order."""
    deck: list[int] = []
    for i in range(PLAYERS):
        seat = (dealer + 1 + i) % PLAYERS
        for _, cards, winner in tricks:
            if winner == seat:
                deck.extend(cards)
    return tuple(deck)


def _shuffled(s: DoppelkopfState) -> list[int]:
    deck = cards_of(FULL_40 if s.bistro else FULL_48)
    random.Random(f"{s.seed}/shuffle/{s.shuffles}").shuffle(deck)
    s.shuffles += 1
    return deck


# --- derived facts ---------------------------------------------------------------------

def _reservers(s: DoppelkopfState) -> list[int]:
    return [seat for seat, m in s.calls[:PLAYERS] if m.kind == RESERVATION]


def _derive(s: DoppelkopfState) -> None:
    """Recompute every derived slot from the serialized ones."""
    s.H = 10 if s.bistro else 12
    s.silent = -1
    s.partner = -1
    s.clarified = -1
    s.swines = -1
    s.swine_shown = -2
    s.levels = (0, 0)
    s.pts = (0, 0, 0, 0)
    s.won = (0, 0, 0, 0)
    s.waived = 0
    s.closed = False
    s.layout = LAYOUT_OF[s.contract]
    s.re_mask = 0
    if s.phase != PLAYING:
        s.leader = s.turn = -1
        s.acting = _pre_play_acting(s)
        return
    if s.contract == NORMAL:
        for seat in range(PLAYERS):
            q = count(s.dealt[seat], CLUB_QUEEN)
            if q:
                s.re_mask |= 1 << seat
            if q == 2:
                s.silent = seat
    else:
        s.re_mask = 1 << s.declarer
    if s.bistro and s.contract in (NORMAL, MARRIAGE_GAME):
        for seat in range(PLAYERS):
            if count(s.dealt[seat], DIAMOND_ACE) == 2:
                s.swines = seat
                s.layout = L_SWINES
    levels = [0, 0]
    if s.bistro and s.contract in SOLOS:
        levels[1] = 2
    s.levels = tuple(levels)  # type: ignore[assignment]
    s.leader = _first_leader(s)
    s.turn = s.leader
    pts = [0, 0, 0, 0]
    won = [0, 0, 0, 0]
    replay = list(s.anns)
    ai = 0
    for i, (leader, cards, winner) in enumerate(s.tricks):
        while ai < len(replay) and replay[ai][2] < 4 * (i + 1):
            _note_ann(s, replay[ai])
            ai += 1
        _note_swines(s, leader, cards)
        pts[winner] += sum(POINTS[k] for k in cards)
        won[winner] += 1
        if s.contract == MARRIAGE_GAME and s.clarified < 0 and i < 3:
            _marriage_trick(s, i, winner, tricks_won_by_others=_others_won(s, i))
    s.pts = tuple(pts)  # type: ignore[assignment]
    s.won = tuple(won)  # type: ignore[assignment]
    if s.tricks:
        s.leader = s.tricks[-1][2]
    _note_swines(s, s.leader, s.trick)
    s.turn = (s.leader + len(s.trick)) % PLAYERS
    base = 4 * len(s.tricks)
    for a in replay[ai:]:
        _note_ann(s, a)
        if a[1].kind == PASS and a[2] >= base:
            s.waived |= 1 << a[0]
    s.acting = _acting(s)


def _note_ann(s: DoppelkopfState, a: tuple[int, Move, int]) -> None:
    move = a[1]
    if move.kind == ANNOUNCE:
        levels = list(s.levels)
        levels[move.party] = max(levels[move.party], move.level)
        s.levels = tuple(levels)  # type: ignore[assignment]


def _note_swines(s: DoppelkopfState, leader: int, cards: Sequence[int]) -> None:
    if s.swine_shown != -2 or DIAMOND_ACE not in cards:
        return
    if not (s.bistro and s.contract in (NORMAL, MARRIAGE_GAME)):
        return
    seat = (leader + list(cards).index(DIAMOND_ACE)) % PLAYERS
    s.swine_shown = seat if s.swines == seat else -1


def _others_won(s: DoppelkopfState, upto: int) -> bool:
    return any(s.tricks[j][2] != s.declarer for j in range(upto + 1))


def _first_leader(s: DoppelkopfState) -> int:
    if s.bistro and s.contract in SOLOS:
        return s.declarer
    return (s.dealer + 1) % PLAYERS


def _marriage_trick(s: DoppelkopfState, i: int, winner: int, tricks_won_by_others: bool) -> bool:
    """Marriage bookkeeping after trick i (0-2). True when the deal ends without score."""
    bride = s.declarer
    if s.duel:
        bride_person = bride in PEOPLE
        if winner != bride and (winner in COMPUTERS) == bride_person:
            s.partner, s.clarified = winner, i
            s.re_mask |= 1 << winner
            return False
        if i == 2:
            if bride_person and not tricks_won_by_others:
                s.clarified = 2  # the bride plays alone
                return False
            return True
        return False
    if winner != bride:
        s.partner, s.clarified = winner, i
        s.re_mask |= 1 << winner
    elif i == 2:
        s.clarified = 2
    return False


def _pre_play_acting(s: DoppelkopfState) -> frozenset[int]:
    if s.phase == RESERVATIONS:
        return _SEATS[(s.dealer + 1 + len(s.calls)) % PLAYERS]
    if s.phase == DECLARATION:
        return _SEATS[_reservers(s)[len(s.calls) - PLAYERS]]
    return _NOBODY


def _cards_held(s: DoppelkopfState, seat: int) -> int:
    return s.H - len(s.tricks) - (1 if (seat - s.leader) % PLAYERS < len(s.trick) else 0)


def _ann_range(s: DoppelkopfState, seat: int, party: int = -1) -> tuple[int, int, int] | None:
    """(party, lowest, highest) announcement levels `seat` may make now, or None.

    `party` forces the party to assume (to ask "could it, were it Re/Kontra?")."""
    if s.duel and seat in COMPUTERS:
        return None
    shift = 0
    if s.contract == MARRIAGE_GAME:
        if s.clarified < 0:
            return None
        shift = s.clarified
    if party < 0:
        party = (s.re_mask >> seat) & 1
    own = s.levels[party]
    if own >= 5:
        return None
    cards = _cards_held(s, seat)
    if cards >= s.H - (own + 1) - shift:
        return (party, own + 1, 5)
    opp = s.levels[1 - party]
    if own == 0 and opp >= 1 and cards >= s.H - 1 - opp - shift:
        # a reply; it may skip on to higher levels while no 90 is in time, as `kontra` then
        # `kontra no 90` could
        return (party, 1, 5 if cards >= s.H - 2 - shift else 1)
    return None


def _acting(s: DoppelkopfState) -> frozenset[int]:
    if s.phase != PLAYING:
        return _pre_play_acting(s)
    turn = s.turn
    if s.closed:
        return _SEATS[turn]
    shift = 0
    if s.contract == MARRIAGE_GAME:
        if s.clarified < 0:
            return _SEATS[turn]
        shift = s.clarified
    # cheap bound: nobody holds enough cards for any party's next announcement
    kontra, re = s.levels
    need = s.H - shift - max(
        kontra + 1 if kontra < 5 else -99, re + 1 if re < 5 else -99,
        1 + re if kontra == 0 and re else -99, 1 + kontra if re == 0 and kontra else -99,
    )
    if s.H - len(s.tricks) < need:
        s.closed = True
        return _SEATS[turn]
    # Who is asked depends on public facts only: in a normal game the parties are secret,
    # so a seat is asked when it could announce were it on either side (it may then only pass).
    secret = s.contract == NORMAL
    extra = 0
    for seat in range(PLAYERS):
        if seat == turn or (s.waived >> seat) & 1:
            continue
        if secret:
            if _ann_range(s, seat, 0) is not None or _ann_range(s, seat, 1) is not None:
                extra |= 1 << seat
        elif _ann_range(s, seat) is not None:
            extra |= 1 << seat
    if not extra:
        return _SEATS[turn]
    return frozenset(x for x in range(PLAYERS) if x == turn or (extra >> x) & 1)


# the card moves of a presence mask of playable kinds; a bot process meets new hands for as
# long as it lives, so the cache starts afresh when full (a lookup stays one dict.get); 2**16
# masks hold a few MB
CARD_CACHE_SIZE = 1 << 16
_CARD_CACHE: dict[int, tuple[Move, ...]] = {}


def _card_moves(mask: int) -> tuple[Move, ...]:
    moves = _CARD_CACHE.get(mask)
    if moves is None:
        moves = tuple(CARD_MOVES[k] for k in kinds_of(mask))
        remember(_CARD_CACHE, CARD_CACHE_SIZE, mask, moves)
    return moves


def _playable(s: DoppelkopfState, seat: int) -> int:
    """Presence mask of the kinds `seat` may play now (follow suit if possible)."""
    have = present(s.hands[seat])
    if not s.trick:
        return have
    follow = have & MASKS[s.layout][FOLLOW[s.layout][s.trick[0]]]
    return follow or have


# --- the engine -------------------------------------------------------------------------

class Doppelkopf(Game[DoppelkopfState, Move, pb.DoppelkopfView]):
    info = GameInfo(
        name="doppelkopf",
        title="Doppelkopf",
        min_players=4,
        max_players=4,
        options=OPTIONS,
        notation=NOTATION,
        view_field="doppelkopf",
        zero_sum=True,
        one_deal={"deals": 1},
        bounds=bounds.bounds,
        duplicate_deal=bounds.duplicate_deal,
    )

    # --- set-up -------------------------------------------------------------------------
    def seat_kinds(self, players: int, options: Mapping[str, Any]) -> tuple[str, ...] | None:
        # duel: people at seats 0 and 2, computers at 1 and 3 (the rules treat them apart)
        return ("human", "bot", "human", "bot") if options.get("duel") else None

    def new_game(self, players: int, options: Mapping[str, Any], seed: str) -> DoppelkopfState:
        opts = self.checked_options(players, options)
        if opts["bistro"] and opts["duel"]:
            raise ValueError("options 'bistro' and 'duel' are separate modes: choose one")
        deck_text = " ".join(opts["deck"].replace(",", " ").split())
        if deck_text:
            parse_deck(deck_text, opts["bistro"])
        s = object.__new__(DoppelkopfState)
        s.seed = str(seed)
        s.deals = opts["deals"]
        s.target = opts["target"]
        s.bistro = opts["bistro"]
        s.duel = opts["duel"]
        s.tournament = opts["tournament"]
        s.deck_option = deck_text
        s.first_dealer = opts["dealer"]
        s.deal_number = 0
        s.shuffles = 0
        dealer = s.first_dealer
        if dealer < 0:
            dealer = random.Random(f"{s.seed}/dealer").randrange(PLAYERS)
        s.dealer = dealer
        s.totals = (0, 0, 0, 0)
        s.history = ()
        _deal(s)
        return s

    # --- play ---------------------------------------------------------------------------
    def to_act(self, state: DoppelkopfState) -> frozenset[int]:
        return state.acting

    def on_turn(self, state: DoppelkopfState) -> frozenset[int]:
        # in play, the others in `acting` may only announce; before it, one seat acts
        if state.phase == PLAYING and state.acting:
            return _SEATS[state.turn]
        return state.acting

    def is_over(self, state: DoppelkopfState) -> bool:
        return state.phase == OVER

    def legal_moves(self, state: DoppelkopfState, seat: int) -> Sequence[Move]:
        if seat not in state.acting:
            return ()
        phase = state.phase
        if phase == PLAYING:
            if seat == state.turn:
                cards = _card_moves(_playable(state, seat))
                if state.closed or (state.waived >> seat) & 1:
                    return cards  # a pass holds until the trick ends, its own turn included
                rng = _ann_range(state, seat)
                if rng is None:
                    return cards
                party, lo, hi = rng
                return cards + tuple(ANNOUNCE_MOVES[(party, lv)] for lv in range(lo, hi + 1))
            rng = _ann_range(state, seat)
            if rng is None:
                return (PASS_MOVE,)
            party, lo, hi = rng
            return tuple(ANNOUNCE_MOVES[(party, lv)] for lv in range(lo, hi + 1)) + (PASS_MOVE,)
        if phase == RESERVATIONS:
            if state.duel and seat in COMPUTERS:
                both = count(state.hands[seat], CLUB_QUEEN) == 2
                return (RESERVATION_MOVE,) if both else (HEALTHY_MOVE,)
            return (HEALTHY_MOVE, RESERVATION_MOVE)
        # declaration
        both = count(state.hands[seat], CLUB_QUEEN) == 2
        if state.duel and seat in COMPUTERS:
            return (MARRIAGE_MOVE,)
        return ((MARRIAGE_MOVE,) if both else ()) + solo_moves(state.bistro)

    def apply(self, state: DoppelkopfState, seat: int, move: Move) -> DoppelkopfState:
        if not isinstance(move, Move):
            raise IllegalMove(f"not a Doppelkopf move: {move!r}")
        if state.phase == OVER:
            raise IllegalMove("the session is over")
        if not 0 <= seat < PLAYERS:
            raise IllegalMove(f"no seat {seat} at a 4-player table")
        if state.phase == PLAYING:
            if move.kind == CARD:
                return _play(state, seat, move)
            if move.kind in (ANNOUNCE, PASS):
                return _announce(state, seat, move)
            raise IllegalMove(
                f"'{move.text}' is not a move of the card play: play a card, announce or pass",
                MoveRule.WRONG_PHASE,
            )
        if seat not in state.acting:
            who = next(iter(state.acting))
            raise IllegalMove(
                f"it is seat {who}'s turn to declare, not seat {seat}'s", MoveRule.NOT_YOUR_TURN
            )
        if move not in self.legal_moves(state, seat):
            raise IllegalMove(_why_not_declare(state, seat, move), MoveRule.DECLARATION_NOT_ALLOWED)
        return _declare(state, seat, move)

    # --- notation -----------------------------------------------------------------------
    def parse_move(self, text: str) -> Move:
        return parse_move(text)

    # --- knowledge ----------------------------------------------------------------------
    def view(self, state: DoppelkopfState, seat: int | None) -> pb.DoppelkopfView:
        if seat is not None and not 0 <= seat < PLAYERS:
            raise ValueError(f"no seat {seat} at a 4-player table")
        return _view(state, -1 if seat is None else seat)

    def sample(self, view: pb.DoppelkopfView, rng: random.Random) -> DoppelkopfState:
        from engines.doppelkopf.knowledge import sample

        return sample(view, rng)

    # --- outcome ------------------------------------------------------------------------
    def result(self, state: DoppelkopfState) -> Result:
        last = state.history[-1].scores if state.history else (0, 0, 0, 0)
        finished = state.phase == OVER
        winners: tuple[int, ...] = ()
        if finished:
            best = max(state.totals)
            if not state.target or best >= state.target:
                winners = tuple(s for s in range(PLAYERS) if state.totals[s] == best)
        return Result(state.totals, last, finished, winners, len(state.history))

    def deal_number(self, state: DoppelkopfState) -> int:
        return state.deal_number

    def dealt(self, state: DoppelkopfState) -> str:
        """The four hands, sorted as a normal game holds them."""
        return "\n".join(f"seat {i}: {hand_text(h)}" for i, h in enumerate(state.hands))

    def num_players(self, state: DoppelkopfState) -> int:
        return PLAYERS

    def partners(self, state: DoppelkopfState, seat: int) -> frozenset[int]:
        if state.phase != PLAYING:
            return _SEATS[seat]
        known = public_parties(state, -1)
        mine = known[seat]
        if mine < 0:
            return _SEATS[seat]
        return frozenset(x for x in range(PLAYERS) if known[x] == mine)

    def census(self, state: DoppelkopfState) -> Counter[str]:
        c: Counter[str] = Counter()
        for h in state.hands:
            for k in cards_of(h):
                c[TEXT[k]] += 1
        for _, cards, _ in state.tricks:
            for k in cards:
                c[TEXT[k]] += 1
        for k in state.trick:
            c[TEXT[k]] += 1
        return c

    # --- storage ------------------------------------------------------------------------
    def encode(self, state: DoppelkopfState) -> bytes:
        msg = pb.DoppelkopfState(
            seed=state.seed, deals=state.deals, target_points=state.target, bistro=state.bistro,
            duel=state.duel, tournament=state.tournament, deck_option=state.deck_option,
            first_dealer=state.first_dealer, deal_number=state.deal_number, dealer=state.dealer,
            shuffles=state.shuffles, totals=state.totals, phase=state.phase,
            hands=[hand_text(h) for h in state.hands], dealt=[hand_text(h) for h in state.dealt],
            contract=state.contract, declarer=state.declarer,
        )
        _fill_public(msg, state)
        return msg.SerializeToString()

    def decode(self, data: bytes) -> DoppelkopfState:
        msg = pb.DoppelkopfState()
        with self.decoding():
            msg.ParseFromString(data)
            s = object.__new__(DoppelkopfState)
            s.seed = msg.seed
            s.deck_option = msg.deck_option
            s.first_dealer = msg.first_dealer
            s.shuffles = msg.shuffles
            if len(msg.hands) != PLAYERS or len(msg.dealt) != PLAYERS:
                raise ValueError("four hands expected")
            s.hands = tuple(parse_hand(h) for h in msg.hands)  # type: ignore[assignment]
            s.dealt = tuple(parse_hand(h) for h in msg.dealt)  # type: ignore[assignment]
            _restore_public(s, msg)
        return s


# --- rules -----------------------------------------------------------------------------

def _why_not_declare(state: DoppelkopfState, seat: int, move: Move) -> str:
    if state.phase == RESERVATIONS:
        if move.kind not in (HEALTHY, RESERVATION):
            return "first say 'healthy' or 'reservation'; solos and marriages are named after"
        if state.duel and seat in COMPUTERS:
            return ("in duel mode a computer reserves exactly when it holds both club queens "
                    "(a marriage)")
        return "say 'healthy' or 'reservation'"
    if move.kind == MARRIAGE:
        if state.duel and seat in COMPUTERS:
            return "impossible"
        return "a marriage needs both club queens in your hand"
    if move.kind == SOLO:
        if state.duel and seat in COMPUTERS:
            return "in duel mode computers play no solo"
        if move.contract in PURE_SOLOS:
            return "pure colour solos are played in Bistro mode only"
    return "name your reservation: a solo ('solo queens', ...) or 'marriage'"


def _declare(state: DoppelkopfState, seat: int, move: Move) -> DoppelkopfState:
    s = state.copy()
    s.calls = state.calls + ((seat, move),)
    if state.phase == RESERVATIONS:
        if len(s.calls) < PLAYERS:
            s.acting = _pre_play_acting(s)
            return s
        if not _reservers(s):
            _start_play(s, NORMAL, -1)
        else:
            s.phase = DECLARATION
            s.acting = _pre_play_acting(s)
        return s
    if move.kind == SOLO:
        _start_play(s, move.contract, seat)
        return s
    # a marriage: only if nobody after declares a solo
    remaining = _reservers(s)[len(s.calls) - PLAYERS:]
    if remaining:
        s.acting = _SEATS[remaining[0]]
        return s
    bride = next(x for x, m in s.calls[PLAYERS:] if m.kind == MARRIAGE)
    _start_play(s, MARRIAGE_GAME, bride)
    return s


def _start_play(s: DoppelkopfState, contract: int, declarer: int) -> None:
    s.phase = PLAYING
    s.contract = contract
    s.declarer = declarer
    s.tricks = ()
    s.trick = ()
    s.anns = ()
    _derive(s)


def _play(state: DoppelkopfState, seat: int, move: Move) -> DoppelkopfState:
    if seat != state.turn:
        raise IllegalMove(
            f"it is seat {state.turn}'s turn to play a card, not seat {seat}'s",
            MoveRule.NOT_YOUR_TURN,
            to_act=state.turn,
        )
    k = move.card
    hand = state.hands[seat]
    if not (hand >> (2 * k)) & 3:
        raise IllegalMove(f"your hand does not hold {move.text}", MoveRule.CARD_NOT_IN_HAND)
    if not (_playable(state, seat) >> (2 * k)) & 1:
        led = FOLLOW[state.layout][state.trick[0]]
        name = "trump" if led == TRUMP else SUIT_NAMES[led]
        raise IllegalMove(
            f"you must follow {name}: {move.text} is not {name} and you hold {name}",
            MoveRule.MUST_FOLLOW_SUIT,
            suit=name,
        )
    s = state.copy()
    hands = list(state.hands)
    hands[seat] = hand - (1 << (2 * k))
    s.hands = tuple(hands)
    trick = state.trick + (k,)
    if k == DIAMOND_ACE:
        _note_swines(s, state.leader, trick)
    if len(trick) < PLAYERS:
        s.trick = trick
        s.turn = (seat + 1) % PLAYERS
        s.acting = _SEATS[s.turn] if s.closed else _acting(s)
        return s
    leader = state.leader
    winner = (leader + trick_winner(state.layout, trick)) % PLAYERS
    s.tricks = state.tricks + ((leader, trick, winner),)
    s.trick = ()
    pts = list(state.pts)
    pts[winner] += POINTS[trick[0]] + POINTS[trick[1]] + POINTS[trick[2]] + POINTS[trick[3]]
    s.pts = tuple(pts)
    won = list(state.won)
    won[winner] += 1
    s.won = tuple(won)
    s.leader = s.turn = winner
    s.waived = 0
    i = len(state.tricks)
    if (s.contract == MARRIAGE_GAME and s.clarified < 0 and i < 3
            and _marriage_trick(s, i, winner, _others_won(s, i))):
        _end_deal(s, no_score=True)
        return s
    if len(s.tricks) == s.H:
        _end_deal(s)
        return s
    s.acting = _acting(s)
    return s


def _announce(state: DoppelkopfState, seat: int, move: Move) -> DoppelkopfState:
    if seat not in state.acting or (state.waived >> seat) & 1:
        raise IllegalMove(_why_no_announcement(state, seat, move), MoveRule.ANNOUNCEMENT_NOT_ALLOWED)
    if move.kind == PASS:
        if seat == state.turn:
            raise IllegalMove(
                "it is your turn to play a card: you cannot pass", MoveRule.MAY_NOT_PASS
            )
        s = state.copy()
        s.anns = state.anns + ((seat, move, 4 * len(state.tricks) + len(state.trick)),)
        s.waived = state.waived | (1 << seat)
        s.acting = _acting(s)
        return s
    rng = _ann_range(state, seat)
    if rng is None or move.party != rng[0] or not rng[1] <= move.level <= rng[2]:
        raise IllegalMove(_why_no_announcement(state, seat, move), MoveRule.ANNOUNCEMENT_NOT_ALLOWED)
    s = state.copy()
    s.anns = state.anns + ((seat, move, 4 * len(state.tricks) + len(state.trick)),)
    levels = list(state.levels)
    levels[move.party] = move.level
    s.levels = tuple(levels)
    s.acting = _acting(s)
    return s


def _why_no_announcement(state: DoppelkopfState, seat: int, move: Move) -> str:
    if state.duel and seat in COMPUTERS:
        return "in duel mode computers make no announcements"
    if state.contract == MARRIAGE_GAME and state.clarified < 0:
        return "no announcements before the marriage is settled (the clarifying trick)"
    if (state.waived >> seat) & 1:
        return "you passed: no announcement from you until this trick ends"
    if move.kind == PASS:
        return "you have nothing to decline: pass only when asked out of turn"
    party = (state.re_mask >> seat) & 1
    if move.party != party:
        return f"you are on the {'Re' if party else 'Kontra'} side: announce '{'re' if party else 'kontra'}...'"
    own = state.levels[party]
    if move.level <= own:
        return f"your party has already announced {('', 're/kontra', 'no 90', 'no 60', 'no 30', 'schwarz')[own]}"
    held = _cards_held(state, seat)
    shift = state.clarified if state.contract == MARRIAGE_GAME else 0
    need = state.H - (own + 1) - shift
    return (
        f"too late for {move.text}: your party's next announcement needs at least {need} cards "
        f"in hand and you hold {held}"
    )


def _end_deal(s: DoppelkopfState, no_score: bool = False) -> None:
    score = _score(s, no_score)
    finished = s.copy()
    s.history = s.history + (score,)
    s.totals = tuple(t + d for t, d in zip(s.totals, score.scores, strict=True))  # type: ignore[assignment]
    s.deal_number += 1
    reached = s.target and max(s.totals) >= s.target
    if reached or s.deal_number >= s.deals:
        s.phase = OVER
        s.acting = _NOBODY
        s.turn = -1
        return
    s.dealer = (s.dealer + 1) % PLAYERS
    _deal(s, finished if s.bistro else None)


def solo_like(s: DoppelkopfState) -> int:
    """The seat playing alone and scored x3 (solo, silent marriage, lonely bride), or -1."""
    if s.contract in SOLOS:
        return s.declarer
    if s.contract == NORMAL and s.silent >= 0:
        return s.silent
    if s.contract == MARRIAGE_GAME and s.partner < 0:
        return s.declarer
    return -1


def _score(s: DoppelkopfState, no_score: bool) -> DealScore:
    re_seats = tuple(x for x in range(PLAYERS) if (s.re_mask >> x) & 1)
    re_points = sum(s.pts[x] for x in re_seats)
    if no_score:
        return DealScore(s.contract, s.declarer, re_seats, re_points, s.levels[1], s.levels[0],
                         -1, 0, (0, 0, 0, 0), ("no score: the marriage found no partner",),
                         False, True)
    alone = solo_like(s)
    specials: list[tuple[str, int]] = []
    normal_like = alone < 0
    if normal_like:
        for i, (leader, cards, winner) in enumerate(s.tricks):
            wparty = (s.re_mask >> winner) & 1
            if sum(POINTS[k] for k in cards) >= 40:
                specials.append(("doppelkopf", wparty))
            if s.swines < 0:
                for j, k in enumerate(cards):
                    if k == DIAMOND_ACE:
                        owner = (leader + j) % PLAYERS
                        if (s.re_mask >> owner) & 1 != wparty:
                            specials.append(("fox caught", wparty))
            last = s.bistro and i == len(s.tricks) - 1
            if last and cards[trick_winner(s.layout, cards)] == CLUB_JACK:
                specials.append(("charlie", wparty))
    re_tricks = sum(s.won[x] for x in re_seats)
    out = outcome(re_points, re_tricks, len(s.tricks) - re_tricks, s.levels[1], s.levels[0],
                  tuple(specials), against_the_old=normal_like)
    scores = [0, 0, 0, 0]
    for x in range(PLAYERS):
        if alone >= 0:
            scores[x] = 3 * out.value if x == alone else -out.value
        else:
            scores[x] = out.value if (s.re_mask >> x) & 1 else -out.value
    declarer = alone if alone >= 0 else s.declarer
    return DealScore(s.contract, declarer, re_seats, re_points, s.levels[1], s.levels[0],
                     out.winner, out.value, tuple(scores), out.items, alone >= 0, False)  # type: ignore[arg-type]


# --- views and messages ----------------------------------------------------------------

def public_parties(s: DoppelkopfState, seat: int) -> list[int]:
    """Per seat 1 Re, 0 Kontra, -1 unknown, as `seat` (-1: everybody) knows it."""
    known = [-1, -1, -1, -1]
    if s.phase != PLAYING:
        return known
    if s.contract in SOLOS or (s.contract == MARRIAGE_GAME and s.clarified >= 0):
        return [(s.re_mask >> x) & 1 for x in range(PLAYERS)]
    if s.contract == MARRIAGE_GAME:
        known[s.declarer] = 1
        return known
    queens = [0, 0, 0, 0]
    for leader, cards, _ in s.tricks:
        for j, k in enumerate(cards):
            if k == CLUB_QUEEN:
                queens[(leader + j) % PLAYERS] += 1
    for j, k in enumerate(s.trick):
        if k == CLUB_QUEEN:
            queens[(s.leader + j) % PLAYERS] += 1
    for x in range(PLAYERS):
        if queens[x]:
            known[x] = 1
    for x, m, _ in s.anns:
        if m.kind == ANNOUNCE:
            known[x] = m.party
    if seat >= 0:
        known[seat] = 1 if count(s.dealt[seat], CLUB_QUEEN) else 0
        if count(s.dealt[seat], CLUB_QUEEN) == 2:
            return [1 if x == seat else 0 for x in range(PLAYERS)]
    if 2 in queens or known.count(1) >= 2:
        return [1 if known[x] == 1 else 0 for x in range(PLAYERS)]
    if known.count(0) == 3:
        return [1 if known[x] != 0 else 0 for x in range(PLAYERS)]
    return known


def voids(s: DoppelkopfState) -> list[int]:
    """Per seat a 5-bit mask of following suits (bit 4: trump) it has shown it lacks."""
    out = [0, 0, 0, 0]
    if s.phase != PLAYING:
        return out
    follow = FOLLOW[s.layout]
    for leader, cards, _ in [*s.tricks, (s.leader, s.trick, -1)]:
        if not cards:
            continue
        led = follow[cards[0]]
        for j in range(1, len(cards)):
            if follow[cards[j]] != led:
                out[(leader + j) % PLAYERS] |= 1 << led
    return out


_VOID_LETTERS = "cshdt"


def _view(s: DoppelkopfState, seat: int) -> pb.DoppelkopfView:
    v = pb.DoppelkopfView(
        seat=seat, phase=s.phase, deal_number=s.deal_number, deals=s.deals,
        target_points=s.target, bistro=s.bistro, duel=s.duel, tournament=s.tournament,
        dealer=s.dealer, hand=hand_text(s.hands[seat], s.layout) if seat >= 0 else "",
        hand_sizes=[size(h) for h in s.hands], contract=s.contract, declarer=s.declarer,
        turn=s.turn if s.phase == PLAYING else -1, swines=s.swine_shown, totals=s.totals,
    )
    _fill_public(v, s)
    if not s.tournament:
        v.re_level, v.kontra_level = s.levels[1], s.levels[0]
        v.parties.extend(public_parties(s, seat) if s.phase == PLAYING else [-1] * PLAYERS)
        v.points.extend(s.pts if s.phase == PLAYING else (0, 0, 0, 0))
        v.voids.extend(
            "".join(_VOID_LETTERS[i] for i in range(5) if m >> i & 1) for m in voids(s)
        )
        v.partner = s.partner if s.phase == PLAYING else -1
        if s.phase == PLAYING and s.trick:
            led = FOLLOW[s.layout][s.trick[0]]
            v.to_follow = "trump" if led == TRUMP else SUIT_NAMES[led]
    else:
        v.partner = -1
    return v


def _fill_public(msg: pb.DoppelkopfView | pb.DoppelkopfState, s: DoppelkopfState) -> None:
    add_calls = msg.calls.add
    for seat, m in s.calls:
        add_calls(seat=seat, move=m.text)
    add_tricks = msg.tricks.add
    for leader, cards, winner in s.tricks:
        add_tricks(leader=leader, cards=" ".join(TEXT[k] for k in cards), winner=winner)
    msg.trick.leader = s.leader if s.phase == PLAYING else -1
    msg.trick.cards = " ".join(TEXT[k] for k in s.trick)
    msg.trick.winner = -1
    add_announcements = msg.announcements.add
    for seat, m, pos in s.anns:
        add_announcements(seat=seat, move=m.text, position=pos)
    add_history = msg.history.add
    for d in s.history:
        add_history(contract=d.contract, declarer=d.declarer, re_seats=d.re_seats, re_points=d.re_points,
            re_level=d.re_level, kontra_level=d.kontra_level, winner=d.winner, value=d.value,
            scores=d.scores, items=d.items, solo=d.solo, no_score=d.no_score)
    msg.uncut_deck = " ".join(TEXT[k] for k in s.uncut)


def _restore_public(s: DoppelkopfState, msg: pb.DoppelkopfState | pb.DoppelkopfView) -> None:
    """Set the fields a state shares with a view, then derive the rest. ValueError if bad."""
    s.deals = msg.deals
    s.target = msg.target_points
    s.bistro = msg.bistro
    s.duel = msg.duel
    s.tournament = msg.tournament
    s.deal_number = msg.deal_number
    s.dealer = msg.dealer
    if len(msg.totals) != PLAYERS or not 0 <= s.dealer < PLAYERS:
        raise ValueError("four totals and a dealer seat expected")
    s.totals = tuple(msg.totals)  # type: ignore[assignment]
    s.history = tuple(
        DealScore(d.contract, d.declarer, tuple(d.re_seats), d.re_points, d.re_level,
                  d.kontra_level, d.winner, d.value, tuple(d.scores),  # type: ignore[arg-type]
                  tuple(d.items), d.solo, d.no_score)
        for d in msg.history
    )
    s.phase = msg.phase
    if s.phase not in (RESERVATIONS, DECLARATION, PLAYING, OVER):
        raise ValueError("bad phase")
    s.contract = msg.contract
    if s.contract not in LAYOUT_OF:
        raise ValueError("bad contract")
    s.declarer = msg.declarer
    if s.contract != NORMAL and not 0 <= s.declarer < PLAYERS:
        raise ValueError("bad declarer")
    s.calls = tuple((_seat(a.seat), parse_move(a.move)) for a in msg.calls)
    tricks = []
    for t in msg.tricks:
        cards = tuple(parse_card(c) for c in t.cards.split())
        if len(cards) != PLAYERS:
            raise ValueError("a finished trick has four cards")
        tricks.append((_seat(t.leader), cards, _seat(t.winner)))
    s.tricks = tuple(tricks)
    s.trick = tuple(parse_card(c) for c in msg.trick.cards.split())
    if len(s.trick) >= PLAYERS:
        raise ValueError("an open trick has at most three cards")
    s.anns = tuple((_seat(a.seat), parse_move(a.move), a.position) for a in msg.announcements)
    if any(m.kind not in (ANNOUNCE, PASS) for _, m, _ in s.anns):
        raise ValueError("bad announcement")
    s.uncut = tuple(parse_card(c) for c in msg.uncut_deck.split())
    if s.uncut and (not s.bistro or s.deal_number == 0 or pack(s.uncut) != FULL_40):
        raise ValueError("an uncut deck belongs to a Bistro deal after the first, with 40 cards")
    if s.phase in (RESERVATIONS, DECLARATION):
        n = len(s.calls)
        if s.phase == RESERVATIONS and n >= PLAYERS:
            raise ValueError("reservations are complete")
        if s.phase == DECLARATION and not (PLAYERS <= n < PLAYERS + len(_reservers(s))):
            raise ValueError("bad declarations")
    if s.phase == PLAYING and len(s.tricks) >= (10 if s.bistro else 12):
        raise ValueError("too many tricks")
    _derive(s)


def _seat(x: int) -> int:
    if not 0 <= x < PLAYERS:
        raise ValueError(f"bad seat {x}")
    return x


GAME = Doppelkopf()
