"""Dobro cards: fourteen kinds, card sets packed as counts in one int.

Kinds 0..10 are the numbered values 2..12, then the joker, the skip and the reverse card.
Cards of one kind are interchangeable, so a hand is a multiset of kinds packed four bits per
kind (counts 0..6 fit): adding, removing and "does the hand hold these" are integer arithmetic.

>>> cards_text(parse_cards("12 J 2 2 S"))
'2 2 12 J S'
>>> size(parse_cards("2 2 12 J S"))
5
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

N_KINDS = 14
JOKER, SKIP, REVERSE = 11, 12, 13
NUMBERED = 11
"""Kinds 0..10: the numbered cards, value = kind + 2."""
CODES = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "J", "S", "R")
"""Card codes as written in hands and the `deck` option: values, J joker, S skip, R reverse."""
KIND_NAMES = tuple(f"a {c}" for c in CODES[:NUMBERED]) + ("a joker", "a skip card", "a reverse card")

COUNTS = (5, 6, 6, 6, 6, 5, 4, 3, 3, 3, 3, 3, 2, 2)
"""Copies of each kind in the box: 50 numbered cards, 3 jokers, 2 skip, 2 reverse."""

ONES = sum(1 << (4 * k) for k in range(N_KINDS))
GUARD = ONES << 3
NUMBERED_MASK = sum(15 << (4 * k) for k in range(NUMBERED + 1))
"""Nibbles of the cards an opener may lead with: numbered cards and jokers."""


def unit(kind: int) -> int:
    return 1 << (4 * kind)


_BOX = sum(c << (4 * k) for k, c in enumerate(COUNTS))
_DECKS = {n: _BOX - (COUNTS[REVERSE] << (4 * REVERSE) if n == 2 else 0) for n in range(2, 7)}


def full_deck(players: int) -> int:
    """The deck used by `players` players: two players leave the reverse cards out."""
    return _DECKS[players]


def deck_list(players: int) -> list[int]:
    """The deck as a list of kinds, in kind order (shuffled by the caller)."""
    deck = full_deck(players)
    return [k for k in range(N_KINDS) for _ in range(count(deck, k))]


def count(h: int, k: int) -> int:
    return (h >> (4 * k)) & 15


def counts(h: int) -> list[int]:
    return [(h >> (4 * k)) & 15 for k in range(N_KINDS)]


def size(h: int) -> int:
    """Number of cards (counts below 8): popcounts of the three bit planes."""
    return (h & ONES).bit_count() + 2 * ((h >> 1) & ONES).bit_count() + 4 * (
        (h >> 2) & ONES
    ).bit_count()


def contains(h: int, m: int) -> bool:
    """True if every count of `m` is at most that of `h` (counts below 8)."""
    return ((h | GUARD) - m) & GUARD == GUARD


def pack(kinds: Iterable[int]) -> int:
    h = 0
    for k in kinds:
        h += 1 << (4 * k)
    return h


@lru_cache(maxsize=1 << 16)
def cards_text(h: int) -> str:
    """Codes in kind order separated by spaces, e.g. '2 5 5 12 J S'. Cached: views print it."""
    return " ".join(CODES[k] for k in range(N_KINDS) for _ in range((h >> (4 * k)) & 15))


_CODE_TO_KIND = {c: k for k, c in enumerate(CODES)}
_CODE_TO_KIND.update({"j": JOKER, "s": SKIP, "r": REVERSE})


def kind_of_code(code: str) -> int:
    try:
        return _CODE_TO_KIND[code]
    except KeyError:
        raise ValueError(
            f"{code!r} is not a card: values 2 to 12, J (joker), S (skip), R (reverse)"
        ) from None


def parse_list(text: str) -> list[int]:
    """Kinds of codes separated by spaces or commas, in the order given."""
    return [kind_of_code(c) for c in text.replace(",", " ").split()]


def parse_cards(text: str) -> int:
    """Packed counts of a card list such as '2 5 5 12 J S'; ValueError if impossible."""
    h = pack(parse_list(text))
    if not contains(_BOX, h):
        raise ValueError(f"{text!r} holds more cards of a kind than the box has")
    return h


def pile_text(pile: Iterable[int]) -> str:
    return " ".join(CODES[k] for k in pile)


def parse_deck(text: str, players: int) -> list[int]:
    """A full deck order for `players` players, top card first; ValueError saying what is off."""
    kinds = parse_list(text)
    want = full_deck(players)
    got = pack(kinds) if all(0 <= k < N_KINDS for k in kinds) else 0
    if len(kinds) != size(want) or got != want:
        have, need = counts(got), counts(want)
        detail = []
        for k in range(N_KINDS):
            if have[k] != need[k]:
                detail.append(f"{CODES[k]}: {have[k]} instead of {need[k]}")
        raise ValueError(
            f"the deck for {players} players must list its {size(want)} cards once each "
            f"({len(kinds)} given; {'; '.join(detail) or 'counts differ'})"
        )
    return kinds
