"""Steps per second of the research environments, beside the engines stepped directly and
beside the Dou Dizhu environments researchers use today, in one run.

`python -m bench.envs_throughput [--seconds S] [--games g1,g2]` times, for every game with a
codec (engines/envs/<game>.py), S CPU seconds each (3 by default) of uniformly random play of
one-deal episodes (the environments' default):

- engine: `new_game`, then for the lowest seat of `on_turn` a uniform choice among its
  `legal_moves`, `apply`, until `is_over` (what the environment steps, without it);
- PettingZoo: `env.reset()`, then per step `env.last()` (observation and action mask
  through the codec) and `env.step` with a uniform choice among the mask's actions;
- OpenSpiel (Python game): `croupier_<game>`, chance nodes sampled, a uniform choice among
  `legal_actions()` plus the `observation_tensor()` of the player to act, per step;

and, for Dou Dizhu only, RLCard's `doudizhu` environment (`env.step` with a uniform choice
among `state["legal_actions"]`, its features built each step) and OpenSpiel's C++
`dou_dizhu` stepped from Python (a uniform choice among `legal_actions()` and its
`observation_tensor()`). Steps are the decisions taken (chance outcomes are not steps).
Rates are per CPU second of this process; ratios to the engine are per game.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import random
import sys
import time
from collections.abc import Callable
from importlib import metadata

from engines.registry import ENGINES

Runner = Callable[[int], int]  # plays episode i, returns the steps taken


def engine_runner(game: str, seed: int) -> Runner:
    from engines.envs.episode import episode_setup

    engine, players, options = episode_setup(game, None, None)
    rng = random.Random(seed)
    choice = rng.choice
    new_game, on_turn, legal_moves, apply, is_over = (
        engine.new_game, engine.on_turn, engine.legal_moves, engine.apply, engine.is_over)

    def run(i: int) -> int:
        state = new_game(players, options, f"bench/{seed}/{i}")
        steps = 0
        while not is_over(state):
            seat = min(on_turn(state))
            state = apply(state, seat, choice(legal_moves(state, seat)))
            steps += 1
        return steps

    return run


def pettingzoo_runner(game: str, seed: int) -> Runner:
    import numpy as np

    from engines.envs.aec import env

    e = env(game)
    rng = np.random.default_rng(seed)
    e.reset(seed=seed)

    def run(i: int) -> int:
        e.reset()
        steps = 0
        while True:
            obs, _, terminated, truncated, _ = e.last()
            if terminated or truncated:
                return steps
            legal = np.flatnonzero(obs["action_mask"])
            e.step(int(legal[rng.integers(len(legal))]))
            steps += 1

    return run


def _spiel_runner(game: object, seed: int) -> Runner:
    rng = random.Random(seed)

    def run(i: int) -> int:
        state = game.new_initial_state()  # type: ignore[attr-defined]
        steps = 0
        while not state.is_terminal():
            if state.is_chance_node():
                actions, probs = zip(*state.chance_outcomes(), strict=True)
                state.apply_action(rng.choices(actions, probs)[0])
                continue
            state.observation_tensor()
            state.apply_action(rng.choice(state.legal_actions()))
            steps += 1
        return steps

    return run


def openspiel_python_runner(game: str, seed: int) -> Runner:
    from engines.envs.spiel import load

    return _spiel_runner(load(game), seed)


def openspiel_cpp_runner(game: str, seed: int) -> Runner:
    import pyspiel

    return _spiel_runner(pyspiel.load_game("dou_dizhu"), seed)


def rlcard_runner(game: str, seed: int) -> Runner:
    import rlcard

    env = rlcard.make("doudizhu", config={"seed": seed})
    rng = random.Random(seed)

    def run(i: int) -> int:
        state, _ = env.reset()
        steps = 0
        while not env.is_over():
            state, _ = env.step(rng.choice(list(state["legal_actions"])))
            steps += 1
        return steps

    return run


KINDS: dict[str, tuple[str, Callable[[str, int], Runner]]] = {
    "engine": ("engine stepped directly", engine_runner),
    "pettingzoo": ("PettingZoo AEC env (ours)", pettingzoo_runner),
    "openspiel_py": ("OpenSpiel Python game (ours)", openspiel_python_runner),
    "rlcard": ("RLCard {} doudizhu env", rlcard_runner),
    "openspiel_cpp": ("OpenSpiel {} C++ dou_dizhu", openspiel_cpp_runner),
}


def measure(runner: Runner, seconds: float) -> tuple[int, int, float]:
    """Episodes and steps played in `seconds` of CPU time (at least one episode)."""
    episodes = steps = 0
    cpu0 = time.process_time()
    cpu = 0.0
    while cpu < seconds or not episodes:
        steps += runner(episodes)
        episodes += 1
        cpu = time.process_time() - cpu0
    return episodes, steps, cpu


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "?"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.envs_throughput",
        description="Research environments' steps/s beside the engines, RLCard and OpenSpiel.",
    )
    parser.add_argument("--seconds", type=float, default=3.0, help="CPU-s per row (default 3)")
    parser.add_argument("--games", default="", help="comma-separated games (default: all with "
                        "a codec)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    with_codec = [g for g in ENGINES if importlib.util.find_spec(f"engines.envs.{g}")]
    games = [g.strip() for g in args.games.split(",") if g.strip()] or with_codec
    missing = sorted(set(games) - set(with_codec))
    if missing:
        parser.error(f"no codec for {', '.join(missing)} (games with one: {', '.join(with_codec)})")
    versions = {"rlcard": _version("rlcard"), "openspiel_cpp": _version("open_spiel")}
    load = f", load average {os.getloadavg()[0]:.2f}" if hasattr(os, "getloadavg") else ""
    lines = [
        f"Random one-deal episodes, {args.seconds:g} CPU-s per row, rates per CPU second "
        f"(Python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs{load}).",
        "",
        "| game | stepped through | episodes | steps | steps/episode | steps/s | / engine |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    plan = [(g, ["engine", "pettingzoo", "openspiel_py"]) for g in games]
    if not args.games or "dou_dizhu" in games:
        # the references; beside our engine alone until Dou Dizhu has a codec
        refs = ["rlcard", "openspiel_cpp"]
        if "dou_dizhu" in games:
            plan[games.index("dou_dizhu")][1].extend(refs)
        else:
            plan.append(("dou_dizhu", ["engine", *refs]))
    for game, kinds in plan:
        base = 0.0
        for kind in kinds:
            title, make = KINDS[kind]
            print(f"timing {game} {kind} for {args.seconds:g} s ...", file=sys.stderr, flush=True)
            episodes, steps, cpu = measure(make(game, args.seed), args.seconds)
            rate = steps / cpu
            base = base or rate
            lines.append(
                f"| {game} | {title.format(versions.get(kind, ''))} | {episodes:,} | {steps:,} "
                f"| {steps / episodes:.1f} | {rate:,.0f} | {rate / base:.2f}x |"
            )
    command = f"python -m bench.envs_throughput --seconds {args.seconds:g}"
    if args.games:
        command += f" --games {args.games}"
    lines += ["", f"Command: `{command}`"]
    print("\n".join(lines))


if __name__ == "__main__":
    main()
