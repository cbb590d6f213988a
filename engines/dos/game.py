"""The Dos engine: deal, turns of matches, colour bonuses, the Dos call, rounds and the match.

The rules are written in seeds/dos.md; this module follows it. States are immutable:
`apply` copies the slots (a generated straight-line copy) and replaces the few it changes.
Hands are sorted tuples of card types, the discard pile packed counts (see cards.py).
"""

from __future__ import annotations

import random
from bisect import insort
from collections import Counter
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any, NamedTuple

from croupier.v1 import dos_pb2 as pb

from engines.cache import remember
from engines.contract import Game, GameInfo, IllegalMove, MoveRule, OptionSpec, Result
from engines.dos import bounds
from engines.dos.cards import (
    CODES,
    COPIES,
    DOUBLE_COLOUR,
    N_TYPES,
    NO_MATCH,
    POINTS,
    SINGLE_COLOUR,
    codes,
    full_deck,
    match_kind,
    pack,
    parse_card,
    parse_cards,
    parse_deck,
    parse_row,
    unpack,
)
from engines.dos.moves import (
    ADD,
    ADDS,
    CALL,
    CALL_MOVE,
    CATCH,
    CATCH_MOVE,
    DRAW,
    DRAW_MOVE,
    END_DOS,
    END_DOS_MOVE,
    END_MOVE,
    MATCH,
    Move,
    match_move,
    parse_move,
)
from engines.slots import SlotState, install_copy

PLAYING, OVER = pb.DOS_PHASE_PLAYING, pb.DOS_PHASE_OVER
HAND_SIZE = 7
ROW_SIZE = 2
_NOBODY: frozenset[int] = frozenset()
_SEATS = tuple(frozenset({s}) for s in range(4))
_ALL = tuple(frozenset(range(n)) for n in range(5))


class RoundScore(NamedTuple):
    winner: int
    points: int
    blocked: bool
    hand_points: tuple[int, ...]
    # the cards each seat held at the end: the others count them openly for the winner
    hands: tuple[str, ...] = ()


class DosState(SlotState):
    """A match in progress. Treat as immutable; `apply` returns a new one."""

    __slots__ = (
        "seed", "players", "target", "official", "max_turns", "deck_option", "first_dealer",
        "round", "dealer", "current", "turns", "reshuffles", "hands", "pile", "discards", "row",
        "matches", "adds", "drew", "drawn", "dos_window", "totals", "history", "phase",
        "_moves",  # the current player's legal moves, cached (not part of the state)
    )
    _FIELDS = __slots__[:-1]

    seed: str
    players: int
    target: int
    official: bool
    max_turns: int
    deck_option: str
    first_dealer: int
    round: int
    dealer: int
    current: int
    turns: int
    reshuffles: int
    hands: tuple[tuple[int, ...], ...]
    pile: tuple[int, ...]  # top first
    discards: int  # packed counts
    row: tuple[int, ...]
    matches: tuple[tuple[int, tuple[int, ...], int], ...]  # (row index, cards, match kind)
    adds: tuple[int, ...]
    drew: bool
    drawn: int  # the drawn card while it is still in hand, else -1
    dos_window: int
    totals: tuple[int, ...]
    history: tuple[RoundScore, ...]
    phase: pb.DosPhase
    _moves: tuple[Move, ...] | None

    def __repr__(self) -> str:
        hands = " / ".join(codes(h) for h in self.hands)
        return (
            f"<DosState round {self.round + 1} seat {self.current} to play; row {codes(self.row)};"
            f" hands {hands}>"
        )


install_copy(DosState, DosState._FIELDS, cleared=('_moves',))

