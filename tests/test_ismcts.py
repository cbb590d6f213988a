"""ISMCTS and the levels: legal, reproducible, within budget, for every engine."""

from __future__ import annotations

import csv
import json
import random
import subprocess
from pathlib import Path

import pytest

from bots.arena import run, seatings, tally, wilson
from bots.ismcts import search
from bots.levels import LEVELS, Level
from engines.registry import GAMES
from tests.bot_support import CROUPIER
from tests.ismcts_support import random_states

QUICK = [
    Level("random", "random"),
    Level("heuristic", "heuristic"),
    Level("tiny", "ismcts", iterations=12),
    Level("tiny-h", "ismcts", iterations=12, heuristic_playouts=True),
]


@pytest.mark.parametrize("name", sorted(GAMES))
def test_every_level_answers_a_legal_move(name: str) -> None:
    game = GAMES[name]
    rng = random.Random(3)
    for state, acting in random_states(name, 40, seed=1):
        for seat in acting:
            for level in QUICK:
                move, _ = level.choose(game, game.view(state, seat), seat, rng)
                assert move in game.legal_moves(state, seat), (level.name, move)


@pytest.mark.parametrize("name", sorted(GAMES))
def test_same_seed_same_move(name: str) -> None:
    game = GAMES[name]
    for state, acting in random_states(name, 10, seed=2):
        seat = acting[0]
        view = game.view(state, seat)
        a, sa = search(game, view, seat, random.Random(9), iterations=60)
        b, sb = search(game, view, seat, random.Random(9), iterations=60)
        assert a == b and sa.visits == sb.visits


class TickingClock:
    """A perf_counter that moves on by `tick` seconds each time it is read."""

    def __init__(self, tick: float) -> None:
        self.tick = tick
        self.now = 1000.0
        self.reads = 0

    def perf_counter(self) -> float:
        self.reads += 1
        self.now += self.tick
        return self.now


def test_budgets_are_respected(monkeypatch: pytest.MonkeyPatch) -> None:
    from bots import ismcts

    game = GAMES["dou_dizhu"]
    state = game.new_game(3, {}, "budget")
    seat = state.to_act
    view = game.view(state, seat)
    _, stats = search(game, view, seat, random.Random(1), iterations=37)
    assert stats.iterations == 37 and sum(stats.visits.values()) == 37
    # a time budget, on a clock that moves 1 s per reading (so no wall time is measured): read
    # at the start and after every iteration, it stops at the first reading at or past the
    # deadline, after exactly `seconds` iterations, and reports the time it read
    clock = TickingClock(tick=1.0)
    monkeypatch.setattr(ismcts, "time", clock)
    _, stats = search(game, view, seat, random.Random(1), iterations=10**9, seconds=30)
    assert stats.iterations == 30 and sum(stats.visits.values()) == 30
    assert clock.reads == 1 + 30 + 1  # the start, one per iteration, the final report
    assert stats.seconds == 31.0
    # the iteration budget still binds first when it is the smaller one
    clock = TickingClock(tick=1.0)
    monkeypatch.setattr(ismcts, "time", clock)
    _, stats = search(game, view, seat, random.Random(1), iterations=12, seconds=30)
    assert stats.iterations == 12 and clock.reads == 1 + 12 + 1


def test_search_prefers_the_winning_move() -> None:
    """With the deal decided by one move (going out), the search finds it."""
    from engines.dou_dizhu import Move
    from tests.dou_dizhu_support import FARMER_1, FARMER_2, LANDLORD, new, play

    s = new([LANDLORD, FARMER_1, FARMER_2], "AAR")
    s = play(s, "bid 2", "pass", "pass", "666+4", "888+3", "5555", "pass", "pass", "7", "R",
             "pass", "pass")
    move, stats = search(GAMES["dou_dizhu"], GAMES["dou_dizhu"].view(s, 0), 0, random.Random(0),
                         iterations=300)
    assert move == Move("TTTJJJQQQ+99KKAA"), stats.visits


def test_levels_are_documented_budgets() -> None:
    assert list(LEVELS) == ["random", "heuristic", "easy", "medium", "hard", "expert"]
    budgets = [LEVELS[n].iterations for n in ("easy", "medium", "hard", "expert")]
    assert budgets == sorted(budgets) and len(set(budgets)) == 4


def test_seatings_are_duplicate_format() -> None:
    assert seatings(["a", "b", "c"], 3) == sorted(
        [("a", "b", "c"), ("a", "c", "b"), ("b", "a", "c"), ("b", "c", "a"), ("c", "a", "b"),
         ("c", "b", "a")]
    )
    two = seatings(["a", "b"], 3)
    assert len(two) == 6 and all({"a", "b"} == set(s) for s in two)


def test_arena_tallies_every_seat_of_every_game() -> None:
    records = run("dou_dizhu", ["heuristic", "random"], deals=3, seed="t", progress=False)
    assert len(records) == 3 * 6
    stats = tally(records, 3)
    assert sum(len(s.points) for s in stats.values()) == 3 * 6 * 3
    assert sum(sum(s.points) for s in stats.values()) == 0  # zero-sum game
    lo, hi = wilson(5, 10)
    assert lo < 0.5 < hi


