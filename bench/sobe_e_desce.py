"""Sobe e Desce benchmarks: `python -m bench.sobe_e_desce {throughput,ladder} ...`.

- throughput: uniform random legal moves from a new match to its end (default options: scores
  from 20 down to 0), one process pinned to one CPU; rates per CPU second of that process.
- ladder: two levels in duplicate format (every deal replayed with every seating of the two
  levels over the four seats), with match options (a low `start_score` keeps matches short);
  the per-deal mean RISCOS difference per seat-match with its 95% interval.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import time
from concurrent.futures import ProcessPoolExecutor

from bots.arena import play_deal, seatings
from engines.sobe_e_desce import GAME


def throughput(args: argparse.Namespace) -> None:
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    rng = random.Random(args.seed)
    new_game, legal_moves, apply = GAME.new_game, GAME.legal_moves, GAME.apply
    matches = deals = moves = 0
    cpu0 = time.process_time()
    while time.process_time() - cpu0 < args.seconds:
        s = new_game(4, {}, f"bench/{args.seed}/{matches}")
        while s.to_act >= 0:
            seat = s.to_act
            legal = legal_moves(s, seat)
            s = apply(s, seat, legal[rng.randrange(len(legal))])
            moves += 1
        matches += 1
        deals += len(s.history)
    cpu = time.process_time() - cpu0
    print("| engine | matches | deals | moves | matches/s | deals/s | moves/s | deals/match |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    print(f"| sobe_e_desce | {matches:,} | {deals:,} | {moves:,} | {matches / cpu:,.1f} | "
          f"{deals / cpu:,.0f} | {moves / cpu:,.0f} | {deals / matches:.1f} |")


def _deal(job: tuple) -> float:
    options, seed, deal, high, low = job
    points: dict[str, list[int]] = {high: [], low: []}
    for seating in seatings([high, low], 4):
        totals, _ = play_deal("sobe_e_desce", 4, options, f"{seed}/{deal}", seating)
        for seat, name in enumerate(seating):
            points[name].append(totals[seat])
    return statistics.fmean(points[high]) - statistics.fmean(points[low])


def ladder(args: argparse.Namespace) -> None:
    options = json.loads(args.options)
    print("| sobe_e_desce step | options | deals | games | mean RISCOS difference | 95% CI | "
          "significant |")
    print("|---|---|---:|---:|---:|---|---|")
    for step in args.steps.split(","):
        high, low = step.split(">")
        jobs = [(options, args.seed, d, high, low) for d in range(args.deals)]
        with ProcessPoolExecutor(args.jobs) as pool:
            diffs = list(pool.map(_deal, jobs))
        mean = statistics.fmean(diffs)
        half = 1.96 * statistics.stdev(diffs) / math.sqrt(len(diffs))
        sig = "yes" if mean - half > 0 else ("no (reversed)" if mean + half < 0 else "no")
        games = len(diffs) * len(seatings([high, low], 4))
        print(f"| {high} > {low} | `{args.options}` | {len(diffs)} | {games} | {mean:+.3f} | "
              f"[{mean - half:+.3f}, {mean + half:+.3f}] | {sig} |", flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.sobe_e_desce", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="what", required=True)
    tp = sub.add_parser("throughput")
    tp.add_argument("--seconds", type=float, default=20.0)
    tp.add_argument("--seed", type=int, default=0)
    lp = sub.add_parser("ladder")
    lp.add_argument("--steps", default="heuristic>random,easy>heuristic")
    lp.add_argument("--deals", type=int, default=40)
    lp.add_argument("--options", default='{"start_score": 6}')
    lp.add_argument("--seed", default="ladder")
    lp.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args(argv)
    {"throughput": throughput, "ladder": ladder}[args.what](args)


if __name__ == "__main__":
    main()
