"""Bot strength and search speed: `python -m bench.strength {speed,ladder,duel} ...`.

- speed: ISMCTS iterations per second per game on one core, random and heuristic playouts.
- ladder: each level against the one below it in duplicate format (every deal played with
  every seating of the two levels); the per-deal mean point difference and win-rate
  difference (share of the higher level's seats among the winners minus the lower one's),
  each with its 95% interval, say whether the step is significant. Points weigh a game as
  its score does (Dou Dizhu's doublings, Doppelkopf's solos); win rates count every game
  alike and so vary far less where scores multiply.
- duel (Dou Dizhu): a level as landlord against two opponents and as both farmers against an
  opponent landlord, on the same deals (the landlord is fixed by scripted bidding at 3);
  opponents: RLCard's DouDizhuRuleAgentV1 (through an adapter) or random.
- sides (every game): a level holding one side of the table against an opponent level holding
  the other, every deal played once per side the level can hold; its win rate with a 95%
  interval.

Long runs take `--results FILE`: each finished deal is appended to FILE (JSON lines), deals
already there are skipped, and the printed row counts every deal of the file, so a run of
hours can stop and go on in a later session.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from bots.arena import play_deal, seatings, wilson
from bots.ismcts import search
from bots.levels import LEVELS, benchmark_key, get_level
from engines.contract import option_argument
from engines.registry import GAMES, get_game
from tests.engine_kit import SETUPS

RESULTS_HELP = "append each deal's outcome here and skip deals already in it"
LADDER = ["random", "heuristic", "easy", "medium", "hard", "expert"]


def level_print(game: str, *names: str) -> str:
    """What the named levels are for this game (budgets, search options and the version of
    the heuristic player they play out with): rows measured with other definitions of a
    level must not be counted as this one's."""
    from bots.heuristics import (
        get_heuristic_phases,
        get_level_options,
        get_search_options,
        get_version,
    )

    own = {n: options for n in names if (options := get_level_options(game, n))}
    phases = get_heuristic_phases(game)
    rest: list[Any] = [get_search_options(game)] + ([own] if own else []) + (
        [{"heuristic_phases": [int(p) for p in phases]}] if phases else []
    ) + [f"heuristic v{get_version(game)}"]
    # as the list's repr was when the levels were written as their benchmark keys
    return "[" + ", ".join([*(benchmark_key(get_level(n)) for n in names), *map(repr, rest)]) + "]"


class Results:
    """Per-deal outcomes of one run, kept in a JSON-lines file shared by runs of other keys.

    A row matches when every field of the key is equal, `levels` (see `level_print`)
    included: a row measured under another definition of a level is not counted. A row
    without every outcome field in `needs` (written before the run measured it) is played
    again; the new row, appended later, is the one that counts.
    """

    def __init__(self, path: str, key: dict[str, Any], needs: tuple[str, ...] = ()) -> None:
        self.path, self.key = path, key
        self.done: dict[int, dict[str, Any]] = {}
        if path and Path(path).exists():
            for line in Path(path).read_text().splitlines():
                row = json.loads(line)
                if all(row.get(k) == v for k, v in key.items()) and all(f in row for f in needs):
                    self.done[row["deal"]] = row

    def todo(self, deals: int) -> list[int]:
        return [d for d in range(deals) if d not in self.done]

    def add(self, deal: int, **outcome: Any) -> None:
        row = {**self.key, "deal": deal, **outcome}
        self.done[deal] = row
        if self.path:
            with open(self.path, "a") as out:
                out.write(json.dumps(row) + "\n")

    def rows(self, deals: int) -> list[dict[str, Any]]:
        return [self.done[d] for d in sorted(self.done) if d < deals]


# --- speed -----------------------------------------------------------------------------

