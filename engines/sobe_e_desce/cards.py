"""Cards of Sobe e Desce as ints and card sets as 40-bit masks.

Card id = suit * 10 + strength, strength 0 (the 2) to 9 (the ace), so within a suit a higher
id is a stronger card and "best card of a suit in a set" is one `bit_length`. Sets of cards
(hands, tricks, discards) are ints with bit `id` set: the hot path of the bots is bit logic.

>>> card_text(parse_card("7h")), strength_name(parse_card("7h"))
('7h', 'bisca')
>>> cards_text(parse_cards("Ac 2c 7h"))
'2c Ac 7h'
"""

from __future__ import annotations

from engines.cache import remember

RANKS = "23456QJK7A"
"""Rank characters, weakest first: 2 3 4 5 6 Q J K 7 (the bisca) A."""
SUITS = "cdhs"
"""Suit characters: clubs (tricks count double), diamonds, hearts (everybody plays), spades."""
SUIT_NAMES = ("clubs", "diamonds", "hearts", "spades")
CLUBS, DIAMONDS, HEARTS, SPADES = 0, 1, 2, 3
N_CARDS = 40
ACE = 9

FULL = (1 << N_CARDS) - 1
SUIT_MASK = tuple(((1 << 10) - 1) << (10 * s) for s in range(4))
ABOVE = tuple(SUIT_MASK[c // 10] & ~((2 << c) - 1) for c in range(N_CARDS))
"""ABOVE[c]: the cards of c's suit stronger than c."""
BIT = tuple(1 << c for c in range(N_CARDS))

CARD_TEXT = tuple(RANKS[c % 10] + SUITS[c // 10] for c in range(N_CARDS))
_TEXT_TO_CARD = {t: c for c, t in enumerate(CARD_TEXT)}
_TEXT_TO_CARD.update({t.upper(): c for c, t in enumerate(CARD_TEXT)})
_TEXT_TO_CARD.update({t[0].upper() + t[1]: c for c, t in enumerate(CARD_TEXT)})
_TEXT_TO_CARD.update({t[0].lower() + t[1]: c for c, t in enumerate(CARD_TEXT)})
_TEXT_TO_CARD.update({t[0] + t[1].upper(): c for c, t in enumerate(CARD_TEXT)})
_TEXT_TO_CARD.update({t[0].lower() + t[1].upper(): c for c, t in enumerate(CARD_TEXT)})


def suit_of(card: int) -> int:
    return card // 10


def card_text(card: int) -> str:
    return CARD_TEXT[card]


def strength_name(card: int) -> str:
    return ("2", "3", "4", "5", "6", "queen", "jack", "king", "bisca", "ace")[card % 10]


def parse_card(text: str) -> int:
    """A card from 'rank suit' text such as '7h' or 'Qc'; ValueError otherwise."""
    card = _TEXT_TO_CARD.get(text.strip())
    if card is None:
        raise ValueError(
            f"{text!r} is not a card: write the rank ({' '.join(RANKS)}) then the suit "
            f"({' '.join(SUITS)}), e.g. 7h, Ac, Qd"
        )
    return card


def cards_of(mask: int) -> list[int]:
    """Card ids of a set, ascending."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


_TEXT_CACHE: dict[int, str] = {}


def cards_text(mask: int) -> str:
    """A set as text, ascending ids (suit by suit, weakest first), e.g. '2c Ac 7h'."""
    text = _TEXT_CACHE.get(mask)
    if text is None:
        text = " ".join(CARD_TEXT[c] for c in cards_of(mask))
        remember(_TEXT_CACHE, 100_000, mask, text)
    return text


def parse_cards(text: str) -> int:
    """A set of distinct cards from codes separated by spaces or commas; ValueError if repeated."""
    mask = 0
    for t in text.replace(",", " ").split():
        c = parse_card(t)
        if mask >> c & 1:
            raise ValueError(f"card {CARD_TEXT[c]} is listed twice")
        mask |= 1 << c
    return mask


def parse_order(text: str) -> tuple[int, ...]:
    """Distinct cards in the order written (stock, deal order)."""
    out = [parse_card(t) for t in text.replace(",", " ").split()]
    if len(set(out)) != len(out):
        raise ValueError("a card is listed twice")
    return tuple(out)


def parse_deck(text: str) -> tuple[int, ...]:
    """A full 40-card order, top first; ValueError naming missing or repeated cards."""
    cards = [parse_card(t) for t in text.replace(",", " ").split()]
    if len(cards) != N_CARDS or len(set(cards)) != N_CARDS:
        missing = sorted(set(range(N_CARDS)) - set(cards))
        dup = sorted({c for c in cards if cards.count(c) > 1})
        detail = []
        if missing:
            detail.append("missing " + " ".join(CARD_TEXT[c] for c in missing))
        if dup:
            detail.append("repeated " + " ".join(CARD_TEXT[c] for c in dup))
        raise ValueError(
            f"the deck must list each of the 40 cards once ({len(cards)} given; "
            f"{'; '.join(detail)})"
        )
    return tuple(cards)


def parse_suit(text: str) -> int:
    t = text.strip().lower()
    if len(t) == 1 and t in SUITS:
        return SUITS.index(t)
    if t in SUIT_NAMES:
        return SUIT_NAMES.index(t)
    raise ValueError(f"{text!r} is not a suit: write c, d, h or s (clubs, diamonds, hearts, spades)")
