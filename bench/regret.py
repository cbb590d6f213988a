"""What a level's departures from the heuristic player are worth: `python -m bench.regret GAME`.

A ladder step compares whole matches, so a small edge drowns in the luck of the cards for
hundreds of deals. This measures the same thing decision by decision: matches are played with
the level in half the seats and the game's heuristic player in the others; wherever the level
chooses another move than the heuristic would in its place, both moves are played out from
the true position (every hidden card as it lies) by the heuristic player in every seat to the
end of the match, `--rollouts` times each with the same random streams, and the difference in
the seat's final points is that decision's gain.

Rolling out from the true position does not let the level see anything: it decides first, from
its own view, and the hidden cards are one draw from what that view allows, so averaged over
decisions the gain is what the departure is worth to a player who knows only the view. By
the performance-difference identity, a seat's gains summed over a match estimate what playing
the level instead of the heuristic is worth to it: exactly when every other seat plays the
heuristic, nearly so with the level in other seats too (the play-outs replace them by the
heuristic). Rows group the departures by kind (the keyword of each move, `cards` for card
plays); the total is per level seat and match, with a 95% interval over matches.

    python -m bench.regret sobe_e_desce --level easy --option start_score=6 --matches 150
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import time
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from bench.strength import Results, add_match_args, level_print
from bots.heuristics import get_heuristic
from bots.levels import LEVELS, get_level
from engines.contract import Game
from engines.registry import get_game


def kind(text: str) -> str:
    """The kind of a move for grouping: its keyword (`pass`, `exchange`), else `cards`."""
    word = text.split(" ", 1)[0]
    return word if word.isalpha() and word.islower() else "cards"


def rollout(game: Game, state: Any, seat: int, move: Any, rng: random.Random) -> float:
    """The seat's final points after `move`, everybody playing the heuristic to the end."""
    policy = get_heuristic(game.info.name)
    state = game.apply(state, seat, move)
    while not game.is_over(state):
        acting = sorted(game.to_act(state))
        s = acting[0] if len(acting) == 1 else rng.choice(acting)
        legal = game.legal_moves(state, s)
        state = game.apply(state, s, legal[0] if len(legal) == 1 else policy(game, state, s, legal, rng))
    return float(game.result(state).totals[seat])


def level_seats(players: int, match: int) -> list[int]:
    """The level's seats in a match: even seats in even matches, odd ones in odd matches."""
    return [s for s in range(players) if (s + match) % 2 == 0]


def play_match(job: tuple) -> tuple[int, list[tuple[str, float]]]:
    """One match (level in the seats of one parity); each departure's kind and gain."""
    game_name, players, options, seed, match, level_name, rollouts = job
    game, level = get_game(game_name), get_level(level_name)
    policy = get_heuristic(game_name)
    state = game.new_game(players, options, f"{seed}/{match}")
    rng = random.Random(f"{seed}/{match}")  # the same streams for every level
    mine = set(level_seats(players, match))
    departures: list[tuple[str, float]] = []
    ply = 0
    while not game.is_over(state):
        acting = sorted(game.to_act(state))
        seat = acting[0] if len(acting) == 1 else rng.choice(acting)
        legal = game.legal_moves(state, seat)
        if len(legal) == 1:
            move = legal[0]
        elif seat in mine:
            move, _ = level.choose(game, game.view(state, seat), seat, rng)
            usual = policy(game, state, seat, legal, random.Random(ply))
            if move != usual:
                gain = 0.0
                for r in range(rollouts):
                    streams = f"{seed}/{match}/{ply}/{r}"
                    gain += (rollout(game, state, seat, move, random.Random(streams))
                             - rollout(game, state, seat, usual, random.Random(streams)))
                text = f"{kind(game.format_move(usual))} -> {kind(game.format_move(move))}"
                departures.append((text, gain / rollouts))
        else:
            move = policy(game, state, seat, legal, rng)
        state = game.apply(state, seat, move)
        ply += 1
    return match, departures


def interval(xs: list[float]) -> tuple[float, float]:
    mean = statistics.fmean(xs)
    half = 1.96 * statistics.stdev(xs) / math.sqrt(len(xs)) if len(xs) > 1 else math.inf
    return mean, half


def report(rows: list[dict[str, Any]], players: int) -> list[str]:
    """The table: departures by kind, then the total per level seat and match."""
    by_kind: dict[str, list[float]] = defaultdict(list)
    per_seat: list[float] = []
    for row in rows:
        seats = len(level_seats(players, row["deal"]))
        for text, gain in row["departures"]:
            by_kind[text].append(gain)
        per_seat.append(sum(g for _, g in row["departures"]) / seats)
    lines = ["| heuristic's move -> level's move | departures | mean gain | 95% CI | sum |",
             "|---|---:|---:|---|---:|"]
    for text in sorted(by_kind, key=lambda t: sum(by_kind[t])):
        gains = by_kind[text]
        mean, half = interval(gains)
        lines.append(f"| {text} | {len(gains)} | {mean:+.3f} | [{mean - half:+.3f}, "
                     f"{mean + half:+.3f}] | {sum(gains):+.1f} |")
    mean, half = interval(per_seat) if per_seat else (0.0, math.inf)
    lines.append(f"| **per level seat and match** ({len(rows)} matches) | "
                 f"{sum(len(r['departures']) for r in rows)} | {mean:+.3f} | "
                 f"[{mean - half:+.3f}, {mean + half:+.3f}] | |")
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.regret", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("game")
    parser.add_argument("--level", default="easy", choices=list(LEVELS))
    parser.add_argument("--matches", type=int, default=100)
    parser.add_argument("--rollouts", type=int, default=20,
                        help="play-outs of each of the two moves per departure")
    add_match_args(parser, seed="regret", jobs=1)
    args = parser.parse_args(argv)
    game = get_game(args.game)
    players = args.players or game.info.min_players
    options = dict(args.option)
    game.new_game(players, options, "check")  # bad options fail here
    results = Results(args.results, {
        "game": args.game, "players": players, "options": options, "seed": args.seed,
        "regret": args.level, "rollouts": args.rollouts,
        "levels": level_print(args.game, args.level, "heuristic")})
    jobs = [(args.game, players, options, args.seed, m, args.level, args.rollouts)
            for m in results.todo(args.matches)]
    started = time.time()
    with ProcessPoolExecutor(args.jobs) as pool:
        for match, departures in pool.map(play_match, jobs):
            results.add(match, departures=departures)
    shown = ", ".join(f"{k}={json.dumps(v)}" for k, v in options.items()) or "defaults"
    print(f"{args.game}, {players} players, options: {shown}; {args.level} against the "
          f"heuristic player; {args.rollouts} rollouts a move; {time.time() - started:.0f} s\n")
    print("\n".join(report(results.rows(args.matches), players)))


if __name__ == "__main__":
    main()
