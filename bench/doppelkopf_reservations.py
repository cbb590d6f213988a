"""What each Doppelkopf reservation is worth to a hand: `python -m bench.doppelkopf_reservations`.

The heuristic player's reservation rule (`bots.heuristics.doppelkopf.solo_worth`) decides
which hands play a solo; the search levels play out with it, so a rule that loses hurts every
level. For every seat of every deal, each thing the hand could say (healthy; each solo; the
marriage with both club queens) is played out to the end of the deal by the heuristic player
in all four seats, and the seat's points are recorded. A solo's gain is its points less those
of the hand's no-solo choice (the marriage with both club queens, else healthy); the heuristic
player decides from its hand alone, so the mean gain over hands of one kind is what declaring
is worth with such a hand. Tables: the rule against simpler ones, paired on the same hands;
then every solo's gain by the hand's strength for it (trumps and, from 10 trumps, whether
`SOLO_TOP` of them are among the four highest kinds; aces for the aces solo).

    python -m bench.doppelkopf_reservations --deals 5000 --jobs 2
"""

from __future__ import annotations

import argparse
import random
import time
from collections import defaultdict
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from bench.regret import interval
from bench.strength import Results, level_print
from bots.heuristics.doppelkopf import SOLO_TOP, choose, solo_strength, solo_worth
from engines.doppelkopf import GAME, Move
from engines.doppelkopf.cards import ACE, CLUB_QUEEN, FOLLOW, TRUMP, count, kind
from engines.doppelkopf.game import DECLARATION, LAYOUT_OF, RESERVATIONS
from engines.doppelkopf.moves import MARRIAGE_GAME, SOLO_ACES, solo_moves

HEALTHY, MARRIAGE, RESERVATION = Move("healthy"), Move("marriage"), Move("reservation")


def play_out(state: Any, seat: int, say: Move, rng: random.Random) -> tuple[int, bool]:
    """The seat's points when it says `say` (healthy, a solo, marriage); whether it was played.

    Another seat's solo named earlier in seat order takes precedence: then the deal is played
    as that solo and `say` was not played.
    """
    while not GAME.is_over(state):
        (x, *_) = sorted(GAME.on_turn(state))
        legal = GAME.legal_moves(state, x)
        if x == seat and state.phase == RESERVATIONS:
            move = HEALTHY if say is HEALTHY else RESERVATION
        elif x == seat and state.phase == DECLARATION:
            move = say
        else:
            move = legal[0] if len(legal) == 1 else choose(GAME, state, x, legal, rng)
        state = GAME.apply(state, x, move)
    score = state.history[-1]
    contract = MARRIAGE_GAME if say is MARRIAGE else say.contract
    played = say is HEALTHY or (score.declarer == seat and score.contract == contract)
    return score.scores[seat], played


def deal_values(job: tuple) -> tuple[int, list[dict[str, Any]]]:
    """For each seat of one deal: its hand and what every reservation scores with it."""
    options, seed, deal = job
    start = GAME.new_game(4, options, f"{seed}/{deal}")
    seats = []
    for seat in range(4):
        hand = start.hands[seat]
        says = [HEALTHY, *solo_moves(bool(options.get("bistro")))]
        if count(hand, CLUB_QUEEN) == 2:
            says.append(MARRIAGE)
        values = {}
        for say in says:  # the same random stream for every choice of the seat
            values[str(say)] = play_out(start, seat, say, random.Random(f"{seed}/{deal}/{seat}"))
        seats.append({"hand": hand, "values": values})
    return deal, seats


def _rule_before(hand: int, solos: Sequence[Move]) -> Move | None:
    """Version 1 of the heuristic's solo rule, kept to show what replacing it was worth."""
    best, pick = 0.0, None
    for m in solos:
        strength, _ = solo_strength(hand, m.contract)
        side_aces = sum(count(hand, kind(s, ACE)) for s in range(4)
                        if FOLLOW[LAYOUT_OF[m.contract]][kind(s, ACE)] != TRUMP)
        value = 1.5 * strength if m.contract == SOLO_ACES else strength + 0.5 * side_aces
        if value > best:
            best, pick = value, m
    return pick if best >= 10 else None


