"""How long each bot level makes a table wait: `python -m bench.think_time`.

Frontends show a thinking bot and operators size bot workers by its decisions per second, so
this times `Level.choose` (the worker's own call) on positions where the acting seat has a
choice, taken from games the heuristic player plays in every seat: the positions a table
meets, not random play's. One process, so one core. Decisions that take no search (a move
that wins the deal outright) count as the instant they are.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from typing import Any

import numpy as np

from bots.heuristics import get_heuristic
from bots.levels import LEVELS, get_level
from engines.registry import GAMES, get_game
from tests.engine_kit import SETUPS

SHARE = 0.25
"""Chance that a position with a choice is kept: spreads the positions over whole games."""


def positions(name: str, count: int) -> list[tuple[Any, int]]:
    """`count` (view, seat) pairs with more than one legal move, from heuristic self-play."""
    game, setup = get_game(name), SETUPS[name][0]
    policy = get_heuristic(name)
    rng = random.Random(f"think/{name}")
    found: list[tuple[Any, int]] = []
    g = 0
    while len(found) < count:
        state = game.new_game(setup.players, setup.options, f"think/{name}/{g}")
        g += 1
        while not game.is_over(state) and len(found) < count:
            seat = sorted(game.to_act(state))[0]
            legal = list(game.legal_moves(state, seat))
            if len(legal) > 1 and rng.random() < SHARE:
                found.append((game.view(state, seat), seat))
            state = game.apply(state, seat, policy(game, state, seat, legal, rng))
    return found


def measure(name: str, levels: list[str], count: int) -> list[str]:
    """One table row per level: decisions, median / p90 / max milliseconds, mean iterations."""
    game, players = get_game(name), SETUPS[name][0].players
    spots = positions(name, count)
    rows = []
    for level_name in levels:
        level = get_level(level_name)
        millis, iterations = [], []
        for i, (view, seat) in enumerate(spots):
            rng = random.Random(f"think/{name}/{level_name}/{i}")
            start = time.perf_counter()
            _, stats = level.choose(game, view, seat, rng)
            millis.append((time.perf_counter() - start) * 1000.0)
            iterations.append(stats.iterations if stats else 0)
        p90 = float(np.percentile(millis, 90, method="inverted_cdf"))  # nearest rank
        rows.append(
            f"| {name} | {players} | {level_name} | {len(spots)} | "
            f"{statistics.median(millis):,.1f} | {p90:,.1f} | {max(millis):,.1f} | "
            f"{statistics.fmean(iterations):,.0f} |")
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.think_time", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", default=",".join(sorted(GAMES)))
    parser.add_argument("--levels", default=",".join(LEVELS))
    parser.add_argument("--positions", type=int, default=20)
    args = parser.parse_args(argv)
    levels = args.levels.split(",")
    for level in levels:
        get_level(level)  # an unknown name fails before any game is played
    print("| game | players | level | decisions | median ms | p90 ms | max ms | mean iterations |")
    print("|---|---:|---|---:|---:|---:|---:|---:|")
    for name in args.games.split(","):
        for row in measure(name, levels, args.positions):
            print(row, flush=True)


if __name__ == "__main__":
    main()