def speed(args: argparse.Namespace) -> None:
    print("| game | playouts | positions | iterations | seconds | iterations/s |")
    print("|---|---|---:|---:|---:|---:|")
    for name in args.games.split(","):
        game, setup = get_game(name), SETUPS[name][0]
        rng = random.Random(1)
        positions: list[tuple[Any, int]] = []
        g = 0
        while len(positions) < args.positions:
            state = game.new_game(setup.players, setup.options, f"speed/{g}")
            g += 1
            while not game.is_over(state):
                seat = sorted(game.to_act(state))[0]
                legal = game.legal_moves(state, seat)
                if len(legal) > 1 and rng.random() < 0.2:
                    positions.append((game.view(state, seat), seat))
                state = game.apply(state, seat, rng.choice(list(legal)))
        positions = positions[: args.positions]
        from bots.heuristics import get_heuristic, get_search_options

        runs: list[tuple[str, Any, dict[str, Any]]] = [
            ("random", None, {}), ("heuristic", get_heuristic(name), {})]
        options = get_search_options(name)
        if options:  # the levels' own settings for this game, beside the plain search
            shown = ", ".join(f"{k}={v}" for k, v in options.items())
            runs.append((f"heuristic, {shown}", get_heuristic(name), options))
        for label, playout, extra in runs:
            its, secs = 0, 0.0
            for view, seat in positions:
                _, st = search(game, view, seat, random.Random(2), iterations=args.iterations,
                               playout=playout, **extra)
                its += st.iterations
                secs += st.seconds
            print(f"| {name} | {label} | {len(positions)} | {its} | {secs:.1f} | {its / secs:,.0f} |")


# --- ladder ----------------------------------------------------------------------------

def _ladder_deal(job: tuple) -> tuple[int, float, float]:
    """One deal in every seating: the mean points and the mean win rate of the higher level's
    seats minus the lower one's."""
    game_name, players, options, seed, deal, high, low = job
    points: dict[str, list[float]] = {high: [], low: []}
    wins: dict[str, list[float]] = {high: [], low: []}
    for seating in seatings([high, low], players):
        totals, winners = play_deal(game_name, players, options, f"{seed}/{deal}", seating)
        for seat, name in enumerate(seating):
            points[name].append(totals[seat])
            wins[name].append(1.0 if seat in winners else 0.0)
    return (deal, statistics.fmean(points[high]) - statistics.fmean(points[low]),
            statistics.fmean(wins[high]) - statistics.fmean(wins[low]))


def mean_interval(values: list[float]) -> tuple[float, float, str]:
    """The mean, the half-width of its 95% interval and whether it is above zero."""
    mean = statistics.fmean(values)
    half = 1.96 * statistics.stdev(values) / math.sqrt(len(values)) if len(values) > 1 else math.inf
    sig = "yes" if mean - half > 0 else ("no (reversed)" if mean + half < 0 else "no")
    return mean, half, sig


def ladder(args: argparse.Namespace) -> None:
    game = get_game(args.game)
    players = args.players or game.info.min_players
    options = dict(args.option)
    game.new_game(players, options, "check")  # bad options fail here, not in every worker
    steps = args.steps.split(",") if args.steps else [
        f"{hi}>{lo}" for lo, hi in zip(LADDER, LADDER[1:], strict=False)
    ]
    shown = ", ".join(f"{k}={json.dumps(v)}" for k, v in options.items()) or "defaults"
    print(f"{args.game}, {players} players, options: {shown}\n")
    print(f"| {args.game} step | deals | games | mean point difference per seat-deal | 95% CI "
          "| significant | win-rate difference | 95% CI | significant |")
    print("|---|---:|---:|---:|---|---|---:|---|---|")
    for step in steps:
        high, low = step.split(">")
        get_level(high), get_level(low)
        results = Results(args.results, {"game": args.game, "players": players,
                                         "options": options, "seed": args.seed, "step": step,
                                         "levels": level_print(args.game, high, low)},
                          needs=("diff", "wins"))
        jobs = [(args.game, players, options, args.seed, d, high, low)
                for d in results.todo(args.deals)]
        started = time.time()
        with ProcessPoolExecutor(args.jobs) as pool:
            for deal, diff, wins in pool.map(_ladder_deal, jobs):
                results.add(deal, diff=diff, wins=wins)
        rows = results.rows(args.deals)
        games = len(rows) * len(seatings([high, low], players))
        cells = []
        for field in ("diff", "wins"):
            mean, half, sig = mean_interval([row[field] for row in rows])
            cells.append(f"{mean:+.3f} | [{mean - half:+.3f}, {mean + half:+.3f}] | {sig}")
        print(f"| {high} > {low} | {len(rows)} | {games} | {' | '.join(cells)} |", flush=True)
        print(f"<!-- {step}: {time.time() - started:.0f} s -->", file=sys.stderr)