OPTIONS = (
    OptionSpec(
        "target", "int", 200, "Points that win the match (scored by going out).", 1, 100_000,
        label="Points that win the match",
    ),
    OptionSpec(
        "official_no_match", "bool", False,
        "Official rule: a player who matches nothing in a turn (after drawing) must add one card "
        "from hand to the centre row.",
        label="Official rule: add a card when you match nothing",
    ),
    OptionSpec(
        "max_turns", "int", 1000,
        "Turns after which a round ends blocked: the lowest hand wins it and scores the others.",
        10, 100_000,
        label="Turn limit of a round", advanced=True,
    ),
    OptionSpec(
        "deck", "cards", "",
        "Card order of the first round, top first: the 108 codes (b7, r10, g#, w2...). Card k "
        "goes to seat (dealer + 1 + k) mod players while k < 7 x players; the next two start "
        "the centre row, the rest is the draw pile. Empty: shuffled from the table's seed.",
        label="Fixed deck (card codes)", advanced=True,
    ),
    OptionSpec(
        "dealer", "int", -1, "Seat dealing the first round; -1: drawn from the seed.", -1, 3,
        label="First dealer (seat, -1 random)", advanced=True,
    ),
)

NOTATION = (
    "cards b7 r10 (colour b g r y, number), g# (wild #), w2 (wild DOS); moves: 'b7 on b7', "
    "'r3+b4 on y7', draw, 'add b5', end, 'end dos', dos, catch"
)


# --- turn mechanics ------------------------------------------------------------------------

def _owed(s: DosState) -> int:
    """Cards still to add to the row this turn: one per colour match, one for an official
    no-match turn, minus those already added."""
    owed = 0
    for _, _, kind in s.matches:
        if kind in (SINGLE_COLOUR, DOUBLE_COLOUR):
            owed += 1
    if s.official and s.drew and not s.matches:
        owed += 1
    return owed - len(s.adds)


def _turn_moves(s: DosState) -> tuple[Move, ...]:
    """The current player's moves (the catch aside), cached on the state."""
    cached = s._moves
    if cached is not None:
        return cached
    hand = s.hands[s.current]
    out: list[Move] = []
    if hand:
        adding = bool(s.adds)
        if not adding and (not s.drew or (not s.matches and s.drawn >= 0)):
            _match_moves(s, hand, out)
        if not s.matches and not s.drew:
            out.append(DRAW_MOVE)
        owed = _owed(s)
        if owed > 0:
            prev = -1
            for t in hand:
                if t != prev:
                    out.append(ADDS[t])
                    prev = t
        elif s.matches or s.drew:
            out.append(END_MOVE)
            if len(hand) == 2:
                out.append(END_DOS_MOVE)
    moves = tuple(out)
    s._moves = moves
    return moves


# Per centre card type: bit a of _SINGLE[target] if card a matches it alone; bit b of
# _PAIR[target][a] if cards a and b match it together.
_SINGLE = [0] * N_TYPES
_PAIR = [[0] * N_TYPES for _ in range(N_TYPES)]
for _t in range(N_TYPES):
    if not COPIES[_t]:
        continue
    for _a in range(N_TYPES):
        if not COPIES[_a]:
            continue
        if match_kind(_t, (_a,)) != NO_MATCH:
            _SINGLE[_t] |= 1 << _a
        for _b in range(N_TYPES):
            if COPIES[_b] and match_kind(_t, (_a, _b)) != NO_MATCH:
                _PAIR[_t][_a] |= 1 << _b
_TARGET_CACHE: dict[tuple[int, int, int], tuple[Move, ...]] = {}


def _target_moves(target: int, distinct: int, dups: int) -> tuple[Move, ...]:
    """Every match on one centre card from a hand given as bit masks of its card types
    (`dups`: types held twice or more). Cached: hands recur constantly in search."""
    key = (target, distinct, dups)
    moves = _TARGET_CACHE.get(key)
    if moves is not None:
        return moves
    out = []
    single = _SINGLE[target]
    pairs = _PAIR[target]
    rest = distinct
    while rest:
        low = rest & -rest
        a = low.bit_length() - 1
        rest ^= low
        if single & low:
            out.append(match_move(a, -1, target))
        partners = pairs[a] & (rest | (low & dups))
        while partners:
            lb = partners & -partners
            partners ^= lb
            out.append(match_move(a, lb.bit_length() - 1, target))
    moves = tuple(out)
    remember(_TARGET_CACHE, 500_000, key, moves)
    return moves


