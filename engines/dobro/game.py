"""The Dobro engine: deals, auctions, the double, special cards, refills, the Oubli card,
rounds and the match.

The rules are written in seeds/dobro.md; this module follows it section by section. States
are immutable: `apply` copies the slots (a generated straight-line copy) and replaces the few
it changes.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from croupier.v1 import dobro_pb2 as pb

from engines.contract import Game, GameInfo, IllegalMove, MoveRule, OptionSpec, Result
from engines.dealing import ConstrainedDeal
from engines.dobro import bounds
from engines.dobro.cards import (
    CODES,
    KIND_NAMES,
    N_KINDS,
    NUMBERED_MASK,
    REVERSE,
    SKIP,
    cards_text,
    contains,
    count,
    counts,
    deck_list,
    full_deck,
    parse_cards,
    parse_deck,
    parse_list,
    pile_text,
    size,
)
from engines.dobro.moves import (
    CALL,
    CALLS,
    DRAW,
    DRAW_M,
    END,
    END_M,
    JOKER_PAIR,
    JOKER_SINGLE,
    JOKERS_PAIR,
    PAIR,
    PASS,
    PASS_M,
    REVERSE_MOVE,
    SINGLE,
    SKIP_MOVE,
    Move,
    parse_move,
    plays,
)
from engines.dobro.scoring import match_winners, next_opener, round_points
from engines.slots import SlotState, install_copy

PLAY, DRAW_STAGE, END_TURN, OVER = (
    pb.DOBRO_STAGE_PLAY, pb.DOBRO_STAGE_DRAW, pb.DOBRO_STAGE_END_TURN, pb.DOBRO_STAGE_OVER,
)
MIN_PLAYERS, MAX_PLAYERS = 2, 6
SET_ASIDE = 10  # two players: cards set aside unseen each round
_NOBODY: frozenset[int] = frozenset()
_ONE = tuple(frozenset({s}) for s in range(MAX_PLAYERS))
_DRAW_OR_END = (DRAW_M, END_M)
_DRAW_ONLY = (DRAW_M,)
_END_ONLY = (END_M,)


class Action(NamedTuple):
    """One move as the table saw it: who, what, the value in play after it, whether it
    doubled the value, cards taken / drawn / missing, and whether it ended the round."""

    seat: int
    move: Move
    value: int
    dobro: bool = False
    cards: int = 0
    ended_round: bool = False


_action_new = tuple.__new__  # Action(...) without NamedTuple's Python-level __new__ (hot path)


class RoundScore(NamedTuple):
    collected: tuple[int, ...]
    points: tuple[int, ...]
    oubli: int
    ender: int
    opener: int


class DobroState(SlotState):
    """A match in progress. Treat as immutable; `apply` returns a new one."""

    __slots__ = (
        "seed", "players", "rounds", "manual", "deck_option", "opener_option", "hand_limit",
        "round", "hands", "pile", "pos", "aside", "collected", "auction_cards", "auction",
        "value", "turn", "direction", "stage", "oubli", "forgetters", "min_specials", "totals",
        "history", "last", "round_opener",
    )

    seed: str
    players: int
    rounds: int
    manual: bool
    deck_option: str
    opener_option: int
    hand_limit: int
    round: int
    hands: tuple[int, ...]
    pile: tuple[int, ...]  # the round's draw pile, top first; cards before `pos` are drawn
    pos: int
    aside: int
    collected: tuple[int, ...]
    auction_cards: int
    auction: tuple[Action, ...]
    value: int
    turn: int
    direction: int
    stage: int
    oubli: int
    forgetters: tuple[int, ...]
    min_specials: tuple[int, ...]
    totals: tuple[int, ...]
    history: tuple[RoundScore, ...]
    last: Action | None
    round_opener: int

    def _key(self) -> tuple:
        return tuple(
            self.pile[self.pos:] if name == "pile" else 0 if name == "pos" else getattr(self, name)
            for name in self.__slots__
        )

    @property
    def left(self) -> int:
        """Cards left in the draw pile."""
        return len(self.pile) - self.pos

    def __repr__(self) -> str:
        hands = " / ".join(cards_text(h) for h in self.hands)
        return (
            f"<DobroState round {self.round + 1}/{self.rounds} stage {self.stage} turn "
            f"{self.turn} value {self.value} pile {self.left} hands {hands}>"
        )


install_copy(DobroState, DobroState.__slots__)

OPTIONS = (
    OptionSpec(
        "deals", "int", 3,
        "Rounds (deals) in the match; 0 plays as many rounds as there are players (the longer "
        "variant). Also accepted under its older name `rounds`.",
        0, 20,
        label="Rounds (0: one per player)", aliases=("rounds",),
    ),
    OptionSpec(
        "manual_draw", "bool", False,
        "After playing, the player draws ('draw') and ends the turn ('end') as separate moves; "
        "ending it short of cards while the pile has some is a forgetting that any other "
        "player may call ('call N'), giving the forgetful seat the Oubli card (+1 point). "
        "Off: hands are refilled automatically and the Oubli card never moves.",
        label="Draw by hand (forgetting and the Oubli card)",
    ),
    OptionSpec(
        "deck", "cards", "",
        "Card order of the first round, top first: codes 2-12, J (joker), S (skip), R (reverse), "
        "each card of the deck once (57 cards; 55 with two players, who use no R). Seat 0 gets "
        "the first hand, seat 1 the next...; with two players the next 10 are set aside; the "
        "rest is the draw pile. Empty: shuffled from the table's seed.",
        label="Fixed deck (card codes)", advanced=True,
    ),
    OptionSpec(
        "opener", "int", -1, "Seat opening the first auction of the match; -1: drawn from the seed.",
        -1, MAX_PLAYERS - 1,
        label="First opener (seat, -1 random)", advanced=True,
    ),
)

NOTATION = (
    "9 (a card), 66 or 1010 (a pair), J:10 (a joker as 10), J+8 (a joker with an 8), "
    "JJ:10 (two jokers as 10s), skip, reverse, pass; with manual_draw: draw, end, call N"
)


class Dobro(Game[DobroState, Move, pb.DobroView]):
    info = GameInfo(
        name="dobro",
        title="Dobro",
        min_players=MIN_PLAYERS,
        max_players=MAX_PLAYERS,
        options=OPTIONS,
        notation=NOTATION,
        view_field="dobro",
        zero_sum=False,
        one_deal={"deals": 1},
        bounds=bounds.bounds,
        duplicate_deal=bounds.duplicate_deal,
    )

    # --- set-up -------------------------------------------------------------------------
    def new_game(self, players: int, options: Mapping[str, Any], seed: str) -> DobroState:
        opts = self.checked_options(players, options)
        deck = " ".join(opts["deck"].replace(",", " ").split())
        if deck:
            parse_deck(deck, players)
        if opts["opener"] >= players:
            raise ValueError(
                f"option 'opener' must be a seat of the table (0 to {players - 1}), "
                f"got {opts['opener']}"
            )
        s = object.__new__(DobroState)
        s.seed = str(seed)
        s.players = players
        s.rounds = opts["deals"] or players
        s.manual = opts["manual_draw"]
        s.deck_option = deck
        s.opener_option = opts["opener"]
        s.hand_limit = 5 if players == 6 else 6
        s.round = 0
        s.direction = 1
        s.totals = (0,) * players
        s.history = ()
        s.last = None
        opener = s.opener_option
        if opener < 0:
            opener = random.Random(f"{s.seed}/opener").randrange(players)
        _deal(s, opener)
        return s

    # --- play ---------------------------------------------------------------------------
    def to_act(self, state: DobroState) -> frozenset[int]:
        if state.stage == OVER:
            return _NOBODY
        if not state.forgetters:
            return _ONE[state.turn]
        return _acting(state.players, state.turn, state.forgetters)

    def on_turn(self, state: DobroState) -> frozenset[int]:
        # the others in `to_act` may only call a forgetting
        return _NOBODY if state.stage == OVER else _ONE[state.turn]

    def is_over(self, state: DobroState) -> bool:
        return state.stage == OVER

    def legal_moves(self, state: DobroState, seat: int) -> Sequence[Move]:
        stage = state.stage
        if seat == state.turn and not state.forgetters:
            if stage == PLAY:
                return plays(state.hands[seat], state.value, not state.auction)
            return _turn_moves(state, seat)
        if stage == OVER or not state.forgetters or not 0 <= seat < state.players:
            return ()
        calls = tuple(CALLS[f] for f in state.forgetters if f != seat)
        if seat != state.turn:
            return calls
        if stage == PLAY:
            return plays(state.hands[seat], state.value, not state.auction) + calls
        return _turn_moves(state, seat) + calls

    def apply(self, state: DobroState, seat: int, move: Move) -> DobroState:
        if not isinstance(move, Move):
            raise IllegalMove(f"not a Dobro move: {move!r}")
        stage = state.stage
        if stage == OVER:
            raise IllegalMove("the match is over")
        if not 0 <= seat < state.players:
            raise IllegalMove(f"there is no seat {seat} at this {state.players}-player table")
        kind = move.kind
        if kind == CALL:
            return _call(state, seat, move)
        if seat != state.turn:
            extra = ""
            if state.forgetters and any(f != seat for f in state.forgetters):
                extra = "; you may only call a forgetting now"
            raise IllegalMove(
                f"it is seat {state.turn}'s turn, not seat {seat}'s{extra}",
                MoveRule.NOT_YOUR_TURN,
                to_act=state.turn,
            )
        if stage == PLAY:
            if kind == PASS:
                return _pass(state, seat)
            if kind in (DRAW, END):
                raise IllegalMove(
                    f"'{move.text}' comes after a play: play a card, a pair or a special card, "
                    "or pass",
                    MoveRule.WRONG_PHASE,
                )
            return _play(state, seat, move)
        if kind == DRAW:
            if stage == END_TURN:
                raise IllegalMove(
                    "you have drawn already: end your turn ('end')", MoveRule.DRAW_NOT_ALLOWED
                )
            if state.pos >= len(state.pile):
                raise IllegalMove(
                    "the draw pile is empty: end your turn ('end')", MoveRule.DRAW_NOT_ALLOWED
                )
            return _draw_move(state, seat)
        if kind == END:
            return _end_turn(state, seat)
        if stage == END_TURN:
            raise IllegalMove("you have drawn: end your turn ('end')", MoveRule.WRONG_PHASE)
        raise IllegalMove(
            "you have played this turn: draw ('draw'), or end your turn ('end') without drawing",
            MoveRule.WRONG_PHASE,
        )

    # --- notation -----------------------------------------------------------------------
    def parse_move(self, text: str) -> Move:
        return parse_move(text)

    # --- knowledge ----------------------------------------------------------------------
    def view(self, state: DobroState, seat: int | None) -> pb.DobroView:
        if seat is not None and not 0 <= seat < state.players:
            raise ValueError(f"no seat {seat} at a {state.players}-player table")
        v = pb.DobroView(
            seat=-1 if seat is None else seat,
            hand="" if seat is None else cards_text(state.hands[seat]),
            hand_sizes=[size(h) for h in state.hands],
            draw_pile=state.left,
            set_aside=size(state.aside),
            announcement=announcement(state.last),
        )
        _fill_public(v, state)
        return v

    def sample(self, view: pb.DobroView, rng: random.Random) -> DobroState:
        return _sample(view, rng)

    # --- outcome ------------------------------------------------------------------------
    def result(self, state: DobroState) -> Result:
        last = tuple(-p for p in state.history[-1].points) if state.history else (0,) * state.players
        finished = state.stage == OVER
        winners: tuple[int, ...] = ()
        if finished:
            winners = match_winners(state.totals, state.history[-1].collected)
        return Result(tuple(-t for t in state.totals), last, finished, winners, len(state.history))

    def deal_number(self, state: DobroState) -> int:
        return state.round

    def dealt(self, state: DobroState) -> str:
        """The hands, the cards set aside (two players) and the draw pile, top first."""
        lines = [f"seat {i}: {cards_text(h)}" for i, h in enumerate(state.hands)]
        if state.players == 2:
            lines.append(f"aside: {cards_text(state.aside)}")
        lines.append(f"pile: {pile_text(state.pile[state.pos:])}")
        return "\n".join(lines)

    def num_players(self, state: DobroState) -> int:
        return state.players

    def partners(self, state: DobroState, seat: int) -> frozenset[int]:
        return _ONE[seat]

    def census(self, state: DobroState) -> Counter[str]:
        total = sum(state.hands) + sum(state.collected) + state.auction_cards + state.aside
        for k in state.pile[state.pos:]:
            total += 1 << (4 * k)
        return Counter({CODES[k]: c for k, c in enumerate(counts(total)) if c})

    # --- storage ------------------------------------------------------------------------
    def encode(self, state: DobroState) -> bytes:
        msg = pb.DobroState(
            seed=state.seed,
            deck_option=state.deck_option,
            opener_option=state.opener_option,
            hands=[cards_text(h) for h in state.hands],
            pile=pile_text(state.pile[state.pos:]),
            aside=cards_text(state.aside),
        )
        _fill_public(msg, state)
        return msg.SerializeToString()

    def decode(self, data: bytes) -> DobroState:
        msg = pb.DobroState()
        with self.decoding():
            msg.ParseFromString(data)
            s = object.__new__(DobroState)
            s.seed = msg.seed
            s.deck_option = msg.deck_option
            s.opener_option = msg.opener_option
            _restore_public(s, msg)
            n = s.players
            if len(msg.hands) != n:
                raise ValueError(f"{n} players need {n} hands")
            s.hands = tuple(parse_cards(h) for h in msg.hands)
            s.pile = tuple(parse_list(msg.pile))
            s.pos = 0
            s.aside = parse_cards(msg.aside)
            if not -1 <= s.opener_option < n:
                raise ValueError("bad opener option")
            if s.deck_option:
                parse_deck(s.deck_option, n)
            _check(s)
        return s


# --- rules -----------------------------------------------------------------------------

_ACTING: dict[tuple[int, int, tuple[int, ...]], frozenset[int]] = {}


def _acting(players: int, turn: int, forgetters: tuple[int, ...]) -> frozenset[int]:
    """The seat whose turn it is, and every seat that may call someone's forgetting."""
    key = (players, turn, forgetters)
    res = _ACTING.get(key)
    if res is None:
        res = frozenset(
            [turn] + [s for s in range(players) if any(f != s for f in forgetters)]
        )
        _ACTING[key] = res
    return res


