"""Random-game throughput of our Dou Dizhu engine beside RLCard's and OpenSpiel's, one core.

`python -m bench.engine_throughput [--seconds S] [--first N]` times each engine in a fresh
subprocess pinned to one CPU, for S seconds of its CPU time (20 by default), playing whole
random games:

- ours: `GAME.new_game` (bidding included, all-pass deals redealt), then a uniform choice among
  `GAME.legal_moves` for the seat to act, `GAME.apply`, until `GAME.is_over`;
- RLCard: `DoudizhuGame.init_game()`, then `step` with a uniform choice among
  `state['actions']` until `is_over()` (RLCard has no bidding: seat 0 is always landlord);
- OpenSpiel: `dou_dizhu` from a new initial state; chance nodes (the face-up card and the deal)
  sampled from `chance_outcomes()`, other nodes a uniform choice among `legal_actions()`
  (its bidding has no redeal: a deal where all pass ends the game).

Rates are per CPU second of the engine's process, so other load on the machine changes them
little; the CPU/wall column shows how much of its CPU the process got. Moves are the decisions
taken (bids, passes and plays; chance outcomes are not moves), so
moves/game differs between engines and both rates are shown. Our engine caches move lists
under rank masks, so it starts cold in each process: the first-N-games rate is printed beside
the whole-run rate, and the whole run includes that warm-up.

`--profile` instead runs ours under cProfile for S seconds and prints the 15 functions with
the most own time.
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
from collections.abc import Callable
from importlib import metadata
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
ENGINES = ("ours", "rlcard", "openspiel")


# --- one random game per engine ------------------------------------------------------------


def ours_player(seed: int) -> Callable[[int], int]:
    from engines.dou_dizhu import GAME

    rng = random.Random(seed)
    choice, new_game, legal_moves, apply = rng.choice, GAME.new_game, GAME.legal_moves, GAME.apply

    def play(i: int) -> int:
        s = new_game(3, {}, f"bench/{seed}/{i}")
        moves = 0
        while not GAME.is_over(s):
            (seat,) = GAME.to_act(s)
            s = apply(s, seat, choice(legal_moves(s, seat)))
            moves += 1
        return moves

    return play


def rlcard_player(seed: int) -> Callable[[int], int]:
    import numpy as np
    from rlcard.games.doudizhu.game import DoudizhuGame

    rng = random.Random(seed)
    game = DoudizhuGame()
    game.np_random = np.random.RandomState(seed)

    def play(i: int) -> int:
        state, _ = game.init_game()
        moves = 0
        while not game.is_over():
            state, _ = game.step(rng.choice(state["actions"]))
            moves += 1
        return moves

    return play


def openspiel_player(seed: int) -> Callable[[int], int]:
    import pyspiel

    rng = random.Random(seed)
    game = pyspiel.load_game("dou_dizhu")

    def play(i: int) -> int:
        state = game.new_initial_state()
        moves = 0
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                x = rng.random()
                chosen = outcomes[-1][0]
                for action, p in outcomes:
                    x -= p
                    if x < 0:
                        chosen = action
                        break
                state.apply_action(chosen)
            else:
                state.apply_action(rng.choice(state.legal_actions()))
                moves += 1
        return moves

    return play


PLAYERS = {"ours": ours_player, "rlcard": rlcard_player, "openspiel": openspiel_player}
TITLES = {
    "ours": "Croupier (ours)",
    "rlcard": "RLCard {} DoudizhuGame",
    "openspiel": "OpenSpiel {} dou_dizhu",
}


def version(name: str) -> str:
    dist = {"rlcard": "rlcard", "openspiel": "open_spiel"}.get(name)
    if dist is None:
        return ""
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "?"


# --- measuring -----------------------------------------------------------------------------


def pin_one_cpu() -> str:
    """Pin this process to one CPU it may use; a note saying which."""
    if not hasattr(os, "sched_setaffinity"):
        return "not pinned"
    cpu = min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cpu})
    return f"CPU {cpu}"


def measure(name: str, seconds: float, first: int, seed: int) -> dict:
    """Play random games until `seconds` of this process's CPU time have passed.

    Rates are per CPU second of the process (robust to other load on the machine); the wall
    time is kept too, and their ratio shows how much of the CPU the process got.
    """
    pinned = pin_one_cpu()
    play = PLAYERS[name](seed)  # imports and set-up, not timed
    games = moves = 0
    first_cpu = first_moves = None
    cpu0, wall0 = time.process_time(), time.perf_counter()
    cpu = 0.0
    while cpu < seconds or games < first:
        moves += play(games)
        games += 1
        cpu = time.process_time() - cpu0
        if games == first:
            first_cpu, first_moves = cpu, moves
    return {
        "engine": name, "games": games, "moves": moves, "seconds": cpu,
        "wall": time.perf_counter() - wall0, "first_games": first, "first_seconds": first_cpu,
        "first_moves": first_moves, "pinned": pinned,
    }


def run_worker(name: str, seconds: float, first: int, seed: int) -> dict:
    cmd = [sys.executable, "-m", "bench.engine_throughput", "--worker", name,
           "--seconds", str(seconds), "--first", str(first), "--seed", str(seed)]
    out = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"{name} failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def table(results: dict[str, dict], args: argparse.Namespace) -> str:
    def rate(r: dict, key: str) -> float:
        return r[key] / r["seconds"]

    load = f", load average {os.getloadavg()[0]:.2f}" if hasattr(os, "getloadavg") else ""
    lines = [
        f"Random Dou Dizhu games, one fresh process per engine pinned to one CPU, "
        f"{args.seconds:g} CPU-s each; rates per CPU second (Python {platform.python_version()}, "
        f"{platform.machine()}, {os.cpu_count()} CPUs{load}).",
        "",
        f"| engine | games | moves | games/s | moves/s | moves/game | first {args.first} games/s "
        f"| first {args.first} moves/s | CPU/wall |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, r in results.items():
        title = TITLES[name].format(version(name))
        first_rate = r["first_games"] / r["first_seconds"]
        first_moves = r["first_moves"] / r["first_seconds"]
        lines.append(
            f"| {title} | {r['games']:,} | {r['moves']:,} | {rate(r, 'games'):,.1f} "
            f"| {rate(r, 'moves'):,.0f} | {r['moves'] / r['games']:.1f} | {first_rate:,.1f} "
            f"| {first_moves:,.0f} | {r['seconds'] / r['wall']:.0%} |"
        )
    ours = results.get("ours")
    others = [n for n in results if n != "ours"]
    if ours and others:
        lines += ["", "| ratio | games/s | moves/s |", "|---|---:|---:|"]
        for name in others:
            r = results[name]
            lines.append(
                f"| ours / {TITLES[name].split()[0]} | {rate(ours, 'games') / rate(r, 'games'):.2f}x "
                f"| {rate(ours, 'moves') / rate(r, 'moves'):.2f}x |"
            )
    command = f"python -m bench.engine_throughput --seconds {args.seconds:g} --first {args.first}"
    if args.seed:
        command += f" --seed {args.seed}"
    lines += ["", f"Command: `{command}`"]
    return "\n".join(lines)


def profile(seconds: float, seed: int) -> None:
    import cProfile
    import pstats

    play = ours_player(seed)
    profiler = cProfile.Profile()
    games = moves = 0
    start = time.perf_counter()
    profiler.enable()
    while time.perf_counter() - start < seconds:
        moves += play(games)
        games += 1
    profiler.disable()
    print(f"ours under cProfile: {games} games, {moves} moves in {seconds:g} s\n")
    pstats.Stats(profiler).strip_dirs().sort_stats("tottime").print_stats(15)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.engine_throughput",
        description="Random-game throughput: our Dou Dizhu engine, RLCard's and OpenSpiel's.",
    )
    parser.add_argument("--seconds", type=float, default=20.0,
                        help="time per engine (default 20)")
    parser.add_argument("--first", type=int, default=100,
                        help="also report the rate of the first N games (default 100)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random choices")
    parser.add_argument("--engines", default=",".join(ENGINES),
                        help=f"comma-separated subset of {','.join(ENGINES)}")
    parser.add_argument("--profile", action="store_true",
                        help="profile ours for --seconds and print the top 15 by own time")
    parser.add_argument("--worker", choices=ENGINES, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(measure(args.worker, args.seconds, args.first, args.seed)))
        return
    if args.profile:
        profile(args.seconds, args.seed)
        return
    names = [n.strip() for n in args.engines.split(",") if n.strip()]
    unknown = set(names) - set(ENGINES)
    if unknown:
        parser.error(f"unknown engine(s) {', '.join(sorted(unknown))}")
    results = {}
    for name in names:
        print(f"timing {name} for {args.seconds:g} s ...", file=sys.stderr, flush=True)
        results[name] = run_worker(name, args.seconds, args.first, args.seed)
    print(table(results, args))


if __name__ == "__main__":
    main()
