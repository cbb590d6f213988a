"""Ranks, cards and packed rank counts.

Suits play no part in Dou Dizhu once the cards are dealt, so hands are multisets of ranks,
packed into one int: four bits per rank (counts 0..4), rank index 0 (the 3) in the lowest
nibble. Adding or removing cards is integer arithmetic and "is this combination in the hand"
is one subtraction with guard bits.

>>> pack([0, 0, 12]) == (2 << 0) | (1 << 48)
True
>>> ranks_text(pack(rank_of_char(c) for c in "T3R3"))
'33TR'
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

RANKS = "3456789TJQKA2BR"
"""Rank characters, weakest first. B: small (black) joker, R: big (red) joker."""
N_RANKS = 15
TWO, SMALL_JOKER, BIG_JOKER = 12, 13, 14
ACE = 11
SUITS = "shdc"

ONES = sum(1 << (4 * r) for r in range(N_RANKS))
"""Bit 0 of every nibble: a mask of rank positions."""
GUARD = ONES << 3
JOKERS = (1 << (4 * SMALL_JOKER)) | (1 << (4 * BIG_JOKER))
CHAIN_RANKS = sum(1 << (4 * r) for r in range(ACE + 1))
"""Ranks that may appear in chains and airplanes: 3 to A."""

FULL_DECK = sum(4 << (4 * r) for r in range(13)) | JOKERS
"""The 54-card deck as packed counts."""

_CHAR_TO_RANK = {c: i for i, c in enumerate(RANKS)}
_CHAR_TO_RANK.update({c.lower(): i for i, c in enumerate(RANKS)})


def rank_of_char(c: str) -> int:
    try:
        return _CHAR_TO_RANK[c]
    except KeyError:
        raise ValueError(f"{c!r} is not a rank; ranks are {' '.join(RANKS)}") from None


def pack(ranks: Iterable[int]) -> int:
    h = 0
    for r in ranks:
        h += 1 << (4 * r)
    return h


def count(h: int, r: int) -> int:
    return (h >> (4 * r)) & 15


def counts(h: int) -> list[int]:
    return [(h >> (4 * r)) & 15 for r in range(N_RANKS)]


def size(h: int) -> int:
    """Number of cards (counts below 8): popcounts of the three bit planes."""
    return (
        (h & ONES).bit_count() + 2 * ((h >> 1) & ONES).bit_count() + 4 * ((h >> 2) & ONES).bit_count()
    )


def contains(h: int, m: int) -> bool:
    """True if every rank count of `m` is at most that of `h` (counts below 8)."""
    return ((h | GUARD) - m) & GUARD == GUARD


@lru_cache(maxsize=1 << 16)
def ranks_text(h: int) -> str:
    """Ascending rank characters, e.g. '3345TTB'. Cached: views print hands on every move."""
    return "".join(RANKS[r] * ((h >> (4 * r)) & 15) for r in range(N_RANKS))


def parse_ranks(text: str) -> int:
    """Packed counts of a rank string such as '3345TTB' (any order); ValueError if impossible."""
    h = 0
    for c in text:
        if c.isspace():
            continue
        h += 1 << (4 * rank_of_char(c))
    if not contains(FULL_DECK, h):
        raise ValueError(f"{text!r} holds more cards of a rank than the deck has")
    return h


# --- individual cards (for the deal, the face-up card and the `deck` option) -----------
# Card ids 0..51: rank = id // 4, suit = id % 4; 52 = small joker, 53 = big joker.

def card_rank(card: int) -> int:
    return card // 4 if card < 52 else card - 52 + SMALL_JOKER


def card_text(card: int) -> str:
    if card >= 52:
        return RANKS[card - 52 + SMALL_JOKER]
    return RANKS[card // 4] + SUITS[card % 4]


def parse_card(text: str) -> int:
    t = text.strip()
    if t in ("B", "R"):
        return 52 if t == "B" else 53
    if len(t) == 3 and t[:2] == "10":
        t = "T" + t[2]
    if len(t) != 2 or t[0].upper() not in RANKS[:13] or t[1].lower() not in SUITS:
        raise ValueError(
            f"{text!r} is not a card: write rank then suit (s h d c), e.g. 7h, Ts; jokers B and R"
        )
    return RANKS.index(t[0].upper()) * 4 + SUITS.index(t[1].lower())


def parse_deck(text: str) -> list[int]:
    """A full deck order from card codes separated by spaces or commas, top card first."""
    cards = [parse_card(t) for t in text.replace(",", " ").split()]
    if len(cards) != 54 or len(set(cards)) != 54:
        missing = sorted(set(range(54)) - set(cards))
        dup = sorted({c for c in cards if cards.count(c) > 1})
        detail = []
        if missing:
            detail.append("missing " + " ".join(card_text(c) for c in missing))
        if dup:
            detail.append("repeated " + " ".join(card_text(c) for c in dup))
        raise ValueError(
            f"the deck must list each of the 54 cards once ({len(cards)} given; {'; '.join(detail)})"
        )
    return cards
