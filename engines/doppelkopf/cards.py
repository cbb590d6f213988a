"""Doppelkopf cards, hands as packed counts, and the trump orders of every contract.

A card kind is suit * 6 + rank (suits clubs, spades, hearts, diamonds; ranks A T K Q J 9).
Every kind exists twice, so a hand is an int holding a 2-bit count per kind (bits 2k, 2k+1):
adding and removing cards is integer arithmetic, and "which kinds are present" is one mask.
Each contract has a layout: for every kind its following suit (0-3, or 4 for trump) and its
power; the trick winner and the cards a seat may follow with are table look-ups.
"""

from __future__ import annotations

SUITS = "cshd"
SUIT_NAMES = ("clubs", "spades", "hearts", "diamonds")
RANKS = "ATKQJ9"
RANK_POINTS = (11, 10, 4, 3, 2, 0)
CLUBS, SPADES, HEARTS, DIAMONDS = 0, 1, 2, 3
ACE, TEN, KING, QUEEN, JACK, NINE = 0, 1, 2, 3, 4, 5
TRUMP = 4
N_KINDS = 24
ONES = sum(1 << (2 * k) for k in range(N_KINDS))  # bit 2k for every kind


def kind(suit: int, rank: int) -> int:
    return suit * 6 + rank


def suit_of(k: int) -> int:
    return k // 6


def rank_of(k: int) -> int:
    return k % 6


POINTS = tuple(RANK_POINTS[rank_of(k)] for k in range(N_KINDS))
TEXT = tuple(RANKS[rank_of(k)] + SUITS[suit_of(k)] for k in range(N_KINDS))
_BY_TEXT = {t.lower(): k for k, t in enumerate(TEXT)}
_BY_TEXT.update({"10" + SUITS[suit_of(k)]: k for k in range(N_KINDS) if rank_of(k) == TEN})

CLUB_QUEEN = kind(CLUBS, QUEEN)
CLUB_JACK = kind(CLUBS, JACK)
DIAMOND_ACE = kind(DIAMONDS, ACE)
HEART_TEN = kind(HEARTS, TEN)
NINES = tuple(kind(s, NINE) for s in range(4))

FULL_48 = sum(2 << (2 * k) for k in range(N_KINDS))
FULL_40 = FULL_48 - sum(2 << (2 * k) for k in NINES)


def parse_card(text: str) -> int:
    """A kind from 'Qc', 'Th' or '10h' (case-insensitive); ValueError otherwise."""
    k = _BY_TEXT.get(text.strip().lower())
    if k is None:
        raise ValueError(
            f"{text!r} is not a card: rank A T K Q J 9 then suit c s h d, e.g. 'Qc', 'Th'"
        )
    return k


def count(hand: int, k: int) -> int:
    return (hand >> (2 * k)) & 3


def present(hand: int) -> int:
    """Bit 2k set where the hand holds at least one card of kind k."""
    return (hand | (hand >> 1)) & ONES


def size(hand: int) -> int:
    return sum((hand >> (2 * k)) & 3 for k in range(N_KINDS))


def kinds_of(mask: int) -> list[int]:
    """The kinds whose bit 2k is set in a presence mask."""
    out = []
    while mask:
        low = mask & -mask
        out.append((low.bit_length() - 1) >> 1)
        mask ^= low
    return out


def cards_of(hand: int) -> list[int]:
    """Every card of a packed hand, one entry per copy."""
    return [k for k in range(N_KINDS) for _ in range((hand >> (2 * k)) & 3)]


def pack(cards) -> int:
    hand = 0
    for k in cards:
        hand += 1 << (2 * k)
    return hand


def points(hand: int) -> int:
    return sum(POINTS[k] * ((hand >> (2 * k)) & 3) for k in range(N_KINDS))


# --- layouts (trump orders) -------------------------------------------------------------
L_NORMAL, L_SWINES, L_HEARTS, L_SPADES, L_CLUBS = 0, 1, 2, 3, 4
L_QUEENS, L_JACKS, L_MEATLESS = 5, 6, 7
L_PURE = (8, 9, 10, 11)  # pure colour solos by suit (clubs, spades, hearts, diamonds)
N_LAYOUTS = 12


