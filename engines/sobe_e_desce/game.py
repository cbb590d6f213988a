"""The Sobe e Desce engine: trump choice, play or pass with exchanges, five tricks, scores
going down to zero, and the RISCOS settlement.

The rules are written in seeds/sobe_e_desce.md; this module follows it section by section.
States are immutable: `apply` copies the slots it changes (a straight-line slot copy).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from functools import lru_cache
from typing import Any

from croupier.v1 import sobe_e_desce_pb2 as pb

from engines.contract import Game, GameInfo, IllegalMove, MoveRule, OptionSpec, Result
from engines.slots import SlotState, install_copy
from engines.sobe_e_desce import bounds
from engines.sobe_e_desce.cards import (
    ABOVE,
    ACE,
    BIT,
    CARD_TEXT,
    FULL,
    HEARTS,
    N_CARDS,
    SUIT_MASK,
    SUIT_NAMES,
    SUITS,
    cards_of,
    cards_text,
    parse_card,
    parse_cards,
    parse_deck,
    parse_order,
)
from engines.sobe_e_desce.moves import (
    CARD,
    CARD_MOVES,
    CHOICE_MOVES,
    EXCHANGE,
    MAX_EXCHANGE,
    PASS,
    PASS_MOVE,
    PLAY_MOVE,
    TRUMP,
    TRUMP_MOVES,
    TURN,
    TURN_MOVE,
    Move,
    card_moves,
    decision_moves,
    make,
    parse_move,
)
from engines.sobe_e_desce.sampling import Places, Plan
from engines.sobe_e_desce.scoring import DealRecord, deal_changes, match_winner, settle

TRUMP_PHASE = pb.SOBE_E_DESCE_PHASE_TRUMP
DECIDE = pb.SOBE_E_DESCE_PHASE_DECIDE
PLAY = pb.SOBE_E_DESCE_PHASE_PLAY
OVER = pb.SOBE_E_DESCE_PHASE_OVER
PLAYERS = 4
TRICKS = 5
FORCED_SCORE = 5
"""A player on this score or fewer must play."""
FORCED_PASSES = 2
"""A player who passed this many deals in a row must play."""

_SEATS = tuple(frozenset({s}) for s in range(PLAYERS))
_NOBODY: frozenset[int] = frozenset()
_ZEROS = (0, 0, 0, 0)


class SobeEDesceState(SlotState):
    """A match in progress. Treat as immutable; `apply` returns a new one."""

    __slots__ = (
        "seed", "start_score", "max_deals", "deck_option", "first_dealer",
        "deal_number", "dealer", "scores", "passes", "history", "winner", "settlement",
        "phase", "trump", "turned", "hands", "pending", "stock", "discards", "decisions",
        "tricks", "trick", "leader", "won", "absent", "to_act",
        # derived (not serialized): next participant after each seat, participants
        "nxt", "n_part",
    )
    _FIELDS = __slots__[:26]

    seed: str
    start_score: int
    max_deals: int
    deck_option: str
    first_dealer: int
    deal_number: int
    dealer: int
    scores: tuple[int, ...]
    passes: tuple[int, ...]
    history: tuple[DealRecord, ...]
    winner: int
    settlement: tuple[int, ...]
    phase: pb.SobeEDescePhase
    trump: int
    turned: int
    hands: tuple[int, ...]
    pending: tuple[int, ...]
    stock: tuple[int, ...]
    discards: tuple[int, ...]
    decisions: tuple[tuple[int, bool, int], ...]
    tricks: tuple[tuple[int, tuple[int, ...], int], ...]
    trick: tuple[tuple[int, int], ...]
    leader: int
    won: tuple[int, ...]
    absent: tuple[int, ...]
    to_act: int
    nxt: tuple[int, ...]
    n_part: int

    @property
    def chooser(self) -> int:
        return (self.dealer + 1) % PLAYERS

    def __repr__(self) -> str:
        hands = " / ".join(cards_text(h) for h in self.hands)
        trump = SUITS[self.trump] if self.trump >= 0 else "-"
        return (
            f"<SobeEDesceState deal {self.deal_number + 1} phase {self.phase} trump {trump} "
            f"to_act {self.to_act} scores {self.scores} hands {hands}>"
        )


install_copy(SobeEDesceState, SobeEDesceState.__slots__)

OPTIONS = (
    OptionSpec(
        "start_score", "int", 20,
        "Points every player starts with; the first to reach 0 or below wins. Lower it for "
        "short matches.", 1, 100,
        label="Starting score (first to 0 wins)",
    ),
    OptionSpec(
        "max_deals", "int", 200,
        "Bound on the deals of a match: after this many the lowest score wins (ties to the "
        "earliest in play order from the last trump chooser).", 1, 10_000,
        label="Most deals in a match", advanced=True,
    ),
    OptionSpec(
        "deck", "cards", "",
        "Card order of the first deal, top first: 40 codes such as '7h Ac 2d ...' (ranks 2 3 4 "
        "5 6 Q J K 7 A, suits c d h s). Cards 1-12 go 3 at a time to the seats from the one "
        "after the dealer, 13-20 two at a time in the same order, 21-40 are the stock. Empty: "
        "shuffled from the table's seed.",
        label="Fixed deck (card codes)", advanced=True,
    ),
    OptionSpec(
        "dealer", "int", -1, "Seat dealing the first deal; -1: drawn from the seed.", -1, 3,
        label="First dealer (seat, -1 random)", advanced=True,
    ),
)

NOTATION = (
    "cards rank then suit (ranks 2 3 4 5 6 Q J K 7 A, suits c d h s): 7h, Ac; trump choice "
    "'trump c|d|h|s' or 'turn'; decisions 'pass', 'play', 'exchange 2c Qd'"
)


def _derive(s: SobeEDesceState) -> None:
    """Recompute the slots that follow from the decisions."""
    playing = [False] * PLAYERS
    for seat, plays, _ in s.decisions:
        playing[seat] = plays
    s.n_part = sum(playing)
    nxt = []
    for seat in range(PLAYERS):
        n = -1
        for k in range(1, PLAYERS + 1):
            t = (seat + k) % PLAYERS
            if playing[t]:
                n = t
                break
        nxt.append(n)
    s.nxt = tuple(nxt)


def must_play(s: SobeEDesceState, seat: int) -> bool:
    """The chooser, everybody under hearts, a seat on 5 or fewer, a seat that passed twice."""
    return (
        seat == s.chooser
        or s.trump == HEARTS
        or s.scores[seat] <= FORCED_SCORE
        or s.passes[seat] >= FORCED_PASSES
    )


def legal_cards(s: SobeEDesceState, seat: int) -> int:
    """The cards `seat` may play now, as a mask (the playing rules in one place)."""
    hand = s.hands[seat]
    trick = s.trick
    trump = s.trump
    if not trick:
        if not s.tricks:  # the opening lead: the ace of trumps if held
            ace = BIT[trump * 10 + ACE]
            if hand & ace:
                return ace
        return hand
    led = trick[0][1] // 10
    follow = hand & SUIT_MASK[led]
    if follow:
        return follow
    trumps = hand & SUIT_MASK[trump]
    if not trumps:
        return hand
    best = -1
    for _, c in trick:
        if c // 10 == trump and c > best:
            best = c
    if best < 0:
        return trumps
    return trumps & ABOVE[best] or hand


class SobeEDesce(Game[SobeEDesceState, Move, pb.SobeEDesceView]):
    info = GameInfo(
        name="sobe_e_desce",
        title="Sobe e Desce",
        min_players=PLAYERS,
        max_players=PLAYERS,
        options=OPTIONS,
        notation=NOTATION,
        view_field="sobe_e_desce",
        zero_sum=True,  # the final settlement moves points between players
        one_deal={"max_deals": 1},
        bounds=bounds.bounds,
        duplicate_deal=bounds.duplicate_deal,
    )

    # --- set-up -------------------------------------------------------------------------
    def new_game(self, players: int, options: Mapping[str, Any], seed: str) -> SobeEDesceState:
        opts = self.checked_options(players, options)
        if opts["deck"]:
            parse_deck(opts["deck"])
        s = object.__new__(SobeEDesceState)
        s.seed = str(seed)
        s.start_score = opts["start_score"]
        s.max_deals = opts["max_deals"]
        s.deck_option = " ".join(opts["deck"].replace(",", " ").split())
        s.first_dealer = opts["dealer"]
        dealer = s.first_dealer
        if dealer < 0:
            dealer = random.Random(f"{s.seed}/dealer").randrange(PLAYERS)
        s.dealer = dealer
        s.deal_number = 0
        s.scores = (s.start_score,) * PLAYERS
        s.passes = _ZEROS
        s.history = ()
        s.winner = -1
        s.settlement = ()
        _deal(s)
        return s

    # --- play ---------------------------------------------------------------------------
    def to_act(self, state: SobeEDesceState) -> frozenset[int]:
        return _SEATS[state.to_act] if state.to_act >= 0 else _NOBODY

    def is_over(self, state: SobeEDesceState) -> bool:
        return state.phase == OVER

    def legal_moves(self, state: SobeEDesceState, seat: int) -> Sequence[Move]:
        if seat != state.to_act:
            return ()
        phase = state.phase
        if phase == PLAY:
            return card_moves(legal_cards(state, seat))
        if phase == DECIDE:
            limit = min(MAX_EXCHANGE, len(state.stock))
            return decision_moves(state.hands[seat], limit, not must_play(state, seat))
        if phase == TRUMP_PHASE:
            return CHOICE_MOVES
        return ()

    def apply(self, state: SobeEDesceState, seat: int, move: Move) -> SobeEDesceState:
        if not isinstance(move, Move):
            raise IllegalMove(f"not a Sobe e Desce move: {move!r}")
        phase = state.phase
        if phase == OVER:
            raise IllegalMove("the match is over")
        if seat != state.to_act:
            raise IllegalMove(
                f"it is seat {state.to_act}'s turn, not seat {seat}'s",
                MoveRule.NOT_YOUR_TURN,
                to_act=state.to_act,
            )
        kind = move[0]
        if phase == PLAY:
            if kind != CARD:
                raise IllegalMove(
                    f"the tricks are being played: play a card, not {move.text!r}",
                    MoveRule.WRONG_PHASE,
                )
            return _play(state, seat, move[1])
        if phase == DECIDE:
            if kind != PASS and kind != EXCHANGE:
                raise IllegalMove(
                    f"{move.text!r} is not a decision: 'pass', 'play' or 'exchange' cards",
                    MoveRule.WRONG_PHASE,
                )
            return _decide(state, seat, move)
        if kind != TRUMP and kind != TURN:
            raise IllegalMove(
                "trumps are not chosen yet: 'trump c|d|h|s' or 'turn'", MoveRule.WRONG_PHASE
            )
        return _choose(state, move)

    # --- notation -----------------------------------------------------------------------
    def parse_move(self, text: str) -> Move:
        return parse_move(text)

    def redact(self, state: SobeEDesceState, seat: int, move: Move, observer: int | None) -> str:
        """Exchanged cards go face down: others see how many, not which."""
        if move[0] == EXCHANGE and move[1] and observer != seat:
            n = move[1].bit_count()
            return f"exchange {n} card{'s' if n > 1 else ''}"
        return move.text

    # --- knowledge ----------------------------------------------------------------------
    def view(self, state: SobeEDesceState, seat: int | None) -> pb.SobeEDesceView:
        if seat is not None and not 0 <= seat < PLAYERS:
            raise ValueError(f"no seat {seat} at a 4-player table")
        me = -1 if seat is None else seat
        v = pb.SobeEDesceView(
            seat=me,
            hand=cards_text(state.hands[me]) if me >= 0 else "",
            discards=cards_text(state.discards[me]) if me >= 0 else "",
            hand_sizes=[h.bit_count() for h in state.hands],
            discard_counts=[d.bit_count() for d in state.discards],
            stock_size=len(state.stock),
            pending_size=len(state.pending),
        )
        _fill_public(v, state)
        return v

    def sample(self, view: pb.SobeEDesceView, rng: random.Random) -> SobeEDesceState:
        return _sample(view, rng)

    def replay(self, state: SobeEDesceState) -> Iterator[tuple[SobeEDesceState, int, Move]]:
        """The deal's trump choice, decisions and plays from its deal.

        The state does not say which of an exchanger's cards came from the stock, nor which
        three of the chooser's five he held when he chose trumps: one arrangement is drawn from
        the state's seed, uniformly among those the state allows (the turned card was dealt,
        not drawn), so a model's verdict on the replay is a fair draw of it.

        >>> s = GAME.new_game(4, {"dealer": 3}, seed="doc")
        >>> for m in ("trump s", "play", "pass", "play"):
        ...     s = GAME.apply(s, s.to_act, GAME.parse_move(m))
        >>> [(seat, m.text) for _, seat, m in GAME.replay(s)]
        [(0, 'trump s'), (0, 'play'), (1, 'pass'), (2, 'play')]
        >>> first = next(GAME.replay(s))[0]
        >>> first.phase == TRUMP_PHASE and [h.bit_count() for h in first.hands]
        [3, 3, 3, 3]
        """
        if state.phase in (TRUMP_PHASE, OVER):
            return
        rng = random.Random(f"{state.seed}/replay/{state.deal_number}")
        first = state.chooser
        played = [0] * PLAYERS
        for leader, trick, _ in state.tricks:
            seat = leader
            for c in trick:
                played[seat] |= BIT[c]
                seat = state.nxt[seat]
        for seat, c in state.trick:
            played[seat] |= BIT[c]
        dealt = [h | p for h, p in zip(state.hands, played, strict=True)]  # after exchanges
        drawn: dict[int, list[int]] = {}
        for seat, _, k in state.decisions:
            if k:
                held = [c for c in cards_of(dealt[seat]) if c != state.turned or seat != first]
                drawn[seat] = rng.sample(held, k)
                for c in drawn[seat]:
                    dealt[seat] &= ~BIT[c]
                dealt[seat] |= state.discards[seat]
        stock = [c for seat, _, k in state.decisions if k for c in drawn[seat]]
        hands, pending = [0] * PLAYERS, []
        for i in range(PLAYERS):
            seat = (first + i) % PLAYERS
            cards = cards_of(dealt[seat])
            if seat == first and state.turned >= 0:
                cards.remove(state.turned)
                rng.shuffle(cards)
                pair = [state.turned, cards.pop()]
            else:
                rng.shuffle(cards)
                pair = [cards.pop(), cards.pop()]
            pending += pair
            for c in cards:
                hands[seat] |= BIT[c]
        s = state.copy()
        s.hands, s.pending = tuple(hands), tuple(pending)
        s.stock = tuple(stock) + state.stock
        s.discards, s.won, s.absent = _ZEROS, _ZEROS, _ZEROS
        s.phase, s.trump, s.turned = TRUMP_PHASE, -1, -1
        s.decisions, s.tricks, s.trick = (), (), ()
        s.leader = s.to_act = first
        s.nxt, s.n_part = (-1,) * PLAYERS, 0
        choice = TURN_MOVE if state.turned >= 0 else TRUMP_MOVES[state.trump]
        moves: list[Move] = [choice]
        for seat, plays, k in state.decisions:
            moves.append(
                make(EXCHANGE, state.discards[seat]) if k else PLAY_MOVE if plays else PASS_MOVE
            )
        moves += [CARD_MOVES[c] for _, cards, _ in state.tricks for c in cards]
        moves += [CARD_MOVES[c] for _, c in state.trick]
        for move in moves:
            seat = s.to_act
            yield s, seat, move
            s = self.apply(s, seat, move)

    # --- outcome ------------------------------------------------------------------------
    def result(self, state: SobeEDesceState) -> Result:
        last = tuple(-c for c in state.history[-1].change) if state.history else _ZEROS
        if state.phase == OVER:
            return Result(state.settlement, last, True, (state.winner,), len(state.history))
        totals = tuple(state.start_score - v for v in state.scores)
        return Result(totals, last, False, (), len(state.history))

    def deal_number(self, state: SobeEDesceState) -> int:
        return state.deal_number

    def dealt(self, state: SobeEDesceState) -> str:
        """The hands, the cards each seat gets next (the chooser's first) and the stock."""
        lines = [f"seat {i}: {cards_text(h)}" for i, h in enumerate(state.hands)]
        pending = " ".join(CARD_TEXT[c] for c in state.pending)
        stock = " ".join(CARD_TEXT[c] for c in state.stock)
        return "\n".join([*lines, f"pending: {pending}", f"stock: {stock}"])

    def num_players(self, state: SobeEDesceState) -> int:
        return PLAYERS

    def partners(self, state: SobeEDesceState, seat: int) -> frozenset[int]:
        return _SEATS[seat]

    def census(self, state: SobeEDesceState) -> Counter[str]:
        cards: list[int] = []
        for m in (*state.hands, *state.discards):
            cards += cards_of(m)
        cards += state.pending
        cards += state.stock
        for _, trick, _ in state.tricks:
            cards += trick
        cards += [c for _, c in state.trick]
        return Counter(CARD_TEXT[c] for c in cards)

    # --- storage ------------------------------------------------------------------------
    def encode(self, state: SobeEDesceState) -> bytes:
        msg = pb.SobeEDesceState(
            seed=state.seed,
            start_score=state.start_score,
            max_deals=state.max_deals,
            deck_option=state.deck_option,
            first_dealer=state.first_dealer,
            hands=[cards_text(h) for h in state.hands],
            pending=" ".join(CARD_TEXT[c] for c in state.pending),
            stock=" ".join(CARD_TEXT[c] for c in state.stock),
            discards=[cards_text(d) for d in state.discards],
        )
        _fill_public(msg, state)
        return msg.SerializeToString()

    def decode(self, data: bytes) -> SobeEDesceState:
        msg = pb.SobeEDesceState()
        with self.decoding():
            msg.ParseFromString(data)
            s = object.__new__(SobeEDesceState)
            s.seed = msg.seed
            s.deck_option = msg.deck_option
            s.first_dealer = msg.first_dealer
            if len(msg.hands) != PLAYERS or len(msg.discards) != PLAYERS:
                raise ValueError("a state has four hands and four discard piles")
            s.hands = tuple(parse_cards(h) for h in msg.hands)
            s.discards = tuple(parse_cards(d) for d in msg.discards)
            s.pending = parse_order(msg.pending)
            s.stock = parse_order(msg.stock)
            _restore_public(s, msg)
        if sorted(Counter(self.census(s)).values()) != [1] * N_CARDS:
            raise ValueError("not a Sobe e Desce state: the 40 cards are not all there once")
        return s


# --- rules -----------------------------------------------------------------------------

def _deal(s: SobeEDesceState) -> None:
    """Shuffle (or take the `deck` option) and deal the next deal of the match into `s`."""
    if s.deal_number == 0 and s.deck_option:
        deck = parse_deck(s.deck_option)
    else:
        order = list(range(N_CARDS))
        random.Random(f"{s.seed}/deal/{s.deal_number}").shuffle(order)
        deck = tuple(order)
    first = (s.dealer + 1) % PLAYERS
    hands = [0] * PLAYERS
    for i in range(PLAYERS):
        seat = (first + i) % PLAYERS
        for c in deck[3 * i:3 * i + 3]:
            hands[seat] |= BIT[c]
    s.hands = tuple(hands)
    s.pending = tuple(deck[12:20])
    s.stock = tuple(deck[20:])
    s.discards = _ZEROS
    s.phase = TRUMP_PHASE
    s.trump = -1
    s.turned = -1
    s.decisions = ()
    s.tricks = ()
    s.trick = ()
    s.leader = first
    s.won = _ZEROS
    s.absent = _ZEROS
    s.to_act = first
    s.nxt = (-1,) * PLAYERS
    s.n_part = 0


def _choose(state: SobeEDesceState, move: Move) -> SobeEDesceState:
    s = state.copy()
    if move[0] == TURN:
        s.turned = state.pending[0]  # the chooser's next card: shown, and kept
        s.trump = s.turned // 10
    else:
        s.trump = move[1]
    first = s.chooser
    hands = list(state.hands)
    for i in range(PLAYERS):
        seat = (first + i) % PLAYERS
        hands[seat] |= BIT[state.pending[2 * i]] | BIT[state.pending[2 * i + 1]]
    s.hands = tuple(hands)
    s.pending = ()
    s.phase = DECIDE
    s.to_act = first
    return s


def _decide(state: SobeEDesceState, seat: int, move: Move) -> SobeEDesceState:
    hand = state.hands[seat]
    if move[0] == PASS:
        if must_play(state, seat):
            raise IllegalMove(
                f"you may not pass: {_forced_reason(state, seat)}", MoveRule.MAY_NOT_PASS
            )
        s = state.copy()
        s.decisions = state.decisions + ((seat, False, 0),)
    else:
        out = move[1]
        if out & ~hand:
            raise IllegalMove(
                f"you do not hold {cards_text(out & ~hand)}", MoveRule.CARD_NOT_IN_HAND
            )
        k = out.bit_count()
        if k > len(state.stock):
            raise IllegalMove(
                f"the stock has only {len(state.stock)} card(s) left to exchange",
                MoveRule.STOCK_TOO_SMALL,
                stock=len(state.stock),
            )
        s = state.copy()
        if k:
            drawn = 0
            for c in state.stock[:k]:
                drawn |= BIT[c]
            hands = list(state.hands)
            hands[seat] = (hand & ~out) | drawn
            s.hands = tuple(hands)
            discards = list(state.discards)
            discards[seat] |= out
            s.discards = tuple(discards)
            s.stock = state.stock[k:]
        s.decisions = state.decisions + ((seat, True, k),)
    if len(s.decisions) < PLAYERS:
        s.to_act = (seat + 1) % PLAYERS
        return s
    _derive(s)
    if s.n_part == 1:  # alone: takes the five tricks without play
        won = [0] * PLAYERS
        won[s.chooser] = TRICKS
        s.won = tuple(won)
        _end_deal(s)
        return s
    s.phase = PLAY
    s.leader = s.to_act = s.chooser
    return s


def _forced_reason(s: SobeEDesceState, seat: int) -> str:
    if seat == s.chooser:
        return "you chose trumps"
    if s.trump == HEARTS:
        return "hearts are trumps: everybody plays"
    if s.scores[seat] <= FORCED_SCORE:
        return f"your score is {s.scores[seat]}, {FORCED_SCORE} or fewer"
    return f"you passed the last {FORCED_PASSES} deals"


def _play(state: SobeEDesceState, seat: int, card: int) -> SobeEDesceState:
    allowed = legal_cards(state, seat)
    bit = BIT[card]
    if not allowed & bit:
        raise _why_not(state, seat, card, allowed)
    trump = state.trump
    trick = state.trick
    # what the play shows about the rest of the hand (public inferences)
    absent = state.absent[seat]
    if not trick:
        if not state.tricks:
            absent |= BIT[trump * 10 + ACE] & ~bit
    else:
        led = trick[0][1] // 10
        suit = card // 10
        if suit != led:
            absent |= SUIT_MASK[led]
            if led != trump:
                best = -1
                for _, c in trick:
                    if c // 10 == trump and c > best:
                        best = c
                if best < 0:
                    if suit != trump:
                        absent |= SUIT_MASK[trump]
                elif suit != trump or card < best:
                    absent |= ABOVE[best]
    s = state.copy()
    if absent != state.absent[seat]:
        a = list(state.absent)
        a[seat] = absent
        s.absent = tuple(a)
    hands = list(state.hands)
    hands[seat] = state.hands[seat] & ~bit
    s.hands = tuple(hands)
    trick = trick + ((seat, card),)
    if len(trick) < state.n_part:
        s.trick = trick
        s.to_act = state.nxt[seat]
        return s
    # the trick is complete
    led = trick[0][1] // 10
    best_seat, best, best_trump = -1, -1, False
    for p, c in trick:
        is_trump = c // 10 == trump
        if is_trump:
            if not best_trump or c > best:
                best_seat, best, best_trump = p, c, True
        elif not best_trump and c // 10 == led and c > best:
            best_seat, best = p, c
    won = list(state.won)
    won[best_seat] += 1
    s.won = tuple(won)
    s.tricks = state.tricks + ((trick[0][0], tuple(c for _, c in trick), best_seat),)
    s.trick = ()
    s.leader = s.to_act = best_seat
    if len(s.tricks) == TRICKS:
        _end_deal(s)
    return s


def _why_not(s: SobeEDesceState, seat: int, card: int, allowed: int) -> IllegalMove:
    hand = s.hands[seat]
    name = CARD_TEXT[card]
    if not hand & BIT[card]:
        return IllegalMove(f"you do not hold {name}", MoveRule.CARD_NOT_IN_HAND)
    trump = s.trump
    if not s.trick:
        return IllegalMove(
            f"the opening lead must be the ace of trumps ({CARD_TEXT[trump * 10 + ACE]}), which you hold",
            MoveRule.MUST_LEAD_TRUMP_ACE,
        )
    led = s.trick[0][1] // 10
    if hand & SUIT_MASK[led]:
        return IllegalMove(
            f"you must follow suit: {SUIT_NAMES[led]} were led and you hold {cards_text(hand & SUIT_MASK[led])}",
            MoveRule.MUST_FOLLOW_SUIT,
            suit=SUIT_NAMES[led],
        )
    if allowed & SUIT_MASK[trump] == allowed and any(c // 10 == trump for _, c in s.trick):
        return IllegalMove(
            f"you must over-trump: play one of {cards_text(allowed)}", MoveRule.MUST_OVERTRUMP
        )
    return IllegalMove(
        f"you have no {SUIT_NAMES[led]}, so you must trump: play one of {cards_text(allowed)}",
        MoveRule.MUST_TRUMP,
    )


def _end_deal(s: SobeEDesceState) -> None:
    """Score the deal, then end the match or deal the next one."""
    played = [False] * PLAYERS
    for seat, plays, _ in s.decisions:
        played[seat] = plays
    changes = deal_changes(s.trump, tuple(played), s.won)
    scores = tuple(v + c for v, c in zip(s.scores, changes, strict=True))
    s.scores = scores
    s.passes = tuple(0 if p else n + 1 for p, n in zip(played, s.passes, strict=True))
    chooser = s.chooser
    s.history = s.history + (
        DealRecord(s.dealer, chooser, s.trump, s.turned, tuple(played), s.won, changes, scores),
    )
    s.deal_number += 1
    winner = match_winner(scores, chooser, bounded=s.deal_number >= s.max_deals)
    if winner >= 0:
        s.winner = winner
        s.settlement = settle(scores, winner)
        s.phase = OVER
        s.to_act = -1
        return
    s.dealer = (s.dealer + 1) % PLAYERS
    _deal(s)


# --- views and storage -----------------------------------------------------------------

def _fill_public(msg: pb.SobeEDesceView | pb.SobeEDesceState, s: SobeEDesceState) -> None:
    """The fields a state shares with every view (same names in both messages)."""
    msg.phase = s.phase
    msg.deal_number = s.deal_number
    msg.dealer = s.dealer
    msg.trump = SUITS[s.trump] if s.trump >= 0 else ""
    msg.turned_card = CARD_TEXT[s.turned] if s.turned >= 0 else ""
    msg.scores.extend(s.scores)
    msg.passes.extend(s.passes)
    msg.absent.extend(cards_text(a) for a in s.absent)
    msg.to_act = s.to_act
    msg.start_score = s.start_score
    msg.max_deals = s.max_deals
    msg.winner = s.winner
    msg.settlement.extend(s.settlement)
    add_decisions = msg.decisions.add
    for seat, plays, k in s.decisions:
        add_decisions(seat=seat, plays=plays, exchanged=k)
    add_tricks = msg.tricks.add
    for leader, cards, winner in s.tricks:
        add_tricks(leader=leader, cards=[CARD_TEXT[c] for c in cards], winner=winner)
    if s.trick:
        add_tricks(leader=s.trick[0][0], cards=[CARD_TEXT[c] for _, c in s.trick], winner=-1)
    add_history = msg.history.add
    for d in s.history:
        add_history(dealer=d.dealer, chooser=d.chooser, trump=SUITS[d.trump],
            turned_card=CARD_TEXT[d.turned] if d.turned >= 0 else "", played=d.played,
            tricks=d.tricks, change=d.change, scores=d.scores)
    if isinstance(msg, pb.SobeEDesceView):
        msg.chooser = s.chooser
        msg.won.extend(s.won)
        msg.must_play.extend(must_play(s, seat) for seat in range(PLAYERS))


def _suit(text: str) -> int:
    if not text:
        return -1
    if text not in SUITS:
        raise ValueError(f"bad suit {text!r}")
    return SUITS.index(text)


def _restore_public(s: SobeEDesceState, msg: pb.SobeEDesceView | pb.SobeEDesceState) -> None:
    """Sets the public fields of `s` from a state or view message, checking their shape."""
    s.start_score = msg.start_score
    s.max_deals = msg.max_deals
    s.deal_number = msg.deal_number
    s.dealer = msg.dealer
    s.phase = msg.phase
    if s.phase not in (TRUMP_PHASE, DECIDE, PLAY, OVER):
        raise ValueError("bad phase")
    if not 0 <= s.dealer < PLAYERS:
        raise ValueError("bad dealer")
    s.trump = _suit(msg.trump)
    s.turned = parse_card(msg.turned_card) if msg.turned_card else -1
    if len(msg.scores) != PLAYERS or len(msg.passes) != PLAYERS or len(msg.absent) != PLAYERS:
        raise ValueError("scores, passes and absent cards are per seat")
    s.scores = tuple(msg.scores)
    s.passes = tuple(msg.passes)
    s.absent = tuple(parse_cards(a) for a in msg.absent)
    s.to_act = msg.to_act
    if not -1 <= s.to_act < PLAYERS or (s.to_act < 0) != (s.phase == OVER):
        raise ValueError("bad seat to act")
    if (s.trump < 0) != (s.phase == TRUMP_PHASE):
        raise ValueError("trumps are chosen exactly after the trump phase")
    s.winner = msg.winner
    s.settlement = tuple(msg.settlement)
    decisions = []
    for d in msg.decisions:
        if not 0 <= d.seat < PLAYERS or not 0 <= d.exchanged <= MAX_EXCHANGE:
            raise ValueError("bad decision")
        decisions.append((d.seat, d.plays, d.exchanged))
    s.decisions = tuple(decisions)
    tricks = []
    s.trick = ()
    for t in msg.tricks:
        cards = tuple(parse_card(c) for c in t.cards)
        if not 0 <= t.leader < PLAYERS or not 1 <= len(cards) <= PLAYERS:
            raise ValueError("bad trick")
        if t.winner < 0:
            s.trick = tuple(zip(_trick_seats(decisions, t.leader, len(cards)), cards, strict=True))
        else:
            tricks.append((t.leader, cards, t.winner))
    s.tricks = tuple(tricks)
    won = [0] * PLAYERS
    for _, _, w in tricks:
        if not 0 <= w < PLAYERS:
            raise ValueError("bad trick winner")
        won[w] += 1
    if s.phase == DECIDE and not tricks and len(decisions) == PLAYERS:
        raise ValueError("bad decisions")
    s.leader = tricks[-1][2] if tricks else (s.dealer + 1) % PLAYERS
    s.won = tuple(won)
    s.history = tuple(
        DealRecord(d.dealer, d.chooser, _suit(d.trump),
                   parse_card(d.turned_card) if d.turned_card else -1, tuple(d.played),
                   tuple(d.tricks), tuple(d.change), tuple(d.scores))
        for d in msg.history
    )
    _derive(s)


def _trick_seats(decisions: list[tuple[int, bool, int]], leader: int, n: int) -> list[int]:
    playing = {seat for seat, plays, _ in decisions if plays}
    seats = []
    seat = leader
    for _ in range(PLAYERS):
        if seat in playing:
            seats.append(seat)
        seat = (seat + 1) % PLAYERS
    if len(seats) < n:
        raise ValueError("a trick holds more cards than players")
    return seats[:n]


# --- determinization -------------------------------------------------------------------

@lru_cache(maxsize=64)
def _prepare(data: bytes) -> tuple[pb.SobeEDesceView, SobeEDesceState, Plan, int, int]:
    """A view parsed once: its public state and the plan of its hidden cards."""
    v = pb.SobeEDesceView()
    v.ParseFromString(data)
    t = object.__new__(SobeEDesceState)
    t.seed = ""
    t.deck_option = ""
    t.first_dealer = -1
    t.hands = t.discards = _ZEROS
    t.pending = t.stock = ()
    _restore_public(t, v)
    me = v.seat
    own = parse_cards(v.hand) if me >= 0 else 0
    own_disc = parse_cards(v.discards) if me >= 0 else 0
    seen = own | own_disc
    for _, cards, _ in t.tricks:
        for c in cards:
            seen |= BIT[c]
    for _, c in t.trick:
        seen |= BIT[c]
    if len(v.hand_sizes) != PLAYERS or len(v.discard_counts) != PLAYERS:
        raise ValueError("the view needs hand sizes and discard counts per seat")
    turned, turned_seat = -1, -1
    chooser = (t.dealer + 1) % PLAYERS
    if t.turned >= 0 and not seen >> t.turned & 1 and chooser != me and t.phase != OVER:
        turned, turned_seat = t.turned, chooser
    hidden = FULL & ~seen
    if turned >= 0:
        hidden &= ~BIT[turned]
    hands = {s: v.hand_sizes[s] for s in range(PLAYERS) if s != me}
    discards = {s: v.discard_counts[s] for s in range(PLAYERS) if s != me}
    absent = {s: t.absent[s] for s in range(PLAYERS) if s != me}
    if turned >= 0 and any(s == chooser and k == MAX_EXCHANGE for s, _, k in t.decisions):
        absent[chooser] |= BIT[turned]  # he gave up his whole hand: the turned card with it
    plan = Plan(cards_of(hidden), Places(hands, discards, v.pending_size + v.stock_size),
                absent, turned, turned_seat)
    return v, t, plan, own, own_disc


def _sample(v: pb.SobeEDesceView, rng: random.Random) -> SobeEDesceState:
    """Deal the cards `v` does not show, uniformly among the deals its public facts allow."""
    view, template, plan, own, own_disc = _prepare(v.SerializeToString(deterministic=True))
    deal = plan.draw(rng)
    s = template.copy()
    me = view.seat
    hands = [0] * PLAYERS
    discards = [0] * PLAYERS
    for seat in range(PLAYERS):
        if seat == me:
            hands[seat], discards[seat] = own, own_disc
            continue
        for c in deal.hands[seat]:
            hands[seat] |= BIT[c]
        for c in deal.discards[seat]:
            discards[seat] |= BIT[c]
    s.hands = tuple(hands)
    s.discards = tuple(discards)
    ordered = deal.ordered
    s.pending = tuple(ordered[:view.pending_size])
    s.stock = tuple(ordered[view.pending_size:])
    s.seed = f"{rng.getrandbits(128):032x}"
    return s


GAME = SobeEDesce()