# --- duel (Dou Dizhu roles) ------------------------------------------------------------

class RLCardRuleBot:
    """RLCard's DouDizhuRuleAgentV1 playing our engine: it sees the raw observation it expects.

    Our moves map to RLCard's action strings (the cards ascending); where two of our moves have
    the same cards (333444555+666 and 333444555666) RLCard knows only the bare airplane.
    """

    def __init__(self) -> None:
        from rlcard.games.doudizhu.utils import CARD_TYPE
        from rlcard.models.doudizhu_rule_models import DouDizhuRuleAgentV1

        self.agent = DouDizhuRuleAgentV1()
        self.known = CARD_TYPE[0]
        self.fallbacks = 0

    def choose(self, game: Any, state: Any, seat: int, rng: random.Random) -> Any:
        import numpy as np

        from engines.dou_dizhu.cards import ranks_text
        from engines.dou_dizhu.moves import PASS, PLANE

        legal = game.legal_moves(state, seat)
        mapping: dict[str, Any] = {}
        for m in legal:
            key = "pass" if m.kind == PASS else ranks_text(m.cards)
            if key != "pass" and key not in self.known:
                continue
            if key not in mapping or m.kind == PLANE:
                mapping[key] = m
        trace = [(s, "pass" if m.kind == PASS else ranks_text(m.cards)) for s, m in state.plays]
        obs = {"current_hand": ranks_text(state.hands[seat]), "trace": trace,
               "actions": list(mapping), "landlord": state.landlord, "self": seat}
        np.random.seed(rng.randrange(2**31))
        action = self.agent.step({"raw_obs": obs})
        if action not in mapping:
            self.fallbacks += 1
            return legal[rng.randrange(len(legal))]
        return mapping[action]


def _duel_deal(job: tuple) -> tuple[bool, bool, int]:
    level, opponent, seed, deal = job
    game = GAMES["dou_dizhu"]
    lv = get_level(level)
    rl = RLCardRuleBot() if opponent == "rlcard" else None
    opp = None if rl else get_level(opponent)
    out = []
    for role in ("landlord", "farmers"):
        state = game.new_game(3, {}, f"{seed}/{deal}")
        landlord = state.face_up_holder
        rng = random.Random(f"{seed}/{deal}/{role}")
        while state.phase == 1:  # scripted bidding: the first bidder takes it at 3
            state = game.apply(state, state.to_act, game.parse_move("bid 3"))
        assert state.landlord == landlord
        ours = {landlord} if role == "landlord" else {0, 1, 2} - {landlord}
        while not game.is_over(state):
            seat = state.to_act
            if seat in ours:
                move, _ = lv.choose(game, game.view(state, seat), seat, rng)
            elif rl is not None:
                move = rl.choose(game, state, seat, rng)
            else:
                assert opp is not None
                move, _ = opp.choose(game, game.view(state, seat), seat, rng)
            state = game.apply(state, seat, move)
        out.append(game.result(state).totals[min(ours)] > 0)
    return out[0], out[1], rl.fallbacks if rl else 0