def _match_moves(s: DosState, hand: tuple[int, ...], out: list[Move]) -> None:
    used = {m[0] for m in s.matches} if s.matches else ()
    seen = 0
    drawn = s.drawn if s.drew else -1
    distinct = dups = 0
    prev = -1
    for t in hand:
        bit = 1 << t
        if t == prev:
            dups |= bit
        distinct |= bit
        prev = t
    for i, target in enumerate(s.row):
        if i in used or seen >> target & 1:
            continue
        seen |= 1 << target
        if drawn < 0:
            out.extend(_target_moves(target, distinct, dups))
            continue
        if _SINGLE[target] >> drawn & 1:
            out.append(match_move(drawn, -1, target))
        partners = _PAIR[target][drawn] & (distinct & ~(1 << drawn) | (dups & (1 << drawn)))
        while partners:
            lb = partners & -partners
            partners ^= lb
            out.append(match_move(drawn, lb.bit_length() - 1, target))


def _draw(s: DosState, hands: list[tuple[int, ...]], seat: int, k: int) -> list[int]:
    """Seat takes up to k cards from the pile, the discards reshuffled into it when empty."""
    taken: list[int] = []
    for _ in range(k):
        if not s.pile:
            if not s.discards:
                break
            cards = unpack(s.discards)
            random.Random(f"{s.seed}/reshuffle/{s.round}/{s.reshuffles}").shuffle(cards)
            s.pile = tuple(cards)
            s.discards = 0
            s.reshuffles += 1
        taken.append(s.pile[0])
        s.pile = s.pile[1:]
    if taken:
        hand = list(hands[seat])
        for t in taken:
            insort(hand, t)
        hands[seat] = tuple(hand)
    return taken


def _remove(hand: tuple[int, ...], cards: Sequence[int]) -> tuple[int, ...] | None:
    """The hand without `cards`, or None if it does not hold them."""
    h = list(hand)
    for t in cards:
        try:
            h.remove(t)
        except ValueError:
            return None
    return tuple(h)


def _end_turn(s: DosState, call: bool) -> None:
    """Discard the matches, refill the row to two, add the bonus cards, make the others draw
    for double colour matches, then score a finished round or pass the turn."""
    s._moves = None
    cur = s.current
    n = s.players
    hands = list(s.hands)
    used = set()
    discards = s.discards
    doubles = 0
    for i, matched, kind in s.matches:
        used.add(i)
        discards += pack(matched) + (1 << (4 * s.row[i]))
        if kind == DOUBLE_COLOUR:
            doubles += 1
    s.discards = discards
    row = [t for i, t in enumerate(s.row) if i not in used]
    if len(row) < ROW_SIZE:
        fill: list[int] = []
        while len(row) + len(fill) < ROW_SIZE and (s.pile or s.discards):
            if not s.pile:
                cards = unpack(s.discards)
                random.Random(f"{s.seed}/reshuffle/{s.round}/{s.reshuffles}").shuffle(cards)
                s.pile, s.discards = tuple(cards), 0
                s.reshuffles += 1
            fill.append(s.pile[0])
            s.pile = s.pile[1:]
        row.extend(fill)
    row.extend(s.adds)
    s.row = tuple(row)
    if doubles:
        for k in range(1, n):
            _draw(s, hands, (cur + k) % n, doubles)
    s.hands = tuple(hands)
    s.matches = ()
    s.adds = ()
    s.drew = False
    s.drawn = -1
    s.turns += 1
    if not hands[cur]:
        _end_round(s, cur, blocked=False)
        return
    s.dos_window = cur if len(hands[cur]) == 2 and not call else -1
    if s.turns >= s.max_turns:
        hp = [sum(POINTS[t] for t in h) for h in hands]
        order = [(cur + k) % n for k in range(1, n + 1)]
        winner = min(order, key=lambda seat: hp[seat])
        _end_round(s, winner, blocked=True)
        return
    s.current = (cur + 1) % n


def _end_round(s: DosState, winner: int, blocked: bool) -> None:
    hp = tuple(sum(POINTS[t] for t in h) for h in s.hands)
    points = sum(hp) - hp[winner]
    shown = tuple(codes(h) for h in s.hands)
    s.history = s.history + (RoundScore(winner, points, blocked, hp, shown),)
    totals = list(s.totals)
    totals[winner] += points
    s.totals = tuple(totals)
    s.dos_window = -1
    if totals[winner] >= s.target:
        s.phase = OVER
        s.current = -1
        return
    s.round += 1
    s.dealer = (s.dealer + 1) % s.players
    _deal(s)