def _turn_moves(state: DobroState, seat: int) -> tuple[Move, ...]:
    """The draw / end moves of a turn after its play (manual_draw)."""
    if state.stage == END_TURN or state.pos >= len(state.pile):
        return _END_ONLY
    return _DRAW_OR_END if state.hands[seat] else _DRAW_ONLY


def _deal(s: DobroState, opener: int) -> None:
    """Shuffle (or take the `deck` option) and deal round `s.round`, `opener` to open."""
    n = s.players
    if s.round == 0 and s.deck_option:
        deck = parse_deck(s.deck_option, n)
    else:
        deck = deck_list(n)
        random.Random(f"{s.seed}/round/{s.round}").shuffle(deck)
    limit = s.hand_limit
    hands = []
    for seat in range(n):
        h = 0
        for k in deck[seat * limit:(seat + 1) * limit]:
            h += 1 << (4 * k)
        hands.append(h)
    start = n * limit
    aside = 0
    if n == 2:
        for k in deck[start:start + SET_ASIDE]:
            aside += 1 << (4 * k)
        start += SET_ASIDE
    s.hands = tuple(hands)
    s.aside = aside
    s.pile = tuple(deck[start:])
    s.pos = 0
    s.collected = (0,) * n
    s.auction_cards = 0
    s.auction = ()
    s.value = 0
    s.turn = opener
    s.round_opener = opener
    s.stage = PLAY
    s.oubli = -1
    s.forgetters = ()
    s.min_specials = (0,) * n


