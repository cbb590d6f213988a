"""Deal commitments: how a table proves its cards were fixed before anyone saw one.

Each time an engine shuffles (a deal, a re-deal, a pile reshuffled: `Game.shuffles` changes),
the server draws a fresh secret salt of 128 bits and publishes the SHA-256 of the cards as
dealt (`Game.dealt`) with that salt. The salt makes the digest useless for testing guesses
of the cards; the record, once the table is over, reveals the salt and the cards, so anyone
can recompute the digest, and a replay of the record checks that the cards are the ones its
moves reach. docs/fair-play.md shows the check by hand.

The server (service.tables) makes commitments and `croupier replay` (bots.records) checks
them: both use this module, so they cannot disagree on the text that is hashed. Engines know
nothing of salts.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from typing import Any

from engines.contract import Game

SALT_BYTES = 16  # 128 bits, drawn from the operating system's CSPRNG


def new_salt() -> str:
    """A fresh secret salt: 32 hex digits."""
    return secrets.token_hex(SALT_BYTES)


def preimage(cards: str, salt: str) -> bytes:
    """The exact bytes hashed: the cards' text, a newline, `salt ` and the salt, a newline.

    >>> preimage("seat 0: 3 4\\nseat 1: 5", "00ff")
    b'seat 0: 3 4\\nseat 1: 5\\nsalt 00ff\\n'
    """
    return f"{cards}\nsalt {salt}\n".encode()


def digest(cards: str, salt: str) -> str:
    """The commitment: hex SHA-256 of `preimage(cards, salt)`."""
    return hashlib.sha256(preimage(cards, salt)).hexdigest()


def shuffled(game: Game, before: Any | None, after: Any) -> bool:
    """Whether `after` holds freshly shuffled cards to commit to: the first dealt state
    (`before` None), or a move that dealt, re-dealt or reshuffled. Nothing once the match
    is over (its last move may deal cards nobody will play)."""
    if before is not None and game.shuffles(after) == game.shuffles(before):
        return False  # a plain move: the cheap test first, every move of a table takes it
    return not game.is_over(after) and bool(game.dealt(after))


@dataclass(frozen=True)
class Sealed:
    """One commitment as the server keeps it: public (index, deal, version, sha256) and
    secret until the table is over (salt, cards)."""

    index: int
    deal: int
    version: int
    sha256: str
    salt: str
    cards: str

    @classmethod
    def seal(cls, game: Game, state: Any, index: int, version: int) -> Sealed:
        """A new commitment to the cards of `state`, with a fresh salt."""
        cards = game.dealt(state)
        salt = new_salt()
        return cls(index, game.deal_number(state), version, digest(cards, salt), salt, cards)

    def to_json(self) -> dict[str, Any]:
        return {"index": self.index, "deal": self.deal, "version": self.version,
                "sha256": self.sha256, "salt": self.salt, "cards": self.cards}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Sealed:
        return cls(int(data["index"]), int(data["deal"]), int(data["version"]),
                   str(data["sha256"]), str(data["salt"]), str(data["cards"]))
