"""Dobro moves: their notation, and the legal plays of a hand, cached.

Every move is interned (one object per distinct move), so moves compare by identity and the
legal-move lists are tuples of shared objects cached under (hand, value in play).

>>> Move("JJ:10")
Move('JJ:10')
>>> Move("JJ:10").amount, Move("J+8").amount, Move("66").amount, Move("9").amount
(20, 16, 12, 9)
>>> str(parse_move("10 + 10")), str(parse_move("8+j")), str(parse_move(" Skip "))
('1010', 'J+8', 'skip')
"""

from __future__ import annotations

from engines.cache import remember
from engines.dobro.cards import JOKER, NUMBERED_MASK, REVERSE, SKIP, unit
from engines.interned import InternedMove

# Move kinds.
PASS, SINGLE, PAIR, JOKER_SINGLE, JOKER_PAIR, JOKERS_PAIR, SKIP_MOVE, REVERSE_MOVE = range(8)
DRAW, END, CALL = 8, 9, 10
PLAYS = (SINGLE, PAIR, JOKER_SINGLE, JOKER_PAIR, JOKERS_PAIR)
"""Kinds that put numbered cards (or jokers standing for them) on the table."""

KIND_NAMES = {
    PASS: "pass", SINGLE: "single card", PAIR: "pair", JOKER_SINGLE: "joker",
    JOKER_PAIR: "joker with a card", JOKERS_PAIR: "pair of jokers", SKIP_MOVE: "skip card",
    REVERSE_MOVE: "reverse card", DRAW: "draw", END: "end of turn", CALL: "call",
}

_INTERN: dict[str, Move] = {}
_BY_KEY: dict[tuple[int, int], Move] = {}


class Move(InternedMove):
    """One move. `value` is the card value it plays (the declared one for jokers; the called
    seat for a call), `amount` what it adds up to against the value in play (0 when it plays no
    numbered card), `cards` the packed cards it takes from the hand, `text` its notation.
    Construct from notation: `Move("J+8")`; `str(move)` is the canonical notation.
    """

    __slots__ = ("kind", "value", "amount", "cards", "text", "id", "n_cards")

    kind: int
    value: int
    amount: int
    cards: int
    text: str
    id: int
    n_cards: int

    @property
    def is_play(self) -> bool:
        """True for a move that puts cards in the auction (numbered, jokers or special)."""
        return SINGLE <= self.kind <= REVERSE_MOVE


def _format(kind: int, value: int) -> str:
    if kind == SINGLE:
        return str(value)
    if kind == PAIR:
        return f"{value}{value}"
    if kind == JOKER_SINGLE:
        return f"J:{value}"
    if kind == JOKER_PAIR:
        return f"J+{value}"
    if kind == JOKERS_PAIR:
        return f"JJ:{value}"
    if kind == CALL:
        return f"call {value}"
    return KIND_WORDS[kind]


KIND_WORDS = {PASS: "pass", SKIP_MOVE: "skip", REVERSE_MOVE: "reverse", DRAW: "draw", END: "end"}


def _intern(kind: int, value: int = 0) -> Move:
    key = (kind, value)
    move = _BY_KEY.get(key)
    if move is not None:
        return move
    move = object.__new__(Move)
    move.kind, move.value = kind, value
    move.text = _format(kind, value)
    move.id = len(_BY_KEY)
    k = value - 2
    if kind == SINGLE:
        move.amount, move.cards = value, unit(k)
    elif kind == PAIR:
        move.amount, move.cards = 2 * value, 2 * unit(k)
    elif kind == JOKER_SINGLE:
        move.amount, move.cards = value, unit(JOKER)
    elif kind == JOKER_PAIR:
        move.amount, move.cards = 2 * value, unit(JOKER) + unit(k)
    elif kind == JOKERS_PAIR:
        move.amount, move.cards = 2 * value, 2 * unit(JOKER)
    elif kind == SKIP_MOVE:
        move.amount, move.cards = 0, unit(SKIP)
    elif kind == REVERSE_MOVE:
        move.amount, move.cards = 0, unit(REVERSE)
    else:
        move.amount, move.cards = 0, 0
    move.n_cards = 2 if kind in (PAIR, JOKER_PAIR, JOKERS_PAIR) else 1 if move.cards else 0
    _INTERN[move.text] = move
    _BY_KEY[key] = move
    return move


VALUES = range(2, 13)
PASS_M = _intern(PASS)
SKIP_M = _intern(SKIP_MOVE)
REVERSE_M = _intern(REVERSE_MOVE)
DRAW_M = _intern(DRAW)
END_M = _intern(END)
SINGLES = {v: _intern(SINGLE, v) for v in VALUES}
PAIRS = {v: _intern(PAIR, v) for v in VALUES}
JOKER_SINGLES = {v: _intern(JOKER_SINGLE, v) for v in VALUES}
JOKER_PAIRS = {v: _intern(JOKER_PAIR, v) for v in VALUES}
JOKERS_PAIRS = {v: _intern(JOKERS_PAIR, v) for v in VALUES}
CALLS = tuple(_intern(CALL, s) for s in range(6))