def _deal(s: DosState) -> None:
    """Shuffle (or take the `deck` option) and deal a round into `s`."""
    if s.round == 0 and s.deck_option:
        deck = parse_deck(s.deck_option)
    else:
        deck = full_deck()
        random.Random(f"{s.seed}/deal/{s.round}").shuffle(deck)
    n = s.players
    hands: list[list[int]] = [[] for _ in range(n)]
    first = s.dealer + 1
    for k in range(HAND_SIZE * n):
        hands[(first + k) % n].append(deck[k])
    s.hands = tuple(tuple(sorted(h)) for h in hands)
    dealt = HAND_SIZE * n
    s.row = tuple(deck[dealt:dealt + ROW_SIZE])
    s.pile = tuple(deck[dealt + ROW_SIZE:])
    s.discards = 0
    s.current = first % n
    s.turns = 0
    s.reshuffles = 0
    s.matches = ()
    s.adds = ()
    s.drew = False
    s.drawn = -1
    s.dos_window = -1
    s.phase = PLAYING


# --- applying moves ------------------------------------------------------------------------

def _turn_move(state: DosState, seat: int, move: Move) -> DosState:
    kind = move.kind
    hand = state.hands[seat]
    if kind == MATCH:
        return _match(state, seat, move, hand)
    if kind == DRAW:
        if state.matches:
            raise IllegalMove(
                "you have matched this turn: you cannot draw any more", MoveRule.DRAW_NOT_ALLOWED
            )
        if state.drew:
            raise IllegalMove("you have already drawn this turn", MoveRule.DRAW_NOT_ALLOWED)
        s = state.copy()
        s.dos_window = -1
        hands = list(s.hands)
        taken = _draw(s, hands, seat, 1)
        s.hands = tuple(hands)
        s.drew = True
        s.drawn = taken[0] if taken else -1
        return _maybe_end(s)
    if kind == ADD:
        t = move.cards[0]
        if _owed(state) <= 0:
            raise IllegalMove(
                "you owe no card to the centre row: a colour match (or, with the official rule, "
                "a turn without a match) earns one",
                MoveRule.NO_BONUS_OWED,
            )
        rest = _remove(hand, move.cards)
        if rest is None:
            raise IllegalMove(f"you have no {CODES[t]} to add", MoveRule.CARD_NOT_IN_HAND)
        s = state.copy()
        s.dos_window = -1
        hands = list(s.hands)
        hands[seat] = rest
        s.hands = tuple(hands)
        s.adds = state.adds + (t,)
        s.drawn = -1  # no match may follow an added card
        return _maybe_end(s)
    # END / END_DOS
    if not state.matches and not state.drew:
        raise IllegalMove(
            "match at least one centre card or draw before ending your turn",
            MoveRule.END_TURN_NOT_ALLOWED,
        )
    if _owed(state) > 0:
        raise IllegalMove(
            f"add {_owed(state)} more card(s) from your hand to the centre row first (colour bonus)",
            MoveRule.END_TURN_NOT_ALLOWED,
            owed=_owed(state),
        )
    if kind == END_DOS and len(hand) != 2:
        raise IllegalMove(
            f"you can call Dos only when ending with two cards, not {len(hand)}",
            MoveRule.CALL_NOT_ALLOWED,
        )
    s = state.copy()
    s.dos_window = -1
    _end_turn(s, call=kind == END_DOS)
    return s