def _replace(t: tuple, i: int, x: Any) -> tuple:
    return t[:i] + (x,) + t[i + 1:]


def _without(forgetters: tuple[int, ...], seat: int) -> tuple[int, ...]:
    return tuple(f for f in forgetters if f != seat)


def _pass(state: DobroState, seat: int) -> DobroState:
    if not state.auction:
        raise IllegalMove(
            "you open this auction: play a card or a pair (the opener may not pass)",
            MoveRule.MAY_NOT_PASS,
        )
    s = state.copy()
    taken = state.auction_cards
    s.collected = _replace(state.collected, seat, state.collected[seat] + taken)
    s.auction_cards = 0
    s.auction = ()
    s.value = 0
    if state.forgetters:
        s.forgetters = _without(state.forgetters, seat)
    s.last = _action_new(Action, (seat, PASS_M, 0, False, size(taken), False))
    return s


def _describe(move: Move) -> str:
    kind = move.kind
    if kind == SINGLE:
        return f"a {move.value}"
    if kind == PAIR:
        return f"two {move.value}s"
    if kind == JOKER_PAIR:
        return f"a joker and a {move.value}"
    if kind == JOKERS_PAIR:
        return "two jokers"
    if kind == JOKER_SINGLE:
        return "a joker"
    return KIND_NAMES[SKIP if kind == SKIP_MOVE else REVERSE]


