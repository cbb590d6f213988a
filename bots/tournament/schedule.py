"""What a tournament plays: every deal once per seating of the entrants, on the same cards.

The cards of a deal are fixed through each engine's `deck` option (and the dealer or opener
option) by the game's `GameInfo.duplicate_deal`, drawn from the tournament seed, so every
seating of a deal gets the same hands: a bot's luck of the cards cancels out (duplicate
format). Where the game has one, a single-deal
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
from engines.contract import canonical_options
from engines.registry import get_game


def deal_options(
    game: str, players: int, options: dict[str, Any], seed: str, deal: int
) -> dict[str, Any]:
    """The table options of deal `deal`: the same for every seating of that deal. A single-deal
    match (`GameInfo.one_deal`: deals after the first would be shuffled from each table's own
    secret seed, different for every seating) on the cards the game's `duplicate_deal` fixes,
    drawn from the tournament seed; options given explicitly override the one-deal ones."""
    info = get_game(game).info
    if info.duplicate_deal is None:
        raise ValueError(f"no way to fix the cards of {game!r}: duplicate format needs its deck")
    rng = random.Random(f"{seed}/deal/{deal}")
    out = {**info.one_deal, **canonical_options(info.options, options)}
    return info.duplicate_deal(players, out, rng)


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