def test_arena_command_prints_and_writes_the_table(tmp_path: Path) -> None:
    """`croupier arena` as a person runs it: game options by --option, the table on stdout,
    the same numbers in the CSV and the JSON; bad input exits 2 with a message."""
    csv_path, json_path = tmp_path / "t.csv", tmp_path / "t.json"
    done = subprocess.run(
        [CROUPIER, "arena", "dobro", "--bots", "heuristic,random", "--players", "2",
         "--option", "rounds=1", "--deals", "3", "--seed", "cli", "--csv", str(csv_path),
         "--json", str(json_path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "heuristic" in done.stdout and "random" in done.stdout
    rows = list(csv.DictReader(csv_path.open()))
    assert {r["bot"] for r in rows} == {"heuristic", "random"}
    data = json.loads(json_path.read_text())
    assert len(data["games"]) == 3 * 2  # every deal with both seatings
    assert data["options"] == {"rounds": 1} and data["players"] == 2
    by_bot = {s["bot"]: s for s in data["summary"]}
    for r in rows:
        assert float(r["mean_points"]) == pytest.approx(by_bot[r["bot"]]["mean_points"])
    for bad, said in ((["--option", "rounds"], "NAME=VALUE"), (["--options", "[1]"], "JSON object"),
                      (["--option", "nosuch=1"], "nosuch"), (["--bots", "heuristic,grandmaster"],
                                                            "grandmaster")):
        argv = [CROUPIER, "arena", "dobro", "--players", "2", "--deals", "1", *bad]
        if "--bots" not in bad:
            argv += ["--bots", "heuristic,random"]
        refused = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        assert refused.returncode == 2 and said in refused.stderr, (bad, refused.stderr)


def test_dou_dizhu_candidates_keep_every_main_choice() -> None:
    from bots.heuristics.dou_dizhu import candidates

    game = GAMES["dou_dizhu"]
    for state, acting in random_states("dou_dizhu", 60, seed=4):
        seat = acting[0]
        legal = game.legal_moves(state, seat)
        kept = candidates(game, state, seat, legal)
        assert kept and set(kept) <= set(legal)
        assert {m for m in legal if not m.kickers} <= set(kept)
        mains = {(m.kind, m.rank, m.length) for m in legal}
        assert mains == {(m.kind, m.rank, m.length) for m in kept}


@pytest.mark.parametrize("name", sorted(GAMES))
def test_a_strong_prior_falls_back_on_the_heuristic_choice(name: str) -> None:
    from bots.heuristics import get_heuristic

    game, policy = GAMES[name], get_heuristic(name)
    checked = 0
    for i, (state, acting) in enumerate(random_states(name, 40, seed=11)):
        seat = acting[0]
        legal = game.legal_moves(state, seat)
        if len(legal) < 3:
            continue
        view = game.view(state, seat)
        # where the policy is deterministic on this information set
        picks = {policy(game, game.sample(view, random.Random(k)), seat, legal, random.Random(k))
                 for k in range(4)}
        if len(picks) != 1:
            continue
        (pick,) = picks
        move, stats = search(game, view, seat, random.Random(i), iterations=30,
                             playout=policy, prior=1e6)
        if stats.iterations == 0:
            continue  # decided without search (a decisive move)
        assert move == pick, (game.format_move(move), game.format_move(pick), stats.visits)
        checked += 1
    assert checked >= 5


@pytest.mark.parametrize("name", sorted(GAMES))
def test_the_reward_hook_scores_every_iteration(name: str) -> None:
    from bots.ismcts import rewards

    game = GAMES[name]
    calls = 0

    def reward(g, before, state):
        nonlocal calls
        calls += 1
        return rewards(g, before, state)

    searched = 0
    for state, acting in random_states(name, 10, seed=4):
        seat = acting[0]
        before = calls
        _, stats = search(game, game.view(state, seat), seat, random.Random(5), iterations=20,
                          reward=reward)
        assert calls - before == stats.iterations
        searched += stats.iterations
    assert searched > 0


@pytest.mark.parametrize("name", sorted(GAMES))
def test_policy_opponents_answer_legal_moves_deterministically(name: str) -> None:
    from bots.heuristics import get_heuristic

    game, policy = GAMES[name], get_heuristic(name)
    for state, acting in random_states(name, 12, seed=6):
        seat = acting[0]
        view = game.view(state, seat)
        for prior in (0.0, 2.0):
            a, sa = search(game, view, seat, random.Random(4), iterations=40, playout=policy,
                           prior=prior, policy_opponents=True)
            b, sb = search(game, view, seat, random.Random(4), iterations=40, playout=policy,
                           prior=prior, policy_opponents=True)
            assert a in game.legal_moves(state, seat)
            assert a == b and sa.visits == sb.visits


def test_the_policy_plays_the_other_seats_in_the_tree() -> None:
    """With policy opponents every move of another seat, in the tree as in the playouts, is
    the policy's on that seat's cards of the world; without, the tree tries other replies."""
    from engines.dou_dizhu import GAME

    def first(game, state, seat, legal, rng):
        return legal[0]

    class Watched:
        def __init__(self) -> None:
            self.others: list[bool] = []  # per move of another seat: was it the policy's?

        def __getattr__(self, name: str):
            return getattr(GAME, name)

        def apply(self, state, s, move):
            if s != seat:
                self.others.append(move == GAME.legal_moves(state, s)[0])
            return GAME.apply(state, s, move)

    state = GAME.new_game(3, {}, seed="policy")
    while not 2 <= len(GAME.legal_moves(state, state.to_act)) <= 4 or state.phase == 1:
        s = state.to_act
        state = GAME.apply(state, s, GAME.legal_moves(state, s)[-1])
    seat = state.to_act
    for by_policy in (True, False):
        game = Watched()
        search(game, GAME.view(state, seat), seat, random.Random(1), iterations=200,  # type: ignore[arg-type]
               playout=first, policy_opponents=by_policy)
        assert game.others
        assert all(game.others) == by_policy