def _play(state: DobroState, seat: int, move: Move) -> DobroState:
    hand = state.hands[seat]
    if not contains(hand, move.cards):
        raise IllegalMove(
            f"your hand does not hold {_describe(move)} (hand: {cards_text(hand)})",
            MoveRule.CARD_NOT_IN_HAND,
        )
    opening = not state.auction
    amount = move.amount
    kind = move.kind
    value = state.value
    dobro = False
    if kind >= SKIP_MOVE:
        if opening and hand & NUMBERED_MASK:
            raise IllegalMove(
                "the opener plays a card or a pair; a special card opens an auction only from a "
                "hand of special cards"
            )
        new_value = 0 if opening else value
    elif opening:
        new_value = amount
    else:
        if amount < value:
            raise IllegalMove(
                f"{move.text} makes {amount}, less than the value in play {value}: play {value} "
                "or more, a special card, or pass",
                MoveRule.MUST_BEAT,
                to_beat=value,
            )
        if amount == value:
            new_value, dobro = 2 * value, True
        else:
            new_value = amount
    s = state.copy()
    hand -= move.cards
    n = state.players
    direction = state.direction
    if kind == REVERSE_MOVE:
        direction = -direction
        s.direction = direction
    if kind >= SKIP_MOVE:
        known = state.min_specials[seat]
        if opening:
            s.min_specials = _replace(state.min_specials, seat, size(hand))
        elif known:
            s.min_specials = _replace(state.min_specials, seat, known - 1)
    s.auction_cards = state.auction_cards + move.cards
    action = _action_new(Action, (seat, move, new_value, dobro, 0, False))
    s.auction = state.auction + (action,)
    s.value = new_value
    if state.forgetters:
        s.forgetters = _without(state.forgetters, seat)
    left = len(state.pile) - state.pos
    if left == 0:
        s.hands = _replace(state.hands, seat, hand)
        if hand == 0:
            s.last = action._replace(ended_round=True)
            _end_round(s, seat)
            return s
        s.last = action
        s.turn = (seat + direction) % n
        return s
    s.last = action
    if state.manual:
        s.hands = _replace(state.hands, seat, hand)
        s.stage = DRAW_STAGE
        return s
    need = state.hand_limit - size(hand)
    take = need if need < left else left
    pos = state.pos
    pile = state.pile
    for i in range(pos, pos + take):
        hand += 1 << (4 * pile[i])
    s.pos = pos + take
    s.hands = _replace(state.hands, seat, hand)
    s.turn = (seat + direction) % n
    return s