# --- parsing ---------------------------------------------------------------------------

EXAMPLES = "9, 66, 1010, J:10, J+8, JJ:10, skip, reverse, pass, draw, end, call 2"


def _value(text: str, whole: str) -> int:
    if not (text.isascii() and text.isdigit()) or not 2 <= int(text) <= 12:
        raise ValueError(f"bad move {whole!r}: card values run from 2 to 12, not {text!r}")
    return int(text)


def parse_move(text: str) -> Move:
    """The move written `text`; ValueError naming what is malformed.

    Accepts the canonical notation and, for people, any case, spaces, `6+6` or `10 10` for a
    pair, `8+J` for a joker with an 8, and `S`/`R` for the special cards.
    """
    if not isinstance(text, str):
        raise ValueError("a move must be text")
    raw = " ".join(text.split()).lower()
    if not raw:
        raise ValueError(f"empty move; write e.g. {EXAMPLES}")
    move = _INTERN.get(raw) or _INTERN.get(raw.upper())
    if move is not None:
        return move
    if raw.startswith("call"):
        seat = raw[4:].strip()
        if seat.isascii() and seat.isdigit() and int(seat) < len(CALLS) and len(seat) == 1:
            return CALLS[int(seat)]
        raise ValueError(f"bad move {text!r}: write 'call' and the forgetful seat, e.g. 'call 2'")
    words = {"s": SKIP_M, "r": REVERSE_M, "skip": SKIP_M, "reverse": REVERSE_M, "pass": PASS_M,
             "draw": DRAW_M, "end": END_M}
    if raw in words:
        return words[raw]
    compact = raw.replace(" ", "") if "+" in raw or ":" in raw else raw.replace(" ", "+")
    if compact.startswith("jj"):
        rest = compact[2:]
        if not rest.startswith(":"):
            raise ValueError(f"bad move {text!r}: two jokers need a declared value, e.g. JJ:10")
        return JOKERS_PAIRS[_value(rest[1:], text)]
    if compact.startswith("j:"):
        return JOKER_SINGLES[_value(compact[2:], text)]
    if compact == "j":
        raise ValueError(f"bad move {text!r}: a joker alone needs a declared value, e.g. J:10")
    if "+" in compact:
        left, _, right = compact.partition("+")
        if left == "j" and right == "j":
            raise ValueError(f"bad move {text!r}: two jokers are written JJ:value, e.g. JJ:10")
        if left == "j" or right == "j":
            return JOKER_PAIRS[_value(right if left == "j" else left, text)]
        a, b = _value(left, text), _value(right, text)
        if a != b:
            raise ValueError(f"bad move {text!r}: a pair is two cards of the same value")
        return PAIRS[a]
    if compact.isascii() and compact.isdigit():
        if len(compact) <= 2 and 2 <= int(compact) <= 12:
            return SINGLES[int(compact)]
        half = len(compact) // 2
        if len(compact) in (2, 4) and compact[:half] == compact[half:]:
            return PAIRS[_value(compact[:half], text)]
        raise ValueError(f"bad move {text!r}: card values run from 2 to 12")
    raise ValueError(f"bad move {text!r}; write e.g. {EXAMPLES}")


# --- generation ------------------------------------------------------------------------

_CACHE_LIMIT = 300_000
_PLAYS: dict[int, tuple[Move, ...]] = {}


def plays(h: int, value: int, opening: bool) -> tuple[Move, ...]:
    """Every move of the hand on its turn in an auction at `value` (opening: any first play).

    Following: pass first, then singles, pairs and joker plays reaching `value`, then the
    special cards held. Opening: every single or pair (jokers included); special cards only
    when the hand holds nothing else; never a pass.
    """
    key = (h << 7) | (127 if opening else value)
    res = _PLAYS.get(key)
    if res is not None:
        return res
    out: list[Move] = [] if opening else [PASS_M]
    numbered = h & NUMBERED_MASK
    if numbered or not opening:
        low = 0 if opening else value
        jokers = (h >> (4 * JOKER)) & 15
        for v in VALUES:
            c = (h >> (4 * (v - 2))) & 15
            if c and v >= low:
                out.append(SINGLES[v])
            if c >= 2 and 2 * v >= low:
                out.append(PAIRS[v])
            if c and jokers and 2 * v >= low:
                out.append(JOKER_PAIRS[v])
        if jokers:
            out.extend(JOKER_SINGLES[v] for v in VALUES if v >= low)
            if jokers >= 2:
                out.extend(JOKERS_PAIRS[v] for v in VALUES if 2 * v >= low)
    if not opening or not numbered:
        if (h >> (4 * SKIP)) & 15:
            out.append(SKIP_M)
        if (h >> (4 * REVERSE)) & 15:
            out.append(REVERSE_M)
    res = tuple(out)
    remember(_PLAYS, _CACHE_LIMIT, key, res)
    return res


Move._interned = _INTERN
Move._parse = staticmethod(parse_move)
