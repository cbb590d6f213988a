"""Dos cards: types, codes, points and the precomputed match table.

Cards of the same colour and number are interchangeable, so the engine works with card
*types* (small ints): colour c (b g r y) and slot k give type c * 11 + k, where slots 0..9
are the numbers 1..10 (slot 1, the number 2, never exists: the 2s are the wild DOS cards)
and slot 10 is that colour's wild #; type 44 is the colourless wild DOS.

Card codes: colour letter then number (`b7`, `r10`), `g#` for a wild #, `w2` for a wild DOS.

>>> code(parse_card("R10")), code(WILD_DOS), code(wild_hash(2))
('r10', 'w2', 'r#')
>>> match_kind(parse_card("b7"), (parse_card("b3"), parse_card("b4"))) == DOUBLE_COLOUR
True
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache

COLOURS = "bgry"
N_TYPES = 45
WILD_DOS = 44
HASH_SLOT = 10
NUMBERS = (1, 3, 4, 5, 6, 7, 8, 9, 10)

# Copies of each type in the 108-card deck.
COPIES = [0] * N_TYPES
for _c in range(4):
    for _n in NUMBERS:
        COPIES[_c * 11 + _n - 1] = 3 if _n <= 5 else 2
    COPIES[_c * 11 + HASH_SLOT] = 2
COPIES[WILD_DOS] = 12
TYPES = tuple(t for t in range(N_TYPES) if COPIES[t])
DECK_SIZE = sum(COPIES)
assert DECK_SIZE == 108


def wild_hash(colour: int) -> int:
    return colour * 11 + HASH_SLOT


def is_wild(t: int) -> bool:
    return t == WILD_DOS or t % 11 == HASH_SLOT


def points(t: int) -> int:
    """What the card costs when left in a hand at the end of a round."""
    if t == WILD_DOS:
        return 20
    k = t % 11
    return 40 if k == HASH_SLOT else k + 1


POINTS = tuple(points(t) if COPIES[t] else 0 for t in range(N_TYPES))

CODES = [""] * N_TYPES
for _t in TYPES:
    if _t == WILD_DOS:
        CODES[_t] = "w2"
    elif _t % 11 == HASH_SLOT:
        CODES[_t] = COLOURS[_t // 11] + "#"
    else:
        CODES[_t] = COLOURS[_t // 11] + str(_t % 11 + 1)
_BY_CODE = {c: t for t, c in enumerate(CODES) if c}


def code(t: int) -> str:
    return CODES[t]


def parse_card(text: str) -> int:
    """The type of a card code (case and spaces ignored); ValueError if there is no such card."""
    t = _BY_CODE.get(text)
    if t is not None:
        return t
    t = _BY_CODE.get(text.strip().lower())
    if t is None:
        raw = text.strip().lower()
        if len(raw) == 2 and raw[0] in COLOURS and raw[1] == "2":
            raise ValueError(f"there is no {raw} card: the 2s are the wild DOS cards, written w2")
        raise ValueError(
            f"{text!r} is not a card: write a colour (b g r y) and a number (1, 3-10) like b7 "
            "or r10, a colour and # for a wild # (g#), or w2 for a wild DOS"
        )
    return t


def codes(types: Iterable[int]) -> str:
    return " ".join(CODES[t] for t in types)


@lru_cache(maxsize=1 << 14)
def parse_cards(text: str) -> tuple[int, ...]:
    """Sorted card types from codes separated by spaces or commas (cached: determinizations
    parse the same view again and again)."""
    return tuple(sorted(parse_card(c) for c in text.replace(",", " ").split()))


@lru_cache(maxsize=1 << 14)
def parse_row(text: str) -> tuple[int, ...]:
    """Card types in the order given (the centre row, the draw pile)."""
    return tuple(parse_card(c) for c in text.split())


def full_deck() -> list[int]:
    """The 108 cards in type order."""
    return [t for t in TYPES for _ in range(COPIES[t])]


def parse_deck(text: str) -> list[int]:
    """A full deck order, top first, from 108 card codes; ValueError saying what is wrong."""
    cards = [parse_card(c) for c in text.replace(",", " ").split()]
    counts = [0] * N_TYPES
    for t in cards:
        counts[t] += 1
    if counts != COPIES:
        detail = []
        for t in TYPES:
            if counts[t] != COPIES[t]:
                detail.append(f"{CODES[t]} x{counts[t]} (needs {COPIES[t]})")
        raise ValueError(
            f"the deck must hold the 108 Dos cards ({len(cards)} given): " + ", ".join(detail)
        )
    return cards


# --- packed counts (discard pile): 4 bits per type ------------------------------------------

def pack(types: Iterable[int]) -> int:
    h = 0
    for t in types:
        h += 1 << (4 * t)
    return h


def unpack(h: int) -> list[int]:
    out: list[int] = []
    t = 0
    while h:
        c = h & 15
        if c:
            out.extend([t] * c)
        h >>= 4
        t += 1
    return out


# --- matching -------------------------------------------------------------------------------

def _values(t: int) -> range | tuple[int, ...]:
    if t == WILD_DOS:
        return (2,)
    return range(1, 11) if t % 11 == HASH_SLOT else (t % 11 + 1,)


def _colours(t: int) -> tuple[int, ...]:
    return (0, 1, 2, 3) if t == WILD_DOS else (t // 11,)


NO_MATCH, SINGLE, SINGLE_COLOUR, DOUBLE, DOUBLE_COLOUR = 0, 1, 2, 3, 4


def _kind(target: int, cards: Sequence[int]) -> int:
    vt, ct = set(_values(target)), set(_colours(target))
    if len(cards) == 1:
        (a,) = cards
        if not vt & set(_values(a)):
            return NO_MATCH
        return SINGLE_COLOUR if ct & set(_colours(a)) else SINGLE
    a, b = cards
    if not any(va + vb in vt for va in _values(a) for vb in _values(b)):
        return NO_MATCH
    return DOUBLE_COLOUR if ct & set(_colours(a)) & set(_colours(b)) else DOUBLE


# _TABLE[target * 46 * 45 + (b + 1) * 45 + a]: the match kind of card a (and b, -1 if single)
_STRIDE = N_TYPES * (N_TYPES + 1)
_TABLE = bytearray(N_TYPES * _STRIDE)
for _t in TYPES:
    for _a in TYPES:
        _TABLE[_t * _STRIDE + _a] = _kind(_t, (_a,))
        for _b in TYPES:
            if _b >= _a:
                _TABLE[_t * _STRIDE + (_b + 1) * N_TYPES + _a] = _kind(_t, (_a, _b))


def match_kind(target: int, cards: Sequence[int]) -> int:
    """NO_MATCH, SINGLE, SINGLE_COLOUR, DOUBLE or DOUBLE_COLOUR (cards in any order).

    Wild choices are the player's: a wild # takes the number the match needs, a wild DOS (in
    hand or in the row) the colour that earns the colour bonus when any colour can.
    """
    if len(cards) == 1:
        return _TABLE[target * _STRIDE + cards[0]]
    a, b = cards
    if a > b:
        a, b = b, a
    return _TABLE[target * _STRIDE + (b + 1) * N_TYPES + a]