def _refill(s: DobroState, seat: int) -> int:
    """Draws `seat` up to the hand limit (as far as the pile lasts) in `s`; cards drawn."""
    hand = s.hands[seat]
    need = s.hand_limit - size(hand)
    pos = s.pos
    take = max(0, min(need, len(s.pile) - pos))
    for i in range(pos, pos + take):
        hand += 1 << (4 * s.pile[i])
    s.pos = pos + take
    s.hands = _replace(s.hands, seat, hand)
    if s.pos >= len(s.pile):
        s.forgetters = ()  # no Oubli card is given once the pile is empty
    return take


def _draw_move(state: DobroState, seat: int) -> DobroState:
    s = state.copy()
    if state.forgetters:
        s.forgetters = _without(state.forgetters, seat)
    drawn = _refill(s, seat)
    s.stage = END_TURN
    s.last = Action(seat, DRAW_M, state.value, False, drawn)
    return s


def _end_turn(state: DobroState, seat: int) -> DobroState:
    hand = state.hands[seat]
    left = len(state.pile) - state.pos
    if left and not hand:
        raise IllegalMove(
            "your hand is empty: draw ('draw') before ending your turn",
            MoveRule.END_TURN_NOT_ALLOWED,
        )
    s = state.copy()
    forgetters = _without(state.forgetters, seat) if state.forgetters else ()
    missing = state.hand_limit - size(hand) if left else 0
    if missing > 0:
        forgetters = tuple(sorted(forgetters + (seat,)))
    else:
        missing = 0
    s.forgetters = forgetters
    action = Action(seat, END_M, state.value, False, missing)
    if not hand:  # last card played, and the pile ran out before the draw
        s.last = action._replace(ended_round=True)
        _end_round(s, seat)
        return s
    s.last = action
    s.stage = PLAY
    s.turn = (seat + state.direction) % state.players
    return s