def _trumps(layout: int) -> list[int]:
    """Trump kinds, strongest first."""
    queens = [kind(s, QUEEN) for s in range(4)]
    jacks = [kind(s, JACK) for s in range(4)]
    if layout in (L_NORMAL, L_SWINES, L_HEARTS, L_SPADES, L_CLUBS):
        suit = {L_NORMAL: DIAMONDS, L_SWINES: DIAMONDS, L_HEARTS: HEARTS, L_SPADES: SPADES,
                L_CLUBS: CLUBS}[layout]
        low = [kind(suit, r) for r in (ACE, TEN, KING, NINE) if kind(suit, r) != HEART_TEN]
        order = [HEART_TEN] + queens + jacks + low
        if layout == L_SWINES:
            order.remove(DIAMOND_ACE)
            order.insert(0, DIAMOND_ACE)
        return order
    if layout == L_QUEENS:
        return queens
    if layout == L_JACKS:
        return jacks
    if layout == L_MEATLESS:
        return []
    suit = L_PURE.index(layout)
    return [kind(suit, r) for r in (ACE, TEN, KING, QUEEN, JACK, NINE)]


def _layout(layout: int) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    trumps = _trumps(layout)
    follow = [TRUMP if k in trumps else suit_of(k) for k in range(N_KINDS)]
    power = [0] * N_KINDS
    for k in range(N_KINDS):
        if k in trumps:
            power[k] = 100 + len(trumps) - trumps.index(k)
        else:
            power[k] = 10 - rank_of(k)  # A T K Q J 9 within a side suit
    masks = [0] * 5
    for k in range(N_KINDS):
        masks[follow[k]] |= 1 << (2 * k)
    return tuple(follow), tuple(power), tuple(masks)


LAYOUTS = tuple(_layout(x) for x in range(N_LAYOUTS))
FOLLOW = tuple(x[0] for x in LAYOUTS)   # FOLLOW[layout][kind] -> 0-3 or TRUMP
POWER = tuple(x[1] for x in LAYOUTS)    # POWER[layout][kind]
MASKS = tuple(x[2] for x in LAYOUTS)    # MASKS[layout][suit or TRUMP] -> presence mask
TRUMP_ORDER = tuple(tuple(_trumps(x)) for x in range(N_LAYOUTS))


def strength(layout: int, led: int, k: int) -> int:
    """How strongly card k competes in a trick whose led suit is `led` (-1: cannot win)."""
    f = FOLLOW[layout][k]
    if f == TRUMP:
        return POWER[layout][k]
    return POWER[layout][k] if f == led else -1


# STRENGTH[layout][led][kind], led in 0..4
STRENGTH = tuple(
    tuple(tuple(strength(x, led, k) for k in range(N_KINDS)) for led in range(5))
    for x in range(N_LAYOUTS)
)


def trick_winner(layout: int, cards: tuple[int, ...]) -> int:
    """Index in `cards` (play order) of the winning card; identical cards: the first wins."""
    row = STRENGTH[layout][FOLLOW[layout][cards[0]]]
    best, best_i = row[cards[0]], 0
    for i in range(1, len(cards)):
        v = row[cards[i]]
        if v > best:
            best, best_i = v, i
    return best_i


def sort_key(layout: int, k: int) -> tuple[int, int]:
    """Trumps first (strongest first), then clubs, spades, hearts, diamonds, high to low."""
    f = FOLLOW[layout][k]
    return (0 if f == TRUMP else 1 + f, -POWER[layout][k])


def hand_text(hand: int, layout: int = L_NORMAL) -> str:
    """Cards of a packed hand, sorted as a player holds them: 'Th Qc Qc Ad As 9s'."""
    cards = sorted(cards_of(hand), key=lambda k: sort_key(layout, k))
    return " ".join(TEXT[k] for k in cards)


def parse_hand(text: str) -> int:
    hand = 0
    for t in text.replace(",", " ").split():
        k = parse_card(t)
        if count(hand, k) >= 2:
            raise ValueError(f"more than two {TEXT[k]} in {text!r}")
        hand += 1 << (2 * k)
    return hand
