"""What a tournament plays: every deal once per seating of the entrants, on the same cards.

The cards of a deal are fixed through each engine's `deck` option (and the dealer or opener
option), drawn from the tournament seed, so every seating of a deal gets the same hands: a
bot's luck of the cards cancels out (duplicate format). Where the game has one, a single-deal
match option keeps the whole table on those cards.
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bots.arena import seatings
from bots.levels import LEVELS
from engines.dobro import cards as dobro_cards
from engines.doppelkopf import cards as doko_cards
from engines.dos import cards as dos_cards
from engines.dou_dizhu import cards as dd_cards
from engines.sobe_e_desce import cards as sd_cards

# the option that makes a table one deal long, per game (deals after the first would be
# shuffled from each table's own secret seed, different for every seating)
SINGLE_DEAL: dict[str, dict[str, Any]] = {
    "dou_dizhu": {"deals": 1},
    "doppelkopf": {"deals": 1},
    "dobro": {"rounds": 1},
    "sobe_e_desce": {"max_deals": 1},
    "dos": {"target": 1},  # any round scores at least a point: the first round ends the match
}


def _deck(game: str, players: int, options: dict[str, Any], rng: random.Random) -> list[str]:
    """Every card of the game's deck once (as its `deck` option lists them), shuffled."""
    if game == "dou_dizhu":
        deck = [dd_cards.card_text(c) for c in range(54)]
    elif game == "doppelkopf":
        kinds = [k for k in range(doko_cards.N_KINDS)
                 if not (options.get("bistro") and k in doko_cards.NINES)]
        deck = [doko_cards.TEXT[k] for k in kinds for _ in range(2)]
    elif game == "dobro":
        deck = [dobro_cards.CODES[k] for k in dobro_cards.deck_list(players)]
    elif game == "sobe_e_desce":
        deck = list(sd_cards.CARD_TEXT)
    elif game == "dos":
        deck = dos_cards.codes(dos_cards.full_deck()).split()
    else:
        raise ValueError(f"no way to fix the cards of {game!r}: duplicate format needs its deck")
    rng.shuffle(deck)
    return deck


def deal_options(
    game: str, players: int, options: dict[str, Any], seed: str, deal: int
) -> dict[str, Any]:
    """The table options of deal `deal`: the same for every seating of that deal."""
    rng = random.Random(f"{seed}/deal/{deal}")
    out = {**SINGLE_DEAL.get(game, {}), **options}
    out["deck"] = " ".join(_deck(game, players, out, rng))
    if game == "dou_dizhu":
        out.setdefault("dealer", rng.randrange(players))
        out.setdefault("face_up", rng.randrange(51))
    elif game in ("doppelkopf", "sobe_e_desce", "dos"):
        out.setdefault("dealer", rng.randrange(players))
    elif game == "dobro":
        out.setdefault("opener", rng.randrange(players))
    return out


@dataclass(frozen=True)
class Match:
    """One table of the tournament: a deal played with one seating of the entrants."""

    deal: int
    seating: tuple[str, ...]

    @property
    def key(self) -> str:
        return f"{self.deal}:{','.join(self.seating)}"


def parse_shard(text: str) -> tuple[int, int]:
    """'i/n' (0 <= i < n) -> (i, n)."""
    index, sep, count = text.partition("/")
    try:
        i, n = int(index), int(count)
    except ValueError:
        raise ValueError(f"--shard must read i/n, e.g. 0/4, not {text!r}") from None
    if not sep or n < 1 or not 0 <= i < n:
        raise ValueError(f"--shard must read i/n with 0 <= i < n, not {text!r}")
    return i, n


def add_seating_flags(p: argparse.ArgumentParser) -> None:
    """--filler and --allow-shared-seats, for every command that seats entrants (`Seating`)."""
    p.add_argument("--filler", default="", metavar="LEVEL",
                   help="with fewer entrants than seats: the built-in level that takes the seats "
                   "left over (no outside entrant holds two seats of one table)")
    p.add_argument("--allow-shared-seats", action="store_true",
                   help="with fewer entrants than seats: let entrants hold several seats of one "
                   "table (an outside program holding two seats sees both hands)")


@dataclass(frozen=True)
class Seating:
    """How a tournament's entrants fill a table with more seats than entrants.

    By default no outside entrant holds two seats of one table: a program holding two seats
    (one SDK process, or a program shared between them) would see both hands, a partner's
    included. The seats beyond the entrants go to `filler`, a built-in level the runner names
    (bot workers play each of its seats on that seat's own view); with `shared` the entrants
    take them (every seating in which each entrant plays at least once), as the report says.
    Built-in levels may always hold several seats: the workers play each on its own view.
    """

    filler: str = ""
    shared: bool = False

    def participants(self, entrants: Sequence[str]) -> list[str]:
        """Who plays: the entrants, and the filler when it is not one of them."""
        extra = [self.filler] if self.filler and self.filler not in entrants else []
        return [*entrants, *extra]

    def arrangements(self, entrants: Sequence[str], players: int) -> list[tuple[str, ...]]:
        """Every seating of one deal; ValueError saying what to do when an outside entrant
        would hold two seats of a table."""
        if len(entrants) > players:
            raise ValueError(f"{len(entrants)} entrants for {players} seats")
        if self.filler and self.filler not in LEVELS:
            raise ValueError(f"--filler {self.filler!r} is no built-in level ({', '.join(LEVELS)}): "
                             "the seats left over are filled by bot workers")
        if self.filler and self.shared:
            raise ValueError("give one of --filler (seats left over go to a built-in level) "
                             "and --allow-shared-seats (entrants take them)")
        spare = players - len(entrants)
        if self.filler and spare:
            return seatings([*entrants, *[self.filler] * spare], players)
        outside = [e for e in entrants if e not in LEVELS]
        if spare and outside and not self.shared:
            raise ValueError(
                f"{len(entrants)} entrants for {players} seats: an entrant would hold two "
                f"seats of one table, and an outside one ({', '.join(outside)}) would then see "
                "both hands, a partner's included. Name a built-in level to take the seats "
                "left over (--filler random), or allow it (--allow-shared-seats)"
            )
        return seatings(list(entrants), players)

    def note(self, entrants: Sequence[str], players: int) -> str:
        """What the report says about the seating ('' when every seat is an entrant's)."""
        spare = players - len(entrants)
        if spare <= 0:
            return ""
        if self.filler:
            return (f"{players} seats, {len(entrants)} entrants: the {spare} seat(s) left over "
                    f"at each table were played by the built-in level {self.filler} (--filler).")
        if self.shared:
            return (f"{players} seats, {len(entrants)} entrants: entrants held several seats of "
                    "one table (--allow-shared-seats); a program holding two seats could see "
                    "both hands.")
        return (f"{players} seats, {len(entrants)} entrants: built-in levels held the seats "
                "left over, each seat played on its own view.")


def plan(entrants: list[str], players: int, deals: int, shard: tuple[int, int] = (0, 1),
         seating: Seating = Seating()) -> list[Match]:
    """The matches of one shard: whole deals (every seating of a deal stays in one shard, so
    each shard's results are duplicate on their own), deal d going to shard d mod n."""
    i, n = shard
    arrangements = seating.arrangements(entrants, players)
    return [Match(d, s) for d in range(deals) if d % n == i for s in arrangements]
