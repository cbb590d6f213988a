"""How much nearer the truth weighted worlds are: `python -m bench.inference`.

`bots.inference` weighs sampled worlds by how well they explain the other seats' moves. This
measures what that buys before any search: on positions from games a level plays in every
seat (by default `easy`, a search, so not the model itself), the share of the other seats'
hidden cards that a world puts in the right hand, averaged over a pool of uniform worlds
and over the same pool weighted with each `epsilon` (1 is the uniform pool itself), with the
pool's effective size. A hand's cards are read from its view's `hand` text.
"""

from __future__ import annotations

import argparse
import random
import statistics
from collections import Counter
from typing import Any

from bots.heuristics import get_explains
from bots.inference import surprises
from bots.levels import get_level
from engines.registry import get_game
from tests.engine_kit import SETUPS

SHARE = 0.25
"""Chance that a position with a choice is kept: spreads the positions over whole deals."""


def _cards(text: str) -> Counter[str]:
    """A hand's cards from its text: codes separated by spaces, or one character each
    (Dou Dizhu's ranks, e.g. `3399TB`)."""
    return Counter(text.split() if " " in text else text)


def hidden_overlap(game: Any, truth: Any, world: Any, seat: int) -> float:
    """Share of the other seats' cards that `world` puts in the hand that holds them."""
    right = total = 0
    for s in range(game.num_players(truth)):
        if s == seat:
            continue
        true_hand = _cards(game.view(truth, s).hand)
        right += sum((true_hand & _cards(game.view(world, s).hand)).values())
        total += sum(true_hand.values())
    return right / total if total else 1.0


def positions(name: str, level_name: str, count: int, seed: str) -> list[tuple[Any, int]]:
    """(true state, seat to act) pairs with a choice, from `level_name` self-play."""
    game, setup = get_game(name), SETUPS[name][0]
    level = get_level(level_name)
    rng = random.Random(f"inference/{seed}/{name}")
    found: list[tuple[Any, int]] = []
    g = 0
    while len(found) < count:
        state = game.new_game(setup.players, setup.options, f"inference/{seed}/{name}/{g}")
        g += 1
        deal = game.deal_number(state)
        while not game.is_over(state) and game.deal_number(state) == deal and len(found) < count:
            seat = sorted(game.to_act(state))[0]
            legal = game.legal_moves(state, seat)
            if len(legal) > 1 and rng.random() < SHARE:
                found.append((state, seat))
            move, _ = level.choose(game, game.view(state, seat), seat, rng)
            state = game.apply(state, seat, move)
    return found


def measure(name: str, level: str, count: int, pool: int, epsilons: list[float],
            seed: str) -> list[str]:
    game = get_game(name)
    explains = get_explains(name)
    if explains is None:
        raise SystemExit(f"{name} has no model of the other seats (`explains`)")
    spots = positions(name, level, count, seed)
    rng = random.Random(f"inference/{seed}/pools")
    right: dict[float, list[float]] = {e: [] for e in epsilons}
    sizes: dict[float, list[float]] = {e: [] for e in epsilons}
    for truth, seat in spots:
        view = game.view(truth, seat)
        worlds = [game.sample(view, rng) for _ in range(pool)]
        hits = [hidden_overlap(game, truth, w, seat) for w in worlds]
        ks = [surprises(game, w, seat, explains) or 0 for w in worlds]
        least = min(ks)
        for e in epsilons:
            weights = [e ** (k - least) for k in ks]
            total = sum(weights)
            right[e].append(sum(w * h for w, h in zip(weights, hits, strict=True)) / total)
            sizes[e].append(total * total / sum(w * w for w in weights))
    rows = []
    base = right.get(1.0)
    for e in epsilons:
        mean = statistics.fmean(right[e])
        gain = ""
        if base is not None:
            diffs = [a - b for a, b in zip(right[e], base, strict=True)]
            half = 1.96 * statistics.stdev(diffs) / len(diffs) ** 0.5 if len(diffs) > 1 else 0.0
            gain = f"{statistics.fmean(diffs):+.4f} [{statistics.fmean(diffs) - half:+.4f}, " \
                   f"{statistics.fmean(diffs) + half:+.4f}]"
        rows.append(f"| {name} | {level} | {len(spots)} | {pool} | {e:g} | {mean:.4f} | {gain} | "
                    f"{statistics.fmean(sizes[e]):.1f} |")
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.inference", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", default="dou_dizhu")
    parser.add_argument("--level", default="easy", help="the level playing every seat")
    parser.add_argument("--positions", type=int, default=100)
    parser.add_argument("--pool", type=int, default=250, help="worlds per position")
    parser.add_argument("--epsilons", default="1,0.5,0.3,0.1")
    parser.add_argument("--seed", default="bench")
    args = parser.parse_args(argv)
    epsilons = [float(e) for e in args.epsilons.split(",")]
    print("| game | players' level | positions | pool | epsilon | cards placed right | "
          "gain over uniform, 95% CI | effective pool |")
    print("|---|---|---:|---:|---:|---:|---|---:|")
    for name in args.games.split(","):
        for row in measure(name, args.level, args.positions, args.pool, epsilons, args.seed):
            print(row, flush=True)


if __name__ == "__main__":
    main()
