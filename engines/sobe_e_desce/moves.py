"""Sobe e Desce moves and their notation.

A move is a small tuple (kind, argument), so equality and hashing are the fast built-ins the
search trees use; `Move(text)` parses, `str(move)` is the canonical notation, and the repr is
the parse call, like python-chess.

>>> Move("trump h"), Move("turn"), Move("pass"), Move("play"), Move("exchange Qd 2c"), Move("7h")
(Move('trump h'), Move('turn'), Move('pass'), Move('play'), Move('exchange 2c Qd'), Move('7h'))
>>> Move("exchange 2c Qd").arg == parse_cards("2c Qd")
True
"""

from __future__ import annotations

from operator import itemgetter

from engines.cache import remember
from engines.sobe_e_desce.cards import (
    CARD_TEXT,
    N_CARDS,
    SUITS,
    cards_text,
    parse_card,
    parse_cards,
    parse_suit,
)

TRUMP, TURN, PASS, EXCHANGE, CARD = 0, 1, 2, 3, 4
MAX_EXCHANGE = 5


class Move(tuple):
    """One decision: name trumps (`trump h`), turn a card (`turn`), `pass`, `play` (keep the
    hand), `exchange 2c Qd` (play after swapping those cards with the stock), or a card (`7h`).

    `kind` is one of TRUMP, TURN, PASS, EXCHANGE, CARD; `arg` the suit, the exchanged cards as a
    mask (0 for `play`) or the card id.
    """

    __slots__ = ()

    kind = property(itemgetter(0))
    arg = property(itemgetter(1))

    def __new__(cls, text: str) -> Move:
        return parse_move(text)

    def __getnewargs__(self) -> tuple[str]:
        return (self.text,)

    @property
    def text(self) -> str:
        kind, arg = self
        if kind == CARD:
            return CARD_TEXT[arg]
        if kind == EXCHANGE:
            return "exchange " + cards_text(arg) if arg else "play"
        if kind == TRUMP:
            return "trump " + SUITS[arg]
        return "turn" if kind == TURN else "pass"

    def __repr__(self) -> str:
        return f"Move({self.text!r})"

    def __str__(self) -> str:
        return self.text

    def __copy__(self) -> Move:
        return self

    def __deepcopy__(self, memo: dict) -> Move:
        return self


def make(kind: int, arg: int = 0) -> Move:
    """A move without parsing (the engine's own constructor)."""
    return tuple.__new__(Move, (kind, arg))


CARD_MOVES = tuple(make(CARD, c) for c in range(N_CARDS))
TRUMP_MOVES = tuple(make(TRUMP, s) for s in range(4))
TURN_MOVE = make(TURN)
PASS_MOVE = make(PASS)
PLAY_MOVE = make(EXCHANGE, 0)
CHOICE_MOVES = (*TRUMP_MOVES, TURN_MOVE)

_CACHE: dict[int, tuple[Move, ...]] = {}


def card_moves(mask: int) -> tuple[Move, ...]:
    """The card moves of a set, ascending: cached, legal-move lists are built millions of times."""
    moves = _CACHE.get(mask)
    if moves is None:
        out = []
        m = mask
        while m:
            low = m & -m
            out.append(CARD_MOVES[low.bit_length() - 1])
            m ^= low
        moves = tuple(out)
        remember(_CACHE, 50_000, mask, moves)
    return moves


_EXCHANGES: dict[tuple[int, int, bool], tuple[Move, ...]] = {}
_ORDER = {
    (n, limit): tuple(sorted((i for i in range(1, 1 << n) if i.bit_count() <= limit),
                             key=lambda i: (i.bit_count(), i)))
    for n in range(MAX_EXCHANGE + 1)
    for limit in range(MAX_EXCHANGE + 1)
}
"""Subsets of an n-card hand as index patterns, by size then by cards (patterns order like
masks: ascending card ids keep their order)."""
_new = tuple.__new__


def decision_moves(hand: int, limit: int, may_pass: bool) -> tuple[Move, ...]:
    """`pass` (if allowed), `play`, then every exchange of 1..limit cards of the hand."""
    key = (hand, limit, may_pass)
    moves = _EXCHANGES.get(key)
    if moves is None:
        subsets = [0]
        m = hand
        while m:
            low = m & -m
            subsets += [x | low for x in subsets]
            m ^= low
        n = len(subsets).bit_length() - 1
        out = [PASS_MOVE, PLAY_MOVE] if may_pass else [PLAY_MOVE]
        out += [_new(Move, (EXCHANGE, subsets[i])) for i in _ORDER[n, min(limit, n)]]
        moves = tuple(out)
        remember(_EXCHANGES, 4_096, key, moves)
    return moves


def parse_move(text: str) -> Move:
    """The move written `text`; ValueError saying what is malformed.

    Accepts the canonical notation plus, for people, any case, extra spaces, suit names
    (`trump hearts`) and exchanged cards in any order.
    """
    if not isinstance(text, str):
        raise ValueError("a move must be text")
    words = text.split()
    if not words:
        raise ValueError("empty move; write e.g. 'trump h', 'turn', 'pass', 'play', "
                         "'exchange 2c Qd' or a card such as '7h'")
    head = words[0].lower()
    if head == "pass" and len(words) == 1:
        return PASS_MOVE
    if head == "play" and len(words) == 1:
        return PLAY_MOVE
    if head == "turn" and len(words) == 1:
        return TURN_MOVE
    if head == "trump":
        if len(words) != 2:
            raise ValueError(f"bad trump choice {text!r}: write 'trump c', 'trump d', 'trump h' "
                             "or 'trump s' (or 'turn' to turn your next card)")
        return TRUMP_MOVES[parse_suit(words[1])]
    if head == "exchange":
        if len(words) == 1:
            raise ValueError("'exchange' needs the cards to give up, e.g. 'exchange 2c Qd'; "
                             "write 'play' to keep your hand")
        mask = parse_cards(" ".join(words[1:]))
        if mask.bit_count() > MAX_EXCHANGE:
            raise ValueError(f"at most {MAX_EXCHANGE} cards may be exchanged")
        return make(EXCHANGE, mask)
    if len(words) == 1:
        return CARD_MOVES[parse_card(words[0])]
    raise ValueError(f"bad move {text!r}: write 'trump h', 'turn', 'pass', 'play', "
                     "'exchange 2c Qd' or a card such as '7h'")