def _match(state: DosState, seat: int, move: Move, hand: tuple[int, ...]) -> DosState:
    if state.adds:
        raise IllegalMove(
            "you have started adding bonus cards: no more matches this turn", MoveRule.NOT_A_MATCH
        )
    if state.drew:
        if state.matches:
            raise IllegalMove(
                "after drawing you may make only the one match with the drawn card",
                MoveRule.NOT_A_MATCH,
            )
        if state.drawn < 0 or state.drawn not in move.cards:
            drawn = CODES[state.drawn] if state.drawn >= 0 else "nothing"
            raise IllegalMove(
                f"after drawing, only the drawn card ({drawn}) may be matched", MoveRule.NOT_A_MATCH
            )
    target = move.target
    used = {m[0] for m in state.matches}
    index = -1
    for i, t in enumerate(state.row):
        if t == target and i not in used:
            index = i
            break
    if index < 0:
        if target in state.row:
            raise IllegalMove(
                f"the {CODES[target]} in the centre row is already matched this turn",
                MoveRule.NOT_A_MATCH,
            )
        raise IllegalMove(
            f"there is no {CODES[target]} in the centre row ({codes(state.row)})", MoveRule.NOT_A_MATCH
        )
    rest = _remove(hand, move.cards)
    if rest is None:
        raise IllegalMove(
            f"your hand does not hold {' and '.join(CODES[t] for t in move.cards)}",
            MoveRule.CARD_NOT_IN_HAND,
        )
    kind = match_kind(target, move.cards)
    if kind == NO_MATCH:
        if len(move.cards) == 1:
            raise IllegalMove(
                f"{CODES[move.cards[0]]} does not match {CODES[target]}: a single match needs "
                "the same number",
                MoveRule.NOT_A_MATCH,
            )
        raise IllegalMove(
            f"{move.text.split(' on ')[0]} does not match {CODES[target]}: the two numbers must "
            "add up to it",
            MoveRule.NOT_A_MATCH,
        )
    s = state.copy()
    s.dos_window = -1
    hands = list(s.hands)
    hands[seat] = rest
    s.hands = tuple(hands)
    s.matches = state.matches + ((index, move.cards, kind),)
    if state.drawn >= 0:
        s.drawn = -1
    if not rest:
        _end_turn(s, call=False)
        return s
    return _maybe_end(s)


def _maybe_end(s: DosState) -> DosState:
    """End the turn by itself only when the hand is empty: every seat sees that. A turn with
    nothing left to do but `end` still waits for it (ruling): ending it by itself would tell
    the table that the hand (or the drawn card) allows no further match."""
    if not s.hands[s.current]:
        _end_turn(s, call=False)
    return s


# --- the engine ----------------------------------------------------------------------------

