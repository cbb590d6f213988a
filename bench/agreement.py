"""Where two levels choose differently, and what the difference is worth:
`python -m bench.agreement GAME --high expert --low hard`.

A ladder step that does not come out (expert against hard in Dos, say) may mean either that
the higher level chooses the same moves, or that it chooses others no better. This tells the
two apart at a fraction of a ladder's cost. Matches are played by the heuristic player in
every seat; at a share of the decisions with more than one legal move, both levels decide
from the acting seat's view (iterations only, no time limit, so a run is reproducible on any
machine); where their moves differ, both are played out from the true position by the
heuristic player in every seat to the end of the match, `--rollouts` times each with the
same random streams, and the difference in the seat's final points is what the higher
level's choice gains there. As in `bench.regret`, the true hidden cards are one draw from
what the view allows, so over many decisions the gain is what the choice is worth to a player
who sees only the view. That one draw makes each decision's value noisy; with `--worlds`
every play-out starts instead from hidden cards dealt anew from the seat's view (uniformly,
as the engine's `sample` deals them, the same world for both moves), which averages the
hidden cards out at the price of ignoring what the other seats' play said about them.

    python -m bench.agreement dos --option target=1 --high expert --low hard --matches 40
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from bench.regret import interval, kind, rollout
from bench.strength import Results, add_match_args, level_print
from bots.heuristics import get_heuristic
from bots.levels import LEVELS, Level, get_level
from engines.registry import get_game


def unhurried(name: str) -> Level:
    """The level with its iterations only: a time limit would make runs machine-dependent."""
    return dataclasses.replace(get_level(name), seconds=None)


def play_match(job: tuple) -> tuple[int, list[list[Any]]]:
    """One match of heuristic players; per compared decision [kind, same, gain]."""
    game_name, players, options, seed, match, high_name, low_name, share, rollouts, worlds = job
    game = get_game(game_name)
    high, low = unhurried(high_name), unhurried(low_name)
    policy = get_heuristic(game_name)
    state = game.new_game(players, options, f"{seed}/{match}")
    rng = random.Random(f"{seed}/{match}")
    out: list[list[Any]] = []
    ply = 0
    while not game.is_over(state):
        acting = sorted(game.to_act(state))
        seat = acting[0] if len(acting) == 1 else rng.choice(acting)
        legal = game.legal_moves(state, seat)
        move = legal[0] if len(legal) == 1 else policy(game, state, seat, legal, rng)
        if len(legal) > 1 and rng.random() < share:
            view = game.view(state, seat)
            hi, _ = high.choose(game, view, seat, random.Random(f"{seed}/{match}/{ply}/high"))
            lo, _ = low.choose(game, view, seat, random.Random(f"{seed}/{match}/{ply}/low"))
            text = kind(game.format_move(lo))
            if hi == lo:
                out.append([text, True, 0.0])
            else:
                gain = 0.0
                for r in range(rollouts):
                    streams = f"{seed}/{match}/{ply}/{r}"
                    start = game.sample(view, random.Random(f"{streams}/w")) if worlds else state
                    gain += (rollout(game, start, seat, hi, random.Random(streams))
                             - rollout(game, start, seat, lo, random.Random(streams)))
                out.append([text, False, gain / rollouts])
        state = game.apply(state, seat, move)
        ply += 1
    return match, out


def report(rows: list[dict[str, Any]], high: str, low: str) -> list[str]:
    """One line: how often the levels agree, and what the higher one's other choices gain."""
    decisions = [d for row in rows for d in row["decisions"]]
    differ = [gain for _, same, gain in decisions if not same]
    lines = [f"| {high} vs {low} | matches | decisions | same move | differ | {high}'s gain where "
             "they differ (points a decision) | 95% CI | per decision compared |",
             "|---|---:|---:|---:|---:|---:|---|---:|"]
    if len(differ) > 1:
        mean, half = interval(differ)
        cells = (f"{mean:+.3f} | [{mean - half:+.3f}, {mean + half:+.3f}] | "
                 f"{sum(differ) / len(decisions):+.3f}")
    else:
        cells = "- | - | -"
    same = len(decisions) - len(differ)
    share = f"{same / len(decisions):.2f}" if decisions else "-"
    lines.append(f"| {high} vs {low} | {len(rows)} | {len(decisions)} | {share} | {len(differ)} | "
                 f"{cells} |")
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.agreement", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("game")
    parser.add_argument("--high", default="expert", choices=list(LEVELS))
    parser.add_argument("--low", default="hard", choices=list(LEVELS))
    parser.add_argument("--matches", type=int, default=20)
    parser.add_argument("--share", type=float, default=0.15,
                        help="the share of decisions (with a choice) that both levels make")
    parser.add_argument("--rollouts", type=int, default=100,
                        help="play-outs of each of the two moves where the levels differ")
    parser.add_argument("--worlds", action="store_true",
                        help="play out from hidden cards dealt anew from the view each time")
    add_match_args(parser, seed="agreement", jobs=1)
    args = parser.parse_args(argv)
    game = get_game(args.game)
    players = args.players or game.info.min_players
    options = dict(args.option)
    game.new_game(players, options, "check")  # bad options fail here
    results = Results(args.results, {
        "game": args.game, "players": players, "options": options, "seed": args.seed,
        "agreement": f"{args.high}>{args.low}", "share": args.share, "rollouts": args.rollouts,
        **({"worlds": True} if args.worlds else {}),
        "levels": level_print(args.game, args.high, args.low)})
    jobs = [(args.game, players, options, args.seed, m, args.high, args.low, args.share,
             args.rollouts, args.worlds) for m in results.todo(args.matches)]
    started = time.time()
    with ProcessPoolExecutor(args.jobs) as pool:
        for match, decisions in pool.map(play_match, jobs):
            results.add(match, decisions=decisions)
    shown = ", ".join(f"{k}={json.dumps(v)}" for k, v in options.items()) or "defaults"
    start = "worlds dealt from the view" if args.worlds else "the true position"
    print(f"{args.game}, {players} players, options: {shown}; {args.rollouts} rollouts a move "
          f"from {start}; {time.time() - started:.0f} s\n")
    print("\n".join(report(results.rows(args.matches), args.high, args.low)))


if __name__ == "__main__":
    main()
