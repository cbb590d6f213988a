"""`croupier arena`: bots against bots in-process, in duplicate format, with confidence intervals.

Every deal is played once per seating of the bots (the same cards each time, from the same
seed), so a bot's luck of the cards cancels out. Results per bot: mean points per deal and
win rate, each with a 95% confidence interval.
"""

from __future__ import annotations

import argparse
import csv
import itertools
import json
import math
import os
import random
import sys
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field

from rich.console import Console
from rich.table import Table

from bots.levels import LEVELS, get_level
from bots.progress import progress_bar
from engines.contract import option_argument
from engines.registry import ENGINES, get_game


def seatings(bots: list[str], players: int) -> list[tuple[str, ...]]:
    """Every distinct assignment of the bots to seats in which each bot plays at least once."""
    if len(bots) > players:
        raise ValueError(f"{len(bots)} bots for {players} seats")
    names = list(dict.fromkeys(bots))
    if len(bots) == players:
        return sorted(set(itertools.permutations(bots)))
    return sorted(
        p for p in itertools.product(names, repeat=players) if set(p) == set(names)
    )


@dataclass
class Record:
    deal: int
    seating: tuple[str, ...]
    scores: tuple[int, ...]
    winners: tuple[int, ...]


def play_deal(
    game_name: str, players: int, options: dict, seed: str, seating: tuple[str, ...]
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Plays one match with the given bot per seat; returns (totals, winners)."""
    game = get_game(game_name)
    levels = [get_level(name) for name in seating]
    state = game.new_game(players, options, seed)
    rng = random.Random(f"{seed}/{'/'.join(seating)}")
    while not game.is_over(state):
        acting = sorted(game.to_act(state))
        seat = acting[0] if len(acting) == 1 else rng.choice(acting)
        move, _ = levels[seat].choose(game, game.view(state, seat), seat, rng)
        state = game.apply(state, seat, move)
    res = game.result(state)
    return tuple(res.totals), tuple(res.winners)


def _job(args: tuple) -> Record:
    game_name, players, options, seed, deal, seating = args
    scores, winners = play_deal(game_name, players, options, f"{seed}/{deal}", seating)
    return Record(deal, seating, scores, winners)


@dataclass
class BotStats:
    name: str
    points: list[float] = field(default_factory=list)
    wins: list[float] = field(default_factory=list)

    def summary(self) -> dict:
        n = len(self.points)
        mean = sum(self.points) / n if n else 0.0
        var = sum((p - mean) ** 2 for p in self.points) / (n - 1) if n > 1 else 0.0
        half = 1.96 * math.sqrt(var / n) if n else 0.0
        w = sum(self.wins)
        lo, hi = wilson(w, n)
        return {
            "bot": self.name, "seat_deals": n, "mean_points": round(mean, 4),
            "points_ci95": [round(mean - half, 4), round(mean + half, 4)],
            "win_rate": round(w / n, 4) if n else 0.0, "win_ci95": [round(lo, 4), round(hi, 4)],
        }


def wilson(wins: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval of a proportion."""
    if n == 0:
        return 0.0, 1.0
    p = wins / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def tally(records: list[Record], players: int) -> dict[str, BotStats]:
    stats: dict[str, BotStats] = {}
    for rec in records:
        draw = len(rec.winners) == players
        for seat, name in enumerate(rec.seating):
            st = stats.setdefault(name, BotStats(name))
            st.points.append(rec.scores[seat])
            st.wins.append(0.5 if draw else float(seat in rec.winners))
    return stats


def run(
    game_name: str, bots: list[str], deals: int, seed: str, players: int | None = None,
    options: dict | None = None, jobs: int = 1, progress: bool = True,
) -> list[Record]:
    game = get_game(game_name)
    players = players or game.info.min_players
    options = options or {}
    for name in bots:
        get_level(name)
    game.new_game(players, options, "check")  # options validated before any work
    plan = [
        (game_name, players, options, seed, d, s)
        for d in range(deals)
        for s in seatings(bots, players)
    ]
    records: list[Record] = []
    # games (one seating of one deal each), not deals: a deal is done with its last seating
    with progress_bar("games", Console(stderr=True), disable=not progress) as bar:
        task = bar.add_task(f"{game_name} {','.join(bots)}", total=len(plan), before=0,
                            detail=f"· {deals} deals x {len(plan) // max(deals, 1)} seatings")
        for rec in _execute(plan, jobs):
            records.append(rec)
            bar.update(task, advance=1)
    records.sort(key=lambda r: (r.deal, r.seating))
    return records


def _execute(plan: list[tuple], jobs: int) -> Iterator[Record]:
    if jobs <= 1:
        for args in plan:
            yield _job(args)
        return
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        yield from pool.map(_job, plan, chunksize=1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="croupier arena",
        description="Play bot levels against each other in-process (duplicate format) and "
        "print each bot's mean points per deal and win rate with 95% confidence intervals.",
    )
    parser.add_argument("game", help=f"engine name: {', '.join(ENGINES)}")
    parser.add_argument("--bots", required=True,
                        help=f"comma-separated levels, one per seat or fewer ({', '.join(LEVELS)})")
    parser.add_argument("--deals", type=int, default=100, help="distinct deals (each replayed per seating)")
    parser.add_argument("--seed", default="arena", help="seed of the deals")
    parser.add_argument("--players", type=int, default=0, help="player count (default: the game's minimum)")
    parser.add_argument("--option", action="append", type=option_argument, default=[],
                        metavar="NAME=VALUE",
                        help="a game option (repeatable; JSON values), e.g. deals=1")
    parser.add_argument("--options", default="{}",
                        help="game options as one JSON object (--option adds to them)")
    parser.add_argument("--jobs", type=int, default=int(os.environ.get("CROUPIER_ARENA_JOBS", "1")),
                        help="worker processes (env CROUPIER_ARENA_JOBS; default %(default)s)")
    parser.add_argument("--csv", help="write the summary table as CSV to this file")
    parser.add_argument("--json", help="write the summary and every game as JSON to this file")
    args = parser.parse_args(argv)
    try:
        bots = [b.strip() for b in args.bots.split(",") if b.strip()]
        options = json.loads(args.options)
        if not isinstance(options, dict):
            raise ValueError("--options must be a JSON object, e.g. '{\"deals\": 1}'")
        options.update(dict(args.option))
        records = run(args.game, bots, args.deals, args.seed, args.players or None, options,
                      args.jobs, progress=sys.stderr.isatty())
    except ValueError as exc:
        print(f"croupier arena: {exc}", file=sys.stderr)
        return 2
    players = len(records[0].seating) if records else 0
    summary = [s.summary() for s in tally(records, players).values()]
    summary.sort(key=lambda s: -s["mean_points"])
    table = Table(title=f"{args.game}: {len(records)} games ({args.deals} deals x seatings)")
    for col in ("bot", "seat-deals", "mean points", "95% CI", "win rate", "95% CI"):
        table.add_column(col)
    for s in summary:
        table.add_row(s["bot"], str(s["seat_deals"]), f"{s['mean_points']:+.3f}",
                      f"[{s['points_ci95'][0]:+.3f}, {s['points_ci95'][1]:+.3f}]",
                      f"{s['win_rate']:.3f}", f"[{s['win_ci95'][0]:.3f}, {s['win_ci95'][1]:.3f}]")
    Console().print(table)
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["bot", "seat_deals", "mean_points", "points_lo", "points_hi", "win_rate",
                        "win_lo", "win_hi"])
            for s in summary:
                w.writerow([s["bot"], s["seat_deals"], s["mean_points"], *s["points_ci95"],
                            s["win_rate"], *s["win_ci95"]])
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"game": args.game, "players": players, "options": options, "bots": bots,
                       "deals": args.deals, "seed": args.seed, "summary": summary,
                       "games": [asdict(r) for r in records]}, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