class Dos(Game[DosState, Move, pb.DosView]):
    info = GameInfo(
        name="dos",
        title="Dos",
        min_players=2,
        max_players=4,
        options=OPTIONS,
        notation=NOTATION,
        view_field="dos",
        zero_sum=False,
        one_deal={"target": 1},  # every round scores its winner a point: the first ends the match
        bounds=bounds.bounds,
        duplicate_deal=bounds.duplicate_deal,
    )

    def new_game(self, players: int, options: Mapping[str, Any], seed: str) -> DosState:
        opts = self.checked_options(players, options)
        if opts["deck"]:
            parse_deck(opts["deck"])
        if opts["dealer"] >= players:
            raise ValueError(f"option 'dealer' must be a seat below {players}, got {opts['dealer']}")
        s = object.__new__(DosState)
        s.seed = str(seed)
        s.players = players
        s.target = opts["target"]
        s.official = opts["official_no_match"]
        s.max_turns = opts["max_turns"]
        s.deck_option = " ".join(opts["deck"].replace(",", " ").split())
        s.first_dealer = opts["dealer"]
        s.round = 0
        dealer = s.first_dealer
        if dealer < 0:
            dealer = random.Random(f"{s.seed}/dealer").randrange(players)
        s.dealer = dealer
        s.totals = (0,) * players
        s.history = ()
        s._moves = None
        _deal(s)
        return s

    # --- play ---------------------------------------------------------------------------
    def to_act(self, state: DosState) -> frozenset[int]:
        if state.phase == OVER:
            return _NOBODY
        if state.dos_window >= 0:
            return _ALL[state.players]
        return _SEATS[state.current]

    def on_turn(self, state: DosState) -> frozenset[int]:
        # in a Dos window the others may say Dos or catch a forgotten one, but need not
        return _NOBODY if state.phase == OVER else _SEATS[state.current]

    def is_over(self, state: DosState) -> bool:
        return state.phase == OVER

    def legal_moves(self, state: DosState, seat: int) -> Sequence[Move]:
        if state.phase == OVER:
            return ()
        window = state.dos_window
        if seat == state.current:
            moves = _turn_moves(state)
            return moves + (CATCH_MOVE,) if window >= 0 else moves
        if window < 0 or not 0 <= seat < state.players:
            return ()
        return (CALL_MOVE,) if seat == window else (CATCH_MOVE,)

    def apply(self, state: DosState, seat: int, move: Move) -> DosState:
        if not isinstance(move, Move):
            raise IllegalMove(f"not a Dos move: {move!r}")
        if state.phase == OVER:
            raise IllegalMove("the match is over")
        kind = move.kind
        window = state.dos_window
        if kind in (CATCH, CALL):
            if window < 0:
                raise IllegalMove(
                    "nobody can be caught now: a missing Dos call can be caught only until the "
                    "next player's first move",
                    MoveRule.CALL_NOT_ALLOWED,
                )
            if not 0 <= seat < state.players:
                raise IllegalMove(f"no seat {seat} at this table")
            if kind == CALL:
                if seat != window:
                    raise IllegalMove(
                        f"only seat {window} can call Dos now; you can catch it",
                        MoveRule.CALL_NOT_ALLOWED,
                    )
                s = state.copy()
                s.dos_window = -1
                return s
            if seat == window:
                raise IllegalMove(
                    "you cannot catch yourself: call 'dos' instead", MoveRule.CALL_NOT_ALLOWED
                )
            s = state.copy()
            s.dos_window = -1
            hands = list(s.hands)
            _draw(s, hands, window, 2)
            s.hands = tuple(hands)
            return s
        if seat != state.current:
            raise IllegalMove(
                f"it is seat {state.current}'s turn, not seat {seat}'s",
                MoveRule.NOT_YOUR_TURN,
                to_act=state.current,
            )
        return _turn_move(state, seat, move)

    # --- notation -----------------------------------------------------------------------
    def parse_move(self, text: str) -> Move:
        return parse_move(text)

    # --- knowledge ----------------------------------------------------------------------
    def view(self, state: DosState, seat: int | None) -> pb.DosView:
        if seat is not None and not 0 <= seat < state.players:
            raise ValueError(f"no seat {seat} at a {state.players}-player table")
        me = -1 if seat is None else seat
        drawn = (CODES[state.drawn] if me == state.current else "?") if state.drawn >= 0 else ""
        v = pb.DosView(
            seat=me,
            phase=state.phase,
            players=state.players,
            target=state.target,
            official_no_match=state.official,
            max_turns=state.max_turns,
            round=state.round,
            dealer=state.dealer,
            current=state.current,
            turns=state.turns,
            reshuffles=state.reshuffles,
            hand=codes(state.hands[me]) if me >= 0 else "",
            hand_sizes=[len(h) for h in state.hands],
            row=codes(state.row),
            adds=codes(state.adds),
            drew=state.drew,
            drawn=drawn,
            draw_pile=len(state.pile),
            discards=codes(unpack(state.discards)),
            dos_window=state.dos_window,
            totals=state.totals,
            bonus_owed=max(0, _owed(state)) if state.phase == PLAYING else 0,
        )
        _fill_common(v, state)
        return v

    def sample(self, view: pb.DosView, rng: random.Random) -> DosState:
        return _sample(view, rng)

    # --- outcome ------------------------------------------------------------------------
    def result(self, state: DosState) -> Result:
        n = state.players
        last = [0] * n
        if state.history:
            h = state.history[-1]
            last[h.winner] = h.points
        finished = state.phase == OVER
        winners: tuple[int, ...] = ()
        if finished:
            winners = (state.history[-1].winner,)
        return Result(state.totals, tuple(last), finished, winners, len(state.history))

    def deal_number(self, state: DosState) -> int:
        return state.round

    def shuffles(self, state: DosState) -> tuple[int, ...]:
        """Each round's deal, and each reshuffle of the discards into a new draw pile."""
        return (state.round, state.reshuffles)

    def dealt(self, state: DosState) -> str:
        """The hands, the centre row and the draw pile, top first."""
        lines = [f"seat {i}: {codes(h)}" for i, h in enumerate(state.hands)]
        return "\n".join([*lines, f"row: {codes(state.row)}", f"pile: {codes(state.pile)}"])

    def num_players(self, state: DosState) -> int:
        return state.players

    def partners(self, state: DosState, seat: int) -> frozenset[int]:
        return _SEATS[seat]

    def census(self, state: DosState) -> Counter[str]:
        cards: list[int] = []
        for h in state.hands:
            cards.extend(h)
        cards.extend(state.pile)
        cards.extend(unpack(state.discards))
        cards.extend(state.row)
        cards.extend(state.adds)
        for _, played, _ in state.matches:
            cards.extend(played)
        return Counter(CODES[t] for t in cards)

    # --- storage ------------------------------------------------------------------------
    def encode(self, state: DosState) -> bytes:
        msg = pb.DosState(
            seed=state.seed,
            players=state.players,
            target=state.target,
            official_no_match=state.official,
            max_turns=state.max_turns,
            deck_option=state.deck_option,
            first_dealer=state.first_dealer,
            round=state.round,
            dealer=state.dealer,
            current=state.current,
            turns=state.turns,
            reshuffles=state.reshuffles,
            hands=[codes(h) for h in state.hands],
            pile=codes(state.pile),
            discards=codes(unpack(state.discards)),
            row=codes(state.row),
            adds=codes(state.adds),
            drew=state.drew,
            drawn=CODES[state.drawn] if state.drawn >= 0 else "",
            dos_window=state.dos_window,
            totals=state.totals,
            phase=state.phase,
        )
        _fill_common(msg, state)
        return msg.SerializeToString()

    def decode(self, data: bytes) -> DosState:
        msg = pb.DosState()
        with self.decoding():
            msg.ParseFromString(data)
            s = object.__new__(DosState)
            s.seed = msg.seed
            s.deck_option = msg.deck_option
            s.first_dealer = msg.first_dealer
            if len(msg.hands) != msg.players:
                raise ValueError("one hand per player")
            s.hands = tuple(parse_cards(h) for h in msg.hands)
            s.pile = parse_row(msg.pile)
            s.drawn = parse_card(msg.drawn) if msg.drawn else -1
            _restore_public(s, msg)
            _check(s)
        return s