def _call(state: DobroState, seat: int, move: Move) -> DobroState:
    target = move.value
    if not state.manual:
        raise IllegalMove(
            "there is no forgetting to call: hands are refilled automatically at this table "
            "(option manual_draw is off)",
            MoveRule.CALL_NOT_ALLOWED,
        )
    if target == seat:
        raise IllegalMove("you cannot call your own forgetting", MoveRule.CALL_NOT_ALLOWED)
    if target not in state.forgetters:
        raise IllegalMove(
            f"seat {target} has no forgetting to call: a forgetting may be called only until "
            "the forgetful player acts again, and only while the draw pile has cards",
            MoveRule.CALL_NOT_ALLOWED,
        )
    s = state.copy()
    s.forgetters = tuple(f for f in state.forgetters if f != target and f != seat)
    s.oubli = target
    drawn = _refill(s, target)
    s.last = Action(seat, move, state.value, False, drawn)
    return s


def _end_round(s: DobroState, ender: int) -> None:
    """Score the round in `s`; deal the next one or end the match."""
    collected = tuple(size(c) for c in s.collected)
    points = round_points(collected, s.oubli)
    s.history = s.history + (RoundScore(collected, points, s.oubli, ender, s.round_opener),)
    s.totals = tuple(t + p for t, p in zip(s.totals, points, strict=True))
    s.forgetters = ()
    if s.round + 1 >= s.rounds:
        s.stage = OVER
        s.turn = -1
        return
    s.round += 1
    _deal(s, next_opener(points, ender, s.direction))



def announcement(last: Action | None) -> str:
    """What the player of the last move says aloud, e.g. 'Dobro! The value is now 18.'"""
    if last is None:
        return ""
    move, value, kind = last.move, last.value, last.move.kind
    if kind == PASS:
        text = f"Passes and takes {last.cards} card(s); opens the next auction."
    elif kind == SKIP_MOVE:
        text = f"Skip: the value stays {value}." if value else "Skip: any card or pair may follow."
    elif kind == REVERSE_MOVE:
        text = "Reverse: play goes the other way; " + (
            f"the value stays {value}." if value else "any card or pair may follow."
        )
    elif kind == DRAW:
        text = f"Draws {last.cards} card(s)."
    elif kind == END:
        text = (
            f"Ends the turn {last.cards} card(s) short: a forgetting, the others may call it."
            if last.cards else "Ends the turn."
        )
    elif kind == CALL:
        text = (
            f"Calls seat {move.value}'s forgetting: seat {move.value} takes the Oubli card and "
            f"draws {last.cards} card(s)."
        )
    else:
        what = ""
        if kind == JOKER_SINGLE:
            what = f"Joker as {move.value}. "
        elif kind == JOKERS_PAIR:
            what = f"Two jokers as {move.value}s. "
        elif kind == JOKER_PAIR:
            what = f"Joker with a {move.value}: a pair of {move.value}s. "
        if last.dobro:
            text = f"{what}Dobro! The value is now {value}."
        else:
            text = f"{what}The value is now {value}."
    if last.ended_round:
        text += " Last card played: the round is over."
    return text


# --- messages --------------------------------------------------------------------------

def _fill_action(out: pb.DobroAction, a: Action) -> None:
    out.seat = a.seat
    out.move = a.move.text
    out.value = a.value
    out.dobro = a.dobro
    out.cards = a.cards
    out.ended_round = a.ended_round