def duel(args: argparse.Namespace) -> None:
    """Plays the deals and prints the table row."""
    ours = [args.level] + ([] if args.opponent == "rlcard" else [args.opponent])
    results = Results(args.results, {"level": args.level, "opponent": args.opponent,
                                     "seed": args.seed,
                                     "levels": level_print("dou_dizhu", *ours)})
    jobs = [(args.level, args.opponent, args.seed, d) for d in results.todo(args.deals)]
    started = time.time()
    with ProcessPoolExecutor(args.jobs) as pool:
        for job, (landlord, farmers, fallbacks) in zip(jobs, pool.map(_duel_deal, jobs),
                                                       strict=True):
            results.add(job[3], as_landlord=landlord, as_farmers=farmers, fallbacks=fallbacks)
    rows = results.rows(args.deals)
    n = len(rows)
    as_landlord = sum(r["as_landlord"] for r in rows)
    as_farmers = sum(r["as_farmers"] for r in rows)
    both = as_landlord + as_farmers
    lo, hi = wilson(both, 2 * n)
    print(f"| {args.level} vs {args.opponent} | {n} | {as_landlord / n:.3f} | "
          f"{as_farmers / n:.3f} | {both / (2 * n):.3f} | [{lo:.3f}, {hi:.3f}] | "
          f"{sum(r['fallbacks'] for r in rows)} | {time.time() - started:.0f} s this run |")


# --- sides (every game) ----------------------------------------------------------------

def club_queen_parties(game: Any, players: int, options: dict, seed: str) -> list[tuple[int, ...]]:
    """Doppelkopf's two parties of a normal game from the first deal: the club queens' holders
    and the others; none when one seat holds both (a marriage or a silent solo: no fixed sides)."""
    from engines.doppelkopf.cards import CLUB_QUEEN, count

    state = game.new_game(players, options, seed)
    re = tuple(seat for seat in range(players) if count(state.hands[seat], CLUB_QUEEN))
    if len(re) != 2:
        return []
    return [re, tuple(seat for seat in range(players) if seat not in re)]


PARTIES = "parties"


def parse_sides(text: str, players: int) -> list[tuple[int, ...]]:
    """'0,2/1,3' -> [(0, 2), (1, 3)]; empty: every seat alone (one against the others)."""
    if not text:
        return [(seat,) for seat in range(players)]
    sides = [tuple(int(x) for x in part.split(",")) for part in text.split("/")]
    seats = [seat for side in sides for seat in side]
    if len(set(seats)) != len(seats) or not all(0 <= seat < players for seat in seats):
        raise ValueError(f"sides {text!r}: each seat of 0..{players - 1} at most once")
    return sides


def side_score(side: tuple[int, ...], totals: tuple[int, ...], winners: tuple[int, ...]) -> float:
    """1 if the side won the match, 0 if it lost, between for a shared win.

    Two equal sides (partners): the side with more points together won (Doppelkopf scores are
    zero-sum, so a solo counts for the soloist's side whoever sits beside him). One seat against
    the others: its share of the match winners.
    """
    others = [seat for seat in range(len(totals)) if seat not in side]
    if len(others) == len(side):
        ours, theirs = sum(totals[s] for s in side), sum(totals[s] for s in others)
        return 1.0 if ours > theirs else 0.5 if ours == theirs else 0.0
    return sum(seat in side for seat in winners) / len(winners) if winners else 0.5


def _sides_deal(job: tuple) -> tuple[int, list[float]]:
    game_name, players, options, seed, deal, level, opponent, sides = job
    if sides == PARTIES:
        sides = club_queen_parties(get_game(game_name), players, options, f"{seed}/{deal}")
    scores = []
    for side in sides:
        seating = tuple(level if seat in side else opponent for seat in range(players))
        totals, winners = play_deal(game_name, players, options, f"{seed}/{deal}", seating)
        scores.append(side_score(side, totals, winners))
    return deal, scores


