"""Random-play throughput of every registered engine, one core each.

`python -m bench.random_play [--seconds S] [--games g1,g2]` runs, for every game and every
player count it allows, a fresh subprocess pinned to one CPU that plays whole matches with the
default options for S seconds of its CPU time: `new_game`, then for a seat of `to_act` a
uniform choice among `legal_moves`, `apply`, until `is_over`. This is the inner loop of the
bots' playouts, so it is the engine speed that matters. Rates are per CPU second of the
process; the CPU/wall column shows how much of its CPU it got on a shared machine.
(Dou Dizhu beside RLCard and OpenSpiel: `python -m bench.engine_throughput`.)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import subprocess
import sys
import time
from pathlib import Path

from bench.engine_throughput import pin_one_cpu
from engines.contract import option_argument

REPO = Path(__file__).resolve().parent.parent


def measure(game_name: str, players: int, seconds: float, seed: int, options: dict) -> dict:
    from engines.registry import get_game

    pinned = pin_one_cpu()
    game = get_game(game_name)
    rng = random.Random(seed)
    new_game, to_act, legal_moves, apply, is_over = (
        game.new_game, game.to_act, game.legal_moves, game.apply, game.is_over,
    )
    games = moves = deals = 0
    cpu0, wall0 = time.process_time(), time.perf_counter()
    cpu = 0.0
    while cpu < seconds:
        s = new_game(players, options, f"bench/{seed}/{games}")
        while not is_over(s):
            acting = to_act(s)
            seat = next(iter(acting)) if len(acting) == 1 else rng.choice(sorted(acting))
            legal = legal_moves(s, seat)
            s = apply(s, seat, legal[rng.randrange(len(legal))])
            moves += 1
        deals += game.result(s).deals_played
        games += 1
        cpu = time.process_time() - cpu0
    return {
        "game": game_name, "players": players, "games": games, "moves": moves, "deals": deals,
        "seconds": cpu, "wall": time.perf_counter() - wall0, "pinned": pinned,
    }


def run_worker(game: str, players: int, seconds: float, seed: int, options: dict) -> dict:
    cmd = [sys.executable, "-m", "bench.random_play", "--worker", f"{game}:{players}",
           "--seconds", str(seconds), "--seed", str(seed), "--options-json", json.dumps(options)]
    out = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"{game} with {players} players failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def table(results: list[dict], args: argparse.Namespace) -> str:
    load = f", load average {os.getloadavg()[0]:.2f}" if hasattr(os, "getloadavg") else ""
    lines = [
        f"Random matches ({_shown(args.option)}), one fresh process per row pinned to one CPU, "
        f"{args.seconds:g} CPU-s each; rates per CPU second (Python "
        f"{platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs{load}).",
        "",
        "| game | players | matches | deals | moves | matches/s | deals/s | moves/s "
        "| moves/deal | CPU/wall |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        secs = r["seconds"]
        per_deal = r["moves"] / r["deals"] if r["deals"] else 0.0
        lines.append(
            f"| {r['game']} | {r['players']} | {r['games']:,} | {r['deals']:,} | {r['moves']:,} "
            f"| {r['games'] / secs:,.1f} | {r['deals'] / secs:,.1f} | {r['moves'] / secs:,.0f} "
            f"| {per_deal:.1f} | {secs / r['wall']:.0%} |"
        )
    command = f"python -m bench.random_play --seconds {args.seconds:g}"
    if args.games:
        command += f" --games {args.games}"
    if args.players:
        command += f" --players {args.players}"
    for name, value in args.option:
        command += f" --option {name}={json.dumps(value)}"
    lines += ["", f"Command: `{command}`"]
    return "\n".join(lines)


def _shown(options: list[tuple[str, object]]) -> str:
    return "options " + ", ".join(f"{k}={json.dumps(v)}" for k, v in options) if options else (
        "default options"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.random_play",
        description="Random-play throughput of every registered engine, one core each.",
    )
    parser.add_argument("--seconds", type=float, default=10.0,
                        help="CPU seconds per game and player count (default 10)")
    parser.add_argument("--games", default="", help="comma-separated games (default: all)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random choices")
    parser.add_argument("--players", type=int, default=0, help="only this player count")
    parser.add_argument("--option", action="append", type=option_argument, default=[], metavar="NAME=VALUE",
                        help="a match option (repeatable; JSON values), e.g. deals=1")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--options-json", default="{}", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        name, players = args.worker.split(":")
        options = json.loads(args.options_json)
        print(json.dumps(measure(name, int(players), args.seconds, args.seed, options)))
        return
    from engines.registry import GAMES

    names = [g.strip() for g in args.games.split(",") if g.strip()] or sorted(GAMES)
    unknown = set(names) - set(GAMES)
    if unknown:
        parser.error(f"unknown game(s) {', '.join(sorted(unknown))}; known: {', '.join(GAMES)}")
    results = []
    for name in names:
        info = GAMES[name].info
        counts = [args.players] if args.players else range(info.min_players, info.max_players + 1)
        for players in counts:
            print(f"{name} with {players} players...", file=sys.stderr, flush=True)
            results.append(run_worker(name, players, args.seconds, args.seed, dict(args.option)))
    print(table(results, args))


if __name__ == "__main__":
    main()