def _fill_public(msg: pb.DobroView | pb.DobroState, s: DobroState) -> None:
    """The fields a view shares with the state message (same names in both)."""
    msg.players = s.players
    msg.stage = s.stage  # type: ignore[assignment]
    msg.round = s.round
    msg.rounds = s.rounds
    msg.manual_draw = s.manual
    msg.turn = s.turn
    msg.direction = s.direction
    msg.value = s.value
    msg.auction_cards = cards_text(s.auction_cards)
    msg.collected.extend([cards_text(c) for c in s.collected])
    msg.oubli = s.oubli
    msg.forgetters.extend(s.forgetters)
    msg.min_specials.extend(s.min_specials)
    msg.totals.extend(s.totals)
    msg.round_opener = s.round_opener
    if isinstance(msg, pb.DobroView):
        msg.hand_limit = s.hand_limit
    add_auction = msg.auction.add
    for a in s.auction:
        add_auction(seat=a.seat, move=a.move.text, value=a.value, dobro=a.dobro, cards=a.cards,
            ended_round=a.ended_round)
    add_history = msg.history.add
    for r in s.history:
        add_history(collected=r.collected, points=r.points, oubli=r.oubli, ender=r.ender, opener=r.opener)
    if s.last is None:
        msg.last.seat = -1
    else:
        _fill_action(msg.last, s.last)


def _action(a: pb.DobroAction) -> Action:
    return Action(a.seat, Move(a.move), a.value, a.dobro, a.cards, a.ended_round)


def _restore_public(s: DobroState, msg: pb.DobroView | pb.DobroState) -> None:
    """Sets the slots a state shares with a view; ValueError on what cannot be."""
    n = msg.players
    if not MIN_PLAYERS <= n <= MAX_PLAYERS:
        raise ValueError(f"bad player count {n}")
    s.players = n
    s.rounds = msg.rounds
    s.manual = msg.manual_draw
    s.hand_limit = 5 if n == 6 else 6
    s.round = msg.round
    s.stage = msg.stage
    s.turn = msg.turn
    s.direction = msg.direction
    s.value = msg.value
    s.auction_cards = parse_cards(msg.auction_cards)
    s.auction = tuple(_action(a) for a in msg.auction)
    s.collected = tuple(parse_cards(c) for c in msg.collected)
    s.oubli = msg.oubli
    s.forgetters = tuple(msg.forgetters)
    s.min_specials = tuple(msg.min_specials)
    s.totals = tuple(msg.totals)
    s.history = tuple(
        RoundScore(tuple(r.collected), tuple(r.points), r.oubli, r.ender, r.opener)
        for r in msg.history
    )
    s.last = None if msg.last.seat < 0 else _action(msg.last)
    s.round_opener = msg.round_opener
    if len(s.collected) != n or len(s.min_specials) != n or len(s.totals) != n:
        raise ValueError("per-seat fields do not match the player count")


def _check(s: DobroState) -> None:
    """Consistency of a decoded state: the cards add up, the numbers are in range."""
    n = s.players
    if s.stage not in (PLAY, DRAW_STAGE, END_TURN, OVER):
        raise ValueError("bad stage")
    if s.direction not in (1, -1):
        raise ValueError("bad direction")
    if not 1 <= s.rounds <= 20 or not 0 <= s.round < s.rounds:
        raise ValueError("bad round")
    if s.stage == OVER:
        if s.turn != -1:
            raise ValueError("a finished match has no turn")
    elif not 0 <= s.turn < n:
        raise ValueError("bad turn")
    if not -1 <= s.oubli < n or not 0 <= s.round_opener < n:
        raise ValueError("bad seat")
    if any(not 0 <= f < n for f in s.forgetters) or len(set(s.forgetters)) != len(s.forgetters):
        raise ValueError("bad forgetters")
    if any(not 0 <= m <= 6 for m in s.min_specials) or not 0 <= s.value <= 48:
        raise ValueError("bad numbers")
    if any(not 0 <= p < N_KINDS for p in s.pile):
        raise ValueError("bad pile")
    total = sum(s.hands) + sum(s.collected) + s.auction_cards + s.aside
    for k in s.pile:
        total += 1 << (4 * k)
    if total != full_deck(n):
        raise ValueError("the cards do not add up to the deck")
    if any(size(h) > s.hand_limit for h in s.hands):
        raise ValueError("a hand holds too many cards")
    for r in s.history:
        if len(r.collected) != n or len(r.points) != n:
            raise ValueError("bad round history")
    last = s.last
    if last is not None and not 0 <= last.seat < n:
        raise ValueError("bad last move")
    for a in s.auction:
        if not 0 <= a.seat < n:
            raise ValueError("bad auction")


