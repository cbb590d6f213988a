"""Doppelkopf moves and their notation: cards, reservations and announcements.

Every move is interned (one object per text), so legal-move lists are shared tuples and
equality is identity. The notation (seeds/doppelkopf.md):

>>> Move("Qc"), Move("solo queens"), Move("re no 90")
(Move('Qc'), Move('solo queens'), Move('re no 90'))
>>> parse_move("10H") is Move("Th")
True
"""

from __future__ import annotations

from engines.doppelkopf.cards import N_KINDS, TEXT, parse_card
from engines.interned import InternedMove

# Move kinds.
CARD, HEALTHY, RESERVATION, SOLO, MARRIAGE, ANNOUNCE, PASS = range(7)

# Contracts (what a deal is played as). SILENT is never public: a healthy deal whose one
# seat holds both club queens is a silent marriage, scored as a solo.
NORMAL, MARRIAGE_GAME = 0, 1
SOLO_DIAMONDS, SOLO_HEARTS, SOLO_SPADES, SOLO_CLUBS = 2, 3, 4, 5
SOLO_QUEENS, SOLO_JACKS, SOLO_ACES = 6, 7, 8
PURE_CLUBS, PURE_SPADES, PURE_HEARTS, PURE_DIAMONDS = 9, 10, 11, 12
CONTRACT_NAMES = (
    "normal", "marriage", "diamonds", "hearts", "spades", "clubs", "queens", "jacks", "aces",
    "pure clubs", "pure spades", "pure hearts", "pure diamonds",
)
SOLOS = tuple(range(SOLO_DIAMONDS, PURE_DIAMONDS + 1))
PURE_SOLOS = (PURE_CLUBS, PURE_SPADES, PURE_HEARTS, PURE_DIAMONDS)

LEVEL_WORDS = ("", "", "no 90", "no 60", "no 30", "schwarz")
PARTY_WORDS = ("kontra", "re")  # party 1 is Re

_INTERN: dict[str, Move] = {}


class Move(InternedMove):
    """One move. `kind` says which; `card` (a kind 0-23) for plays, `contract` for solos,
    `party` (1 Re, 0 Kontra) and `level` (1 re/kontra, 2 no 90 ... 5 schwarz) for
    announcements. Build from notation: `Move("Th")`; `str(move)` is the canonical text."""

    __slots__ = ("kind", "card", "contract", "party", "level", "text")

    kind: int
    card: int
    contract: int
    party: int
    level: int
    text: str


def _make(text: str, kind: int, card: int = -1, contract: int = -1, party: int = -1,
          level: int = 0) -> Move:
    m = object.__new__(Move)
    m.kind, m.card, m.contract, m.party, m.level, m.text = kind, card, contract, party, level, text
    _INTERN[text] = m
    return m


CARD_MOVES = tuple(_make(TEXT[k], CARD, card=k) for k in range(N_KINDS))
HEALTHY_MOVE = _make("healthy", HEALTHY)
RESERVATION_MOVE = _make("reservation", RESERVATION)
MARRIAGE_MOVE = _make("marriage", MARRIAGE)
PASS_MOVE = _make("pass", PASS)
SOLO_MOVES = {c: _make(f"solo {CONTRACT_NAMES[c]}", SOLO, contract=c) for c in SOLOS}


def solo_moves(bistro: bool) -> tuple[Move, ...]:
    """The solos a player may declare: the pure suit solos only with the `bistro` option."""
    return _SOLOS_WITH_PURE if bistro else _SOLOS_WITHOUT_PURE
ANNOUNCE_MOVES = {
    (party, level): _make(
        PARTY_WORDS[party] + (" " + LEVEL_WORDS[level] if level > 1 else ""), ANNOUNCE,
        party=party, level=level,
    )
    for party in (0, 1)
    for level in range(1, 6)
}


def parse_move(text: str) -> Move:
    """A move from its notation (case and spacing forgiven); ValueError saying what is wrong."""
    if not isinstance(text, str):
        raise ValueError(f"a move is text, not {type(text).__name__}")
    norm = " ".join(text.lower().split())
    move = _INTERN.get(norm)
    if move is not None:
        return move
    if norm.startswith("solo "):
        names = ", ".join(CONTRACT_NAMES[c] for c in SOLOS)
        raise ValueError(f"unknown solo {norm[5:]!r}: solos are {names}")
    if " " not in norm and 2 <= len(norm) <= 3:
        try:
            return CARD_MOVES[parse_card(norm)]
        except ValueError:
            pass
    if norm.startswith(("re", "kontra")):
        raise ValueError(
            f"{text!r} is not an announcement: re, kontra, then optionally no 90, no 60, "
            "no 30 or schwarz ('re no 60', 'kontra schwarz')"
        )
    raise ValueError(
        f"{text!r} is not a Doppelkopf move: a card ('Qc', 'Th', '9d'), healthy, reservation, "
        "marriage, 'solo <kind>', an announcement ('re', 'kontra no 90') or pass"
    )


# Card texts are canonical in their mixed case: register the mixed-case spelling lookups.
for _m in CARD_MOVES:
    _INTERN.setdefault(_m.text.lower(), _m)


_SOLOS_WITH_PURE = tuple(SOLO_MOVES[c] for c in SOLOS)
_SOLOS_WITHOUT_PURE = tuple(SOLO_MOVES[c] for c in SOLOS if c not in PURE_SOLOS)


Move._interned = _INTERN
Move._parse = staticmethod(parse_move)