# --- messages ------------------------------------------------------------------------------

def _fill_common(msg: pb.DosView | pb.DosState, state: DosState) -> None:
    add_matches = msg.matches.add
    for i, cards, kind in state.matches:
        add_matches(row_index=i, cards=codes(cards), target=CODES[state.row[i]], kind=kind)
    add_history = msg.history.add
    for h in state.history:
        add_history(winner=h.winner, points=h.points, blocked=h.blocked, hand_points=h.hand_points,
                    hands=h.hands)


def _restore_public(s: DosState, msg: pb.DosState | pb.DosView) -> None:
    """The fields a state shares with a view (same names in both messages)."""
    n = msg.players
    if not 2 <= n <= 4:
        raise ValueError("2 to 4 players")
    s.players = n
    s.target = msg.target
    s.official = msg.official_no_match
    s.max_turns = msg.max_turns
    s.round = msg.round
    s.dealer = msg.dealer
    s.current = msg.current
    s.turns = msg.turns
    s.reshuffles = msg.reshuffles
    s.row = parse_row(msg.row)
    s.discards = _packed(msg.discards)
    matches = []
    for m in msg.matches:
        cards = parse_cards(m.cards)
        if not 0 <= m.row_index < len(s.row) or not 1 <= len(cards) <= 2:
            raise ValueError("bad match")
        kind = match_kind(s.row[m.row_index], cards)
        if kind == NO_MATCH or kind != m.kind or CODES[s.row[m.row_index]] != m.target:
            raise ValueError("bad match")
        matches.append((m.row_index, cards, kind))
    if len({m[0] for m in matches}) != len(matches):
        raise ValueError("two matches on one centre card")
    s.matches = tuple(matches)
    s.adds = parse_row(msg.adds)
    s.drew = msg.drew
    s.dos_window = msg.dos_window
    if len(msg.totals) != n:
        raise ValueError("one total per player")
    s.totals = tuple(msg.totals)
    s.history = tuple(
        RoundScore(h.winner, h.points, h.blocked, tuple(h.hand_points), _shown(h.hands, n))
        for h in msg.history
    )
    s.phase = msg.phase
    s._moves = None