# --- determinization -------------------------------------------------------------------

_SAMPLED: list[tuple[bytes, Any]] = [(b"", None)]
"""(bytes of the last view sampled, what was read from it): ISMCTS samples one view many
times, and reading the public part is most of a sample's cost. One tuple, replaced whole, so
searches in several threads never mix one view's key with another's data."""


def _sample(v: pb.DobroView, rng: random.Random) -> DobroState:
    """Deal the cards `v` does not show, uniformly among the arrangements it allows.

    Unseen cards go to the other hands, the draw pile and (two players) the set-aside cards. A
    seat that opened an auction with a special card held nothing else then: it is known to hold
    at least `min_specials` special cards, and the deal honours that exactly (the special cards
    are placed first, each split weighted by the number of arrangements it stands for).
    """
    key = v.SerializeToString()
    cached = _SAMPLED[0]
    if cached[0] == key and cached[1] is not None:
        template, own, slots, dealer, cards = cached[1]
    else:
        template = object.__new__(DobroState)
        _restore_public(template, v)
        template.seed, template.deck_option, template.opener_option = "", "", -1
        template.hands, template.pile, template.pos, template.aside = (), (), 0, 0
        n = template.players
        seat = v.seat
        own = parse_cards(v.hand) if seat >= 0 else 0
        seen = own + sum(template.collected) + template.auction_cards
        if not contains(full_deck(n), seen):
            raise ValueError("the view is inconsistent: more cards seen than the deck has")
        pool = full_deck(n) - seen
        sizes = list(v.hand_sizes)
        if len(sizes) != n:
            raise ValueError("the view is inconsistent: hand sizes")
        slots = [sizes[p] if p != seat else 0 for p in range(n)] + [v.draw_pile, v.set_aside]
        need = [template.min_specials[p] if p != seat else 0 for p in range(n)] + [0, 0]
        cards = [k for k in range(N_KINDS) for _ in range(count(pool, k))]
        if len(cards) != sum(slots):
            raise ValueError("the view is inconsistent: hidden card counts do not add up")
        dealer = None
        if any(need):  # the special cards first, each place holding at least its `need`
            specials = sum(1 for k in cards if k in (SKIP, REVERSE))
            everywhere = (1 << len(slots)) - 1
            dealer = ConstrainedDeal([(everywhere, specials), (everywhere, len(cards) - specials)],
                                     tuple(slots), [tuple(need), (0,) * len(slots)])
            if not dealer.count:
                raise ValueError("the view is inconsistent: known special cards cannot be placed")
        _SAMPLED[0] = (key, (template, own, slots, dealer, cards))
    s = template.copy()
    n = s.players
    seat = v.seat
    if dealer is not None:
        parts, _ = dealer.draw([[k for k in cards if k in (SKIP, REVERSE)],
                                [k for k in cards if k != SKIP and k != REVERSE]], rng)
        for part in parts:
            rng.shuffle(part)
    else:
        deal = cards[:]
        rng.shuffle(deal)
        parts = []
        pos = 0
        for slot in slots:
            parts.append(deal[pos:pos + slot])
            pos += slot
    hands = []
    for p in range(n):
        if p == seat:
            hands.append(own)
            continue
        h = 0
        for k in parts[p]:
            h += 1 << (4 * k)
        hands.append(h)
    s.hands = tuple(hands)
    s.pile = tuple(parts[n])
    s.pos = 0
    aside = 0
    for k in parts[n + 1]:
        aside += 1 << (4 * k)
    s.aside = aside
    s.seed = f"{rng.getrandbits(128):032x}"
    s.deck_option = ""
    s.opener_option = -1
    return s


GAME = Dobro()
