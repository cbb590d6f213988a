"""Dos moves and their notation. A turn is a sequence of small moves:

- a match: `b7 on b7` (single), `r3+b4 on y7` (double), cards played then the centre card;
- `draw`: take one card instead of matching (then only that card may be matched);
- `add b5`: put a card from hand in the centre row (colour bonus, or the official no-match rule);
- `end` / `end dos`: end the turn, `end dos` calling "Dos" with two cards left;
- `dos`: the player who ended a turn with two cards without calling calls it late;
- `catch`: another player catches that missing call (the culprit draws two).

Moves are interned: one object per distinct move, compared by identity.

>>> Move("b4+R3 on y7")
Move('b4+r3 on y7')
>>> parse_move("end dos") is END_DOS_MOVE
True
"""

from __future__ import annotations

from engines.dos.cards import CODES, N_TYPES, parse_card
from engines.interned import InternedMove

MATCH, DRAW, ADD, END, END_DOS, CALL, CATCH = range(7)
KIND_NAMES = ("match", "draw", "add", "end", "end dos", "dos", "catch")

_INTERN: dict[str, Move] = {}


class Move(InternedMove):
    """One decision. `cards` are the types played (sorted), `target` the centre card's type."""

    __slots__ = ("kind", "cards", "target", "text")

    kind: int
    cards: tuple[int, ...]
    target: int
    text: str


def _make(kind: int, cards: tuple[int, ...], target: int, text: str) -> Move:
    move = object.__new__(Move)
    move.kind, move.cards, move.target, move.text = kind, cards, target, text
    _INTERN[text] = move
    return move


DRAW_MOVE = _make(DRAW, (), -1, "draw")
END_MOVE = _make(END, (), -1, "end")
END_DOS_MOVE = _make(END_DOS, (), -1, "end dos")
CALL_MOVE = _make(CALL, (), -1, "dos")
CATCH_MOVE = _make(CATCH, (), -1, "catch")

ADDS: tuple[Move, ...] = tuple(
    _make(ADD, (t,), -1, f"add {CODES[t]}") if CODES[t] else None  # type: ignore[misc]
    for t in range(N_TYPES)
)

# MATCHES[(a, b, target)] with b = -1 for a single and a <= b for a double.
_MATCHES: dict[tuple[int, int, int], Move] = {}


def match_move(a: int, b: int, target: int) -> Move:
    """The interned match of card a (and b, or -1) on the centre card `target`."""
    if b >= 0 and b < a:
        a, b = b, a
    key = (a, b, target)
    move = _MATCHES.get(key)
    if move is None:
        if b < 0:
            move = _make(MATCH, (a,), target, f"{CODES[a]} on {CODES[target]}")
        else:
            move = _make(MATCH, (a, b), target, f"{CODES[a]}+{CODES[b]} on {CODES[target]}")
        _MATCHES[key] = move
    return move


def parse_move(text: str) -> Move:
    """The move written `text` (any case, extra spaces, the two cards of a double in any
    order); ValueError saying what is malformed."""
    if not isinstance(text, str):
        raise ValueError("a move must be text")
    raw = " ".join(text.split()).lower()
    move = _INTERN.get(raw)
    if move is not None:
        return move
    if not raw:
        raise ValueError("empty move; write e.g. 'b7 on b7', 'r3+b4 on y7', 'draw', 'end'")
    if raw.startswith("add"):
        rest = raw[3:].strip()
        if not rest:
            raise ValueError("'add' needs the card to put in the centre row, e.g. 'add b5'")
        return ADDS[parse_card(rest)]
    played, sep, target = raw.partition(" on ")
    if not sep:
        raise ValueError(
            f"bad move {text!r}: write a match as 'CARD on CARD' or 'CARD+CARD on CARD' "
            "(e.g. 'b7 on b7', 'r3+b4 on y7'), or draw, add CARD, end, end dos, dos, catch"
        )
    parts = [p.strip() for p in played.split("+")]
    if len(parts) > 2 or not all(parts):
        raise ValueError(f"bad move {text!r}: a match plays one card or two joined by '+'")
    cards = [parse_card(p) for p in parts]
    t = parse_card(target)
    return match_move(cards[0], cards[1] if len(cards) == 2 else -1, t)


Move._interned = _INTERN
Move._parse = staticmethod(parse_move)