def _shown(hands: Sequence[str], n: int) -> tuple[str, ...]:
    """A round's hands as shown at its end: one per seat, in the notation (or none, from
    records of before they were kept)."""
    if hands and len(hands) != n:
        raise ValueError("one shown hand per player")
    return tuple(codes(parse_cards(h)) for h in hands)


@lru_cache(maxsize=1 << 12)
def _packed(text: str) -> int:
    return pack(parse_cards(text))


def _check(s: DosState) -> None:
    """Refuse states no play could reach in shape (decode must never let garbage through)."""
    n = s.players
    if s.phase not in (PLAYING, OVER):
        raise ValueError("bad phase")
    if s.phase == PLAYING and not 0 <= s.current < n:
        raise ValueError("bad current seat")
    if s.phase == OVER and s.current != -1:
        raise ValueError("bad current seat")
    if not -1 <= s.dos_window < n or not 0 <= s.dealer < n or not -1 <= s.first_dealer < n:
        raise ValueError("bad seat")
    if s.dos_window >= 0 and (s.dos_window == s.current or s.phase != PLAYING):
        raise ValueError("bad Dos window")
    if s.target < 1 or s.max_turns < 1 or s.round < 0 or s.turns < 0 or s.reshuffles < 0:
        raise ValueError("bad counters")
    if any(not 0 <= h.winner < n or len(h.hand_points) != n for h in s.history):
        raise ValueError("bad history")
    for h in s.history:
        if h.hands and any(
            sum(POINTS[t] for t in parse_cards(cards)) != points
            for cards, points in zip(h.hands, h.hand_points, strict=True)
        ):
            raise ValueError("a shown hand does not add up to its points")
    counts = [0] * N_TYPES
    for t in (
        [t for h in s.hands for t in h] + list(s.pile) + unpack(s.discards) + list(s.row)
        + list(s.adds) + [t for m in s.matches for t in m[1]]
    ):
        counts[t] += 1
    if counts != COPIES:
        raise ValueError("the cards are not the 108 of the deck")
    if s.drawn >= 0 and (s.phase != PLAYING or s.drawn not in s.hands[s.current] or not s.drew):
        raise ValueError("bad drawn card")
    if s.deck_option:
        parse_deck(s.deck_option)


# --- determinization -----------------------------------------------------------------------

def _sample(v: pb.DosView, rng: random.Random) -> DosState:
    """Deal the cards `v` does not show uniformly: other hands (their sizes) and the draw pile.

    Nothing in Dos reveals a hidden card without it leaving the hand, so every unseen card is
    equally likely to be in any hidden place.
    """
    s = object.__new__(DosState)
    _restore_public(s, v)
    seat = v.seat
    own = parse_cards(v.hand) if seat >= 0 else ()
    counts = list(COPIES)
    for t in (
        list(own) + list(s.row) + list(s.adds) + unpack(s.discards)
        + [t for m in s.matches for t in m[1]]
    ):
        counts[t] -= 1
    if min(counts) < 0:
        raise ValueError("the view shows more cards than the deck holds")
    pool = [t for t in range(N_TYPES) for _ in range(counts[t])]
    rng.shuffle(pool)
    hands: list[tuple[int, ...]] = []
    pos = 0
    for p in range(s.players):
        if p == seat:
            hands.append(own)
            continue
        k = v.hand_sizes[p]
        hands.append(tuple(sorted(pool[pos:pos + k])))
        pos += k
    if len(pool) - pos != v.draw_pile:
        raise ValueError("the view is inconsistent: hidden card counts do not add up")
    s.pile = tuple(pool[pos:])
    s.hands = tuple(hands)
    if v.drawn == "?":
        s.drawn = rng.choice(hands[s.current])
    elif v.drawn:
        s.drawn = parse_card(v.drawn)
    else:
        s.drawn = -1
    s.seed = f"{rng.getrandbits(64):016x}"
    s.deck_option = ""
    s.first_dealer = -1
    return s


GAME = Dos()
