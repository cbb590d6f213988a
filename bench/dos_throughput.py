"""Dos random-game throughput: uniform random legal moves to the end of the match, one core.

`python -m bench.dos_throughput --seconds 20` prints, per player count, matches, rounds and
moves per CPU second of this process (the seat to act in a Dos window drawn at random).
"""

from __future__ import annotations

import argparse
import random
import time

from engines.dos import GAME


def run(players: int, options: dict, seconds: float, seed: int) -> tuple[int, int, int, float]:
    rng = random.Random(seed)
    apply, legal_moves, to_act, is_over = GAME.apply, GAME.legal_moves, GAME.to_act, GAME.is_over
    matches = rounds = moves = 0
    start = time.process_time()
    while time.process_time() - start < seconds:
        state = GAME.new_game(players, options, f"bench/{matches}")
        while not is_over(state):
            acting = to_act(state)
            seat = next(iter(acting)) if len(acting) == 1 else rng.choice(sorted(acting))
            legal = legal_moves(state, seat)
            state = apply(state, seat, legal[rng.randrange(len(legal))])
            moves += 1
        matches += 1
        rounds += len(state.history)
    return matches, rounds, moves, time.process_time() - start


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="CPU seconds per row")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    print("| players | options | matches | rounds | moves | matches/s | rounds/s | moves/s |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|")
    for players, options in ((2, {}), (3, {}), (4, {}), (4, {"official_no_match": True})):
        m, r, n, secs = run(players, options, args.seconds, args.seed)
        opts = ", ".join(f"{k}={v}" for k, v in options.items()) or "defaults (target 200)"
        print(f"| {players} | {opts} | {m:,} | {r:,} | {n:,} | {m / secs:,.1f} | {r / secs:,.1f} "
              f"| {n / secs:,.0f} |", flush=True)


if __name__ == "__main__":
    main()