def report(rows: list[dict[str, Any]], options: dict[str, Any]) -> list[str]:
    hands = [s for row in rows for s in row["seats"]]
    solos = solo_moves(bool(options.get("bistro")))

    def plain(h: dict[str, Any]) -> str:
        return "marriage" if "marriage" in h["values"] else "healthy"

    rules = {
        "the heuristic's rule (`solo_worth`, else marriage, else healthy)":
            lambda h: str(solo_worth(h["hand"], solos) or plain(h)),
        "the rule before (trumps and half the side aces at least 10, else marriage)":
            lambda h: str(_rule_before(h["hand"], solos) or plain(h)),
        "never a solo (marriage with both club queens, else healthy)": plain,
        "always healthy (both club queens: a silent marriage)": lambda h: "healthy",
        "the best choice in hindsight (a bound, not a rule)":
            lambda h: max(h["values"], key=lambda k: h["values"][k][0]),
    }
    ours = [h["values"][rules[next(iter(rules))](h)][0] for h in hands]
    lines = [f"{len(hands)} hands ({len(rows)} deals)\n",
             "| reservation rule | solos | points per seat-deal | less the heuristic's rule | 95% CI |",
             "|---|---:|---:|---:|---|"]
    for name, rule in rules.items():
        picks = [rule(h) for h in hands]
        xs = [h["values"][p][0] for h, p in zip(hands, picks, strict=True)]
        mean, _ = interval(xs)
        diff, half = interval([x - o for x, o in zip(xs, ours, strict=True)])
        n = sum(p.startswith("solo") for p in picks)
        lines.append(f"| {name} | {n} | {mean:+.3f} | {diff:+.3f} | "
                     f"[{diff - half:+.3f}, {diff + half:+.3f}] |")
    gains: dict[tuple[str, int, bool], list[float]] = defaultdict(list)
    for h in hands:
        base = h["values"][plain(h)][0]
        for m in solos:
            points, played = h["values"][str(m)]
            if played:
                strength, top = solo_strength(h["hand"], m.contract)
                split = m.contract != SOLO_ACES and strength >= 10
                gains[str(m), strength, split and top >= SOLO_TOP].append(points - base)
    lines += ["", "| solo | trumps (aces) | hands | gain over the no-solo choice | 95% CI | won |",
              "|---|---|---:|---:|---|---:|"]
    for (name, strength, top), xs in sorted(gains.items(), key=lambda kv: (
            [str(m) for m in solos].index(kv[0][0]), kv[0][1], kv[0][2])):
        if len(xs) < 100:
            continue
        mean, half = interval(xs)
        label = f"{strength}" + (f", {SOLO_TOP}+ top" if top else
                                 (f", <{SOLO_TOP} top" if strength >= 10 and name != "solo aces"
                                  else ""))
        won = sum(x > 0 for x in xs) / len(xs)
        lines.append(f"| {name} | {label} | {len(xs)} | {mean:+.2f} | "
                     f"[{mean - half:+.2f}, {mean + half:+.2f}] | {won:.2f} |")
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.doppelkopf_reservations",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deals", type=int, default=5000)
    parser.add_argument("--seed", default="reservations")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--bistro", action="store_true", help="the Bistro variant's solos")
    parser.add_argument("--results", default="", metavar="FILE",
                        help="append each deal's values here and skip deals already in it")
    args = parser.parse_args(argv)
    options = {"deals": 1, "bistro": args.bistro}
    results = Results(args.results, {"seed": args.seed, "options": options,
                                     "levels": level_print("doppelkopf", "heuristic")})
    started = time.time()
    jobs = [(options, args.seed, d) for d in results.todo(args.deals)]
    with ProcessPoolExecutor(args.jobs) as pool:
        for deal, seats in pool.map(deal_values, jobs, chunksize=20):
            results.add(deal, seats=seats)
    print(f"Doppelkopf reservations, {'Bistro' if args.bistro else 'standard'} rules; "
          f"{time.time() - started:.0f} s\n")
    print("\n".join(report(results.rows(args.deals), options)))


if __name__ == "__main__":
    main()