def sides(args: argparse.Namespace) -> None:
    """A level on each given side against the opponent on the rest, every deal; its win rate."""
    game = get_game(args.game)
    players = args.players or game.info.min_players
    options = dict(args.option)
    game.new_game(players, options, "check")
    get_level(args.level), get_level(args.opponent)
    if args.sides == PARTIES and (args.game != "doppelkopf" or options.get("deals") != 1):
        raise SystemExit("--sides parties is for Doppelkopf with --option deals=1")
    held = args.sides if args.sides == PARTIES else parse_sides(args.sides, players)
    results = Results(args.results, {
        "game": args.game, "players": players, "options": options, "seed": args.seed,
        "level": args.level, "opponent": args.opponent,
        "sides": held if held == PARTIES else [list(s) for s in held],
        "levels": level_print(args.game, args.level, args.opponent)})
    jobs = [(args.game, players, options, args.seed, d, args.level, args.opponent, held)
            for d in results.todo(args.deals)]
    started = time.time()
    with ProcessPoolExecutor(args.jobs) as pool:
        for deal, scores in pool.map(_sides_deal, jobs):
            results.add(deal, scores=scores)
    rows = results.rows(args.deals)
    scores = [x for row in rows for x in row["scores"]]
    if not scores:
        raise SystemExit("no deal with fixed sides")
    n, won = len(scores), sum(scores)
    lo, hi = wilson(won, n)
    shown = ", ".join(f"{k}={json.dumps(v)}" for k, v in options.items()) or "defaults"
    side_text = held if held == PARTIES else "/".join(",".join(map(str, s)) for s in held)
    print(f"| {args.game} | {players} | {shown} | {side_text} | {args.level} vs {args.opponent} "
          f"| {len(rows)} | {n} | {won / n:.3f} | [{lo:.3f}, {hi:.3f}] "
          f"| {time.time() - started:.0f} s this run |")


def add_match_args(parser: argparse.ArgumentParser, seed: str, jobs: int) -> None:
    """The arguments of every run of matches: seed, processes, players, options, results."""
    parser.add_argument("--seed", default=seed)
    parser.add_argument("--jobs", type=int, default=jobs)
    parser.add_argument("--players", type=int, default=0, help="default: the game's minimum")
    parser.add_argument("--option", action="append", type=option_argument, default=[],
                        metavar="NAME=VALUE",
                        help="a match option (repeatable; JSON values), e.g. start_score=6")
    parser.add_argument("--results", default="", metavar="FILE", help=RESULTS_HELP)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.strength", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="what", required=True)
    sp = sub.add_parser("speed")
    sp.add_argument("--games", default=",".join(sorted(GAMES)))
    sp.add_argument("--positions", type=int, default=20)
    sp.add_argument("--iterations", type=int, default=1000)
    lp = sub.add_parser("ladder")
    lp.add_argument("game")
    lp.add_argument("--deals", type=int, default=100)
    lp.add_argument("--steps", default="", help=f"e.g. hard>medium (default: the ladder {LADDER})")
    add_match_args(lp, seed="ladder", jobs=2)
    dp = sub.add_parser("duel")
    dp.add_argument("--level", default="hard", choices=list(LEVELS))
    dp.add_argument("--opponent", default="rlcard", help="rlcard or a level name")
    dp.add_argument("--deals", type=int, default=1000)
    dp.add_argument("--seed", default="duel")
    dp.add_argument("--jobs", type=int, default=2)
    dp.add_argument("--results", default="", metavar="FILE", help=RESULTS_HELP)
    xp = sub.add_parser("sides")
    xp.add_argument("game")
    xp.add_argument("--level", default="hard", choices=list(LEVELS))
    xp.add_argument("--opponent", default="random", choices=list(LEVELS))
    xp.add_argument("--sides", default="", metavar="SEATS/SEATS",
                    help="the sides the level holds in turn, e.g. 0,2/1,3 (default: each seat "
                         "alone against the others); 'parties' in Doppelkopf: the club queens' "
                         "holders and the others, deals where one seat holds both left out")
    xp.add_argument("--deals", type=int, default=50)
    add_match_args(xp, seed="sides", jobs=1)
    args = parser.parse_args(argv)
    {"speed": speed, "ladder": ladder, "duel": duel, "sides": sides}[args.what](args)


if __name__ == "__main__":
    main()
