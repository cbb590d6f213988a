"""What reading the deal from Bistro's unshuffled deck is worth: `python -m bench.bistro_knowledge`.

In Doppelkopf's Bistro mode every deal after the first is dealt from the previous deal's
tricks, cut once, and the view carries that uncut deck: the search levels' worlds are then
(nearly always) the true deal. This plays a level against the same level whose views have the
uncut deck removed (so its worlds are dealt uniformly, as before the deck was in the view),
in the ladder's duplicate format over two-deal Bistro sessions, and prints the ladder's row:
the mean session-point difference per seat-deal with its 95% interval. The first deal of each
session is alike for both (no uncut deck yet); the difference comes from the second.

    python -m bench.bistro_knowledge --level easy --deals 30 --results bench/runs/bistro.jsonl
"""

from __future__ import annotations

import argparse
import dataclasses
import random
from typing import Any

from bench import strength
from bots.levels import LEVELS, Level, get_level
from engines.contract import Game


@dataclasses.dataclass(frozen=True)
class WithoutUncutDeck(Level):
    """A level whose views lose the uncut deck before it decides: uniform worlds in Bistro."""

    def choose(self, game: Game, view: Any, seat: int, rng: random.Random) -> tuple[Any, Any]:
        if getattr(view, "uncut_deck", ""):
            blind = type(view)()
            blind.CopyFrom(view)
            blind.ClearField("uncut_deck")
            view = blind
        return super().choose(game, view, seat, rng)


def register(level: str) -> str:
    """Adds the blind twin of `level` to the levels (before the worker processes fork) and
    answers its name."""
    base = get_level(level)
    name = f"{level}-uniform"
    LEVELS[name] = WithoutUncutDeck(**{**dataclasses.asdict(base), "name": name})
    return name


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.bistro_knowledge", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--level", default="easy")
    parser.add_argument("--deals", type=int, default=30)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--seed", default="bistro")
    parser.add_argument("--results", default="", metavar="FILE", help=strength.RESULTS_HELP)
    args = parser.parse_args(argv)
    blind = register(args.level)
    strength.main(["ladder", "doppelkopf", "--option", "bistro=true", "--option", "deals=2",
                   "--steps", f"{args.level}>{blind}", "--deals", str(args.deals),
                   "--jobs", str(args.jobs), "--seed", args.seed,
                   *(["--results", args.results] if args.results else [])])


if __name__ == "__main__":
    main()
